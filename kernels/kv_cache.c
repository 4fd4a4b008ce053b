/* kv_cache.c - the host copy of a quantized KV cache: layout (KvArray),
 * quantize-on-write, random fill for benchmarks (kv_fill.h), and
 * dequantization (the definition the kernels are checked against). See
 * kv_attn.h for the layouts. */
#include "kv_attn.h"
#include "kv_fill.h"

#include "ascii.h"
#include "minifloat.h"
#include "quotient.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const IDS[KV_FORMATS] = {
    [KV_BF16] = "bf16", [KV_FP8] = "fp8_e4m3", [KV_INT8] = "int8",
    [KV_INT4] = "int4", [KV_NVFP4] = "nvfp4",  [KV_MXFP4] = "mxfp4",
};

const char *kv_format_id(KvFormat f)
{
    return IDS[f];
}

int kv_format_parse(const char *id, KvFormat *out, Error *e)
{
    static const struct { const char *alias; KvFormat f; } ALIASES[] = {{"fp8", KV_FP8}, {"e4m3", KV_FP8}};
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (ascii_ieq(ALIASES[i].alias, id)) {
            *out = ALIASES[i].f;
            return 0;
        }
    for (int f = 0; f < KV_FORMATS; f++)
        if (ascii_ieq(IDS[f], id)) {
            *out = (KvFormat)f;
            return 0;
        }
    return error_set(e, "the kernels have no format '%s'; expected bf16, fp8_e4m3, int8, int4, "
                        "nvfp4 or mxfp4", id);
}

/* ------------------------------------------------------------------------
 * Layout
 */

int kv_shape_check(const KvShape *s, Error *e)
{
    if (!s->batch || !s->kv_heads || !s->q_heads || !s->head_dim || !s->capacity)
        return error_set(e, "batch, heads, head dimension and capacity must all be at least 1");
    if (s->q_heads % s->kv_heads)
        return error_set(e, "query heads (%u) must be a multiple of KV heads (%u)", s->q_heads,
                         s->kv_heads);
    if (s->head_dim % 32 || s->head_dim > KV_HEAD_DIM_MAX)
        return error_set(e, "the kernels take a head dimension that is a multiple of 32, at most "
                            "%d (not %u)", KV_HEAD_DIM_MAX, s->head_dim);
    if (s->format == KV_INT4 && (s->capacity % KV_KIVI_GROUP || s->residual % KV_KIVI_GROUP))
        return error_set(e, "int4 (KIVI) needs a capacity and residual window in multiples of 32");
    return 0;
}

/* What each array holds of one token-head vector of D elements (K's and
 * V's alike, by pair: KvArray / 2): `bits` for every `per` elements, or
 * once per vector where `per` is 0. The tensor scales and int4's window
 * are not per vector: kv_array_bytes sizes them apart. Summed over a
 * format's K arrays, this is calc's format_vector_bytes (the bandwidth
 * figures count calc's bytes, the allocation these; tests/test_kernels.c
 * pins the two together). */
typedef struct {
    uint8_t bits, per;
} PerVector;

enum { PAIRS = KV_ARRAYS / 2 };

static const PerVector PER_VECTOR[KV_FORMATS][PAIRS] = {
    [KV_BF16] = {[KV_ARR_K / 2] = {16, 1}},
    [KV_FP8] = {[KV_ARR_K / 2] = {8, 1}},
    [KV_INT8] = {[KV_ARR_K / 2] = {8, 1}, [KV_ARR_K_SCALE / 2] = {16, 0}},
    /* keys' steps and minima are per channel over 32 tokens, values' per
     * 32 channels of a token: per vector, the same 16 bits per 32 elements */
    [KV_INT4] = {[KV_ARR_K / 2] = {4, 1}, [KV_ARR_K_SCALE / 2] = {16, KV_KIVI_GROUP},
                 [KV_ARR_K_ZERO / 2] = {16, KV_KIVI_GROUP}},
    [KV_NVFP4] = {[KV_ARR_K / 2] = {4, 1}, [KV_ARR_K_BLOCK / 2] = {8, KV_NVFP4_BLOCK}},
    [KV_MXFP4] = {[KV_ARR_K / 2] = {4, 1}, [KV_ARR_K_BLOCK / 2] = {8, KV_MXFP4_BLOCK}},
};

