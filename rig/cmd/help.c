/*
 * rig help [TOPIC]: commands from the command table, modules from their
 * parameter and metric tables (so help cannot drift from what the parser
 * accepts), and a few topics of the plan language. The overview lists the
 * topics from the topic table; `plan-language` ends with the step list
 * generated from the module table (every module, its parameters and
 * defaults), and tests/run_test.c checks its top-level keys against the
 * parser's (plan_top_keys).
 */
#include <stdio.h>
#include <string.h>

#include "lib/strbuf.h"
#include "modules/module.h"
#include "rig/cmd/cmd.h"

static const struct {
	const char *name;
	const char *text;
} topics[] = {
	{ "plan-language",
	  "A plan is one YAML file (plan language version 1; docs/plan-language.md):\n"
	  "\n"
	  "  rig: 1                      the language version\n"
	  "  name: my-test               [a-z0-9][a-z0-9-]*, used in run folder names\n"
	  "  description: text           optional, shown in the report\n"
	  "  seed: 42                    optional; drawn at run time and recorded if absent\n"
	  "  target:                     exactly one of\n"
	  "    dirs: [/a, /b]            existing directories (no privileges needed)\n"
	  "    image: {path: /x.img, size: 20G, keep: false}\n"
	  "    disk: {device: disk4, confirm: \"MODEL or SERIAL\"}   the disk is ERASED\n"
	  "  layouts:                    with image/disk: partitions, from the start inwards\n"
	  "    - name: halves\n"
	  "      partitions:\n"
	  "        - {name: A, fs: ext4, size: 50%}\n"
	  "        - {count: 2, name: \"B{n}\", fs: xfs, size: 1G}\n"
	  "        - {name: C, fs: xfs, size: rest}\n"
	  "    - name: grown             macOS disk: keep the first partition, resize it\n"
	  "      partitions:             (it must be the one partition the layout before\n"
	  "        - {name: A, fs: apfs, size: 50%, keep: true}   left, or the disk's)\n"
	  "        - {name: H, fs: hfs+, size: rest}\n"
	  "  order: alternate            see 'rig help orders'\n"
	  "  repeat: 3                   repetitions of the step list in each layout, or\n"
	  "                              { times: 3, provision: each }: fresh file systems\n"
	  "                              every repetition (each a unit of the analysis)\n"
	  "  reprovision: layout         or repeat: the same as provision: each\n"
	  "  cache: {direct: true, flush: true, remount: false}   see 'rig help cache'\n"
	  "  steps:                      a list of module steps (below), cycle and sweep\n"
	  "    - write: {files: 8, sizes: 1M..32M}\n"
	  "    - cycle: {times: 3, steps: [{enumerate: {}}]}\n"
	  "    - sweep: {level: [90%, 95%], steps: [{fill: {to: $level}}]}\n"
	  "  report:\n"
	  "    title: T                  default: the plan's name\n"
	  "    baseline: A               a volume or layout; differences as % of it\n"
	  "    by: [layout, position]    factors the charts are drawn against\n"
	  "    formats: [html, csv]      any of html, csv, json\n"
	  "    headline:                 the metric a step's figures and findings use\n"
	  "      enumerate: seconds      by module, or by step path (2, 2.cycle.1)\n"
	  "      write: {metric: rate, better: higher}   default: lower for times\n"
	  "    compare: fs               or volume: what a crossed design compares\n"
	  "\n"
	  "\n"
	  "$name is a sweep's value, or where no sweep binds it the value of\n"
	  "--var name=VALUE (rig run, plan, validate): a whole module parameter or list\n"
	  "item, and the target's device, confirm, image path and size, e.g.\n"
	  "  disk: {device: $disk, confirm: $confirm}   rig run --var disk=/dev/sdb ...\n"
	  "Unknown keys are errors; every error names file:line:column.\n"
	  "Values: 'rig help units'. The whole language: docs/plan-language.md.\n" },
	{ "orders",
	  "Steps run phase by phase: each step runs on every volume before the next\n"
	  "starts. `order` decides the volumes' order inside each phase:\n"
	  "\n"
	  "  alternate       plan order in every phase and repetition\n"
	  "  counterbalance  plan order in odd repetitions, reversed in even ones (ABBA)\n"
	  "  latin           a balanced Latin square (Williams design) across repetitions:\n"
	  "                  n rows for an even number of volumes, 2n for an odd one;\n"
	  "                  use a multiple of that many repetitions for full balance\n"
	  "  random          a seeded shuffle for every phase\n"
	  "  sequential      no interleaving: all steps on the first volume, then the next\n"
	  "\n"
	  "`rig plan PLAN` prints the realized order without running anything.\n" },
	{ "units",
	  "Sizes:      512, 4K, 1M, 2G, 1T are powers of two (KiB, MiB, GiB, TiB);\n"
	  "            4KB, 1MB, 2GB, 1TB are powers of ten.\n"
	  "Percent:    50% (of the target for partitions, of capacity for fill).\n"
	  "Ranges:     2M..2G, a size per file drawn log-uniformly from the seed.\n"
	  "Sizes also: inverse-square(1K..20G) (density 1/x^2), or a list [1M, 4M].\n"
	  "Durations:  500ms, 10s, 5m, 1h.\n"
	  "Units are case-sensitive: 4k, mb, 4MiB are errors that suggest 4K, MB, 4M.\n"
	  "Rates are reported in MB/s = 10^6 bytes per second.\n" },
	{ "cache",
	  "cache:\n"
	  "  direct: true    O_DIRECT (Linux) / F_NOCACHE (macOS) on data files\n"
	  "  flush: true     before read steps: sync, then drop caches (Linux, root)\n"
	  "                  or purge (macOS, root)\n"
	  "  remount: false  before read steps: unmount and mount the volume again\n"
	  "                  (provisioned targets)\n"
	  "\n"
	  "What was actually applied (e.g. direct+drop_caches, or direct when not root)\n"
	  "is recorded in every result row; a method that cannot be applied is a\n"
	  "warning at start.\n" },
	{ "exit",
	  "Exit status: 0 ok; 1 the run failed or was interrupted (what was measured\n"
	  "is kept; `rig resume RUN` continues it; interrupted before its target was\n"
	  "prepared, it leaves no run folder); 2 bad usage, an invalid plan, or a run\n"
	  "refused before it started (its target in use by another run, ...).\n" },
};

