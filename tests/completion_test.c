/*
 * The shell completions (completions/rig.bash, completions/_rig) against rig
 * itself, so they cannot go stale: every command `rig help` lists has, in
 * both scripts, exactly the options `rig help COMMAND` prints, and the bash
 * script knows which of them take an argument. A bash session the test
 * drives (COMP_WORDS, COMP_CWORD, _rig, COMPREPLY) completes commands,
 * options, option arguments, plan files, run folders and the module names
 * and topics after `rig help`, in a folder the test lays out. Both scripts
 * pass their shell's syntax check (zsh's when zsh is installed: ./setup
 * installs it). The zsh script is checked as text here: driving zsh's
 * completion takes a pseudo-terminal (docs/testing.md says how it was
 * tried by hand).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "provision_util.h"
#include "test.h"

#define MAX_WORDS 64

struct words {
	char *v[MAX_WORDS];
	size_t n;
};

static void words_add(struct words *w, const char *s, size_t len)
{
	if (w->n == MAX_WORDS) {
		CU_FAIL("more than MAX_WORDS words");
		return;
	}
	w->v[w->n++] = strndup(s, len);
}

static void words_release(struct words *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i]);
	w->n = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The words sorted, one a line: what the checks compare. */
static char *words_text(struct words *w)
{
	struct strbuf sb = STRBUF_INIT;
	qsort(w->v, w->n, sizeof(w->v[0]), cmp_str);
	for (size_t i = 0; i < w->n; i++)
		sb_addf(&sb, "%s\n", w->v[i]);
	return sb_detach(&sb);
}

static int has_word(const struct words *w, const char *s)
{
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->v[i], s))
			return 1;
	return 0;
}

static char *rig_help(const char *what)
{
	const char *args[] = { "help", what, NULL };
	char *out = NULL;
	int rc = test_run_rig(args, &out);
	CU_ASSERT_EQUAL(rc, 0);
	return out;
}

/* The first words of the indented lines of the block of text that starts
 * with a line beginning with start ("commands", "modules"). */
static void help_block(const char *text, const char *start, struct words *w)
{
	const char *p = text;
	size_t sl = strlen(start);
	while (p && *p && strncmp(p, start, sl)) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	for (p = strchr(p, '\n'); p && p[1] == ' ' && p[2] == ' ' && p[3] >= 'a' && p[3] <= 'z';
	     p = strchr(p + 1, '\n'))
		words_add(w, p + 3, strcspn(p + 3, " \n"));
}

static void rig_commands(struct words *w)
{
	const char *args[] = { "help", NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 0);
	help_block(out, "commands", w);
	free(out);
	CU_ASSERT_TRUE_FATAL(w->n >= 9);
}

/*
 * The options of `rig help CMD`: lines "  -o, --output DIR   text" and
 * "      --runs DIR   text". Those followed by an upper-case word take an
 * argument and go to with_arg too.
 */
static void help_options(const char *cmd, struct words *all, struct words *with_arg)
{
	char *out = rig_help(cmd);
	for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *p;
		if (!strncmp(line, "  -", 3) && line[3] != '-' && line[4] == ',') {
			words_add(all, line + 2, 2);
			p = line + 6;
		} else if (!strncmp(line, "      --", 8)) {
			p = line + 6;
		} else {
			continue;
		}
		if (strncmp(p, "--", 2))
			continue;
		size_t n = strcspn(p, " \n");
		words_add(all, p, n);
		if (p[n] == ' ' && p[n + 1] >= 'A' && p[n + 1] <= 'Z') {
			if (line[4] == ',')
				words_add(with_arg, line + 2, 2);
			words_add(with_arg, p, n);
		}
	}
	free(out);
}

static char *src_path(const char *rel)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/%s", test_src(), rel);
	return sb_detach(&sb);
}

/* What the bash completion offers for the command line words (NULL-ended;
 * the last is the word being completed; the first, rig, stands for the rig
 * under test), in folder dir. */
