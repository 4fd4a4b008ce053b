/* niah.c - see niah.h.
 *
 * Where the time goes: per trial of a length S, the generator's 2 S D
 * normal draws and RoPE over S rows once, the rows spread over the cores;
 * per format and depth the quantize-on-write of S tokens and one decode
 * step over them, the pairs spread over the cores (the GPU's calls one at
 * a time). One room holds every trial's haystack, so no trial waits on
 * fresh pages. */
#include "niah.h"

#include "kvtensors.h"
#include "parallel.h"
#include "quant.h"
#include "random.h"
#include "rotate.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

/* ------------------------------------------------------------------------
 * The formats: the kernels' own first, then the simulated variants.
 */

#define INT_TOKEN(b) {SIM_INT, (b), false, 0}
#define INT_CHANNEL(b) {SIM_INT, (b), true, 0}
#define NUQ4(sparse) {SIM_NUQ, 4, true, (sparse)}
#define KVQUANT_SPARSE 0.01f            // KVQuant's 1% dense-and-sparse

static const NiahFormat FORMATS[] = {
    {"bf16", "BF16 keys and values: the baseline", false, KV_BF16, {0}, {0}, false, false},
    {"fp8_e4m3", "FP8 E4M3, one scale per tensor", false, KV_FP8, {0}, {0}, false, false},
    {"int8", "INT8, one scale per token-head vector", false, KV_INT8, {0}, {0}, false, false},
    {"int4", "KIVI 4-bit: keys per channel, values per token, newest tokens in BF16", false, KV_INT4,
     {0}, {0}, false, false},
    {"nvfp4", "NVFP4: E2M1 in blocks of 16 with E4M3 scales", false, KV_NVFP4, {0}, {0}, false, false},
    {"mxfp4", "MXFP4: E2M1 in blocks of 32 with E8M0 scales", false, KV_MXFP4, {0}, {0}, false, false},
    {"int2-k-token", "keys only, 2-bit per token (groups of 32 channels)", true, KV_BF16, INT_TOKEN(2),
     {0}, false, false},
    {"int2-k-channel", "keys only, 2-bit per channel (groups of 32 tokens)", true, KV_BF16,
     INT_CHANNEL(2), {0}, false, false},
    {"int4-k-token", "keys only, 4-bit per token", true, KV_BF16, INT_TOKEN(4), {0}, false, false},
    {"int4-k-channel", "keys only, 4-bit per channel", true, KV_BF16, INT_CHANNEL(4), {0}, false, false},
    {"int2-v-token", "values only, 2-bit per token", true, KV_BF16, {0}, INT_TOKEN(2), false, false},
    {"int2-kivi", "keys per channel and values per token, 2-bit, no BF16 window", true, KV_BF16,
     INT_CHANNEL(2), INT_TOKEN(2), false, false},
    {"int2-k-channel-prerope", "keys only, 2-bit per channel, quantized before RoPE", true, KV_BF16,
     INT_CHANNEL(2), {0}, true, false},
    {"int2-k-token-hadamard", "keys only, 2-bit per token after a Hadamard rotation", true, KV_BF16,
     INT_TOKEN(2), {0}, false, true},
    {"nuq4-k", "keys only, KVQuant's non-uniform 4-bit grid per channel, before RoPE", true, KV_BF16,
     NUQ4(0), {0}, true, false},
    {"nuq4-k-sparse", "nuq4-k with 1% of each channel kept exact (dense-and-sparse)", true, KV_BF16,
     NUQ4(KVQUANT_SPARSE), {0}, true, false},
};
#define N_FORMATS (sizeof FORMATS / sizeof FORMATS[0])
_Static_assert(N_FORMATS <= NIAH_FORMATS_MAX, "the grid holds every format");

const NiahFormat *niah_format_at(size_t i)
{
    return i < N_FORMATS ? &FORMATS[i] : NULL;
}

int niah_format_parse(const char *id, const NiahFormat **out, Error *e)
{
    KvFormat k;
    if (kv_format_parse(id, &k, NULL) == 0) {  // the kernels' aliases (fp8, e4m3) too
        *out = &FORMATS[0];
        while ((*out)->simulated || (*out)->kernel != k)
            (*out)++;
        return 0;
    }
    for (size_t i = 0; i < N_FORMATS; i++)
        if (!strcmp(FORMATS[i].id, id)) {
            *out = &FORMATS[i];
            return 0;
        }
    return error_set(e, "no format '%s' (kvlab niah --help lists them)", id);
}

/* ------------------------------------------------------------------------
 * Parameters
 */

