/*
 * Micro-benchmarks of the costs the sources' comments reason with, so the
 * numbers live here and in bench/README.md ("Costs inside rig"), not in the
 * comments: payload stamping, copying and restamping (platform/payload.c),
 * CSV numbers (reports/csv.c) and the knot search (reports/model.c). Built by
 * `make bench-micro` against rig's own objects (-O2, as rig is built);
 * needs no root and no device. Each line is the best of ROUNDS rounds, so a
 * busy machine inflates the numbers less than a mean would.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/prng.h"
#include "lib/strbuf.h"
#include "platform/payload.h"
#include "platform/platform.h"
#include "reports/csv.h"
#include "reports/model.h"

#define ROUNDS 5
#define MIB (1u << 20)

static volatile unsigned sink;

/* Best of ROUNDS runs of fn(arg), in nanoseconds. */
static double best_ns(void (*fn)(void *), void *arg)
{
	double best = INFINITY;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = plat_clock_ns();
		fn(arg);
		double dt = (double)(plat_clock_ns() - t0);
		if (dt < best)
			best = dt;
	}
	return best;
}

/* --- payload --- */

struct pl {
	struct payload p;
	unsigned char *buf;
	size_t len;      /* bytes per call */
	unsigned calls;
	int cold;        /* walk the whole ring, many streams; else one window */
};

static uint64_t pl_offset(const struct pl *a, unsigned i)
{
	return a->cold ? (uint64_t)i * 7919u * a->len % PAYLOAD_RING / a->len * a->len : 0;
}

static void pl_block(void *arg)
{
	struct pl *a = arg;
	for (unsigned i = 0; i < a->calls; i++) {
		const unsigned char *w = plat_payload_block(&a->p, a->cold ? i : 1, pl_offset(a, i), a->len);
		sink += w[a->len - 1];
	}
}

static void pl_copy(void *arg)
{
	struct pl *a = arg;
	for (unsigned i = 0; i < a->calls; i++) {
		plat_payload_copy(&a->p, a->cold ? i : 1, pl_offset(a, i), a->buf, a->len);
		sink += a->buf[a->len - 1];
	}
}

static void pl_restamp(void *arg)
{
	struct pl *a = arg;
	for (unsigned i = 0; i < a->calls; i++) {
		plat_payload_restamp(&a->p, i, pl_offset(a, i), a->buf, a->len);
		sink += a->buf[0];
	}
}

static void payload_costs(void)
{
	struct pl a = { .len = MIB, .calls = 64 };
	if (plat_payload_init(&a.p, 42, MIB) < 0) {
		fprintf(stderr, "micro: out of memory\n");
		exit(1);
	}
	a.buf = malloc(MIB);
	if (!a.buf)
		exit(1);
	double ns;
	a.cold = 0;
	ns = best_ns(pl_block, &a);
	printf("plat_payload_block, 1 MiB, window in cache:     %8.1f us per MiB\n", ns / a.calls / 1e3);
	a.cold = 1;
	ns = best_ns(pl_block, &a);
	printf("plat_payload_block, 1 MiB, over the 64 MiB ring: %7.1f us per MiB\n", ns / a.calls / 1e3);
	ns = best_ns(pl_copy, &a);
	printf("plat_payload_copy,  1 MiB, over the 64 MiB ring: %7.1f us per MiB\n", ns / a.calls / 1e3);
	a.len = 4096;
	a.calls = 16384;
	ns = best_ns(pl_copy, &a);
	printf("plat_payload_copy,  4 KiB, over the 64 MiB ring: %7.3f us per 4 KiB\n", ns / a.calls / 1e3);
	plat_payload_copy(&a.p, 0, 0, a.buf, a.len);
	ns = best_ns(pl_restamp, &a);
	printf("plat_payload_restamp, 4 KiB:                    %8.3f us per 4 KiB\n", ns / a.calls / 1e3);
	free(a.buf);
	plat_payload_release(&a.p);
}

/* --- CSV numbers --- */

struct nums {
	double *v;
	size_t n;
};

static void csv_rig(void *arg)
{
	struct nums *a = arg;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < a->n; i++) {
		sb_reset(&sb);
		rep_csv_add_double(&sb, a->v[i]);
		sink += (unsigned)sb.len;
	}
	sb_release(&sb);
}

/* What rep_csv_add_double replaced: print each width, parse it back, keep the
 * first that reads back exactly. */
static void csv_each_width(void *arg)
{
	struct nums *a = arg;
	char buf[40];
	for (size_t i = 0; i < a->n; i++) {
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, sizeof(buf), "%.*g", prec, a->v[i]);
			if (strtod(buf, NULL) == a->v[i])
				break;
		}
		sink += (unsigned)buf[0];
	}
}

/* printf's own digits, 17 of them, once per number. */
static void csv_printf17(void *arg)
{
	struct nums *a = arg;
	char buf[40];
	for (size_t i = 0; i < a->n; i++) {
		snprintf(buf, sizeof(buf), "%.17g", a->v[i]);
		sink += (unsigned)buf[0];
	}
}

static void csv_costs(void)
{
	struct nums a = { .n = 1000000 };
	a.v = malloc(a.n * sizeof(*a.v));
	if (!a.v)
		exit(1);
	struct prng r;
	prng_seed(&r, 7);
	/* Rates and times as rig stores them: a few significant digits to 17. */
	for (size_t i = 0; i < a.n; i++)
		a.v[i] = prng_uniform(&r) * 3000.0 + (double)(i % 7);
	double ns = best_ns(csv_rig, &a);
	printf("rep_csv_add_double:                            %8.1f ns per number\n", ns / a.n);
	ns = best_ns(csv_each_width, &a);
	printf("print and parse each width (15, 16, 17):   %8.1f ns per number\n", ns / a.n);
	ns = best_ns(csv_printf17, &a);
	printf("printf %%.17g alone:                        %8.1f ns per number\n", ns / a.n);
	free(a.v);
}

/* --- the knot search --- */

struct knots {
	double *x, *y;
	size_t m;
};

static void knot_search(void *arg)
{
	struct knots *a = arg;
	double knot;
	struct model_est extra;
	sink += (unsigned)rep_model_steepening(a->x, a->y, a->m, &knot, &extra);
}

static void model_costs(void)
{
	static const size_t ms[] = { 1000, 10000 };
	for (size_t k = 0; k < sizeof(ms) / sizeof(ms[0]); k++) {
		struct knots a = { .m = ms[k] };
		a.x = malloc(a.m * sizeof(double));
		a.y = malloc(a.m * sizeof(double));
		if (!a.x || !a.y)
			exit(1);
		struct prng r;
		prng_seed(&r, 11);
		/* A falling line that falls faster after 70%, with noise. */
		for (size_t i = 0; i < a.m; i++) {
			double x = (double)i;
			a.x[i] = x;
			a.y[i] = 1000.0 - x - (x > 0.7 * a.m ? 3.0 * (x - 0.7 * a.m) : 0) +
				 (prng_uniform(&r) - 0.5) * 20.0;
		}
		double ns = best_ns(knot_search, &a);
		printf("rep_model_steepening, %5zu distinct x:         %8.1f ms\n", a.m, ns / 1e6);
		free(a.x);
		free(a.y);
	}
}

int main(void)
{
	printf("rig micro-benchmarks (best of %d rounds; bench/README.md says what each is for)\n",
	       ROUNDS);
	payload_costs();
	csv_costs();
	model_costs();
	return sink == 0xffffffffu;
}
