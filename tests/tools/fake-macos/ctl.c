/*
 * `fake-macos ctl ...`: how a test sets up the fake machine (main.c lists
 * the subcommands). Not a tool of macOS: nothing goes to calls.log.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake.h"
#include "lib/files.h"
#include "lib/xalloc.h"

static void write_state(struct fake *fk, const char *name, const char *text)
{
	struct strbuf p = STRBUF_INIT;
	fake_write(fake_path(fk, &p, "%s", name), text);
	sb_release(&p);
}

/* disk0 (internal SSD) with container disk1, / on disk1s1 */
static int ctl_boot(struct fake *fk)
{
	write_state(fk, "disks/disk0", "kind=physical\nsize=500277790720\nmedia=APPLE SSD AP0512Q\n"
				       "internal=1\nsolid=1\nbus=Apple Fabric\n");
	write_state(fk, "parts/disk0", "disk0s1|EFI|msdos|EFI|20480|524288000|disk0s1|\n"
				       "disk0s2|Apple_APFS|apfs|Macintosh HD|524308480|"
				       "499963174912|disk1s1|/\n");
	write_state(fk, "disks/disk1", "kind=container\nsize=499963174912\nstore=disk0s2\n"
				       "parent=disk0\n");
	return 0;
}

/* add-disk ID BYTES MEDIA [internal|external] [solid|rotational|unknown] [BUS] [virtual] */
static int ctl_add_disk(struct fake *fk, int argc, char **argv)
{
	const char *opt[8] = { "", "", "", "external", "unknown", "USB", "" };
	for (int i = 0; i < argc && i < 7; i++) {
		if (*argv[i] || i < 3)
			opt[i] = argv[i];
	}
	struct strbuf text = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&text, "kind=physical\nsize=%s\nmedia=%s\ninternal=%d\n", opt[1], opt[2],
		!strcmp(opt[3], "internal"));
	if (!strcmp(opt[4], "solid") || !strcmp(opt[4], "rotational"))
		sb_addf(&text, "solid=%d\n", !strcmp(opt[4], "solid"));
	sb_addf(&text, "bus=%s\n", opt[5]);
	if (!strcmp(opt[6], "virtual"))
		sb_adds(&text, "virtual=1\n");
	fake_write(fake_path(fk, &p, "disks/%s", opt[0]), text.buf);
	/* the next disk number stays above the disks a test adds */
	const char *num = strncmp(opt[0], "disk", 4) ? opt[0] : opt[0] + 4;
	char *end;
	long long n = strtoll(num, &end, 10), next = 2;
	sb_reset(&text);
	if (files_read(fake_path(fk, &p, "next"), &text) == 0)
		next = fake_num(text.buf);
	if (*num && !*end && next <= n) {
		sb_reset(&text);
		sb_addf(&text, "%lld\n", n + 1);
		fake_write(p.buf, text.buf);
	}
	sb_release(&text);
	sb_release(&p);
	return 0;
}

/* partition ID FMT NAME [SIZE] ...: partitionDisk ID GPT ..., its output
 * dropped; the last SIZE may be left out (1M: it runs to the end anyway). */
static int ctl_partition(struct fake *fk, int argc, char **argv)
{
	char **v = xcalloc((size_t)argc + 3, sizeof(*v));
	int n = 0;
	v[n++] = argc > 0 ? argv[0] : "";
	v[n++] = "GPT";
	for (int i = 1; i < argc; i++)
		v[n++] = argv[i];
	if ((argc - 1) % 3 == 2)
		v[n++] = "1M";
	fflush(stdout);
	int null = open("/dev/null", O_WRONLY);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	int rc = fake_partition(fk, n, v);
	fflush(stdout);
	free(v);
	return rc;
}

int fake_ctl(struct fake *fk, int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : "";
	if (!strcmp(cmd, "boot"))
		return ctl_boot(fk);
	if (!strcmp(cmd, "add-disk"))
		return ctl_add_disk(fk, argc - 1, argv + 1);
	if (!strcmp(cmd, "fault")) {
		struct strbuf p = STRBUF_INIT, line = STRBUF_INIT;
		for (int i = 1; i <= 3; i++)
			sb_addf(&line, "%s%s", i > 1 ? " " : "", i < argc ? argv[i] : "");
		sb_addch(&line, '\n');
		fake_append(fake_path(fk, &p, "faults"), line.buf);
		sb_release(&p);
		sb_release(&line);
		return 0;
	}
	if (!strcmp(cmd, "partition"))
		return ctl_partition(fk, argc - 1, argv + 1);
	if (!strcmp(cmd, "minpref")) {
		fake_kv_set(fk, argc > 1 ? argv[1] : "", "minpref", argc > 2 ? argv[2] : "");
		return 0;
	}
	fake_err("fake-macos ctl: boot | add-disk ID BYTES MEDIA ... | fault NAME COUNT [ARG]\n");
	return 2;
}
