/*
 * A resumed run on the macOS backend (rig resume; provision.h, struct
 * provision_resume): what the killed process of this run left, found with
 * hdiutil and diskutil (macos_resume.c). macos.c keeps it (its state as
 * after provision) or tears it down as if it had provisioned it.
 */
#ifndef RIG_PROVISION_MACOS_RESUME_H
#define RIG_PROVISION_MACOS_RESUME_H

#include <stddef.h>

#include "provision/macos/macos.h"
#include "provision/provision.h"

struct strbuf;

struct mac_leftover {
	/* image: the whole disk the run's image is attached as; disk: the
	 * target when it holds the layout's partitions as rig makes them;
	 * NULL: nothing of the run's there */
	char *disk;
	int image_made;          /* image: the file exists and the interrupted run made it */
	int keep;                /* exactly the recorded volumes: keep them */
	struct mac_made *made;   /* keep: per volume, and where it is mounted */
	char **mounts;
	size_t n;
};

/*
 * Wait for the commands the killed run left running, then look. image_file:
 * the file hdiutil creates (NULL for a disk target); image_key: the same
 * made absolute, as the provisioning journal knows it. Why the leftovers are
 * not kept goes into ctx->resume->why when reuse was asked. 0, or < 0 with
 * the reason in ctx->err (hdiutil or diskutil could not tell).
 */
/* macos.c's parsers of a command's plist, as mx_plist takes them: 0, or -1
 * with the reason in e (prov_macos_plist_info: also for diskutil's error dict). */
int prov_macos_plist_info(const char *b, size_t n, void *res, struct strbuf *e);
int prov_macos_plist_list(const char *b, size_t n, void *res, struct strbuf *e);
int prov_macos_plist_apfs(const char *b, size_t n, void *res, struct strbuf *e);
int prov_macos_plist_hdi_info(const char *b, size_t n, void *res, struct strbuf *e);

int prov_mac_resume_find(struct provision_ctx *ctx, const char *image_file, const char *image_key,
		    struct mac_leftover *lo);
void prov_mac_leftover_release(struct mac_leftover *lo);

#endif
