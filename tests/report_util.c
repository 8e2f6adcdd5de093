/* Helpers for the report tests; see report_util.h. */
#include "report_util.h"
#include "reports/compare.h"

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "store/store.h"

/* A small deterministic generator, so tests can recompute the values. */
static double rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*s >> 11) / 9007199254740992.0;
}

static const char *const vol_names[2][2] = { { "ext4", "xfs" }, { "xfs", "ext4" } };

/* The rate of a write cell: position 1 is faster, plus noise. */
static double rate_of(uint64_t *st, int position)
{
	return (position == 1 ? 150.0 : 120.0) + 6 * (rnd(st) - 0.5);
}

static void plan_text(struct strbuf *p, const struct fx_opts *o)
{
	sb_adds(p, "rig: 1\nname: report-test\ndescription: A synthetic run for the report tests.\n");
	if (o->dirs)
		sb_adds(p, "target:\n  dirs: [/tmp/rig-report-test/a, /tmp/rig-report-test/b]\n"
			   "  names: [ext4, xfs]\n");
	else if (o->mac_plan)
		sb_adds(p, "target:\n  disk: { device: /dev/sdb, confirm: \"Test Disk\" }\n");
	else
		sb_adds(p, "target:\n  image: { path: /var/tmp/rig-report-test.img, size: 2G }\n");
	/* The volumes are named after the file systems made; a macOS plan
	 * asks for apfs and hfs+, which --fs-map turns into those. */
	const char *a = o->mac_plan ? "apfs" : "ext4", *b = o->mac_plan ? "hfs+" : "xfs";
	if (!o->dirs)
		sb_addf(p, "layouts:\n  - name: ext4-first\n    partitions:\n"
			   "      - { name: ext4, fs: %s, size: 50%% }\n      - { name: xfs, fs: %s, size: rest }\n"
			   "  - name: xfs-first\n    partitions:\n"
			   "      - { name: xfs, fs: %s, size: 50%% }\n      - { name: ext4, fs: %s, size: rest }\n",
			a, b, b, a);
	sb_addf(p, "repeat: %d\nsteps:\n  - write: { files: 4, sizes: 1M..8M }\n  - read: {}\n"
		   "  - cycle:\n      times: 3\n      steps:\n        - null: { value: 2 }\n"
		   "  - sweep:\n      level: [10%%, 50%%, 90%%]\n      steps:\n        - null: { value: 3 }\n"
		   "report:\n  title: \"Synthetic <halves> & \\\"quotes\\\"\"\n", o->reps);
	if (!o->no_baseline)
		sb_adds(p, "  baseline: ext4\n");
	sb_addf(p, "  by: [%sposition]\n  formats: %s\n", o->dirs ? "" : "layout, ",
		o->formats ? o->formats : "[html, csv, json]");
}

