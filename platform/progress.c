/* The progress of a run; see progress.h. */
#include "platform/progress.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/units.h"
#include "platform/platform.h"

void plat_progress_init(struct progress *p, FILE *out, enum progress_mode mode)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->mode = out ? mode : PROGRESS_OFF;
	p->tty = p->mode == PROGRESS_HUMAN && isatty(fileno(out));
	p->t0 = plat_clock_ns();
	p->eta_s = -1;
	sb_init(&p->head);
	sb_init(&p->last);
	sb_init(&p->cell_name);
	sb_init(&p->sub);
	sb_init(&p->line);
}

void plat_progress_release(struct progress *p)
{
	sb_release(&p->head);
	sb_release(&p->last);
	sb_release(&p->cell_name);
	sb_release(&p->sub);
	sb_release(&p->line);
}

static double since(uint64_t t0)
{
	return (double)(plat_clock_ns() - t0) / 1e9;
}

void plat_progress_format_seconds(struct strbuf *sb, double s)
{
	if (!(s >= 0))
		s = 0;
	if (s < 10) {
		sb_addf(sb, "%.1fs", s);
		return;
	}
	unsigned long t = (unsigned long)(s + 0.5);
	if (t < 60)
		sb_addf(sb, "%lus", t);
	else if (t < 3600)
		sb_addf(sb, "%lu:%02lu", t / 60, t % 60);
	else
		sb_addf(sb, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
}

/* Decimal, as rig's rates are (MB/s = 10^6 bytes per second). */
static void format_bytes(struct strbuf *sb, double b)
{
	static const char *const u[] = { "B", "kB", "MB", "GB", "TB", "PB" };
	int k = 0;
	while (b >= 1000 && k < 5)
		b /= 1000, k++;
	sb_addf(sb, k ? "%.3g %s" : "%.0f %s", b, u[k]);
}

static void format_count(struct strbuf *sb, double v, enum progress_unit unit)
{
	if (unit == PROGRESS_BYTES)
		format_bytes(sb, v);
	else if (unit == PROGRESS_NS)
		plat_progress_format_seconds(sb, v / 1e9);
	else
		sb_addf(sb, "%.0f", v);
}

/* "%.4g" with the unit, except the unit "1" (a plain number). */
/* "last: read on b 2,452 MB/s": the cell the value is from, the number as
 * the reports print it; a value without a unit says its metric. */
static void format_value(struct strbuf *sb, const char *cell, const char *metric, double v,
			 const char *unit)
{
	int unitless = !unit || !*unit || !strcmp(unit, "1");
	sb_addf(sb, "last: %s ", cell);
	if (unitless)
		sb_addf(sb, "%s ", metric);
	if (isnan(v)) {
		sb_adds(sb, "-");
		return;
	}
	if (v < 0)
		sb_addch(sb, '-');
	units_format_magnitude(sb, v);
	if (!unitless)
		sb_addf(sb, " %s", unit);
}

/* The human line: [cell/total] elapsed, ETA | head | last | sub. */
static void draw(struct progress *p)
{
	struct strbuf *l = &p->line;
	sb_reset(l);
	if (p->total)
		sb_addf(l, "[%u/%u] ", p->cell, p->total);
	plat_progress_format_seconds(l, since(p->t0));
	sb_adds(l, " elapsed");
	if (p->eta_s >= 0) {
		sb_adds(l, ", ETA ");
		plat_progress_format_seconds(l, p->eta_s);
	}
	if (p->head.len)
		sb_addf(l, " | %s", p->head.buf);
	if (p->last.len)
		sb_addf(l, " | %s", p->last.buf);
	if (p->sub.len)
		sb_addf(l, " | %s", p->sub.buf);
	if (p->tty) {
		fputs("\r\033[K", p->out);
		fputs(l->buf, p->out);
		p->active = 1;
	} else {
		fprintf(p->out, "%s\n", l->buf);
	}
	fflush(p->out);
	p->last_draw = plat_clock_ns();
}

/* A JSON event: {"event":NAME,"elapsed_s":T, then the fields in l}. */
static void emit(struct progress *p, const char *name, const struct strbuf *fields)
{
	fprintf(p->out, "{\"event\":\"%s\",\"elapsed_s\":%.3f%s%s}\n", name, since(p->t0),
		fields->len ? "," : "", fields->buf);
	fflush(p->out);
	p->last_draw = plat_clock_ns();
}

static void json_key_str(struct strbuf *sb, const char *key, const char *v)
{
	sb_addf(sb, "%s\"%s\":", sb->len ? "," : "", key);
	if (v)
		sb_add_json(sb, v);
	else
		sb_adds(sb, "null");
}

static void json_key_num(struct strbuf *sb, const char *key, double v)
{
	if (isfinite(v))
		sb_addf(sb, "%s\"%s\":%.10g", sb->len ? "," : "", key, v);
	else
		sb_addf(sb, "%s\"%s\":null", sb->len ? "," : "", key);
}

void plat_progress_start(struct progress *p, const char *plan, uint32_t cells, const char *run_dir)
{
	if (p->mode != PROGRESS_JSON)
		return;
	struct strbuf f = STRBUF_INIT;
	json_key_str(&f, "plan", plan);
	json_key_num(&f, "cells", cells);
	json_key_str(&f, "run_dir", run_dir);
	emit(p, "start", &f);
	sb_release(&f);
}

void plat_progress_cell(struct progress *p, const struct plat_progress_cell *c)
{
	if (!p || p->mode == PROGRESS_OFF)
		return;
	p->cell = c->seq;
	p->total = c->total;
	p->eta_s = c->eta_s;
	sb_reset(&p->sub);
	if (p->mode == PROGRESS_JSON) {
		struct strbuf f = STRBUF_INIT;
		json_key_num(&f, "seq", c->seq);
		json_key_num(&f, "total", c->total);
		json_key_num(&f, "eta_s", c->eta_s >= 0 ? c->eta_s : NAN);
		json_key_str(&f, "layout", c->layout);
		json_key_num(&f, "rep", c->rep);
		json_key_str(&f, "step", c->step);
		json_key_str(&f, "module", c->module);
		json_key_str(&f, "volume", c->volume);
		emit(p, "cell", &f);
		sb_release(&f);
		return;
	}
	sb_reset(&p->cell_name);
	sb_addf(&p->cell_name, "%s on %s", c->module, c->volume);
	sb_reset(&p->head);
	if (c->layout && *c->layout)
		sb_addf(&p->head, "%s ", c->layout);
	sb_addf(&p->head, "rep %u step %s %s on %s", c->rep, c->step, c->module, c->volume);
	draw(p);
}

void plat_progress_value(struct progress *p, const char *metric, double value, const char *unit)
{
	if (!p || p->mode == PROGRESS_OFF)
		return;
	if (p->mode == PROGRESS_JSON) {
		struct strbuf f = STRBUF_INIT;
		json_key_num(&f, "seq", p->cell);
		json_key_str(&f, "metric", metric);
		json_key_num(&f, "value", value);
		json_key_str(&f, "unit", unit);
		emit(p, "value", &f);
		sb_release(&f);
		return;
	}
	sb_reset(&p->last);
	sb_reset(&p->sub); /* the work that led to the value is over */
	format_value(&p->last, p->cell_name.buf, metric, value, unit);
	if (p->tty)
		draw(p); /* a plain line waits for the next cell, which carries it */
}

void plat_progress_phase(struct progress *p, const char *fmt, ...)
{
	if (!p || p->mode == PROGRESS_OFF)
		return;
	struct strbuf text = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&text, fmt, ap);
	va_end(ap);
	sb_reset(&p->sub);
	if (p->mode == PROGRESS_JSON) {
		struct strbuf f = STRBUF_INIT;
		json_key_str(&f, "text", text.buf);
		emit(p, "phase", &f);
		sb_release(&f);
	} else {
		sb_reset(&p->head);
		sb_adds(&p->head, text.buf);
		draw(p);
	}
	sb_release(&text);
}