/* K's arrays and V's alternate (PER_VECTOR is by pair), and KvCache has one
 * pointer per array, in KvArray's order. */
_Static_assert(KV_ARR_V == KV_ARR_K + 1 && KV_ARR_V_SCALE == KV_ARR_K_SCALE + 1 &&
                   KV_ARR_V_ZERO == KV_ARR_K_ZERO + 1 && KV_ARR_V_BLOCK == KV_ARR_K_BLOCK + 1 &&
                   KV_ARR_V_TENSOR == KV_ARR_K_TENSOR + 1 && KV_ARR_V_RES == KV_ARR_K_RES + 1 &&
                   KV_ARRAYS % 2 == 0,
               "KvArray pairs K's array with V's");
_Static_assert(offsetof(KvCache, v_res) - offsetof(KvCache, k) == (KV_ARRAYS - 1) * sizeof(void *),
               "KvCache holds one pointer per KvArray, in its order");
/* The element types the per-vector table counts in bits. */
_Static_assert(sizeof *((KvCache *)0)->k_scale == 2 && sizeof *((KvCache *)0)->k_zero == 2 &&
                   sizeof *((KvCache *)0)->k_block == 1 && sizeof *((KvCache *)0)->k_res == 2 &&
                   sizeof *((KvCache *)0)->k_tensor == 4,
               "FP16 steps and minima, 8-bit block scales, BF16 window, FP32 tensor scales");

void kv_array_bytes(const KvShape *s, size_t b[KV_ARRAYS])
{
    const size_t vectors = (size_t)s->batch * s->kv_heads * s->capacity, D = s->head_dim;
    for (int a = 0; a < KV_ARRAYS; a++) {
        const PerVector pv = PER_VECTOR[s->format][a / 2];
        b[a] = vectors * (pv.per ? D / pv.per : 1) * pv.bits / 8;
    }
    /* FP32 tensor scales: one per KV head (fp8 with head_scales) or one */
    const size_t tensors = s->format == KV_FP8 || s->format == KV_NVFP4
                               ? (s->format == KV_FP8 && s->head_scales ? s->kv_heads : 1) : 0;
    b[KV_ARR_K_TENSOR] = b[KV_ARR_V_TENSOR] = tensors * sizeof(float);
    /* int4: the BF16 window, its `residual` tokens and the group filling */
    b[KV_ARR_K_RES] = b[KV_ARR_V_RES] = s->format == KV_INT4
        ? (size_t)s->batch * s->kv_heads * (s->residual + KV_KIVI_GROUP) * D * 2 : 0;
}

void **kv_array_ptr(KvCache *c, KvArray a)
{
    void **p[KV_ARRAYS] = {
        [KV_ARR_K] = (void **)&c->k,                [KV_ARR_V] = (void **)&c->v,
        [KV_ARR_K_SCALE] = (void **)&c->k_scale,    [KV_ARR_V_SCALE] = (void **)&c->v_scale,
        [KV_ARR_K_ZERO] = (void **)&c->k_zero,      [KV_ARR_V_ZERO] = (void **)&c->v_zero,
        [KV_ARR_K_BLOCK] = (void **)&c->k_block,    [KV_ARR_V_BLOCK] = (void **)&c->v_block,
        [KV_ARR_K_TENSOR] = (void **)&c->k_tensor,  [KV_ARR_V_TENSOR] = (void **)&c->v_tensor,
        [KV_ARR_K_RES] = (void **)&c->k_res,        [KV_ARR_V_RES] = (void **)&c->v_res,
    };
    return p[a];
}

int kv_cache_init(KvCache *c, const KvShape *s, Error *e)
{
    memset(c, 0, sizeof *c);
    if (kv_shape_check(s, e))
        return -1;
    c->s = *s;
    size_t bytes[KV_ARRAYS];
    kv_array_bytes(s, bytes);
    for (int i = 0; i < KV_ARRAYS; i++)
        if (bytes[i] && !(*kv_array_ptr(c, i) = calloc(1, bytes[i]))) {
            kv_cache_done(c);
            return error_runtime(e, "out of host memory for a %zu-byte cache array", bytes[i]);
        }
    return 0;
}