void niah_haystack_defaults(NiahHaystack *h)
{
    *h = (NiahHaystack){
        .rope_theta = ROPE_THETA_LLAMA3,
        .needle_logit = (float)NIAH_NEEDLE_LOGIT_DEFAULT,
        .distractors = NIAH_DISTRACTORS_DEFAULT,
        .closeness = (float)NIAH_CLOSENESS_DEFAULT,
        .digits = PASSKEY_DIGITS_DEFAULT,
        .amplitude = (float)PASSKEY_AMPLITUDE_DEFAULT,
        .residual = NIAH_RESIDUAL_DEFAULT,
    };
    kvgen_defaults(&h->gen);
    h->gen.head_dim = NIAH_HEAD_DIM;
}

int niah_haystack_check(const NiahHaystack *h, Error *e)
{
    if (!(h->needle_logit > 0 && h->needle_logit <= 100))
        return error_set(e, "the needle's logit must be above 0 and at most 100, not %g",
                         (double)h->needle_logit);
    if (!(h->closeness >= 0 && h->closeness < 1))
        return error_set(e, "closeness must be from 0 to below 1, not %g", (double)h->closeness);
    if (h->distractors > 1000)
        return error_set(e, "at most 1000 distractors, not %u", h->distractors);
    if (!(h->amplitude > 0 && h->amplitude <= 1000))
        return error_set(e, "the passkey's amplitude must be above 0 and at most 1000, not %g",
                         (double)h->amplitude);
    if (!(h->rope_theta == 0 || (h->rope_theta > 1 && h->rope_theta <= 1e9)))
        return error_set(e, "RoPE's theta must be 0 (none) or above 1 and at most 1e9, not %g", h->rope_theta);
    if (h->residual % KV_KIVI_GROUP)
        return error_set(e, "the int4 residual window is a multiple of %d tokens, not %u",
                         KV_KIVI_GROUP, h->residual);
    return passkey_check(h->digits, h->gen.head_dim, e);
}

size_t niah_head_dim(const NiahGrid *g)
{
    return g->kv ? g->kv->head_dim : g->hay.gen.head_dim;
}

int niah_grid_check(const NiahGrid *g, Error *e)
{
    if (niah_haystack_check(&g->hay, e))
        return -1;
    if (!g->n_lengths || !g->n_depths || !g->n_formats)
        return error_set(e, "the grid needs a length, a depth and a format");
    if (g->formats[0]->kernel != KV_BF16 || g->formats[0]->simulated)
        return error_set(e, "bf16 comes first: it is the baseline");
    if (!g->trials || g->trials > NIAH_TRIALS_MAX)
        return error_set(e, "trials must be from 1 to %d", NIAH_TRIALS_MAX);
    for (size_t d = 0; d < g->n_depths; d++)
        if (!(g->depths[d] >= 0 && g->depths[d] <= 1))
            return error_set(e, "depth %g is outside 0 .. 1", g->depths[d]);
    const KvGenParams *p = &g->hay.gen;
    if (g->kv) {
        KvShape ks = {KV_BF16, 1, 1, 1, (uint32_t)g->kv->head_dim, KV_KIVI_GROUP, 0, false};
        if (kv_shape_check(&ks, e) || passkey_check(g->hay.digits, g->kv->head_dim, e))
            return error_prefix(e, "the file's head dimension %zu", g->kv->head_dim);
        for (size_t l = 0; l < g->n_lengths; l++)
            if (g->lengths[l] > g->kv->tokens)
                return error_set(e, "length %u: the file holds %zu tokens", g->lengths[l], g->kv->tokens);
    }
    for (size_t l = 0; l < g->n_lengths; l++) {
        uint64_t need = (g->kv ? 0 : (uint64_t)p->sinks + p->value_outliers) + g->hay.distractors + 1;
        if (g->lengths[l] < NIAH_LENGTH_MIN || g->lengths[l] < need || g->lengths[l] > KVGEN_TOKENS_MAX)
            return error_set(e, "length %u: from %llu (sinks, value outliers, distractors and the "
                                "needle; at least %d) to %u tokens",
                             g->lengths[l], (unsigned long long)(need > NIAH_LENGTH_MIN ? need : NIAH_LENGTH_MIN),
                             NIAH_LENGTH_MIN, KVGEN_TOKENS_MAX);
    }
    KvGenParams one = *p;
    one.tokens = g->lengths[0];
    return kvgen_check(&one, e);
}

/* ------------------------------------------------------------------------
 * A trial: the haystack, then the needle and distractors planted in a
 * copy of it for each depth.
 */

