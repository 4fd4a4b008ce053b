/* test_kernels.c - the KV cache and the CPU decode kernel: quantize-on-
 * write stays within each format's bound and is calc's quantizers, the
 * cache's bytes are calc's, the random fill is what kv_fill.h says, the
 * CPU kernel matches a float64
 * attention over the dequantized cache on random shapes (odd lengths, every
 * GQA group), the KIVI window moves whole groups, and a sweep's time left
 * is foreseen from the points measured. */
#include "testutil.h"

#include "parallel.h"

#include "format.h"
#include "kv_attn.h"
#include "kv_bench.h"
#include "kv_cuda.h"
#include "kv_fill.h"
#include "minifloat.h"
#include "quant.h"

#include <math.h>
#include <unistd.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* CPU kernel against float64: float32 arithmetic over up to a few thousand
 * tokens stays well within this. */
#define CPU_VS_F64_TOL 2e-5

/* FP16: exact codes, rounding, overflow, and every code round trips. */
START_TEST(fp16_codec)
{
    ck_assert_uint_eq(fp16_bits(1.0f), 0x3C00);
    ck_assert_uint_eq(fp16_bits(65504.0f), 0x7BFF);
    ck_assert_uint_eq(fp16_bits(65519.0f), 0x7BFF);
    ck_assert_uint_eq(fp16_bits(65520.0f), 0x7C00);
    ck_assert_uint_eq(fp16_bits(0x1p-24f), 0x0001);
    ck_assert_uint_eq(fp16_bits(0x1p-25f), 0x0000);             // tie to even: 0
    ck_assert_uint_eq(fp16_bits(0.1f), 0x2E66);
    ck_assert_uint_eq(fp16_bits(-2.0f), 0xC000);
    for (uint32_t h = 0; h < 65536; h++) {
        float x = fp16_value((uint16_t)h);
        if (!isnan(x))
            ck_assert_msg(fp16_bits(x) == h, "code %04x -> %g -> %04x", h, x, fp16_bits(x));
    }
    ck_assert(bf16_value(bf16_bits(1.5f)) == 1.5f);
}
END_TEST

/* The E2M1 word layouts (kv_attn.h) are bijections: every 16-bit word is
 * four codes that give back the same word, and each code's bits land only
 * where kv_e2m1_code reads it. The kernels' conversions rely on the two
 * agreeing; the GPU suite checks those against this CPU reading. */
START_TEST(e2m1_words)
{
    const KvFormat fmts[] = {KV_NVFP4, KV_MXFP4};
    for (size_t f = 0; f < N_OF(fmts); f++) {
        for (unsigned w = 0; w < 65536; w++) {
            unsigned back = 0;
            for (unsigned i = 0; i < 4; i++)
                back |= kv_e2m1_bits(fmts[f], kv_e2m1_code(fmts[f], w, i), i);
            ck_assert_msg(back == w, "%s: word %04x -> %04x", kv_format_id(fmts[f]), w, back);
        }
        for (unsigned i = 0; i < 4; i++)
            for (unsigned code = 0; code < 16; code++)
                for (unsigned j = 0; j < 4; j++)
                    ck_assert_msg(kv_e2m1_code(fmts[f], kv_e2m1_bits(fmts[f], code, i), j) == (j == i ? code : 0),
                                  "%s: code %u at %u read at %u", kv_format_id(fmts[f]), code, i, j);
    }
}
END_TEST

static KvShape shape(KvFormat f, uint32_t B, uint32_t H, uint32_t G, uint32_t D, uint32_t cap)
{
    KvShape s = {f, B, H, H * G, D, cap, f == KV_INT4 ? 64 : 0, false};
    return s;
}

static void fill(Rng *r, float *x, size_t n, float spread)
{
    for (size_t i = 0; i < n; i++)
        x[i] = rng_uniform(r, spread);
}

/* Quantize-on-write then dequantize: within each format's bound of the
 * value written (relative to the largest magnitude of its scale group). */
START_TEST(write_read_bounds)
{
    Rng r = {test_seed() ^ 0xCAC4E};
    for (int f = 0; f < KV_FORMATS; f++) {
        KvShape s = shape((KvFormat)f, 2, 2, 1, 64, 256);
        KvCache c;
        ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
        uint32_t T = 200;
        size_t n = (size_t)s.batch * s.kv_heads * T * s.head_dim;
        float *k = malloc(n * 4), *v = malloc(n * 4), kd[256], vd[256];
        fill(&r, k, n, 3);
        fill(&r, v, n, 3);
        ck_assert_int_eq(kv_append(&c, k, v, T, NULL), 0);
        /* bound as a fraction of the tensor's amax (3): bf16 half an ulp,
         * fp8 half its relative step; nvfp4 E2M1's widest step (1 of 6)
         * widened by 1/16 for its E4M3 block scale; mxfp4 half a block's
         * amax, the clamp of values between 6 and 8 times its power-of-two
         * scale (fp4_matches_ref pins both to the reference exactly); int8
         * half a step widened by 1%
         * for its FP16 scale; int4 half a step of a group's range (6 / 15),
         * plus half the step's own FP16 rounding (2^-13 / 2), plus the BF16 rounding its
         * tokens took in the residual window before they were quantized.
         * The FP16 rounding of the step and minimum matters only for codes
         * clamped at 0 or 15, whose error it keeps under 15 x 2^-13 + 2^-10,
         * far below half a step. */
        static const double BOUND[KV_FORMATS] = {3 * 0x1p-8, 3 * 0.0625, 3.0 / 127 / 2 * 1.01,
                                                 6.0 / 15 / 2 + 0x1p-14 + 3 * 0x1p-8, 3.0 / 6 * 17 / 16,
                                                 3.0 / 2};
        for (uint32_t b = 0; b < s.batch; b++)
            for (uint32_t h = 0; h < s.kv_heads; h++)
                for (uint32_t t = 0; t < T; t++) {
                    kv_dequant(&c, b, h, t, kd, vd);
                    size_t off = (((size_t)b * s.kv_heads + h) * T + t) * s.head_dim;
                    for (uint32_t d = 0; d < s.head_dim; d++) {
                        ck_assert_seeded(fabs(kd[d] - k[off + d]) <= BOUND[f] + 1e-6, "%s k: %g vs %g",
                                         kv_format_id((KvFormat)f), kd[d], k[off + d]);
                        ck_assert_seeded(fabs(vd[d] - v[off + d]) <= BOUND[f] + 1e-6, "%s v: %g vs %g",
                                         kv_format_id((KvFormat)f), vd[d], v[off + d]);
                    }
                }
        free(k), free(v);
        kv_cache_done(&c);
    }
}
END_TEST

