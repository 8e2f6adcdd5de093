/*
 * Tests of provision/macos/macos_plist.c: every recorded output of a real Mac in
 * tests/fixtures/macos/ (copied from ../shared/fixtures/macos/, sources in
 * its SOURCES.md) parsed, with the facts rig takes from it asserted; keys
 * that a capture lacks stay unknown; damaged input is refused with a
 * reason and never crashes.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "provision/macos/macos_plist.h"
#include "test.h"

static char *fx(const char *name, size_t *len)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/tests/fixtures/macos/%s", test_src(), name);
	char *t = test_read_file(p.buf, len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	sb_release(&p);
	return t;
}

static void test_list_modern(void)
{
	size_t n;
	char *t = fx("diskutil-list-internal-apfs-plus-usb-stick-whole-disk-fat32.plist", &n);
	struct mac_list l;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_list(t, n, &l, &e), 0);
	CU_ASSERT_EQUAL(l.nwhole, 3);
	CU_ASSERT_STRING_EQUAL(l.whole[2], "disk2");
	CU_ASSERT_EQUAL_FATAL(l.ndisks, 3);
	const struct mac_disk *d0 = prov_mac_list_disk(&l, "disk0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(d0);
	CU_ASSERT_STRING_EQUAL(d0->content, "GUID_partition_scheme");
	CU_ASSERT_EQUAL(d0->size, 512110190592ull);
	CU_ASSERT_EQUAL_FATAL(d0->nparts, 2);
	CU_ASSERT_STRING_EQUAL(d0->parts[0].content, "EFI");
	CU_ASSERT_EQUAL(d0->parts[0].size, 209715200ull);
	CU_ASSERT_STRING_EQUAL(d0->parts[1].id, "disk0s2");
	CU_ASSERT_STRING_EQUAL(d0->parts[1].content, "Apple_APFS");
	CU_ASSERT_PTR_NULL(d0->parts[1].mount);
	/* the container: its physical store and volumes; / is a mounted snapshot */
	const struct mac_disk *c = prov_mac_list_disk(&l, "disk1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_STRING_EQUAL(c->content, "EF57347C-0000-11AA-AA11-00306543ECAC");
	CU_ASSERT_EQUAL_FATAL(c->nstores, 1);
	CU_ASSERT_STRING_EQUAL(c->stores[0], "disk0s2");
	CU_ASSERT_EQUAL_FATAL(c->nvols, 7);
	CU_ASSERT_STRING_EQUAL(c->vols[0].mount, "/System/Volumes/Data");
	CU_ASSERT_STRING_EQUAL(c->vols[0].name, "macOS \xe2\x80\x93 data"); /* EN DASH kept */
	CU_ASSERT_PTR_NULL(c->vols[2].mount); /* Recovery: not mounted */
	CU_ASSERT_STRING_EQUAL(c->vols[4].id, "disk1s5");
	CU_ASSERT_STRING_EQUAL(c->vols[4].mount, "/"); /* through its snapshot */
	CU_ASSERT_STRING_EQUAL(c->vols[5].id, "disk1s5s1");
	CU_ASSERT_STRING_EQUAL(c->vols[5].mount, "/");
	/* the USB stick: FAT32 on the whole disk, no partition map */
	const struct mac_disk *d2 = prov_mac_list_disk(&l, "disk2");
	CU_ASSERT_PTR_NOT_NULL_FATAL(d2);
	CU_ASSERT_STRING_EQUAL(d2->content, "");
	CU_ASSERT_EQUAL(d2->nparts, 0);
	CU_ASSERT_STRING_EQUAL(d2->mount, "/Volumes/NO NAME");
	CU_ASSERT_EQUAL(d2->size, 15682240512ull);
	CU_ASSERT_PTR_NULL(prov_mac_list_disk(&l, "disk9"));
	prov_mac_list_release(&l);
	sb_release(&e);
	free(t);
}

