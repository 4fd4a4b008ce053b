/* test_quant.c - quantizers, rotations, the generator and the error chain:
 * the seeds' worked examples exactly, and every quantizer within its
 * documented error bound on fresh seeded random data. */
#include "testutil.h"

#include "experiment.h"
#include "kvgen.h"
#include "quant.h"
#include "random.h"
#include "rotate.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tolerances, each named for what it bounds. float32 arithmetic on values
 * of order 1..100: a few ulps. */
#define F32_TOL 1e-5
/* A figure the seed quotes to four decimal places: half a unit in the
 * last place (0.0859 stands for 0.08585 to 0.08595). */
#define QUOTED_4_PLACES_TOL 5e-5
/* The same for a figure quoted to three places (4.6% as 0.046). */
#define QUOTED_3_PLACES_TOL 5e-4
/* The random-data error bounds, computed in float32 like the quantizers:
 * the rounding of the scale, of x / s and of the bound itself, relative to
 * the bound, and an absolute floor for groups whose bound is zero. */
#define BOUND_REL_SLACK 1e-4f
#define BOUND_ABS_SLACK 1e-6f
/* A dot product of 64 to 160 float32 values of order 1 to 3, each rounded
 * once after a rotation. */
#define ROTATED_DOT_TOL 1e-3

static float *fill_random(Rng *r, size_t n, float spread)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = rng_uniform(r, spread);
    return x;
}

/* A random matrix for the bound tests and room for what the quantizer
 * reads back. */
typedef struct {
    size_t rows, cols;
    float *x;                   // (rows, cols), values in +-spread
    float *out;                 // (rows, cols), dequant(quant(x))
} Sample;

static Sample sample_new(Rng *r, size_t max_rows, size_t max_cols, float spread)
{
    Sample m;
    m.rows = rng_range(r, 1, max_rows);
    m.cols = rng_range(r, 1, max_cols);
    m.x = fill_random(r, m.rows * m.cols, spread);
    m.out = malloc(m.rows * m.cols * sizeof *m.out);
    return m;
}

static void sample_free(Sample *m)
{
    free(m->x);
    free(m->out);
}

/* quant_spec_init's defaults with the scheme and granularity given. */
static QuantSpec spec_of(Scheme scheme, GranKind kind)
{
    QuantSpec q;
    quant_spec_init(&q);
    q.scheme = scheme;
    q.gran.kind = kind;
    return q;
}

/* |got - want| is within a bound computed in float32, with its slack. */
static bool within_bound(float got, float want, float bound)
{
    return fabsf(got - want) <= bound * (1 + BOUND_REL_SLACK) + BOUND_ABS_SLACK;
}

/* The largest magnitude among n values. */
static float amax_of(const float *x, size_t n)
{
    float a = 0;
    for (size_t i = 0; i < n; i++)
        a = fmaxf(a, fabsf(x[i]));
    return a;
}

/* Seed 001's worked example: 2-bit int-min per token gives scores
 * [0.3, -0.1, -0.8, 0.6], largest error 1.7, K error 8.6%; per channel
 * [1.23, 0.90, 0.93, 1.67], 0.067 and 0.6%. */
START_TEST(worked_example)
{
    static const struct { GranKind g; double s[4], max, fro; } T[] = {
        {GRAN_TOKEN, {0.3, -0.1, -0.8, 0.6}, 1.7, 0.0859},
        {GRAN_CHANNEL, {1.2333, 0.9, 0.9333, 1.6667}, 0.0667, 0.0059},
    };
    for (size_t i = 0; i < 2; i++) {
        Experiment x;
        experiment_init(&x);
        x.key.scheme = SCHEME_INT_MIN;
        x.key.bits = 2;
        x.key.gran.kind = T[i].g;
        x.values_exact = true;
        ExperimentResult r;
        Error e;
        ck_assert_int_eq(experiment_run(&x, KV_WORKED_K, KV_WORKED_K, KV_WORKED_Q, 4, 4, &r, &e), 0);
        for (int t = 0; t < 4; t++)
            ck_assert_msg(fabs(r.scores[t] - T[i].s[t]) < QUOTED_4_PLACES_TOL, "score %d: %g", t,
                          r.scores[t]);
        ck_assert_double_eq_tol(r.scores_ref[2], 0.9, F32_TOL);
        ck_assert_double_eq_tol(r.err.max_score_error, T[i].max, QUOTED_4_PLACES_TOL);
        ck_assert_double_eq_tol(r.err.rel_fro_k, T[i].fro, QUOTED_4_PLACES_TOL);
        experiment_result_free(&r);
    }
}
END_TEST

/* Seed 001's FP8 scales: a dynamic per-token scale reads 0.01 back as
 * 0.0098; a static scale of 120/448 reads it as 0.0105 (4.6% off) and
 * clips 180 to 448, i.e. 120; without saturation 180 becomes NaN. */
START_TEST(fp8_scales)
{
    float a[3] = {0.01f, -0.8f, 3.2f}, b[3] = {2.0f, -45.0f, 180.0f}, out[3];
    QuantSpec q = spec_of(SCHEME_FP8, GRAN_TOKEN);
    ck_assert_int_eq(quantize_ref(&q, a, 1, 3, out, NULL), 0);
    ck_assert_double_eq_tol(out[0], 0.0098, QUOTED_4_PLACES_TOL);
    ck_assert_float_eq(out[2], 3.2f);                      // the max lands on 448 exactly
    ck_assert_int_eq(quantize_ref(&q, b, 1, 3, out, NULL), 0);
    ck_assert_double_eq_tol(out[2], 180.0, F32_TOL);
    q.static_scale = 120.0f / 448.0f;
    ck_assert_int_eq(quantize_ref(&q, a, 1, 3, out, NULL), 0);
    ck_assert_double_eq_tol(out[0], 0.0105, QUOTED_4_PLACES_TOL);
    ck_assert_double_eq_tol(fabs(out[0] - 0.01) / 0.01, 0.046, QUOTED_3_PLACES_TOL);
    ck_assert_int_eq(quantize_ref(&q, b, 1, 3, out, NULL), 0);
    ck_assert_double_eq_tol(out[2], 120.0, F32_TOL);
    q.saturate = false;
    ck_assert_int_eq(quantize_ref(&q, b, 1, 3, out, NULL), 0);
    ck_assert(isnan(out[2]));
    /* A scale of 1.0: 0.001 becomes 2^-9, almost 100% off. */
    float tiny = 0.001f;
    q.static_scale = 1.0f;
    ck_assert_int_eq(quantize_ref(&q, &tiny, 1, 1, out, NULL), 0);
    ck_assert_float_eq(out[0], ldexpf(1, -9));
}
END_TEST