/* Steps and minimums that FP16 holds exactly, and values that BF16 (the
 * int4 window they wait in) holds exactly: integers to 250 times s / (2m). */
static const TieRange TIES_FP16 = {-10, 2, 7, 40};

/* The cache's int4 (KIVI) and int8 writers round as calc's int-min and
 * int-sym do: on exact halves, with steps FP16 stores exactly, every code
 * lands where kivi_ref and quantize_ref put it (half to even), bit for bit. */
START_TEST(integer_writers_round_as_calc)
{
    Rng r = {test_seed() ^ 0x7E4};
    enum { H = 2, T = 64, D = 64 };
    for (int it = 0; it < 20; it++) {
        KvFormat f = it % 2 ? KV_INT8 : KV_INT4;
        KvShape s = {f, 1, H, H, D, T, 0, false};
        KvCache c;
        ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
        static float k[H * T * D], v[H * T * D], kw[H * T * D], vw[H * T * D];
        for (int h = 0; h < H; h++) {
            QuantSpec q;
            quant_spec_init(&q);
            q.scheme = f == KV_INT8 ? SCHEME_INT_SYM : SCHEME_INT_MIN;
            q.bits = f == KV_INT8 ? 8 : 4;
            q.gran = f == KV_INT8 ? (Granularity){GRAN_TOKEN, 0} : (Granularity){GRAN_GROUP_TOKENS, KV_KIVI_GROUP};
            build_ties(&r, &q, T, D, &TIES_FP16, k + h * T * D, kw + h * T * D);
            if (f == KV_INT4)
                q.gran = (Granularity){GRAN_GROUP_CHANNELS, 32};
            build_ties(&r, &q, T, D, &TIES_FP16, v + h * T * D, vw + h * T * D);
        }
        ck_assert_int_eq(kv_append(&c, k, v, T, NULL), 0);
        static float kc[H * T * D], vc[H * T * D];           // calc's, for the same heads
        for (int h = 0; h < H; h++) {
            QuantSpec q8;
            quant_spec_init(&q8);
            q8.scheme = SCHEME_INT_SYM;
            q8.bits = 8;
            KiviSpec q4 = {4, KV_KIVI_GROUP, 0};
            size_t o = (size_t)h * T * D;
            ck_assert_int_eq(f == KV_INT8 ? quantize_ref(&q8, k + o, T, D, kc + o, NULL) |
                                                quantize_ref(&q8, v + o, T, D, vc + o, NULL)
                                          : kivi_ref(&q4, k + o, v + o, T, D, kc + o, vc + o, NULL), 0);
        }
        for (size_t i = 0; i < (size_t)H * T * D; i++)
            ck_assert_seeded(kc[i] == kw[i] && vc[i] == vw[i], "calc's %s differs at %zu", kv_format_id(f), i);
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                float kd[D], vd[D];
                kv_dequant(&c, 0, (uint32_t)h, (uint32_t)t, kd, vd);
                for (int d = 0; d < D; d++) {
                    size_t i = ((size_t)h * T + t) * D + d;
                    ck_assert_seeded(kd[d] == kw[i], "%s key %a -> %a, want %a", kv_format_id(f), k[i], kd[d], kw[i]);
                    ck_assert_seeded(vd[d] == vw[i], "%s value %a -> %a, want %a", kv_format_id(f), v[i], vd[d], vw[i]);
                }
            }
        kv_cache_done(&c);
    }
}
END_TEST

/* How far quantize-on-write may land from calc's reference where the two
 * definitions differ (bf16, fp8, nvfp4 and mxfp4 are the same definition
 * and must agree bit for bit; so must int4's BF16 window). The cache
 * stores int8's scale and int4's step and minimum in FP16 (FP16_REL of
 * themselves, FP16_ABS where subnormal), and int4's values wait in the
 * BF16 window before they are quantized (BF16_REL of each): the quotient
 * x / s, or (x - min) / s, moves by up to `shift` codes, so where it lies
 * within `shift` of a tie the cache may take the neighbouring code (one
 * step more), and elsewhere the same code, off by the scale's rounding. */
#define FP16_REL 0x1p-11
#define FP16_ABS 0x1p-25
#define BF16_REL 0x1p-9
#define WRITE_SLACK 1.01                    // float division, and the bounds' own rounding

/* The tolerance for value x whose quotient is u and whose step is `step`,
 * where the quotient may move by `shift`. */
static double near_tie_tol(double u, double step, double shift)
{
    const double from_tie = fabs(u - floor(u) - 0.5);
    return WRITE_SLACK * (from_tie <= WRITE_SLACK * shift ? 1 + shift : shift) * step;
}

/* calc's reference for the whole K or V (B, H, T, D) of format f, as
 * written to a cache of shape s: BF16 rounding; FP8 with the static scale
 * of its tensor or head (the amax of the first append over 448: quant.h's
 * fp8 per tensor); int8 int-sym per token; nvfp4, mxfp4 as quant.h. int4
 * is KIVI on keys and values together (kivi_window_ref). */
static void writer_ref(const KvShape *s, uint32_t T, const float *x, float *out)
{
    const size_t D = s->head_dim, per_head = (size_t)T * D, rows = (size_t)s->batch * s->kv_heads * T;
    QuantSpec q;
    quant_spec_init(&q);
    switch (s->format) {
    case KV_BF16:
        for (size_t i = 0; i < rows * D; i++)
            out[i] = bf16_round(x[i]);
        return;
    case KV_FP8:
        q.scheme = SCHEME_FP8;
        q.gran = (Granularity){GRAN_TENSOR, 0};
        for (uint32_t h = 0; h < (s->head_scales ? s->kv_heads : 1); h++) {
            /* one head's rows of every sequence (or all rows), gathered */
            float *g = malloc(rows * D * sizeof *g), *go = malloc(rows * D * sizeof *go);
            size_t n = 0;
            for (uint32_t b = 0; b < s->batch; b++)
                for (uint32_t hh = 0; hh < s->kv_heads; hh++)
                    if (!s->head_scales || hh == h) {
                        memcpy(g + n, x + ((size_t)b * s->kv_heads + hh) * per_head, per_head * sizeof *g);
                        n += per_head;
                    }
            ck_assert_int_eq(quantize_ref(&q, g, n / D, D, go, NULL), 0);
            n = 0;
            for (uint32_t b = 0; b < s->batch; b++)
                for (uint32_t hh = 0; hh < s->kv_heads; hh++)
                    if (!s->head_scales || hh == h) {
                        memcpy(out + ((size_t)b * s->kv_heads + hh) * per_head, go + n, per_head * sizeof *go);
                        n += per_head;
                    }
            free(g), free(go);
        }
        return;
    case KV_INT8:
        q.scheme = SCHEME_INT_SYM;
        q.bits = 8;
        q.gran = (Granularity){GRAN_TOKEN, 0};
        break;
    case KV_NVFP4:
        q.scheme = SCHEME_NVFP4;
        break;
    case KV_MXFP4:
        q.scheme = SCHEME_MXFP4;
        break;
    default:
        ck_abort_msg("int4 goes through kivi_ref");
    }
    ck_assert_int_eq(quantize_ref(&q, x, rows, D, out, NULL), 0);
}

