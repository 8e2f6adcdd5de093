/* Virtual machine facts; see virt.h. Reads files only: testable on the
 * recorded machines of tests/fixtures/linux/. */
#include "lib/virt.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"

/* The first line of root+path, trimmed, into buf; 0, or -1 when unreadable or empty. */
static int read_line(const char *root, const char *path, char *buf, size_t size)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s%s", root, path);
	FILE *f = fopen(p.buf, "r");
	sb_release(&p);
	if (!f)
		return -1;
	int ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	size_t n = strcspn(buf, "\n");
	while (n && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	buf[n] = '\0';
	return n ? 0 : -1;
}

/* Whether a "flags" line of root's /proc/cpuinfo has the word "hypervisor". */
static int cpu_flag_hypervisor(const char *root)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/proc/cpuinfo", root);
	FILE *f = fopen(p.buf, "r");
	sb_release(&p);
	if (!f)
		return 0;
	char line[4096];
	int found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		for (char *w = strtok(line, " \t\n:"); w; w = strtok(NULL, " \t\n:"))
			if (!strcmp(w, "hypervisor"))
				found = 1;
	}
	fclose(f);
	return found;
}

/* Vendors that only ever name a virtual machine in DMI. */
static int vm_vendor(const char *vendor, const char *product)
{
	static const char *const names[] = { "QEMU", "KVM", "VMware", "innotek GmbH", "Xen",
					     "Parallels", "BHYVE", "Bochs" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strstr(vendor, names[i]) || strstr(product, names[i]))
			return 1;
	return !strcmp(product, "Virtual Machine"); /* Hyper-V */
}

/* Whether some virtio balloon of root offers free page reporting. */
static int balloon_reports(const char *root)
{
	static const char dir[] = "/sys/bus/virtio/drivers/virtio_balloon";
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s%s", root, dir);
	DIR *d = opendir(p.buf);
	sb_release(&p);
	if (!d)
		return 0;
	int on = 0;
	struct dirent *e;
	while (!on && (e = readdir(d))) {
		if (strncmp(e->d_name, "virtio", 6))
			continue;
		char bits[256];
		struct strbuf f = STRBUF_INIT;
		sb_addf(&f, "%s/%s/features", dir, e->d_name);
		/* one character per feature bit, bit 0 first */
		if (read_line(root, f.buf, bits, sizeof(bits)) == 0 && strlen(bits) > 5)
			on = bits[5] == '1';
		sb_release(&f);
	}
	closedir(d);
	return on;
}

void virt_read(const char *root, struct virt_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->order = -1;
	char vendor[64] = "", product[96] = "", xen[32] = "";
	read_line(root, "/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor));
	read_line(root, "/sys/class/dmi/id/product_name", product, sizeof(product));
	int hv_type = read_line(root, "/sys/hypervisor/type", xen, sizeof(xen)) == 0;
	f->vm = cpu_flag_hypervisor(root) || hv_type || vm_vendor(vendor, product);
	if (f->vm) {
		if (*vendor || *product)
			snprintf(f->what, sizeof(f->what), "%s%s%s", vendor, *vendor && *product ? " " : "",
				 product);
		else if (hv_type)
			snprintf(f->what, sizeof(f->what), "%s", xen);
	}
	f->page_reporting = balloon_reports(root);
	char order[16];
	if (f->page_reporting && read_line(root, "/sys/module/page_reporting/parameters/"
						 "page_reporting_order", order, sizeof(order)) == 0) {
		char *end;
		long v = strtol(order, &end, 10);
		if (!*end && v >= 0 && v < 40)
			f->order = (int)v;
	}
}

void virt_describe(const struct virt_facts *f, struct strbuf *sb)
{
	if (f->vm)
		sb_addf(sb, "virtual machine%s%s%s", *f->what ? " (" : "", f->what, *f->what ? ")" : "");
	if (!f->page_reporting)
		return;
	sb_addf(sb, "%sfree page reporting", f->vm ? "; " : "");
	long page = sysconf(_SC_PAGESIZE);
	if (f->order >= 0 && page > 0) {
		/* blocks of 2^order pages */
		unsigned long long kib = ((unsigned long long)page / 1024) << f->order;
		if (kib >= 1024)
			sb_addf(sb, " (blocks of %llu MiB)", kib / 1024);
		else
			sb_addf(sb, " (blocks of %llu KiB)", kib);
	}
	sb_adds(sb, ": the host takes back memory this machine frees, and a write into it "
		    "faults it in again");
}
