/* kv_bench.c - see kv_bench.h. */
#include "kv_bench.h"

#include "footprint.h"
#include "format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Bytes one decode step reads: K and V of every token with their metadata,
 * and the tensor scales; the int4 residual window in BF16. */
static u128 step_bytes(const BenchSetup *b, KvFormat f, uint32_t B, uint64_t S)
{
    Shape one = b->shape;
    one.layers = 1;
    KvOptions o = {0};
    if (f == KV_INT4)
        o.residual = S - kv_kivi_quantized(b->residual, (uint32_t)S);
    Footprint fp;
    if (footprint(&one, format_by_id(kv_format_id(f)), &o, S, B, &fp, NULL))
        return 0;
    return fp.bytes + fp.tensor_scale_bytes;
}

/* Up to `want` device caches of shape ks, `len` random tokens each, seeds
 * from seed0: fewer where memory is short, at least one. */
static int fill_copies(const BenchSetup *b, const KvShape *ks, uint32_t len, int want, uint64_t seed0,
                       GpuCache **c, int *made, Error *e)
{
    char err[ERROR_MSG_MAX];
    for (*made = 0; *made < want; (*made)++)
        if (b->api->fill(ks, &b->cuda_opts, len, seed0 + (uint64_t)*made, &c[*made], err, sizeof err)) {
            if (*made)
                break;                      // fewer copies when memory is short
            return error_set(e, "%s", err);
        }
    return 0;
}

/* The median of `iters` CUDA-timed steps, rotating over enough copies of
 * the cache that together they are four times the L2 (at most eight). */
static int time_cuda(const BenchSetup *b, const KvShape *ks, uint32_t len, u128 bytes, double *ms, Error *e)
{
    GpuCache *c[8];
    int made;
    if (fill_copies(b, ks, len, kv_l2_copies(b->info.l2_bytes, (size_t)bytes, 1, 8), 1000, c, &made, e))
        return -1;
    char err[ERROR_MSG_MAX];
    int rc = b->api->time_decode(c, made, b->iters, ms, err, sizeof err);
    for (int i = 0; i < made; i++)
        b->api->release(c[i]);
    return rc ? error_set(e, "%s", err) : 0;
}

