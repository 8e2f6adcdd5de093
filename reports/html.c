/*
 * report.html: the page, its header and the provenance (see html.h); the
 * result sections are in html_step.c.
 *
 * The page opens with what a reader needs first: title, description, the
 * run's status (a failed or interrupted run says so in a red box before
 * anything else), and one sentence per step. Provenance follows: the plan
 * verbatim (folded), seed, versions, host, the disks and volumes with a
 * partition map drawn to scale, the cache methods actually applied, the
 * warnings, and the log of external commands with their output (folded).
 *
 * Facts rig did not record are shown as "not recorded", never guessed from
 * the machine that draws the report: `rig report` may run anywhere.
 */
#include "reports/html.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/schedule.h"
#include "reports/html_int.h"
#include "reports/report_out.h"

/* At most this much of one command's output goes into the page. */
#define MAX_OUTPUT 16384

static const char *run_note(const struct rdata *d, const char *key)
{
	for (size_t i = 0; i < d->nnotes; i++)
		if (!d->notes[i].seq && !strcmp(d->notes[i].key, key))
			return d->notes[i].value;
	return NULL;
}

/* Seconds between two ISO 8601 UTC times, NaN if either is not one. */
static double iso_diff(const char *a, const char *b)
{
	struct tm ta, tb;
	double fa = 0, fb = 0;
	if (!a || !b)
		return NAN;
	memset(&ta, 0, sizeof(ta));
	memset(&tb, 0, sizeof(tb));
	const char *ra = strptime(a, "%Y-%m-%dT%H:%M:%S", &ta);
	const char *rb = strptime(b, "%Y-%m-%dT%H:%M:%S", &tb);
	if (!ra || !rb)
		return NAN;
	if (*ra == '.')
		fa = strtod(ra, NULL);
	if (*rb == '.')
		fb = strtod(rb, NULL);
	return difftime(timegm(&tb), timegm(&ta)) + fb - fa;
}

static void fact(struct strbuf *h, const char *dt, const char *dd)
{
	sb_adds(h, "<dt>");
	sb_adds(h, dt);
	sb_adds(h, "</dt><dd>");
	if (dd && *dd)
		rep_html_text(h, dd);
	else
		sb_adds(h, "<span class=\"small\">not recorded</span>");
	sb_adds(h, "</dd>\n");
}