/* int4: calc's kivi_ref for every (sequence, head) of k and v. */
static void kivi_window_ref(const KvShape *s, uint32_t T, const float *k, const float *v, float *ko, float *vo)
{
    const KiviSpec spec = {4, KV_KIVI_GROUP, s->residual};
    const size_t per_head = (size_t)T * s->head_dim;
    for (size_t bh = 0; bh < (size_t)s->batch * s->kv_heads; bh++)
        ck_assert_int_eq(kivi_ref(&spec, k + bh * per_head, v + bh * per_head, T, s->head_dim, ko + bh * per_head,
                                  vo + bh * per_head, NULL), 0);
}

/* The largest magnitude, least and greatest of n values x[i * stride]. */
static void span(const float *x, size_t n, size_t stride, float *amax, float *lo, float *hi)
{
    *amax = 0, *lo = *hi = x[0];
    for (size_t i = 0; i < n; i++) {
        const float y = x[i * stride];
        *amax = fmaxf(*amax, fabsf(y)), *lo = fminf(*lo, y), *hi = fmaxf(*hi, y);
    }
}

/* The tolerance of element (token t, channel d) of one head's K or V
 * (x: its T x D values) of format f: 0 where the definitions agree. int8:
 * the step is amax / 127 of the token's vector; int4 (KIVI): (max - min) /
 * 15 of the group (keys: a channel over 32 tokens; values: 32 channels of
 * a token), whose minimum and values move by their BF16 rounding too. */
static double writer_tol(const KvShape *s, uint32_t quantized, const float *x, uint32_t t, uint32_t d, bool keys)
{
    const size_t D = s->head_dim;
    const double v = x[t * D + d];
    float amax, lo, hi;
    if (s->format == KV_INT8) {
        span(x + t * D, D, 1, &amax, &lo, &hi);
        const double step = amax / 127.0;
        return step ? near_tie_tol(v / step, step, 127 * fmax(FP16_REL, FP16_ABS / step)) : 0;
    }
    if (s->format != KV_INT4 || t >= quantized)
        return 0;
    if (keys)
        span(x + t / KV_KIVI_GROUP * KV_KIVI_GROUP * D + d, KV_KIVI_GROUP, D, &amax, &lo, &hi);
    else
        span(x + t * D + d / 32 * 32, 32, 1, &amax, &lo, &hi);
    const double step = ((double)hi - lo) / 15;
    if (!step)
        return 0;
    /* the minimum and the value each move by BF16_REL of themselves and
     * FP16's rounding of the minimum; the step by its FP16 rounding and by
     * the range's BF16 rounding (BF16_REL of each end), over 15 codes */
    const double moved = BF16_REL * (fabs(v) + fabs(lo)) + FP16_REL * fabs(lo) + FP16_ABS;
    const double step_rel = FP16_REL + FP16_ABS / step + 2 * BF16_REL * amax / (15 * step);
    return near_tie_tol((v - lo) / step, step, moved / step + 15 * step_rel);
}

/* Quantize-on-write is calc's quantizers (quant.h's _ref, the definition)
 * for every format: one append of random values whose magnitudes span
 * 2^-12 to 1 (one per group of 16 channels), read back, lands on the
 * reference's value bit for bit where the definitions are the same (bf16,
 * fp8 per tensor and per head, nvfp4, mxfp4, int4's BF16 window), and
 * within the named tolerances where the cache's FP16 scales make them
 * differ (int8, int4's groups). int4's append ends where calc's window
 * does: a whole number of groups before its newest `residual` tokens. */
START_TEST(writers_match_calc)
{
    Rng r = {test_seed() ^ 0xF4F4};
    for (int it = 0; it < 2 * KV_FORMATS; it++) {
        const KvFormat f = (KvFormat)(it % KV_FORMATS);
        KvShape s = shape(f, 2, 2, 1, it < KV_FORMATS ? 64 : 128, 256);
        s.head_scales = f == KV_FP8 && it >= KV_FORMATS;
        const uint32_t T = f == KV_INT4 ? s.residual + KV_KIVI_GROUP * (uint32_t)rng_range(&r, 0, 5)
                                        : (uint32_t)rng_range(&r, 1, 200);
        KvCache c;
        ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
        const size_t D = s.head_dim, rows = (size_t)s.batch * s.kv_heads * T, n = rows * D;
        float *k = malloc(n * 4), *v = malloc(n * 4), *rk = malloc(n * 4), *rv = malloc(n * 4);
        for (size_t i = 0; i < n; i++) {
            const float m = group_magnitude(i / 16);
            k[i] = rng_uniform(&r, 3) * m, v[i] = rng_uniform(&r, 3) * m;
        }
        ck_assert_int_eq(kv_append(&c, k, v, T, NULL), 0);
        if (f == KV_INT4) {
            kivi_window_ref(&s, T, k, v, rk, rv);
        } else {
            writer_ref(&s, T, k, rk);
            writer_ref(&s, T, v, rv);
        }
        float kd[KV_HEAD_DIM_MAX], vd[KV_HEAD_DIM_MAX];
        for (size_t row = 0; row < rows; row++) {
            const uint32_t b = (uint32_t)(row / T / s.kv_heads), h = (uint32_t)(row / T % s.kv_heads);
            const uint32_t t = (uint32_t)(row % T);
            const float *head_k = k + (row - t) * D, *head_v = v + (row - t) * D;
            kv_dequant(&c, b, h, t, kd, vd);
            for (uint32_t d = 0; d < D; d++) {
                const double tk = writer_tol(&s, c.quantized, head_k, t, d, true);
                const double tv = writer_tol(&s, c.quantized, head_v, t, d, false);
                ck_assert_seeded(fabs(kd[d] - rk[row * D + d]) <= tk,
                                 "%s D=%zu k token %u channel %u: %a, calc %a (tolerance %g)",
                                 kv_format_id(f), D, t, d, kd[d], rk[row * D + d], tk);
                ck_assert_seeded(fabs(vd[d] - rv[row * D + d]) <= tv,
                                 "%s D=%zu v token %u channel %u: %a, calc %a (tolerance %g)",
                                 kv_format_id(f), D, t, d, vd[d], rv[row * D + d], tv);
            }
        }
        free(k), free(v), free(rk), free(rv);
        kv_cache_done(&c);
    }
}
END_TEST