static int rope(float *x, size_t rows, size_t D, size_t first, double theta, Error *e)
{
    return theta == 0 ? 0 : rope_apply(x, rows, D, first, theta, e);
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* Token p of depth b, pre-RoPE keys: its logit against the query set to
 * exactly `logit`, by the ordinary channels alone. In the key's frame the
 * query reads as R(S - p) q (RoPE turns the key by p and the query by S),
 * so the key loses its component along that and gains one along R(S - p)
 * u, u the query without its outlier channels. */
static int plant_key(const NiahGrid *g, NiahTrial *tr, uint32_t b, uint32_t p, const float *q,
                     const float *u, double logit, Error *e)
{
    const size_t D = tr->D;
    float qr[KV_HEAD_DIM_MAX], ur[KV_HEAD_DIM_MAX];
    memcpy(qr, q, D * sizeof *qr);
    memcpy(ur, u, D * sizeof *ur);
    if (rope(qr, 1, D, tr->S - p, g->hay.rope_theta, e) || rope(ur, 1, D, tr->S - p, g->hay.rope_theta, e))
        return -1;
    float row[KV_HEAD_DIM_MAX], *k = tr->k_pre_all ? tr->k_pre + ((size_t)b * tr->S + p) * D : row;
    if (!tr->k_pre_all)
        memcpy(row, tr->k_pre + (size_t)p * D, D * sizeof *row);
    double along = dot(k, qr, D) / dot(qr, qr, D), a = logit * sqrt((double)D) / dot(q, u, D);
    for (size_t c = 0; c < D; c++)
        k[c] = (float)(k[c] - along * qr[c] + a * ur[c]);
    float *kp = tr->k_post + ((size_t)b * tr->S + p) * D;
    memcpy(kp, k, D * sizeof *kp);
    return rope(kp, 1, D, p, g->hay.rope_theta, e);
}

static void random_passkey(Rand *r, unsigned n, uint8_t *out)
{
    for (unsigned i = 0; i < n; i++)
        out[i] = (uint8_t)rand_below(r, 10);
}

/* Positions for the distractors of depth b: distinct, after the sinks,
 * never the needle's. */
static void distractor_positions(Rand *r, const NiahTrial *tr, uint32_t first, uint32_t needle, unsigned n,
                                 uint32_t *out)
{
    for (unsigned i = 0; i < n; i++) {
        bool fresh;
        do {
            out[i] = first + (uint32_t)rand_below(r, tr->S - first);
            fresh = out[i] != needle;
            for (unsigned j = 0; j < i; j++)
                fresh &= out[j] != out[i];
        } while (!fresh);
    }
}

static bool any_pre_rope(const NiahGrid *g)
{
    for (size_t f = 0; f < g->n_formats; f++)
        if (g->formats[f]->pre_rope)
            return true;
    return false;
}

void niah_trial_free(NiahTrial *tr)
{
    free(tr->k_post), free(tr->k_pre), free(tr->v), free(tr->q);
    memset(tr, 0, sizeof *tr);
}

/* x (rows, d), rows at positions first.., turned back by RoPE: R(-p) is
 * R(p) with the second half of each pair negated before and after. */
static int unrope(float *x, size_t rows, size_t d, size_t first, double theta, Error *e)
{
    if (theta == 0)
        return 0;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = d / 2; c < d; c++)
            x[r * d + c] = -x[r * d + c];
    if (rope_apply(x, rows, d, first, theta, e))
        return -1;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = d / 2; c < d; c++)
            x[r * d + c] = -x[r * d + c];
    return 0;
}

/* fn over the items 0 .. n - 1 in runs of neighbours, one a thread
 * (parallel_each); the error of the first run that failed. */
typedef int (*RunFn)(void *ctx, size_t a, size_t b, Error *e);

typedef struct {
    RunFn fn;
    void *ctx;
    size_t n, runs;
} Runs;

static int run_item(void *ctx, size_t k, int worker, Error *e)
{
    const Runs *r = ctx;
    (void)worker;
    return r->fn(r->ctx, r->n * k / r->runs, r->n * (k + 1) / r->runs, e);
}

static int side_by_side(size_t n, int threads, RunFn fn, void *ctx, Error *e)
{
    Runs r = {fn, ctx, n, (size_t)parallel_threads(n, threads)};
    return parallel_each(r.runs, (int)r.runs, run_item, &r, e);
}

static int rows_generated(void *ctx, size_t a, size_t b, Error *e)
{
    void **arg = ctx;
    NiahTrial *tr = arg[1];
    kvgen_rows(arg[0], a, b, tr->k_pre, tr->v);
    (void)e;
    return 0;
}