#define NTOPICS (sizeof(topics) / sizeof(topics[0]))

static void help_overview(void)
{
	printf("usage: rig COMMAND [ARGS]\n\nrig runs storage experiments from a plan: it provisions\n"
	       "the target, measures every volume in a counterbalanced order, and writes\n"
	       "comparable reports.\n\ncommands (rig help COMMAND for its usage):\n");
	for (const struct rig_cmd *c = cmd_table; c->name; c++)
		printf("  %-10s %s\n", c->name, c->summary);
	printf("\nhelp topics: rig help TOPIC, one of\n  commands modules");
	for (size_t i = 0; i < NTOPICS; i++)
		printf(" %s", topics[i].name);
	printf("\n  or a module's name (rig help modules lists them)\n"
	       "first run:   rig run configs/quick.yaml\n");
}

/* Whether a parameter of p's group comes before p (it was shown then). */
static int group_seen(const struct rig_module *m, const struct rig_param *p)
{
	for (const struct rig_param *q = m->params; p->group && q != p; q++)
		if (q->group && !strcmp(q->group, p->group))
			return 1;
	return 0;
}

/* One module as a step of the short form: its parameters with their
 * defaults (or "required"), wrapped under the name. */
static void short_step(const struct rig_module *m)
{
	struct strbuf line = STRBUF_INIT;
	sb_addf(&line, "    - %s: {", m->name);
	size_t indent = line.len;
	int first = 1;
	for (const struct rig_param *p = m->params; p && p->name; p++) {
		if (group_seen(m, p))
			continue;
		struct strbuf one = STRBUF_INIT;
		for (const struct rig_param *q = p; q->name; q++) {
			if (q != p && (!p->group || !q->group || strcmp(p->group, q->group)))
				continue;
			sb_addf(&one, "%s%s: %s", one.len ? " | " : "", q->name,
				q->required ? "REQUIRED" : q->def ? q->def : "...");
			if (!p->group)
				break;
		}
		if (!first && line.len + one.len + 3 > 92) {
			printf("%s,\n", line.buf);
			sb_reset(&line);
			for (size_t i = 0; i < indent; i++)
				sb_addch(&line, ' ');
		} else if (!first) {
			sb_adds(&line, ", ");
		}
		sb_adds(&line, one.buf);
		first = 0;
		sb_release(&one);
	}
	printf("%s}\n", line.buf);
	sb_release(&line);
}

static void help_plan_language(const char *text)
{
	fputs(text, stdout);
	printf("\nModule steps, with every parameter's default ('rig help MODULE' for types,\n"
	       "bounds and metrics; a | b: give one or the other; ...: no default):\n");
	for (size_t i = 0; mod_all[i]; i++)
		short_step(mod_all[i]);
}

static void help_modules(void)
{
	printf("modules (each a step in a plan; 'rig help MODULE' for its parameters):\n");
	for (size_t i = 0; mod_all[i]; i++) {
		const struct rig_module *m = mod_all[i];
		printf("  %-10s %s%s\n", m->name, m->summary,
		       m->run ? "" : " [validates; not available in this build yet]");
	}
}