static void test_list_mojave(void)
{
	size_t n;
	char *t = fx("diskutil-list-mojave-seven-disks-corestorage-hfs-timemachine.plist", &n);
	struct mac_list l;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_list(t, n, &l, &e), 0);
	CU_ASSERT_EQUAL(l.nwhole, 7);
	CU_ASSERT_EQUAL_FATAL(l.ndisks, 7);
	const struct mac_disk *d1 = prov_mac_list_disk(&l, "disk1");
	CU_ASSERT_EQUAL_FATAL(d1->nparts, 3);
	CU_ASSERT_STRING_EQUAL(d1->parts[1].content, "Apple_CoreStorage");
	CU_ASSERT_STRING_EQUAL(d1->parts[2].content, "Apple_Boot");
	CU_ASSERT_EQUAL(d1->parts[2].size, 134217728ull);
	/* containers without APFSPhysicalStores in this older format */
	const struct mac_disk *c = prov_mac_list_disk(&l, "disk3");
	CU_ASSERT_EQUAL(c->nstores, 0);
	CU_ASSERT_EQUAL_FATAL(c->nvols, 4);
	CU_ASSERT_STRING_EQUAL(c->vols[0].mount, "/");
	CU_ASSERT_STRING_EQUAL(c->vols[3].mount, "/private/var/vm");
	const struct mac_disk *d5 = prov_mac_list_disk(&l, "disk5");
	CU_ASSERT_STRING_EQUAL(d5->parts[1].content, "Apple_HFS");
	CU_ASSERT_STRING_EQUAL(d5->parts[1].mount, "/Volumes/Install macOS Mojave");
	const struct mac_disk *d6 = prov_mac_list_disk(&l, "disk6");
	CU_ASSERT_STRING_EQUAL(d6->content, "Apple_HFS");
	CU_ASSERT_STRING_EQUAL(d6->mount, "/Volumes/Time Machine Backups");
	CU_ASSERT_EQUAL(d6->size, 499407388672ull);
	prov_mac_list_release(&l);
	sb_release(&e);
	free(t);
}

static void test_info_nvme(void)
{
	size_t n;
	char *t = fx("diskutil-info-internal-nvme-ssd-whole-disk.plist", &n);
	struct mac_info i;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_info(t, n, &i, &e), 0);
	CU_ASSERT_PTR_NULL(i.error);
	CU_ASSERT_STRING_EQUAL(i.id, "disk0");
	CU_ASSERT_STRING_EQUAL(i.parent, "disk0");
	CU_ASSERT_STRING_EQUAL(i.media, "INTEL SSDPEKNW512G8");
	CU_ASSERT_STRING_EQUAL(i.bus, "PCI-Express");
	CU_ASSERT_STRING_EQUAL(i.virt, "Physical");
	CU_ASSERT_EQUAL(i.internal, 1);
	CU_ASSERT_EQUAL(i.solid_state, 1);
	CU_ASSERT_EQUAL(i.whole, 1);
	CU_ASSERT_EQUAL(i.removable, 0);
	CU_ASSERT_EQUAL(i.writable_media, 1);
	CU_ASSERT_EQUAL(i.size, 512110190592ull);
	CU_ASSERT_EQUAL(i.total_size, 512110190592ull);
	CU_ASSERT_EQUAL(i.block_size, 512);
	CU_ASSERT_PTR_NULL(i.mount);     /* "" */
	CU_ASSERT_PTR_NULL(i.fs_type);   /* absent */
	CU_ASSERT_EQUAL(i.nstores, 0);
	CU_ASSERT_EQUAL(i.has_offset, 0);
	prov_mac_info_release(&i);
	sb_release(&e);
	free(t);
}

static void test_info_usb(void)
{
	size_t n;
	char *t = fx("diskutil-info-external-usb-stick-whole-disk-fat32.plist", &n);
	struct mac_info i;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_info(t, n, &i, &e), 0);
	CU_ASSERT_STRING_EQUAL(i.id, "disk2");
	CU_ASSERT_STRING_EQUAL(i.media, "Cruzer Fit");
	CU_ASSERT_STRING_EQUAL(i.bus, "USB");
	CU_ASSERT_EQUAL(i.internal, 0);
	CU_ASSERT_EQUAL(i.solid_state, MAC_UNKNOWN); /* no SolidState key: unknown, not rotational */
	CU_ASSERT_EQUAL(i.whole, 1);
	CU_ASSERT_EQUAL(i.removable, 1);
	CU_ASSERT_EQUAL(i.size, 15682240512ull);
	CU_ASSERT_EQUAL(i.total_size, 15665463296ull); /* they differ on this stick */
	CU_ASSERT_STRING_EQUAL(i.fs_type, "msdos");
	CU_ASSERT_STRING_EQUAL(i.fs_name, "MS-DOS FAT32");
	CU_ASSERT_STRING_EQUAL(i.mount, "/Volumes/NO NAME");
	CU_ASSERT_EQUAL(i.alloc_block, 8192);
	prov_mac_info_release(&i);
	sb_release(&e);
	free(t);
}