/* The bytes the cache allocates per token of a sequence and KV head are
 * calc's bytes per token-head vector (format_vector_bytes) for K and for V,
 * for every format and head dimension the kernels take (multiples of 32 to
 * KV_HEAD_DIM_MAX): the bandwidth figures count calc's bytes, the
 * allocation the cache's. What does not grow with the context is calc's
 * too: the FP32 tensor scales (tensor_scale_bytes, one per KV head with
 * fp8's head_scales) and int4's BF16 window (residual + 32 tokens of BF16
 * vectors). Random batches, heads and capacities. */
START_TEST(cache_bytes_are_calc_bytes)
{
    Rng r = {test_seed() ^ 0xB17E};
    for (int f = 0; f < KV_FORMATS; f++)
        for (uint32_t D = 32; D <= KV_HEAD_DIM_MAX; D += 32) {
            const Format *cf = format_by_id(kv_format_id((KvFormat)f));
            ck_assert_ptr_nonnull(cf);
            KvShape s = shape((KvFormat)f, (uint32_t)rng_range(&r, 1, 4), (uint32_t)rng_range(&r, 1, 8), 1, D,
                              32 * (uint32_t)rng_range(&r, 1, 64));
            s.residual = f == KV_INT4 ? 32 * (uint32_t)rng_range(&r, 0, 8) : 0;
            s.head_scales = f == KV_FP8 && rng_range(&r, 0, 1);
            KvShape longer = s;
            longer.capacity += 32 * (uint32_t)rng_range(&r, 1, 64);
            size_t a[KV_ARRAYS], b[KV_ARRAYS];
            kv_array_bytes(&s, a);
            kv_array_bytes(&longer, b);
            const size_t vectors = (size_t)s.batch * s.kv_heads * (longer.capacity - s.capacity);
            size_t grown[2] = {0, 0}, fixed[2] = {0, 0};
            for (int i = 0; i < KV_ARRAYS; i++) {
                ck_assert_uint_ge(b[i], a[i]);
                grown[i % 2] += b[i] - a[i];        // K's arrays even, V's odd (KvArray)
                fixed[i % 2] += a[i] - (b[i] - a[i]) / (longer.capacity - s.capacity) * s.capacity;
            }
            const u128 want = format_vector_bytes(cf, D);
            for (int side = 0; side < 2; side++) {
                ck_assert_msg(grown[side] % vectors == 0 && grown[side] / vectors == want,
                              "%s D=%u: %zu bytes per %s vector, calc counts %s", cf->id, D,
                              grown[side] / vectors, side ? "V" : "K", u128s(want));
                const size_t window = f == KV_INT4 ? (size_t)s.batch * s.kv_heads * (s.residual + KV_KIVI_GROUP) *
                                                         (size_t)format_vector_bytes(format_bf16(), D) : 0;
                const size_t tensors = (s.head_scales ? s.kv_heads : 1) * (size_t)cf->tensor_scale_bytes;
                ck_assert_msg(fixed[side] == window + tensors, "%s D=%u: %zu fixed bytes, calc counts %zu", cf->id,
                              D, fixed[side], window + tensors);
            }
        }
}
END_TEST

/* The random cache of benchmarks holds what kv_fill.h says, the same on
 * the host and the device (the GPU suite compares the two): every code
 * finite and of its range (fp8 never a NaN code, int8 never -128), the
 * scales as documented (pinned here to their values), BF16 magnitudes 0.5
 * to 1, NVFP4 block scales 0.5 to 1.875, MXFP4's 2^-5 or 2^-4; codes
 * random (more than one value in every array of codes); every value
 * kv_dequant reads finite. Random seeds, every format. */
