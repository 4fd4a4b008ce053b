/* attn_cpu.c - the CPU reference for one decode step, threaded.
 *
 * Each (sequence, KV head) pair is one task: its tokens are dequantized one
 * at a time (kv_dequant, the definition) and every query head of the GQA
 * group is served from that one read, with an online softmax in float:
 * running maximum m, running sum l, accumulator o, rescaled when m grows.
 * Cost: O(B x H_kv x S x D x (1 + G)); threads split the pairs.
 *
 * KvCpuOptions repeats the FP8 kernels' arithmetic: the query rounded to
 * E4M3 once, before the pairs; the probabilities rounded to E4M3 against
 * a reference maximum known before the first token (a first pass over the
 * scores), in place of the online softmax. */
#include "kv_attn.h"

#include "minifloat.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define G_MAX 64                // query heads per KV head
#define LOG2E 1.4426950408889634f
/* Path C's probabilities are e^(s - m) times P_E4M3_SCALE before they
 * become E4M3 codes: the largest, 1, as 256 (E4M3 reaches 448), and the
 * smallest subnormal code 2^-9 is 2^-17 of it. */
#define P_E4M3_SCALE 256.0f

typedef struct {
    const KvCache *c;
    const float *q;
    bool fp8_p;
    float *out;
} Job;

/* The group's outputs: each head's accumulator over its sum. */
static void normalize(const float *o, const float *l, uint32_t G, uint32_t D, float *oh)
{
    for (uint32_t g = 0; g < G; g++)
        for (uint32_t d = 0; d < D; d++)
            oh[g * D + d] = l[g] > 0 ? o[g * D + d] / l[g] : 0;
}

/* q_g . k / sqrt(D) of every query head g of the group. */
static void scores(const float *qh, const float *k, uint32_t G, uint32_t D, float *sc)
{
    const float scale = 1.0f / sqrtf((float)D);
    for (uint32_t g = 0; g < G; g++) {
        float dot = 0;
        for (uint32_t d = 0; d < D; d++)
            dot += qh[g * D + d] * k[d];
        sc[g] = dot * scale;
    }
}

/* Path C's probabilities (KvCpuOptions.fp8_p): a first pass for each
 * head's largest score, its reference m2 in powers of two rounded up,
 * then p = 2^(s log2 e - m2) summed as it is and weighting the values as
 * an E4M3 code of 256 p. */
static void one_pair_fp8_p(const KvCache *c, uint32_t b, uint32_t h, const float *qh, float *oh)
{
    const KvShape *s = &c->s;
    uint32_t D = s->head_dim, G = s->q_heads / s->kv_heads;
    float k[KV_HEAD_DIM_MAX], v[KV_HEAD_DIM_MAX], m2[G_MAX], l[G_MAX], sc[G_MAX];
    float o[G_MAX * KV_HEAD_DIM_MAX];
    memset(o, 0, (size_t)G * D * sizeof *o);
    for (uint32_t g = 0; g < G; g++)
        m2[g] = -INFINITY, l[g] = 0;
    for (uint32_t t = 0; t < c->len; t++) {
        kv_dequant(c, b, h, t, k, v);
        scores(qh, k, G, D, sc);
        for (uint32_t g = 0; g < G; g++)
            m2[g] = fmaxf(m2[g], sc[g] * LOG2E);
    }
    for (uint32_t g = 0; g < G; g++)
        m2[g] = ceilf(m2[g]);
    for (uint32_t t = 0; t < c->len; t++) {
        kv_dequant(c, b, h, t, k, v);
        scores(qh, k, G, D, sc);
        for (uint32_t g = 0; g < G; g++) {
            const float p = exp2f(sc[g] * LOG2E - m2[g]);
            const float pq = minifloat_round(&MF_E4M3, p * P_E4M3_SCALE, true) / P_E4M3_SCALE;
            l[g] += p;
            for (uint32_t d = 0; d < D; d++)
                o[g * D + d] += pq * v[d];
        }
    }
    normalize(o, l, G, D, oh);
}

