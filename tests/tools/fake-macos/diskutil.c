/*
 * The fake diskutil: its verbs, chosen as the script chose them, by the
 * arguments joined with spaces: the first entry of the table whose prefix
 * (and suffix) that line has, or whose line it is.
 */
#include <stdio.h>
#include <string.h>

#include "fake.h"

/* Argument i, or "" past the end. */
static const char *arg(int argc, char **argv, int i)
{
	return i < argc ? argv[i] : "";
}

static int v_list(struct fake *fk, int argc, char **argv)
{
	return argc >= 2 ? fake_list(fk, argc - 2, argv + 2) : fake_list(fk, argc, argv);
}

static int v_info(struct fake *fk, int argc, char **argv)
{
	return fake_info(fk, arg(argc, argv, 2));
}

static int v_apfs_list(struct fake *fk, int argc, char **argv)
{
	/* a macOS before 10.13: diskutil knows no apfs verb (the fake's
	 * wording, not a recording) */
	if (fake_fault(fk, "no-apfs", "")) {
		fake_err("diskutil: did not recognize verb \"apfs\"; type \"diskutil\" for a list\n");
		return 1;
	}
	return fake_apfs_list(fk);
}

static int v_partition(struct fake *fk, int argc, char **argv)
{
	return fake_partition(fk, argc - 1, argv + 1);
}

static int v_limits(struct fake *fk, int argc, char **argv)
{
	return fake_limits(fk, arg(argc, argv, 2));
}

static int v_resize_container(struct fake *fk, int argc, char **argv)
{
	return argc >= 2 ? fake_resize(fk, "apfs", argc - 2, argv + 2) : fake_resize(fk, "apfs", 0, argv);
}

static int v_defragment(struct fake *fk, int argc, char **argv)
{
	return fake_defragment(fk, arg(argc, argv, 2), arg(argc, argv, 3));
}

static int v_list_snapshots(struct fake *fk, int argc, char **argv)
{
	return fake_list_snapshots(fk, arg(argc, argv, 3));
}

static int v_delete_snapshot(struct fake *fk, int argc, char **argv)
{
	return fake_delete_snapshot(fk, arg(argc, argv, 2), arg(argc, argv, 3), arg(argc, argv, 4));
}

static int v_resize_volume(struct fake *fk, int argc, char **argv)
{
	return fake_resize(fk, "hfs", argc - 1, argv + 1);
}

/* The verbs below name their disk or volume last. */
static int v_unmount_disk(struct fake *fk, int argc, char **argv)
{
	return fake_unmount_disk(fk, argv[argc - 1]);
}

static int v_unmount(struct fake *fk, int argc, char **argv)
{
	return fake_unmount_verb(fk, argv[argc - 1]);
}

static int v_mount(struct fake *fk, int argc, char **argv)
{
	return fake_mount_verb(fk, argv[argc - 1]);
}

static const struct verb {
	const char *prefix, *suffix; /* suffix NULL: any; "": the whole line is prefix */
	fake_verb *run;
} verbs[] = {
	{ "list -plist", NULL, v_list },
	{ "info -plist ", NULL, v_info },
	{ "apfs list -plist", "", v_apfs_list },
	{ "partitionDisk ", NULL, v_partition },
	{ "apfs resizeContainer ", " limits -plist", v_limits },
	{ "apfs resizeContainer ", NULL, v_resize_container },
	{ "apfs defragment ", NULL, v_defragment },
	{ "apfs listSnapshots -plist ", NULL, v_list_snapshots },
	{ "apfs deleteSnapshot ", NULL, v_delete_snapshot },
	{ "resizeVolume ", NULL, v_resize_volume },
	{ "unmountDisk ", NULL, v_unmount_disk },
	{ "unmount ", NULL, v_unmount },
	{ "mount ", NULL, v_mount },
};

static int matches(const struct verb *v, const char *line)
{
	size_t n = strlen(line), p = strlen(v->prefix);
	if (strncmp(line, v->prefix, p))
		return 0;
	if (!v->suffix)
		return 1;
	if (!*v->suffix)
		return n == p;
	size_t s = strlen(v->suffix);
	return n >= p + s && !strcmp(line + n - s, v->suffix);
}

int fake_diskutil(struct fake *fk, int argc, char **argv)
{
	struct strbuf line = STRBUF_INIT;
	for (int i = 0; i < argc; i++)
		sb_addf(&line, "%s%s", i ? " " : "", argv[i]);
	int rc = -1;
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]) && rc < 0; i++) {
		if (matches(&verbs[i], line.buf))
			rc = verbs[i].run(fk, argc, argv);
	}
	if (rc < 0) {
		fake_err("fake diskutil: verb not modelled: %s\n", line.buf);
		rc = 1;
	}
	sb_release(&line);
	return rc;
}
