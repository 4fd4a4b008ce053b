/* kv_attn.h - decode attention over a quantized KV cache, backend-neutral.
 *
 * One attention layer's cache for B sequences: H_kv KV heads of dimension
 * D, up to `capacity` tokens each. Every backend reads the same bytes in the
 * same layout, written here on the host by quantize-on-write (kv_append), so
 * a GPU result can be checked against the CPU reference on identical input.
 *
 * Layouts (row major; B batch, H kv_heads, C capacity, D head_dim), each
 * array named by KvArray (KV_ARR_K for k, KV_ARR_K_SCALE for k_scale, ...):
 *
 *   bf16    k, v        uint16 (B, H, C, D)          BF16 bits
 *   fp8     k, v        uint8  (B, H, C, D)          E4M3FN codes
 *           k_tensor... float  (H) or (1)            x = decode(code) x scale
 *   int8    k, v        int8   (B, H, C, D)          symmetric
 *           k_scale...  uint16 (B, H, C)             FP16, one per token-head vector
 *   int4    k           uint8  (B, H, C/32, D, 16)   KIVI keys: 32 tokens of one channel,
 *                                                    token 2j in the low nibble of byte j
 *           k_scale, k_zero  uint16 (B, H, C/32, D)  FP16 step and minimum per group
 *           v           uint8  (B, H, C, D/2)        KIVI values: channel 2j low nibble
 *           v_scale, v_zero  uint16 (B, H, C, D/32)  FP16 per 32 channels of a token
 *           k_res, v_res uint16 (B, H, R + 32, D)    BF16 residual window: tokens
 *                                                    `quantized` .. len-1
 *   nvfp4   k, v        uint16 (B, H, C, D/4)        E2M1, channels 4j .. 4j+3 in word j
 *                                                    (little-endian; bits: kv_e2m1_code)
 *           k_block...  uint8  (B, H, C, D/16)       E4M3 block scales
 *           k_tensor... float  (1)                   FP32 tensor scale
 *   mxfp4   k, v        uint16 (B, H, C, D/4)        E2M1 as above, its own bit order
 *           k_block...  uint8  (B, H, C, D/32)       E8M0 block scales
 *
 * Integer values are x = zero + scale x q (int4, q in 0..15) and
 * x = scale x q (int8, q in -127..127). Tensor scales (fp8, nvfp4) are fixed
 * by the first append (amax / 448, amax / (448 x 6)), as a calibration pass
 * would fix them; later values beyond them saturate.
 *
 * An E2M1 word holds four codes, each a sign s and three magnitude bits
 * e1 e0 m, at bit positions chosen per format (KV_E2M1_SIGN_*, KV_E2M1_MAG_*:
 * nibble i of each is code i's sign bit and the lowest bit of its
 * magnitude). They are chosen so that the CUDA kernels make the four FP16
 * (nvfp4) or BF16 (mxfp4) operand pairs of two words, channels (k, k + 4),
 * in nine integer operations (nvfp4) or eleven (mxfp4) where plain nibbles
 * take fifteen (kernels/cuda/convert.cuh, e2m1x8, says which code takes
 * what).
 */
#ifndef KVLAB_KV_ATTN_H
#define KVLAB_KV_ATTN_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KV_KIVI_GROUP 32
#define KV_HEAD_DIM_MAX 256             // kv_shape_check
#define KV_NVFP4_BLOCK 16               // channels a block scale covers
#define KV_MXFP4_BLOCK 32
#define KV_FP4_BLOCK(f) ((f) == KV_NVFP4 ? KV_NVFP4_BLOCK : KV_MXFP4_BLOCK)

#ifdef __CUDACC__
#define KV_INLINE static inline __host__ __device__
#else
#define KV_INLINE static inline
#endif

typedef enum { KV_BF16, KV_FP8, KV_INT8, KV_INT4, KV_NVFP4, KV_MXFP4, KV_FORMATS } KvFormat;

#define KV_E2M1_SIGN_NVFP4 0xEDCFu      // signs at bits 15, 12, 13, 14
#define KV_E2M1_MAG_NVFP4 0x0369u       // magnitudes from bits 9, 6, 3, 0
#define KV_E2M1_SIGN_MXFP4 0xB9CAu      // 10, 12, 9, 11
#define KV_E2M1_MAG_MXFP4 0xD036u       // 6, 3, 0, 13

/* Where code i (0..3) of an E2M1 word of format f (nvfp4, mxfp4) keeps its
 * sign, and its magnitude's lowest bit. */
KV_INLINE unsigned kv_e2m1_sign_at(KvFormat f, unsigned i)
{
    return ((f == KV_NVFP4 ? KV_E2M1_SIGN_NVFP4 : KV_E2M1_SIGN_MXFP4) >> 4 * i) & 15;
}

KV_INLINE unsigned kv_e2m1_mag_at(KvFormat f, unsigned i)
{
    return ((f == KV_NVFP4 ? KV_E2M1_MAG_NVFP4 : KV_E2M1_MAG_MXFP4) >> 4 * i) & 15;
}

/* Code i of a word, s e1 e0 m; and a code's bits as code i of a word. */
KV_INLINE unsigned kv_e2m1_code(KvFormat f, unsigned word, unsigned i)
{
    return (word >> kv_e2m1_sign_at(f, i) & 1) << 3 | (word >> kv_e2m1_mag_at(f, i) & 7);
}

KV_INLINE unsigned kv_e2m1_bits(KvFormat f, unsigned code, unsigned i)
{
    return (code >> 3 & 1) << kv_e2m1_sign_at(f, i) | (code & 7) << kv_e2m1_mag_at(f, i);
}