void kv_cache_done(KvCache *c)
{
    for (int i = 0; i < KV_ARRAYS; i++)
        free(*kv_array_ptr(c, i));
    memset(c, 0, sizeof *c);
}

/* ------------------------------------------------------------------------
 * Quantize on write
 */

/* Index of token t's vector in (B, H, C, ...) arrays. */
static size_t vec_index(const KvShape *s, uint32_t b, uint32_t h, uint32_t t)
{
    return ((size_t)b * s->kv_heads + h) * s->capacity + t;
}

/* int4: index of token t's vector in the residual window (B, H, R + 32, D),
 * for t at or past c->quantized. */
static size_t res_index(const KvCache *c, uint32_t b, uint32_t h, uint32_t t)
{
    return ((size_t)b * c->s.kv_heads + h) * (c->s.residual + KV_KIVI_GROUP) + (t - c->quantized);
}

static float amax(const float *x, size_t n, size_t stride)
{
    float m = 0;
    for (size_t i = 0; i < n; i++) {
        float a = fabsf(x[i * stride]);
        m = a > m ? a : m;              // fmaxf's answer, NaN passed over, without its call
    }
    return m;
}

/* r clamped to lo .. hi, a NaN to hi: fmax(lo, fmin(hi, r)) without the
 * calls. */
static double clamp_code(double r, double lo, double hi)
{
    return r > hi || r != r ? hi : r < lo ? lo : r;
}

/* int8: one symmetric FP16 scale per vector; each code the true x / s
 * rounded once, as calc's quantizers round (quotient.h). */
static void put_int8(const float *x, size_t D, int8_t *q, uint16_t *scale)
{
    float s = fp16_value(fp16_bits(amax(x, D, 1) / 127.0f));
    *scale = fp16_bits(s);
    const Quotient qs = quotient_of(1, 0, s, 0);
    for (size_t i = 0; i < D; i++) {
        double r = s > 0 ? quotient_rint(&qs, x[i]) : 0;
        q[i] = (int8_t)clamp_code(r, -127, 127);
    }
}

/* int4 (KIVI): FP16 step and minimum for n values at x[i * stride]; the
 * codes go to code[i] (0..15). */
static void put_int4_group(const float *x, size_t n, size_t stride, uint8_t *code, uint16_t *scale,
                           uint16_t *zero)
{
    float lo = x[0], hi = x[0];
    for (size_t i = 1; i < n; i++) {    // fminf and fmaxf's answers (a NaN passed over), without their calls
        float y = x[i * stride];
        lo = y < lo || lo != lo ? y : lo;
        hi = y > hi || hi != hi ? y : hi;
    }
    float m = fp16_value(fp16_bits(lo)), s = fp16_value(fp16_bits((hi - lo) / 15.0f));
    *scale = fp16_bits(s);
    *zero = fp16_bits(m);
    const Quotient qs = quotient_of(1, m, s, 0);    // (x - m) / s, rounded once
    for (size_t i = 0; i < n; i++) {
        double r = s > 0 ? quotient_rint(&qs, x[i * stride]) : 0;
        code[i] = (uint8_t)clamp_code(r, 0, 15);
    }
}

static void put_nibbles(const uint8_t *codes, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i += 2)
        out[i / 2] = (uint8_t)(codes[i] | codes[i + 1] << 4);
}

/* n E2M1 codes as n/4 words, little-endian, in f's bit order. */
static void put_e2m1(KvFormat f, const uint8_t *codes, size_t n, uint8_t *out)
{
    for (size_t j = 0; j < n / 4; j++) {
        unsigned w = 0;
        for (unsigned i = 0; i < 4; i++)
            w |= kv_e2m1_bits(f, codes[4 * j + i], i);
        out[2 * j] = (uint8_t)w, out[2 * j + 1] = (uint8_t)(w >> 8);
    }
}

/* The scale a block's codes multiply: NVFP4's E4M3 block scale times the
 * tensor scale, MXFP4's E8M0 (no tensor scale). */
static float fp4_scale(KvFormat f, uint8_t code, const float *tensor)
{
    return f == KV_NVFP4 ? minifloat_decode(&MF_E4M3, code) * *tensor : e8m0_decode(code);
}

