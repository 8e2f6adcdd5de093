/*
 * Who still uses what a killed run left, on macOS (driver.h, procs_using):
 * there is no /proc, so `lsof -F pcn -w` (every process's open files, its
 * working folder among them, one field a line: p<pid>, c<command>,
 * n<name>) is asked through the spawner and parsed here. A process counts
 * when it has open, or works in, a needle itself or anything below it:
 * hdiutil holding the image file, a benchmark writing below a mount.
 * Rejected: ps(1) for the arguments as Linux reads them from /proc; on
 * macOS the attached image and the mounted volume are open files, which
 * lsof sees whatever the arguments said.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "platform/spawn.h"
#include "provision/macos/macos.h"

static int path_at_or_below(const char *path, const char *needle)
{
	size_t n = strlen(needle);
	return !strncmp(path, needle, n) && (path[n] == '\0' || path[n] == '/');
}

size_t prov_mac_lsof_users(const char *text, long self, const char *const *needles,
		      struct strbuf *what)
{
	size_t found = 0;
	long pid = -1;
	int counted = 0;
	struct strbuf cmd = STRBUF_INIT;
	for (const char *line = text; line && *line;) {
		size_t len = strcspn(line, "\n");
		if (line[0] == 'p') {
			pid = strtol(line + 1, NULL, 10);
			counted = 0;
			sb_reset(&cmd);
		} else if (line[0] == 'c') {
			sb_reset(&cmd);
			sb_addf(&cmd, "%.*s", (int)len - 1, line + 1);
		} else if (line[0] == 'n' && pid > 0 && pid != self && !counted) {
			struct strbuf name = STRBUF_INIT;
			sb_addf(&name, "%.*s", (int)len - 1, line + 1);
			for (size_t k = 0; needles[k] && !counted; k++)
				counted = path_at_or_below(name.buf, needles[k]);
			sb_release(&name);
			if (counted) {
				if (what)
					sb_addf(what, "%sPID %ld (%s)", found ? ", " : "", pid,
						cmd.len ? cmd.buf : "?");
				found++;
			}
		}
		line += len + (line[len] == '\n');
	}
	sb_release(&cmd);
	return found;
}

int prov_mac_procs_using(const char *const *needles, struct strbuf *what)
{
	const char *argv[] = { "lsof", "-F", "pcn", "-w", NULL };
	struct spawner sp = plat_spawner_fault(plat_spawner_real(NULL, NULL));
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	size_t n = 0;
	/* lsof exits 1 when some file could not be listed: its output still counts. */
	if (plat_spawn_run(&sp, argv, NULL, &r, &err) == 0) {
		n = prov_mac_lsof_users(r.output, (long)getpid(), needles, what);
		plat_spawn_result_release(&r);
	}
	sb_release(&err);
	return n > 0;
}