/* The synthetic haystack of trial t: the generator's keys (k_pre) and
 * values, its rows written on `threads` threads, and query; its outlier
 * channels. */
static int haystack_generated(const NiahGrid *g, const KvGenParams *p, int threads, NiahTrial *tr, float *q,
                              size_t *outl, size_t *n_out, Error *e)
{
    KvGenPlan plan;
    if (kvgen_plan(p, &plan, q, e))
        return -1;
    void *arg[2] = {&plan, tr};
    if (side_by_side(tr->S, threads, rows_generated, arg, e) || kvgen_finish(&plan, tr->k_pre, tr->v, q, e))
        return -1;
    *n_out = kvgen_outlier_channels(p, outl, KV_HEAD_DIM_MAX);
    tr->amplitude = g->hay.amplitude;
    return 0;
}

/* The haystack of trial t from a file: the first S tokens of KV head
 * t mod kv_heads (each head in turn), its keys as the model cached them
 * (after RoPE: k_post); its outlier channels the ones with the
 * largest mean magnitude; a query drawn as the generator draws one (unit
 * normal, the outlier channels weighted query_outlier_weight); the
 * passkey's amplitude in units of the head's value RMS. */
static int haystack_file(const NiahGrid *g, const KvGenParams *p, unsigned t, NiahTrial *tr, float *q,
                         size_t *outl, size_t *n_out)
{
    const KvTensors *kv = g->kv;
    const size_t S = tr->S, D = tr->D, H = kv->kv_heads, h = t % H;
    double mag[KV_HEAD_DIM_MAX] = {0}, v2 = 0;
    for (size_t i = 0; i < S; i++) {
        const float *k = kv->k + (i * H + h) * D, *v = kv->v + (i * H + h) * D;
        memcpy(tr->k_post + i * D, k, D * sizeof *k);
        memcpy(tr->v + i * D, v, D * sizeof *v);
        for (size_t c = 0; c < D; c++)
            mag[c] += fabs(k[c]), v2 += (double)v[c] * v[c];
    }
    *n_out = p->outlier_channels < D ? p->outlier_channels : D;
    bool taken[KV_HEAD_DIM_MAX] = {false};
    for (size_t i = 0; i < *n_out; i++) {          // the largest mean magnitudes, in turn
        size_t best = D;
        for (size_t c = 0; c < D; c++)
            if (!taken[c] && (best == D || mag[c] > mag[best]))
                best = c;
        taken[best] = true, outl[i] = best;
    }
    Rand r = {rand_seed_of(p->seed, 0x9E7)};
    for (size_t c = 0; c < D; c++)
        q[c] = rand_normal(&r) * (taken[c] ? p->query_outlier_weight : 1.0f);
    double rms = sqrt(v2 / (double)(S * D));
    tr->amplitude = (float)(g->hay.amplitude * (rms > 0 ? rms : 1));
    return 0;
}

/* Rows a .. b - 1 of the haystack: the keys turned by RoPE at their
 * positions (a generated haystack's k_post from k_pre; a file's k_pre
 * back from k_post), then copied to every depth's planes. */
static int rows_finish(void *ctx, size_t a, size_t b, Error *e)
{
    void **arg = ctx;
    const NiahGrid *g = arg[0];
    NiahTrial *tr = arg[1];
    const size_t D = tr->D, plane = (size_t)tr->S * D, n = (b - a) * D;
    float *pre = tr->k_pre + a * D, *post = tr->k_post + a * D;
    if (g->kv) {
        memcpy(pre, post, n * sizeof *pre);
        if (unrope(pre, b - a, D, a, g->hay.rope_theta, e))
            return -1;
    } else {
        memcpy(post, pre, n * sizeof *post);
        if (rope(post, b - a, D, a, g->hay.rope_theta, e))
            return -1;
    }
    for (size_t d = 1; d < tr->B; d++) {
        if (tr->k_pre_all)
            memcpy(pre + d * plane, pre, n * sizeof *pre);
        memcpy(post + d * plane, post, n * sizeof *post);
        memcpy(tr->v + d * plane + a * D, tr->v + a * D, n * sizeof *tr->v);
    }
    return 0;
}

static uint32_t longest(const NiahGrid *g)
{
    uint32_t m = 0;
    for (size_t l = 0; l < g->n_lengths; l++)
        m = g->lengths[l] > m ? g->lengths[l] : m;
    return m;
}