/* The grid step of an integer scheme over a group spanning [lo, hi],
 * written out from quant.h: amax / (2^(b-1) - 1) for int-sym, the range
 * over 2^b - 1 for int-min, and for int-zp the range widened to hold 0. */
static float int_step(Scheme scheme, unsigned bits, float lo, float hi)
{
    if (scheme == SCHEME_INT_SYM)
        return fmaxf(fabsf(lo), fabsf(hi)) / (float)((1u << (bits - 1)) - 1);
    if (scheme == SCHEME_INT_ZP)
        lo = fminf(lo, 0), hi = fmaxf(hi, 0);
    return (hi - lo) / (float)((1u << bits) - 1);
}

/* Integer schemes: every element is within half a step of its group's grid
 * (s / 2, s from the group's range), and int-zp stores 0 exactly. Fresh
 * random matrices, shapes, bit widths and granularities. */
START_TEST(integer_bounds_random)
{
    Rng r = {test_seed() ^ 0x1A7};
    for (int it = 0; it < 300; it++) {
        Sample m = sample_new(&r, 70, 70, (float)rng_range(&r, 1, 100));
        size_t n = m.rows * m.cols;
        if (it % 3 == 0)
            m.x[0] = 0;
        QuantSpec q = spec_of((Scheme)rng_range(&r, SCHEME_INT_SYM, SCHEME_INT_ZP),
                              (GranKind)rng_range(&r, GRAN_TENSOR, GRAN_GROUP_TOKENS));
        q.bits = (unsigned)rng_range(&r, 2, 8);
        q.gran.size = rng_range(&r, 1, 40);
        ck_assert_int_eq(quantize_ref(&q, m.x, m.rows, m.cols, m.out, NULL), 0);
        size_t *id = malloc(n * sizeof *id);
        size_t ng = group_ids(&q.gran, m.rows, m.cols, id);
        float *lo = malloc(ng * sizeof *lo), *hi = malloc(ng * sizeof *hi);
        for (size_t k = 0; k < ng; k++)
            lo[k] = INFINITY, hi[k] = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            lo[id[i]] = fminf(lo[id[i]], m.x[i]);
            hi[id[i]] = fmaxf(hi[id[i]], m.x[i]);
        }
        for (size_t i = 0; i < n; i++) {
            float step = int_step(q.scheme, q.bits, lo[id[i]], hi[id[i]]);
            ck_assert_seeded(within_bound(m.out[i], m.x[i], step / 2), "%s %u-bit: |%g - %g| > step %g / 2",
                             scheme_str(q.scheme), q.bits, m.out[i], m.x[i], step);
        }
        if (q.scheme == SCHEME_INT_ZP && it % 3 == 0)
            ck_assert_float_eq(m.out[0], 0.0f);
        sample_free(&m);
        free(id), free(lo), free(hi);
    }
}
END_TEST

/* ------------------------------------------------------------------------
 * The integer grids round as quant.h documents: rint of the quotient, an
 * exact half to the even code.
 */

/* quantize_ref(q) of x (rows, cols) is want, exactly. */
static void assert_quantized_as(const QuantSpec *q, const float *x, size_t rows, size_t cols, const float *want)
{
    size_t n = rows * cols;
    float *out = malloc(n * sizeof *out);
    ck_assert_int_eq(quantize_ref(q, x, rows, cols, out, NULL), 0);
    char g[32];
    for (size_t i = 0; i < n; i++)
        ck_assert_seeded(out[i] == want[i], "%s %u-bit per %s: %a -> %a, want %a", scheme_str(q->scheme), q->bits,
                         granularity_str(&q->gran, g, sizeof g), x[i], out[i], want[i]);
    free(out);
}

/* Every granularity, with a group size that may leave a last group short. */
static Granularity any_granularity(Rng *r)
{
    return (Granularity){(GranKind)rng_range(r, GRAN_TENSOR, GRAN_GROUP_TOKENS), rng_range(r, 1, 12)};
}

/* Exact halves land on the even code: int-min, int-zp and int-sym at every
 * bit width and granularity, with steps down to subnormal ranges (below
 * 1/FLT_MAX, where a float reciprocal overflows); exact equality. */
START_TEST(integer_ties_to_even)
{
    Rng r = {test_seed() ^ 0x71E5};
    for (int it = 0; it < 600; it++) {
        QuantSpec q = spec_of((Scheme)(it % 3 == 0 ? SCHEME_INT_MIN : it % 3 == 1 ? SCHEME_INT_ZP
                                                                                   : SCHEME_INT_SYM),
                              GRAN_TENSOR);
        q.bits = QUANT_BITS_MIN + (unsigned)(it / 3) % (QUANT_BITS_MAX - QUANT_BITS_MIN + 1);
        q.gran = any_granularity(&r);
        size_t rows = rng_range(&r, 1, 30), cols = rng_range(&r, 1, 30), n = rows * cols;
        float *x = malloc(n * sizeof *x), *want = malloc(n * sizeof *want);
        build_ties(&r, &q, rows, cols, rng_range(&r, 0, 1) ? &TIES_SUBNORMAL : &TIES_NORMAL, x, want);
        assert_quantized_as(&q, x, rows, cols, want);
        free(x), free(want);
    }
}
END_TEST

/* ------------------------------------------------------------------------
 * An exact reference: the codes of quant.h's integer formulas in integer
 * arithmetic. Every float of a group is an integer times 2^E, E the lowest
 * exponent among them; the quotient (x - min) (2^b - 1) / (max - min) (or
 * x Q / amax) is then a ratio of integers, rounded half to even by integer
 * division. Groups spanning up to 100 binades fit in 128 bits.
 */

typedef __int128 i128;

/* x = m 2^e with |m| < 2^24; 0 for x = 0. */
static int float_exponent(float x)
{
    int e;
    frexpf(x, &e);
    return x == 0 ? INT_MAX : e - 24;
}

/* x as an integer count of 2^E (E at most x's own exponent). */
static i128 float_units(float x, int E)
{
    if (x == 0)
        return 0;
    int e;
    i128 m = (i128)ldexpf(frexpf(x, &e), 24);
    ck_assert_msg(e - 24 - E <= 100, "a group spans more than 100 binades");
    return m * ((i128)1 << (e - 24 - E));         // a product: m may be negative
}

/* num / den rounded half to even (den > 0, num of any sign); *tie when the
 * quotient is exactly a half. */
static i128 div_half_even(i128 num, i128 den, bool *tie)
{
    bool neg = num < 0;
    i128 a = neg ? -num : num, q = a / den, r2 = 2 * (a % den);
    *tie = r2 == den;
    q += r2 > den || (r2 == den && (q & 1));
    return neg ? -q : q;
}