static void one_pair(const KvCache *c, uint32_t b, uint32_t h, const float *q, float *out, bool fp8_p)
{
    const KvShape *s = &c->s;
    uint32_t D = s->head_dim, G = s->q_heads / s->kv_heads;
    const float *qh = q + ((size_t)b * s->q_heads + (size_t)h * G) * D;
    float *oh = out + ((size_t)b * s->q_heads + (size_t)h * G) * D;
    if (fp8_p) {
        one_pair_fp8_p(c, b, h, qh, oh);
        return;
    }
    float k[KV_HEAD_DIM_MAX], v[KV_HEAD_DIM_MAX], m[G_MAX], l[G_MAX], sc[G_MAX];
    float o[G_MAX * KV_HEAD_DIM_MAX];                         // (G, D) accumulators
    memset(o, 0, (size_t)G * D * sizeof *o);
    for (uint32_t g = 0; g < G; g++)
        m[g] = -INFINITY, l[g] = 0;
    for (uint32_t t = 0; t < c->len; t++) {
        kv_dequant(c, b, h, t, k, v);
        scores(qh, k, G, D, sc);
        for (uint32_t g = 0; g < G; g++) {
            float mn = fmaxf(m[g], sc[g]);
            float alpha = expf(m[g] - mn), p = expf(sc[g] - mn);
            l[g] = l[g] * alpha + p;
            float *og = o + (size_t)g * D;
            for (uint32_t d = 0; d < D; d++)
                og[d] = og[d] * alpha + p * v[d];
            m[g] = mn;
        }
    }
    normalize(o, l, G, D, oh);
}

/* Item i of parallel_each: sequence i / kv_heads, KV head i mod kv_heads. */
static int pair_item(void *ctx, size_t i, int worker, Error *e)
{
    const Job *j = ctx;
    const uint32_t H = j->c->s.kv_heads;
    one_pair(j->c, (uint32_t)(i / H), (uint32_t)(i % H), j->q, j->out, j->fp8_p);
    (void)worker, (void)e;
    return 0;
}

void kv_e4m3_query(float *q, size_t heads, uint32_t D)
{
    const float scale = 1.0f / sqrtf((float)D);
    for (size_t h = 0; h < heads; h++) {
        float *x = q + h * D, amax = 0;
        for (uint32_t d = 0; d < D; d++)
            amax = fmaxf(amax, fabsf(x[d] * scale));
        const float qs = amax > 0 ? 448.0f / amax : 1.0f;
        for (uint32_t d = 0; d < D; d++)
            x[d] = minifloat_round(&MF_E4M3, x[d] * (scale * qs), true) / qs / scale;
    }
}

int kv_decode_cpu_with(const KvCache *c, const float *q, float *out, int threads, const KvCpuOptions *o,
                       Error *e)
{
    const KvShape *s = &c->s;
    if (s->q_heads / s->kv_heads > G_MAX)
        return error_set(e, "at most %d query heads per KV head", G_MAX);
    if (!c->len)
        return error_set(e, "the cache is empty");
    const KvCpuOptions none = {false, false};
    if (!o)
        o = &none;
    float *qr = NULL;
    if (o->fp8_q) {
        size_t n = (size_t)s->batch * s->q_heads * s->head_dim;
        if (!(qr = malloc(n * sizeof *qr)))
            return error_set(e, "out of memory for the query");
        memcpy(qr, q, n * sizeof *qr);
        kv_e4m3_query(qr, (size_t)s->batch * s->q_heads, s->head_dim);
        q = qr;
    }
    Job j = {c, q, o->fp8_p, out};
    parallel_each((size_t)s->batch * s->kv_heads, threads, pair_item, &j, NULL);
    free(qr);
    return 0;
}

int kv_decode_cpu(const KvCache *c, const float *q, float *out, int threads, Error *e)
{
    return kv_decode_cpu_with(c, q, out, threads, NULL, e);
}
