/*
 * reports/findings.c: the design of a run recognised from its store, and
 * the rows it gives. Stores are built here with the store API, one per
 * experiment kind, with values whose effects are known by construction
 * (a position 30% slower, no file-system effect; a rate falling along ten
 * positions, steeper after the seventh; enumeration slowing per cycle; a
 * fill sweep degrading from its fourth level, whose fill stopped short).
 * The models' numbers themselves are checked against statsmodels in
 * tests/model_test.c; here the rows' estimates are checked against the
 * values the data were built from, within the noise put in, and against
 * the model fitted directly where that is the point.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "report_util.h"
#include "reports/figure.h"
#include "reports/csv.h"
#include "reports/findings.h"
#include "reports/html_int.h"
#include "reports/model.h"
#include "reports/model_mixed.h"
#include "reports/report.h"
#include "reports/report_data.h"
#include "reports/summary.h"
#include "store/store.h"
#include "test.h"

struct fb {
	char *dir;
	struct store *s;
	struct strbuf err;
	uint32_t seq;
	uint64_t rng;
	struct rdata *d;
};

static double noise(struct fb *b)
{
	b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(b->rng >> 11) / 9007199254740992.0 - 0.5;
}

static void fb_begin(struct fb *b, const char *plan)
{
	memset(b, 0, sizeof(*b));
	b->dir = test_tmpdir();
	b->rng = 7;
	sb_init(&b->err);
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", b->dir);
	b->s = store_create(p.buf, &b->err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b->s);
	struct store_run r = { .id = "20261201T000000Z-findings", .plan_name = "findings",
			       .plan_file = "plan.yaml", .plan_text = plan, .plan_sha256 = "ab",
			       .seed = 1, .rig_version = "0.0.0-test", .host = "testhost",
			       .os = "Linux", .started_utc = "2026-12-01T00:00:00Z",
			       .platform = "linux", .argv = "rig run plan.yaml" };
	CU_ASSERT_EQUAL(store_begin_run(b->s, &r, &b->err), 0);
	sb_release(&p);
}

static int64_t fb_volume(struct fb *b, const char *layout, uint32_t li, const char *name,
			 const char *fs, uint32_t position, int offsets)
{
	struct store_volume v = { .layout = layout, .layout_index = li, .name = name, .fs = fs,
				  .position = position, .dir = "/mnt/x" };
	if (offsets) {
		v.has_offsets = 1;
		v.offset_start = (uint64_t)(position - 1) << 30;
		v.offset_end = (uint64_t)position << 30;
	}
	CU_ASSERT_EQUAL(store_add_volume(b->s, &v, &b->err), 0);
	return v.id;
}

/* A done cell with one sample (and a second when metric2 is not NULL). */
static void fb_cell(struct fb *b, const char *layout, uint32_t rep, const char *step,
		    const char *module, int64_t vol, uint32_t cycle, const char *sweep_value,
		    const char *metric, double value, const char *unit, const char *metric2,
		    double value2, const char *unit2)
{
	struct store_cell c = { .seq = ++b->seq, .phase = b->seq, .layout = layout, .rep = rep,
				.step = step, .module = module, .volume_id = vol, .cycle = cycle,
				.sweep_var = sweep_value ? "level" : NULL, .sweep_value = sweep_value };
	CU_ASSERT_EQUAL(store_cell_start(b->s, &c, "2026-12-01T00:00:01Z", &b->err), 0);
	store_add_sample(b->s, c.seq, metric, value, unit, "direct", &b->err);
	if (metric2)
		store_add_sample(b->s, c.seq, metric2, value2, unit2, "direct", &b->err);
	CU_ASSERT_EQUAL(store_cell_end(b->s, c.seq, "2026-12-01T00:00:02Z", "done", NULL, &b->err), 0);
}

/* End the run, load it and compute the findings. */
static struct rdata *fb_load(struct fb *b)
{
	store_end_run(b->s, "2026-12-01T00:01:00Z", "completed", NULL, &b->err);
	b->d = rep_rdata_load(b->s, &b->err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b->d);
	rep_summary_compute(b->d);
	rep_findings_compute(b->d);
	return b->d;
}

static void fb_end(struct fb *b)
{
	if (b->d)
		rep_rdata_free(b->d);
	store_close(b->s);
	test_rmtree(b->dir);
	free(b->dir);
	sb_release(&b->err);
}

static const struct rd_finding *row(const struct rdata *d, enum fnd_kind k, const char *groups)
{
	for (size_t i = 0; i < d->nfindings; i++)
		if (d->findings[i].kind == k && (!groups || !strcmp(d->findings[i].groups, groups)))
			return &d->findings[i];
	return NULL;
}

static void dump(const struct rdata *d)
{
	for (size_t i = 0; i < d->nfindings; i++)
		fprintf(stderr, "\n  [%s] %s: %g (%g..%g) p=%g %s | %s", rep_fnd_kind_name(d->findings[i].kind),
			d->findings[i].groups, d->findings[i].estimate, d->findings[i].ci_low,
			d->findings[i].ci_high, d->findings[i].p, d->findings[i].effect ? "effect" : "none",
			d->findings[i].sentence);
}

/* --- halves in both orders --- */