static i128 clamp128(i128 v, i128 lo, i128 hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* quantize_ref's output for an integer scheme, from codes computed exactly;
 * counts the exact halves met in *ties. The read-back is quant.h's: min +
 * q s (int-min), (q - z) s, q s, with s in double, rounded once to float. */
static void integer_exact(const QuantSpec *q, const float *x, size_t rows, size_t cols, float *out,
                          size_t *ties)
{
    size_t n = rows * cols, *id = malloc(n * sizeof *id);
    size_t groups = group_ids(&q->gran, rows, cols, id);
    float *lo = malloc(groups * sizeof *lo), *hi = malloc(groups * sizeof *hi);
    int *E = malloc(groups * sizeof *E);
    for (size_t g = 0; g < groups; g++)
        lo[g] = INFINITY, hi[g] = -INFINITY, E[g] = INT_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t g = id[i];
        lo[g] = fminf(lo[g], x[i]), hi[g] = fmaxf(hi[g], x[i]);
        int e = float_exponent(x[i]);
        E[g] = e < E[g] ? e : E[g];
    }
    const i128 top = (1 << q->bits) - 1, qmax = (1 << (q->bits - 1)) - 1;
    for (size_t i = 0; i < n; i++) {
        size_t g = id[i];
        float l = lo[g], h = hi[g];
        i128 X = float_units(x[i], E[g]), L = float_units(l, E[g]), H = float_units(h, E[g]);
        bool tie = false, tz = false;
        if (q->scheme == SCHEME_INT_SYM) {
            float amax = fmaxf(fabsf(l), fabsf(h));
            i128 A = H > -L ? H : -L;
            i128 k = A ? clamp128(div_half_even(X * qmax, A, &tie), -qmax, qmax) : 0;
            out[i] = (float)((double)k * ((double)amax / (double)qmax));
        } else if (q->scheme == SCHEME_INT_MIN) {
            i128 k = H > L ? clamp128(div_half_even((X - L) * top, H - L, &tie), 0, top) : 0;
            out[i] = H > L ? (float)(l + (double)k * (((double)h - l) / (double)top)) : l;
        } else {
            l = fminf(l, 0), h = fmaxf(h, 0), L = L < 0 ? L : 0, H = H > 0 ? H : 0;
            i128 z = H > L ? clamp128(div_half_even(-L * top, H - L, &tz), 0, top) : 0;
            i128 k = H > L ? clamp128(div_half_even(X * top, H - L, &tie) + z, 0, top) : 0;
            out[i] = (float)((double)(k - z) * (((double)h - l) / (double)top));
        }
        *ties += tie;
    }
    free(id), free(lo), free(hi), free(E);
}

/* A matrix rich in exact halves on steps with no binary form, each group
 * integers times its own unit 2^e (e from subnormal to 2^20): with T =
 * 2^b - 1 (int-sym: Q) and d an odd divisor of T (1 where it has none), a
 * group's range R = 2 (T / d) m has the step 2m / d, which has no binary
 * form where d does not divide m ([0, 9] at 3 bits is R = 9, step 9/7),
 * and its quotient is an exact half at every odd multiple of m from its
 * origin (the minimum for int-min, 0 for the others, whose ranges hold 0:
 * int-zp's zero point lands on halves too). */
static void tie_matrix(Rng *r, const QuantSpec *q, size_t rows, size_t cols, float *x)
{
    size_t n = rows * cols, *id = malloc(n * sizeof *id);
    size_t groups = group_ids(&q->gran, rows, cols, id), *seen = calloc(groups, sizeof *seen);
    struct { long lo, range, m, halves; int e; } *g = malloc(groups * sizeof *g);
    const long T = q->scheme == SCHEME_INT_SYM ? (1 << (q->bits - 1)) - 1 : (1 << q->bits) - 1;
    for (size_t k = 0; k < groups; k++) {
        long div[8], nd = 0;
        for (long d = 3; d <= T; d += 2)
            if (T % d == 0)
                div[nd++] = d;
        long d = nd ? div[rng_range(r, 0, (uint64_t)nd - 1)] : 1, m = 2 * (long)rng_range(r, 0, 200) + 1;
        if (d > 1 && m % d == 0)
            m += 2;
        g[k].m = m, g[k].halves = T / d, g[k].range = 2 * (T / d) * m;
        g[k].lo = q->scheme == SCHEME_INT_MIN ? (long)rng_range(r, 0, 2000) - 1000
                  : q->scheme == SCHEME_INT_ZP ? -(long)rng_range(r, 0, (uint64_t)g[k].range)
                                               : -g[k].range;
        g[k].e = (int)rng_range(r, 0, 169) - 149;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = id[i], j = seen[k]++;
        long lo = g[k].lo, hi = lo + (q->scheme == SCHEME_INT_SYM ? 2 : 1) * g[k].range;
        long origin = q->scheme == SCHEME_INT_MIN ? lo : 0;
        long half = (2 * (long)rng_range(r, 0, (uint64_t)g[k].halves - 1) + 1) * g[k].m;
        bool sym = q->scheme == SCHEME_INT_SYM;
        long v = j == 0 ? (sym && rng_range(r, 0, 1) ? hi : lo)        // the range's ends
                 : j == 1 && !sym ? hi
                 : rng_range(r, 0, 7) == 0 ? lo + (long)rng_range(r, 0, (uint64_t)(hi - lo))
                 : origin + half <= hi ? origin + half
                 : origin - half;
        x[i] = ldexpf((float)v, g[k].e);
    }
    free(id), free(seen), free(g);
}

/* quantize_ref(q) of x equals the exact reference; returns the exact
 * halves x holds. */
static size_t assert_exact(const QuantSpec *q, const float *x, size_t rows, size_t cols)
{
    float *want = malloc(rows * cols * sizeof *want);
    size_t ties = 0;
    integer_exact(q, x, rows, cols, want, &ties);
    assert_quantized_as(q, x, rows, cols, want);
    free(want);
    return ties;
}

/* Exact halves on steps with no binary form ([0, 9] at 3 bits: 9/7, where
 * a quotient of exactly 3.5 computed through a rounded step comes out a
 * hair below 3.5), every integer scheme, bit width and granularity, units
 * from subnormal to 2^20: every code is the exact reference's, and the
 * matrices do hold halves (at least one element in ten). */
