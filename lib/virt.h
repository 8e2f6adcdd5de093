/*
 * Whether the machine that measures is a virtual machine, and whether its
 * host takes back the memory it frees (free page reporting): facts for the
 * run's provenance, since both change what buffered writes measure. On
 * such a guest a page freed and then written again is faulted in from the
 * host first (measured on the CI machine: 0.24-0.32 GB/s on first touch,
 * 19-23 GB/s on the second; bench/README.md, "Free memory on this machine").
 */
#ifndef RIG_VIRT_H
#define RIG_VIRT_H

struct strbuf;

struct virt_facts {
	int vm;             /* a hypervisor is present */
	int page_reporting; /* a virtio balloon reports free pages to the host */
	int order;          /* the pages reported: blocks of 2^order pages; -1 unknown */
	char what[160];     /* the hypervisor or machine as named (DMI, /sys/hypervisor), or "" */
};

/*
 * Read the facts from the files under root ("" for this machine): the
 * hypervisor flag in /proc/cpuinfo, /sys/hypervisor/type, the DMI vendor
 * and product (/sys/class/dmi/id), the feature bits of every virtio
 * balloon (/sys/bus/virtio/drivers/virtio_balloon/virtioN/features, bit 5
 * VIRTIO_BALLOON_F_REPORTING) and page_reporting's order
 * (/sys/module/page_reporting/parameters). Files that do not exist (on
 * macOS, all of them; see plat_vmm_present) say nothing.
 */
void virt_read(const char *root, struct virt_facts *f);

/* One line for the provenance, "" on a machine that is not virtual:
 * "virtual machine (QEMU Standard PC); free page reporting (blocks of 2 MiB): ...". */
void virt_describe(const struct virt_facts *f, struct strbuf *sb);

#endif