/* Whether a sub-progress update may be written now. */
static int due(const struct progress *p)
{
	uint64_t gap = p->tty || p->mode == PROGRESS_JSON
			       ? 1000000000u / PROGRESS_HZ
			       : (uint64_t)PROGRESS_PLAIN_EVERY_S * 1000000000u;
	return plat_clock_ns() - p->last_draw >= gap;
}

void plat_progress_work(struct progress *p, const char *what, uint64_t done, uint64_t total,
		   enum progress_unit unit)
{
	if (!p || p->mode == PROGRESS_OFF)
		return;
	if (done == 0 || !p->sub_t0)
		p->sub_t0 = plat_clock_ns();
	if (!due(p))
		return;
	double secs = since(p->sub_t0);
	double rate = secs > 0 && unit != PROGRESS_NS ? (double)done / secs : NAN;
	if (p->mode == PROGRESS_JSON) {
		struct strbuf f = STRBUF_INIT;
		json_key_num(&f, "seq", p->cell);
		json_key_str(&f, "what", what);
		json_key_num(&f, "done", (double)done);
		json_key_num(&f, "total", total ? (double)total : NAN);
		json_key_str(&f, "unit", unit == PROGRESS_BYTES ? "B" : unit == PROGRESS_FILES ? "files" : "ns");
		json_key_num(&f, "rate_per_s", rate);
		emit(p, "work", &f);
		sb_release(&f);
		return;
	}
	sb_reset(&p->sub);
	sb_addf(&p->sub, "%s ", what);
	format_count(&p->sub, (double)done, unit);
	if (total) {
		sb_adds(&p->sub, " of ");
		format_count(&p->sub, (double)total, unit);
	}
	if (unit == PROGRESS_FILES)
		sb_adds(&p->sub, " files");
	if (isfinite(rate)) {
		sb_adds(&p->sub, ", ");
		if (unit == PROGRESS_BYTES) {
			sb_addf(&p->sub, "%.4g MB/s", rate / 1e6);
		} else {
			sb_addf(&p->sub, "%.4g files/s", rate);
		}
	}
	draw(p);
}