static void header(struct hctx *c, const struct rdata *d)
{
	struct strbuf *h = c->h;
	sb_adds(h, "<header>\n<h1>");
	rep_html_text(h, d->title);
	sb_adds(h, "</h1>\n<p class=\"meta\">Run <code>");
	rep_html_text(h, d->run.id);
	sb_adds(h, "</code> of plan <code>");
	rep_html_text(h, d->run.plan_name);
	sb_adds(h, "</code> &middot; ");
	rep_html_text(h, d->run.started_utc);
	if (d->run.ended_utc) {
		double s = iso_diff(d->run.started_utc, d->run.ended_utc);
		sb_adds(h, " &middot; ");
		if (isfinite(s))
			sb_addf(h, "%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
	}
	sb_adds(h, " &middot; ");
	rep_html_text(h, d->run.host);
	sb_adds(h, "</p>\n");
	if (d->description) {
		sb_adds(h, "<p class=\"desc\">");
		rep_html_text(h, d->description);
		sb_adds(h, "</p>\n");
	}
	if (d->fs_map) {
		sb_adds(h, "<p class=\"meta\">File systems were mapped by <code>--fs-map ");
		rep_html_text(h, d->fs_map);
		sb_adds(h, "</code>: each file system of the plan left of an <code>=</code> was made as "
			   "the one on its right, and the results name the file systems made.</p>\n");
	}
	sb_adds(h, "</header>\n");

	const char *st = d->run.status;
	if (strcmp(st, "completed")) {
		int running = !strcmp(st, "running");
		sb_adds(h, "<div class=\"banner\"><b>");
		if (running)
			sb_adds(h, d->run.ended_utc ? "This run did not end cleanly."
						    : "This run had not ended when this report was drawn, "
						      "or it crashed:");
		else if (!strcmp(st, "interrupted"))
			sb_adds(h, "This run was interrupted.");
		else
			sb_adds(h, "This run failed.");
		sb_adds(h, "</b> ");
		if (d->run.error) {
			rep_html_text(h, d->run.error);
			sb_adds(h, ". ");
		}
		sb_addf(h, "%zu of %zu cells did not complete; the results below are what was measured "
			   "before it stopped, and steps or repetitions may be missing.</div>\n",
			d->failed_cells, d->ncells);
	}
	if (d->nresumes) {
		/* Said where the results are read: the run did not go in one piece. */
		sb_addf(h, "<div class=\"banner warn\"><b>This run was resumed %zu time%s</b> "
			   "(<code>rig resume</code>): ", d->nresumes, d->nresumes > 1 ? "s" : "");
		for (size_t i = 0; i < d->nresumes; i++) {
			const struct rd_resume *r = &d->resumes[i];
			sb_adds(h, i ? "; " : "");
			rep_html_text(h, r->started_utc);
			sb_addf(h, ", from cell %u", r->from_seq);
			if (r->why) {
				sb_adds(h, " (");
				rep_html_text(h, r->why);
				sb_adds(h, ")");
			}
		}
		sb_addf(h, ". Every cell counts once, from its last attempt; %llu sample%s of "
			   "earlier attempts %s kept in results.db as superseded and not counted.</div>\n",
			(unsigned long long)d->superseded, d->superseded == 1 ? "" : "s",
			d->superseded == 1 ? "is" : "are");
	}
	if (d->plan_problem) {
		sb_adds(h, "<div class=\"banner warn\">");
		rep_html_text(h, d->plan_problem);
		sb_adds(h, "; the report uses its defaults (no baseline, bars per volume).</div>\n");
	}
	if (d->any_n1)
		sb_adds(h, "<div class=\"banner info\">Some results have a single sample (one repetition): "
			   "they have no confidence interval, no p-value and no drift check. Repeat the plan "
			   "(<code>repeat:</code>) for intervals.</div>\n");
	sb_adds(h, "<nav class=\"toc\"><a href=\"#findings\">Findings</a>");
	for (size_t i = 0; i < d->ntmpls; i++) {
		sb_addf(h, "<a href=\"#step-%s\">", d->tmpls[i].path);
		rep_html_text(h, d->tmpls[i].path);
		sb_adds(h, " ");
		rep_html_text(h, d->tmpls[i].module);
		sb_adds(h, "</a>");
	}
	sb_adds(h, "<a href=\"#order\">Order and drift</a><a href=\"#provenance\">Provenance</a>"
		   "<a href=\"#methods\">Methods</a></nav>\n");
}

/* Distinct disks (from the volumes' facts) with model, serial, bus. */
static void disks(struct strbuf *h, const struct rdata *d)
{
	const char *seen[32];
	size_t nseen = 0;
	int any = 0;
	for (size_t i = 0; i < d->nvols; i++) {
		const struct rd_volume *v = &d->vols[i];
		char *disk = rep_rd_fact(v, "disk");
		if (!disk)
			continue;
		size_t k = 0;
		while (k < nseen && strcmp(seen[k], disk))
			k++;
		if (k < nseen || nseen == 32) {
			free(disk);
			continue;
		}
		seen[nseen++] = rep_rd_strdup((struct rdata *)d, disk);
		if (!any++)
			sb_adds(h, "<h3>Disks</h3>\n<table>\n<thead><tr><th>device</th><th>target</th>"
				   "<th>model</th><th>serial</th><th>bus</th><th>medium</th>"
				   "<th class=\"num\">sector</th></tr></thead>\n<tbody>\n");
		const char *keys[] = { "target", "model", "serial", "bus" };
		sb_adds(h, "<tr><td>");
		rep_html_text(h, disk);
		sb_adds(h, "</td>");
		for (size_t j = 0; j < 4; j++) {
			char *val = rep_rd_fact(v, keys[j]);
			sb_adds(h, "<td>");
			if (val)
				rep_html_text(h, val);
			else
				sb_adds(h, "<span class=\"small\">not recorded</span>");
			sb_adds(h, "</td>");
			free(val);
		}
		char *rot = rep_rd_fact(v, "rotational"), *sec = rep_rd_fact(v, "sector_size");
		sb_addf(h, "<td>%s</td><td class=\"num\">%s</td></tr>\n",
			!rot ? "<span class=\"small\">not recorded</span>"
			     : !strcmp(rot, "true") ? "rotational (hard disk)" : "solid state",
			sec ? sec : "");
		free(rot);
		free(sec);
		free(disk);
	}
	if (any)
		sb_adds(h, "</tbody></table>\n");
}

/* Cache methods applied to each volume's samples: up to 8 ids per volume,
 * UINT32_MAX where unused; one pass over the samples. Caller frees. */
#define VCACHE 8
static uint32_t *volume_caches(const struct rdata *d)
{
	uint32_t *ids = xmalloc((d->nvols ? d->nvols : 1) * VCACHE * sizeof(*ids));
	memset(ids, 0xff, (d->nvols ? d->nvols : 1) * VCACHE * sizeof(*ids));
	for (size_t i = 0; i < d->nsamples; i++) {
		const struct rd_sample *s = &d->samples[i];
		uint32_t *v = &ids[(size_t)d->cells[s->cell].vol * VCACHE];
		for (size_t k = 0; k < VCACHE; k++) {
			if (v[k] == s->cache)
				break;
			if (v[k] == UINT32_MAX) {
				v[k] = s->cache;
				break;
			}
		}
	}
	return ids;
}

static void volumes(struct hctx *c, const struct rdata *d)
{
	struct strbuf *h = c->h;
	sb_adds(h, "<h3>Volumes</h3>\n<div class=\"wrap\"><table>\n<thead><tr>");
	if (d->nlayouts > 1 || (d->nvols && *d->vols[0].layout))
		sb_adds(h, "<th>layout</th>");
	sb_adds(h, "<th class=\"num\">pos.</th><th>volume</th><th>file system</th><th>device</th>"
		   "<th>directory</th><th class=\"num\">start</th><th class=\"num\">end</th>"
		   "<th class=\"num\">size</th><th>mount options</th><th>cache applied</th></tr></thead>\n<tbody>\n");
	int offsets = 0;
	uint32_t *caches = volume_caches(d);
	for (size_t i = 0; i < d->nvols; i++) {
		const struct rd_volume *v = &d->vols[i];
		sb_adds(h, "<tr>");
		if (d->nlayouts > 1 || *d->vols[0].layout) {
			sb_adds(h, "<td>");
			rep_html_text(h, v->layout);
			sb_adds(h, "</td>");
		}
		sb_addf(h, "<td class=\"num\">%d</td><td>", v->position);
		rep_html_text(h, v->name);
		sb_adds(h, "</td><td>");
		rep_html_text(h, v->fs ? v->fs : "unknown");
		char *kept = rep_rd_fact(v, "kept"), *from = rep_rd_fact(v, "kept_from");
		if (kept && !strcmp(kept, "true")) {
			/* keep: true: resized, not made; not a fresh file system */
			sb_adds(h, " <span class=\"small\">(kept from ");
			rep_html_text(h, from ? from : "an earlier layout");
			sb_adds(h, ", not a fresh file system)</span>");
		}
		free(kept);
		free(from);
		sb_adds(h, "</td><td>");
		rep_html_text(h, v->device);
		sb_adds(h, "</td><td class=\"small\">");
		rep_html_text(h, v->dir);
		sb_adds(h, "</td>");
		if (v->has_offsets) {
			offsets = 1;
			sb_adds(h, "<td class=\"num\">");
			rep_html_bytes(h, (double)v->off_start);
			sb_adds(h, "</td><td class=\"num\">");
			rep_html_bytes(h, (double)v->off_end);
			sb_adds(h, "</td><td class=\"num\">");
			rep_html_bytes(h, (double)(v->off_end - v->off_start));
			sb_adds(h, "</td>");
		} else {
			char *cap = rep_rd_fact(v, "capacity_bytes");
			sb_adds(h, "<td class=\"num\">&ndash;</td><td class=\"num\">&ndash;</td><td class=\"num\">");
			if (cap)
				rep_html_bytes(h, strtod(cap, NULL));
			sb_adds(h, "</td>");
			free(cap);
		}
		char *mo = rep_rd_fact(v, "mount_options");
		sb_adds(h, "<td class=\"small\">");
		rep_html_text(h, mo ? mo : "");
		free(mo);
		sb_adds(h, "</td><td class=\"small\">");
		for (size_t k = 0; k < VCACHE && caches[i * VCACHE + k] != UINT32_MAX; k++) {
			const char *m = rd_str(d, caches[i * VCACHE + k]);
			if (k)
				sb_adds(h, ", ");
			rep_html_text(h, *m ? m : "none");
		}
		sb_adds(h, "</td></tr>\n");
	}
	free(caches);
	sb_adds(h, "</tbody></table></div>\n");
	if (!offsets) {
		if (d->nvols)
			sb_adds(h, "<p class=\"small\">Directories of existing file systems (a <code>dirs</code> "
				   "target): no partitions were made, so there is no partition map; the size is "
				   "the file system's capacity.</p>\n");
		return;
	}
	struct figure f;
	memset(&f, 0, sizeof(f));
	f.kind = FIG_MAP;
	f.xlabel = "byte offset on the disk (1 GB = 10\xe2\x81\xb9 bytes)";
	for (size_t i = 0; i < d->nvols; i++) {
		const struct rd_volume *v = &d->vols[i];
		if (!v->has_offsets)
			continue;
		/* Reprovisioned layouts repeat: draw each layout once. */
		int dup = 0;
		for (size_t j = 0; j < i; j++)
			dup |= d->vols[j].layout == v->layout && d->vols[j].position == v->position;
		if (dup)
			continue;
		struct strbuf lab = STRBUF_INIT;
		sb_addf(&lab, "%d %s%s%s", v->position, v->name, v->fs ? " \xc2\xb7 " : "", v->fs ? v->fs : "");
		rep_fig_add_bar(&f, *v->layout ? v->layout : "disk", rep_rd_strdup((struct rdata *)d, lab.buf),
			    0, (double)v->off_start, (double)v->off_end, rep_html_style_of(d, v->name, v->layout));
		sb_release(&lab);
	}
	rep_html_figure(c, &f, "partition-map",
		 "Partition map to scale: each layout's partitions by byte offset, position 1 at the "
		 "start of the disk (the outer edge of a hard disk's platters).");
	rep_fig_release(&f);
}

static void commands(struct strbuf *h, const struct rdata *d)
{
	sb_addf(h, "<details><summary>External commands (%zu)</summary>\n", d->ncmds);
	if (!d->ncmds)
		sb_adds(h, "<p>rig ran no external commands for this run.</p>\n");
	for (size_t i = 0; i < d->ncmds; i++) {
		const struct rd_command *c = &d->cmds[i];
		sb_adds(h, "<p class=\"small\">");
		rep_html_text(h, c->start_utc);
		sb_addf(h, " &middot; exit status %s%d%s", c->status ? "<span class=\"yes\">" : "",
			c->status, c->status ? "</span>" : "");
		if (!isnan(c->seconds))
			sb_addf(h, " &middot; %.3f s", c->seconds);
		sb_adds(h, "</p>\n<pre>$ ");
		rep_html_text(h, c->argv);
		if (c->output && *c->output) {
			sb_addch(h, '\n');
			size_t n = strlen(c->output);
			rep_html_textn(h, c->output, n > MAX_OUTPUT ? MAX_OUTPUT : n);
			if (n > MAX_OUTPUT)
				sb_addf(h, "\n[%zu more bytes in commands.log]", n - MAX_OUTPUT);
		}
		sb_adds(h, "</pre>\n");
	}
	sb_adds(h, "</details>\n");
}

static void provenance(struct hctx *c, const struct rdata *d)
{
	struct strbuf *h = c->h;
	const struct rd_run *r = &d->run;
	sb_adds(h, "<h2 id=\"provenance\">Provenance</h2>\n<dl class=\"facts\">\n");
	fact(h, "run", r->id);
	fact(h, "status", r->status);
	if (r->error)
		fact(h, "error", r->error);
	fact(h, "plan", r->plan_file ? r->plan_file : r->plan_name);
	fact(h, "plan SHA-256", r->plan_sha256);
	struct strbuf tmp = STRBUF_INIT;
	sb_addf(&tmp, "%s (%s; %s)", r->seed ? r->seed : "?",
		r->seed_drawn ? "drawn at run time; rig run --seed repeats it" : "from the plan",
		r->seed_scheme == SEED_LAYOUT
			? "each layout drew its own workload: layouts differ in their data too"
			: "every layout the same workload at each repetition");
	fact(h, "seed", tmp.buf);
	if (d->plan && d->plan->target.kind != TARGET_DIRS) {
		sb_reset(&tmp);
		if (d->plan->reprovision == REPROVISION_REPEAT)
			sb_addf(&tmp, "afresh for every repetition (repeat: provision: each): each "
				      "repetition's volumes are units of their own");
		else
			sb_addf(&tmp, "once per layout: its %u repetition%s share where the file systems "
				      "put the files", d->plan->repeat, d->plan->repeat == 1 ? "" : "s");
		fact(h, "provisioning", tmp.buf);
	}
	fact(h, "rig version", r->rig_version);
	fact(h, "command line", r->argv);
	fact(h, "host", r->host);
	fact(h, "operating system", r->os);
	fact(h, "CPU", run_note(d, "cpu"));
	const char *mem = run_note(d, "memory_bytes");
	sb_reset(&tmp);
	if (mem) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%.1f GB", strtod(mem, NULL) / 1e9);
		sb_adds(&tmp, buf);
	}
	fact(h, "memory", mem ? tmp.buf : NULL);
	fact(h, "started (UTC)", r->started_utc);
	fact(h, "ended (UTC)", r->ended_utc);
	if (d->nresumes) {
		sb_reset(&tmp);
		for (size_t i = 0; i < d->nresumes; i++)
			sb_addf(&tmp, "%s%s (from cell %u, %s, %s)", i ? "; " : "",
				d->resumes[i].started_utc, d->resumes[i].from_seq,
				d->resumes[i].reprovisioned ? "provisioned afresh" : "provisioning kept",
				d->resumes[i].status);
		fact(h, "resumed (UTC)", tmp.buf);
	}
	if (d->plan) {
		const struct plan_cache *pc = &d->plan->cache;
		sb_reset(&tmp);
		sb_addf(&tmp, "direct %s, flush %s, remount %s (requested); what was applied is listed per "
			      "volume and per step", pc->direct ? "yes" : "no", pc->flush ? "yes" : "no",
			pc->remount ? "yes" : "no");
		fact(h, "cache", tmp.buf);
	}
	/* Other run-level notes, as recorded. */
	for (size_t i = 0; i < d->nnotes; i++) {
		const struct rd_note *n = &d->notes[i];
		if (n->seq || !strcmp(n->key, "cpu") || !strcmp(n->key, "memory_bytes"))
			continue;
		sb_reset(&tmp);
		rep_html_text(&tmp, n->key);
		fact(h, tmp.buf, n->value);
	}
	sb_release(&tmp);
	sb_adds(h, "</dl>\n");
	sb_adds(h, "<details><summary>The plan, exactly as run</summary>\n<pre>");
	rep_html_text(h, r->plan_text ? r->plan_text : "(not stored)");
	sb_adds(h, "</pre>\n</details>\n");
	disks(h, d);
	volumes(c, d);
	size_t warn = 0;
	for (size_t i = 0; i < d->nevents; i++)
		warn += strcmp(d->events[i].level, "info") != 0;
	sb_addf(h, "<details%s><summary>Events (%zu, %zu warnings or errors)</summary>\n<table>\n"
		   "<thead><tr><th>UTC</th><th>level</th><th>message</th></tr></thead>\n<tbody>\n",
		warn ? " open" : "", d->nevents, warn);
	for (size_t i = 0; i < d->nevents; i++) {
		const struct rd_event *e = &d->events[i];
		int bad = strcmp(e->level, "info") != 0;
		sb_adds(h, "<tr><td class=\"small\">");
		rep_html_text(h, e->utc);
		sb_addf(h, "</td><td>%s", bad ? "<span class=\"yes\">" : "");
		rep_html_text(h, e->level);
		sb_addf(h, "%s</td><td>", bad ? "</span>" : "");
		rep_html_text(h, e->msg);
		sb_adds(h, "</td></tr>\n");
	}
	sb_adds(h, "</tbody></table>\n</details>\n");
	commands(h, d);
}