static const char halves_plan[] =
	"rig: 1\nname: findings\ntarget:\n  image: { path: /var/tmp/x.dmg, size: 2G }\n"
	"layouts:\n  - name: apfs-first\n    partitions:\n"
	"      - { name: APFS, fs: apfs, size: 50% }\n      - { name: HFS, fs: hfs+, size: rest }\n"
	"  - name: hfs-first\n    partitions:\n"
	"      - { name: HFS, fs: hfs+, size: 50% }\n      - { name: APFS, fs: apfs, size: rest }\n"
	"repeat: 3\nsteps:\n  - write: { files: 4, size: 8M }\nreport:\n  baseline: APFS\n"
	"  by: [layout, position]\n";

/* Position 2 is 30% slower than position 1 (160 and 112 MB/s); the file
 * system adds fs_pct percent; noise +-1%. each: every repetition on
 * volumes provisioned afresh (rows of their own); a provisioned volume's
 * placement adds up to +-unit_pct percent, the same for all its passes. */
static void halves_units(struct fb *b, double fs_pct, int reps, int each, double unit_pct)
{
	fb_begin(b, halves_plan);
	const char *lay[2] = { "apfs-first", "hfs-first" };
	const char *names[2][2] = { { "APFS", "HFS" }, { "HFS", "APFS" } };
	const char *fss[2][2] = { { "apfs", "hfs+" }, { "hfs+", "apfs" } };
	int64_t v[2][2];
	double place[2][2];
	for (uint32_t li = 0; li < 2; li++)
		for (uint32_t rep = 1; rep <= (uint32_t)reps; rep++) {
			for (uint32_t p = 0; p < 2 && (rep == 1 || each); p++) {
				v[li][p] = fb_volume(b, lay[li], li, names[li][p], fss[li][p], p + 1, 1);
				place[li][p] = 1 + 2 * unit_pct / 100 * noise(b);
			}
			for (int p = 0; p < 2; p++) {
				double rate = (p ? 112.0 : 160.0) * place[li][p] * (1 + 0.02 * noise(b));
				if (!strcmp(names[li][p], "HFS"))
					rate *= 1 + fs_pct / 100;
				fb_cell(b, lay[li], rep, "1", "write", v[li][p], 0, NULL, "rate", rate,
					"MB/s", NULL, 0, NULL);
			}
		}
}

static void halves(struct fb *b, double fs_pct, int reps)
{
	halves_units(b, fs_pct, reps, 0, 0);
}

/* The position and file-system rows fitted again here from the samples:
 * log rate on apfs/hfs+ (a), position (b), repetition (a block) with a
 * random intercept per volume (mixed), or each volume's mean on a and b. */
static void refit(const struct rdata *d, int mixed, struct model_est *pos, struct model_est *fs)
{
	size_t n = d->nsamples, p = mixed ? 5 : 3, nu = d->nvols;
	double *X = xcalloc(n * 5, sizeof(double)), *y = xcalloc(n, sizeof(double));
	uint32_t *g = xcalloc(n, sizeof(uint32_t));
	double *um = xcalloc(nu, sizeof(double)), *cnt = xcalloc(nu, sizeof(double));
	double *Xu = xcalloc(nu * 3, sizeof(double));
	for (size_t i = 0; i < n; i++) {
		const struct rd_cell *c = &d->cells[d->samples[i].cell];
		const struct rd_volume *v = &d->vols[c->vol];
		y[i] = log(d->samples[i].value);
		g[i] = c->vol;
		double row[5] = { 1, strcmp(v->fs, "apfs") != 0, v->position - 1, c->rep == 2,
				  c->rep == 3 };
		memcpy(X + i * p, row, p * sizeof(double));
		memcpy(Xu + c->vol * 3, row, 3 * sizeof(double));
		um[c->vol] += y[i];
		cnt[c->vol]++;
	}
	double cb[5] = { 0, 0, 1, 0, 0 }, ca[5] = { 0, 1, 0, 0, 0 };
	struct model_est e;
	if (mixed) {
		struct model_mixed m;
		CU_ASSERT_EQUAL_FATAL(rep_model_mixed_fit(X, y, g, n, p, nu, &m), 0);
		CU_ASSERT_FALSE(m.singular);
		rep_model_mixed_contrast(&m, cb, &e);
		rep_model_pct(&e, 1, NAN, pos);
		rep_model_mixed_contrast(&m, ca, &e);
		rep_model_pct(&e, 1, NAN, fs);
		rep_model_mixed_release(&m);
	} else {
		for (size_t j = 0; j < nu; j++)
			um[j] /= cnt[j];
		double coef[3], cov[9];
		struct model_ols f;
		CU_ASSERT_EQUAL_FATAL(rep_model_ols_fit(Xu, um, nu, 3, coef, cov, &f), 0);
		rep_model_ols_contrast(&f, cb, &e);
		rep_model_pct(&e, 1, NAN, pos);
		rep_model_ols_contrast(&f, ca, &e);
		rep_model_pct(&e, 1, NAN, fs);
	}
	free(X);
	free(y);
	free(g);
	free(um);
	free(cnt);
	free(Xu);
}

/* The halves' three rows (a fatal failure when one is missing); all rows
 * printed when the position has no effect or the file system one. */