/* Room in tr for the trials of g up to `tokens` long. */
static int trial_alloc(const NiahGrid *g, uint32_t tokens, NiahTrial *tr, Error *e)
{
    const size_t B = g->n_depths, D = niah_head_dim(g), plane = (size_t)tokens * D;
    memset(tr, 0, sizeof *tr);
    tr->k_pre_all = any_pre_rope(g);
    tr->k_post = malloc(B * plane * sizeof *tr->k_post);
    tr->k_pre = malloc((tr->k_pre_all ? B : 1) * plane * sizeof *tr->k_pre);
    tr->v = malloc(B * plane * sizeof *tr->v);
    tr->q = malloc(B * D * sizeof *tr->q);
    if (!tr->k_post || !tr->k_pre || !tr->v || !tr->q) {
        niah_trial_free(tr);
        return error_runtime(e, "out of memory for a haystack of %u tokens at %zu depths", tokens, B);
    }
    return 0;
}

/* Trial t of length l into tr (trial_alloc's room), on `threads` threads. */
static int trial_fill(const NiahGrid *g, size_t l, unsigned t, int threads, NiahTrial *tr, Error *e)
{
    const NiahHaystack *h = &g->hay;
    KvGenParams p = h->gen;
    p.tokens = g->lengths[l];
    p.head_dim = niah_head_dim(g);
    p.rope_theta = h->rope_theta;
    p.seed = rand_seed_of(g->seed, (uint64_t)l * NIAH_TRIALS_MAX + t);
    const uint32_t S = (uint32_t)p.tokens, D = (uint32_t)p.head_dim, B = (uint32_t)g->n_depths;
    const size_t plane = (size_t)S * D;
    tr->S = S, tr->D = D, tr->B = B;
    float q[KV_HEAD_DIM_MAX], u[KV_HEAD_DIM_MAX];
    size_t outl[KV_HEAD_DIM_MAX], n_out;
    if (g->kv)
        haystack_file(g, &p, t, tr, q, outl, &n_out);
    else if (haystack_generated(g, &p, threads, tr, q, outl, &n_out, e))
        return -1;
    void *arg[2] = {(void *)g, tr};
    if (side_by_side(S, threads, rows_finish, arg, e))
        return -1;
    memcpy(u, q, D * sizeof *u);
    for (size_t i = 0; i < n_out; i++)
        u[outl[i]] = 0;
    Rand r = {rand_seed_of(p.seed, 0x9EED1E)};
    const uint32_t first = g->kv ? 0 : p.sinks;        // a file's sinks are its own first tokens
    for (uint32_t b = 0; b < B; b++) {
        uint32_t pos = first + (uint32_t)lround(g->depths[b] * (S - 1 - first));
        tr->needle[b] = pos;
        random_passkey(&r, h->digits, tr->passkey[b]);
        if (plant_key(g, tr, b, pos, q, u, h->needle_logit, e))
            return -1;
        passkey_encode(tr->passkey[b], h->digits, tr->amplitude, tr->v + b * plane + (size_t)pos * D, D);
        uint32_t where[1000];
        distractor_positions(&r, tr, first, pos, h->distractors, where);
        for (unsigned i = 0; i < h->distractors; i++) {
            uint8_t other[PASSKEY_DIGITS_MAX];
            do
                random_passkey(&r, h->digits, other);
            while (!memcmp(other, tr->passkey[b], h->digits));
            if (plant_key(g, tr, b, where[i], q, u, (double)h->closeness * h->needle_logit, e))
                return -1;
            passkey_encode(other, h->digits, tr->amplitude, tr->v + b * plane + (size_t)where[i] * D, D);
        }
        memcpy(tr->q + (size_t)b * D, q, D * sizeof *q);
        if (rope(tr->q + (size_t)b * D, 1, D, S, h->rope_theta, e))
            return -1;
    }
    return 0;
}