START_TEST(random_fill_as_documented)
{
    Rng r = {test_seed() ^ 0xF111};
    ck_assert_uint_eq(KV_FILL_INT8_SCALE, fp16_bits(1.0f / 127));
    ck_assert_uint_eq(KV_FILL_INT4_STEP, fp16_bits(2.0f / 15));
    ck_assert_uint_eq(KV_FILL_INT4_MIN, fp16_bits(-1.0f));
    const float fp8_tensor = 1.0f / 64, nvfp4_tensor = 1.0f / 32;
    uint32_t bits;
    memcpy(&bits, &fp8_tensor, 4);
    ck_assert_uint_eq(KV_FILL_FP8_TENSOR, bits);
    memcpy(&bits, &nvfp4_tensor, 4);
    ck_assert_uint_eq(KV_FILL_NVFP4_TENSOR, bits);
    for (int f = 0; f < KV_FORMATS; f++) {
        KvShape s = shape((KvFormat)f, 2, 2, 1, 64, 256);
        s.head_scales = f == KV_FP8;
        KvCache c;
        ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
        ck_assert_int_eq(kv_fill_random(&c, 250, rng_next(&r), NULL), 0);
        size_t bytes[KV_ARRAYS];
        kv_array_bytes(&s, bytes);
        const size_t codes = bytes[KV_ARR_K] / (f == KV_BF16 ? 2 : 1);
        bool varied = false;
        for (size_t i = 0; i < codes; i++) {
            const unsigned kc = f == KV_BF16 ? ((uint16_t *)c.k)[i] : c.k[i];
            const unsigned vc = f == KV_BF16 ? ((uint16_t *)c.v)[i] : c.v[i];
            varied |= kc != (f == KV_BF16 ? ((uint16_t *)c.k)[0] : c.k[0]);
            if (f == KV_BF16)
                ck_assert_msg(fabsf(bf16_value((uint16_t)kc)) >= 0.5f && fabsf(bf16_value((uint16_t)kc)) < 1 &&
                                  fabsf(bf16_value((uint16_t)vc)) >= 0.5f && fabsf(bf16_value((uint16_t)vc)) < 1,
                              "bf16 %#x %#x", kc, vc);
            if (f == KV_FP8)
                ck_assert_msg((kc & 0x7F) != 0x7F && (vc & 0x7F) != 0x7F, "fp8 NaN code at %zu", i);
            if (f == KV_INT8)
                ck_assert_msg(kc != 0x80 && vc != 0x80, "int8 code -128 at %zu", i);
        }
        ck_assert_msg(varied, "%s: every code the same", kv_format_id((KvFormat)f));
        for (size_t i = 0; i < bytes[KV_ARR_K_TENSOR] / 4; i++)
            ck_assert(c.k_tensor[i] == (f == KV_FP8 ? fp8_tensor : nvfp4_tensor) && c.v_tensor[i] == c.k_tensor[i]);
        for (size_t i = 0; i < bytes[KV_ARR_K_SCALE] / 2; i++)
            ck_assert(c.k_scale[i] == (f == KV_INT8 ? KV_FILL_INT8_SCALE : KV_FILL_INT4_STEP) &&
                      c.v_scale[i] == c.k_scale[i]);
        for (size_t i = 0; i < bytes[KV_ARR_K_ZERO] / 2; i++)
            ck_assert(c.k_zero[i] == KV_FILL_INT4_MIN && c.v_zero[i] == KV_FILL_INT4_MIN);
        for (size_t i = 0; i < bytes[KV_ARR_K_BLOCK]; i++) {
            const float kb = f == KV_NVFP4 ? minifloat_decode(&MF_E4M3, c.k_block[i]) : e8m0_decode(c.k_block[i]);
            const float vb = f == KV_NVFP4 ? minifloat_decode(&MF_E4M3, c.v_block[i]) : e8m0_decode(c.v_block[i]);
            if (f == KV_NVFP4)
                ck_assert_msg(kb >= 0.5f && kb <= 1.875f && vb >= 0.5f && vb <= 1.875f, "nvfp4 block %g %g", kb, vb);
            else
                ck_assert_msg((kb == 0x1p-5f || kb == 0x1p-4f) && (vb == 0x1p-5f || vb == 0x1p-4f),
                              "mxfp4 block %g %g", kb, vb);
        }
        for (size_t i = 0; i < bytes[KV_ARR_K_RES] / 2; i++)
            ck_assert_msg(fabsf(bf16_value(c.k_res[i])) >= 0.5f && fabsf(bf16_value(c.k_res[i])) < 1 &&
                              fabsf(bf16_value(c.v_res[i])) >= 0.5f && fabsf(bf16_value(c.v_res[i])) < 1,
                          "int4 window %#x %#x", c.k_res[i], c.v_res[i]);
        float kd[64], vd[64];
        for (uint32_t b = 0; b < s.batch; b++)
            for (uint32_t h = 0; h < s.kv_heads; h++)
                for (uint32_t t = 0; t < c.len; t++) {
                    kv_dequant(&c, b, h, t, kd, vd);
                    for (uint32_t d = 0; d < s.head_dim; d++)
                        ck_assert_msg(isfinite(kd[d]) && isfinite(vd[d]), "%s token %u", kv_format_id((KvFormat)f), t);
                }
        kv_cache_done(&c);
    }
}
END_TEST

/* kvlab hands the CUDA plugin the kernels the environment asks for, read
 * once (gpu_options_from_env): KVLAB_CUDA_PATH fp32, fp8a or fp8c,
 * anything else the default; KVLAB_CUDA_FP8_PROMOTE and KVLAB_CUDA_SPLITS
 * a count above 0, anything else 0 (once; the plan's splits). */
START_TEST(cuda_options_from_env)
{
    static const struct {
        const char *path, *promote, *splits;
        KvCudaKernels kernels;
        int fp8_promote, n_splits;
    } CASES[] = {
        {NULL, NULL, NULL, KV_CUDA_TENSOR_CORES, 0, 0}, {"fp32", NULL, "1", KV_CUDA_FP32, 0, 1},
        {"fp8a", "2", "0", KV_CUDA_FP8_PATH_A, 2, 0},   {"FP8A", "-1", "-3", KV_CUDA_TENSOR_CORES, 0, 0},
        {"", "x", "x", KV_CUDA_TENSOR_CORES, 0, 0},     {"fp8a", "64", NULL, KV_CUDA_FP8_PATH_A, 64, 0},
        {"fp8c", "4", "1", KV_CUDA_FP8_PATH_C, 4, 1},   {"fp8C", NULL, "7", KV_CUDA_TENSOR_CORES, 0, 7},
    };
    for (size_t i = 0; i < N_OF(CASES); i++) {
        if (CASES[i].path)
            setenv("KVLAB_CUDA_PATH", CASES[i].path, 1);
        else
            unsetenv("KVLAB_CUDA_PATH");
        if (CASES[i].promote)
            setenv("KVLAB_CUDA_FP8_PROMOTE", CASES[i].promote, 1);
        else
            unsetenv("KVLAB_CUDA_FP8_PROMOTE");
        if (CASES[i].splits)
            setenv("KVLAB_CUDA_SPLITS", CASES[i].splits, 1);
        else
            unsetenv("KVLAB_CUDA_SPLITS");
        const KvCudaOptions o = gpu_options_from_env();
        ck_assert_msg(o.kernels == CASES[i].kernels && o.fp8_promote == CASES[i].fp8_promote &&
                          o.splits == CASES[i].n_splits,
                      "case %zu: kernels %d, promote %d, splits %d", i, (int)o.kernels, o.fp8_promote, o.splits);
    }
    unsetenv("KVLAB_CUDA_PATH");
    unsetenv("KVLAB_CUDA_FP8_PROMOTE");
    unsetenv("KVLAB_CUDA_SPLITS");
}
END_TEST

/* softmax(q.k / sqrt D) v in float64 over the dequantized cache. */
static void reference(const KvCache *c, const float *q, double *out)
{
    const KvShape *s = &c->s;
    uint32_t D = s->head_dim, G = s->q_heads / s->kv_heads;
    float k[256], v[256];
    double *sc = malloc(c->len * sizeof *sc);
    for (uint32_t b = 0; b < s->batch; b++)
        for (uint32_t hq = 0; hq < s->q_heads; hq++) {
            const float *qh = q + ((size_t)b * s->q_heads + hq) * D;
            double mx = -INFINITY, sum = 0, *o = out + ((size_t)b * s->q_heads + hq) * D;
            for (uint32_t t = 0; t < c->len; t++) {
                kv_dequant(c, b, hq / G, t, k, v);
                double dot = 0;
                for (uint32_t d = 0; d < D; d++)
                    dot += (double)qh[d] * k[d];
                sc[t] = dot / sqrt((double)D);
                mx = fmax(mx, sc[t]);
            }
            memset(o, 0, D * sizeof *o);
            for (uint32_t t = 0; t < c->len; t++) {
                kv_dequant(c, b, hq / G, t, k, v);
                double p = exp(sc[t] - mx);
                sum += p;
                for (uint32_t d = 0; d < D; d++)
                    o[d] += p * v[d];
            }
            for (uint32_t d = 0; d < D; d++)
                o[d] /= sum;
        }
    free(sc);
}

