/* experiment.h - one quantization experiment on one head's K and V.
 *
 * The chain, in order:
 *   1. RoPE: none, or applied to keys at positions 0..T-1 and to the query
 *      at position T. Keys are quantized before RoPE (pre, as KVQuant does)
 *      or after it (post, what an engine caches).
 *   2. Hadamard (optional): each key and value vector is rotated before
 *      quantization and rotated back after it.
 *   3. Quantization: a QuantSpec for keys and one for values, or KIVI.
 *   4. Errors (quanterror.h), measured where attention sees the keys: after
 *      RoPE when RoPE is on.
 */
#ifndef KVLAB_EXPERIMENT_H
#define KVLAB_EXPERIMENT_H

#include "error.h"
#include "quant.h"
#include "quanterror.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum { ROPE_NONE, ROPE_PRE, ROPE_POST } RopeMode;

typedef struct {
    QuantSpec key;
    QuantSpec value;
    bool values_exact;          // leave V unquantized, to isolate the keys
    bool kivi;                  // use KIVI for both instead of the specs
    KiviSpec kivi_spec;
    RopeMode rope;
    double rope_theta;
    bool hadamard;
} Experiment;

typedef struct {
    size_t tokens, d;
    float *k_ref;               // (tokens, d) keys as attention sees them
    float *k_hat;               // (tokens, d) the same after quantization
    float *v_hat;               // (tokens, d)
    float *q;                   // (d) the query as attention sees it
    double *scores_ref;         // (tokens)
    double *scores;             // (tokens)
    KvErrors err;
} ExperimentResult;

void experiment_init(Experiment *x);
int experiment_run(const Experiment *x, const float *k, const float *v, const float *q,
                   size_t tokens, size_t d, ExperimentResult *r, Error *e);
void experiment_result_free(ExperimentResult *r);

/* The tokens whose scores moved most: order (room for r->tokens) gets
 * every token once, the first min(k, tokens) of them by |score - reference|,
 * largest first (a partial selection sort, k passes; ties keep the lower
 * token first; k = 0 leaves every token in token order). Returns that
 * count. */
size_t experiment_most_moved(const ExperimentResult *r, size_t *order, size_t k);

#endif