static void test_info_root(void)
{
	size_t n;
	char *t = fx("diskutil-info-internal-apfs-boot-snapshot-volume.plist", &n);
	struct mac_info i;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_info(t, n, &i, &e), 0);
	CU_ASSERT_STRING_EQUAL(i.id, "disk1s5s1");
	CU_ASSERT_STRING_EQUAL(i.mount, "/");
	CU_ASSERT_STRING_EQUAL(i.container, "disk1");
	CU_ASSERT_EQUAL_FATAL(i.nstores, 1);
	CU_ASSERT_STRING_EQUAL(i.stores[0], "disk0s2");
	CU_ASSERT_STRING_EQUAL(i.parent, "disk1");
	CU_ASSERT_EQUAL(i.whole, 0);
	CU_ASSERT_EQUAL(i.internal, 1);
	CU_ASSERT_EQUAL(i.solid_state, 1);
	CU_ASSERT_EQUAL(i.writable, 0);
	CU_ASSERT_STRING_EQUAL(i.fs_type, "apfs");
	CU_ASSERT_STRING_EQUAL(i.bus, "PCI");
	CU_ASSERT_PTR_NULL(i.media);  /* MediaName "" */
	CU_ASSERT_PTR_NULL(i.virt);   /* absent on this volume */
	CU_ASSERT_EQUAL(i.block_size, 4096);
	prov_mac_info_release(&i);
	sb_release(&e);
	free(t);
}

static void test_info_error(void)
{
	size_t n;
	char *t = fx("diskutil-info-error-could-not-find-disk.plist", &n);
	struct mac_info i;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_info(t, n, &i, &e), 0);
	CU_ASSERT_STRING_EQUAL(i.error, "Could not find disk: /Volumes/SMB");
	CU_ASSERT_PTR_NULL(i.id);
	prov_mac_info_release(&i);
	/* the other parsers refuse the error dict, with its message */
	struct mac_list l;
	CU_ASSERT_EQUAL(prov_mac_parse_list(t, n, &l, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.buf, "Could not find disk: /Volumes/SMB");
	prov_mac_list_release(&l);
	sb_reset(&e);
	struct mac_apfs a;
	CU_ASSERT_EQUAL(prov_mac_parse_apfs(t, n, &a, &e), -1);
	CU_ASSERT_STRING_EQUAL(e.buf, "Could not find disk: /Volumes/SMB");
	prov_mac_apfs_release(&a);
	sb_release(&e);
	free(t);
}

static void test_apfs_list(void)
{
	size_t n;
	char *t = fx("diskutil-apfs-list-catalina-single-container-system-data.plist", &n);
	struct mac_apfs a;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_apfs(t, n, &a, &e), 0);
	CU_ASSERT_EQUAL_FATAL(a.n, 1);
	const struct mac_container *c = &a.c[0];
	CU_ASSERT_STRING_EQUAL(c->ref, "disk1");
	CU_ASSERT_STRING_EQUAL(c->designated, "disk0s2");
	CU_ASSERT_EQUAL(c->ceiling, 489999998976ull);
	CU_ASSERT_EQUAL(c->free, 29498146816ull);
	CU_ASSERT_EQUAL_FATAL(c->nstores, 1);
	CU_ASSERT_STRING_EQUAL(c->stores[0].id, "disk0s2");
	CU_ASSERT_EQUAL(c->stores[0].size, 489999998976ull);
	CU_ASSERT_EQUAL_FATAL(c->nvols, 5);
	CU_ASSERT_STRING_EQUAL(c->vols[0].id, "disk1s1");
	CU_ASSERT_STRING_EQUAL(c->vols[0].name, "Macintosh HD - Data");
	CU_ASSERT_EQUAL_FATAL(c->vols[0].nroles, 1);
	CU_ASSERT_STRING_EQUAL(c->vols[0].roles[0], "Data");
	CU_ASSERT_EQUAL(c->vols[0].in_use, 445271552000ull);
	CU_ASSERT_PTR_EQUAL(prov_mac_apfs_with_store(&a, "disk0s2"), c);
	CU_ASSERT_PTR_NULL(prov_mac_apfs_with_store(&a, "disk4s2"));
	prov_mac_apfs_release(&a);
	free(t);
	t = fx("diskutil-apfs-list-empty-no-containers.plist", &n);
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_apfs(t, n, &a, &e), 0);
	CU_ASSERT_EQUAL(a.n, 0);
	prov_mac_apfs_release(&a);
	sb_release(&e);
	free(t);
}