START_TEST(integer_ties_any_step)
{
    Rng r = {test_seed() ^ 0x7E57};
    size_t ties = 0, total = 0;
    for (int it = 0; it < 420; it++) {
        QuantSpec q = spec_of((Scheme)(SCHEME_INT_SYM + it % 3), GRAN_TENSOR);
        q.bits = QUANT_BITS_MIN + (unsigned)(it / 3) % (QUANT_BITS_MAX - QUANT_BITS_MIN + 1);
        q.gran = (Granularity){(GranKind)(GRAN_TENSOR + (it / 21) % 5), rng_range(&r, 1, 12)};
        size_t rows = rng_range(&r, 1, 24), cols = rng_range(&r, 1, 24);
        float *x = malloc(rows * cols * sizeof *x);
        tie_matrix(&r, &q, rows, cols, x);
        ties += assert_exact(&q, x, rows, cols);
        total += rows * cols;
        free(x);
    }
    ck_assert_msg(ties * 10 > total, "only %zu exact halves in %zu values", ties, total);
}
END_TEST

/* KIVI rounds as int-min does, on exact halves of binary steps and of
 * steps with no binary form: keys per channel in groups of G tokens, values
 * per token in groups of G channels, every bit width, each code the exact
 * reference's. */
START_TEST(kivi_ties_to_even)
{
    Rng r = {test_seed() ^ 0x1C1};
    for (int it = 0; it < 100; it++) {
        KiviSpec s = {QUANT_BITS_MIN + (unsigned)it % (QUANT_BITS_MAX - QUANT_BITS_MIN + 1),
                      rng_range(&r, 2, 8), 0};
        size_t tokens = s.group * rng_range(&r, 1, 4), d = rng_range(&r, 2, 20), n = tokens * d, ties = 0;
        float *k = malloc(n * sizeof *k), *v = malloc(n * sizeof *v), *kw = malloc(n * sizeof *kw),
              *vw = malloc(n * sizeof *vw), *ko = malloc(n * sizeof *ko), *vo = malloc(n * sizeof *vo);
        QuantSpec qk = spec_of(SCHEME_INT_MIN, GRAN_GROUP_TOKENS), qv = qk;
        qk.bits = qv.bits = s.bits;
        qk.gran.size = qv.gran.size = s.group;
        qv.gran.kind = GRAN_GROUP_CHANNELS;
        if (it % 2) {
            tie_matrix(&r, &qk, tokens, d, k);
            tie_matrix(&r, &qv, tokens, d, v);
        } else {
            build_ties(&r, &qk, tokens, d, &TIES_NORMAL, k, kw);
            build_ties(&r, &qv, tokens, d, &TIES_SUBNORMAL, v, vw);
        }
        integer_exact(&qk, k, tokens, d, kw, &ties);
        integer_exact(&qv, v, tokens, d, vw, &ties);
        ck_assert_int_eq(kivi_ref(&s, k, v, tokens, d, ko, vo, NULL), 0);
        for (size_t i = 0; i < n; i++) {
            ck_assert_seeded(ko[i] == kw[i], "KIVI %u-bit key %a -> %a, want %a", s.bits, k[i], ko[i], kw[i]);
            ck_assert_seeded(vo[i] == vw[i], "KIVI %u-bit value %a -> %a, want %a", s.bits, v[i], vo[i], vw[i]);
        }
        free(k), free(v), free(kw), free(vw), free(ko), free(vo);
    }
}
END_TEST

/* The reproductions by hand: 4.5 in [0, 9] at 3 bits is the quotient 3.5
 * exactly, code 4 (36/7 = 5.142857), not 3 (27/7); and 4.5 in [2^-70, 9]
 * is a hair below the half, code 3, which a quotient computed in double
 * (4.5 - 2^-70 rounds to 4.5) would put on 4. */
START_TEST(integer_ties_by_hand)
{
    QuantSpec q = spec_of(SCHEME_INT_MIN, GRAN_TOKEN);
    q.bits = 3;
    float x[4] = {0, 9, 4.5f, 1}, out[4];
    ck_assert_int_eq(quantize_ref(&q, x, 1, 4, out, NULL), 0);
    ck_assert_float_eq(out[2], (float)(4 * (9.0 / 7)));
    x[0] = ldexpf(1, -70);
    ck_assert_int_eq(quantize_ref(&q, x, 1, 4, out, NULL), 0);
    ck_assert_float_eq(out[2], (float)((double)x[0] + 3 * ((9.0 - x[0]) / 7)));
    assert_exact(&q, x, 1, 4);
}
END_TEST

/* Random matrices whose groups span up to 60 binades (a value near a half
 * of a range far larger than itself), at magnitudes from subnormal
 * (2^-149) to 2^100, every integer scheme, bit width and granularity:
 * quantize_ref equals the exact reference. */
START_TEST(integer_matches_reference_random)
{
    Rng r = {test_seed() ^ 0x2EF};
    for (int it = 0; it < 400; it++) {
        QuantSpec q = spec_of((Scheme)rng_range(&r, SCHEME_INT_SYM, SCHEME_INT_ZP), GRAN_TENSOR);
        q.bits = (unsigned)rng_range(&r, QUANT_BITS_MIN, QUANT_BITS_MAX);
        q.gran = any_granularity(&r);
        size_t rows = rng_range(&r, 1, 40), cols = rng_range(&r, 1, 40), n = rows * cols;
        float *x = malloc(n * sizeof *x);
        int top = (int)rng_range(&r, 0, 249) - 149, span = (int)rng_range(&r, 0, 60);
        float shift = it % 2 ? ldexpf(rng_uniform(&r, 1), top) : 0;   // ranges away from 0 too
        for (size_t i = 0; i < n; i++)
            x[i] = shift + ldexpf(rng_uniform(&r, 1), top - (int)rng_range(&r, 0, (uint64_t)span));
        assert_exact(&q, x, rows, cols);
        free(x);
    }
}
END_TEST

/* experiment_most_moved: every token once; the first k by |score -
 * reference|, largest first, ties by the lower token; none of the rest
 * moved more than the k-th. Random scores from few values, so ties occur. */
