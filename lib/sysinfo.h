/* Facts about this machine and data for provenance records. */
#ifndef RIG_SYSINFO_H
#define RIG_SYSINFO_H

#include <stddef.h>

struct strbuf;

/* Host name; "unknown" when it cannot be read. */
void sysinfo_host(struct strbuf *sb);
/* "Linux 6.1.0-18-amd64 x86_64" (uname sysname, release, machine). */
void sysinfo_os(struct strbuf *sb);
/* Lowercase hex SHA-256 of data (libcrypto). */
void sysinfo_sha256_hex(const void *data, size_t len, struct strbuf *sb);

#endif
