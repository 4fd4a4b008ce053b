/* test_checked.c - exact arithmetic: overflow is reported, fractions print
 * with one correct rounding, comparisons are exact. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

/* u128_add_ok and u128_mul_ok refuse exactly the results that do not fit. */
START_TEST(overflow_is_reported)
{
    u128 r = 7;
    ck_assert(u128_add_ok(U128_MAX - 1, 1, &r) && r == U128_MAX);
    ck_assert(!u128_add_ok(U128_MAX, 1, &r) && r == U128_MAX);
    ck_assert(u128_mul_ok((u128)1 << 64, ((u128)1 << 63), &r));
    ck_assert(!u128_mul_ok((u128)1 << 64, (u128)1 << 64, &r));
    Checked c = {0};
    u128 x = checked_mul(&c, checked_add(&c, U128_MAX, 1), 2);
    ck_assert(c.overflow && x == 0);
}
END_TEST

/* q_str rounds half up, once, at the requested place. */
START_TEST(decimal_rounding_fixed)
{
    char b[64];
    ck_assert_str_eq(q_str(b, sizeof b, q_make(1, 3), 3, false), "0.333");
    ck_assert_str_eq(q_str(b, sizeof b, q_make(2, 3), 3, false), "0.667");
    ck_assert_str_eq(q_str(b, sizeof b, q_make(1, 8), 2, false), "0.13");     // 0.125, half up
    ck_assert_str_eq(q_str(b, sizeof b, q_make(999, 1000), 2, false), "1.00");  // carry
    ck_assert_str_eq(q_str(b, sizeof b, q_make(9999, 10), 0, false), "1000");
    ck_assert_str_eq(q_str(b, sizeof b, q_make(9, 16), 6, true), "0.5625");
    ck_assert_str_eq(q_str(b, sizeof b, q_make(4, 2), 3, true), "2");
    ck_assert_str_eq(q_str(b, sizeof b, q_make(0, 7), 2, false), "0.00");
    ck_assert_str_eq(u128_str(b, sizeof b, 17179869184u, true), "17,179,869,184");
    ck_assert_str_eq(u128_str(b, sizeof b, U128_MAX, false), "340282366920938463463374607431768211455");
}
END_TEST

/* On random fractions with small denominators, every fourth one exactly
 * halfway between two printable values, the printed value is the rounding
 * of num/den computed independently in integers: floor((num x 10^d x 2 +
 * den) / (2 den)). */
START_TEST(decimal_rounding_random)
{
    Rng r = {test_seed()};
    for (int i = 0; i < 20000; i++) {
        uint64_t num = rng_next(&r) >> 20, den = rng_range(&r, 1, 1000000);
        int d = (int)rng_range(&r, 0, 6);
        u128 p = 1;
        for (int k = 0; k < d; k++)
            p *= 10;
        if (i % 4 == 0) {           // odd / (2 x 10^d): a tie at the last place
            num |= 1;
            den = 2 * (uint64_t)p;
        }
        u128 scaled = ((u128)num * p * 2 + den) / (2 * (u128)den);
        char want[80], got[80], ip[64];
        u128_str(ip, sizeof ip, scaled / p, false);
        if (d) {
            char frac[16];
            snprintf(frac, sizeof frac, "%0*llu", d, (unsigned long long)(scaled % p));
            snprintf(want, sizeof want, "%s.%s", ip, frac);
        } else {
            snprintf(want, sizeof want, "%s", ip);
        }
        q_str(got, sizeof got, q_make(num, den), d, false);
        ck_assert_seeded(strcmp(want, got) == 0, "%llu/%llu to %d places: want %s got %s",
                         (unsigned long long)num, (unsigned long long)den, d, want, got);
    }
}
END_TEST

/* q_cmp agrees with cross-multiplication wherever that fits. */
START_TEST(compare_random)
{
    Rng r = {test_seed() ^ 0x5151};
    for (int i = 0; i < 50000; i++) {
        Q a = q_make(rng_next(&r) >> 1, rng_range(&r, 1, UINT64_MAX >> 1));
        Q b = q_make(rng_next(&r) >> 1, rng_range(&r, 1, UINT64_MAX >> 1));
        if (i % 7 == 0)
            b = q_make(a.num * 3, a.den * 3);       // equal values, other terms
        u128 l = a.num * b.den, rr = b.num * a.den;
        int want = l < rr ? -1 : l > rr;
        ck_assert_int_eq(q_cmp(a, b), want);
    }
}
END_TEST

Suite *suite_checked(void)
{
    Suite *s = suite_create("checked");
    TCase *t = tcase_create("core");
    tcase_add_test(t, overflow_is_reported);
    tcase_add_test(t, decimal_rounding_fixed);
    tcase_add_test(t, decimal_rounding_random);
    tcase_add_test(t, compare_random);
    suite_add_tcase(s, t);
    return s;
}