START_TEST(most_moved_random)
{
    Rng r = {test_seed() ^ 0x3E7};
    for (int it = 0; it < 200; it++) {
        size_t T = rng_range(&r, 1, 60), k = rng_range(&r, 0, T + 2);
        ExperimentResult x = {.tokens = T};
        x.scores = malloc(T * sizeof *x.scores), x.scores_ref = malloc(T * sizeof *x.scores_ref);
        size_t *order = malloc(T * sizeof *order);
        bool *seen = calloc(T, sizeof *seen);
        for (size_t t = 0; t < T; t++) {
            x.scores_ref[t] = (double)rng_range(&r, 0, 4) - 2;
            x.scores[t] = x.scores_ref[t] + ((double)rng_range(&r, 0, 6) - 3) / 4;
        }
        size_t n = experiment_most_moved(&x, order, k);
        ck_assert_seeded(n == (k < T ? k : T), "%zu of %zu tokens for k = %zu", n, T, k);
        for (size_t i = 0; i < T; i++) {
            ck_assert_seeded(order[i] < T && !seen[order[i]], "token %zu twice or out of range", order[i]);
            seen[order[i]] = true;
        }
        for (size_t i = 0; i < n; i++) {
            double mi = fabs(x.scores[order[i]] - x.scores_ref[order[i]]);
            if (i + 1 < n) {
                double mn = fabs(x.scores[order[i + 1]] - x.scores_ref[order[i + 1]]);
                ck_assert_seeded(mi > mn || (mi == mn && order[i] < order[i + 1]),
                                 "positions %zu, %zu out of order", i, i + 1);
            }
            for (size_t j = n; j < T; j++) {
                double mj = fabs(x.scores[order[j]] - x.scores_ref[order[j]]);
                ck_assert_seeded(mi > mj || (mi == mj && order[i] < order[j]),
                                 "token %zu left out before %zu", order[j], order[i]);
            }
        }
        free(x.scores), free(x.scores_ref), free(order), free(seen);
    }
}
END_TEST

/* experiment_most_moved by hand: moves 0, 2, 2, 1 give tokens 1 and 2 (the
 * tie, lower token first), then 3; k = 0 leaves token order. */
START_TEST(most_moved_fixed)
{
    double ref[] = {0, 0, 0, 0}, score[] = {0, -2, 2, 1};
    ExperimentResult x = {.tokens = 4, .scores = score, .scores_ref = ref};
    size_t order[4];
    ck_assert_uint_eq(experiment_most_moved(&x, order, 3), 3);
    ck_assert(order[0] == 1 && order[1] == 2 && order[2] == 3 && order[3] == 0);
    ck_assert_uint_eq(experiment_most_moved(&x, order, 0), 0);
    ck_assert(order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3);
}
END_TEST

/* FP8 with a dynamic scale: each element within half an ulp of E4M3
 * (2^-4 relative) or half the smallest subnormal step (s x 2^-10). */
START_TEST(fp8_bounds_random)
{
    Rng r = {test_seed() ^ 0xF8};
    for (int it = 0; it < 200; it++) {
        Sample m = sample_new(&r, 64, 64, (float)rng_range(&r, 1, 1000) / 10);
        QuantSpec q = spec_of(SCHEME_FP8, GRAN_TOKEN);
        ck_assert_int_eq(quantize_ref(&q, m.x, m.rows, m.cols, m.out, NULL), 0);
        for (size_t row = 0; row < m.rows; row++) {
            const float *x = m.x + row * m.cols, *o = m.out + row * m.cols;
            float s = amax_of(x, m.cols) / 448.0f;
            for (size_t c = 0; c < m.cols; c++) {
                float bound = fmaxf(fabsf(x[c]) * ldexpf(1, -4), s * ldexpf(1, -10));
                ck_assert_seeded(fabsf(o[c] - x[c]) <= bound * (1 + BOUND_REL_SLACK), "fp8: %g -> %g",
                                 x[c], o[c]);
            }
        }
        sample_free(&m);
    }
}
END_TEST

/* NVFP4: |x^ - x| <= s, s = amax_block / 6 x 17/16 (E2M1's widest half
 * step is 1, the E4M3 block scale is within 1/16); MXFP4: <= 2 s with
 * s = 2^(floor(log2 amax) - 2), values up to 8 s clamped to 6 s. */
START_TEST(fp4_bounds_random)
{
    Rng r = {test_seed() ^ 0xF4};
    for (int it = 0; it < 200; it++) {
        Sample m = sample_new(&r, 16, 100, (float)rng_range(&r, 1, 1000) / 10);
        for (int mx = 0; mx < 2; mx++) {
            QuantSpec q = spec_of(mx ? SCHEME_MXFP4 : SCHEME_NVFP4, GRAN_TOKEN);   // blocks are fixed
            size_t block = mx ? 32 : 16;
            ck_assert_int_eq(quantize_ref(&q, m.x, m.rows, m.cols, m.out, NULL), 0);
            for (size_t row = 0; row < m.rows; row++)
                for (size_t c0 = 0; c0 < m.cols; c0 += block) {
                    size_t n = m.cols - c0 < block ? m.cols - c0 : block;
                    const float *x = m.x + row * m.cols + c0, *o = m.out + row * m.cols + c0;
                    float amax = amax_of(x, n);
                    float bound = mx ? 2 * ldexpf(1, ilogbf(amax) - 2) : amax / 6 * 17 / 16;
                    for (size_t i = 0; i < n; i++)
                        ck_assert_seeded(within_bound(o[i], x[i], bound), "%s: %g -> %g, bound %g",
                                         mx ? "mxfp4" : "nvfp4", x[i], o[i], bound);
                }
        }
        sample_free(&m);
    }
}
END_TEST

/* Granularities agree with each other: per channel on X is per token on X
 * transposed; group:G with G >= channels is per token; tgroup:G with
 * G >= tokens is per channel. */
START_TEST(granularity_consistency)
{
    Rng r = {test_seed() ^ 0x6A};
    for (int it = 0; it < 100; it++) {
        size_t rows = rng_range(&r, 1, 40), cols = rng_range(&r, 1, 40), n = rows * cols;
        float *x = fill_random(&r, n, 10), *xt = malloc(n * sizeof *xt);
        float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++)
                xt[j * rows + i] = x[i * cols + j];
        QuantSpec q = spec_of(SCHEME_INT_MIN, GRAN_CHANNEL);
        q.bits = (unsigned)rng_range(&r, 2, 8);
        ck_assert_int_eq(quantize_ref(&q, x, rows, cols, a, NULL), 0);
        q.gran.kind = GRAN_TOKEN;
        ck_assert_int_eq(quantize_ref(&q, xt, cols, rows, b, NULL), 0);
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++)
                ck_assert_float_eq(a[i * cols + j], b[j * rows + i]);
        q.gran = (Granularity){GRAN_GROUP_CHANNELS, cols + rng_range(&r, 0, 5)};
        ck_assert_int_eq(quantize_ref(&q, x, rows, cols, b, NULL), 0);
        q.gran.kind = GRAN_TOKEN;
        ck_assert_int_eq(quantize_ref(&q, x, rows, cols, a, NULL), 0);
        ck_assert_mem_eq(a, b, n * sizeof *a);
        q.gran = (Granularity){GRAN_GROUP_TOKENS, rows + rng_range(&r, 0, 5)};
        ck_assert_int_eq(quantize_ref(&q, x, rows, cols, b, NULL), 0);
        q.gran.kind = GRAN_CHANNEL;
        ck_assert_int_eq(quantize_ref(&q, x, rows, cols, a, NULL), 0);
        ck_assert_mem_eq(a, b, n * sizeof *a);
        free(x), free(xt), free(a), free(b);
    }
}
END_TEST

