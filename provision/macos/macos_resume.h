/*
 * A resumed run on the macOS backend (rig resume; provision.h, struct
 * provision_resume): what the killed process of this run left, found with
 * hdiutil and diskutil, and whether it is exactly the recorded volumes
 * (macos_resume.c). macos.c's resume primitives (driver.h, struct
 * prov_resume_prims) put it into its state, to be kept or torn down.
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
	struct mac_made *made;   /* the layout's volumes as found on disk (n); NULL: not there */
	char **mounts;           /* verified: where each of made is mounted */
	size_t n;
	char *why;               /* what find already knows against keeping it, or "" */
};

/* macos.c's parsers of a command's plist, as mx_plist takes them: 0, or -1
 * with the reason in e (prov_macos_plist_info: also for diskutil's error dict). */
int prov_macos_plist_info(const char *b, size_t n, void *res, struct strbuf *e);
int prov_macos_plist_list(const char *b, size_t n, void *res, struct strbuf *e);
int prov_macos_plist_apfs(const char *b, size_t n, void *res, struct strbuf *e);
int prov_macos_plist_hdi_info(const char *b, size_t n, void *res, struct strbuf *e);

/*
 * Wait for the commands the killed run left running, then look. image_file:
 * the file hdiutil creates (NULL for a disk target); image_key: the same
 * made absolute, as the provisioning journal knows it. 0, or < 0 with the
 * reason in ctx->err (hdiutil or diskutil could not tell; lo is empty).
 */
int prov_mac_resume_find(struct provision_ctx *ctx, const char *image_file, const char *image_key,
			 struct mac_leftover *lo);
/* Why what find found is not exactly the recorded volumes of
 * ctx->resume->layout ("" when it is: lo->mounts is then set), asking
 * diskutil about each volume. 0, or < 0 with the reason in ctx->err. */
int prov_mac_resume_verify(struct provision_ctx *ctx, struct mac_leftover *lo, struct strbuf *why);
void prov_mac_leftover_release(struct mac_leftover *lo);

#endif