static void methods(struct hctx *c, const struct rdata *d)
{
	struct strbuf *h = c->h;
	sb_adds(h, "<h2 id=\"methods\">Methods</h2>\n<p class=\"small\">Statistics per group (one "
		   "metric of one step on one volume of one layout, and one cycle or sweep value, over "
		   "the repetitions): n, mean, sample standard deviation, median, minimum, maximum and "
		   "the 95% confidence interval of the mean from Student's t with n&minus;1 degrees of "
		   "freedom. Differences from the baseline are percentages of the baseline's mean; their "
		   "95% interval is Fieller's interval for a ratio of independent means (t at the "
		   "Welch&ndash;Satterthwaite degrees of freedom), and p is Welch's two-sided t-test. "
		   "Outliers have a modified z-score (0.6745 &times; deviation from the median / median "
		   "absolute deviation) above 3.5 in absolute value; they are flagged, never dropped. "
		   "Drift is the least-squares slope of a group's results against the sequence number, "
		   "flagged when its 95% interval excludes 0. File sets of 5 or more timed files are "
		   "fitted by least squares as time = intercept + size / rate, the intercept (a "
		   "per-file overhead when above 0) with its 95% interval from Student's t with "
		   "files&minus;2 degrees of freedom. Findings (<code>findings.csv</code>): where each "
		   "file system (or volume) sat at two or more positions on the disk, the model "
		   "log(metric) = file system + position + repetition + a random intercept per "
		   "provisioned volume is fitted by REML (the passes over one volume share where its "
		   "files are: the volumes are the units; where their spread cannot be estimated, "
		   "each volume's mean is fitted by least squares instead), and each effect is "
		   "100&nbsp;(e<sup>coefficient</sup>&nbsp;&minus;&nbsp;1)% with its 95% "
		   "interval and t-test at Satterthwaite's degrees of freedom; the interaction is the "
		   "F-test, on the volumes' means, of that model against one mean per combination. "
		   "Three or more positions on one file system: a straight line through the volumes' "
		   "means against position, the change from the first position to the last as a percentage of "
		   "the fitted first value with Fieller's interval, and the position after which a "
		   "two-segment line falls significantly faster. Cycles: the least-squares slope per "
		   "cycle, and ratios of means (last cycle to first, one volume to another) with "
		   "Fieller's interval. Sweeps: the onset is the first level whose interval lies "
		   "wholly beyond the first level's, in the direction of degradation, named by the "
		   "level a fill step reached. Throughput is in MB/s = 10<sup>6</sup> bytes per "
		   "second. Every sample is in <code>results.csv</code>, every statistic in "
		   "<code>summary.csv</code> and <code>results.json</code>. Drawn by rig " RIG_VERSION
		   ".</p>\n");
	rep_html_time(c, d);
}