/* NVFP4 (E4M3 block scales over the tensor scale) or MXFP4 (E8M0). */
static void put_fp4_blocks(KvFormat f, const float *x, size_t D, const float *tensor, uint8_t *q,
                           uint8_t *scales)
{
    const size_t block = KV_FP4_BLOCK(f);
    uint8_t codes[KV_HEAD_DIM_MAX];
    for (size_t b0 = 0; b0 < D; b0 += block) {
        float a = amax(x + b0, block, 1);
        uint8_t sc = f == KV_NVFP4 ? minifloat_encode(&MF_E4M3, a / MF_E2M1.max / *tensor, true)
                                   : e8m0_from_exponent(a > 0 ? ilogbf(a) - 2 : -127);  // floor(log2 amax) - 2
        scales[b0 / block] = sc;
        const float s = fp4_scale(f, sc, tensor);
        for (size_t i = 0; i < block; i++)
            codes[b0 + i] = s > 0 ? minifloat_encode(&MF_E2M1, x[b0 + i] / s, true) : 0;
    }
    put_e2m1(f, codes, D, q);
}

/* Fixes the tensor scales from the first tokens written. */
static void calibrate(KvCache *c, const float *k, const float *v, uint32_t tokens)
{
    const KvShape *s = &c->s;
    size_t per_head = (size_t)tokens * s->head_dim;
    if (s->format == KV_FP8) {
        for (uint32_t h = 0; h < (s->head_scales ? s->kv_heads : 1); h++) {
            float ak = 0, av = 0;
            for (uint32_t b = 0; b < s->batch; b++)
                for (uint32_t hh = 0; hh < s->kv_heads; hh++)
                    if (!s->head_scales || hh == h) {
                        size_t off = ((size_t)b * s->kv_heads + hh) * per_head;
                        ak = fmaxf(ak, amax(k + off, per_head, 1));
                        av = fmaxf(av, amax(v + off, per_head, 1));
                    }
            c->k_tensor[h] = ak > 0 ? ak / MF_E4M3.max : 1;
            c->v_tensor[h] = av > 0 ? av / MF_E4M3.max : 1;
        }
    } else if (s->format == KV_NVFP4) {
        size_t n = (size_t)s->batch * s->kv_heads * per_head;
        float ak = amax(k, n, 1), av = amax(v, n, 1);
        c->k_tensor[0] = ak > 0 ? ak / (MF_E4M3.max * MF_E2M1.max) : 1;
        c->v_tensor[0] = av > 0 ? av / (MF_E4M3.max * MF_E2M1.max) : 1;
    }
    c->calibrated = true;
}

/* Moves whole groups of 32 tokens out of the int4 residual window. */
static void kivi_flush(KvCache *c)
{
    const KvShape *s = &c->s;
    size_t D = s->head_dim, res_cap = s->residual + KV_KIVI_GROUP;
    while (c->len - c->quantized >= s->residual + KV_KIVI_GROUP) {
        uint32_t g = c->quantized / KV_KIVI_GROUP;
        for (uint32_t b = 0; b < s->batch; b++)
            for (uint32_t h = 0; h < s->kv_heads; h++) {
                size_t bh = (size_t)b * s->kv_heads + h;
                float kf[KV_KIVI_GROUP * KV_HEAD_DIM_MAX], vf[KV_HEAD_DIM_MAX];
                const uint16_t *kr = c->k_res + bh * res_cap * D, *vr = c->v_res + bh * res_cap * D;
                for (size_t i = 0; i < KV_KIVI_GROUP * D; i++)
                    kf[i] = bf16_value(kr[i]);
                size_t grp = (bh * (s->capacity / KV_KIVI_GROUP) + g) * D;
                for (size_t d = 0; d < D; d++) {            // keys: per channel over 32 tokens
                    uint8_t codes[KV_KIVI_GROUP];
                    put_int4_group(kf + d, KV_KIVI_GROUP, D, codes, &c->k_scale[grp + d],
                                   &c->k_zero[grp + d]);
                    put_nibbles(codes, KV_KIVI_GROUP, c->k + (grp + d) * 16);
                }
                for (uint32_t t = 0; t < KV_KIVI_GROUP; t++) {  // values: per token, 32 channels
                    size_t vi = vec_index(s, b, h, c->quantized + t);
                    uint8_t codes[KV_HEAD_DIM_MAX];
                    for (size_t d = 0; d < D; d++)
                        vf[d] = bf16_value(vr[t * D + d]);
                    for (size_t g32 = 0; g32 < D / 32; g32++)
                        put_int4_group(vf + g32 * 32, 32, 1, codes + g32 * 32,
                                       &c->v_scale[vi * (D / 32) + g32], &c->v_zero[vi * (D / 32) + g32]);
                    put_nibbles(codes, D, c->v + vi * D / 2);
                }
                size_t keep = (size_t)(c->len - c->quantized - KV_KIVI_GROUP) * D;
                memmove(c->k_res + bh * res_cap * D, kr + KV_KIVI_GROUP * D, keep * 2);
                memmove(c->v_res + bh * res_cap * D, vr + KV_KIVI_GROUP * D, keep * 2);
            }
        c->quantized += KV_KIVI_GROUP;
    }
}