int rfx_make_store(const char *dir, const struct fx_opts *o)
{
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT, plan = STRBUF_INIT;
	sb_addf(&path, "%s/results.db", dir);
	struct store *s = store_create(path.buf, &err);
	if (!s) {
		fprintf(stderr, "%s\n", err.buf);
		return -1;
	}
	plan_text(&plan, o);
	struct store_run r = { .id = "20240102T030405Z-report-test", .plan_name = "report-test",
			       .plan_file = "plan.yaml", .plan_text = plan.buf, .plan_sha256 = "ab",
			       .seed = 42, .rig_version = "0.0.0-test",
			       .host = o->host ? o->host : "testhost", .os = "Linux 6.1.0 x86_64",
			       .started_utc = "2024-01-02T03:04:05Z", .platform = "linux",
			       .argv = "rig run plan.yaml", .options_json = o->options_json };
	store_begin_run(s, &r, &err);
	store_add_note(s, 0, "cpu", "Test CPU @ 3.0 GHz (8 cores)", &err);
	store_add_note(s, 0, "memory_bytes", "17179869184", &err);
	store_add_event(s, "2024-01-02T03:04:05Z", "warning", "cache.flush is requested but rig is not root", &err);
	store_add_command(s, "2024-01-02T03:04:05Z", "sgdisk --zap-all /dev/loop0", 0, 0.05,
			  "GPT data structures destroyed!\n\x01 bad byte \xff here <b>", &err);
	int nl = o->dirs ? 1 : 2;
	int64_t vid[2][2];
	for (int li = 0; li < nl; li++)
		for (int vi = 0; vi < 2; vi++) {
			const char *name = vol_names[li][vi];
			struct store_volume v = { .layout = o->dirs ? "" : li ? "xfs-first" : "ext4-first",
						  .layout_index = (uint32_t)li, .name = name, .fs = name,
						  .position = (uint32_t)vi + 1, .dir = "/mnt/x" };
			if (!o->dirs) {
				v.has_offsets = 1;
				v.offset_start = vi ? 1073741824ull : 1048576ull;
				v.offset_end = vi ? 2147467264ull : 1073741824ull;
				v.device = vi ? "/dev/loop0p2" : "/dev/loop0p1";
				v.facts_json = "{\"target\":\"image\",\"disk\":\"/dev/loop0\",\"model\":\"Test Disk\","
					       "\"serial\":\"T123\",\"bus\":\"usb\",\"rotational\":true,"
					       "\"sector_size\":512,\"mount_options\":\"rw,relatime\"}";
			} else {
				v.facts_json = "{\"path\":\"/tmp/rig-report-test/a\",\"capacity_bytes\":1000000000}";
			}
			store_add_volume(s, &v, &err);
			vid[li][vi] = v.id;
		}
	uint64_t st = o->seed ? o->seed : 1;
	uint32_t seq = 0, phase = 0;
	char ts[32];
	const char *steps[] = { "1", "2", "3.cycle1.1", "3.cycle2.1", "3.cycle3.1",
				"4.sweep1.1", "4.sweep2.1", "4.sweep3.1" };
	const char *sweep_vals[] = { "10%", "50%", "90%" };
	for (int li = 0; li < nl; li++)
		for (int rep = 1; rep <= o->reps; rep++)
			for (int k = 0; k < 8; k++) {
				phase++;
				for (int vi = 0; vi < 2; vi++) {
					seq++;
					snprintf(ts, sizeof(ts), "2024-01-02T03:%02u:%02u.000Z", (seq / 60) % 60, seq % 60);
					const char *mod = k == 0 ? "write" : k == 1 ? "read" : "null";
					struct store_cell c = { .seq = seq, .phase = phase,
								.layout = o->dirs ? "" : li ? "xfs-first" : "ext4-first",
								.rep = (uint32_t)rep, .step = steps[k], .module = mod,
								.volume_id = vid[li][vi],
								.cycle = k >= 2 && k <= 4 ? (uint32_t)(k - 1) : 0,
								.sweep_var = k >= 5 ? "level" : NULL,
								.sweep_value = k >= 5 ? sweep_vals[k - 5] : NULL };
					store_cell_start(s, &c, ts, &err);
					int last = o->fail && li == nl - 1 && rep == o->reps && k == 7 && vi == 1;
					if (k <= 1) {
						double rate = rate_of(&st, vi + 1) * (k ? 1.1 : 1);
						store_add_sample(s, seq, "rate", rate, "MB/s", k ? "direct+drop_caches" : "direct", &err);
						store_add_sample(s, seq, "seconds", 32e6 / rate / 1e6, "s", "direct", &err);
						for (int f = 0; f < 4; f++) {
							char fn[16];
							snprintf(fn, sizeof(fn), "f%03d", f);
							uint64_t bytes = (uint64_t)(1 + f * 2) << 20;
							double secs = 0.002 + (double)bytes / (rate * 1e6) * (0.95 + 0.1 * rnd(&st));
							store_add_file_sample(s, seq, fn, bytes, secs, &err);
						}
					} else if (!last) {
						double base = k <= 4 ? 100.0 - 10 * (k - 2) : 50.0 + 20 * (k - 5);
						store_add_sample(s, seq, "value", base * (vi ? 0.8 : 1) + rnd(&st), "1", "", &err);
						store_add_sample(s, seq, "seconds", 0.001 * (1 + rnd(&st)), "s", "", &err);
						/* Without the generator: rfx_expected_mean stays valid. */
						for (int f = 0; f < 4 && k >= 5 && o->sweep_files; f++) {
							char fn[16];
							snprintf(fn, sizeof(fn), "s%03d", f);
							uint64_t bytes = (uint64_t)(1 + f * 2) << 20;
							double rate = (40.0 + 20 * (k - 5) + 5 * vi + 3 * li) * 1e6;
							store_add_file_sample(s, seq, fn, bytes,
									      0.001 * (1 + rep % 2) + (double)bytes / rate, &err);
						}
					}
					if (k == 2 && vi == 0)
						store_add_note(s, seq, "engine", "test-engine", &err);
					store_cell_end(s, seq, ts, last ? "failed" : "done",
						       last ? "null module asked to fail (fail: true)" : NULL, &err);
				}
			}
	store_end_run(s, "2024-01-02T04:00:00Z", o->fail ? "failed" : "completed",
		      o->fail ? "step 4.sweep3.1 (null) on volume xfs failed" : NULL, &err);
	store_close(s);
	int rc = err.len ? -1 : 0;
	if (rc)
		fprintf(stderr, "store fixture: %s\n", err.buf);
	sb_release(&path);
	sb_release(&err);
	sb_release(&plan);
	return rc;
}

