/* experiment.c - see experiment.h. */
#include "experiment.h"

#include "rotate.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void experiment_init(Experiment *x)
{
    memset(x, 0, sizeof *x);
    quant_spec_init(&x->key);
    quant_spec_init(&x->value);
    x->rope = ROPE_NONE;
    x->rope_theta = ROPE_THETA_LLAMA3;
    x->kivi_spec = (KiviSpec){.bits = KIVI_BITS_DEFAULT, .group = KIVI_GROUP_DEFAULT, .residual = 0};
}

static double moved(const ExperimentResult *r, size_t t)
{
    return fabs(r->scores[t] - r->scores_ref[t]);
}

static bool moved_more(const ExperimentResult *r, size_t a, size_t b)
{
    double ma = moved(r, a), mb = moved(r, b);
    return ma > mb || (ma == mb && a < b);
}

size_t experiment_most_moved(const ExperimentResult *r, size_t *order, size_t k)
{
    for (size_t i = 0; i < r->tokens; i++)
        order[i] = i;
    if (k > r->tokens)
        k = r->tokens;
    for (size_t i = 0; i < k; i++)
        for (size_t j = i + 1; j < r->tokens; j++)
            if (moved_more(r, order[j], order[i])) {
                size_t t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    return k;
}

void experiment_result_free(ExperimentResult *r)
{
    free(r->k_ref);
    free(r->k_hat);
    free(r->v_hat);
    free(r->q);
    free(r->scores_ref);
    free(r->scores);
    memset(r, 0, sizeof *r);
}

/* Whether quantizing took finite values past a float's range (int-zp's
 * zero point widens its range by up to half a step, which from values near
 * FLT_MAX has no float), saying so; FP8 without saturation makes NaN by
 * definition, and that is its result, not an error. */
static bool overflowed(const QuantSpec *q, const float *out, size_t n, const char *what, Error *e)
{
    if (q->scheme == SCHEME_FP8 && !q->saturate)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(out[i])) {
            error_set(e, "the quantized %s pass a float's range: values this close to %g leave no "
                         "room for the grid's rounding", what, (double)FLT_MAX);
            return true;
        }
    return false;
}

/* Quantizes k and v (already in the domain they are stored in) into kh, vh,
 * with the Hadamard rotation around it when asked. */
static int store(const Experiment *x, const float *k, const float *v, size_t T, size_t d,
                 float *kh, float *vh, Error *e)
{
    size_t n = T * d;
    float *kr = malloc(n * sizeof *kr), *vr = malloc(n * sizeof *vr);
    int rc = -1;
    if (!kr || !vr) {
        error_runtime(e, "out of memory for %zu x %zu keys", T, d);
        goto done;
    }
    memcpy(kr, k, n * sizeof *kr);
    memcpy(vr, v, n * sizeof *vr);
    if (x->hadamard && (hadamard_rows(kr, T, d, e) || (!x->values_exact && hadamard_rows(vr, T, d, e))))
        goto done;
    if (x->kivi) {
        if (kivi_ref(&x->kivi_spec, kr, vr, T, d, kh, vh, e))
            goto done;
    } else if (quantize_ref(&x->key, kr, T, d, kh, e) ||
               quantize_ref(&x->value, vr, T, d, vh, e)) {
        goto done;
    }
    if (x->values_exact)
        memcpy(vh, vr, n * sizeof *vh);
    if (overflowed(&x->key, kh, n, "keys", e) || (!x->values_exact && overflowed(&x->value, vh, n, "values", e)))
        goto done;
    if (x->hadamard && (hadamard_rows(kh, T, d, e) || (!x->values_exact && hadamard_rows(vh, T, d, e))))
        goto done;
    rc = 0;
done:
    free(kr);
    free(vr);
    return rc;
}

int experiment_run(const Experiment *x, const float *k, const float *v, const float *q,
                   size_t tokens, size_t d, ExperimentResult *r, Error *e)
{
    memset(r, 0, sizeof *r);
    size_t n = tokens * d;
    r->tokens = tokens;
    r->d = d;
    r->k_ref = malloc(n * sizeof *r->k_ref);
    r->k_hat = malloc(n * sizeof *r->k_hat);
    r->v_hat = malloc(n * sizeof *r->v_hat);
    r->q = malloc(d * sizeof *r->q);
    r->scores_ref = malloc(tokens * sizeof *r->scores_ref);
    r->scores = malloc(tokens * sizeof *r->scores);
    if (!r->k_ref || !r->k_hat || !r->v_hat || !r->q || !r->scores_ref || !r->scores) {
        error_runtime(e, "out of memory for %zu x %zu keys", tokens, d);
        goto err;
    }
    memcpy(r->k_ref, k, n * sizeof *k);
    memcpy(r->q, q, d * sizeof *q);
    if (x->rope != ROPE_NONE &&
        (rope_apply(r->k_ref, tokens, d, 0, x->rope_theta, e) ||
         rope_apply(r->q, 1, d, tokens, x->rope_theta, e)))
        goto err;
    /* Pre-RoPE: store the raw keys, rotate what comes back. */
    const float *stored = x->rope == ROPE_PRE ? k : r->k_ref;
    if (store(x, stored, v, tokens, d, r->k_hat, r->v_hat, e))
        goto err;
    if (x->rope == ROPE_PRE && rope_apply(r->k_hat, tokens, d, 0, x->rope_theta, e))
        goto err;
    if (kv_errors(r->k_ref, r->k_hat, v, r->v_hat, r->q, tokens, d, &r->err, r->scores_ref,
                  r->scores)) {
        error_runtime(e, "out of memory measuring errors");
        goto err;
    }
    return 0;
err:
    experiment_result_free(r);
    return -1;
}