/* The CPU kernel against float64, every format, random shapes: GQA groups
 * 1 to 8, head dimensions 32 to 256, odd context lengths; the output is
 * poisoned with NaN first, so an unwritten element fails. */
START_TEST(cpu_matches_f64)
{
    Rng r = {test_seed() ^ 0xDEC0DE};
    static const uint32_t DIMS[] = {32, 64, 128, 256};
    for (int it = 0; it < 24; it++) {
        KvFormat f = (KvFormat)(it % KV_FORMATS);
        uint32_t G = (uint32_t)rng_range(&r, 1, 8), H = (uint32_t)rng_range(&r, 1, 3);
        uint32_t B = (uint32_t)rng_range(&r, 1, 3), D = DIMS[rng_range(&r, 0, 3)];
        uint32_t T = (uint32_t)rng_range(&r, 1, 700) | 1;       // odd lengths
        KvShape s = shape(f, B, H, G, D, 1024);
        KvCache c;
        ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
        size_t n = (size_t)B * H * T * D, nq = (size_t)B * s.q_heads * D;
        float *k = malloc(n * 4), *v = malloc(n * 4), *q = malloc(nq * 4), *out = malloc(nq * 4);
        double *ref = malloc(nq * sizeof *ref);
        fill(&r, k, n, 2);
        fill(&r, v, n, 2);
        fill(&r, q, nq, 1);
        /* appended in two pieces, as prefill then decode would */
        uint32_t first = T / 2 + 1;
        float *k2 = malloc(n * 4), *v2 = malloc(n * 4);
        for (uint32_t bh = 0; bh < B * H; bh++) {
            memcpy(k2 + (size_t)bh * first * D, k + (size_t)bh * T * D, (size_t)first * D * 4);
            memcpy(v2 + (size_t)bh * first * D, v + (size_t)bh * T * D, (size_t)first * D * 4);
        }
        ck_assert_int_eq(kv_append(&c, k2, v2, first, NULL), 0);
        for (uint32_t bh = 0; bh < B * H; bh++) {
            memcpy(k2 + (size_t)bh * (T - first) * D, k + ((size_t)bh * T + first) * D, (size_t)(T - first) * D * 4);
            memcpy(v2 + (size_t)bh * (T - first) * D, v + ((size_t)bh * T + first) * D, (size_t)(T - first) * D * 4);
        }
        if (T > first)
            ck_assert_int_eq(kv_append(&c, k2, v2, T - first, NULL), 0);
        ck_assert_uint_eq(c.len, T);
        for (size_t i = 0; i < nq; i++)
            out[i] = NAN;
        ck_assert_int_eq(kv_decode_cpu(&c, q, out, 2, NULL), 0);
        reference(&c, q, ref);
        double err = worst_head(out, ref, (size_t)B * s.q_heads, D);
        ck_assert_msg(err < CPU_VS_F64_TOL, "%s B=%u H=%u G=%u D=%u T=%u: error %g",
                      kv_format_id(f), B, H, G, D, T, err);
        free(k), free(v), free(q), free(out), free(ref), free(k2), free(v2);
        kv_cache_done(&c);
    }
}
END_TEST

/* The CPU reference with path C's arithmetic (E4M3 query and E4M3
 * probabilities, KvCpuOptions) is that arithmetic in float64, within the
 * FP32 tolerance, head by head; and the rounding of the probabilities is
 * there to see: the plain reference lies P_E4M3_SEEN away from it. */
#define P_E4M3_SEEN 1e-3
START_TEST(cpu_fp8_arith_matches_f64)
{
    Rng r = {test_seed() ^ 0xFA3};
    static const uint32_t DIMS[] = {64, 128};
    const KvCpuOptions fp8 = {true, true}, q_only = {true, false};
    int compared = 0;
    for (int it = 0; it < 12; it++) {
        uint32_t G = (uint32_t)rng_range(&r, 1, 8), H = (uint32_t)rng_range(&r, 1, 3);
        uint32_t B = (uint32_t)rng_range(&r, 1, 2), D = DIMS[rng_range(&r, 0, 1)];
        uint32_t T = (uint32_t)rng_range(&r, 100, 900) | 1;
        KvShape s = shape(it % 2 ? KV_FP8 : KV_BF16, B, H, G, D, 1024);
        KvCache c;
        ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
        size_t n = (size_t)B * H * T * D, nq = (size_t)B * s.q_heads * D;
        float *k = malloc(n * 4), *v = malloc(n * 4), *q = malloc(nq * 4), *qr = malloc(nq * 4);
        float *out = malloc(nq * 4), *plain = malloc(nq * 4);
        double *ref = malloc(nq * sizeof *ref);
        bool *near = malloc(s.q_heads * B * sizeof *near);
        fill(&r, k, n, 4);
        fill(&r, v, n, 2);
        fill(&r, q, nq, 1);
        ck_assert_int_eq(kv_append(&c, k, v, T, NULL), 0);
        ck_assert_int_eq(kv_decode_cpu_with(&c, q, out, 2, &fp8, NULL), 0);
        ck_assert_int_eq(kv_decode_cpu_with(&c, q, plain, 2, &q_only, NULL), 0);
        memcpy(qr, q, nq * 4);
        kv_e4m3_query(qr, (size_t)B * s.q_heads, D);
        attn_fp8_p_f64(&c, qr, ref, near, 1e-5);
        for (size_t h = 0; h < (size_t)B * s.q_heads; h++) {
            if (near[h])
                continue;
            compared++;
            double err = worst_head(out + h * D, ref + h * D, 1, D), off = worst_head(plain + h * D, ref + h * D, 1, D);
            ck_assert_seeded(err < CPU_VS_F64_TOL, "B=%u H=%u G=%u D=%u T=%u head %zu: error %g", B, H, G, D, T, h, err);
            ck_assert_seeded(off > P_E4M3_SEEN, "B=%u H=%u G=%u D=%u T=%u head %zu: rounding unseen, %g", B, H, G,
                             D, T, h, off);
        }
        free(k), free(v), free(q), free(qr), free(out), free(plain), free(ref), free(near);
        kv_cache_done(&c);
    }
    ck_assert_msg(compared > 0, "every head had a probability near a rounding point");
}
END_TEST