void plat_progress_command(struct progress *p, const char *argv_text, double seconds)
{
	if (!p || p->mode == PROGRESS_OFF || !due(p))
		return;
	/* Quick commands are not worth a line of their own when not on a
	 * terminal: the plain sub-progress waits PROGRESS_PLAIN_EVERY_S. */
	if (p->mode == PROGRESS_JSON) {
		struct strbuf f = STRBUF_INIT;
		json_key_num(&f, "seq", p->cell);
		json_key_str(&f, "command", argv_text);
		json_key_num(&f, "running_s", seconds);
		emit(p, "command", &f);
		sb_release(&f);
		return;
	}
	sb_reset(&p->sub);
	size_t n = strlen(argv_text);
	sb_addf(&p->sub, "running %.*s%s ", (int)(n > 60 ? 60 : n), argv_text, n > 60 ? "..." : "");
	plat_progress_format_seconds(&p->sub, seconds);
	draw(p);
}

void plat_progress_end(struct progress *p)
{
	if (p && p->out && p->tty && p->active) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
	}
	if (p)
		p->active = 0;
}

int plat_progress_message(struct progress *p, const char *level, const char *text)
{
	if (p && p->mode == PROGRESS_JSON) {
		struct strbuf f = STRBUF_INIT;
		json_key_str(&f, "level", level);
		json_key_str(&f, "text", text);
		emit(p, "message", &f);
		sb_release(&f);
		return 1;
	}
	plat_progress_end(p);
	return 0;
}

void plat_progress_finish(struct progress *p, const char *status)
{
	if (!p || p->mode == PROGRESS_OFF)
		return;
	if (p->mode == PROGRESS_JSON) {
		struct strbuf f = STRBUF_INIT;
		json_key_str(&f, "status", status);
		json_key_num(&f, "cells", p->total);
		emit(p, "end", &f);
		sb_release(&f);
		return;
	}
	/* The last state as a finished line: the last value measured, which a
	 * plain line per cell would otherwise never show. */
	if (!p->total)
		return;
	sb_reset(&p->sub);
	sb_reset(&p->head);
	sb_adds(&p->head, status);
	p->eta_s = -1;
	draw(p);
	if (p->tty) {
		fputc('\n', p->out);
		fflush(p->out);
		p->active = 0;
	}
}
