/*
 * The module table (modules/modules.c) and what each module declares
 * of itself in modules/module.h: its headline is one of the metrics it
 * records, with a direction; a module that sets the level records the
 * level; what it needs is in the table; a diskless module does no I/O and
 * keeps no state; and the headline table of docs/reports.md is the one the
 * structs give, so the documentation cannot drift from the code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "modules/module.h"
#include "test.h"

static const struct rig_metric *metric_of(const struct rig_module *m, const char *name)
{
	for (const struct rig_metric *x = m->metrics; x && x->name; x++)
		if (!strcmp(x->name, name))
			return x;
	return NULL;
}

static int in_table(const struct rig_module *m)
{
	for (size_t i = 0; mod_all[i]; i++)
		if (mod_all[i] == m)
			return 1;
	return 0;
}

static void test_table(void)
{
	size_t n = 0;
	for (size_t i = 0; mod_all[i]; i++, n++) {
		const struct rig_module *m = mod_all[i];
		CU_ASSERT_PTR_EQUAL(mod_find(m->name), m); /* names are unique */
		CU_ASSERT_PTR_NOT_NULL(m->summary);
		CU_ASSERT_PTR_NOT_NULL(m->help);
		CU_ASSERT_PTR_NOT_NULL(m->metrics);
	}
	CU_ASSERT_TRUE(n > 0);
	CU_ASSERT_PTR_NULL(mod_find("no-such-module"));
}

static void test_headline(void)
{
	size_t named = 0;
	for (size_t i = 0; mod_all[i]; i++) {
		const struct rig_module *m = mod_all[i];
		const struct module_headline *h = &m->headline;
		if (!h->metric) {
			/* the first metric measured: its unit gives the direction */
			CU_ASSERT_EQUAL(h->better, 0);
			continue;
		}
		named++;
		if (!metric_of(m, h->metric))
			fprintf(stderr, "\n%s: headline '%s' is not among its metrics\n", m->name,
				h->metric);
		CU_ASSERT_PTR_NOT_NULL(metric_of(m, h->metric));
		CU_ASSERT_TRUE(h->better == 1 || h->better == -1);
	}
	CU_ASSERT_TRUE(named > 0);
}

static void test_flags(void)
{
	size_t levels = 0, diskless = 0, leaves = 0, prepares = 0;
	for (size_t i = 0; mod_all[i]; i++) {
		const struct rig_module *m = mod_all[i];
		if (m->flags & MOD_SETS_LEVEL) {
			/* the reports read the level reached from these two */
			CU_ASSERT_PTR_NOT_NULL(metric_of(m, "level"));
			CU_ASSERT_PTR_NOT_NULL(metric_of(m, "free"));
			levels++;
		}
		if (m->flags & MOD_DISKLESS) {
			/* nothing on the volume: no data I/O, no state left for others */
			CU_ASSERT_EQUAL(m->kind, MOD_OTHER);
			CU_ASSERT_EQUAL(m->direct_io, 0);
			CU_ASSERT_PTR_NULL(m->needs);
			CU_ASSERT_PTR_NULL(m->release_state);
			diskless++;
		}
		if (m->flags & MOD_LEAVES_NEEDS) {
			/* it fills the slot of the module it needs, as that module does */
			CU_ASSERT_PTR_NOT_NULL_FATAL(m->needs);
			CU_ASSERT_PTR_EQUAL(m->release_state, m->needs->release_state);
			leaves++;
		}
		if (m->flags & MOD_DRY_RUNS) {
			/* rig plan runs it with a dry spawner: it must do nothing else
			 * (one that needs another, pack, runs there without that
			 * module's state, which no dry run builds) */
			CU_ASSERT_EQUAL(m->kind, MOD_OTHER);
			CU_ASSERT_EQUAL(m->direct_io, 0);
		}
		if (m->flags & MOD_PREPARES) {
			/* it leaves data on the volume for later steps; never a wait */
			CU_ASSERT_EQUAL(m->flags & MOD_DISKLESS, 0);
			CU_ASSERT_PTR_NOT_NULL(m->release_state);
			prepares++;
		}
		CU_ASSERT_EQUAL(m->flags & ~(unsigned)(MOD_DISKLESS | MOD_SETS_LEVEL | MOD_LEAVES_NEEDS |
						       MOD_SNAPSHOTS | MOD_DRY_RUNS | MOD_PREPARES), 0);
		/* A folder parameter: at most one, and one that works on or reads
		 * a folder needs a module that makes one. */
		size_t folders = 0;
		for (const struct rig_param *p = m->params; p && p->name; p++) {
			CU_ASSERT_EQUAL(p->type == PT_FOLDER, p->folder != FOLDER_NONE);
			if (p->type != PT_FOLDER)
				continue;
			folders++;
			CU_ASSERT_PTR_NULL(p->def);
			if (p->folder == FOLDER_WORKS || p->folder == FOLDER_READS) {
				CU_ASSERT_PTR_NOT_NULL_FATAL(m->needs);
				const struct rig_param *mk = mod_folder_param(m->needs, NULL);
				CU_ASSERT_TRUE(mk && mk->folder == FOLDER_MAKES);
			}
		}
		CU_ASSERT_TRUE(folders <= 1);
		if (m->needs) {
			/* one level: the needed module keeps the state slot itself */
			CU_ASSERT_TRUE(in_table(m->needs));
			CU_ASSERT_PTR_NULL(m->needs->needs);
			CU_ASSERT_PTR_NOT_EQUAL(m->needs, m);
		}
	}
	CU_ASSERT_TRUE(levels > 0);
	CU_ASSERT_TRUE(diskless > 0);
	CU_ASSERT_TRUE(leaves > 0);
	CU_ASSERT_TRUE(prepares > 0);
}

/* The table docs/reports.md must hold, built from the structs. */
static void headline_table(struct strbuf *sb)
{
	sb_adds(sb, "| module | headline | better |\n|---|---|---|\n");
	for (size_t i = 0; mod_all[i]; i++) {
		const struct rig_module *m = mod_all[i];
		if (m->headline.metric)
			sb_addf(sb, "| `%s` | `%s` | %s |\n", m->name, m->headline.metric,
				m->headline.better < 0 ? "lower" : "higher");
		else if (m->metrics[0].name || m->open_metrics)
			sb_addf(sb, "| `%s` | the first metric measured | by its unit |\n", m->name);
		else
			sb_addf(sb, "| `%s` | none: it records no metrics | |\n", m->name);
	}
}

static void test_docs(void)
{
	struct strbuf want = STRBUF_INIT, doc = STRBUF_INIT;
	headline_table(&want);
	sb_addf(&doc, "%s/docs/reports.md", test_src());
	char *md = test_read_file(doc.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(md);
	if (!strstr(md, want.buf))
		fprintf(stderr, "\ndocs/reports.md should have the headline table as the modules "
			"declare it:\n%s", want.buf);
	CU_ASSERT_PTR_NOT_NULL(strstr(md, want.buf));
	free(md);
	sb_release(&want);
	sb_release(&doc);
}

void register_module_tests(void)
{
	CU_pSuite s = test_suite("module table and abilities");
	test_add(s, "every module is found by its name", test_table);
	test_add(s, "a headline is one of the module's metrics, with a direction", test_headline);
	test_add(s, "flags: the level setter records level and free; diskless keeps nothing",
		 test_flags);
	test_add(s, "docs/reports.md has the headline table the modules declare", test_docs);
}
