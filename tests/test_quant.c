/* test_quant.c - quantizers, rotations, the generator and the error chain:
 * the seeds' worked examples exactly, and every quantizer within its
 * documented error bound on fresh seeded random data. */
#include "testutil.h"

#include "experiment.h"
#include "kvgen.h"
#include "quant.h"
#include "rotate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tolerance for float32 arithmetic on values of order 1..100: a few ulps. */
#define F32_TOL 1e-5

static float *fill_random(Rng *r, size_t n, float spread)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = spread * ((float)(rng_next(r) >> 40) / (float)(1 << 24) * 2 - 1);
    return x;
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
            ck_assert_msg(fabs(r.scores[t] - T[i].s[t]) < 1e-4, "score %d: %g", t, r.scores[t]);
        ck_assert_double_eq_tol(r.scores_ref[2], 0.9, F32_TOL);
        ck_assert_double_eq_tol(r.err.max_score_error, T[i].max, 1e-4);
        ck_assert_double_eq_tol(r.err.rel_fro_k, T[i].fro, 1e-4);
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
    QuantSpec q;
    quant_spec_init(&q);
    q.scheme = SCHEME_FP8;
    q.gran.kind = GRAN_TOKEN;
    ck_assert_int_eq(quantize_ref(&q, a, 1, 3, out, NULL), 0);
    ck_assert_double_eq_tol(out[0], 0.0098, 5e-5);
    ck_assert_float_eq(out[2], 3.2f);                      // the max lands on 448 exactly
    ck_assert_int_eq(quantize_ref(&q, b, 1, 3, out, NULL), 0);
    ck_assert_double_eq_tol(out[2], 180.0, F32_TOL);
    q.static_scale = 120.0f / 448.0f;
    ck_assert_int_eq(quantize_ref(&q, a, 1, 3, out, NULL), 0);
    ck_assert_double_eq_tol(out[0], 0.0105, 5e-5);
    ck_assert_double_eq_tol(fabs(out[0] - 0.01) / 0.01, 0.046, 0.001);
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

/* The groups a granularity makes: returns the group count and fills, for
 * each element, its group index. */
static size_t group_ids(const Granularity *g, size_t rows, size_t cols, size_t *id)
{
    size_t n = 0;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            size_t k;
            switch (g->kind) {
            case GRAN_TENSOR: k = 0; break;
            case GRAN_TOKEN: k = r; break;
            case GRAN_CHANNEL: k = c; break;
            case GRAN_GROUP_CHANNELS: k = r * ((cols + g->size - 1) / g->size) + c / g->size; break;
            default: k = c * ((rows + g->size - 1) / g->size) + r / g->size; break;
            }
            id[r * cols + c] = k;
            n = k + 1 > n ? k + 1 : n;
        }
    return n;
}

/* Integer schemes: every element is within half a step of its group's grid
 * (s / 2, s from the group's range), and int-zp stores 0 exactly. Fresh
 * random matrices, shapes, bit widths and granularities. */
START_TEST(integer_bounds_random)
{
    Rng r = {test_seed() ^ 0x1A7};
    for (int it = 0; it < 300; it++) {
        size_t rows = rng_range(&r, 1, 70), cols = rng_range(&r, 1, 70);
        float *x = fill_random(&r, rows * cols, (float)rng_range(&r, 1, 100));
        if (it % 3 == 0)
            x[0] = 0;
        float *out = malloc(rows * cols * sizeof *out);
        size_t *id = malloc(rows * cols * sizeof *id);
        QuantSpec q;
        quant_spec_init(&q);
        q.scheme = (Scheme)rng_range(&r, SCHEME_INT_SYM, SCHEME_INT_ZP);
        q.bits = (unsigned)rng_range(&r, 2, 8);
        q.gran.kind = (GranKind)rng_range(&r, GRAN_TENSOR, GRAN_GROUP_TOKENS);
        q.gran.size = rng_range(&r, 1, 40);
        ck_assert_int_eq(quantize_ref(&q, x, rows, cols, out, NULL), 0);
        size_t ng = group_ids(&q.gran, rows, cols, id);
        float *lo = malloc(ng * sizeof *lo), *hi = malloc(ng * sizeof *hi);
        for (size_t k = 0; k < ng; k++)
            lo[k] = INFINITY, hi[k] = -INFINITY;
        for (size_t i = 0; i < rows * cols; i++) {
            lo[id[i]] = fminf(lo[id[i]], x[i]);
            hi[id[i]] = fmaxf(hi[id[i]], x[i]);
        }
        for (size_t i = 0; i < rows * cols; i++) {
            float step = quant_int_step(&q, lo[id[i]], hi[id[i]]);
            ck_assert_msg(fabsf(out[i] - x[i]) <= step / 2 * (1 + 1e-4f) + 1e-6f,
                          "%s %u-bit: |%g - %g| > step %g / 2 (seed %llu)", scheme_str(q.scheme),
                          q.bits, out[i], x[i], step, (unsigned long long)test_seed());
        }
        if (q.scheme == SCHEME_INT_ZP && it % 3 == 0)
            ck_assert_float_eq(out[0], 0.0f);
        free(x), free(out), free(id), free(lo), free(hi);
    }
}
END_TEST