/* The page as text, figures inline only. */
static void html_render(struct rdata *d, const char *fig_dir, struct strbuf *out, struct strbuf *err)
{
	struct hctx c = { .h = out, .fig_dir = fig_dir, .err = err };
	rep_html_begin(out, d->title);
	header(&c, d);
	rep_html_findings(&c, d);
	rep_html_steps(&c, d);
	rep_html_order(&c, d);
	provenance(&c, d);
	methods(&c, d);
	rep_html_end(out);
}

int rep_html_write_report(struct rdata *d, const char *run_dir, struct strbuf *err)
{
	struct strbuf dir = STRBUF_INIT, page = STRBUF_INIT, path = STRBUF_INIT, ferr = STRBUF_INIT;
	sb_addf(&dir, "%s/figures", run_dir);
	int rc = 0;
	if (mkdir(dir.buf, 0777) < 0 && errno != EEXIST) {
		rc = -errno;
		sb_addf(err, "cannot create %s: %s", dir.buf, strerror(errno));
		goto out;
	}
	html_render(d, dir.buf, &page, &ferr);
	if (ferr.len) {
		sb_adds(err, ferr.buf);
		rc = -EIO;
		goto out;
	}
	sb_addf(&path, "%s/report.html", run_dir);
	rc = rep_rout_write_file(path.buf, page.buf, page.len, err);
out:
	sb_release(&dir);
	sb_release(&page);
	sb_release(&path);
	sb_release(&ferr);
	return rc;
}