double rfx_expected_mean(const struct fx_opts *o, int li, const char *volume)
{
	uint64_t st = o->seed ? o->seed : 1;
	int nl = o->dirs ? 1 : 2;
	double sum = 0;
	int n = 0;
	for (int l = 0; l < nl; l++)
		for (int rep = 1; rep <= o->reps; rep++)
			for (int k = 0; k < 8; k++)
				for (int vi = 0; vi < 2; vi++) {
					if (k <= 1) {
						double rate = rate_of(&st, vi + 1) * (k ? 1.1 : 1);
						if (k == 0 && l == li && !strcmp(vol_names[l][vi], volume)) {
							sum += rate;
							n++;
						}
						for (int f = 0; f < 4; f++)
							rnd(&st);
					} else {
						int last = o->fail && l == nl - 1 && rep == o->reps && k == 7 && vi == 1;
						if (!last) {
							rnd(&st);
							rnd(&st);
						}
					}
				}
	return n ? sum / n : 0;
}

int rfx_csv_parse(const char *t, char ****out)
{
	char ***rows = NULL;
	size_t nrows = 0;
	int bad = 0;
	while (*t) {
		char **fields = NULL;
		size_t nf = 0;
		for (;;) {
			struct strbuf f = STRBUF_INIT;
			if (*t == '"') {
				t++;
				for (;;) {
					if (!*t) {
						bad = 1;
						break;
					}
					if (*t == '"' && t[1] == '"') {
						sb_addch(&f, '"');
						t += 2;
					} else if (*t == '"') {
						t++;
						break;
					} else {
						sb_addch(&f, *t++);
					}
				}
				if (*t && *t != ',' && *t != '\n')
					bad = 1;
			} else {
				while (*t && *t != ',' && *t != '\n') {
					if (*t == '"' || *t == '\r')
						bad = 1;
					sb_addch(&f, *t++);
				}
			}
			fields = xrealloc(fields, (nf + 2) * sizeof(*fields));
			fields[nf++] = sb_detach(&f);
			fields[nf] = NULL;
			if (*t == ',') {
				t++;
				continue;
			}
			if (*t == '\n')
				t++;
			else
				bad = 1; /* every record ends with LF */
			break;
		}
		rows = xrealloc(rows, (nrows + 2) * sizeof(*rows));
		rows[nrows++] = fields;
		rows[nrows] = NULL;
		if (bad)
			break;
	}
	if (!rows) {
		rows = xcalloc(1, sizeof(*rows));
	}
	*out = rows;
	return bad ? -1 : 0;
}

void rfx_csv_free(char ***rows)
{
	for (size_t i = 0; rows && rows[i]; i++) {
		for (size_t j = 0; rows[i][j]; j++)
			free(rows[i][j]);
		free(rows[i]);
	}
	free(rows);
}

int rfx_run(const char *const *argv, char **out, char **err)
{
	int po[2], pe[2];
	if (pipe(po) < 0 || pipe(pe) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	struct strbuf so = STRBUF_INIT, se = STRBUF_INIT;
	struct pollfd pf[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	int open_fds = 2;
	while (open_fds) {
		if (poll(pf, 2, -1) < 0)
			break;
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			char buf[8192];
			ssize_t r = read(pf[i].fd, buf, sizeof(buf));
			if (r <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
				open_fds--;
			} else {
				sb_add(i ? &se : &so, buf, (size_t)r);
			}
		}
	}
	int status;
	if (waitpid(pid, &status, 0) < 0)
		status = -1;
	if (out)
		*out = sb_detach(&so);
	if (err)
		*err = sb_detach(&se);
	sb_release(&so);
	sb_release(&se);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int rfx_has_warning(const struct comparison *c, const char *text)
{
	for (size_t i = 0; i < c->nwarnings; i++)
		if (strstr(c->warnings[i], text))
			return 1;
	return 0;
}
