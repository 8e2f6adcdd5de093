/* Provenance facts; see sysinfo.h. SHA-256 comes from libcrypto, not by hand. */
#include "lib/sysinfo.h"

#include <openssl/evp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/strbuf.h"

void sysinfo_host(struct strbuf *sb)
{
	char host[256];
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		sb_adds(sb, host);
	} else {
		sb_adds(sb, "unknown");
	}
}

void sysinfo_os(struct strbuf *sb)
{
	struct utsname u;
	if (uname(&u) == 0)
		sb_addf(sb, "%s %s %s", u.sysname, u.release, u.machine);
	else
		sb_adds(sb, "unknown");
}

void sysinfo_sha256_hex(const void *data, size_t len, struct strbuf *sb)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL)) {
		sb_adds(sb, "unknown");
		return;
	}
	for (unsigned int i = 0; i < n; i++)
		sb_addf(sb, "%02x", md[i]);
}
