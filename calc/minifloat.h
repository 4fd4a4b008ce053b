/* minifloat.h - bit-exact 8-bit and 4-bit floating-point codecs.
 *
 * E4M3FN and E5M2 (OCP OFP8), E2M1 (OCP MX FP4) and E8M0 (the MX scale).
 * Encoding rounds to nearest, ties to even, keeps subnormals and the sign
 * of zero. What happens past the largest finite value depends on the
 * format and on `saturate`:
 *
 *   format   max     overflow, not saturating    saturating   NaN / Inf codes
 *   E4M3FN   448     NaN (464 still rounds down)  +-448        S.1111.111 / none
 *   E5M2     57344   +-Inf                        +-57344      S.11111.xx / S.11111.00
 *   E2M1     6       +-6 (always clamps)          +-6          none / none
 *   E8M0     2^127   -                            -            0xFF / none; no sign
 *
 * Decoding is exact: every code's value is a float32. E2M1 has no NaN; a
 * NaN input encodes to +-6, the largest magnitude, so it stays visible.
 */
#ifndef KVLAB_MINIFLOAT_H
#define KVLAB_MINIFLOAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum {
    MF_IEEE,        // Inf and NaN in the top exponent (E5M2)
    MF_FN,          // finite only; all-ones is NaN (E4M3FN)
    MF_NONE,        // finite only, no NaN (E2M1)
} MinifloatSpecials;

typedef struct {
    const char *id;             // "e4m3": the name on the command line
    const char *name;           // "E4M3FN"
    unsigned exp_bits, man_bits;
    int bias;
    MinifloatSpecials specials;
    uint8_t max_code;           // magnitude code of the largest finite value
    float max;                  // that value
    float sub_magic;            // 1.5 x 2^(emin - man_bits + 23): rounds to the subnormal step
    float sub_step;             // 2^(emin - man_bits): the subnormal step
} Minifloat;

extern const Minifloat MF_E4M3;
extern const Minifloat MF_E5M2;
extern const Minifloat MF_E2M1;

/* "e4m3", "e4m3fn", "e5m2", "e2m1", "fp4" (ASCII, any case); NULL if none. */
const Minifloat *minifloat_by_id(const char *id);

/* The definition: integer arithmetic on the float32 bits, no FPU. */
uint8_t minifloat_encode_ref(const Minifloat *f, float x, bool saturate);
/* The same codes, faster (rounding done as in minifloat_round); tested
 * against the _ref on random bit patterns. */
uint8_t minifloat_encode(const Minifloat *f, float x, bool saturate);
float minifloat_decode(const Minifloat *f, uint8_t code);
/* decode(encode(x)), computed on the float32 bits directly (a few
 * nanoseconds; the quantizers call it for every element). */
float minifloat_round(const Minifloat *f, float x, bool saturate);

/* E8M0: an unsigned power of two 2^(code - E8M0_BIAS); code E8M0_NAN is NaN. */
#define E8M0_BIAS 127
#define E8M0_NAN 0xFF
float e8m0_decode(uint8_t code);
/* The code for 2^e, e clamped to [-E8M0_BIAS, E8M0_BIAS]. */
uint8_t e8m0_from_exponent(int e);

/* Every code's value, indexed by the code: minifloat_decode's for the
 * three formats above (a 4-bit format's table repeats every 16 codes, its
 * high bits ignored as decoding ignores them); NULL for another. Built
 * once, safe from any thread. */
const float *minifloat_values(const Minifloat *f);

/* IEEE binary32 and binary16 (and BF16, binary32's top half): the fields
 * the codes are converted through. */
#define F32_SIGN 0x80000000u
#define F32_ABS 0x7FFFFFFFu             // all but the sign
#define F32_INF 0x7F800000u             // exponent all ones: Inf; above it NaN
#define F32_MAN 0x007FFFFFu
#define F32_HIDDEN 0x00800000u          // a normal number's implicit leading 1
#define F16_SIGN 0x8000u
#define F16_INF 0x7C00u
#define F16_QNAN 0x7E00u
#define F16_MAN 0x03FFu
#define F16_EXP_ALL 0x1Fu               // the exponent field all ones: Inf or NaN
enum {
    F32_MAN_BITS = 23,
    F32_BIAS = 127,
    F32_SUB_EXP = 1 - F32_BIAS - F32_MAN_BITS,  // a subnormal's M x 2^-149
    F16_MAN_BITS = 10,
    F16_BIAS = 15,
    F16_DROP = F32_MAN_BITS - F16_MAN_BITS,     // binary32's mantissa bits FP16 drops
    BF16_DROP = 16,                             // the low half BF16 drops
};

static inline uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float f32_from(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Round to BF16 (nearest, ties to even) and back: what a 16-bit residual
 * window keeps. Inline, as the conversions below: caches convert every
 * element through them. */
static inline float bf16_round(float x)
{
    uint32_t u = f32_bits(x);
    if ((u & F32_ABS) > F32_INF)
        return x;                                               // NaN stays NaN
    uint32_t lsb = (u >> BF16_DROP) & 1u;
    u += (1u << (BF16_DROP - 1)) - 1u + lsb;                    // half a BF16 ulp, ties to even
    return f32_from(u & ~((1u << BF16_DROP) - 1u));
}

/* BF16 and IEEE FP16 bits, rounded to nearest even; and back. FP16
 * overflow becomes infinity, as in IEEE conversion. */
static inline uint16_t bf16_bits(float x)
{
    return (uint16_t)(f32_bits(bf16_round(x)) >> BF16_DROP);
}

static inline float bf16_value(uint16_t b)
{
    return f32_from((uint32_t)b << BF16_DROP);
}

uint16_t fp16_bits(float x);

static inline float fp16_value(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & F16_SIGN) << 16;
    uint32_t e = (h >> F16_MAN_BITS) & F16_EXP_ALL, m = h & F16_MAN;
    if (e == 0)
        return f32_from(f32_bits((float)m * 0x1p-24f) | sign);
    if (e == F16_EXP_ALL)
        return f32_from(sign | F32_INF | (m << F16_DROP));
    return f32_from(sign | ((e + (F32_BIAS - F16_BIAS)) << F32_MAN_BITS) | (m << F16_DROP));
}

#endif