static void put_token(KvCache *c, uint32_t b, uint32_t h, uint32_t t, const float *k, const float *v)
{
    const KvShape *s = &c->s;
    size_t D = s->head_dim, vi = vec_index(s, b, h, t);
    switch (s->format) {
    case KV_BF16:
        for (size_t d = 0; d < D; d++) {
            ((uint16_t *)c->k)[vi * D + d] = bf16_bits(k[d]);
            ((uint16_t *)c->v)[vi * D + d] = bf16_bits(v[d]);
        }
        break;
    case KV_FP8: {
        float sk = c->k_tensor[s->head_scales ? h : 0], sv = c->v_tensor[s->head_scales ? h : 0];
        for (size_t d = 0; d < D; d++) {
            c->k[vi * D + d] = minifloat_encode(&MF_E4M3, k[d] / sk, true);
            c->v[vi * D + d] = minifloat_encode(&MF_E4M3, v[d] / sv, true);
        }
        break;
    }
    case KV_INT8:
        put_int8(k, D, (int8_t *)c->k + vi * D, &c->k_scale[vi]);
        put_int8(v, D, (int8_t *)c->v + vi * D, &c->v_scale[vi]);
        break;
    case KV_INT4: {                                         // into the residual window
        size_t res = res_index(c, b, h, t);
        for (size_t d = 0; d < D; d++) {
            c->k_res[res * D + d] = bf16_bits(k[d]);
            c->v_res[res * D + d] = bf16_bits(v[d]);
        }
        break;
    }
    case KV_NVFP4:
    case KV_MXFP4: {
        const size_t nb = D / KV_FP4_BLOCK(s->format);
        put_fp4_blocks(s->format, k, D, c->k_tensor, c->k + vi * D / 2, c->k_block + vi * nb);
        put_fp4_blocks(s->format, v, D, c->v_tensor, c->v + vi * D / 2, c->v_block + vi * nb);
        break;
    }
    default:
        break;
    }
}