/* KIVI: tokens leave the BF16 window only in whole groups of 32, once more
 * than `residual` newer tokens are behind them; kv_kivi_quantized, which the
 * random fill, the GPU fill and the benchmark's byte count use, agrees. */
START_TEST(kivi_window)
{
    Rng r = {test_seed() ^ 0x1F};
    KvShape s = shape(KV_INT4, 1, 1, 1, 32, 512);
    s.residual = 64;
    KvCache c;
    ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
    float k[32 * 40], v[32 * 40], kd[32], vd[32];
    uint32_t total = 0;
    while (total < 400) {
        uint32_t n = (uint32_t)rng_range(&r, 1, 40);
        fill(&r, k, (size_t)n * 32, 1);
        fill(&r, v, (size_t)n * 32, 1);
        ck_assert_int_eq(kv_append(&c, k, v, n, NULL), 0);
        total += n;
        uint32_t want = total >= 64 + 32 ? (total - 64) / 32 * 32 : 0;
        ck_assert_uint_eq(c.quantized, want);
        ck_assert_uint_eq(kv_kivi_quantized(s.residual, total), want);
        kv_dequant(&c, 0, 0, total - 1, kd, vd);     // the newest token is exact BF16
        for (int d = 0; d < 32; d++)
            ck_assert(kd[d] == bf16_round(k[(n - 1) * 32 + d]));
    }
    Error e;
    ck_assert_int_eq(kv_append(&c, k, v, 200, &e), -1);
    ck_assert(strstr(e.msg, "do not fit") != NULL);
    kv_cache_done(&c);
}
END_TEST

/* The cache's int4 writer rounds the true quotient (x - m) / s: in a group
 * from -2.5 to 12.5 (m = -2.5, s = 1, both held by FP16), 0 is the half 2.5
 * and lands on the even code 2 (-0.5), while 2^-30, a hair above the half
 * (x - m in float is 2.5 again), lands on 3 (0.5); keys (a channel over 32
 * tokens) and values (32 channels of a token) alike. */
START_TEST(int4_writer_near_half)
{
    enum { T = 32, D = 32 };
    KvShape s = {KV_INT4, 1, 1, 1, D, T, 0, false};
    KvCache c;
    ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
    static float k[T * D], v[T * D];
    const float group[] = {-2.5f, 12.5f, ldexpf(1, -30), 0};
    for (int i = 0; i < 4; i++)
        k[i * D] = v[i] = group[i];         // key channel 0 of tokens 0-3; value channels 0-3 of token 0
    ck_assert_int_eq(kv_append(&c, k, v, T, NULL), 0);
    float kd[D], vd[D];
    kv_dequant(&c, 0, 0, 0, kd, vd);
    ck_assert_float_eq(vd[2], 0.5f);
    ck_assert_float_eq(vd[3], -0.5f);
    kv_dequant(&c, 0, 0, 2, kd, vd);
    ck_assert_float_eq(kd[0], 0.5f);
    kv_dequant(&c, 0, 0, 3, kd, vd);
    ck_assert_float_eq(kd[0], -0.5f);
    kv_cache_done(&c);
}
END_TEST

/* The most that measurements off by up to `noise` of their true costs y
 * can move a least-squares line's forecast of the points left: the
 * forecast is the sum over the points left of a + b x, and a and b are
 * linear in the measurements, so the forecast is sum g_i y_i and moves by
 * at most noise x sum |g_i| y_i. (Where noise makes the intercept negative
 * the forecast takes the line through the origin instead; the intercept
 * is then within the noise of 0, and that forecast errs less.) */
static double forecast_noise(const uint64_t *ctx, const double *y, size_t done, size_t n, double noise)
{
    double sx = 0, sxx = 0, left = (double)(n - done), cl = 0, bound = 0;
    for (size_t i = 0; i < done; i++)
        sx += (double)ctx[i], sxx += (double)ctx[i] * (double)ctx[i];
    for (size_t j = done; j < n; j++)
        cl += (double)ctx[j];
    double mean = sx / (double)done, spread = sxx - sx * mean;
    for (size_t i = 0; i < done; i++)
        bound += fabs(left / (double)done + ((double)ctx[i] - mean) / spread * (cl - left * mean)) * y[i];
    return noise * bound;
}

/* Time left in a sweep whose points cost a + b x context, measured context
 * by context as the lab sweeps (every format at 1k, then at 2k, ...), with
 * a tenth to all of the cost at 1k growing with context: exact once two
 * contexts are measured; with measurements off by up to ETA_NOISE either
 * way, once two contexts are complete, within what that noise can move a
 * least-squares forecast (forecast_noise; from two contexts to seven that
 * is up to a fifth of the time left); while one is, it counts cost in
 * proportion to context, so never less than the points' count foresees.
 * Random costs. */
#define ETA_NOISE 0.03
/* The rounding of the sums, relative to the time left. */
#define ETA_ROUNDING 1e-9
START_TEST(sweep_time_left)
{
    enum { FORMATS = 6, CONTEXTS = 7 };
    Rng r = {test_seed() ^ 0xE7A};
    BenchRow rows[FORMATS * CONTEXTS];
    uint64_t ctx[FORMATS * CONTEXTS];
    double cost[FORMATS * CONTEXTS];
    ck_assert(bench_seconds_left(rows, 0, ctx, 1) < 0);
    for (int trial = 0; trial < 400; trial++) {
        const double noise = trial % 2 ? ETA_NOISE : 0, grows = 0.1 + 0.9 * (rng_uniform(&r, 0.5f) + 0.5);
        const double b = 1e-4 * (1 + (double)rng_range(&r, 0, 100)), a = b * 1024 * (1 - grows) / grows;
        size_t n = 0;
        for (uint64_t c = 1024; n < FORMATS * CONTEXTS; c *= 2)
            for (int f = 0; f < FORMATS; f++, n++) {
                ctx[n] = c;
                cost[n] = a + b * (double)c;
                rows[n] = (BenchRow){.format = (KvFormat)f, .context = c,
                                     .wall_s = cost[n] * (1 + noise * rng_uniform(&r, 1))};
            }
        for (size_t done = 1; done < n; done++) {
            double truth = 0;
            for (size_t i = done; i < n; i++)
                truth += cost[i];
            double est = bench_seconds_left(rows, done, ctx + done, n - done);
            if (done <= FORMATS)
                ck_assert_seeded(est >= (double)(n - done) * rows[0].wall_s * (1 - noise) / (1 + noise),
                                 "a %g b %g, %zu done: %g s left, fewer than the points' count gives", a, b,
                                 done, est);
            else if (!noise)
                ck_assert_seeded(fabs(est - truth) <= ETA_ROUNDING * truth, "a %g b %g, %zu done: %g s left, not %g",
                                 a, b, done, est, truth);
            else if (done >= 2 * FORMATS)
                ck_assert_seeded(fabs(est - truth) <= forecast_noise(ctx, cost, done, n, noise) + ETA_ROUNDING * truth,
                                 "a %g b %g, %zu done: %g s left, not %g within %g", a, b, done, est, truth,
                                 forecast_noise(ctx, cost, done, n, noise));
        }
    }
}
END_TEST