static void describe_bounds(struct strbuf *sb, const struct rig_param *p)
{
	if (p->min == 0 && p->max == 0 && !p->multiple)
		return;
	sb_adds(sb, " (");
	if (p->min != 0)
		sb_addf(sb, "min %.10g", p->min);
	if (p->max != 0)
		sb_addf(sb, "%smax %.10g", p->min != 0 ? ", " : "", p->max);
	if (p->min != 0 || p->max != 0) {
		switch (p->type) {
		case PT_SIZE: case PT_DIST: sb_adds(sb, " bytes"); break;
		case PT_DURATION: sb_adds(sb, " ns"); break;
		case PT_PERCENT: sb_adds(sb, " %"); break;
		default: break;
		}
	}
	if (p->multiple)
		sb_addf(sb, "%sa multiple of %llu bytes", p->min != 0 || p->max != 0 ? ", " : "",
			(unsigned long long)p->multiple);
	sb_adds(sb, ")");
}

static void help_module(const struct rig_module *m)
{
	printf("%s: %s\n\n%s\n", m->name, m->summary, m->help);
	if (!m->run)
		printf("\nNot available in this build yet: plans using it validate but do not run.\n");
	if (m->needs) {
		struct strbuf needs = STRBUF_INIT;
		mod_describe_needs(m, &needs);
		printf("\n%s\n", needs.buf);
		sb_release(&needs);
	}
	printf("\nparameters:\n");
	if (!m->params || !m->params[0].name)
		printf("  (none)\n");
	for (const struct rig_param *p = m->params; p && p->name; p++) {
		struct strbuf sb = STRBUF_INIT;
		sb_addf(&sb, "  %-9s %s", p->name, plan_params_type_name(p->type));
		if (p->choices) {
			sb_adds(&sb, ": ");
			for (size_t i = 0; p->choices[i]; i++)
				sb_addf(&sb, "%s%s", i ? ", " : "", p->choices[i]);
		}
		if (p->required)
			sb_adds(&sb, ", required");
		else if (p->def)
			sb_addf(&sb, ", default %s", p->def);
		describe_bounds(&sb, p);
		if (p->group) {
			for (const struct rig_param *q = m->params; q->name; q++)
				if (q != p && q->group && !strcmp(q->group, p->group))
					sb_addf(&sb, "; not with '%s'", q->name);
		}
		printf("%s\n            %s\n", sb.buf, p->help);
		sb_release(&sb);
	}
	printf("\nmetrics:\n");
	if (!m->metrics || !m->metrics[0].name)
		printf("  (none)\n");
	int settings = 0;
	for (const struct rig_metric *x = m->metrics; x && x->name; x++) {
		printf("  %-17s %-9s %s\n", x->name, x->unit, x->help);
		settings |= x->setting;
	}
	if (settings)
		printf("\nMetrics set by the plan are recorded, not measured: rig compare leaves them\n"
		       "out of its statistics.\n");
	if (m->headline.metric)
		printf("\nThe report's headline: %s, %s is better (report.headline chooses another).\n",
		       m->headline.metric, m->headline.better < 0 ? "lower" : "higher");
	else if (m->metrics && m->metrics[0].name)
		printf("\nThe report's headline: the first metric measured (report.headline chooses "
		       "another).\n");
}

int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		help_overview();
		return EXIT_OK;
	}
	const char *what = argv[1];
	if (!strcmp(what, "commands")) {
		help_overview();
		return EXIT_OK;
	}
	if (!strcmp(what, "modules")) {
		help_modules();
		return EXIT_OK;
	}
	const char *topic = NULL;
	for (size_t i = 0; i < NTOPICS; i++)
		if (!strcmp(topics[i].name, what))
			topic = topics[i].text;
	if (!strcmp(what, "plan-language")) {
		help_plan_language(topic);
		return EXIT_OK;
	}
	const struct rig_cmd *c = cmd_find(what);
	if (c) {
		fputs(c->usage, stdout);
		if (!strcmp(what, "plan"))
			printf("\nThe plan language in short: rig help plan-language\n");
		if (!strcmp(what, "help")) { /* the topics, from the table they are shown from */
			printf("\nTopics: commands, modules");
			for (size_t i = 0; i < NTOPICS; i++)
				printf(", %s", topics[i].name);
			printf(".\n");
		}
		return EXIT_OK;
	}
	const struct rig_module *m = mod_find(what);
	if (m) {
		help_module(m);
		return EXIT_OK;
	}
	if (topic) {
		fputs(topic, stdout);
		return EXIT_OK;
	}
	fprintf(stderr, "rig help: no help on '%s'; try 'rig help' for the list\n", what);
	return EXIT_USAGE;
}
