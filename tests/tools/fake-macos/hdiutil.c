/*
 * The fake hdiutil: create (a sparse file of -sectors 512-byte sectors),
 * attach (the image becomes the next disk, kind=image), detach or eject
 * (its partitions and their containers forgotten) and info.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake.h"
#include "lib/xalloc.h"

static int hdi_create(int argc, char **argv)
{
	const char *sectors = "", *path = "";
	int ov = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-sectors") || !strcmp(a, "-layout") || !strcmp(a, "-type") ||
		    !strcmp(a, "-fs") || !strcmp(a, "-volname")) {
			if (!strcmp(a, "-sectors") && i + 1 < argc)
				sectors = argv[i + 1];
			i++;
		} else if (!strcmp(a, "-ov")) {
			ov = 1;
		} else if (a[0] == '-') {
			fake_err("hdiutil: create: option %s not modelled\n", a);
			return 1;
		} else {
			path = a;
		}
	}
	if (!*sectors || !*path) {
		fake_err("hdiutil: create: usage\n");
		return 1;
	}
	struct strbuf dmg = STRBUF_INIT;
	size_t n = strlen(path);
	sb_addf(&dmg, "%s%s", path, n >= 4 && !strcmp(path + n - 4, ".dmg") ? "" : ".dmg");
	struct stat st;
	if (stat(dmg.buf, &st) == 0 && !ov) {
		puts("hdiutil: create failed - File exists");
		sb_release(&dmg);
		return 1;
	}
	char *end;
	long long count = strtoll(sectors, &end, 10);
	unlink(dmg.buf);
	int fd = *end || count < 0 ? -1 : open(dmg.buf, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	int rc = fd < 0 || ftruncate(fd, (off_t)count * 512) < 0;
	if (fd >= 0)
		close(fd);
	if (!rc)
		printf("created: %s\n", dmg.buf);
	sb_release(&dmg);
	return rc;
}

static int hdi_attach(struct fake *fk, int argc, char **argv)
{
	const char *path = "";
	int plist = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-plist")) {
			plist = 1;
		} else if (!strcmp(a, "-nomount") || !strcmp(a, "-noverify") || !strcmp(a, "-nobrowse")) {
			continue;
		} else if (a[0] == '-') {
			fake_err("hdiutil: attach: option %s not modelled\n", a);
			return 1;
		} else {
			path = a;
		}
	}
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
		puts("hdiutil: attach failed - No such file or directory");
		return 1;
	}
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT, dev = STRBUF_INIT;
	long long d = fake_next_disk(fk);
	sb_addf(&text, "kind=image\nsize=%lld\nmedia=Disk Image\ninternal=0\nbus=Disk Image\n"
		       "virtual=1\nimage=%s\n", (long long)st.st_size, path);
	fake_write(fake_path(fk, &p, "disks/disk%lld", d), text.buf);
	sb_addf(&dev, "/dev/disk%lld", d);
	if (plist) {
		plist_head();
		puts("<dict>");
		plist_line(1, "<key>system-entities</key>");
		plist_line(1, "<array>");
		plist_line(2, "<dict>");
		plist_str(3, "content-hint", "");
		plist_str(3, "dev-entry", dev.buf);
		plist_bool(3, "potentially-mountable", 0);
		plist_str(3, "unmapped-content-hint", "");
		plist_line(2, "</dict>");
		plist_line(1, "</array>");
		puts("</dict>");
		plist_tail();
	} else {
		puts(dev.buf);
	}
	sb_release(&p);
	sb_release(&text);
	sb_release(&dev);
	return 0;
}

static int hdi_detach(struct fake *fk, int argc, char **argv)
{
	const char *d = "";
	int force = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-force"))
			force = 1;
		else
			d = strncmp(argv[i], "/dev/", 5) ? argv[i] : argv[i] + 5;
	}
	char *kind = fake_kv(fk, d, "kind");
	int image = *d && !strcmp(kind, "image");
	free(kind);
	if (!image) {
		puts("hdiutil: detach failed - No such file or directory");
		return 1;
	}
	if (!force && fake_fault(fk, "detach-busy", "")) {
		printf("hdiutil: couldn't unmount \"%s\" - Resource busy\n", d);
		return 16;
	}
	struct strbuf p = STRBUF_INIT;
	fake_drop_partitions(fk, d);
	unlink(fake_path(fk, &p, "disks/%s", d));
	printf("\"%s\" ejected.\n", d);
	sb_release(&p);
	return 0;
}

static int hdi_info(struct fake *fk)
{
	size_t n;
	char **ids = fake_disk_ids(fk, &n);
	int any = 0;
	plist_head();
	puts("<dict>");
	plist_str(1, "framework", "683.100.3");
	for (size_t i = 0; i < n; i++) {
		char *kind = fake_kv(fk, ids[i], "kind");
		if (!strcmp(kind, "image")) {
			char *image = fake_kv(fk, ids[i], "image");
			struct strbuf dev = STRBUF_INIT;
			sb_addf(&dev, "/dev/%s", ids[i]);
			if (!any++) {
				plist_line(1, "<key>images</key>");
				plist_line(1, "<array>");
			}
			plist_line(2, "<dict>");
			plist_str(3, "image-path", image);
			plist_line(3, "<key>system-entities</key>");
			plist_line(3, "<array>");
			plist_line(4, "<dict>");
			plist_str(5, "dev-entry", dev.buf);
			plist_line(4, "</dict>");
			plist_line(3, "</array>");
			plist_line(2, "</dict>");
			sb_release(&dev);
			free(image);
		}
		free(kind);
	}
	if (any)
		plist_line(1, "</array>");
	plist_str(1, "revision", "683.100.3");
	plist_str(1, "vendor", "Apple");
	puts("</dict>");
	plist_tail();
	fake_names_free(ids, n);
	return 0;
}

int fake_hdiutil(struct fake *fk, int argc, char **argv)
{
	const char *verb = argc > 0 ? argv[0] : "";
	if (!strcmp(verb, "create"))
		return hdi_create(argc - 1, argv + 1);
	if (!strcmp(verb, "attach"))
		return hdi_attach(fk, argc - 1, argv + 1);
	if (!strcmp(verb, "detach") || !strcmp(verb, "eject"))
		return hdi_detach(fk, argc - 1, argv + 1);
	if (!strcmp(verb, "info"))
		return hdi_info(fk);
	fake_err("fake hdiutil: verb not modelled: %s\n", verb);
	return 1;
}
