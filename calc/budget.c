/* budget.c - see budget.h. */
#include "budget.h"

#include "units.h"

#include <stdio.h>
#include <string.h>

void workload_init(Workload *w, const Shape *s, uint64_t context, uint64_t batch)
{
    memset(w, 0, sizeof *w);
    w->shape = *s;
    w->tp = 1;
    w->context = context;
    w->batch = batch;
    w->block_tokens = PAGED_BLOCK_DEFAULT;
}

/* The least tensor-parallel degree, tp times a power of two up to
 * TP_FIT_MAX, that splits the model and at which `need` (extra bytes plus
 * the weights on one GPU) is at most `limit`; 0 if there is none. */
static uint64_t least_tp(const Workload *w, u128 extra, u128 limit)
{
    Shape full = w->mha ? shape_as_mha(&w->shape) : w->shape, split;
    uint64_t replicas;
    for (uint64_t t = w->tp ? w->tp : 1; t <= TP_FIT_MAX; t *= 2) {
        u128 need;
        if (ck_add(extra, (w->weights + t - 1) / t, &need) && need <= limit &&
            shape_split_tp(&full, t, &split, &replicas, NULL) == 0)
            return t;
    }
    return 0;
}

int workload_pool_from_gpu(Workload *w, u128 memory, Q utilization, u128 reserve, Error *e)
{
    Ck c = {0};
    uint64_t tp = w->tp ? w->tp : 1;
    u128 usable = ck_m(&c, memory, utilization.num) / utilization.den;
    u128 taken = ck_a(&c, (w->weights + tp - 1) / tp, reserve);
    if (c.overflow)
        return error_set(e, "overflow in the GPU memory budget");
    if (taken >= usable) {
        char a[48], b[48], r[64] = "", fix[96];
        if (reserve)
            snprintf(r, sizeof r, " and the reserve (%s)", units_gb(b, sizeof b, reserve, 2));
        uint64_t t = usable > reserve ? least_tp(w, reserve + 1, usable) : 0;
        if (t)
            snprintf(fix, sizeof fix, "tensor parallelism over %llu GPUs or a GPU with more memory",
                     (unsigned long long)t);
        else
            snprintf(fix, sizeof fix, "a GPU with more memory");
        return error_set(e, "the weights (%s%s)%s take all of the GPU's usable %s; nothing is "
                            "left for the KV cache: %s would leave room",
                         units_gb(a, sizeof a, (w->weights + tp - 1) / tp, 2),
                         tp > 1 ? " per GPU" : "", r, units_gb(b, sizeof b, usable, 2), fix);
    }
    w->pool = usable - taken;
    return 0;
}

void budget_gpu_fit(const Workload *w, u128 memory, GpuFit *f)
{
    uint64_t tp = w->tp ? w->tp : 1;
    memset(f, 0, sizeof *f);
    f->memory = memory;
    f->pool = w->pool;
    f->weights = (w->weights + tp - 1) / tp;
    f->room = f->weights < memory ? memory - f->weights : 0;
    f->pool_exceeds = w->pool > f->room;
    if (f->pool_exceeds) {
        f->excess = w->pool + f->weights - memory;
        f->tp_fit = least_tp(w, w->pool, memory);
    }
}

/* The per-GPU shape and weights of a workload. */
static int per_gpu(const Workload *w, Shape *s, uint64_t *replicas, u128 *weights, Error *e)
{
    Shape full = w->mha ? shape_as_mha(&w->shape) : w->shape;
    uint64_t tp = w->tp ? w->tp : 1;
    if (shape_split_tp(&full, tp, s, replicas, e))
        return -1;
    *weights = (w->weights + tp - 1) / tp;
    return 0;
}

/* First context at which the KV cache of `batch` sequences holds at least
 * `weights` bytes, by doubling then bisection (bytes grow with S); 0 when it
 * never does, because sliding windows cap the cache. */
static uint64_t crossover(const Shape *s, const Format *f, const KvOptions *o, uint64_t batch,
                          u128 weights)
{
    const uint64_t limit = (uint64_t)1 << 50;
    Footprint fp;
    uint64_t lo = 0, hi = 1;
    u128 prev = 0;
    for (;;) {
        if (footprint(s, f, o, hi, batch, &fp, NULL) != 0 || fp.bytes >= weights)
            break;               // an overflow is far beyond the weights
        if (hi > 1 && fp.bytes == prev)
            return 0;            // stopped growing: every layer is windowed
        if (hi >= limit)
            return 0;
        prev = fp.bytes;
        lo = hi;
        hi *= 2;
    }
    while (hi - lo > 1) {        // invariant: bytes(lo) < weights <= bytes(hi)
        uint64_t mid = lo + (hi - lo) / 2;
        if (footprint(s, f, o, mid, batch, &fp, NULL) != 0 || fp.bytes >= weights)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

static u128 step_bytes(Ck *c, u128 weights, const Footprint *fp)
{
    return ck_a(c, ck_a(c, weights, fp->bytes), fp->tensor_scale_bytes);
}

int budget_compute(const Workload *w, const Format *f, FormatResult *r, Error *e)
{
    memset(r, 0, sizeof *r);
    r->format = f;
    if (per_gpu(w, &r->shape, &r->kv_replicas, &r->weights, e))
        return -1;
    if (footprint(&r->shape, f, &w->kv, w->context, w->batch, &r->fp, e))
        return -1;
    r->bytes_per_element = format_bytes_per_element(f, (unsigned)r->shape.head_dim);

    Ck c = {0};
    if (w->pool) {
        uint64_t block = w->block_tokens ? w->block_tokens : PAGED_BLOCK_DEFAULT;
        uint64_t blocks = w->context / block + (w->context % block != 0);
        u128 paged_tokens = ck_m(&c, blocks, block);
        Footprint pf;
        if (c.overflow || paged_tokens > UINT64_MAX ||
            footprint(&r->shape, f, &w->kv, (uint64_t)paged_tokens, 1, &pf, e))
            return error_set(e, "overflow: context %llu rounded up to whole blocks of %llu tokens",
                             (unsigned long long)w->context, (unsigned long long)block);
        r->has_slots = true;
        r->slots = w->pool / r->fp.bytes_per_sequence;
        r->paged_bytes_per_sequence = pf.bytes_per_sequence;
        r->paged_slots = w->pool / pf.bytes_per_sequence;
    }
    if (w->weights) {
        r->has_crossover = true;
        r->crossover_context = crossover(&r->shape, f, &w->kv, w->batch, r->weights);
    }
    if (w->weights && w->bandwidth) {
        Footprint base;
        if (footprint(&r->shape, format_bf16(), &w->kv, w->context, w->batch, &base, e))
            return -1;
        r->has_step = true;
        r->bytes_read = step_bytes(&c, r->weights, &r->fp);
        u128 base_read = step_bytes(&c, r->weights, &base);
        r->step_ms = q_make(ck_m(&c, r->bytes_read, 1000), w->bandwidth);
        r->speedup = q_make(base_read, r->bytes_read);
    }
    if (c.overflow)
        return error_set(e, "overflow: bytes read per step do not fit in 128 bits");
    return 0;
}