static void bash_complete(const char *dir, const char *const *words, struct words *got)
{
	char *script = src_path("completions/rig.bash");
	const char *argv[MAX_WORDS + 8] = {
		"bash", "--norc", "--noprofile", "-c",
		"cd \"$1\" && source \"$2\" && shift 2 && COMP_WORDS=(\"$@\") && "
		"COMP_CWORD=$(($# - 1)) && _rig && printf '%s\\n' \"${COMPREPLY[@]}\"",
		"bash", dir, script, test_rig_bin(),
	};
	size_t n = 9;
	for (size_t i = 1; words[i] && n < MAX_WORDS + 7; i++)
		argv[n++] = words[i];
	argv[n] = NULL;
	char *out = NULL;
	int rc = pt_cmd(argv, &out);
	if (rc != 0)
		fprintf(stderr, "\ncompletion failed (%d): %s\n", rc, out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	for (const char *p = out; p && *p;) {
		size_t len = strcspn(p, "\n");
		if (len)
			words_add(got, p, len);
		p += len + (p[len] == '\n');
	}
	free(out);
	free(script);
}

/* A folder to complete in: a plan, a text file, a folder, and runs/ with
 * two runs (folders holding a results.db). */
static char *layout(void)
{
	char *dir = test_tmpdir();
	struct strbuf p = STRBUF_INIT;
	const char *files[] = { "p.yaml", "q.yml", "x.txt", "runs/r1/results.db",
				"runs/r2/results.db", NULL };
	const char *dirs[] = { "other", "runs", "runs/r1", "runs/r2", NULL };
	for (size_t i = 0; dirs[i]; i++) {
		sb_reset(&p);
		sb_addf(&p, "%s/%s", dir, dirs[i]);
		CU_ASSERT_EQUAL(mkdir(p.buf, 0755), 0);
	}
	for (size_t i = 0; files[i]; i++) {
		sb_reset(&p);
		sb_addf(&p, "%s/%s", dir, files[i]);
		CU_ASSERT_EQUAL(test_write_file(p.buf, ""), 0);
	}
	sb_release(&p);
	return dir;
}

static void test_syntax(void)
{
	char *bash = src_path("completions/rig.bash"), *zsh = src_path("completions/_rig");
	const char *b[] = { "bash", "-n", bash, NULL };
	char *out = NULL;
	int rc = pt_cmd(b, &out);
	if (rc != 0)
		fprintf(stderr, "\nbash -n: %s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	free(out);
	const char *w[] = { "sh", "-c", "command -v zsh", NULL };
	if (pt_cmd(w, NULL) != 0) {
		printf("\n  SKIPPED zsh -n: zsh is not installed (./setup installs it)\n");
	} else {
		const char *z[] = { "zsh", "-n", zsh, NULL };
		rc = pt_cmd(z, &out);
		if (rc != 0)
			fprintf(stderr, "\nzsh -n: %s\n", out ? out : "");
		CU_ASSERT_EQUAL(rc, 0);
		free(out);
	}
	free(bash);
	free(zsh);
}

/* The options a shell's completion offers for rig CMD (got, released here;
 * a word may come twice) are those `rig help CMD` prints; returns how many
 * that is. */
static size_t check_options(const char *shell, const char *cmd, struct words *got)
{
	struct words want = { .n = 0 }, arg = { .n = 0 }, uniq = { .n = 0 };
	help_options(cmd, &want, &arg);
	for (size_t k = 0; k < got->n; k++)
		if (!has_word(&uniq, got->v[k]))
			words_add(&uniq, got->v[k], strlen(got->v[k]));
	char *w = words_text(&want), *g = words_text(&uniq);
	struct strbuf what = STRBUF_INIT;
	sb_addf(&what, "%s: options of rig %s (rig help %s)", shell, cmd, cmd);
	pt_eq_text(what.buf, g, w);
	sb_release(&what);
	free(w);
	free(g);
	size_t n = want.n;
	words_release(&want);
	words_release(&arg);
	words_release(&uniq);
	words_release(got);
	return n;
}

/* `rig CMD -<TAB>` offers exactly the options `rig help CMD` prints. */
static void test_bash_options(void)
{
	struct words cmds = { .n = 0 };
	rig_commands(&cmds);
	char *dir = test_tmpdir();
	size_t options = 0;
	for (size_t i = 0; i < cmds.n; i++) {
		struct words got = { .n = 0 };
		const char *line[] = { "rig", cmds.v[i], "-", NULL };
		bash_complete(dir, line, &got);
		options += check_options("bash", cmds.v[i], &got);
	}
	/* The parse of the help text found the options at all. */
	CU_ASSERT_TRUE(options >= 25);
	test_rmtree(dir);
	free(dir);
	words_release(&cmds);
}

/*
 * After an option that takes an argument the completion is the argument's
 * (a folder, a platform, rules, or nothing), not the command's own
 * (plans, runs); after one that does not, it is the command's.
 */
static void test_bash_option_arguments(void)
{
	struct words cmds = { .n = 0 };
	rig_commands(&cmds);
	char *dir = layout();
	for (size_t i = 0; i < cmds.n; i++) {
		struct words opts = { .n = 0 }, arg = { .n = 0 }, own = { .n = 0 };
		help_options(cmds.v[i], &opts, &arg);
		const char *plain[] = { "rig", cmds.v[i], "", NULL };
		bash_complete(dir, plain, &own);
		char *o = words_text(&own);
		for (size_t k = 0; k < opts.n; k++) {
			struct words after = { .n = 0 };
			const char *line[] = { "rig", cmds.v[i], opts.v[k], "", NULL };
			bash_complete(dir, line, &after);
			char *a = words_text(&after);
			int takes = has_word(&arg, opts.v[k]);
			if (takes == !strcmp(a, o))
				fprintf(stderr, "\nrig %s %s <TAB>: %s argument, yet offers\n%s(rig %s <TAB>:\n%s)\n",
					cmds.v[i], opts.v[k], takes ? "takes an" : "takes no", a, cmds.v[i], o);
			CU_ASSERT_NOT_EQUAL(takes, !strcmp(a, o));
			free(a);
			words_release(&after);
		}
		free(o);
		words_release(&opts);
		words_release(&arg);
		words_release(&own);
	}
	test_rmtree(dir);
	free(dir);
	words_release(&cmds);
}

/* Completes line (NULL-ended) in dir and compares with want (sorted words,
 * one a line). */
static void expect(const char *dir, const char *const *line, const char *want)
{
	struct words got = { .n = 0 };
	bash_complete(dir, line, &got);
	char *g = words_text(&got);
	struct strbuf what = STRBUF_INIT;
	sb_adds(&what, "bash: rig");
	for (size_t i = 1; line[i]; i++)
		sb_addf(&what, " %s", line[i]);
	sb_adds(&what, "<TAB>");
	pt_eq_text(what.buf, g, want);
	sb_release(&what);
	free(g);
	words_release(&got);
}

static void test_bash_words(void)
{
	char *dir = layout();
	expect(dir, (const char *[]){ "rig", "ru", NULL }, "run\n");
	expect(dir, (const char *[]){ "rig", "re", NULL }, "report\nresume\n");
	expect(dir, (const char *[]){ "rig", "--v", NULL }, "--version\n");
	expect(dir, (const char *[]){ "rig", "run", "--pl", NULL }, "--platform\n");
	expect(dir, (const char *[]){ "rig", "run", "--platform", "", NULL }, "linux\nmacos\n");
	expect(dir, (const char *[]){ "rig", "resume", "--allow", "loop,v", NULL }, "loop,virtual\n");
	/* --platform=m, as bash splits it (= is in COMP_WORDBREAKS). */
	expect(dir, (const char *[]){ "rig", "plan", "--platform", "=", "m", NULL }, "macos\n");
	expect(dir, (const char *[]){ "rig", "plan", "--platform", "=", NULL }, "linux\nmacos\n");
	/* Plans: *.yaml and *.yml files and the folders to find them in. */
	expect(dir, (const char *[]){ "rig", "run", "", NULL }, "other\np.yaml\nq.yml\nruns\n");
	expect(dir, (const char *[]){ "rig", "validate", "p.yaml", "", NULL },
	       "other\np.yaml\nq.yml\nruns\n");
	/* Runs: folders holding a results.db, or runs. */
	expect(dir, (const char *[]){ "rig", "report", "", NULL }, "runs\n");
	expect(dir, (const char *[]){ "rig", "compare", "runs/", NULL }, "runs/r1\nruns/r2\n");
	expect(dir, (const char *[]){ "rig", "resume", "-y", "runs/r", NULL }, "runs/r1\nruns/r2\n");
	expect(dir, (const char *[]){ "rig", "compare", "-o", "", NULL }, "other\nruns\n");
	/* rig help: commands, modules (from `rig help modules`) and topics. */
	struct words mods = { .n = 0 }, ra = { .n = 0 }, cmds = { .n = 0 }, all = { .n = 0 };
	char *text = rig_help("modules");
	help_block(text, "modules", &mods);
	free(text);
	CU_ASSERT_TRUE(mods.n >= 10);
	for (size_t i = 0; i < mods.n; i++)
		if (!strncmp(mods.v[i], "ra", 2))
			words_add(&ra, mods.v[i], strlen(mods.v[i]));
	CU_ASSERT_TRUE(ra.n >= 1);
	char *want = words_text(&ra);
	expect(dir, (const char *[]){ "rig", "help", "ra", NULL }, want);
	free(want);
	bash_complete(dir, (const char *[]){ "rig", "help", "", NULL }, &all);
	rig_commands(&cmds);
	for (size_t i = 0; i < cmds.n; i++)
		if (!has_word(&all, cmds.v[i]))
			fprintf(stderr, "\nrig help <TAB> lacks the command %s\n", cmds.v[i]);
	for (size_t i = 0; i < mods.n; i++)
		if (!has_word(&all, mods.v[i]))
			fprintf(stderr, "\nrig help <TAB> lacks the module %s\n", mods.v[i]);
	for (size_t i = 0; i < cmds.n; i++)
		CU_ASSERT_TRUE(has_word(&all, cmds.v[i]));
	for (size_t i = 0; i < mods.n; i++)
		CU_ASSERT_TRUE(has_word(&all, mods.v[i]));
	/* A topic from the list `rig help help` prints. */
	CU_ASSERT_TRUE(has_word(&all, "orders"));
	CU_ASSERT_TRUE(has_word(&all, "units"));
	/* Nothing after rig help's one argument. */
	expect(dir, (const char *[]){ "rig", "help", "run", "", NULL }, "");
	words_release(&mods);
	words_release(&ra);
	words_release(&cmds);
	words_release(&all);
	test_rmtree(dir);
	free(dir);
}

/*
 * The zsh script's branch "(CMD)" up to ";;": its options are the words
 * starting with - right after a quote, a brace or a comma ('--full[...]',
 * {-o,--output}), not those in descriptions or exclusion lists.
 */
static void zsh_options(const char *text, const char *cmd, struct words *w)
{
	struct strbuf head = STRBUF_INIT;
	sb_addf(&head, "\n  (%s)\n", cmd);
	const char *p = strstr(text, head.buf);
	if (!p)
		fprintf(stderr, "\ncompletions/_rig: no branch (%s)\n", cmd);
	CU_ASSERT_PTR_NOT_NULL(p);
	if (p) {
		const char *end = strstr(p, ";;");
		CU_ASSERT_PTR_NOT_NULL_FATAL(end);
		for (p += head.len; p < end; p++) {
			/* '*--var[...]': '*' marks an option given more than once. */
			int after = strchr("'\"{,", p[-1]) || (p[-1] == '*' && strchr("'\"", p[-2]));
			if (*p == '-' && after && ((p[1] >= 'a' && p[1] <= 'z') ||
								   (p[1] == '-' && p[2] >= 'a' && p[2] <= 'z'))) {
				size_t n = strspn(p + 1, "abcdefghijklmnopqrstuvwxyz-") + 1;
				words_add(w, p, n);
				p += n - 1;
			}
		}
	}
	sb_release(&head);
}

static void test_zsh_options(void)
{
	char *path = src_path("completions/_rig");
	char *text = test_read_file(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	struct words cmds = { .n = 0 };
	rig_commands(&cmds);
	for (size_t i = 0; i < cmds.n; i++) {
		struct words got = { .n = 0 };
		zsh_options(text, cmds.v[i], &got);
		check_options("zsh", cmds.v[i], &got);
	}
	words_release(&cmds);
	free(text);
	free(path);
}

void register_completion_tests(void)
{
	CU_pSuite s = test_suite_e2e("shell completions");
	test_add(s, "bash -n and zsh -n", test_syntax);
	test_add(s, "bash: each command's options are rig help's", test_bash_options);
	test_add(s, "bash: an option's argument, or the command's words", test_bash_option_arguments);
	test_add(s, "bash: commands, plans, runs, modules and topics", test_bash_words);
	test_add(s, "zsh: each command's options are rig help's", test_zsh_options);
}