int niah_trial_make(const NiahGrid *g, size_t l, unsigned t, NiahTrial *tr, Error *e)
{
    if (trial_alloc(g, g->lengths[l], tr, e))
        return -1;
    if (trial_fill(g, l, t, 0, tr, e)) {             // 0: a thread a core
        niah_trial_free(tr);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Simulated quantization: what the cache would hold, dequantized, for the
 * BF16 kernel to read.
 */

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* KVQuant's non-uniform grid on channel c of x (S, D): the `sparse`
 * fraction of values farthest out (half at each end) kept exact; the rest
 * cut into 2^bits bins of equal count, each level the mean of its bin (the
 * first step of k-means from a quantile start, standing in for the
 * paper's sensitivity-weighted k-means on calibration data), each value
 * moved to its nearest level. */
static void nuq_channel(float *x, size_t S, size_t D, size_t c, unsigned bits, float sparse, float *sorted)
{
    for (size_t t = 0; t < S; t++)
        sorted[t] = x[t * D + c];
    qsort(sorted, S, sizeof *sorted, cmp_float);
    size_t cut = (size_t)floor(sparse * (double)S / 2), lo = cut, hi = S - cut;   // [lo, hi) is dense
    const size_t L = (size_t)1 << bits;
    float level[16];
    size_t n_levels = 0;
    for (size_t i = 0; i < L; i++) {
        size_t a = lo + (hi - lo) * i / L, b = lo + (hi - lo) * (i + 1) / L;
        if (b <= a)
            continue;
        double s = 0;
        for (size_t j = a; j < b; j++)
            s += sorted[j];
        level[n_levels++] = (float)(s / (double)(b - a));
    }
    const float vlo = sorted[lo], vhi = sorted[hi - 1];
    for (size_t t = 0; t < S; t++) {
        float *y = &x[t * D + c];
        if (*y < vlo || *y > vhi || !n_levels)
            continue;                                               // sparse: exact
        size_t best = 0;
        for (size_t i = 1; i < n_levels; i++)
            if (fabsf(*y - level[i]) < fabsf(*y - level[best]))
                best = i;
        *y = level[best];
    }
}

/* x (S, D) quantized and dequantized as q says. */
static int sim_quantize(const SimQuant *q, float *x, size_t S, size_t D, Error *e)
{
    if (q->kind == SIM_INT) {
        QuantSpec s;
        quant_spec_init(&s);
        s.scheme = SCHEME_INT_MIN;
        s.bits = q->bits;
        s.gran = (Granularity){q->per_channel ? GRAN_GROUP_TOKENS : GRAN_GROUP_CHANNELS, KV_KIVI_GROUP};
        return quantize_ref(&s, x, S, D, x, e);
    }
    if (q->kind == SIM_NUQ) {
        float *sorted = malloc(S * sizeof *sorted);
        if (!sorted)
            return error_runtime(e, "out of memory for a channel of %zu tokens", S);
        for (size_t c = 0; c < D; c++)
            nuq_channel(x, S, D, c, q->bits, q->sparse, sorted);
        free(sorted);
    }
    return 0;
}

/* The keys, values and query the BF16 kernel reads for a simulated format
 * at depth b: k, v (S, D), q (D). */
static int sim_prepare(const NiahFormat *f, const NiahGrid *g, const NiahTrial *tr, uint32_t b, float *k,
                       float *v, float *q, Error *e)
{
    const size_t S = tr->S, D = tr->D, plane = S * D;
    memcpy(k, (f->pre_rope ? tr->k_pre : tr->k_post) + b * plane, plane * sizeof *k);
    memcpy(v, tr->v + b * plane, plane * sizeof *v);
    memcpy(q, tr->q + (size_t)b * D, D * sizeof *q);
    if (f->hadamard && (hadamard_rows(k, S, D, e) || hadamard_rows(q, 1, D, e)))
        return -1;
    if (sim_quantize(&f->k, k, S, D, e) || sim_quantize(&f->v, v, S, D, e))
        return -1;
    return f->pre_rope ? rope(k, S, D, 0, g->hay.rope_theta, e) : 0;
}

/* ------------------------------------------------------------------------
 * One format on one trial: the cache written, one decode step, the
 * passkeys read back.
 */

/* The plugin's calls one at a time: the device is one, whatever the
 * threads preparing its caches. */
static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;

static int decode(const NiahBackend *be, const KvCache *c, const float *q, float *out, Error *e)
{
    if (!be->cuda)
        return kv_decode_cpu(c, q, out, be->threads, e);
    char err[ERROR_MSG_MAX];
    GpuCache *gc;
    pthread_mutex_lock(&gpu_lock);
    int rc = be->api->upload(c, &be->opts, &gc, err, sizeof err);
    if (!rc) {
        rc = be->api->decode(gc, q, out, err, sizeof err);
        be->api->release(gc);
    }
    pthread_mutex_unlock(&gpu_lock);
    return rc ? error_runtime(e, "%s", err) : 0;
}

typedef struct {
    float *k, *v, *q, *out;     // simulated formats' (S, D), (S, D), (D); out (D)
} Scratch;

/* Format f at depth b of a trial: its own cache of one sequence (the
 * tensor scales calibrated on that sequence, as a serving engine's would
 * be on its own data), one decode step, the passkey compared. */
static int run_format(const NiahFormat *f, const NiahGrid *g, const NiahBackend *be, const NiahTrial *tr,
                      uint32_t b, Scratch *s, uint8_t *ok, Error *e)
{
    const size_t plane = (size_t)tr->S * tr->D;
    const float *k = tr->k_post + b * plane, *v = tr->v + b * plane, *q = tr->q + (size_t)b * tr->D;
    if (f->simulated) {
        if (sim_prepare(f, g, tr, b, s->k, s->v, s->q, e))
            return -1;
        k = s->k, v = s->v, q = s->q;
    }
    KvShape shape = {f->kernel, 1, 1, 1, tr->D, (tr->S + KV_KIVI_GROUP - 1) / KV_KIVI_GROUP * KV_KIVI_GROUP,
                     g->hay.residual, false};
    KvCache c;
    if (kv_cache_init(&c, &shape, e))
        return -1;
    int rc = kv_append(&c, k, v, tr->S, e) || decode(be, &c, q, s->out, e) ? -1 : 0;
    kv_cache_done(&c);
    if (!rc) {
        uint8_t got[PASSKEY_DIGITS_MAX];
        passkey_decode(s->out, tr->D, g->hay.digits, got);
        *ok = !memcmp(got, tr->passkey[b], g->hay.digits);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * The grid
 */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t ok_index(const NiahGrid *g, size_t f, size_t l, size_t d, size_t t)
{
    return ((f * g->n_lengths + l) * g->n_depths + d) * g->trials + t;
}

void niah_result_free(NiahResult *r)
{
    free(r->ok), free(r->done);
    r->ok = NULL, r->done = NULL;
}

static bool any_simulated(const NiahGrid *g)
{
    for (size_t f = 0; f < g->n_formats; f++)
        if (g->formats[f]->simulated)
            return true;
    return false;
}

/* The formats and depths of one trial, run side by side (parallel_each),
 * each worker with a scratch of its own: item f x depths + d. */
typedef struct {
    const NiahGrid *g;
    const NiahBackend *be;
    const NiahTrial *tr;
    Scratch *scratch;           // one a worker
    uint8_t *ok;                // the result's outcomes
    size_t l;
    unsigned t;
} Trial;

static int trial_item(void *ctx, size_t i, int worker, Error *e)
{
    const Trial *j = ctx;
    const NiahGrid *g = j->g;
    const size_t f = i / g->n_depths, d = i % g->n_depths;
    if (run_format(g->formats[f], g, j->be, j->tr, (uint32_t)d, &j->scratch[worker],
                   j->ok + ok_index(g, f, j->l, d, j->t), e))
        return error_prefix(e, "%s at %u tokens", g->formats[f]->id, g->lengths[j->l]);
    return 0;
}

static void scratch_free(Scratch *s)
{
    free(s->k), free(s->v), free(s->q), free(s->out);
}

static int scratch_alloc(const NiahGrid *g, Scratch *s)
{
    const size_t D = niah_head_dim(g), most = (size_t)longest(g) * D;
    const bool sim = any_simulated(g);
    *s = (Scratch){sim ? malloc(most * sizeof(float)) : NULL, sim ? malloc(most * sizeof(float)) : NULL,
                   malloc(D * sizeof(float)), malloc(D * sizeof(float))};
    return !s->q || !s->out || (sim && (!s->k || !s->v)) ? -1 : 0;
}

int niah_run(const NiahGrid *g, const NiahBackend *be, NiahProgress progress, void *ctx,
             volatile sig_atomic_t *stop, NiahResult *r, Error *e)
{
    memset(r, 0, sizeof *r);
    if (niah_grid_check(g, e))
        return -1;
    r->g = *g;
    r->ok = calloc(g->n_formats * g->n_lengths * g->n_depths * g->trials, 1);
    r->done = calloc(g->n_lengths, sizeof *r->done);
    const int threads = be->threads;      // as parallel_each takes it: 0 or less, a thread a core
    int workers = parallel_threads(g->n_formats * g->n_depths, threads);
    if (workers > NIAH_WORKERS_MAX)
        workers = NIAH_WORKERS_MAX;
    /* the pairs share the cores: each decode step on one thread */
    NiahBackend one = *be;
    one.threads = 1;
    Scratch w[NIAH_WORKERS_MAX] = {0};
    NiahTrial tr = {0};
    int rc = 0;
    if (!r->ok || !r->done) {
        rc = error_runtime(e, "out of memory for the grid's outcomes");
        goto done;
    }
    if (trial_alloc(g, longest(g), &tr, e)) {      // one room for every trial
        rc = -1;
        goto done;
    }
    for (int i = 0; i < workers; i++)
        if (scratch_alloc(g, &w[i])) {
            rc = error_runtime(e, "out of memory for the grid's haystacks");
            goto done;
        }
    uint64_t work = 0, work_done = 0;           // tokens of the trials, all and run
    for (size_t l = 0; l < g->n_lengths; l++)
        work += (uint64_t)g->lengths[l] * g->trials;
    const double t0 = now_s();
    for (size_t l = 0; l < g->n_lengths && !r->partial; l++)
        for (unsigned t = 0; t < g->trials; t++) {
            if (stop && *stop) {
                r->partial = true;
                break;
            }
            Trial job = {g, &one, &tr, w, r->ok, l, t};
            rc = trial_fill(g, l, t, threads, &tr, e) ? -1
                                                       : parallel_each(g->n_formats * g->n_depths, workers, trial_item,
                                                                       &job, e);
            if (rc)
                goto done;
            r->done[l]++;
            work_done += g->lengths[l];
            r->seconds = now_s() - t0;
            if (progress && !progress(ctx, work_done, work, r->seconds)) {
                r->partial = work_done < work;
                break;
            }
        }
done:
    niah_trial_free(&tr);
    for (int i = 0; i < workers; i++)
        scratch_free(&w[i]);
    if (rc)
        niah_result_free(r);
    return rc;
}

/* ------------------------------------------------------------------------
 * Figures
 */

uint64_t niah_bootstrap_seed(const NiahGrid *g, size_t l, size_t d)
{
    return rand_seed_of(g->seed ^ 0xB0075ull, (uint64_t)l * NIAH_DEPTHS_MAX + d);
}

/* Fills c from paired outcomes x (format) and y (bf16) over strata laid
 * end to end. */
static int figures(const uint8_t *x, const uint8_t *y, const size_t *strata, size_t n_strata, bool baseline,
                   uint64_t seed, NiahCell *c, Error *e)
{
    size_t n = 0;
    for (size_t s = 0; s < n_strata; s++)
        n += strata[s];
    memset(c, 0, sizeof *c);
    c->trials = (unsigned)n;
    for (size_t i = 0; i < n; i++)
        c->hits += x[i];
    if (!n) {
        c->accuracy = c->ci_low = c->ci_high = c->diff_low = c->diff_high = NAN;
        return 0;
    }
    c->accuracy = (double)c->hits / (double)n;
    stats_wilson(c->hits, c->trials, STATS_Z95, &c->ci_low, &c->ci_high);
    if (baseline)
        return 0;                       // its difference to itself: 0, 0
    if (stats_paired_bootstrap(x, y, strata, n_strata, STATS_RESAMPLES, seed, &c->diff_low, &c->diff_high))
        return error_runtime(e, "out of memory for the bootstrap");
    return 0;
}

int niah_cell(const NiahResult *r, size_t f, size_t l, size_t d, NiahCell *c, Error *e)
{
    const NiahGrid *g = &r->g;
    size_t n = r->done[l];
    return figures(r->ok + ok_index(g, f, l, d, 0), r->ok + ok_index(g, 0, l, d, 0), &n, 1, f == 0,
                   niah_bootstrap_seed(g, l, d), c, e);
}

int niah_format_summary(const NiahResult *r, size_t f, double tolerance, NiahCell *c, int *verdict, Error *e)
{
    const NiahGrid *g = &r->g;
    const size_t cells = g->n_lengths * g->n_depths;
    uint8_t *x = malloc(cells * g->trials), *y = malloc(cells * g->trials);
    size_t *strata = malloc(cells * sizeof *strata), n = 0, k = 0;
    if (!x || !y || !strata) {
        free(x), free(y), free(strata);
        return error_runtime(e, "out of memory for the bootstrap");
    }
    for (size_t l = 0; l < g->n_lengths; l++)
        for (size_t d = 0; d < g->n_depths; d++) {
            memcpy(x + n, r->ok + ok_index(g, f, l, d, 0), r->done[l]);
            memcpy(y + n, r->ok + ok_index(g, 0, l, d, 0), r->done[l]);
            n += r->done[l];
            strata[k++] = r->done[l];
        }
    int rc = figures(x, y, strata, k, f == 0, niah_bootstrap_seed(g, g->n_lengths, 0), c, e);
    *verdict = f == 0 ? VERDICT_BASELINE : c->trials ? (int)stats_verdict(c->diff_high, tolerance) : -1;
    free(x), free(y), free(strata);
    return rc;
}
