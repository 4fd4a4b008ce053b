/* test_stats.c - the statistics of kvlab niah (calc/stats.h) and the
 * passkey its needle carries (calc/passkey.h): the interval's coverage by
 * simulation at known rates, the paired bootstrap on paired data whose
 * answer is known, the rule, and the passkey's round trip. */
#include "testutil.h"

#include "passkey.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Wilson's exact coverage at 20 and 50 trials stays within 0.926 to 0.982
 * for rates from 0.1 to 0.9 (summed over the binomial); a simulation of
 * COVERAGE_DRAWS draws adds a standard error of 0.0034, so 0.95 +- 0.045
 * holds Wilson with three and a half of those to spare, and refuses the
 * normal (Wald) interval, which covers 0.88 at 20 trials and a rate of 0.1. */
#define COVERAGE_DRAWS 4000
#define COVERAGE_TOL 0.045
/* Exact arithmetic on a few doubles. */
#define F64_TOL 1e-12
/* A bootstrap's percentile interval against the normal one, mean +-
 * 1.96 sd / sqrt(n), for n = 400 paired trials: the resampling's own noise
 * at 1,000 resamples, five of its standard errors (the 2.5th percentile of
 * R = 1,000 draws of a mean whose sd s is at most 1 / sqrt(n) = 0.05 has a
 * standard error of sqrt(0.025 * 0.975 / R) s / phi(1.96) <= 0.0043), and
 * the differences' discreteness, one step of 1/n. */
#define BOOT_VS_NORMAL_TOL 0.024

/* A Wilson 95% interval covers the rate it estimates about 95% of the time:
 * simulated at fixed and random rates, 20 and 50 trials. */
START_TEST(wilson_coverage)
{
    Rng r = {test_seed()};
    double rates[] = {0.1, 0.2, 0.5, 0.8, 0.9, 0.1 + 0.8 * (double)rng_range(&r, 0, 1000) / 1000};
    unsigned ns[] = {20, 50};
    for (size_t i = 0; i < N_OF(rates); i++)
        for (size_t j = 0; j < N_OF(ns); j++) {
            unsigned covered = 0;
            for (unsigned d = 0; d < COVERAGE_DRAWS; d++) {
                unsigned k = 0;
                for (unsigned t = 0; t < ns[j]; t++)
                    k += (double)(rng_next(&r) >> 11) * 0x1p-53 < rates[i];
                double lo, hi;
                stats_wilson(k, ns[j], STATS_Z95, &lo, &hi);
                covered += lo <= rates[i] && rates[i] <= hi;
            }
            double cov = (double)covered / COVERAGE_DRAWS;
            ck_assert_seeded(fabs(cov - 0.95) <= COVERAGE_TOL, "rate %.3f, %u trials: coverage %.4f",
                             rates[i], ns[j], cov);
        }
}
END_TEST

/* Wilson's interval by hand: 20 of 20 gives [0.8389, 1], 10 of 20
 * [0.2993, 0.7007], 0 of 20 [0, 0.1611]; no trials, [0, 1]. */
START_TEST(wilson_fixed)
{
    static const struct {
        unsigned k, n;
        double lo, hi;
    } CASES[] = {
        {20, 20, 0.83887484, 1}, {10, 20, 0.29929801, 0.70070199}, {0, 20, 0, 0.16112516}, {0, 0, 0, 1},
    };
    for (size_t i = 0; i < N_OF(CASES); i++) {
        double lo, hi;
        stats_wilson(CASES[i].k, CASES[i].n, STATS_Z95, &lo, &hi);
        ck_assert_msg(fabs(lo - CASES[i].lo) < 1e-7 && fabs(hi - CASES[i].hi) < 1e-7,
                      "%u of %u: [%.8f, %.8f]", CASES[i].k, CASES[i].n, lo, hi);
    }
}
END_TEST

/* The paired bootstrap of differences that are all the same is that
 * difference exactly; of one stratum all +1 and one all 0 it is their mean
 * exactly (every resample keeps each stratum's size); and of random paired
 * data it agrees with the normal interval of the mean difference. */