/* KIVI: the residual window (and keys short of a whole group) is BF16;
 * the rest of the keys is quantized per channel over 32 tokens, values per
 * token in groups of 32 channels. */
START_TEST(kivi_layout)
{
    Rng r = {test_seed() ^ 0x41F1};
    size_t T = 200, D = 64, R = 50;
    float *k = fill_random(&r, T * D, 5), *v = fill_random(&r, T * D, 5);
    float *kq = malloc(T * D * sizeof *kq), *vq = malloc(T * D * sizeof *vq);
    float *ref = malloc(T * D * sizeof *ref);
    KiviSpec s = {2, 32, R};
    ck_assert_int_eq(kivi_ref(&s, k, v, T, D, kq, vq, NULL), 0);
    size_t old = T - R, kq_tokens = old / 32 * 32;      // 150 -> 128
    for (size_t i = kq_tokens * D; i < T * D; i++)
        ck_assert_float_eq(kq[i], bf16_round(k[i]));
    for (size_t i = old * D; i < T * D; i++)
        ck_assert_float_eq(vq[i], bf16_round(v[i]));
    QuantSpec q = spec_of(SCHEME_INT_MIN, GRAN_GROUP_TOKENS);
    q.bits = 2;
    q.gran.size = 32;
    ck_assert_int_eq(quantize_ref(&q, k, kq_tokens, D, ref, NULL), 0);
    ck_assert_mem_eq(kq, ref, kq_tokens * D * sizeof *ref);
    q.gran.kind = GRAN_GROUP_CHANNELS;
    ck_assert_int_eq(quantize_ref(&q, v, old, D, ref, NULL), 0);
    ck_assert_mem_eq(vq, ref, old * D * sizeof *ref);
    free(k), free(v), free(kq), free(vq), free(ref);
}
END_TEST

/* Hadamard: orthonormal (applied twice is the identity, dot products
 * kept) and it spreads a one-channel outlier evenly over all channels. */
START_TEST(hadamard_rotation)
{
    Rng r = {test_seed() ^ 0xADA};
    size_t D = 128;
    float *x = fill_random(&r, 2 * D, 3), *y = malloc(2 * D * sizeof *y);
    memcpy(y, x, 2 * D * sizeof *y);
    double dot = 0, dot2 = 0;
    for (size_t i = 0; i < D; i++)
        dot += (double)x[i] * x[D + i];
    ck_assert_int_eq(hadamard_rows(y, 2, D, NULL), 0);
    for (size_t i = 0; i < D; i++)
        dot2 += (double)y[i] * y[D + i];
    ck_assert_double_eq_tol(dot, dot2, ROTATED_DOT_TOL);
    hadamard_rows(y, 2, D, NULL);
    for (size_t i = 0; i < 2 * D; i++)
        ck_assert_double_eq_tol(y[i], x[i], F32_TOL);
    float spike[128] = {0};
    spike[17] = 20;
    hadamard_rows(spike, 1, D, NULL);
    for (size_t i = 0; i < D; i++)
        ck_assert_double_eq_tol(fabsf(spike[i]), 20 / sqrt(128.0), F32_TOL);
    Error e;
    ck_assert_int_eq(hadamard_rows(y, 1, 96, &e), -1);
    free(x), free(y);
}
END_TEST

/* q.k with q at position m + dist and k at m, written out from RoPE's
 * definition: the unrotated q against k with each pair (i, i + D/2) turned
 * back by dist x theta^(-2i/D), whatever m is. */
static double rope_dot(const float *q, const float *k, size_t D, size_t dist, double theta)
{
    double dot = 0;
    for (size_t i = 0; i < D / 2; i++) {
        double ang = (double)dist * pow(theta, -2.0 * (double)i / (double)D);
        double qa = q[i], qb = q[i + D / 2], ka = k[i], kb = k[i + D / 2];
        dot += (qa * ka + qb * kb) * cos(ang) + (qa * kb - qb * ka) * sin(ang);
    }
    return dot;
}

/* RoPE keeps each pair's length, and q.k after RoPE depends only on the
 * distance between the two positions, as its definition gives it; at a
 * head dimension of one block of rope_apply's pairs and at one of more. */
START_TEST(rope_relative)
{
    static const size_t DIMS[] = {64, 160};
    Rng r = {test_seed() ^ 0x2023};
    for (size_t di = 0; di < N_OF(DIMS); di++) {
        size_t D = DIMS[di];
        float *q = fill_random(&r, D, 1), *k = fill_random(&r, D, 1);
        double want = rope_dot(q, k, D, 10, 10000);
        for (size_t shift = 0; shift < 5; shift++) {
            float a[160], b[160];
            memcpy(a, q, D * sizeof *a);
            memcpy(b, k, D * sizeof *b);
            size_t m = 100 + 37 * shift;
            ck_assert_int_eq(rope_apply(a, 1, D, m + 10, 10000, NULL), 0);
            ck_assert_int_eq(rope_apply(b, 1, D, m, 10000, NULL), 0);
            double dot = 0;
            for (size_t i = 0; i < D; i++)
                dot += (double)a[i] * b[i];
            ck_assert_double_eq_tol(dot, want, ROTATED_DOT_TOL);
            for (size_t i = 0; i < D / 2; i++)
                ck_assert_double_eq_tol(hypot(b[i], b[i + D / 2]), hypot(k[i], k[i + D / 2]), F32_TOL);
        }
        free(q), free(k);
    }
}
END_TEST

/* Rows of one call are positions first, first + 1, ...: the same, bit for
 * bit, as one call a row; at a head dimension whose 80 pairs take one
 * whole block of rope_apply's and part of another. */
START_TEST(rope_rows)
{
    Rng r = {test_seed() ^ 0x2024};
    size_t D = 160, rows = 5;
    float *x = fill_random(&r, rows * D, 1), *y = malloc(rows * D * sizeof *y);
    memcpy(y, x, rows * D * sizeof *y);
    ck_assert_int_eq(rope_apply(x, rows, D, 7, 10000, NULL), 0);
    for (size_t i = 0; i < rows; i++)
        ck_assert_int_eq(rope_apply(y + i * D, 1, D, 7 + i, 10000, NULL), 0);
    ck_assert_seeded(!memcmp(x, y, rows * D * sizeof *y), "rows differ from single-row calls");
    free(x), free(y);
}
END_TEST