/* The calc/format.h id of each ("bf16", "fp8_e4m3", ...). */
const char *kv_format_id(KvFormat f);
int kv_format_parse(const char *id, KvFormat *out, Error *e);

typedef struct {
    KvFormat format;
    uint32_t batch, kv_heads, q_heads, head_dim;
    uint32_t capacity;          // tokens per sequence
    uint32_t residual;          // int4: most recent tokens kept in BF16 (a multiple of 32)
    bool head_scales;           // fp8: one scale per KV head instead of one per tensor
} KvShape;

/* The cache's arrays by name, K's and V's of each kind side by side: the
 * index of each in kv_array_bytes, kv_array_ptr and the CUDA plugin's
 * device copy, and the order of KvCache's pointers (kv_cache.c pins it). */
typedef enum {
    KV_ARR_K, KV_ARR_V,                 // codes (bf16: the values)
    KV_ARR_K_SCALE, KV_ARR_V_SCALE,     // int8: FP16 per vector; int4: FP16 steps per group
    KV_ARR_K_ZERO, KV_ARR_V_ZERO,       // int4: FP16 minima per group
    KV_ARR_K_BLOCK, KV_ARR_V_BLOCK,     // nvfp4: E4M3, mxfp4: E8M0 block scales
    KV_ARR_K_TENSOR, KV_ARR_V_TENSOR,   // fp8, nvfp4: FP32 tensor scales
    KV_ARR_K_RES, KV_ARR_V_RES,         // int4: the BF16 residual window
    KV_ARRAYS
} KvArray;

typedef struct {
    KvShape s;
    uint32_t len;               // tokens stored, the same in every sequence
    uint32_t quantized;         // int4: tokens in whole quantized groups
    bool calibrated;            // tensor scales fixed
    /* the arrays, in KvArray's order */
    uint8_t *k, *v;
    uint16_t *k_scale, *v_scale, *k_zero, *v_zero;
    uint8_t *k_block, *v_block;
    float *k_tensor, *v_tensor;
    uint16_t *k_res, *v_res;
} KvCache;

/* Bytes of each array of a cache of this shape (0 where the format has
 * none), indexed by KvArray. */
void kv_array_bytes(const KvShape *s, size_t bytes[KV_ARRAYS]);
/* The pointer KvCache keeps array a in. */
void **kv_array_ptr(KvCache *c, KvArray a);
int kv_shape_check(const KvShape *s, Error *e);

int kv_cache_init(KvCache *c, const KvShape *s, Error *e);
void kv_cache_done(KvCache *c);

/* Appends `tokens` tokens to every sequence, quantizing on write;
 * k and v are (B, H, tokens, D) floats. */
int kv_append(KvCache *c, const float *k, const float *v, uint32_t tokens, Error *e);

/* Fills the cache with `len` tokens of random but valid codes and scales,
 * for benchmarks (quantizing billions of floats on the host would take
 * longer than the measurement): kv_fill.h's bytes, which the CUDA plugin's
 * fill writes on the device too. */
int kv_fill_random(KvCache *c, uint32_t len, uint64_t seed, Error *e);

/* int4 (KIVI): of `len` tokens, those in whole quantized groups once the
 * newest `residual` or more are kept in BF16 (a multiple of 32). */
uint32_t kv_kivi_quantized(uint32_t residual, uint32_t len);

/* The stored token t of sequence b, head h, dequantized: k, v (D). */
void kv_dequant(const KvCache *c, uint32_t b, uint32_t h, uint32_t t, float *k, float *v);

/* One decode step: q (B, H_q, D) -> out (B, H_q, D), softmax(q.k / sqrt D) v
 * over the `len` stored tokens; query head j reads KV head j / (H_q / H_kv). */
typedef struct {
    const char *name;           // "cpu", "cuda"
    int (*decode)(void *ctx, const KvCache *c, const float *q, float *out, Error *e);
    void *ctx;
} KvBackend;

/* The CPU reference, threaded over sequences and KV heads. */
int kv_decode_cpu(const KvCache *c, const float *q, float *out, int threads, Error *e);

/* Arithmetic of the FP8 kernels the CPU reference can repeat (all false:
 * FP32 throughout, kv_decode_cpu). */
typedef struct {
    /* q / sqrt(D) rounded to E4M3 (to nearest, saturating) with a scale
     * per query head that maps its largest magnitude to 448, as FP8 paths
     * A and C give it to their MMAs. */
    bool fp8_q;
    /* The probabilities rounded to E4M3 before they weight the values, as
     * FP8 path C (FlashAttention-3's arithmetic) gives them to its p.v
     * MMAs: p = e^(s - m) times 2^8, where m is the reference maximum
     * rounded up to a multiple of ln 2, so that a block's scale 2^8 e^-m
     * moves by powers of two only and the codes do not depend on how the
     * tokens are split into blocks (but for E4M3 subnormals, probabilities
     * under 2^-14 of a block's reference); the sum the output is divided
     * by is taken of the probabilities before rounding, as there. */
    bool fp8_p;
} KvCpuOptions;

/* The query FP8 paths A and C give their MMAs (KvCpuOptions.fp8_q), in
 * place: each head's q / sqrt(D) rounded to E4M3 (to nearest, saturating)
 * with a scale mapping its largest magnitude to 448, given back in q's
 * own scale. */
void kv_e4m3_query(float *q, size_t heads, uint32_t D);

/* kv_decode_cpu with that arithmetic (o NULL: none of it). */
int kv_decode_cpu_with(const KvCache *c, const float *q, float *out, int threads, const KvCpuOptions *o,
                       Error *e);

#ifdef __cplusplus
}
#endif

#endif
