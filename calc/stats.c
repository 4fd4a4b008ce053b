/* stats.c - see stats.h. */
#include "stats.h"

#include "random.h"

#include <math.h>
#include <stdlib.h>

void stats_wilson(unsigned k, unsigned n, double z, double *lo, double *hi)
{
    if (!n) {
        *lo = 0, *hi = 1;
        return;
    }
    const double p = (double)k / n, z2n = z * z / n;
    const double centre = p + z2n / 2, half = z * sqrt(p * (1 - p) / n + z2n / (4.0 * n));
    *lo = fmax(0, (centre - half) / (1 + z2n));
    *hi = fmin(1, (centre + half) / (1 + z2n));
    if (k == 0)
        *lo = 0;            // exactly, not a rounding error's worth above it
    if (k == n)
        *hi = 1;
}

static int stats_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int stats_paired_bootstrap(const uint8_t *x, const uint8_t *y, const size_t *strata_n, size_t n_strata,
                           unsigned resamples, uint64_t seed, double *lo, double *hi)
{
    *lo = *hi = NAN;
    size_t total = 0;
    for (size_t s = 0; s < n_strata; s++)
        total += strata_n[s];
    double *means = total && resamples ? malloc(resamples * sizeof *means) : NULL;
    if (!means)
        return -1;
    Rand r = {seed};
    for (unsigned b = 0; b < resamples; b++) {
        long sum = 0;
        size_t first = 0;
        for (size_t s = 0; s < n_strata; first += strata_n[s], s++)
            for (size_t i = 0; i < strata_n[s]; i++) {
                size_t j = first + (size_t)rand_below(&r, strata_n[s]);
                sum += (long)x[j] - (long)y[j];
            }
        means[b] = (double)sum / (double)total;
    }
    qsort(means, resamples, sizeof *means, stats_cmp);
    const unsigned tail = resamples / 40;       // 2.5% in each tail
    *lo = means[tail];
    *hi = means[resamples - tail - 1];
    free(means);
    return 0;
}

Verdict stats_verdict(double diff_high, double tolerance)
{
    return -diff_high > tolerance ? VERDICT_REJECTED : VERDICT_NOT_REJECTED;
}

bool stats_accepted(double diff_low, unsigned n, double tolerance)
{
    return -diff_low <= tolerance && (double)n * tolerance >= STATS_RULE_OF_THREE;
}

const char *verdict_word(Verdict v)
{
    static const char *const WORDS[VERDICTS] = {
        [VERDICT_NOT_REJECTED] = "not rejected",
        [VERDICT_REJECTED] = "rejected",
        [VERDICT_BASELINE] = "baseline",
    };
    return WORDS[v];
}