/* 4-bit keys per token and per channel, values exact, on one cache. */
static void token_and_channel(const float *k, const float *v, const float *q, size_t T, size_t D,
                              ExperimentResult *tok, ExperimentResult *chan)
{
    Experiment x;
    experiment_init(&x);
    x.values_exact = true;
    x.key.gran.kind = GRAN_TOKEN;
    ck_assert_int_eq(experiment_run(&x, k, v, q, T, D, tok, NULL), 0);
    x.key.gran.kind = GRAN_CHANNEL;
    ck_assert_int_eq(experiment_run(&x, k, v, q, T, D, chan, NULL), 0);
}

/* The generator's rows written in pieces, in a random order, are the rows
 * kvgen writes, bit for bit (each row draws from its own place in the
 * stream: rand_skip(n) is n draws); random cuts, random parameters. */
START_TEST(generator_in_pieces)
{
    Rng r = {test_seed()};
    Rand a = {rng_next(&r)}, b = a;
    uint64_t n = rng_range(&r, 0, 1000);
    for (uint64_t i = 0; i < n; i++)
        rand_u64(&a);
    rand_skip(&b, n);
    ck_assert_uint_eq(rand_u64(&a), rand_u64(&b));
    for (int round = 0; round < 20; round++) {
        KvGenParams p;
        kvgen_defaults(&p);
        p.seed = rng_next(&r);
        p.tokens = (size_t)rng_range(&r, 8, 600);
        p.head_dim = 2 * (size_t)rng_range(&r, 2, 80);
        p.outlier_channels = (unsigned)rng_range(&r, 0, 3);
        p.rope_theta = rng_range(&r, 0, 1) ? 10000 : 0;
        const size_t T = p.tokens, D = p.head_dim;
        float *k = malloc(T * D * 4), *v = malloc(T * D * 4), *q = malloc(D * 4);
        float *k2 = malloc(T * D * 4), *v2 = malloc(T * D * 4), *q2 = malloc(D * 4);
        ck_assert_int_eq(kvgen(&p, k, v, q, NULL), 0);
        KvGenPlan plan;
        ck_assert_int_eq(kvgen_plan(&p, &plan, q2, NULL), 0);
        size_t cut[6] = {0, T};
        for (size_t i = 2; i < 6; i++)
            cut[i] = (size_t)rng_range(&r, 0, (int64_t)T);
        for (size_t i = 1; i < 6; i++)          // sorted: five pieces, some maybe empty
            for (size_t j = i; j > 0 && cut[j] < cut[j - 1]; j--) {
                size_t x = cut[j];
                cut[j] = cut[j - 1], cut[j - 1] = x;
            }
        for (size_t i = 5; i > 0; i--)          // last piece first
            kvgen_rows(&plan, cut[i - 1], cut[i], k2, v2);
        ck_assert_int_eq(kvgen_finish(&plan, k2, v2, q2, NULL), 0);
        ck_assert_seeded(!memcmp(k, k2, T * D * 4) && !memcmp(v, v2, T * D * 4) && !memcmp(q, q2, D * 4),
                         "round %d: %zu tokens, head dim %zu", round, T, D);
        free(k), free(v), free(q), free(k2), free(v2), free(q2);
    }
}
END_TEST

/* The generator: a seed means the same cache and another seed another one;
 * outlier channels stand out by about their scale; the sink outscores every
 * other token; and on such a cache per-token 4-bit keys lose several times
 * more than per-channel keys. Margins on a random seed (outliers 0.75 x
 * their scale, K error 3x, score error 1.5x) sit below the smallest ratios
 * seen over 5,000 seeds (1.22 x, 3.92x, 2.24x). Two rules hold only on
 * most seeds, so they are checked on the default seed: the sink (outscored
 * on 115 of those seeds) and the softmax of the one query, which follows
 * the score errors only on average (its TV ratio ranged from 0.93x up; on
 * the default seed it is 4.17x, with a margin of 3x). */
START_TEST(generator_and_collapse)
{
    const double OUTLIER_MARGIN = 0.75, K_ERROR_MARGIN = 3, SCORE_ERROR_MARGIN = 1.5,
                 TV_MARGIN = 3;
    KvGenParams p;
    kvgen_defaults(&p);
    p.seed = test_seed();
    size_t T = p.tokens, D = p.head_dim;
    float *k = malloc(T * D * 4), *v = malloc(T * D * 4), *q = malloc(D * 4);
    float *k2 = malloc(T * D * 4), *v2 = malloc(T * D * 4), *q2 = malloc(D * 4);
    ck_assert_int_eq(kvgen(&p, k, v, q, NULL), 0);
    ck_assert_int_eq(kvgen(&p, k2, v2, q2, NULL), 0);
    ck_assert_mem_eq(k, k2, T * D * 4);
    ck_assert_mem_eq(v, v2, T * D * 4);
    ck_assert_mem_eq(q, q2, D * 4);
    KvGenParams next = p;
    next.seed = p.seed + 1;
    ck_assert_int_eq(kvgen(&next, k2, v2, q2, NULL), 0);
    ck_assert(memcmp(k, k2, T * D * 4) != 0 && memcmp(v, v2, T * D * 4) != 0);
    size_t ch[2];
    kvgen_outlier_channels(&p, ch, 2);
    double out_mag = 0, other = 0;
    for (size_t t = 1; t < T; t++)
        for (size_t c = 0; c < D; c++) {
            if (c == ch[0])
                out_mag += fabsf(k[t * D + c]);
            else if (c != ch[1])
                other += fabsf(k[t * D + c]);
        }
    out_mag /= (double)(T - 1);
    other /= (double)((T - 1) * (D - 2));
    ck_assert_seeded(out_mag / other > OUTLIER_MARGIN * p.outlier_scale, "outlier ratio %g",
                     out_mag / other);

    ExperimentResult tok, chan;
    token_and_channel(k, v, q, T, D, &tok, &chan);
    ck_assert_seeded(tok.err.rel_fro_k > K_ERROR_MARGIN * chan.err.rel_fro_k, "token %g channel %g",
                     tok.err.rel_fro_k, chan.err.rel_fro_k);
    ck_assert_seeded(tok.err.max_score_error > SCORE_ERROR_MARGIN * chan.err.max_score_error,
                     "max score error: token %g channel %g", tok.err.max_score_error,
                     chan.err.max_score_error);
    experiment_result_free(&tok);
    experiment_result_free(&chan);

    kvgen_defaults(&p);
    ck_assert_int_eq(kvgen(&p, k, v, q, NULL), 0);
    token_and_channel(k, v, q, T, D, &tok, &chan);
    for (size_t t = 1; t < T; t++)
        ck_assert_msg(tok.scores_ref[0] > tok.scores_ref[t], "token %zu outscores the sink", t);
    ck_assert_msg(tok.err.softmax_tv > TV_MARGIN * chan.err.softmax_tv,
                  "softmax TV: token %g channel %g", tok.err.softmax_tv, chan.err.softmax_tv);
    experiment_result_free(&tok);
    experiment_result_free(&chan);
    free(k), free(v), free(q), free(k2), free(v2), free(q2);
}
END_TEST

