/* kvgen.c - see kvgen.h. */
#include "kvgen.h"

#include "random.h"
#include "rotate.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define MAX_VALUE_OUTLIERS 4096

void kvgen_defaults(KvGenParams *p)
{
    *p = (KvGenParams){
        .seed = KVGEN_SEED_DEFAULT,
        .tokens = KVGEN_TOKENS_DEFAULT,
        .head_dim = KVGEN_HEAD_DIM_DEFAULT,
        .outlier_channels = KVGEN_OUTLIER_CHANNELS_DEFAULT,
        .outlier_scale = KVGEN_OUTLIER_SCALE_DEFAULT,
        .query_outlier_weight = (float)KVGEN_QUERY_OUTLIER_WEIGHT_DEFAULT,
        .sinks = KVGEN_SINKS_DEFAULT,
        .sink_strength = KVGEN_SINK_STRENGTH_DEFAULT,
        .value_outliers = KVGEN_VALUE_OUTLIERS_DEFAULT,
        .value_outlier_scale = KVGEN_VALUE_OUTLIER_SCALE_DEFAULT,
    };
}

int kvgen_check(const KvGenParams *p, Error *e)
{
    if (!p->tokens || p->tokens > KVGEN_TOKENS_MAX)
        return error_set(e, "tokens must be from 1 to %u", KVGEN_TOKENS_MAX);
    if (!p->head_dim || p->head_dim > KVGEN_MAX_DIM)
        return error_set(e, "head dimension must be from 1 to %d", KVGEN_MAX_DIM);
    if (p->value_outliers > MAX_VALUE_OUTLIERS)
        return error_set(e, "at most %d value outliers", MAX_VALUE_OUTLIERS);
    if (p->rope_theta != 0 && p->head_dim % 2)
        return error_set(e, "RoPE needs an even head dimension");
    if (p->outlier_channels > p->head_dim)
        return error_set(e, "%u outlier channels do not fit in %zu channels", p->outlier_channels,
                         p->head_dim);
    if ((uint64_t)p->sinks + p->value_outliers > p->tokens)
        return error_set(e, "sinks and value outliers (%llu) exceed the %zu tokens",
                         (unsigned long long)p->sinks + p->value_outliers, p->tokens);
    if (!(p->outlier_scale >= 0) || !(p->sink_strength >= 0) || !(p->value_outlier_scale >= 0) ||
        !(p->query_outlier_weight >= 0) || !isfinite(p->outlier_scale) ||
        !isfinite(p->sink_strength) || !isfinite(p->value_outlier_scale))
        return error_set(e, "scales and strengths must be finite and not negative");
    return 0;
}

/* Picks k distinct indices below n, in order of choice. */
static void pick(Rand *r, size_t n, size_t k, size_t *out)
{
    for (size_t i = 0; i < k; i++) {
        size_t c;
        bool fresh;
        do {
            c = (size_t)(rand_u64(r) % n);
            fresh = true;
            for (size_t j = 0; j < i; j++)
                fresh &= out[j] != c;
        } while (!fresh);
        out[i] = c;
    }
}

/* Outlier channels sit among the low-frequency RoPE dimensions, where
 * measurements put them (massive values concentrate there, and RoPE turns
 * them slowly): the last quarter of each half of the head, in the "rotate
 * half" layout. With too few of those, any channel. */
size_t kvgen_outlier_channels(const KvGenParams *p, size_t *out, size_t max)
{
    Rand r = {p->seed ^ 0x0C7A11E1ull};
    size_t n = p->outlier_channels < max ? p->outlier_channels : max;
    size_t half = p->head_dim / 2, quarter = half / 4, slots = 2 * quarter;
    if (n > slots || quarter == 0) {
        pick(&r, p->head_dim, n, out);
        return n;
    }
    pick(&r, slots, n, out);
    for (size_t i = 0; i < n; i++)      /* slot k -> channel in one of the two low-frequency ends */
        out[i] = (out[i] < quarter ? 0 : half) + half - quarter + out[i] % quarter;
    return n;
}

