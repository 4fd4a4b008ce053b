/* attn_cpu.c - the CPU reference for one decode step, threaded.
 *
 * Each (sequence, KV head) pair is one task: its tokens are dequantized one
 * at a time (kv_dequant, the definition) and every query head of the GQA
 * group is served from that one read, with an online softmax in float:
 * running maximum m, running sum l, accumulator o, rescaled when m grows.
 * Cost: O(B x H_kv x S x D x (1 + G)); threads split the pairs. */
#include "kv_attn.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define G_MAX 64                // query heads per KV head

typedef struct {
    const KvCache *c;
    const float *q;
    float *out;
    size_t next, count;         // task counter shared by the workers
    pthread_mutex_t lock;
} Job;

static void one_pair(const KvCache *c, uint32_t b, uint32_t h, const float *q, float *out)
{
    const KvShape *s = &c->s;
    uint32_t D = s->head_dim, G = s->q_heads / s->kv_heads;
    float k[KV_HEAD_DIM_MAX], v[KV_HEAD_DIM_MAX], m[G_MAX], l[G_MAX];
    float o[G_MAX * KV_HEAD_DIM_MAX];                         // (G, D) accumulators
    memset(o, 0, (size_t)G * D * sizeof *o);
    const float scale = 1.0f / sqrtf((float)D);
    for (uint32_t g = 0; g < G; g++)
        m[g] = -INFINITY, l[g] = 0;
    const float *qh = q + ((size_t)b * s->q_heads + (size_t)h * G) * D;
    for (uint32_t t = 0; t < c->len; t++) {
        kv_dequant(c, b, h, t, k, v);
        for (uint32_t g = 0; g < G; g++) {
            float dot = 0;
            for (uint32_t d = 0; d < D; d++)
                dot += qh[g * D + d] * k[d];
            float sc = dot * scale, mn = fmaxf(m[g], sc);
            float alpha = expf(m[g] - mn), p = expf(sc - mn);
            l[g] = l[g] * alpha + p;
            float *og = o + (size_t)g * D;
            for (uint32_t d = 0; d < D; d++)
                og[d] = og[d] * alpha + p * v[d];
            m[g] = mn;
        }
    }
    float *oh = out + ((size_t)b * s->q_heads + (size_t)h * G) * D;
    for (uint32_t g = 0; g < G; g++)
        for (uint32_t d = 0; d < D; d++)
            oh[g * D + d] = l[g] > 0 ? o[g * D + d] / l[g] : 0;
}

static void *worker(void *arg)
{
    Job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        size_t i = j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->count)
            return NULL;
        uint32_t H = j->c->s.kv_heads;
        one_pair(j->c, (uint32_t)(i / H), (uint32_t)(i % H), j->q, j->out);
    }
}

int kv_decode_cpu(const KvCache *c, const float *q, float *out, int threads, Error *e)
{
    const KvShape *s = &c->s;
    if (s->q_heads / s->kv_heads > G_MAX)
        return error_set(e, "at most %d query heads per KV head", G_MAX);
    if (!c->len)
        return error_set(e, "the cache is empty");
    if (threads <= 0)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    Job j = {c, q, out, 0, (size_t)s->batch * s->kv_heads, PTHREAD_MUTEX_INITIALIZER};
    if ((size_t)threads > j.count)
        threads = (int)j.count;
    pthread_t tid[256];
    int started = 0;
    for (; started < threads && started < 256; started++)
        if (pthread_create(&tid[started], NULL, worker, &j) != 0)
            break;
    if (!started)
        worker(&j);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    return 0;
}