int kv_append(KvCache *c, const float *k, const float *v, uint32_t tokens, Error *e)
{
    const KvShape *s = &c->s;
    if (tokens > s->capacity - c->len)
        return error_set(e, "the cache holds %u tokens; %u more do not fit after %u", s->capacity,
                         tokens, c->len);
    if (!c->calibrated)
        calibrate(c, k, v, tokens);
    size_t D = s->head_dim;
    for (uint32_t t = 0; t < tokens; t++) {
        for (uint32_t b = 0; b < s->batch; b++)
            for (uint32_t h = 0; h < s->kv_heads; h++) {
                size_t off = (((size_t)b * s->kv_heads + h) * tokens + t) * D;
                put_token(c, b, h, c->len, k + off, v + off);
            }
        c->len++;
        if (s->format == KV_INT4)
            kivi_flush(c);
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Random fill
 */

uint32_t kv_kivi_quantized(uint32_t residual, uint32_t len)
{
    return len > residual ? (len - residual) / KV_KIVI_GROUP * KV_KIVI_GROUP : 0;
}

int kv_fill_random(KvCache *c, uint32_t len, uint64_t seed, Error *e)
{
    const KvShape *s = &c->s;
    if (len > s->capacity)
        return error_set(e, "%u tokens do not fit in a cache of %u", len, s->capacity);
    size_t bytes[KV_ARRAYS];
    kv_array_bytes(s, bytes);
    for (int a = 0; a < KV_ARRAYS; a++) {
        uint8_t *p = *kv_array_ptr(c, (KvArray)a);
        for (size_t j = 0; j < bytes[a]; j++)
            p[j] = kv_fill_byte(s->format, (KvArray)a, seed, j);
    }
    c->len = len;
    c->quantized = s->format == KV_INT4 ? kv_kivi_quantized(s->residual, len) : 0;
    c->calibrated = true;
    return 0;
}

/* ------------------------------------------------------------------------
 * Dequantization: the definition
 */

/* E2M1 code i of a row of words p. */
static float e2m1_at(KvFormat f, const uint8_t *p, size_t i)
{
    unsigned w = p[i / 4 * 2] | (unsigned)p[i / 4 * 2 + 1] << 8;
    return minifloat_values(&MF_E2M1)[kv_e2m1_code(f, w, (unsigned)(i % 4))];
}

void kv_dequant(const KvCache *c, uint32_t b, uint32_t h, uint32_t t, float *k, float *v)
{
    const KvShape *s = &c->s;
    size_t D = s->head_dim, vi = vec_index(s, b, h, t);
    switch (s->format) {
    case KV_BF16:
        for (size_t d = 0; d < D; d++) {
            k[d] = bf16_value(((const uint16_t *)c->k)[vi * D + d]);
            v[d] = bf16_value(((const uint16_t *)c->v)[vi * D + d]);
        }
        break;
    case KV_FP8: {
        float sk = c->k_tensor[s->head_scales ? h : 0], sv = c->v_tensor[s->head_scales ? h : 0];
        const float *value = minifloat_values(&MF_E4M3);
        for (size_t d = 0; d < D; d++) {
            k[d] = value[c->k[vi * D + d]] * sk;
            v[d] = value[c->v[vi * D + d]] * sv;
        }
        break;
    }
    case KV_INT8: {
        float sk = fp16_value(c->k_scale[vi]), sv = fp16_value(c->v_scale[vi]);
        for (size_t d = 0; d < D; d++) {
            k[d] = (float)((const int8_t *)c->k)[vi * D + d] * sk;
            v[d] = (float)((const int8_t *)c->v)[vi * D + d] * sv;
        }
        break;
    }
    case KV_INT4:
        if (t >= c->quantized) {
            size_t res = res_index(c, b, h, t);
            for (size_t d = 0; d < D; d++) {
                k[d] = bf16_value(c->k_res[res * D + d]);
                v[d] = bf16_value(c->v_res[res * D + d]);
            }
        } else {
            size_t g = ((size_t)b * s->kv_heads + h) * (s->capacity / KV_KIVI_GROUP) + t / KV_KIVI_GROUP;
            size_t j = t % KV_KIVI_GROUP;
            for (size_t d = 0; d < D; d++) {
                uint8_t byte = c->k[(g * D + d) * 16 + j / 2];
                float q = (float)((byte >> (4 * (j % 2))) & 0xF);
                k[d] = fp16_value(c->k_zero[g * D + d]) + fp16_value(c->k_scale[g * D + d]) * q;
                uint8_t vb = c->v[vi * D / 2 + d / 2];
                float vq = (float)((vb >> (4 * (d % 2))) & 0xF);
                size_t vg = vi * (D / 32) + d / 32;
                v[d] = fp16_value(c->v_zero[vg]) + fp16_value(c->v_scale[vg]) * vq;
            }
        }
        break;
    case KV_NVFP4:
    case KV_MXFP4: {                        // a block's scale decoded once
        const size_t bs = KV_FP4_BLOCK(s->format), nb = D / bs;
        for (size_t b0 = 0; b0 < D; b0 += bs) {
            const float sk = fp4_scale(s->format, c->k_block[vi * nb + b0 / bs], c->k_tensor);
            const float sv = fp4_scale(s->format, c->v_block[vi * nb + b0 / bs], c->v_tensor);
            for (size_t d = b0; d < b0 + bs; d++) {
                k[d] = e2m1_at(s->format, c->k + vi * D / 2, d) * sk;
                v[d] = e2m1_at(s->format, c->v + vi * D / 2, d) * sv;
            }
        }
        break;
    }
    default:
        break;
    }
}
