/* kv_fill.h - the random cache that benchmarks time, one definition for
 * the host (kv_fill_random) and the device (the CUDA plugin's fill).
 *
 * Byte j of array a of a cache of format f filled from `seed` is
 * kv_fill_byte(f, a, seed, j): a function of those alone, so the device
 * fills its arrays in parallel and the host in order, and both hold the
 * same bytes. Random codes, fixed scales, every value finite:
 *
 *   bf16    k, v, and int4's window: magnitudes 0.5 to 1 (exponent fixed,
 *           sign and mantissa random)
 *   fp8     k, v: every E4M3 code whose mantissa's top bit is clear (so
 *           never the NaN codes 0x7F, 0xFF); tensor scales 1/64
 *   int8    k, v: -127 to 127 (random bytes, -128 read as 0); FP16 scales 1/127
 *   int4    k, v: 0 to 15; FP16 steps 2/15 and minima -1: values -1 to 1
 *   nvfp4   k, v: every E2M1 code; E4M3 block scales 0.5 to 1.875 (codes
 *           0x30 to 0x3F); tensor scale 1/32
 *   mxfp4   k, v: every E2M1 code; E8M0 block scales 2^-5 or 2^-4 (codes
 *           122, 123)
 */
#ifndef KVLAB_KV_FILL_H
#define KVLAB_KV_FILL_H

#include "kv_attn.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The fixed scales, as stored (tests/test_kernels.c pins each to its value). */
#define KV_FILL_INT8_SCALE 0x2008u      // FP16 1/127
#define KV_FILL_INT4_STEP 0x3044u       // FP16 2/15
#define KV_FILL_INT4_MIN 0xBC00u        // FP16 -1
#define KV_FILL_FP8_TENSOR 0x3C800000u  // FP32 1/64
#define KV_FILL_NVFP4_TENSOR 0x3D000000u// FP32 1/32

/* 16-bit words of random bits r are (r & keep) | set: BF16 of magnitude
 * 0.5 to 1, E4M3 codes without the NaN ones, NVFP4's block scales, MXFP4's. */
#define KV_FILL_BF16_KEEP 0x807Fu
#define KV_FILL_BF16_SET 0x3F00u
#define KV_FILL_FP8_KEEP 0xF7F7u
#define KV_FILL_NVFP4_BLOCK_KEEP 0x3F3Fu
#define KV_FILL_NVFP4_BLOCK_SET 0x3030u
#define KV_FILL_MXFP4_BLOCK_KEEP 0x0101u
#define KV_FILL_MXFP4_BLOCK_SET 0x7A7Au

/* SplitMix64 of the byte's place: each array its own stream. */
KV_INLINE uint64_t kv_fill_random_bits(uint64_t seed, KvArray a, uint64_t j)
{
    uint64_t z = seed + (uint64_t)a * 7919 + j * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* What array a of format f holds: 16-bit words (r & keep) | set of random
 * bits r (keep 0: the constant `set`), or, for a tensor scale, the FP32
 * bits `tensor`. */
typedef struct {
    uint16_t keep, set;
    uint32_t tensor;
} KvFillRule;

KV_INLINE KvFillRule kv_fill_rule(KvFormat f, KvArray a)
{
    const KvFillRule any = {0xFFFFu, 0, 0}, bf16 = {KV_FILL_BF16_KEEP, KV_FILL_BF16_SET, 0};
    const bool codes = a == KV_ARR_K || a == KV_ARR_V;
    switch (f) {
    case KV_BF16:
        return bf16;
    case KV_FP8: {
        const KvFillRule r = {KV_FILL_FP8_KEEP, 0, KV_FILL_FP8_TENSOR};
        return r;
    }
    case KV_INT8: {
        const KvFillRule scale = {0, KV_FILL_INT8_SCALE, 0};
        return codes ? any : scale;
    }
    case KV_INT4: {
        const KvFillRule step = {0, KV_FILL_INT4_STEP, 0}, minimum = {0, KV_FILL_INT4_MIN, 0};
        return codes ? any
             : a == KV_ARR_K_SCALE || a == KV_ARR_V_SCALE ? step
             : a == KV_ARR_K_ZERO || a == KV_ARR_V_ZERO ? minimum : bf16;
    }
    case KV_NVFP4: {
        const KvFillRule block = {KV_FILL_NVFP4_BLOCK_KEEP, KV_FILL_NVFP4_BLOCK_SET, KV_FILL_NVFP4_TENSOR};
        return codes ? any : block;
    }
    default: {
        const KvFillRule block = {KV_FILL_MXFP4_BLOCK_KEEP, KV_FILL_MXFP4_BLOCK_SET, 0};
        return codes ? any : block;
    }
    }
}

/* Byte j of array a (little-endian words: even bytes the low halves). */
KV_INLINE uint8_t kv_fill_byte(KvFormat f, KvArray a, uint64_t seed, uint64_t j)
{
    const KvFillRule r = kv_fill_rule(f, a);
    if (a == KV_ARR_K_TENSOR || a == KV_ARR_V_TENSOR)
        return (uint8_t)(r.tensor >> 8 * (j % 4));
    const unsigned half = j & 1 ? 8 : 0;
    const uint8_t b = (uint8_t)(((uint8_t)kv_fill_random_bits(seed, a, j) & (r.keep >> half)) | (r.set >> half));
    return f == KV_INT8 && (a == KV_ARR_K || a == KV_ARR_V) && b == 0x80 ? 0 : b;
}

#ifdef __cplusplus
}
#endif

#endif