/* FP8 with a dynamic scale: each element within half an ulp of E4M3
 * (2^-4 relative) or half the smallest subnormal step (s x 2^-10). */
START_TEST(fp8_bounds_random)
{
    Rng r = {test_seed() ^ 0xF8};
    for (int it = 0; it < 200; it++) {
        size_t rows = rng_range(&r, 1, 64), cols = rng_range(&r, 1, 64);
        float *x = fill_random(&r, rows * cols, (float)rng_range(&r, 1, 1000) / 10);
        float *out = malloc(rows * cols * sizeof *out);
        QuantSpec q;
        quant_spec_init(&q);
        q.scheme = SCHEME_FP8;
        q.gran.kind = GRAN_TOKEN;
        ck_assert_int_eq(quantize_ref(&q, x, rows, cols, out, NULL), 0);
        for (size_t row = 0; row < rows; row++) {
            float amax = 0;
            for (size_t c = 0; c < cols; c++)
                amax = fmaxf(amax, fabsf(x[row * cols + c]));
            float s = amax / 448.0f;
            for (size_t c = 0; c < cols; c++) {
                float v = x[row * cols + c], o = out[row * cols + c];
                float bound = fmaxf(fabsf(v) * 0.0625f, s * ldexpf(1, -10));
                ck_assert_msg(fabsf(o - v) <= bound * (1 + 1e-4f), "fp8: %g -> %g", v, o);
            }
        }
        free(x), free(out);
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
        size_t rows = rng_range(&r, 1, 16), cols = rng_range(&r, 1, 100);
        float *x = fill_random(&r, rows * cols, (float)rng_range(&r, 1, 1000) / 10);
        float *out = malloc(rows * cols * sizeof *out);
        for (int mx = 0; mx < 2; mx++) {
            QuantSpec q;
            quant_spec_init(&q);
            q.scheme = mx ? SCHEME_MXFP4 : SCHEME_NVFP4;
            size_t block = mx ? 32 : 16;
            ck_assert_int_eq(quantize_ref(&q, x, rows, cols, out, NULL), 0);
            for (size_t row = 0; row < rows; row++)
                for (size_t c0 = 0; c0 < cols; c0 += block) {
                    size_t n = cols - c0 < block ? cols - c0 : block;
                    float amax = 0;
                    for (size_t i = 0; i < n; i++)
                        amax = fmaxf(amax, fabsf(x[row * cols + c0 + i]));
                    float bound = mx ? 2 * ldexpf(1, ilogbf(amax) - 2) : amax / 6 * 17 / 16;
                    for (size_t i = 0; i < n; i++) {
                        float v = x[row * cols + c0 + i], o = out[row * cols + c0 + i];
                        ck_assert_msg(fabsf(o - v) <= bound * (1 + 1e-4f) + 1e-6f,
                                      "%s: %g -> %g, bound %g", mx ? "mxfp4" : "nvfp4", v, o, bound);
                    }
                }
        }
        free(x), free(out);
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
        QuantSpec q;
        quant_spec_init(&q);
        q.bits = (unsigned)rng_range(&r, 2, 8);
        q.gran.kind = GRAN_CHANNEL;
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
    QuantSpec q;
    quant_spec_init(&q);
    q.bits = 2;
    q.gran = (Granularity){GRAN_GROUP_TOKENS, 32};
    quantize_ref(&q, k, kq_tokens, D, ref, NULL);
    ck_assert_mem_eq(kq, ref, kq_tokens * D * sizeof *ref);
    q.gran = (Granularity){GRAN_GROUP_CHANNELS, 32};
    quantize_ref(&q, v, old, D, ref, NULL);
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
    ck_assert_double_eq_tol(dot, dot2, 1e-3);
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

/* RoPE keeps each pair's length, and q.k after RoPE depends only on the
 * distance between the two positions. */
START_TEST(rope_relative)
{
    Rng r = {test_seed() ^ 0x2023};
    size_t D = 64;
    float *q = fill_random(&r, D, 1), *k = fill_random(&r, D, 1);
    double first = 0;
    for (size_t shift = 0; shift < 5; shift++) {
        float a[64], b[64];
        memcpy(a, q, sizeof a);
        memcpy(b, k, sizeof b);
        size_t m = 100 + 37 * shift;
        rope_apply(a, 1, D, m + 10, 10000, NULL);
        rope_apply(b, 1, D, m, 10000, NULL);
        double dot = 0;
        for (size_t i = 0; i < D; i++)
            dot += (double)a[i] * b[i];
        if (shift == 0)
            first = dot;
        ck_assert_double_eq_tol(dot, first, 1e-3);
        for (size_t i = 0; i < D / 2; i++)
            ck_assert_double_eq_tol(hypot(b[i], b[i + D / 2]), hypot(k[i], k[i + D / 2]), 1e-4);
    }
    free(q), free(k);
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

/* The generator: a seed means the same cache; outlier channels stand out by
 * about their scale; the sink is the most-attended token; and on such a
 * cache per-token 4-bit keys lose several times more than per-channel keys.
 * Margins on a random seed (K error 3x, score error 1.5x) sit below the
 * smallest ratios seen over 5,000 seeds (3.92x, 2.24x). The softmax of the
 * one query follows the score errors only on average (its TV ratio ranged
 * from 0.93x up over those seeds), so it is checked on the default seed,
 * where it is 4.17x, with a margin of 3x. */
START_TEST(generator_and_collapse)
{
    KvGenParams p;
    kvgen_defaults(&p);
    p.seed = test_seed();
    size_t T = p.tokens, D = p.head_dim;
    float *k = malloc(T * D * 4), *v = malloc(T * D * 4), *q = malloc(D * 4);
    float *k2 = malloc(T * D * 4), *v2 = malloc(T * D * 4), *q2 = malloc(D * 4);
    ck_assert_int_eq(kvgen(&p, k, v, q, NULL), 0);
    ck_assert_int_eq(kvgen(&p, k2, v2, q2, NULL), 0);
    ck_assert_mem_eq(k, k2, T * D * 4);
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
    ck_assert_msg(out_mag / other > 15, "outlier ratio %g", out_mag / other);

    ExperimentResult tok, chan;
    token_and_channel(k, v, q, T, D, &tok, &chan);
    ck_assert_msg(tok.err.rel_fro_k > 3 * chan.err.rel_fro_k, "token %g channel %g",
                  tok.err.rel_fro_k, chan.err.rel_fro_k);
    ck_assert(tok.err.max_score_error > 1.5 * chan.err.max_score_error);
    experiment_result_free(&tok);
    experiment_result_free(&chan);

    kvgen_defaults(&p);
    ck_assert_int_eq(kvgen(&p, k, v, q, NULL), 0);
    token_and_channel(k, v, q, T, D, &tok, &chan);
    ck_assert_msg(tok.err.softmax_tv > 3 * chan.err.softmax_tv, "softmax TV: token %g channel %g",
                  tok.err.softmax_tv, chan.err.softmax_tv);
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
    QuantSpec q;
    quant_spec_init(&q);
    q.scheme = SCHEME_MXFP4;
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
        ck_assert_msg(fabsf(nv_out[i] - NV_WANT[i]) < 1e-5f, "nvfp4[%d] = %g", i, nv_out[i]);
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
 * it toward the query as RoPE will turn it gives it, averaged over 16
 * seeds, more than 10% and over three times what it gets when generated as
 * if there were no RoPE (one seed alone varies too much to judge). */
START_TEST(sink_survives_rope)
{
    double with = 0, without = 0;
    for (uint64_t i = 0; i < 16; i++) {
        with += sink_share(test_seed() + i, ROPE_THETA_LLAMA3) / 16;
        without += sink_share(test_seed() + i, 0) / 16;
    }
    ck_assert_msg(with > 0.1 && with > 3 * without, "mean sink share %g, %g without (seed %llu)",
                  with, without, (unsigned long long)test_seed());
}
END_TEST

Suite *suite_quant(void)
{
    Suite *s = suite_create("quant");
    TCase *t = tcase_create("quantizers");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, worked_example);
    tcase_add_test(t, fp8_scales);
    tcase_add_test(t, integer_bounds_random);
    tcase_add_test(t, fp8_bounds_random);
    tcase_add_test(t, fp4_bounds_random);
    tcase_add_test(t, granularity_consistency);
    tcase_add_test(t, kivi_layout);
    tcase_add_test(t, hadamard_rotation);
    tcase_add_test(t, rope_relative);
    tcase_add_test(t, generator_and_collapse);
    tcase_add_test(t, fp4_exact_blocks);
    tcase_add_test(t, sink_survives_rope);
    suite_add_tcase(s, t);
    return s;
}