static void halves_rows(const struct rdata *d, const struct rd_finding **pos,
			const struct rd_finding **fs, const struct rd_finding **ix)
{
	*pos = row(d, FND_POSITION, "position 2 vs position 1");
	*fs = row(d, FND_FILESYSTEM, "hfs+ vs apfs");
	*ix = row(d, FND_INTERACTION, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(*pos);
	CU_ASSERT_PTR_NOT_NULL_FATAL(*fs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(*ix);
	if (!(*pos)->effect || (*fs)->effect)
		dump(d);
}

static void test_halves_position_not_fs(void)
{
	struct fb b;
	halves(&b, 0, 3);
	struct rdata *d = fb_load(&b);
	const struct rd_finding *pos, *fs, *ix;
	halves_rows(d, &pos, &fs, &ix);
	CU_ASSERT_TRUE(pos->effect);
	CU_ASSERT_TRUE(fabs(pos->estimate + 30) < 1.5);
	CU_ASSERT_TRUE(pos->ci_low < pos->estimate && pos->estimate < pos->ci_high);
	CU_ASSERT_TRUE(pos->p < 0.05);
	CU_ASSERT_EQUAL(pos->n, 12);
	/* four provisioned volumes, one per file system and position */
	CU_ASSERT_EQUAL(pos->units, 4);
	CU_ASSERT_EQUAL(fs->units, 4);
	CU_ASSERT_PTR_NOT_NULL(strstr(pos->sentence, "It rests on 4 provisioned volumes"));
	CU_ASSERT_PTR_NOT_NULL(strstr(fs->sentence, "With one provisioned volume per file system "
					  "and position, this difference cannot be told apart from "
					  "where the files happened to land"));
	CU_ASSERT_STRING_EQUAL(pos->unit, "%");
	CU_ASSERT_FALSE(fs->effect);
	CU_ASSERT_TRUE(fs->ci_low < 0 && fs->ci_high > 0);
	CU_ASSERT_FALSE(ix->effect);
	CU_ASSERT_TRUE(pos->family && pos->family == fs->family && fs->family == ix->family);
	/* the strongest first, and its sentence names the factor */
	CU_ASSERT_EQUAL(d->findings[0].kind, FND_POSITION);
	CU_ASSERT_PTR_NOT_NULL(strstr(pos->sentence, "follows position, not the file system; position 1: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(fs->sentence, "no clear effect"));
	/* the rows are the model's: fitted again here on the same samples */
	int mixed = strstr(pos->sentence, "their means compared") == NULL;
	struct model_est ep, ef;
	refit(d, mixed, &ep, &ef);
	CU_ASSERT_DOUBLE_EQUAL(pos->estimate, ep.est, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(pos->ci_low, ep.lo, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(pos->p, ep.p, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(fs->estimate, ef.est, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(fs->ci_high, ef.hi, 1e-9);
	/* one volume per combination: the interaction has nothing to be tested against */
	CU_ASSERT_TRUE(isnan(ix->p));
	CU_ASSERT_PTR_NOT_NULL(strstr(ix->sentence, "one provisioned volume per combination"));
	fb_end(&b);
}

/* Provisioning replicated (provision: each, 3 repetitions: 12 volumes),
 * each volume's placement adding up to +-3%, no file-system effect: the
 * mixed model's rows, resting on 12 volumes, and no placement sentence. */
static void test_halves_replicated(void)
{
	struct fb b;
	halves_units(&b, 0, 3, 1, 3);
	struct rdata *d = fb_load(&b);
	const struct rd_finding *pos, *fs, *ix;
	halves_rows(d, &pos, &fs, &ix);
	CU_ASSERT_EQUAL(pos->units, 12);
	CU_ASSERT_TRUE(pos->effect);
	CU_ASSERT_FALSE(fs->effect);
	CU_ASSERT_PTR_NOT_NULL(strstr(pos->sentence, "It rests on 12 provisioned volumes."));
	CU_ASSERT_PTR_NULL(strstr(fs->sentence, "cannot be told apart"));
	struct model_est ep, ef;
	refit(d, 1, &ep, &ef);
	CU_ASSERT_DOUBLE_EQUAL(pos->estimate, ep.est, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(pos->ci_high, ep.hi, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(fs->p, ef.p, 1e-9);
	/* three volumes per combination: the interaction is tested on them */
	CU_ASSERT_FALSE(isnan(ix->p));
	fb_end(&b);
}

static void test_halves_fs_effect(void)
{
	struct fb b;
	halves(&b, -12, 3);
	struct rdata *d = fb_load(&b);
	const struct rd_finding *fs = row(d, FND_FILESYSTEM, "hfs+ vs apfs");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fs);
	CU_ASSERT_TRUE(fs->effect);
	CU_ASSERT_TRUE(fabs(fs->estimate + 12) < 1.5);
	const struct rd_finding *pos = row(d, FND_POSITION, "position 2 vs position 1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(pos);
	CU_ASSERT_PTR_NOT_NULL(strstr(pos->sentence, "depends on both position and the file system"));
	fb_end(&b);
}

/* One sample per combination: estimates, and the interaction is not testable. */
static void test_halves_one_rep(void)
{
	struct fb b;
	halves(&b, 0, 1);
	struct rdata *d = fb_load(&b);
	const struct rd_finding *ix = row(d, FND_INTERACTION, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix);
	CU_ASSERT_TRUE(isnan(ix->p));
	CU_ASSERT_FALSE(ix->effect);
	CU_ASSERT_PTR_NOT_NULL(strstr(ix->sentence, "not testable"));
	const struct rd_finding *pos = row(d, FND_POSITION, "position 2 vs position 1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(pos);
	CU_ASSERT_TRUE(fabs(pos->estimate + 30) < 2);
	fb_end(&b);
}

/* Where the files sit (files.csv's disk offsets): hfs+ puts its two files
 * in the first 3% of its volumes, apfs spreads them over 40%: the
 * file-system row says so. */
static void test_halves_placement(void)
{
	struct fb b;
	halves_units(&b, 0, 3, 1, 3);
	const char *names[2][2] = { { "APFS", "HFS" }, { "HFS", "APFS" } };
	uint64_t gib = 1ull << 30;
	for (uint32_t li = 0; li < 2; li++)
		for (uint32_t rep = 1; rep <= 3; rep++)
			for (uint32_t p = 0; p < 2; p++) {
				uint32_t seq = li * 6 + (rep - 1) * 2 + p + 1;
				uint64_t start = p * gib;
				double span = !strcmp(names[li][p], "HFS") ? 0.03 : 0.40;
				uint64_t at1[2] = { start, start + (uint64_t)(0.01 * (double)gib) };
				uint64_t at2[2] = { start + (uint64_t)((span - 0.01) * (double)gib),
						    start + (uint64_t)(span * (double)gib) };
				CU_ASSERT_EQUAL(store_add_file_sample_at(b.s, seq, "f0", 8 << 20, 0.05, at1,
									 &b.err), 0);
				CU_ASSERT_EQUAL(store_add_file_sample_at(b.s, seq, "f1", 8 << 20, 0.05, at2,
									 &b.err), 0);
			}
	struct rdata *d = fb_load(&b);
	const struct rd_finding *pos, *fs, *ix;
	halves_rows(d, &pos, &fs, &ix);
	CU_ASSERT_PTR_NOT_NULL(strstr(fs->sentence, "hfs+'s files sit between 0.0% and 3.0% of its "
					  "volumes, apfs's between 0.0% and 40.0%: part of the "
					  "difference may be placement."));
	if (!strstr(fs->sentence, "part of the difference may be placement"))
		dump(d);
	fb_end(&b);
}

/* --- ten positions --- */

static void ten(struct fb *b, int knee)
{
	fb_begin(b, "rig: 1\nname: findings\ntarget:\n  image: { path: /var/tmp/x.img, size: 4G }\n"
		    "layouts:\n  - name: tenths\n    partitions:\n"
		    "      - { count: 10, name: \"p{n}\", fs: ext4, size: 10% }\n"
		    "repeat: 3\nsteps:\n  - write: { files: 4, size: 8M }\n  - read: {}\n");
	int64_t v[10];
	char name[8];
	for (uint32_t p = 0; p < 10; p++) {
		snprintf(name, sizeof(name), "p%u", p + 1);
		v[p] = fb_volume(b, "tenths", 0, name, "ext4", p + 1, 1);
	}
	for (uint32_t rep = 1; rep <= 3; rep++)
		for (int st = 0; st < 2; st++)
			for (int p = 0; p < 10; p++) {
				double rate = 100 - 5 * p;
				if (knee && p > 6)
					rate -= 10 * (p - 6);
				rate *= (st ? 1.1 : 1) * (1 + 0.01 * noise(b));
				fb_cell(b, "tenths", rep, st ? "2" : "1", st ? "read" : "write", v[p], 0,
					NULL, "rate", rate, "MB/s", NULL, 0, NULL);
			}
}

static void test_ten_positions(void)
{
	struct fb b;
	ten(&b, 0);
	struct rdata *d = fb_load(&b);
	size_t npos = 0;
	for (size_t i = 0; i < d->nfindings; i++)
		npos += d->findings[i].kind == FND_POSITION;
	CU_ASSERT_EQUAL(npos, 2); /* write and read */
	const struct rd_finding *f = row(d, FND_POSITION, "position 10 vs position 1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	/* 100 -> 55 MB/s: -45% */
	CU_ASSERT_TRUE(fabs(f->estimate + 45) < 1.5);
	CU_ASSERT_TRUE(f->effect && f->ci_low < -45 + 3 && f->ci_high > -45 - 3);
	CU_ASSERT_PTR_NULL(strstr(f->sentence, "steepens"));
	CU_ASSERT_PTR_NOT_NULL(strstr(f->sentence, "rate falls by"));
	CU_ASSERT_FALSE(f->family);
	/* the line goes through the ten volumes' means, not the 30 passes */
	CU_ASSERT_EQUAL(f->units, 10);
	CU_ASSERT_EQUAL(f->n, 30);
	CU_ASSERT_PTR_NOT_NULL(strstr(f->sentence, "It rests on the means of 10 provisioned volumes."));
	double x[10], y[10] = { 0 };
	for (size_t i = 0; i < d->nsamples; i++) {
		const struct rd_cell *c = &d->cells[d->samples[i].cell];
		if (strcmp(c->module, "write"))
			continue;
		x[d->vols[c->vol].position - 1] = d->vols[c->vol].position;
		y[d->vols[c->vol].position - 1] += d->samples[i].value / 3;
	}
	struct model_trend tr;
	CU_ASSERT_EQUAL_FATAL(rep_model_trend_fit(x, y, 10, &tr), 0);
	const struct rd_finding *w = NULL;
	for (size_t i = 0; i < d->nfindings; i++)
		if (d->findings[i].kind == FND_POSITION && !strcmp(d->tmpls[d->findings[i].tmpl].module, "write"))
			w = &d->findings[i];
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_DOUBLE_EQUAL(w->estimate, tr.change_pct.est, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(w->ci_low, tr.change_pct.lo, 1e-9);
	fb_end(&b);
}

static void test_ten_positions_knee(void)
{
	struct fb b;
	ten(&b, 1);
	struct rdata *d = fb_load(&b);
	const struct rd_finding *f = row(d, FND_POSITION, "position 10 vs position 1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	if (!strstr(f->sentence, "steepens after position 7"))
		dump(d);
	CU_ASSERT_PTR_NOT_NULL(strstr(f->sentence, "the fall steepens after position 7"));
	fb_end(&b);
}

/* --- cycles --- */

static void cycles_store(struct fb *b, const char *headline)
{
	struct strbuf plan = STRBUF_INIT;
	sb_addf(&plan, "rig: 1\nname: findings\ntarget:\n  image: { path: /var/tmp/x.dmg, size: 2G }\n"
		       "layouts:\n  - name: halves\n    partitions:\n"
		       "      - { name: HFS, fs: hfs+, size: 50%% }\n      - { name: APFS, fs: apfs, size: rest }\n"
		       "repeat: 2\nsteps:\n  - tree: { files: 100 }\n  - cycle:\n      times: 5\n"
		       "      steps:\n        - enumerate: {}\n        - churn: { fraction: 5%% }\n"
		       "report:\n  baseline: HFS\n  by: [cycle]\n%s", headline);
	fb_begin(b, plan.buf);
	sb_release(&plan);
	int64_t hfs = fb_volume(b, "halves", 0, "HFS", "hfs+", 1, 1);
	int64_t apfs = fb_volume(b, "halves", 0, "APFS", "apfs", 2, 1);
	char step[32];
	for (uint32_t rep = 1; rep <= 2; rep++)
		for (uint32_t c = 1; c <= 5; c++) {
			snprintf(step, sizeof(step), "2.cycle%u.1", c);
			double sh = 1.0 * (1 + 0.05 * (c - 1)) * (1 + 0.01 * noise(b));
			double sa = 3.0 * (1 + 0.5 * (c - 1)) * (1 + 0.01 * noise(b));
			fb_cell(b, "halves", rep, step, "enumerate", hfs, c, NULL, "seconds", sh, "s",
				"entries_per_s", 1000 / sh, "entries/s");
			fb_cell(b, "halves", rep, step, "enumerate", apfs, c, NULL, "seconds", sa, "s",
				"entries_per_s", 1000 / sa, "entries/s");
		}
}

/* report.headline: entries per second instead, a rate: APFS falls behind. */
static void test_cycles_headline(void)
{
	struct fb b;
	cycles_store(&b, "  headline: { enumerate: entries_per_s }\n");
	struct rdata *d = fb_load(&b);
	CU_ASSERT_PTR_NULL(d->plan_problem);
	const struct rd_finding *ta = row(d, FND_TREND, "APFS");
	const struct rd_finding *r1 = row(d, FND_RATIO, "APFS / HFS at cycle 1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ta);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r1);
	CU_ASSERT_STRING_EQUAL(rd_str(d, ta->metric), "entries_per_s");
	CU_ASSERT_TRUE(ta->estimate < 0 && ta->effect);
	/* a third of HFS's rate is 3x slower, said as such */
	CU_ASSERT_TRUE(fabs(r1->estimate - 1 / 3.0) < 0.02);
	CU_ASSERT_PTR_NOT_NULL(strstr(r1->sentence, "at cycle 1 APFS is 3.0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r1->sentence, "slower than HFS"));
	fb_end(&b);
}

/* Occurrences of needle in [from, to). */
static size_t count_in(const char *from, const char *to, const char *needle)
{
	size_t n = 0;
	for (const char *p = from; (p = strstr(p, needle)) && p < to; p++)
		n++;
	return n;
}

/*
 * report.html's Findings of a cycles plan: sentences only for the rows
 * with an effect, every row once in its step's compact table (kind,
 * groups, estimate, interval, p, units, verdict), and the trends' times in
 * ms with the digits their intervals carry.
 */
static void test_cycles_table(void)
{
	struct fb b;
	cycles_store(&b, "");
	struct rdata *d = fb_load(&b);
	size_t effects = 0;
	for (size_t i = 0; i < d->nfindings; i++)
		effects += d->findings[i].effect;
	CU_ASSERT_TRUE(effects > 0); /* rows without one: tests/report_test.c's lead test */
	CU_ASSERT_EQUAL(rep_write(b.s, b.dir, &b.err), 0);
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/report.html", b.dir);
	char *html = test_read_file(p.buf, NULL);
	const char *sec = html ? strstr(html, "<h2 id=\"findings\">") : NULL;
	const char *end = sec ? strstr(sec + 1, "<h2 ") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(end);
	const char *list = strstr(sec, "<ul class=\"findings\">");
	const char *list_end = list ? strstr(list, "</ul>") : NULL;
	CU_ASSERT_TRUE(list && list_end && list_end < end);
	if (list && list_end) {
		CU_ASSERT_EQUAL(count_in(list, list_end, "<li>"), effects);
		CU_ASSERT_EQUAL(count_in(list, list_end, "no clear effect"), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(list, " ms per cycle (95% CI "));
	}
	/* every row in a table, with its verdict */
	CU_ASSERT_EQUAL(count_in(sec, end, "<tr><td>"), d->nfindings);
	CU_ASSERT_EQUAL(count_in(sec, end, "<span class=\"yes\">effect</span></td></tr>"), effects);
	CU_ASSERT_PTR_NOT_NULL(strstr(sec, "<caption>"));
	free(html);
	sb_release(&p);
	fb_end(&b);
}

static void test_cycles(void)
{
	struct fb b;
	cycles_store(&b, "");
	struct rdata *d = fb_load(&b);
	const struct rd_finding *ta = row(d, FND_TREND, "APFS"), *th = row(d, FND_TREND, "HFS");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ta);
	CU_ASSERT_PTR_NOT_NULL_FATAL(th);
	/* seconds by default for enumerate: +1.5 s per cycle on APFS */
	CU_ASSERT_STRING_EQUAL(rd_str(d, ta->metric), "seconds");
	CU_ASSERT_STRING_EQUAL(ta->unit, "s/cycle");
	CU_ASSERT_TRUE(fabs(ta->estimate - 1.5) < 0.05);
	CU_ASSERT_TRUE(ta->effect && ta->ci_low > 0);
	CU_ASSERT_TRUE(th->effect && fabs(th->estimate - 0.05) < 0.01);
	CU_ASSERT_PTR_NOT_NULL(strstr(ta->sentence, "APFS: seconds +1.5"));
	/* HFS's 50 ms a cycle in ms, the estimate and both bounds to the
	 * decimals its half-width has to two significant digits */
	const char *hs = strstr(th->sentence, "HFS: seconds +");
	CU_ASSERT_PTR_NOT_NULL_FATAL(hs);
	const char *ms = strstr(hs, " ms per cycle (95% CI "), *to = ms ? strstr(ms, " to ") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(to);
	double hw = (th->ci_high - th->ci_low) / 2 * 1e3;
	int want = 1 - (int)floor(log10(hw));
	want = want < 0 ? 0 : want;
	const char *nums[3] = { hs + strlen("HFS: seconds +"), ms + strlen(" ms per cycle (95% CI "),
				to + 4 };
	for (int i = 0; i < 3; i++) {
		size_t n = strspn(nums[i], "0123456789.");
		const char *dot = memchr(nums[i], '.', n);
		int dec = dot ? (int)(n - (size_t)(dot - nums[i]) - 1) : 0;
		CU_ASSERT_EQUAL(dec, want);
		if (dec != want)
			printf("\n%s: %d decimals, want %d\n", th->sentence, dec, want);
	}
	const struct rd_finding *r1 = row(d, FND_RATIO, "APFS / HFS at cycle 1");
	const struct rd_finding *r5 = row(d, FND_RATIO, "APFS / HFS at cycle 5");
	const struct rd_finding *ra = row(d, FND_RATIO, "APFS: cycle 5 / cycle 1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r5);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
	CU_ASSERT_TRUE(fabs(r1->estimate - 3.0) < 0.1);
	CU_ASSERT_TRUE(fabs(r5->estimate - 3.0 * 3 / 1.2) < 0.2);
	CU_ASSERT_TRUE(fabs(ra->estimate - 3.0) < 0.1);
	CU_ASSERT_STRING_EQUAL(r1->unit, "ratio");
	CU_ASSERT_TRUE(r1->effect && r1->ci_low > 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(r1->sentence, "at cycle 1 APFS is 3.01\xc3\x97 slower than HFS (95% CI 2.9"));
	/* one volume each (provisioned once): a trend and a volume's own ratio
	 * rest on it, a ratio between two volumes on both */
	CU_ASSERT_EQUAL(ta->units, 1);
	CU_ASSERT_EQUAL(ra->units, 1);
	CU_ASSERT_EQUAL(r1->units, 2);
	fb_end(&b);
}

/* --- sweeps --- */

static void sweep(struct fb *b, int reps)
{
	fb_begin(b, "rig: 1\nname: findings\ntarget:\n  image: { path: /var/tmp/x.dmg, size: 2G }\n"
		    "layouts:\n  - name: one\n    partitions:\n      - { name: Work, fs: hfs+, size: rest }\n"
		    "steps:\n  - sweep:\n      level: [90%, 92%, 94%, 96%, 98%, 99%]\n      steps:\n"
		    "        - fill: { to: $level }\n"
		    "        - randread: { block: 4K, qd: 32, span: 100M, time: 5s }\n"
		    "report:\n  by: [level]\n");
	int64_t v = fb_volume(b, "one", 0, "Work", "hfs+", 1, 1);
	const char *asked[] = { "90%", "92%", "94%", "96%", "98%", "99%" };
	const double reached[] = { 90.1, 92.0, 94.1, 96.2, 98.0, 98.3 };
	const double iops[] = { 1000, 1000, 995, 700, 500, 480 };
	char step[32];
	for (uint32_t rep = 1; rep <= (uint32_t)reps; rep++)
		for (int k = 0; k < 6; k++) {
			snprintf(step, sizeof(step), "1.sweep%d.1", k + 1);
			fb_cell(b, "one", rep, step, "fill", v, 0, asked[k], "level",
				reached[k] + 0.02 * rep, "%", "free", (100 - reached[k]) * 4e8, "B");
			snprintf(step, sizeof(step), "1.sweep%d.2", k + 1);
			fb_cell(b, "one", rep, step, "randread", v, 0, asked[k], "iops",
				iops[k] * (1 + 0.01 * noise(b)), "1/s", NULL, 0, NULL);
		}
}

static void test_sweep_onset(void)
{
	struct fb b;
	sweep(&b, 3);
	struct rdata *d = fb_load(&b);
	const struct rd_finding *f = NULL;
	for (size_t i = 0; i < d->nfindings; i++) {
		if (d->findings[i].kind == FND_ONSET &&
		    !strcmp(d->tmpls[d->findings[i].tmpl].module, "randread"))
			f = &d->findings[i];
		/* the fill step sets the level: no finding of its own */
		CU_ASSERT_STRING_NOT_EQUAL(d->tmpls[d->findings[i].tmpl].module, "fill");
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	if (!f->effect)
		dump(d);
	CU_ASSERT_TRUE(f->effect);
	/* the level reached at 96% asked: 96.2 + (0.02, 0.04, 0.06) */
	CU_ASSERT_DOUBLE_EQUAL(f->estimate, 96.24, 1e-9);
	CU_ASSERT_STRING_EQUAL(f->unit, "%");
	CU_ASSERT_PTR_NOT_NULL(strstr(f->sentence, "iops drops from level 96.24% reached (asked 96%)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(f->sentence, "free space left 1.52 GB"));
	/* every sweep group knows its level reached */
	for (size_t i = 0; i < d->ngroups; i++)
		if (d->groups[i].sweep_value && !strcmp(d->groups[i].sweep_value, "99%"))
			CU_ASSERT_DOUBLE_EQUAL(d->groups[i].reached, 98.34, 1e-9);
	fb_end(&b);
}

static void test_sweep_one_rep(void)
{
	struct fb b;
	sweep(&b, 1);
	struct rdata *d = fb_load(&b);
	const struct rd_finding *f = row(d, FND_ONSET, "Work: onset against level 90%");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_FALSE(f->effect);
	CU_ASSERT_TRUE(isnan(f->estimate));
	CU_ASSERT_PTR_NOT_NULL(strstr(f->sentence, "no onset can be established"));
	fb_end(&b);
}

/* The x axis of a step's figure against a sweep: sizes a factor of ten or
 * more apart on a log axis of bytes (4K to 256K on a linear axis crowd at
 * zero and their tick labels overlap); percentages on a linear one. */
static void test_sweep_axis(void)
{
	struct fb b;
	fb_begin(&b, "rig: 1\nname: findings\ntarget:\n  dirs: [/tmp/a]\n"
		     "steps:\n  - sweep:\n      level: [4K, 16K, 64K, 256K]\n      steps:\n"
		     "        - randread: { block: $level, qd: 8, span: 64M, time: 1s }\n");
	int64_t v = fb_volume(&b, "", 0, "a", "ext4", 1, 0);
	const char *sizes[] = { "4K", "16K", "64K", "256K" };
	char step[32];
	for (uint32_t rep = 1; rep <= 3; rep++)
		for (int k = 0; k < 4; k++) {
			snprintf(step, sizeof(step), "1.sweep%d.1", k + 1);
			fb_cell(&b, "", rep, step, "randread", v, 0, sizes[k], "iops",
				17000.0 / (k + 1) * (1 + 0.01 * noise(&b)), "1/s", NULL, 0, NULL);
		}
	struct rdata *d = fb_load(&b);
	struct figure f;
	struct strbuf cap = STRBUF_INIT, name = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(d->ntmpls, 1);
	CU_ASSERT_EQUAL_FATAL(rep_html_step_figure(d, 0, &f, &cap, &name), 0);
	CU_ASSERT_TRUE(f.xlog);
	CU_ASSERT_TRUE(f.xbytes);
	CU_ASSERT_STRING_EQUAL(f.xlabel, "level (log scale; 1 kB = 10\xc2\xb3 bytes)");
	rep_fig_release(&f);
	sb_release(&cap);
	sb_release(&name);
	fb_end(&b);

	/* Durations carry a unit too, but are not bytes. */
	fb_begin(&b, "rig: 1\nname: findings\ntarget:\n  dirs: [/tmp/a]\n"
		     "steps:\n  - sweep:\n      level: [1s, 10s, 100s]\n      steps:\n"
		     "        - randread: { time: $level }\n");
	v = fb_volume(&b, "", 0, "a", "ext4", 1, 0);
	const char *times[] = { "1s", "10s", "100s" };
	for (uint32_t rep = 1; rep <= 3; rep++)
		for (int k = 0; k < 3; k++) {
			snprintf(step, sizeof(step), "1.sweep%d.1", k + 1);
			fb_cell(&b, "", rep, step, "randread", v, 0, times[k], "iops",
				17000.0 * (1 + 0.01 * noise(&b)), "1/s", NULL, 0, NULL);
		}
	d = fb_load(&b);
	sb_init(&cap);
	sb_init(&name);
	CU_ASSERT_EQUAL_FATAL(rep_html_step_figure(d, 0, &f, &cap, &name), 0);
	CU_ASSERT_FALSE(f.xbytes);
	CU_ASSERT_FALSE(f.xlog);
	rep_fig_release(&f);
	sb_release(&cap);
	sb_release(&name);
	fb_end(&b);

	sweep(&b, 3); /* levels in percent */
	d = fb_load(&b);
	sb_init(&cap);
	sb_init(&name);
	int drawn = 0;
	for (uint32_t ti = 0; ti < d->ntmpls; ti++) {
		if (strcmp(d->tmpls[ti].module, "randread") || rep_html_step_figure(d, ti, &f, &cap, &name))
			continue;
		drawn = 1;
		CU_ASSERT_FALSE(f.xlog);
		CU_ASSERT_FALSE(f.xbytes);
		rep_fig_release(&f);
	}
	CU_ASSERT_TRUE(drawn);
	sb_release(&cap);
	sb_release(&name);
	fb_end(&b);
}

/* --- the fallback, and the CSV --- */

static void test_difference_and_csv(void)
{
	struct fx_opts o = { .dirs = 1, .reps = 3 };
	char *dir = test_tmpdir();
	CU_ASSERT_EQUAL_FATAL(rfx_make_store(dir, &o), 0);
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", dir);
	struct store *s = store_open(p.buf, 1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(rep_write(s, dir, &err), 0);
	store_close(s);
	sb_reset(&p);
	sb_addf(&p, "%s/findings.csv", dir);
	char *text = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	char ***rows = NULL;
	CU_ASSERT_EQUAL_FATAL(rfx_csv_parse(text, &rows), 0);
	struct strbuf header = STRBUF_INIT;
	rep_csv_add_header(&header, &rep_findings_table);
	CU_ASSERT_STRING_EQUAL(header.buf,
			       "step,metric,kind,groups,estimate,unit,ci_low,ci_high,p,n,verdict,sentence,units");
	/* the header as written is the one documented */
	CU_ASSERT_TRUE(!strncmp(text, header.buf, header.len) && text[header.len] == '\n');
	struct strbuf doc = STRBUF_INIT;
	sb_addf(&doc, "%s/docs/reports.md", test_src());
	char *md = test_read_file(doc.buf, NULL);
	CU_ASSERT_TRUE(md && strstr(md, header.buf));
	free(md);
	sb_release(&doc);
	sb_release(&header);
	size_t ncol = 0;
	while (rows[0][ncol])
		ncol++;
	CU_ASSERT_EQUAL(ncol, 13);
	int diff = 0;
	for (size_t r = 1; rows[r]; r++) {
		size_t nc = 0;
		while (rows[r][nc])
			nc++;
		CU_ASSERT_EQUAL(nc, 13);
		if (nc < 13)
			continue;
		CU_ASSERT_TRUE(!strcmp(rows[r][10], "effect") || !strcmp(rows[r][10], "no-clear-effect"));
		/* every row says how many volumes it rests on */
		CU_ASSERT_TRUE(atoi(rows[r][12]) >= 1);
		/* dirs have no positions: plain differences (and the cycle and sweep rows) */
		CU_ASSERT_TRUE(strcmp(rows[r][2], "position") && strcmp(rows[r][2], "filesystem"));
		if (!strcmp(rows[r][0], "1")) {
			diff++;
			CU_ASSERT_STRING_EQUAL(rows[r][2], "difference");
			CU_ASSERT_STRING_EQUAL(rows[r][5], "%");
			CU_ASSERT_STRING_EQUAL(rows[r][3], "xfs vs ext4");
			CU_ASSERT_STRING_EQUAL(rows[r][12], "2");
		}
	}
	CU_ASSERT_EQUAL(diff, 1);
	rfx_csv_free(rows);
	free(text);
	sb_release(&p);
	sb_release(&err);
	test_rmtree(dir);
	free(dir);
}

void register_findings_tests(void)
{
	CU_pSuite s = test_suite("findings: the design recognised, rows from the models");
	test_add(s, "halves in both orders: position, not file system", test_halves_position_not_fs);
	test_add(s, "halves with a file-system effect too", test_halves_fs_effect);
	test_add(s, "halves on provisioning replicated: the volumes as units", test_halves_replicated);
	test_add(s, "halves: where each file system put its files", test_halves_placement);
	test_add(s, "halves with one repetition: interaction not testable", test_halves_one_rep);
	test_add(s, "ten positions: first-to-last change", test_ten_positions);
	test_add(s, "ten positions: where the fall steepens", test_ten_positions_knee);
	test_add(s, "cycles: slope per cycle and ratios", test_cycles);
	test_add(s, "cycles in report.html: sentences for effects, every row in a table",
		 test_cycles_table);
	test_add(s, "cycles: report.headline chooses the metric", test_cycles_headline);
	test_add(s, "sweep: onset at the level reached", test_sweep_onset);
	test_add(s, "sweep with one repetition: no onset claimed", test_sweep_one_rep);
	test_add(s, "a sweep of sizes drawn on a log axis of bytes, of percentages on a linear one", test_sweep_axis);
	test_add(s, "dirs: plain differences; findings.csv", test_difference_and_csv);
}
