/* quanterror.c - see quanterror.h. */
#include "quanterror.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double rel_fro_error(const float *x, const float *x_hat, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)x_hat[i] - (double)x[i];
        num += d * d;
        den += (double)x[i] * (double)x[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* s = K q, p = softmax(s / sqrt(d)) in place of p, o = p V. */
static void attend(const float *k, const float *v, const float *q, size_t tokens, size_t d,
                   double *s, double *p, double *o)
{
    const double root_d = sqrt((double)d);
    double mx = -INFINITY;
    for (size_t t = 0; t < tokens; t++) {
        double acc = 0;
        for (size_t i = 0; i < d; i++)
            acc += (double)k[t * d + i] * (double)q[i];
        s[t] = acc;
        if (acc / root_d > mx)
            mx = acc / root_d;
    }
    double sum = 0;
    for (size_t t = 0; t < tokens; t++) {
        p[t] = exp(s[t] / root_d - mx);
        sum += p[t];
    }
    memset(o, 0, d * sizeof *o);
    for (size_t t = 0; t < tokens; t++) {
        p[t] /= sum;
        for (size_t i = 0; i < d; i++)
            o[i] += p[t] * (double)v[t * d + i];
    }
}

static size_t argmax(const double *s, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (s[i] > s[best])
            best = i;
    return best;
}

int kv_errors(const float *k, const float *k_hat, const float *v, const float *v_hat,
               const float *q, size_t tokens, size_t d, KvErrors *out, double *scores_ref,
               double *scores)
{
    memset(out, 0, sizeof *out);
    if (!tokens || !d)
        return 0;
    double *buf = malloc((4 * tokens + 2 * d) * sizeof *buf);
    if (!buf)
        return -1;
    double *s0 = buf, *s1 = s0 + tokens, *p0 = s1 + tokens, *p1 = p0 + tokens;
    double *o0 = p1 + tokens, *o1 = o0 + d;
    attend(k, v, q, tokens, d, s0, p0, o0);
    attend(k_hat, v_hat, q, tokens, d, s1, p1, o1);
    out->rel_fro_k = rel_fro_error(k, k_hat, tokens * d);
    out->rel_fro_v = rel_fro_error(v, v_hat, tokens * d);
    double tv = 0, on = 0, oe = 0;
    for (size_t t = 0; t < tokens; t++) {
        double err = fabs(s1[t] - s0[t]);
        out->nan_scores += isnan(s1[t]);
        if (isnan(err))                 // once NaN, the largest error stays NaN
            out->max_score_error = NAN;
        else if (err > out->max_score_error)
            out->max_score_error = err;
        tv += fabs(p1[t] - p0[t]);
    }
    out->softmax_tv = tv / 2;
    for (size_t i = 0; i < d; i++) {
        on += o0[i] * o0[i];
        oe += (o1[i] - o0[i]) * (o1[i] - o0[i]);
    }
    out->output_rel_error = on > 0 ? sqrt(oe / on) : sqrt(oe);
    out->top_ref = argmax(s0, tokens);
    out->top = argmax(s1, tokens);
    if (scores_ref)
        memcpy(scores_ref, s0, tokens * sizeof *s0);
    if (scores)
        memcpy(scores, s1, tokens * sizeof *s1);
    free(buf);
    return 0;
}
