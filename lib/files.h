/*
 * Small file-system chores that several parts of rig need the same way:
 * POSIX alone, so provision/ may use them too.
 */
#ifndef RIG_UTIL_FILES_H
#define RIG_UTIL_FILES_H

struct strbuf;

/* mkdir -p, without a shell: every missing folder of path, then path must
 * be a folder. 0, or a negative errno with the reason in err (may be NULL). */
int files_mkdirs(const char *path, struct strbuf *err);

/* Append the whole of the file at path to sb. 0, or a negative errno
 * (-ENOENT for a missing file; sb may then hold a part). */
int files_read(const char *path, struct strbuf *sb);

/* Whether paths a and b name the same file: the same text, or the same
 * once each is resolved (realpath: symlinks, "..", on a Mac /tmp and /var
 * for /private/tmp and /private/var). A path that does not resolve is
 * compared as text only. */
int files_same(const char *a, const char *b);

#endif