static void test_hdiutil(void)
{
	size_t n;
	char *t = fx("hdiutil-attach-plist-apfs-sparseimage-macos15.plist", &n);
	struct mac_attach at;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_attach(t, n, &at, &e), 0);
	CU_ASSERT_EQUAL_FATAL(at.nents, 4);
	CU_ASSERT_STRING_EQUAL(at.ents[0].dev, "/dev/disk6");
	CU_ASSERT_STRING_EQUAL(at.ents[0].hint, "GUID_partition_scheme");
	CU_ASSERT_PTR_NULL(at.ents[0].mount);
	CU_ASSERT_STRING_EQUAL(at.ents[1].dev, "/dev/disk6s1");
	CU_ASSERT_STRING_EQUAL(at.ents[2].dev, "/dev/disk9s1");
	CU_ASSERT_STRING_EQUAL(at.ents[2].mount, "/private/tmp/brcart.5kKPp5/mnt");
	CU_ASSERT_STRING_EQUAL(at.ents[2].kind, "apfs");
	CU_ASSERT_STRING_EQUAL(at.ents[3].hint, "EF57347C-0000-11AA-AA11-00306543ECAC");
	prov_mac_attach_release(&at);
	free(t);
	t = fx("hdiutil-info-plist-nothing-attached-macos15.plist", &n);
	struct mac_hdi_info h;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_hdi_info(t, n, &h, &e), 0);
	CU_ASSERT_EQUAL(h.nimages, 0); /* no `images` key at all */
	prov_mac_hdi_info_release(&h);
	sb_release(&e);
	free(t);
}

static void test_text(void)
{
	size_t n;
	char *t = fx("diskutil-partitionDisk-error-69888-couldnt-unmount.txt", &n);
	long code = 0;
	struct strbuf m = STRBUF_INIT;
	CU_ASSERT_EQUAL(prov_mac_error_line(t, &code, &m), 1);
	CU_ASSERT_EQUAL(code, -69888);
	CU_ASSERT_STRING_EQUAL(m.buf, "Couldn't unmount disk");
	free(t);
	sb_reset(&m);
	t = fx("diskutil-apfs-resizeContainer-error-69606-tail.txt", &n);
	CU_ASSERT_EQUAL(prov_mac_error_line(t, &code, &m), 1);
	CU_ASSERT_EQUAL(code, -69606);
	CU_ASSERT_STRING_EQUAL(m.buf, "A problem occurred while resizing APFS Container structures");
	free(t);
	sb_reset(&m);
	t = fx("diskutil-apfs-resizeContainer-shrink-success.txt", &n);
	CU_ASSERT_EQUAL(prov_mac_error_line(t, &code, &m), 0);
	free(t);
	t = fx("hdiutil-create-and-attach-apfs-text.txt", &n);
	char *p = prov_mac_created_path(t);
	CU_ASSERT_STRING_EQUAL(p, "/private/tmp/200mb.apfs.dmg");
	free(p);
	free(t);
	CU_ASSERT_PTR_NULL(prov_mac_created_path("hdiutil: create failed - File exists\n"));
	CU_ASSERT_EQUAL(prov_mac_error_line("Error: nothing numeric\n", &code, &m), 0);
	/* Found by fuzz/plist_fuzz.c: "-0" parsed as error code 0; codes are negative. */
	CU_ASSERT_EQUAL(prov_mac_error_line("9r17T4 \nError: -0::   ", &code, &m), 0);
	CU_ASSERT_EQUAL(prov_mac_error_line("Error: -1: x\n", &code, &m), 1);
	CU_ASSERT_EQUAL(code, -1);
	sb_release(&m);
}

