/*
 * Virtual machine facts (lib/virt.c) on the recorded machines of
 * tests/fixtures/linux/ (the CI machine: a hypervisor flag, a virtio balloon
 * with free page reporting, order 9) and on small machines written here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/strbuf.h"
#include "lib/virt.h"
#include "test.h"

static void describe(const char *root, struct virt_facts *f, struct strbuf *sb)
{
	virt_read(root, f);
	sb_reset(sb);
	virt_describe(f, sb);
}

static void test_recorded(void)
{
	struct strbuf root = STRBUF_INIT, sb = STRBUF_INIT;
	struct virt_facts f;
	sb_addf(&root, "%s/tests/fixtures/linux/vm", test_src());
	describe(root.buf, &f, &sb);
	CU_ASSERT_EQUAL(f.vm, 1);
	CU_ASSERT_EQUAL(f.page_reporting, 1);
	CU_ASSERT_EQUAL(f.order, 9);
	CU_ASSERT_STRING_EQUAL(f.what, ""); /* no DMI on that machine */
	if (sysconf(_SC_PAGESIZE) == 4096)
		CU_ASSERT_STRING_EQUAL(sb.buf, "virtual machine; free page reporting (blocks of 2 MiB): "
					       "the host takes back memory this machine frees, and a "
					       "write into it faults it in again");
	/* a workstation: nothing to say */
	sb_reset(&root);
	sb_addf(&root, "%s/tests/fixtures/linux/workstation", test_src());
	describe(root.buf, &f, &sb);
	CU_ASSERT_EQUAL(f.vm, 0);
	CU_ASSERT_EQUAL(f.page_reporting, 0);
	CU_ASSERT_STRING_EQUAL(sb.buf, "");
	sb_release(&root);
	sb_release(&sb);
}

static void put(const char *root, const char *path, const char *text)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/%s", root, path);
	char *slash = strrchr(p.buf, '/');
	*slash = '\0';
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(files_mkdirs(p.buf, &err), 0);
	sb_release(&err);
	*slash = '/';
	CU_ASSERT_EQUAL(test_write_file(p.buf, text), 0);
	sb_release(&p);
}

static void test_written(void)
{
	char *tmp = test_tmpdir();
	struct strbuf sb = STRBUF_INIT;
	struct virt_facts f;
	/* DMI names a QEMU machine (arm64 has no hypervisor flag); a balloon
	 * without reporting (bit 5 clear) */
	put(tmp, "sys/class/dmi/id/sys_vendor", "QEMU\n");
	put(tmp, "sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
	put(tmp, "sys/bus/virtio/drivers/virtio_balloon/virtio3/features",
	    "0110000000000000000000000000000010000000000000000000000000000000\n");
	put(tmp, "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme de\n\n");
	describe(tmp, &f, &sb);
	CU_ASSERT_EQUAL(f.vm, 1);
	CU_ASSERT_EQUAL(f.page_reporting, 0);
	CU_ASSERT_STRING_EQUAL(sb.buf, "virtual machine (QEMU Standard PC (Q35 + ICH9, 2009))");
	/* a hardware vendor's DMI, the flag "hypervisors" is not "hypervisor",
	 * reporting on without a readable order */
	put(tmp, "sys/class/dmi/id/sys_vendor", "Dell Inc.\n");
	put(tmp, "sys/class/dmi/id/product_name", "Precision 5820 Tower\n");
	put(tmp, "proc/cpuinfo", "flags\t\t: fpu hypervisors\n");
	put(tmp, "sys/bus/virtio/drivers/virtio_balloon/virtio3/features", "0000010\n");
	describe(tmp, &f, &sb);
	CU_ASSERT_EQUAL(f.vm, 0);
	CU_ASSERT_EQUAL(f.page_reporting, 1);
	CU_ASSERT_EQUAL(f.order, -1);
	CU_ASSERT_STRING_EQUAL(sb.buf, "free page reporting: the host takes back memory this "
				       "machine frees, and a write into it faults it in again");
	/* Xen says so in /sys/hypervisor */
	put(tmp, "sys/class/dmi/id/sys_vendor", "\n");
	put(tmp, "sys/class/dmi/id/product_name", "\n");
	put(tmp, "sys/hypervisor/type", "xen\n");
	put(tmp, "sys/module/page_reporting/parameters/page_reporting_order", "0\n");
	describe(tmp, &f, &sb);
	CU_ASSERT_EQUAL(f.vm, 1);
	CU_ASSERT_EQUAL(f.order, 0);
	if (sysconf(_SC_PAGESIZE) == 4096)
		CU_ASSERT_TRUE(!strncmp(sb.buf, "virtual machine (xen); free page reporting (blocks "
						"of 4 KiB)", 55));
	test_rmtree(tmp);
	free(tmp);
	sb_release(&sb);
}

void register_virt_tests(void)
{
	CU_pSuite s = test_suite("virtual machine facts");
	test_add(s, "the recorded CI machine and workstation", test_recorded);
	test_add(s, "DMI, the cpu flag, /sys/hypervisor, the balloon's bit 5", test_written);
}
