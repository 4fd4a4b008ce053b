/* checked.h - exact integer arithmetic that refuses to overflow.
 *
 * Every size kvlab reports is an exact integer. Sizes are held in 128-bit
 * unsigned integers so that products such as 2 x L x H x D x S x B cannot
 * wrap for any realistic input, and every operation that could still
 * overflow goes through u128_add_ok/u128_mul_ok (one step) or
 * checked_add/checked_mul (a chain), which report it instead of wrapping.
 *
 * Fractions (GiB, milliseconds, ratios) are kept as a numerator over a
 * denominator and turned into decimal text only at the end, with one exact
 * rounding (half away from zero), so no figure is rounded twice.
 */
#ifndef KVLAB_CHECKED_H
#define KVLAB_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

__extension__ typedef unsigned __int128 u128;

#define U128_MAX (~(u128)0)

/* a + b and a x b; false (and *r untouched) on overflow. */
bool u128_add_ok(u128 a, u128 b, u128 *r);
bool u128_mul_ok(u128 a, u128 b, u128 *r);

/* A chain of operations that records overflow instead of failing at each
 * step: compute with checked_mul/checked_add, then test c.overflow once at
 * the end. After an overflow the results are 0 and must not be used. */
typedef struct {
    bool overflow;
} Checked;

u128 checked_mul(Checked *c, u128 a, u128 b);
u128 checked_add(Checked *c, u128 a, u128 b);

/* An exact non-negative fraction num/den (den > 0). */
typedef struct {
    u128 num, den;
} Q;

Q q_make(u128 num, u128 den);
double q_to_double(Q q);
/* -1, 0, 1 as a <, ==, > b. Exact. */
int q_cmp(Q a, Q b);

/* Decimal text of v: "17179869184", or grouped "17,179,869,184". */
const char *u128_str(char *buf, size_t n, u128 v, bool grouped);

/* The most places q_str writes. */
#define Q_DECIMALS_MAX 30
/* Decimal text of q rounded half up to `decimals` places (at most
 * Q_DECIMALS_MAX; "0.28125" with 5).
 * With trim, trailing zeros after the point are dropped ("1.5", "2"). */
const char *q_str(char *buf, size_t n, Q q, int decimals, bool trim);

#endif
