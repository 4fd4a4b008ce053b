/* budget.c - see budget.h. */
#include "budget.h"

#include "units.h"

#include <stdio.h>
#include <string.h>

#define MS_PER_S 1000
/* The longest context crossover looks at: past any model's, and far from
 * overflowing the footprint. */
#define CROSSOVER_CONTEXT_MAX ((uint64_t)1 << 50)

void workload_init(Workload *w, const Shape *s, uint64_t context, uint64_t batch)
{
    memset(w, 0, sizeof *w);
    w->shape = *s;
    w->tp = 1;
    w->context = context;
    w->batch = batch;
    w->block_tokens = PAGED_BLOCK_DEFAULT;
}

static bool shape_same(const Shape *a, const Shape *b)
{
    if (a->layers != b->layers || a->q_heads != b->q_heads || a->kv_heads != b->kv_heads ||
        a->head_dim != b->head_dim || a->window != b->window || a->period != b->period)
        return false;
    for (unsigned i = 0; i < a->period && i < MODEL_PATTERN_MAX; i++)
        if (a->pattern[i] != b->pattern[i])
            return false;
    return true;
}

static bool kv_same(const KvOptions *a, const KvOptions *b)
{
    if (a->residual != b->residual || a->head_scales != b->head_scales || a->bf16_sliding != b->bf16_sliding ||
        a->n_bf16_layers != b->n_bf16_layers)
        return false;
    for (size_t i = 0; i < a->n_bf16_layers && i < KV_OVERRIDES_MAX; i++)
        if (a->bf16_layers[i] != b->bf16_layers[i])
            return false;
    return true;
}

/* A field added to Workload, Shape or KvOptions changes these sizes (on
 * the 64-bit machines kvlab is built for): compare it below, then update
 * them. */
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(Workload) == 2288 && sizeof(Shape) == 112 && sizeof(KvOptions) == 2072,
               "a workload's fields changed: compare every one in workload_changes");
#endif

unsigned workload_changes(const Workload *a, const Workload *b)
{
    const struct {
        bool differ;
        WorkloadInput input;
    } FIELDS[] = {
        {a->mha != b->mha || a->tp != b->tp || !shape_same(&a->shape, &b->shape) || !kv_same(&a->kv, &b->kv),
         WL_CACHE},
        {a->context != b->context, WL_CONTEXT},
        {a->batch != b->batch, WL_BATCH},
        {a->pool != b->pool, WL_POOL},
        {a->weights != b->weights, WL_WEIGHTS},
        {a->bandwidth != b->bandwidth, WL_BANDWIDTH},
        {a->block_tokens != b->block_tokens, WL_BLOCK},
    };
    unsigned changed = 0;
    for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; i++)
        if (FIELDS[i].differ)
            changed |= FIELDS[i].input;
    return changed;
}

bool workload_mixed(const Workload *w)
{
    return w->kv.residual || w->kv.n_bf16_layers || (w->kv.bf16_sliding && shape_layers_of_kind(&w->shape, ATTN_SLIDING));
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
        if (u128_add_ok(extra, (w->weights + t - 1) / t, &need) && need <= limit &&
            shape_split_tp(&full, t, &split, &replicas, NULL) == 0)
            return t;
    }
    return 0;
}

int workload_pool_from_gpu(Workload *w, u128 memory, Q utilization, u128 reserve, Error *e)
{
    Checked c = {0};
    uint64_t tp = w->tp ? w->tp : 1;
    u128 usable = checked_mul(&c, memory, utilization.num) / utilization.den;
    u128 taken = checked_add(&c, (w->weights + tp - 1) / tp, reserve);
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
    if (!f->room && (f->tp_weights = least_tp(w, 1, memory)))
        f->tp_weights_room = memory - (w->weights + f->tp_weights - 1) / f->tp_weights;
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
    Footprint fp;
    uint64_t lo = 0, hi = 1;
    u128 prev = 0;
    for (;;) {
        if (footprint(s, f, o, hi, batch, &fp, NULL) != 0 || fp.bytes >= weights)
            break;               // an overflow is far beyond the weights
        if (hi > 1 && fp.bytes == prev)
            return 0;            // stopped growing: every layer is windowed
        if (hi >= CROSSOVER_CONTEXT_MAX)
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

static u128 step_bytes(Checked *c, u128 weights, const Footprint *fp)
{
    return checked_add(c, checked_add(c, weights, fp->bytes), fp->tensor_scale_bytes);
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

    Checked c = {0};
    if (w->pool) {
        uint64_t block = w->block_tokens ? w->block_tokens : PAGED_BLOCK_DEFAULT;
        uint64_t blocks = w->context / block + (w->context % block != 0);
        u128 paged_tokens = checked_mul(&c, blocks, block);
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
        r->step_ms = q_make(checked_mul(&c, r->bytes_read, MS_PER_S), w->bandwidth);
        r->speedup = q_make(base_read, r->bytes_read);
    }
    if (c.overflow)
        return error_set(e, "overflow: bytes read per step do not fit in 128 bits");
    return 0;
}
