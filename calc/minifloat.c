/* minifloat.c - see minifloat.h.
 *
 * Encoding works on the float32 bits: |x| = M x 2^E with M an integer of at
 * most 24 bits. The target's exponent is floor(log2 |x|), raised to the
 * smallest normal exponent for subnormals; its ulp is 2^q with
 * q = exponent - man_bits, and M is shifted right by q - E with
 * round-to-nearest-even. No floating-point arithmetic, so the result is
 * exact and the same on every machine.
 */
#include "minifloat.h"

#include "ascii.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

const Minifloat MF_E4M3 = {"e4m3", "E4M3FN", 4, 3, 7, MF_FN, 0x7E, 448.0f, 24576.0f, 0x1p-9f};
const Minifloat MF_E5M2 = {"e5m2", "E5M2", 5, 2, 15, MF_IEEE, 0x7B, 57344.0f, 192.0f, 0x1p-16f};
const Minifloat MF_E2M1 = {"e2m1", "E2M1", 2, 1, 1, MF_NONE, 0x7, 6.0f, 6291456.0f, 0.5f};

static const struct {
    const char *alias;
    const Minifloat *f;
} BY_ID[] = {
    {"e4m3", &MF_E4M3}, {"e4m3fn", &MF_E4M3}, {"fp8_e4m3", &MF_E4M3},
    {"e5m2", &MF_E5M2}, {"fp8_e5m2", &MF_E5M2},
    {"e2m1", &MF_E2M1}, {"fp4", &MF_E2M1},
};

const Minifloat *minifloat_by_id(const char *id)
{
    for (size_t i = 0; i < sizeof BY_ID / sizeof BY_ID[0]; i++)
        if (ascii_ieq(BY_ID[i].alias, id))
            return BY_ID[i].f;
    return NULL;
}

static unsigned total_bits(const Minifloat *f)
{
    return 1 + f->exp_bits + f->man_bits;
}

/* All magnitude bits set: NaN in E4M3FN and E5M2. */
static uint8_t nan_code(const Minifloat *f, uint8_t sign)
{
    return sign | (uint8_t)((1u << (total_bits(f) - 1)) - 1);
}

/* The code past the finite range: what overflow becomes. */
static uint8_t overflow_code(const Minifloat *f, uint8_t sign, bool saturate)
{
    if (saturate || f->specials == MF_NONE)
        return sign | f->max_code;
    if (f->specials == MF_IEEE)
        return sign | (uint8_t)(((1u << f->exp_bits) - 1) << f->man_bits);   // Inf
    return nan_code(f, sign);
}

uint8_t minifloat_encode_ref(const Minifloat *f, float x, bool saturate)
{
    uint32_t u = f32_bits(x), ax = u & F32_ABS;
    uint8_t sign = (uint8_t)((u >> 31) << (total_bits(f) - 1));
    if (ax > F32_INF)                                           // NaN
        return f->specials == MF_NONE ? sign | f->max_code : nan_code(f, sign);
    if (ax == F32_INF)
        return overflow_code(f, sign, saturate);
    uint32_t M = ax & F32_MAN;
    int E = F32_SUB_EXP;
    if (ax >> F32_MAN_BITS) {
        M |= F32_HIDDEN;
        E = (int)(ax >> F32_MAN_BITS) + F32_SUB_EXP - 1;
    }
    if (M == 0)
        return sign;                                            // signed zero
    int log2x = 31 - __builtin_clz(M) + E;
    int emin = 1 - f->bias;
    int te = log2x < emin ? emin : log2x;
    int sh = te - (int)f->man_bits - E;                         // > 0 for every format here
    uint32_t r;
    if (sh > F32_MAN_BITS + 2) {                                // M (24 bits) is below half the
        r = 0;                                                  // smallest step
    } else {
        uint32_t rem = M & ((1u << sh) - 1), half = 1u << (sh - 1);
        r = M >> sh;
        if (rem > half || (rem == half && (r & 1)))
            r++;
    }
    if (r == 0)
        return sign;
    uint32_t one = 1u << f->man_bits;
    if (r == 2 * one) {                                         // rounding carried
        r = one;
        te++;
    }
    uint32_t mag = r < one ? r                                  // subnormal (te == emin)
                           : ((uint32_t)(te + f->bias) << f->man_bits) | (r - one);
    if (mag > f->max_code)
        return overflow_code(f, sign, saturate);
    return sign | (uint8_t)mag;
}

float minifloat_decode(const Minifloat *f, uint8_t code)
{
    unsigned nb = total_bits(f);
    uint32_t sign = (uint32_t)(code >> (nb - 1)) & 1u;
    uint32_t mag = code & ((1u << (nb - 1)) - 1);
    uint32_t e = mag >> f->man_bits, m = mag & ((1u << f->man_bits) - 1);
    uint32_t top = (1u << f->exp_bits) - 1;
    float v;
    if (f->specials == MF_IEEE && e == top)
        v = m ? NAN : INFINITY;
    else if (f->specials == MF_FN && mag == (1u << (nb - 1)) - 1)
        v = NAN;
    else if (e == 0)
        v = (float)m * f->sub_step;
    else                        // normal: assemble the float32 directly
        v = f32_from(((e - (uint32_t)f->bias + F32_BIAS) << F32_MAN_BITS) | (m << (F32_MAN_BITS - f->man_bits)));
    return sign ? -v : v;
}

