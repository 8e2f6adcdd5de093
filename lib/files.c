/* See files.h. */
#include "lib/files.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"

int files_mkdirs(const char *path, struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT;
	sb_adds(&sb, path);
	for (char *p = sb.buf + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(sb.buf, 0777) < 0 && errno != EEXIST) {
				int e = errno;
				if (err)
					sb_addf(err, "cannot create directory %s: %s", sb.buf, strerror(e));
				sb_release(&sb);
				return -e;
			}
			*p = c;
			if (!c)
				break;
		}
	}
	sb_release(&sb);
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		if (err)
			sb_addf(err, "cannot use %s: not a directory", path);
		return -ENOTDIR;
	}
	return 0;
}

int files_read(const char *path, struct strbuf *sb)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[65536];
	int rc = 0;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0 ? -errno : 0;
			break;
		}
		sb_add(sb, buf, (size_t)r);
	}
	close(fd);
	return rc;
}

int files_same(const char *a, const char *b)
{
	if (!strcmp(a, b))
		return 1;
	char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
	int same = ra && rb && !strcmp(ra, rb);
	free(ra);
	free(rb);
	return same;
}