static bool all_finite(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* Each (token, channel) takes four draws from the stream (a key's normal
 * and a value's, two uniforms each), so row t starts DRAWS_PER_CELL D t
 * draws past row 0 whoever writes it. */
#define DRAWS_PER_CELL 4

int kvgen_plan(const KvGenParams *p, KvGenPlan *plan, float *q, Error *e)
{
    if (kvgen_check(p, e))
        return -1;
    const size_t D = p->head_dim;
    memset(plan, 0, sizeof *plan);
    plan->p = *p;
    Rand r = {p->seed};
    size_t outl[KVGEN_MAX_DIM];
    size_t n_out = kvgen_outlier_channels(p, outl, KVGEN_MAX_DIM);
    for (size_t i = 0; i < n_out; i++)
        plan->is_out[outl[i]] = true;
    for (size_t c = 0; c < D; c++)
        plan->sign[c] = (rand_u64(&r) & 1) ? 1.0f : -1.0f;

    /* Query: unit-variance on ordinary channels, a small weight on outliers. */
    for (size_t c = 0; c < D; c++)
        q[c] = rand_normal(&r) * (plan->is_out[c] ? p->query_outlier_weight : 1.0f);
    double qn = 0;
    for (size_t c = 0; c < D; c++)
        qn += (double)q[c] * q[c];
    plan->qn = qn > 0 ? sqrt(qn) : 1;
    plan->row0 = r.s;
    return 0;
}

void kvgen_rows(const KvGenPlan *plan, size_t t0, size_t t1, float *k, float *v)
{
    const KvGenParams *p = &plan->p;
    const size_t D = p->head_dim;
    Rand r = {plan->row0};
    rand_skip(&r, (uint64_t)DRAWS_PER_CELL * D * t0);
    for (size_t t = t0; t < t1; t++)
        for (size_t c = 0; c < D; c++) {
            float base = rand_normal(&r);
            k[t * D + c] = plan->is_out[c] ? plan->sign[c] * p->outlier_scale * (1.0f + 0.1f * base) : base;
            v[t * D + c] = rand_normal(&r);
        }
}

int kvgen_finish(const KvGenPlan *plan, float *k, float *v, const float *q, Error *e)
{
    const KvGenParams *p = &plan->p;
    const size_t T = p->tokens, D = p->head_dim;
    const double qn = plan->qn;
    /* Sinks: keys moved along the query so that their logit q.k / sqrt(D)
     * rises by sink_strength; values shrunk. Under RoPE the key at t and the
     * query at T meet rotated by T - t, so the key leans toward the query
     * turned by that much (rotations keep |q|). */
    float dir[KVGEN_MAX_DIM];
    for (size_t t = 0; t < p->sinks; t++) {
        memcpy(dir, q, D * sizeof *dir);
        if (p->rope_theta != 0 && rope_apply(dir, 1, D, T - t, p->rope_theta, e))
            return -1;
        for (size_t c = 0; c < D; c++) {
            k[t * D + c] += p->sink_strength * (float)(dir[c] * sqrt((double)D) / (qn * qn));
            v[t * D + c] *= 0.1f;
        }
    }
    /* Value outliers at random positions after the sinks (kvgen_check leaves
     * room for them there), drawn from the stream past the rows. */
    Rand r = {plan->row0};
    rand_skip(&r, (uint64_t)DRAWS_PER_CELL * D * T);
    size_t rows[MAX_VALUE_OUTLIERS];
    pick(&r, T - p->sinks, p->value_outliers, rows);
    for (size_t i = 0; i < p->value_outliers; i++)
        for (size_t c = 0; c < D; c++)
            v[(p->sinks + rows[i]) * D + c] *= p->value_outlier_scale;
    /* Scales near FLT_MAX can take a float past its range: say which. */
    if (!all_finite(q, D))
        return error_set(e, "a query outlier weight of %g takes the query past a float's range",
                         (double)p->query_outlier_weight);
    if (!all_finite(v, T * D))
        return error_set(e, "a value outlier scale of %g takes values past a float's range",
                         (double)p->value_outlier_scale);
    if (!all_finite(k, T * D))
        return error_set(e, "an outlier scale of %g (sink strength %g) takes keys past a float's range",
                         (double)p->outlier_scale, (double)p->sink_strength);
    return 0;
}

int kvgen(const KvGenParams *p, float *k, float *v, float *q, Error *e)
{
    KvGenPlan plan;
    if (kvgen_plan(p, &plan, q, e))
        return -1;
    kvgen_rows(&plan, 0, p->tokens, k, v);
    return kvgen_finish(&plan, k, v, q, e);
}

const float KV_WORKED_K[16] = {0.4f, -0.2f, 9.0f, 0.1f, -0.3f, 0.5f, 11.0f, -0.4f,
                               0.2f, -0.6f, 10.0f, 0.3f, 0.5f, 0.1f, 12.0f, -0.2f};
const float KV_WORKED_Q[4] = {1.0f, 1.0f, 0.1f, 1.0f};
