/* quanterror.h - what quantizing K and V does to attention: the errors
 * of K and V themselves and of the scores, softmax and output they feed.
 *
 * The relative error of K itself can look small while the attention scores
 * are wrong (seed 001's worked example: 8.6% for K, yet the scores are
 * almost all wrong). So every experiment reports the whole chain:
 *
 *   rel_fro_k        ||K^ - K||_F / ||K||_F    (and the same for V)
 *   scores           s = K q for each token (no 1/sqrt(D), as the seeds
 *                    write them); max_score_error = max |s^ - s|
 *   softmax          p = softmax(s / sqrt(D)); softmax_tv is the total
 *                    variation distance, 1/2 sum |p^ - p|, in [0, 1]
 *   output           o = sum p_t V_t; output_rel_error = ||o^ - o|| / ||o||
 *
 * All sums are in double. The per-element error matrix (K^ - K) is what the
 * lab's heatmaps draw.
 */
#ifndef KVLAB_QUANTERROR_H
#define KVLAB_QUANTERROR_H

#include <stddef.h>

typedef struct {
    double rel_fro_k, rel_fro_v;
    double max_score_error;
    double softmax_tv;
    double output_rel_error;
    size_t top_ref, top;        // the token with the largest score, before and after
    size_t nan_scores;          // quantized scores that are NaN (FP8 overflow without
                                // saturation); the errors above are then NaN too
} KvErrors;

/* K, K^, V, V^ are (tokens, d); q is (d). scores_ref and scores (tokens)
 * may be NULL. -1 only when out of memory. */
int kv_errors(const float *k, const float *k_hat, const float *v, const float *v_hat,
               const float *q, size_t tokens, size_t d, KvErrors *out, double *scores_ref,
               double *scores);

double rel_fro_error(const float *x, const float *x_hat, size_t n);

#endif