/* Noise before the plist, wrong types, damage: unknowns and refusals, no crash. */
static void test_robust(void)
{
	struct strbuf e = STRBUF_INIT;
	struct mac_info i;
	const char *noisy = "hdiutil: some warning\n<plist version=\"1.0\"><dict>"
			    "<key>TotalSize</key><string>big</string>"
			    "<key>Internal</key><integer>1</integer>"
			    "<key>MediaName</key><string>X</string></dict></plist>";
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_info(noisy, strlen(noisy), &i, &e), 0);
	CU_ASSERT_EQUAL(i.total_size, 0);          /* a string where an integer belongs */
	CU_ASSERT_EQUAL(i.internal, MAC_UNKNOWN);  /* an integer where a boolean belongs */
	CU_ASSERT_STRING_EQUAL(i.media, "X");
	prov_mac_info_release(&i);
	CU_ASSERT_EQUAL(prov_mac_parse_info("", 0, &i, &e), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "not a property list"));
	prov_mac_info_release(&i);
	sb_reset(&e);
	const char *arr = "<plist><array><string>a</string></array></plist>";
	CU_ASSERT_EQUAL(prov_mac_parse_info(arr, strlen(arr), &i, &e), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "not a dictionary"));
	prov_mac_info_release(&i);
	/* every prefix of a real plist: accepted or refused, never a crash */
	size_t n;
	char *t = fx("diskutil-list-internal-apfs-plus-usb-stick-whole-disk-fat32.plist", &n);
	int accepted = 0;
	for (size_t k = 0; k <= n; k += 97)
		accepted += prov_mac_plist_fuzz_one((const uint8_t *)t, k) > 0;
	CU_ASSERT(accepted < (int)(n / 97)); /* truncated ones are refused */
	CU_ASSERT_EQUAL(prov_mac_plist_fuzz_one((const uint8_t *)t, n), 7); /* limits, snapshots: a dict with none of their keys */
	free(t);
	sb_release(&e);
}

static void test_snapshots(void)
{
	size_t n;
	char *t = fx("diskutil-apfs-listSnapshots-plist-two-timemachine-transcribed.plist", &n);
	struct mac_snapshots sn;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_snapshots(t, n, &sn, &e), 0);
	CU_ASSERT_EQUAL_FATAL(sn.n, 2);
	CU_ASSERT_STRING_EQUAL(sn.names[0], "com.apple.TimeMachine.2021-06-03-085732");
	CU_ASSERT_STRING_EQUAL(sn.names[1], "com.apple.TimeMachine.2021-06-03-090320");
	prov_mac_snapshots_release(&sn);
	free(t);
	t = fx("diskutil-info-error-could-not-find-disk.plist", &n);
	CU_ASSERT_EQUAL(prov_mac_parse_snapshots(t, n, &sn, &e), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "Could not find disk"));
	prov_mac_snapshots_release(&sn);
	free(t);
	char *d = prov_mac_tmutil_date("Created local snapshot with date: 2026-02-04-134432\n");
	CU_ASSERT_STRING_EQUAL(d, "2026-02-04-134432");
	free(d);
	CU_ASSERT_PTR_NULL(prov_mac_tmutil_date("tmutil: failed\n"));
	CU_ASSERT_PTR_NULL(prov_mac_tmutil_date(NULL));
	sb_release(&e);
}

void register_macos_plist_tests(void)
{
	CU_pSuite s = test_suite("macos_plist");
	test_add(s, "diskutil list -plist (macOS 11+, APFS + USB stick)", test_list_modern);
	test_add(s, "diskutil list -plist (Mojave, seven disks)", test_list_mojave);
	test_add(s, "diskutil info -plist: internal NVMe whole disk", test_info_nvme);
	test_add(s, "diskutil info -plist: USB stick, no SolidState key", test_info_usb);
	test_add(s, "diskutil info -plist /: boot snapshot, physical stores", test_info_root);
	test_add(s, "diskutil info -plist: the Error dict", test_info_error);
	test_add(s, "diskutil apfs list -plist", test_apfs_list);
	test_add(s, "hdiutil attach -plist and info -plist", test_hdiutil);
	test_add(s, "Error: -NNNNN lines and created: paths", test_text);
	test_add(s, "noise, wrong types, truncation", test_robust);
	test_add(s, "diskutil apfs listSnapshots -plist; tmutil's date line", test_snapshots);
}