START_TEST(bootstrap_known)
{
    uint8_t ones[40], zeros[40];
    memset(ones, 1, sizeof ones), memset(zeros, 0, sizeof zeros);
    size_t all[1] = {40}, halves[2] = {20, 20};
    double lo, hi;
    ck_assert_int_eq(stats_paired_bootstrap(ones, zeros, all, 1, STATS_RESAMPLES, 7, &lo, &hi), 0);
    ck_assert(fabs(lo - 1) < F64_TOL && fabs(hi - 1) < F64_TOL);
    ck_assert_int_eq(stats_paired_bootstrap(zeros, zeros, all, 1, STATS_RESAMPLES, 7, &lo, &hi), 0);
    ck_assert(fabs(lo) < F64_TOL && fabs(hi) < F64_TOL);
    uint8_t x[40];
    for (int i = 0; i < 40; i++)
        x[i] = i < 20;                  // stratum 0 all right, stratum 1 all wrong
    ck_assert_int_eq(stats_paired_bootstrap(x, zeros, halves, 2, STATS_RESAMPLES, 7, &lo, &hi), 0);
    ck_assert_msg(fabs(lo - 0.5) < F64_TOL && fabs(hi - 0.5) < F64_TOL, "[%g, %g]", lo, hi);

    Rng r = {test_seed()};
    enum { N = 400 };
    uint8_t a[N], b[N];
    double pa = 0.3 + 0.4 * (double)rng_range(&r, 0, 100) / 100, pb = pa - 0.1, sum = 0, sum2 = 0;
    for (int i = 0; i < N; i++) {
        a[i] = (double)(rng_next(&r) >> 11) * 0x1p-53 < pa;
        b[i] = (double)(rng_next(&r) >> 11) * 0x1p-53 < pb;
        sum += a[i] - b[i], sum2 += (double)(a[i] - b[i]) * (a[i] - b[i]);
    }
    double mean = sum / N, sd = sqrt((sum2 - N * mean * mean) / (N - 1));
    double half = STATS_Z95 * sd / sqrt(N);
    size_t one[1] = {N};
    ck_assert_int_eq(stats_paired_bootstrap(a, b, one, 1, STATS_RESAMPLES, rng_next(&r), &lo, &hi), 0);
    ck_assert_seeded(fabs(lo - (mean - half)) < BOOT_VS_NORMAL_TOL && fabs(hi - (mean + half)) < BOOT_VS_NORMAL_TOL,
                     "bootstrap [%.4f, %.4f], normal [%.4f, %.4f]", lo, hi, mean - half, mean + half);
    double lo2, hi2;
    uint64_t seed = rng_next(&r);
    stats_paired_bootstrap(a, b, one, 1, STATS_RESAMPLES, seed, &lo, &hi);
    stats_paired_bootstrap(a, b, one, 1, STATS_RESAMPLES, seed, &lo2, &hi2);
    ck_assert_msg(lo == lo2 && hi == hi2, "the same seed gives the same interval");
    ck_assert_int_eq(stats_paired_bootstrap(a, b, one, 0, STATS_RESAMPLES, seed, &lo, &hi), -1);
    ck_assert(isnan(lo) && isnan(hi));
}
END_TEST

/* The rule rejects exactly when the loss's lower bound, -diff_high, is
 * above the tolerance. */
START_TEST(rule)
{
    ck_assert_int_eq(stats_verdict(-0.2, 0.1), VERDICT_REJECTED);
    ck_assert_int_eq(stats_verdict(-0.1, 0.1), VERDICT_NOT_REJECTED);
    ck_assert_int_eq(stats_verdict(0.05, 0.1), VERDICT_NOT_REJECTED);
    ck_assert_int_eq(stats_verdict(-0.05, 0.0), VERDICT_REJECTED);
    ck_assert_str_eq(verdict_word(VERDICT_REJECTED), "rejected");
}
END_TEST

/* A candidate is accepted exactly when the whole interval clears the
 * tolerance (-diff_low <= tolerance) over at least 3 / tolerance trials
 * (the rule of three: no loss in fewer does not bound it); a tolerance of
 * 0 accepts nothing. */
START_TEST(accepted_rule)
{
    ck_assert(stats_accepted(0, 60, 0.05));             // 60 x 0.05 = 3
    ck_assert(!stats_accepted(0, 59, 0.05));
    ck_assert(stats_accepted(-0.05, 100, 0.05));
    ck_assert(!stats_accepted(-0.051, 100, 0.05));
    ck_assert(stats_accepted(-0.01, 300, 0.01));
    ck_assert(!stats_accepted(0, 1000000, 0));
}
END_TEST

/* Every passkey reads back from its own encoding, at every digit count the
 * head holds, and still does under noise below half the amplitude a
 * channel. */
START_TEST(passkey_round_trip)
{
    Rng r = {test_seed()};
    size_t dims[] = {64, 128, 256};
    for (size_t i = 0; i < N_OF(dims); i++)
        for (unsigned n = 1; n <= PASSKEY_DIGITS_MAX; n++) {
            Error e;
            if (passkey_check(n, dims[i], &e))
                continue;
            for (int trial = 0; trial < 20; trial++) {
                uint8_t in[PASSKEY_DIGITS_MAX], out[PASSKEY_DIGITS_MAX];
                float v[256];
                for (unsigned d = 0; d < n; d++)
                    in[d] = (uint8_t)rng_range(&r, 0, 9);
                passkey_encode(in, n, PASSKEY_AMPLITUDE_DEFAULT, v, dims[i]);
                for (size_t c = 0; c < dims[i]; c++)
                    v[c] += rng_uniform(&r, 0.49f * PASSKEY_AMPLITUDE_DEFAULT);
                passkey_decode(v, dims[i], n, out);
                ck_assert_seeded(!memcmp(in, out, n), "%u digits in %zu channels", n, dims[i]);
            }
        }
    Error e;
    ck_assert_int_eq(passkey_check(13, 128, &e), -1);
    ck_assert_ptr_nonnull(strstr(e.msg, "130 channels"));
    ck_assert_int_eq(passkey_check(0, 128, &e), -1);
}
END_TEST

Suite *suite_stats(void)
{
    Suite *s = suite_create("stats");
    TCase *t = tcase_create("stats");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, wilson_coverage);
    tcase_add_test(t, wilson_fixed);
    tcase_add_test(t, bootstrap_known);
    tcase_add_test(t, rule);
    tcase_add_test(t, accepted_rule);
    tcase_add_test(t, passkey_round_trip);
    suite_add_tcase(s, t);
    return s;
}
