// convert.cuh - register conversions of every format the kernels read:
// single codes to FP32 (the FP32 kernels), floats packed as FP16 or BF16
// operand pairs, and words of codes turned into operand pairs in a few
// integer operations (the tensor-core kernels). The bit layouts are
// kv_attn.h's.
#ifndef KVLAB_CUDA_CONVERT_CUH
#define KVLAB_CUDA_CONVERT_CUH

#include "common.cuh"

// ---------------------------------------------------------------------------
// Single codes as FP32

__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); }

// E4M3 bits placed in FP16 position: exponent and mantissa line up with a
// bias 8 lower, so the FP16 value times 256 is the E4M3 value, subnormals
// included (the cache never holds the NaN code).
__device__ __forceinline__ float e4m3_f(uint32_t b)
{
    uint16_t h = (uint16_t)(((b & 0x80u) << 8) | ((b & 0x7Fu) << 7));
    return __half2float(__ushort_as_half(h)) * 256.0f;
}

// E2M1 bits in FP16 position: times 2^14 is the E2M1 value (0.5 as a subnormal).
__device__ __forceinline__ float e2m1_f(uint32_t nib)
{
    uint16_t h = (uint16_t)(((nib & 8u) << 12) | ((nib & 7u) << 9));
    return __half2float(__ushort_as_half(h)) * 16384.0f;
}

__device__ __forceinline__ float e8m0_f(uint32_t code)
{
    return code ? __uint_as_float(code << 23) : __uint_as_float(0x00400000u);
}

__device__ __forceinline__ float h2f(uint16_t h) { return __half2float(__ushort_as_half(h)); }

// ---------------------------------------------------------------------------
// Floats packed as tensor-core operand pairs

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *(uint32_t *)&v;
}

__device__ __forceinline__ uint32_t pack_f16(float lo, float hi)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *(uint32_t *)&v;
}

// FP8 and INT8 codes, and E2M1 times an E4M3 block scale over 256 (2^-18 to
// 10.5, six significant bits at most, so exact even where FP16 is
// subnormal), are exact in FP16, which keeps 10 bits of
// the query and probabilities; MXFP4 uses BF16 for its range (E2M1 times an
// E8M0 scale can be 2^-128 or 2^128).
template <int FMT>
struct Op {
    static constexpr bool F16 = FMT == KV_FP8 || FMT == KV_INT8 || FMT == KV_NVFP4;
};

template <bool F16>
__device__ __forceinline__ uint32_t pack_op(float lo, float hi)
{
    return F16 ? pack_f16(lo, hi) : pack_bf16(lo, hi);
}

// Two operand pairs multiplied, lane by lane (FP16 or BF16).
template <bool F16>
__device__ __forceinline__ uint32_t mul2(uint32_t a, uint32_t b)
{
    if (F16) {
        __half2 y = __hmul2(*(__half2 *)&a, *(__half2 *)&b);
        return *(uint32_t *)&y;
    }
    __nv_bfloat162 y = __hmul2(*(__nv_bfloat162 *)&a, *(__nv_bfloat162 *)&b);
    return *(uint32_t *)&y;
}

// ---------------------------------------------------------------------------
// Words of codes as tensor-core operand pairs

// E4M3's largest finite value.
#define E4M3_MAX 448.0f

// Four floats as four E4M3 codes (bytes 0-3), rounded to nearest, saturating.
__device__ __forceinline__ uint32_t e4m3x4(float a, float b, float c, float d)
{
    uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3);
    uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(c, d), __NV_SATFINITE, __NV_E4M3);
    return lo | hi << 16;
}

// (x & mask) | y as one LOP3: written as two operations, the compiler
// keeps them two when y is a constant too.
__device__ __forceinline__ uint32_t and_or(uint32_t x, uint32_t mask, uint32_t y)
{
    uint32_t d;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(d) : "r"(x), "r"(mask), "r"(y));
    return d;
}