/* The median wall-clock time of `iters` steps of the CPU reference. */
static int time_cpu(const BenchSetup *b, const KvShape *ks, uint32_t len, double *ms, Error *e)
{
    KvCache c;
    if (kv_cache_init(&c, ks, e))
        return -1;
    size_t nq = (size_t)ks->batch * ks->q_heads * ks->head_dim;
    float *q = malloc(nq * sizeof *q), *out = malloc(nq * sizeof *out);
    double *t = calloc((size_t)b->iters, sizeof *t);
    int rc = -1;
    if (!q || !out || !t) {
        error_runtime(e, "out of host memory for the query and output");
        goto done;
    }
    if (kv_fill_random(&c, len, 1000, e))
        goto done;
    for (size_t i = 0; i < nq; i++)
        q[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
    rc = 0;
    for (int i = 0; i < b->iters && !rc; i++) {
        double t0 = now_ms();
        rc = kv_decode_cpu(&c, q, out, 0, e);
        t[i] = now_ms() - t0;
    }
    for (int i = 1; i < b->iters; i++)              // insertion sort: a few runs
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    *ms = t[b->iters / 2];
done:
    free(q), free(out), free(t);
    kv_cache_done(&c);
    return rc;
}

static KvShape kv_shape(const BenchSetup *b, KvFormat f, uint32_t B, uint64_t S)
{
    KvShape ks = {f, B, (uint32_t)b->shape.kv_heads, (uint32_t)b->shape.q_heads,
                  (uint32_t)b->shape.head_dim, 0, b->residual, false};
    ks.capacity = (uint32_t)((S + 31) / 32 * 32);
    return ks;
}

const char *bench_fp8_kernel(const BenchSetup *b)
{
    KvShape ks = kv_shape(b, KV_FP8, 1, 32);
    return b->cuda ? b->api->fp8_kernel(&ks, &b->cuda_opts) : "";
}

int bench_point(BenchSetup *b, KvFormat f, uint32_t B, uint64_t S, BenchRow *row, Error *e)
{
    KvShape ks = kv_shape(b, f, B, S);
    row->format = f;
    row->batch = B;
    row->context = S;
    row->kv_bytes = step_bytes(b, f, B, S);
    double bytes = q_to_double(q_make(row->kv_bytes, 1)), t0 = now_ms();
    if (b->cuda ? time_cuda(b, &ks, (uint32_t)S, row->kv_bytes, &row->ms, e)
                : time_cpu(b, &ks, (uint32_t)S, &row->ms, e))
        return -1;
    char err[ERROR_MSG_MAX];
    row->read_ms = 0;
    if (b->cuda && b->read_floor && b->api->time_read((size_t)row->kv_bytes, &row->read_ms, err, sizeof err))
        return error_set(e, "%s", err);
    row->gbps = bytes / (row->ms * 1e-3) / 1e9;
    row->wall_s = (now_ms() - t0) * 1e-3;
    return 0;
}

/* Least-squares sums for a line a + b x through points added one by one. */
typedef struct {
    double n, sx, sy, sxx, sxy;
} LineFit;

static void fit_add(LineFit *f, double x, double y)
{
    f->n++, f->sx += x, f->sy += y, f->sxx += x * x, f->sxy += x * y;
}

/* The least-squares line a + b x; false where the xs do not spread (fewer
 * than two distinct), which leaves a line undetermined. */
static bool fit_line(const LineFit *f, double *a, double *b)
{
    double den = f->n * f->sxx - f->sx * f->sx;
    if (!(f->n >= 2 && den > 1e-9 * f->n * f->sxx))
        return false;
    *b = (f->n * f->sxy - f->sx * f->sy) / den;
    *a = (f->sy - *b * f->sx) / f->n;
    return true;
}

double bench_seconds_left(const BenchRow *rows, size_t n, const uint64_t *contexts, size_t n_left)
{
    if (!n)
        return -1;
    LineFit f = {0};
    for (size_t i = 0; i < n; i++)
        fit_add(&f, (double)rows[i].context, rows[i].wall_s);
    double a = 0, b = f.sxy / f.sxx, al, bl;       // through the origin, unless the line holds
    if (fit_line(&f, &al, &bl) && al >= 0 && bl >= 0)
        a = al, b = bl;
    double left = 0;
    for (size_t i = 0; i < n_left; i++)
        left += a + b * (double)contexts[i];
    return left;
}

/* ms per context token for one format and batch, least squares. */
double bench_slope(const BenchRow *rows, size_t n, KvFormat f, uint32_t B, BenchTime what)
{
    LineFit fit = {0};
    for (size_t i = 0; i < n; i++)
        if (rows[i].format == f && rows[i].batch == B)
            fit_add(&fit, (double)rows[i].context,
                    what == BENCH_STEP_GRAPH      ? rows[i].step_ms
                    : what == BENCH_STEP_LAUNCHED ? rows[i].step_launched_ms
                                                  : rows[i].ms);
    double a, b;
    return fit_line(&fit, &a, &b) ? b : NAN;
}

int bench_backend_check(const char *backend, Error *e)
{
    if (strcmp(backend, "auto") && strcmp(backend, "cuda") && strcmp(backend, "cpu"))
        return error_set(e, "expected auto, cuda or cpu, not '%s'", backend);
    return 0;
}

int bench_open(BenchSetup *b, const char *backend, Error *e)
{
    if (bench_backend_check(backend, e))
        return -1;
    b->cuda = false;
    b->cuda_opts = gpu_options_from_env();
    if (strcmp(backend, "cpu") != 0) {
        Error why;
        b->api = gpu_open(&why);
        char err[ERROR_MSG_MAX];
        if (b->api && b->api->info(&b->info, err, sizeof err) == 0) {
            b->cuda = true;
        } else {
            snprintf(b->why_cpu, sizeof b->why_cpu, "%s", b->api ? err : why.msg);
            if (!strcmp(backend, "cuda"))
                return error_set(e, "%s", b->why_cpu);
        }
    } else {
        snprintf(b->why_cpu, sizeof b->why_cpu, "the CPU reference was asked for");
    }
    if (b->cuda) {
        char err[ERROR_MSG_MAX];
        if (b->api->copy_bandwidth((size_t)2 << 30, &b->copy_gbps, err, sizeof err))
            return error_set(e, "%s", err);
    }
    return 0;
}

int bench_steps_here(const BenchSetup *b, Error *e)
{
    return b->cuda ? 0 : error_set(e, "the model's step is measured on the GPU: %s", b->why_cpu);
}

int bench_step(BenchSetup *b, u128 weight_bytes, BenchRow *row, Error *e)
{
    if (bench_steps_here(b, e))
        return -1;
    if (b->shape.layers < 1 || b->shape.layers > BENCH_LAYERS_MAX)
        return error_set(e, "a model of %llu layers: from 1 to %d", (unsigned long long)b->shape.layers,
                         BENCH_LAYERS_MAX);
    const double t0 = now_ms();
    /* one cache a layer, or as many distinct ones as memory holds, enough
     * that the L2 cannot carry a layer's into the next; at least one */
    GpuCache *c[BENCH_LAYERS_MAX];
    int made;
    KvShape ks = kv_shape(b, row->format, row->batch, row->context);
    if (fill_copies(b, &ks, (uint32_t)row->context,
                    kv_l2_copies(b->info.l2_bytes, (size_t)row->kv_bytes, 2, (int)b->shape.layers), 2000, c, &made, e))
        return -1;
    char err[ERROR_MSG_MAX];
    int rc = b->api->time_step(c, made, (int)b->shape.layers, (size_t)weight_bytes, b->iters, &row->step_ms,
                               &row->step_launched_ms, err, sizeof err);
    for (int k = 0; k < made; k++)
        b->api->release(c[k]);
    row->wall_s += (now_ms() - t0) * 1e-3;
    return rc ? error_set(e, "%s", err) : 0;
}

int bench_steps(BenchSetup *b, u128 weight_bytes, BenchRow *rows, size_t n, Error *e)
{
    if (bench_steps_here(b, e))
        return -1;
    char err[ERROR_MSG_MAX];
    if (b->api->time_read((size_t)weight_bytes, &b->weights_ms, err, sizeof err))
        return error_set(e, "%s", err);
    for (size_t i = 0; i < n; i++)
        if (bench_step(b, weight_bytes, &rows[i], e))
            return -1;
    return 0;
}
