/* quotient.h - the integer nearest a quantizer's quotient, exactly.
 *
 * An integer quantizer's code is rint(q), the quotient q = n (x - a) / (b - c)
 * of floats x, a, b, c and a small whole n (int-min: n = 2^bits - 1, a = c =
 * min, b = max) rounded to the nearest integer, an exact half to the even
 * one. Computed in double, q carries up to four roundings; almost always
 * they cannot move it across a half, and when q lies so near one that they
 * could, the half is decided exactly: the sign of 2n (x - a) - (2k + 1)(b - c),
 * four products of a float and a whole number below 2^22, each exact in
 * double, summed without loss (Shewchuk's expansion arithmetic). So the code
 * is the true quotient rounded once, whatever the step (9/7 has no binary
 * form, and a quotient of exactly 3.5 is still 3.5 here) and however far
 * apart the magnitudes of x and the range are.
 *
 * Cost: a subtraction and a multiplication per value, and a comparison that
 * sends about one value in 2^19 of random data (and every exact half) to
 * the exact path.
 */
#ifndef KVLAB_QUOTIENT_H
#define KVLAB_QUOTIENT_H

#include <math.h>
#include <stdbool.h>

/* The estimate's error is at most 4 x 2^-53 of |q| (four roundings), so
 * below QUOTIENT_EXACT_MAX it is under 2^-31: an estimate further than
 * QUOTIENT_NEAR_HALF from a half is on the true quotient's side of it.
 * Below QUOTIENT_EXACT_MAX, too, k in 2k + 1 keeps the products exact. A
 * quantizer's codes are below 2^8; a quotient beyond is clamped by every
 * caller, and its estimate is rounded as it is. */
#define QUOTIENT_EXACT_MAX 0x1p20
#define QUOTIENT_NEAR_HALF 0x1p-20

typedef struct {
    double a, b, c;             // floats: the quotient n (x - a) / (b - c), b > c
    double n;                   // a whole number, 1 to 2^10
    double r;                   // n / (b - c), rounded: the estimate's factor
} Quotient;

static inline Quotient quotient_of(unsigned n, float a, float b, float c)
{
    return (Quotient){a, b, c, n, n / ((double)b - c)};
}

/* q within 4 x 2^-53 of |q|. */
static inline double quotient_estimate(const Quotient *q, float x)
{
    return ((double)x - q->a) * q->r;
}

/* Round to nearest, ties to even, for |v| < 2^51: adding and removing
 * 1.5 x 2^52 leaves the double's last bit to the hardware's rounding
 * (nearest even), without a call into libm, so loops vectorize. */
static inline double round_half_even(double v)
{
    const double magic = 6755399441055744.0;
    return (v + magic) - magic;
}

/* Whether an estimate v, rounded to k, lies so near a half that its error
 * could have moved it across. */
static inline bool quotient_near_half(double v, double k)
{
    return 0.5 - fabs(v - k) < QUOTIENT_NEAR_HALF && fabs(v) < QUOTIENT_EXACT_MAX;
}

/* Knuth's TwoSum: returns s = fl(a + b) and sets *err so that a + b = s + err
 * exactly. */
static inline double quotient_two_sum(double a, double b, double *err)
{
    double s = a + b, bv = s - a, av = s - bv;
    *err = (a - av) + (b - bv);
    return s;
}

/* The sign of t[0] + t[1] + t[2] + t[3], exactly: the terms grown one by
 * one into a nonoverlapping expansion (Shewchuk's Grow-Expansion), whose
 * sign is that of its largest nonzero component, the last. */
static inline int quotient_sum_sign(const double t[4])
{
    double e[4];
    int m = 0;
    for (int i = 0; i < 4; i++) {
        double q = t[i];
        for (int j = 0; j < m; j++)
            q = quotient_two_sum(q, e[j], &e[j]);
        e[m++] = q;
    }
    for (int j = m - 1; j >= 0; j--)
        if (e[j] != 0)
            return e[j] > 0 ? 1 : -1;
    return 0;
}

/* rint of the exact quotient at x, given its estimate v near k + 1/2: the
 * side of the half is the sign of 2n (x - a) - (2k + 1)(b - c). */
static inline double quotient_decide(const Quotient *q, float x, double v)
{
    double k = floor(v), odd = 2 * k + 1;
    const double t[4] = {2 * q->n * x, -2 * q->n * q->a, -odd * q->b, odd * q->c};
    int side = quotient_sum_sign(t);
    return side > 0 ? k + 1 : side < 0 ? k : fmod(k, 2) == 0 ? k : k + 1;
}

/* rint(n (x - a) / (b - c)), the true quotient rounded once, ties to even. */
static inline double quotient_rint(const Quotient *q, float x)
{
    double v = quotient_estimate(q, x), k = round_half_even(v);
    return quotient_near_half(v, k) ? quotient_decide(q, x, v) : k;
}

#endif