/* A slope is fitted to the time asked for: one layer's attention, the
 * model's step replayed from a graph or launched, each row's own field,
 * over the rows of the format and batch asked for alone; exact lines with
 * random slopes and intercepts come back within rounding (1e-9 relative),
 * and one context gives no slope. */
START_TEST(slope_of_each_time)
{
    Rng r = {test_seed() ^ 0x510BE};
    for (int trial = 0; trial < 100; trial++) {
        double a[3], b[3];
        for (int k = 0; k < 3; k++)
            a[k] = rng_uniform(&r, 1) + 1, b[k] = 1e-5 * (1 + (double)rng_range(&r, 0, 1000));
        BenchRow rows[2 * 2 * 6];
        size_t n = 0;
        for (uint32_t batch = 1; batch <= 16; batch += 15)
            for (int f = KV_BF16; f <= KV_FP8; f++)
                for (uint64_t c = 1024; c <= 32768; c *= 2) {
                    const double x = (double)c, other = batch == 1 && f == KV_FP8 ? 1 : 3;   // other lines elsewhere
                    rows[n++] = (BenchRow){.format = (KvFormat)f, .batch = batch, .context = c,
                                           .ms = other * (a[0] + b[0] * x),
                                           .step_ms = other * (a[1] + b[1] * x),
                                           .step_launched_ms = other * (a[2] + b[2] * x)};
                }
        const BenchTime what[3] = {BENCH_ATTENTION, BENCH_STEP_GRAPH, BENCH_STEP_LAUNCHED};
        for (int k = 0; k < 3; k++) {
            double sl = bench_slope(rows, n, KV_FP8, 1, what[k]);
            ck_assert_seeded(fabs(sl - b[k]) <= 1e-9 * b[k], "time %d: slope %g, not %g", k, sl, b[k]);
        }
        ck_assert(isnan(bench_slope(rows, 1, KV_BF16, 1, BENCH_STEP_GRAPH)));
    }
}
END_TEST

typedef struct {
    unsigned counts[600];
    int most;                   // the largest worker number seen
    size_t fail_at;             // the item that fails; past n: none
    bool wait_for_second;       // worker 0's first item waits (up to 2 s) for another worker's item
} EachCtx;

static int each_item(void *ctx, size_t i, int worker, Error *e)
{
    EachCtx *c = ctx;
    if (worker == 0 && c->wait_for_second) {         // once: only worker 0 reads and writes it
        c->wait_for_second = false;
        for (int k = 0; k < 2000 && !__atomic_load_n(&c->most, __ATOMIC_RELAXED); k++)
            usleep(1000);
    }
    __atomic_fetch_add(&c->counts[i], 1, __ATOMIC_RELAXED);
    int seen = __atomic_load_n(&c->most, __ATOMIC_RELAXED);
    while (worker > seen && !__atomic_compare_exchange_n(&c->most, &seen, worker, false, __ATOMIC_RELAXED,
                                                         __ATOMIC_RELAXED)) {
    }
    return i == c->fail_at ? error_set(e, "item %zu failed", i) : 0;
}

/* parallel_each runs every item exactly once, on as many threads as asked
 * (0: one a core), never more than the items (at least one), and on more
 * than one where more are asked: worker 0's first item waits for another
 * worker's. A failing item's error comes back and the run says so. Random
 * counts of items and threads. */
START_TEST(parallel_each_once)
{
    Rng r = {test_seed() ^ 0xEAC4};
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (int round = 0; round < 50; round++) {
        static EachCtx c;
        memset(&c, 0, sizeof c);
        const size_t n = (size_t)rng_range(&r, 0, 600);
        const int threads = (int)rng_range(&r, 0, 9);
        long want = threads > 0 ? threads : cores < 1 ? 1 : cores;
        want = want > (long)n ? (n ? (long)n : 1) : want;
        ck_assert_seeded(parallel_threads(n, threads) == want, "%zu items, %d asked: %d threads, not %ld", n,
                         threads, parallel_threads(n, threads), want);
        c.fail_at = n + 1;
        c.wait_for_second = want > 1;
        Error e;
        ck_assert_int_eq(parallel_each(n, threads, each_item, &c, &e), 0);
        for (size_t i = 0; i < n; i++)
            ck_assert_seeded(c.counts[i] == 1, "%zu items, %d threads: item %zu ran %u times", n, threads, i,
                             c.counts[i]);
        ck_assert_seeded(c.most < want && (want == 1 || c.most > 0), "%zu items on %ld threads: workers up to %d",
                         n, want, c.most);
        if (n) {
            memset(&c, 0, sizeof c);
            c.fail_at = (size_t)rng_range(&r, 0, (uint64_t)n - 1);
            ck_assert_int_eq(parallel_each(n, threads, each_item, &c, &e), -1);
            char msg[64];
            snprintf(msg, sizeof msg, "item %zu failed", c.fail_at);
            ck_assert_str_eq(e.msg, msg);
        }
    }
}
END_TEST

Suite *suite_kernels(void)
{
    Suite *s = suite_create("kernels");
    TCase *t = tcase_create("cpu");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, fp16_codec);
    tcase_add_test(t, e2m1_words);
    tcase_add_test(t, write_read_bounds);
    tcase_add_test(t, writers_match_calc);
    tcase_add_test(t, cache_bytes_are_calc_bytes);
    tcase_add_test(t, random_fill_as_documented);
    tcase_add_test(t, cuda_options_from_env);
    tcase_add_test(t, integer_writers_round_as_calc);
    tcase_add_test(t, int4_writer_near_half);
    tcase_add_test(t, cpu_matches_f64);
    tcase_add_test(t, cpu_fp8_arith_matches_f64);
    tcase_add_test(t, kivi_window);
    tcase_add_test(t, sweep_time_left);
    tcase_add_test(t, slope_of_each_time);
    tcase_add_test(t, parallel_each_once);
    suite_add_tcase(s, t);
    return s;
}