/* Exact blocks: MXFP4's shared exponent is floor(log2 amax) - 2 (7.9 ->
 * 2^0, so 7.9 clamps to 6); NVFP4's block scale is E4M3(amax / 6 / s_t)
 * with s_t = tensor amax / (448 x 6) (a block holding the tensor's amax
 * gets exactly 448 x s_t, so its largest value maps to 6). */
START_TEST(fp4_exact_blocks)
{
    float mx_in[32] = {7.9f, 3.0f, -0.26f, 0.24f, 1.2f, -5.0f}, mx_out[32];
    QuantSpec q = spec_of(SCHEME_MXFP4, GRAN_TOKEN);     // blocks are fixed
    ck_assert_int_eq(quantize_ref(&q, mx_in, 1, 32, mx_out, NULL), 0);
    static const float MX_WANT[6] = {6.0f, 3.0f, -0.5f, 0.0f, 1.0f, -4.0f};
    for (int i = 0; i < 6; i++)
        ck_assert_msg(mx_out[i] == MX_WANT[i], "mxfp4[%d] = %g, want %g", i, mx_out[i], MX_WANT[i]);
    float half[32] = {0.3f, -0.1f};       /* amax 0.3 = 1.2 x 2^-2: scale 2^-4 */
    ck_assert_int_eq(quantize_ref(&q, half, 1, 32, mx_out, NULL), 0);
    ck_assert_float_eq(mx_out[0], 0.25f);       /* 0.3 / 2^-4 = 4.8 -> 4 */
    ck_assert_float_eq(mx_out[1], -0.09375f);   /* -0.1 / 2^-4 = -1.6 -> -1.5 */
    float nv_in[16] = {12.0f, -3.0f, 1.0f, 0.2f}, nv_out[16];
    q.scheme = SCHEME_NVFP4;
    ck_assert_int_eq(quantize_ref(&q, nv_in, 1, 16, nv_out, NULL), 0);
    /* s_t = 12 / 2688; block scale E4M3(12 / 6 / s_t = 448) = 448; s = 2 */
    static const float NV_WANT[4] = {12.0f, -3.0f, 1.0f, 0.0f};
    for (int i = 0; i < 4; i++)
        ck_assert_msg(fabsf(nv_out[i] - NV_WANT[i]) < F32_TOL, "nvfp4[%d] = %g", i, nv_out[i]);
}
END_TEST

/* The sink's share of attention under RoPE: softmax(q.k / sqrt D) of
 * token 0, keys generated with or without the RoPE-aware sink. */
static double sink_share(uint64_t seed, double theta)
{
    KvGenParams p;
    kvgen_defaults(&p);
    p.seed = seed;
    p.rope_theta = theta;
    size_t T = p.tokens, D = p.head_dim;
    float *k = malloc(T * D * 4), *v = malloc(T * D * 4), *q = malloc(D * 4);
    ck_assert_int_eq(kvgen(&p, k, v, q, NULL), 0);
    Experiment x;
    experiment_init(&x);
    x.rope = ROPE_POST;
    x.values_exact = true;
    ExperimentResult r;
    ck_assert_int_eq(experiment_run(&x, k, v, q, T, D, &r, NULL), 0);
    double mx = -INFINITY, sum = 0;
    for (size_t t = 0; t < T; t++)
        mx = fmax(mx, r.scores_ref[t] / sqrt((double)D));
    for (size_t t = 0; t < T; t++)
        sum += exp(r.scores_ref[t] / sqrt((double)D) - mx);
    double share = exp(r.scores_ref[0] / sqrt((double)D) - mx) / sum;
    experiment_result_free(&r);
    free(k), free(v), free(q);
    return share;
}

/* Under RoPE the attention sink keeps a large share of attention: leaning
 * it toward the query as RoPE will turn it gives it, averaged over 64
 * seeds, more than 10% and over three times what it gets when generated as
 * if there were no RoPE. One seed alone varies too much to judge, and so
 * does a mean of 16 (its ratio fell to 2.86 in one run of thousands, 3.1
 * at the least in 600 others); means of 64 stayed above 3.7 in 100 runs. */
START_TEST(sink_survives_rope)
{
    const double SHARE_MIN = 0.1, GAIN_MIN = 3;
    const uint64_t SEEDS = 64;
    double with = 0, without = 0;
    for (uint64_t i = 0; i < SEEDS; i++) {
        with += sink_share(test_seed() + i, ROPE_THETA_LLAMA3) / SEEDS;
        without += sink_share(test_seed() + i, 0) / SEEDS;
    }
    ck_assert_seeded(with > SHARE_MIN && with > GAIN_MIN * without, "mean sink share %g, %g without", with,
                     without);
}
END_TEST

Suite *suite_quant(void)
{
    Suite *s = suite_create("quant");
    TCase *t = tcase_create("quantizers");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, worked_example);
    tcase_add_test(t, generator_in_pieces);
    tcase_add_test(t, fp8_scales);
    tcase_add_test(t, integer_bounds_random);
    tcase_add_test(t, integer_ties_to_even);
    tcase_add_test(t, kivi_ties_to_even);
    tcase_add_test(t, integer_ties_any_step);
    tcase_add_test(t, integer_ties_by_hand);
    tcase_add_test(t, integer_matches_reference_random);
    tcase_add_test(t, most_moved_random);
    tcase_add_test(t, most_moved_fixed);
    tcase_add_test(t, fp8_bounds_random);
    tcase_add_test(t, fp4_bounds_random);
    tcase_add_test(t, granularity_consistency);
    tcase_add_test(t, kivi_layout);
    tcase_add_test(t, hadamard_rotation);
    tcase_add_test(t, rope_relative);
    tcase_add_test(t, rope_rows);
    tcase_add_test(t, generator_and_collapse);
    tcase_add_test(t, fp4_exact_blocks);
    tcase_add_test(t, sink_survives_rope);
    suite_add_tcase(s, t);
    return s;
}