// Eight E2M1 codes, two stored words (kv_attn.h) as the low and high half
// of w, as four operand pairs (k, k + 4): code k of each word with its sign
// at bit 15 and its three magnitude bits (e1 e0 m) at MAG + 2 .. MAG, where
// they are the operand's two low exponent bits and its first mantissa bit.
// FP16 (MAG 9) then reads 2^-14 times the E2M1 value, BF16 (MAG 6) 2^-126
// times it, with their own bias, subnormals (0 and 0.5) included. A code
// whose sign and magnitude lie the same distance from there takes one
// shift and one mask, nvfp4's code 0 only the mask. One whose sign and
// magnitude both move left, by different distances, is masked alone and
// multiplied by the sum of the two powers of two: the two copies it adds
// share no bit (so nothing carries) and each leaves nothing in the other's
// field, so a mask keeps the magnitude of one and the sign of the other
// (three operations; nvfp4's codes 2 and 3). The rest take a shift each
// and two logic operations.
template <KvFormat F>
__device__ __forceinline__ void e2m1x8(uint32_t w, uint32_t out[4])
{
    constexpr int MAG = F == KV_NVFP4 ? 9 : 6;
    constexpr uint32_t SIGNS = 0x80008000u, MAGS = 0x70007u << MAG;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int s = (int)kv_e2m1_sign_at(F, k), p = (int)kv_e2m1_mag_at(F, k);
        const int d = MAG - p, e = 15 - s;
        const uint32_t code = 0x10001u << s | 0x70007u << p;
        const bool apart = d > 0 && e > 0 && ((code << d) & (code << e)) == 0 &&
                           ((code << d) & SIGNS) == 0 && ((code << e) & MAGS) == 0;
        const uint32_t mag = d >= 0 ? w << d : w >> -d;
        if (d == e)
            out[k] = mag & (SIGNS | MAGS);
        else if (apart)
            out[k] = ((w & code) * ((1u << d) + (1u << e))) & (SIGNS | MAGS);
        else
            out[k] = and_or(e >= 0 ? w << e : w >> -e, SIGNS, mag & MAGS);
    }
}

// Four E4M3 codes (the bytes of w) as FP16 pairs (0, 2) and (1, 3) of a
// 256th of their values: each code moved to the high byte of a half, then
// exponent and mantissa shifted down one bit beside the sign.
__device__ __forceinline__ void e4m3x4_f16(uint32_t w, uint32_t out[2])
{
    const uint32_t lo = w << 8;
    out[0] = (lo & 0x80008000u) | ((lo >> 1) & 0x3F803F80u);
    out[1] = (w & 0x80008000u) | ((w >> 1) & 0x3F803F80u);
}

// Four E4M3 codes as FP16 pairs (0, 1) and (2, 3), the pairs the code
// kernel reads (to_pairs): where the GPU converts E4M3 itself (sm_89 on),
// each half of the word is a pair, converted as it lies, with their values;
// elsewhere the bytes are paired for e4m3x4_f16, a 256th of their values.
// E4M3_UNIT is what an operand holds of its code's value.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define E4M3_UNIT 1.0f
__device__ __forceinline__ void e4m3x4_pairs(uint32_t w, uint32_t out[2])
{
    asm("{\n .reg .b16 lo, hi;\n mov.b32 {lo, hi}, %2;\n"
        " cvt.rn.f16x2.e4m3x2 %0, lo;\n cvt.rn.f16x2.e4m3x2 %1, hi;\n}\n"
        : "=r"(out[0]), "=r"(out[1])
        : "r"(w));
}
#else
#define E4M3_UNIT (1.0f / 256)
__device__ __forceinline__ void e4m3x4_pairs(uint32_t w, uint32_t out[2])
{
    e4m3x4_f16(__byte_perm(w, 0, 0x3120), out);
}
#endif

// Four INT8 codes as FP16 pairs (0, 1) and (2, 3): 1024 + 128 + x, less 1152.
__device__ __forceinline__ void int8x4_f16(uint32_t w, uint32_t out[2])
{
    const uint32_t x = w ^ 0x80808080u;
    const __half2 bias = __floats2half2_rn(1152.0f, 1152.0f);
#pragma unroll
    for (int i = 0; i < 2; i++) {
        uint32_t h = __byte_perm(x, 0x64u, i ? 0x4342 : 0x4140);
        __half2 v = __hsub2(*(__half2 *)&h, bias);
        out[i] = *(uint32_t *)&v;
    }
}

// Two 4-bit codes q (bits 4k to 4k + 3 and 16 above them of w) as the FP16
// pair 16 + q.
__device__ __forceinline__ uint32_t u4x2_f16(uint32_t w, int k)
{
    return and_or(4 * k <= 6 ? w << (6 - 4 * k) : w >> (4 * k - 6), 0x03C003C0u, 0x4C004C00u);
}

__device__ __forceinline__ uint32_t h2_bits(__half2 h) { return *(uint32_t *)&h; }

#endif