/* |x| rounded to the target's grid, for finite x (see minifloat_round). */
static inline float round_abs(const Minifloat *f, uint32_t ax)
{
    uint32_t min_normal = (uint32_t)(1 - f->bias + F32_BIAS) << F32_MAN_BITS;
    if (ax >= min_normal) {
        unsigned sh = F32_MAN_BITS - f->man_bits;
        uint32_t lsb = (ax >> sh) & 1u;
        return f32_from((ax + (1u << (sh - 1)) - 1u + lsb) & ~((1u << sh) - 1u));
    }
    return (f32_from(ax) + f->sub_magic) - f->sub_magic;
}

uint8_t minifloat_encode(const Minifloat *f, float x, bool saturate)
{
    uint32_t u = f32_bits(x), ax = u & F32_ABS;
    if (ax >= F32_INF)
        return minifloat_encode_ref(f, x, saturate);
    float r = round_abs(f, ax);
    uint8_t sign = (uint8_t)((u >> 31) << (total_bits(f) - 1));
    if (r > f->max)
        return overflow_code(f, sign, saturate);
    uint32_t rb = f32_bits(r), mag;
    if (rb >= (uint32_t)(1 - f->bias + F32_BIAS) << F32_MAN_BITS)
        mag = ((rb >> F32_MAN_BITS) - F32_BIAS + (uint32_t)f->bias) << f->man_bits |
              ((rb >> (F32_MAN_BITS - f->man_bits)) & ((1u << f->man_bits) - 1u));
    else
        mag = (uint32_t)(r / f->sub_step);          // exact: a power-of-two step
    return sign | (uint8_t)mag;
}

static float value_table[3][256];
static const Minifloat *const TABLED[3] = {&MF_E4M3, &MF_E5M2, &MF_E2M1};
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_fill(void)
{
    for (size_t i = 0; i < 3; i++)
        for (unsigned c = 0; c < 256; c++)
            value_table[i][c] = minifloat_decode(TABLED[i], (uint8_t)c);
}

const float *minifloat_values(const Minifloat *f)
{
    pthread_once(&tables_once, tables_fill);
    for (size_t i = 0; i < 3; i++)
        if (TABLED[i] == f)
            return value_table[i];
    return NULL;
}

/* Rounding without the code in between. In the normal range, adding half an
 * ulp of the target (less one, plus the kept lsb) and clearing the dropped
 * bits is round-to-nearest-even, carry into the exponent included. Below
 * the smallest normal, adding and removing sub_magic makes the FPU round at
 * exactly the target's subnormal step (the sum's ulp), ties to even. Inf,
 * NaN and overflow take the slow path, which is the definition. */
float minifloat_round(const Minifloat *f, float x, bool saturate)
{
    uint32_t u = f32_bits(x), sign = u & F32_SIGN, ax = u ^ sign;
    if (ax >= F32_INF)
        return minifloat_decode(f, minifloat_encode_ref(f, x, saturate));
    float r = round_abs(f, ax);
    if (r > f->max)
        return minifloat_decode(f, minifloat_encode_ref(f, x, saturate));
    return f32_from(f32_bits(r) | sign);
}

float e8m0_decode(uint8_t code)
{
    if (code == E8M0_NAN)
        return NAN;
    if (code == 0)
        return ldexpf(1.0f, -E8M0_BIAS);                        // float32 subnormal
    return f32_from((uint32_t)code << F32_MAN_BITS);            // binary32's exponent field
}

uint8_t e8m0_from_exponent(int e)
{
    if (e < -E8M0_BIAS)
        e = -E8M0_BIAS;
    if (e > E8M0_BIAS)
        e = E8M0_BIAS;
    return (uint8_t)(e + E8M0_BIAS);
}

uint16_t fp16_bits(float x)
{
    const uint32_t past_max = 0x477FF000u;     // 65520: rounds past 65504, FP16's largest
    const uint32_t min_normal = 0x38800000u;   // 2^-14, FP16's smallest normal
    uint32_t u = f32_bits(x), sign = (u >> 16) & F16_SIGN, ax = u & F32_ABS;
    if (ax > F32_INF)
        return (uint16_t)(sign | F16_QNAN);
    if (ax >= past_max)
        return (uint16_t)(sign | F16_INF);
    if (ax < min_normal) {                                      // FP16 subnormal or zero
        float r = (f32_from(ax) + 0.5f) - 0.5f;                 // steps of 2^-24
        return (uint16_t)(sign | (uint32_t)(r * 0x1p24f));
    }
    uint32_t lsb = (ax >> F16_DROP) & 1u;
    ax += (1u << (F16_DROP - 1)) - 1u + lsb;                    // half an FP16 ulp, ties to even
    return (uint16_t)(sign | (((ax >> F32_MAN_BITS) - (F32_BIAS - F16_BIAS)) << F16_MAN_BITS) |
                      ((ax >> F16_DROP) & F16_MAN));
}
