/* stats.h - how sure a retrieval accuracy is, and whether a format is
 * worse than BF16: the statistics of kvlab niah.
 *
 *   accuracy        k successes in n trials, with the Wilson score 95%
 *                   interval. Wilson rather than the normal (Wald)
 *                   interval, which collapses to [1, 1] at 20 of 20 and
 *                   covers far less than 95% near 0 and 1; rather than
 *                   Clopper-Pearson, whose coverage is never below 95% but
 *                   lies near 98% at the trial counts a grid affords (20),
 *                   so its intervals are wider than they need be. Wilson's
 *                   coverage swings around 95% as p moves (tests/test_stats.c
 *                   checks it by simulation).
 *   difference      the same trials run in BF16 and in a format (paired:
 *                   the same haystacks), d_i = format_i - bf16_i in
 *                   {-1, 0, 1}; a paired bootstrap: resample the trials with
 *                   replacement (within each stratum, a cell of the grid,
 *                   so every resample keeps the grid's design), take the
 *                   mean difference, STATS_RESAMPLES times from a seed; the
 *                   95% interval is the 2.5th and 97.5th percentiles.
 *   the rule        a format is rejected when the lower bound of its
 *                   accuracy loss (bf16 - format, the difference turned
 *                   around: -diff_high) exceeds the tolerance; otherwise it
 *                   is not rejected, which is not a proof that it is as good.
 */
#ifndef KVLAB_STATS_H
#define KVLAB_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATS_Z95 1.959963984540054     // the normal quantile of 97.5%
#define STATS_RESAMPLES 1000            // the sources' protocol (seed 000, section 8)

/* The Wilson score interval of k successes in n trials at z; [0, 1] when n
 * is 0. */
void stats_wilson(unsigned k, unsigned n, double z, double *lo, double *hi);

/* The paired bootstrap interval of the mean of x_i - y_i (x, y: 0 or 1)
 * over n_strata strata laid end to end in x and y, stratum s holding
 * strata_n[s] trials: `resamples` means of resampled differences from
 * `seed`, the interval their 2.5th and 97.5th percentiles (the
 * (resamples / 40)-th and (resamples - resamples / 40 - 1)-th smallest, 0
 * based). The mean is over all trials. 0, or -1 when out of memory or
 * there are no trials (lo, hi NaN). */
int stats_paired_bootstrap(const uint8_t *x, const uint8_t *y, const size_t *strata_n, size_t n_strata,
                           unsigned resamples, uint64_t seed, double *lo, double *hi);

typedef enum { VERDICT_NOT_REJECTED, VERDICT_REJECTED, VERDICT_BASELINE, VERDICTS } Verdict;

/* The rule on a difference interval [diff_low, diff_high] (format - bf16):
 * rejected when -diff_high > tolerance. */
Verdict stats_verdict(double diff_high, double tolerance);
/* "not rejected", "rejected", "baseline". */
const char *verdict_word(Verdict v);

/* The burden of proof on the candidate: true where the whole interval of
 * n paired trials clears the tolerance, -diff_low <= tolerance (its worst
 * end loses no more), and n is enough that no loss seen bounds the loss
 * under it: n >= STATS_RULE_OF_THREE / tolerance. (A bootstrap of pairs
 * that never differ gives the interval [0, 0] however few they are; with
 * no loss in n trials a rate's 95% upper bound is about 3 / n.) A format
 * neither rejected nor so shown is undecided, which more trials settle. */
#define STATS_RULE_OF_THREE 3.0
bool stats_accepted(double diff_low, unsigned n, double tolerance);

#endif
