/* scenario.c - scenario files, the metric table and figure checking. */
#include "scenario.h"

#include "catalog.h"
#include "jsonfile.h"
#include "units.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Metrics
 *
 * Each metric evaluates one format on one workload. `r` is the format's
 * result and `b` BF16's on the same workload, both already computed.
 */

typedef struct {
    const Workload *w;
    const FormatResult *r, *b;
} MetricInput;

struct Metric {
    const char *id;
    const char *unit;
    int needs;                  // NEED_* bits: what the workload must know
    unsigned reads;             // WorkloadInput bits (budget.h) the value depends on,
                                // and READS_MIXED_CONTEXT
    const char *help;
    int (*eval)(const MetricInput *in, FigureResult *out, Error *e);
};

enum { NEED_POOL = 1, NEED_STEP = 2, NEED_WEIGHTS = 4 };

/* What a metric reads, beyond the cache's make-up: the one sequence's
 * cache, all of them, the step floor (whose ratios to BF16's do not read
 * the bandwidth), the pool. */
enum {
    READS_MIXED_CONTEXT = 1u << 16,     // the context, where the cache is mixed
                                        // (workload_mixed): a ratio of two formats' sizes
    SEQ = WL_CACHE | WL_CONTEXT,
    ALL = SEQ | WL_BATCH,
    FLOOR = ALL | WL_WEIGHTS,
    SLOTS = SEQ | WL_POOL,
};

static int m_elements(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->fp.elements, 1);
    return 0;
}
static int m_bytes(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->fp.bytes, 1);
    return 0;
}
static int m_bytes_seq(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->fp.bytes_per_sequence, 1);
    return 0;
}
static int m_gib(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->fp.bytes, GIB);
    return 0;
}
static int m_gb(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->fp.bytes, GB);
    return 0;
}
static int m_gib_seq(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->fp.bytes_per_sequence, GIB);
    return 0;
}
static int m_gb_seq(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->fp.bytes_per_sequence, GB);
    return 0;
}
static int m_slots(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->slots, 1);
    return 0;
}
static int m_paged_slots(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->paged_slots, 1);
    return 0;
}
static int m_step_ms(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = in->r->step_ms;
    return 0;
}
static int m_speedup(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = in->r->speedup;
    return 0;
}
static int m_read_drop(const MetricInput *in, FigureResult *o, Error *e)
{
    u128 base = in->b->bytes_read, read = in->r->bytes_read;
    if (read > base)
        return error_set(e, "this format reads more bytes than BF16; there is no drop");
    o->value = q_make((base - read) * 100, base);
    return 0;
}
static int m_capacity_ratio(const MetricInput *in, FigureResult *o, Error *e)
{
    if (!in->b->slots)
        return error_set(e, "BF16 has no slots in this pool; no ratio");
    o->value = q_make(in->r->slots, in->b->slots);
    return 0;
}
static int m_compression(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->b->fp.bytes, in->r->fp.bytes);
    return 0;
}
static int m_saved_gib(const MetricInput *in, FigureResult *o, Error *e)
{
    if (in->r->fp.bytes > in->b->fp.bytes)
        return error_set(e, "this format is larger than BF16; nothing is saved");
    o->value = q_make(in->b->fp.bytes - in->r->fp.bytes, GIB);
    return 0;
}
static int m_tensor_scales(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->fp.tensor_scale_bytes, 1);
    return 0;
}
static int m_bytes_per_element(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = in->r->bytes_per_element;
    return 0;
}
/* GiB the same workload would need more as multi-head attention. */
static int m_gqa_saved(const MetricInput *in, FigureResult *o, Error *e)
{
    Workload mha = *in->w;
    mha.mha = true;
    FormatResult r;
    if (budget_compute(&mha, in->r->format, &r, e))
        return -1;
    o->value = q_make(r.fp.bytes - in->r->fp.bytes, GIB);
    return 0;
}
static int m_crossover(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->r->crossover_context, 1);
    o->never = in->r->crossover_context == 0;
    return 0;
}

/* Tokens per second at full capacity, relative to BF16 at its own full
 * capacity: (slots_f / step_f) / (slots_bf16 / step_bf16), each step taken
 * at its own batch. The seeds' "same step time, twice the sequences". */
static int m_throughput_ratio(const MetricInput *in, FigureResult *o, Error *e)
{
    if (!in->r->slots || !in->b->slots)
        return error_set(e, "a format has no slots in this pool; no throughput");
    Workload wf = *in->w, wb = *in->w;
    wf.batch = (uint64_t)in->r->slots;
    wb.batch = (uint64_t)in->b->slots;
    FormatResult rf, rb;
    if (budget_compute(&wf, in->r->format, &rf, e) || budget_compute(&wb, format_bf16(), &rb, e))
        return -1;
    Checked c = {0};
    u128 num = checked_mul(&c, in->r->slots, rb.bytes_read);
    u128 den = checked_mul(&c, in->b->slots, rf.bytes_read);
    if (c.overflow)
        return error_set(e, "overflow in the throughput ratio");
    o->value = q_make(num, den);
    return 0;
}

/* One token of one sequence over every layer, K and V: the sequence's
 * cache over its context (metadata included, a BF16 residual averaged in). */
static int m_bytes_token(const MetricInput *in, FigureResult *o, Error *e)
{
    if (!in->w->context)
        return error_set(e, "a context of 0 tokens has no bytes per token");
    o->value = q_make(in->r->fp.bytes_per_sequence, in->w->context);
    return 0;
}
static int m_elements_token(const MetricInput *in, FigureResult *o, Error *e)
{
    u128 seqs = (u128)in->w->batch * in->w->context;
    if (!seqs)
        return error_set(e, "an empty cache has no elements per token");
    o->value = q_make(in->r->fp.elements, seqs);
    return 0;
}
static int m_weights_gib(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->w->weights, GIB);
    return 0;
}
static int m_pool_gib(const MetricInput *in, FigureResult *o, Error *e)
{
    (void)e;
    o->value = q_make(in->w->pool, GIB);
    return 0;
}

static const Metric METRICS[] = {
    {"elements", "", 0, ALL, "K and V elements in the cache", m_elements},
    {"bytes", "B", 0, ALL, "bytes of the cache, metadata included", m_bytes},
    {"bytes_per_sequence", "B", 0, SEQ, "bytes of one sequence's cache", m_bytes_seq},
    {"gib", "GiB", 0, ALL, "the cache in GiB (2^30 bytes)", m_gib},
    {"gb", "GB", 0, ALL, "the cache in GB (10^9 bytes)", m_gb},
    {"gib_per_sequence", "GiB", 0, SEQ, "one sequence's cache in GiB", m_gib_seq},
    {"gb_per_sequence", "GB", 0, SEQ, "one sequence's cache in GB", m_gb_seq},
    {"slots", "", NEED_POOL, SLOTS, "whole sequences the pool holds", m_slots},
    {"paged_slots", "", NEED_POOL, SLOTS | WL_BLOCK, "sequences the pool holds in whole paged blocks",
     m_paged_slots},
    {"step_ms", "ms", NEED_STEP, FLOOR | WL_BANDWIDTH, "decode-step floor: (weights + KV) / bandwidth",
     m_step_ms},
    {"speedup", "x", NEED_STEP, FLOOR, "BF16 step floor / this format's", m_speedup},
    {"read_drop", "%", NEED_STEP, FLOOR, "fewer bytes read per step than BF16", m_read_drop},
    {"capacity_ratio", "x", NEED_POOL, SLOTS, "slots / BF16 slots", m_capacity_ratio},
    {"throughput_ratio", "x", NEED_POOL | NEED_STEP, SLOTS | WL_WEIGHTS,
     "tokens/s at full capacity / BF16's at full capacity", m_throughput_ratio},
    {"compression", "x", 0, WL_CACHE | READS_MIXED_CONTEXT, "BF16 bytes / this format's bytes", m_compression},
    {"saved_gib", "GiB", 0, ALL, "GiB saved against BF16", m_saved_gib},
    {"gqa_saved_gib", "GiB", 0, ALL, "GiB the same model would need more as MHA", m_gqa_saved},
    {"tensor_scale_bytes", "B", 0, WL_CACHE, "per-tensor scale bytes, once per cache", m_tensor_scales},
    {"bytes_per_element", "B", 0, WL_CACHE, "bytes per element, metadata included", m_bytes_per_element},
    {"crossover_context", "tokens", NEED_WEIGHTS, WL_CACHE | WL_BATCH | WL_WEIGHTS,
     "first context at which the KV cache outweighs the weights", m_crossover},
    {"bytes_per_token", "B", 0, SEQ, "bytes of one token of one sequence, all layers, K and V", m_bytes_token},
    {"elements_per_token", "", 0, WL_CACHE, "K and V elements of one token of one sequence, all layers",
     m_elements_token},
    {"weights_gib", "GiB", NEED_WEIGHTS, WL_WEIGHTS, "the model's weights in GiB", m_weights_gib},
    {"pool_gib", "GiB", NEED_POOL, WL_POOL, "the pool for the KV cache in GiB", m_pool_gib},
};

#define N_METRICS (sizeof METRICS / sizeof METRICS[0])

size_t metric_count(void)
{
    return N_METRICS;
}
const Metric *metric_at(size_t i)
{
    return i < N_METRICS ? &METRICS[i] : NULL;
}
const Metric *metric_by_id(const char *id)
{
    for (size_t i = 0; i < N_METRICS; i++)
        if (strcmp(METRICS[i].id, id) == 0)
            return &METRICS[i];
    return NULL;
}
const char *metric_id(const Metric *m)
{
    return m->id;
}
const char *metric_unit(const Metric *m)
{
    return m->unit;
}
const char *metric_help(const Metric *m)
{
    return m->help;
}
unsigned metric_reads(const Metric *m)
{
    return m->reads;
}

/* ------------------------------------------------------------------------
 * Loading
 */

static const char *const SCENARIO_FIELDS[] = {
    "name", "title", "source", "story", "note", "model", "gpu", "memory", "context", "batch", "pool",
    "weights", "bandwidth", "utilization", "reserve", "mha", "tp", "residual", "head_scales",
    "bf16_sliding", "bf16_layers", "block_tokens", "formats", "figures", "predict", NULL,
};

static const char *const FIGURE_FIELDS[] = {
    "label", "format", "metric", "batch", "context", "weights", "mha", "seed", "seed_error", NULL,
};

static int load_format(const JsonDoc *d, const cJSON *v, const Format **out, Error *e)
{
    if (!cJSON_IsString(v) || !(*out = format_by_id(v->valuestring))) {
        char list[256];
        return jsondoc_error(d, v, e, "unknown format; expected one of %s",
                             format_id_list(list, sizeof list));
    }
    return 0;
}

static int load_formats(const JsonDoc *d, const cJSON *r, Scenario *sc, Error *e)
{
    const cJSON *arr;
    int n;
    int rc = json_array(d, r, "formats", FIELD_OPTIONAL, &arr, &n, e);
    if (rc < 0)
        return -1;
    if (rc == 1) {              // all of them
        for (size_t i = 0; i < format_count() && i < SCENARIO_FORMATS_MAX; i++)
            sc->formats[sc->n_formats++] = format_at(i);
        return 0;
    }
    if (n < 1 || n > SCENARIO_FORMATS_MAX)
        return jsondoc_error(d, arr, e, "field 'formats': expected 1 to %d formats",
                             SCENARIO_FORMATS_MAX);
    for (const cJSON *c = arr->child; c; c = c->next)
        if (load_format(d, c, &sc->formats[sc->n_formats++], e))
            return -1;
    return 0;
}

static int load_layers(const JsonDoc *d, const cJSON *r, Scenario *sc, Error *e)
{
    const cJSON *arr;
    int n;
    int rc = json_array(d, r, "bf16_layers", FIELD_OPTIONAL, &arr, &n, e);
    if (rc)
        return rc < 0 ? -1 : 0;
    if (n > KV_OVERRIDES_MAX)
        return jsondoc_error(d, arr, e, "field 'bf16_layers': at most %d layers", KV_OVERRIDES_MAX);
    KvOptions *o = &sc->w.kv;
    for (const cJSON *c = arr->child; c; c = c->next) {
        uint64_t x;
        if (!json_number_whole(d, c, 0, sc->model.shape.layers - 1, &x))
            return jsondoc_error(d, c, e, "field 'bf16_layers': expected layer numbers from 0 to %llu",
                                 (unsigned long long)(sc->model.shape.layers - 1));
        for (size_t i = 0; i < o->n_bf16_layers; i++)
            if (o->bf16_layers[i] == x)
                return jsondoc_error(d, c, e, "field 'bf16_layers': layer %llu is listed twice",
                                     (unsigned long long)x);
        o->bf16_layers[o->n_bf16_layers++] = x;
    }
    return 0;
}

static int load_figure(const JsonDoc *d, const cJSON *c, Scenario *sc, Figure *f, Error *e)
{
    memset(f, 0, sizeof *f);
    char metric[48];
    if (json_object(d, c, "a figure", e) || json_known_fields(d, c, FIGURE_FIELDS, e) ||
        json_string(d, c, "label", FIELD_REQUIRED, f->label, sizeof f->label, e) ||
        json_string(d, c, "metric", FIELD_REQUIRED, metric, sizeof metric, e) ||
        json_string(d, c, "seed", FIELD_OPTIONAL, f->seed, sizeof f->seed, e) < 0 ||
        json_string(d, c, "seed_error", FIELD_OPTIONAL, f->seed_error, sizeof f->seed_error, e) < 0 ||
        json_context(d, c, "context", FIELD_OPTIONAL, &f->context, e) < 0 ||
        json_size(d, c, "weights", FIELD_OPTIONAL, &f->weights, e) < 0 ||
        json_bool(d, c, "mha", FIELD_OPTIONAL, &f->mha, e) < 0)
        return -1;
    if (sc->model.max_context && f->context > sc->model.max_context)
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(c, "context"), e,
                             "field 'context': %s reads at most %llu tokens", sc->model.display,
                             (unsigned long long)sc->model.max_context);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(c, "format");
    if (!fmt)
        f->format = sc->formats[0];
    else if (load_format(d, fmt, &f->format, e))
        return -1;
    if (!(f->metric = metric_by_id(metric))) {
        char list[512] = "";
        for (size_t i = 0; i < N_METRICS; i++) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", METRICS[i].id);
        }
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(c, "metric"), e,
                             "unknown metric '%s'; expected one of %s", metric, list);
    }
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(c, "batch");
    if (cJSON_IsString(b) && strcmp(b->valuestring, "slots") == 0)
        f->batch_at_slots = true;
    else if (b && json_uint(d, c, "batch", FIELD_REQUIRED, 1, UINT32_MAX, &f->batch, e))
        return jsondoc_error(d, b, e, "field 'batch': expected a whole number or \"slots\"");
    return 0;
}

static int load_figures(const JsonDoc *d, const cJSON *r, Scenario *sc, Error *e)
{
    const cJSON *arr;
    int n;
    int rc = json_array(d, r, "figures", FIELD_OPTIONAL, &arr, &n, e);
    if (rc)
        return rc < 0 ? -1 : 0;
    if (n > SCENARIO_FIGURES_MAX)
        return jsondoc_error(d, arr, e, "field 'figures': at most %d figures", SCENARIO_FIGURES_MAX);
    for (const cJSON *c = arr->child; c; c = c->next) {
        Figure *f = &sc->figures[sc->n_figures++];
        if (load_figure(d, c, sc, f, e))
            return -1;
        /* Check now that the figure can be computed, so a bad figure is
         * reported with its position rather than when it is first shown. */
        FigureResult fr;
        Error inner;
        if (figure_eval(sc, f, &fr, &inner))
            return jsondoc_error(d, c, e, "figure '%s': %s", f->label, inner.msg);
    }
    return 0;
}

/* Model and GPU by name from the data directory; errors point at the field. */
static int load_refs(const JsonDoc *d, const cJSON *r, Scenario *sc, const char *datadir,
                     Error *e)
{
    char name[64], path[1024];
    Error inner;
    if (json_string(d, r, "model", FIELD_REQUIRED, name, sizeof name, e))
        return -1;
    if (strchr(name, '/') || strstr(name, ".json"))
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(r, "model"), e,
                             "field 'model': give a model's name (kvlab calc --model help), not a path");
    if (catalog_path(datadir, CATALOG_MODELS, name, path, sizeof path, &inner) ||
        model_load(&sc->model, path, &inner))
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(r, "model"), e, "%s", inner.msg);
    int rc = json_string(d, r, "gpu", FIELD_OPTIONAL, name, sizeof name, e);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        if (strchr(name, '/') || strstr(name, ".json"))
            return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(r, "gpu"), e,
                                 "field 'gpu': give a GPU's name, not a path");
        if (catalog_path(datadir, CATALOG_GPUS, name, path, sizeof path, &inner) ||
            gpu_load(&sc->gpu, path, &inner))
            return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(r, "gpu"), e, "%s", inner.msg);
        sc->has_gpu = true;
        if (json_size(d, r, "memory", FIELD_OPTIONAL, &sc->gpu.memory, e) < 0)
            return -1;
    } else if (cJSON_GetObjectItemCaseSensitive(r, "memory")) {
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(r, "memory"), e,
                             "field 'memory' overrides a GPU's memory; name the 'gpu' too");
    }
    return 0;
}

static int load_workload(const JsonDoc *d, const cJSON *r, Scenario *sc, Error *e)
{
    uint64_t context, batch, tp = 1, block = PAGED_BLOCK_DEFAULT;
    bool mha = false;
    Q util = GPU_UTILIZATION_DEFAULT;
    u128 reserve = 0;
    Workload *w = &sc->w;
    if (json_context(d, r, "context", FIELD_REQUIRED, &context, e) ||
        json_uint(d, r, "batch", FIELD_REQUIRED, 1, UINT32_MAX, &batch, e))
        return -1;
    if (sc->model.max_context && context > sc->model.max_context)
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(r, "context"), e,
                             "field 'context': %s reads at most %llu tokens", sc->model.display,
                             (unsigned long long)sc->model.max_context);
    workload_init(w, &sc->model.shape, context, batch);
    w->weights = sc->model.weight_bytes;
    if (sc->has_gpu)
        w->bandwidth = sc->gpu.bandwidth;
    if (json_size(d, r, "weights", FIELD_OPTIONAL, &w->weights, e) < 0 ||
        json_rate(d, r, "bandwidth", FIELD_OPTIONAL, &w->bandwidth, e) < 0 ||
        json_size(d, r, "pool", FIELD_OPTIONAL, &w->pool, e) < 0 ||
        json_fraction(d, r, "utilization", FIELD_OPTIONAL, &util, e) < 0 ||
        json_size(d, r, "reserve", FIELD_OPTIONAL, &reserve, e) < 0 ||
        json_bool(d, r, "mha", FIELD_OPTIONAL, &mha, e) < 0 ||
        json_uint(d, r, "tp", FIELD_OPTIONAL, 1, 1024, &tp, e) < 0 ||
        json_uint(d, r, "block_tokens", FIELD_OPTIONAL, 1, 1u << 20, &block, e) < 0 ||
        json_context(d, r, "residual", FIELD_OPTIONAL, &w->kv.residual, e) < 0 ||
        json_bool(d, r, "head_scales", FIELD_OPTIONAL, &w->kv.head_scales, e) < 0 ||
        json_bool(d, r, "bf16_sliding", FIELD_OPTIONAL, &w->kv.bf16_sliding, e) < 0 ||
        load_layers(d, r, sc, e))
        return -1;
    w->mha = mha;
    w->tp = tp;
    w->block_tokens = block;
    Shape split;
    uint64_t replicas;
    Error why;
    Shape full = mha ? shape_as_mha(&w->shape) : w->shape;
    if (shape_split_tp(&full, tp, &split, &replicas, &why))
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(r, "tp"), e, "field 'tp': %s",
                             why.msg);
    sc->pool_given = w->pool != 0;
    sc->utilization = util;
    sc->reserve = reserve;
    Error inner;
    if (!w->pool && sc->has_gpu &&
        workload_pool_from_gpu(w, sc->gpu.memory, util, reserve, &inner))
        return jsondoc_error(d, r, e, "%s", inner.msg);
    return 0;
}

/* Reads sc from d, then frees d. */
static int from_doc(Scenario *sc, JsonDoc *d, const char *datadir, Error *e)
{
    const cJSON *r = d->root;
    int rc = -1;
    if (json_object(d, r, "a scenario file", e) ||
        json_known_fields(d, r, SCENARIO_FIELDS, e) ||
        json_string(d, r, "name", FIELD_REQUIRED, sc->name, sizeof sc->name, e) ||
        json_string(d, r, "title", FIELD_REQUIRED, sc->title, sizeof sc->title, e) ||
        json_string(d, r, "source", FIELD_REQUIRED, sc->source, sizeof sc->source, e) ||
        json_string(d, r, "story", FIELD_REQUIRED, sc->story, sizeof sc->story, e) ||
        json_bool(d, r, "predict", FIELD_OPTIONAL, &sc->predict, e) < 0 ||
        load_refs(d, r, sc, datadir, e) || load_workload(d, r, sc, e) ||
        load_formats(d, r, sc, e))
        goto done;
    /* The workload itself must compute before figures are checked. */
    FormatResult fr;
    Error inner;
    if (budget_compute(&sc->w, sc->formats[0], &fr, &inner)) {
        jsondoc_error(d, r, e, "%s", inner.msg);
        goto done;
    }
    rc = load_figures(d, r, sc, e) || jsondoc_check_name(d, sc->name, e) ? -1 : 0;
done:
    jsondoc_done(d);
    return rc;
}

int scenario_load(Scenario *sc, const char *path, const char *datadir, Error *e)
{
    JsonDoc d;
    memset(sc, 0, sizeof *sc);
    return jsondoc_load(&d, path, e) ? -1 : from_doc(sc, &d, datadir, e);
}

int scenario_parse(Scenario *sc, const char *name, const char *text, size_t len,
                   const char *datadir, Error *e)
{
    JsonDoc d;
    memset(sc, 0, sizeof *sc);
    return jsondoc_parse(&d, name, text, len, e) ? -1 : from_doc(sc, &d, datadir, e);
}

/* ------------------------------------------------------------------------
 * Figures
 */

/* figure_workload on the workload `base` in place of the scenario's. */
static int figure_workload_on(const Workload *base, const Figure *f, Workload *w, Error *e)
{
    *w = *base;
    if (f->context)
        w->context = f->context;
    if (f->weights)
        w->weights = f->weights;
    if (f->batch)
        w->batch = f->batch;
    if (f->mha)
        w->mha = true;
    if (f->batch_at_slots) {
        FormatResult r;
        if (budget_compute(w, f->format, &r, e))
            return -1;
        if (!r.has_slots)
            return error_set(e, "batch \"slots\" needs a pool");
        if (r.slots == 0)
            return error_set(e, "not one sequence fits in the pool");
        w->batch = (uint64_t)r.slots;
    }
    return 0;
}

int figure_workload(const Scenario *sc, const Figure *f, Workload *w, Error *e)
{
    return figure_workload_on(&sc->w, f, w, e);
}

/* Seed text "8,724,152,320", "38%", "1.12x" -> digits "8724152320", "38",
 * "1.12" and the number of decimals written. */
static bool seed_digits(const char *seed, char *out, size_t n, int *decimals)
{
    size_t k = 0;
    int places = -1;
    for (const char *p = seed; *p; p++) {
        if (*p == ',' || *p == ' ')
            continue;
        if (*p == '.' && places < 0) {
            places = 0;
        } else if (*p >= '0' && *p <= '9') {
            if (places >= 0)
                places++;
        } else if ((*p == '%' || *p == 'x') && p[1] == '\0') {
            break;
        } else {
            return false;
        }
        if (k + 1 >= n)
            return false;
        out[k++] = *p;
    }
    out[k] = '\0';
    *decimals = places < 0 ? 0 : places;
    return k > 0;
}

/* A value in full, within a millionth of itself: whole numbers as they
 * are, fractions to six places, or to seven significant digits below 1
 * (3.401235, 0.2013266, 0.0390625), trailing zeros dropped. */
static void full_text(Q v, char *buf, size_t n)
{
    int places = v.num < v.den ? 7 : 6;
    for (u128 x = v.num * 10; v.num && v.num < v.den && x < v.den && places < 24; x *= 10)
        places++;                   // a leading zero after the point
    q_str(buf, n, v, places, true);
}

int metric_eval(const Metric *m, const Workload *w, const Format *f, FigureResult *r, Error *e)
{
    memset(r, 0, sizeof *r);
    FormatResult fr, br;
    if (budget_compute(w, f, &fr, e) || budget_compute(w, format_bf16(), &br, e))
        return -1;
    if ((m->needs & NEED_POOL) && !fr.has_slots)
        return error_set(e, "metric '%s' needs a pool (give 'pool' or a 'gpu')", m->id);
    if ((m->needs & NEED_STEP) && !fr.has_step)
        return error_set(e, "metric '%s' needs weights and a bandwidth (give a 'gpu')", m->id);
    if ((m->needs & NEED_WEIGHTS) && !fr.has_crossover)
        return error_set(e, "metric '%s' needs the weights", m->id);
    MetricInput in = {w, &fr, &br};
    return m->eval(&in, r, e);
}

/* Evaluates f on the workload w, not yet compared. */
static int eval_on(const Workload *w, const Figure *f, FigureResult *r, Error *e)
{
    return metric_eval(f->metric, w, f->format, r, e);
}

const char *metric_value_text(Q v, bool never, int decimals, bool trim, char *buf, size_t n)
{
    if (never)
        snprintf(buf, n, "never");
    else if (decimals < 0)
        full_text(v, buf, n);
    else
        q_str(buf, n, v, decimals, trim);
    if (!never && (decimals == 0 || v.num % v.den == 0) && v.num / v.den >= 1000)
        u128_str(buf, n, (v.num + v.den / 2) / v.den, true);
    return buf;
}

static void figure_text(FigureResult *r, int decimals, bool trim)
{
    metric_value_text(r->value, r->never, decimals, trim, r->text, sizeof r->text);
}

int figure_eval(const Scenario *sc, const Figure *f, FigureResult *r, Error *e)
{
    Workload w;
    if (figure_workload(sc, f, &w, e) || eval_on(&w, f, r, e))
        return -1;
    char digits[32];
    int decimals = 3;
    bool quoted = f->seed[0] != '\0';
    if (quoted && !seed_digits(f->seed, digits, sizeof digits, &decimals))
        return error_set(e, "seed value '%s' is not a number (write it as 21.4, 38%% or 1.12x)",
                         f->seed);
    figure_text(r, decimals, !quoted);
    char plain[48];             // the text as the seed writes it: no grouping
    size_t k = 0;
    for (const char *p = r->text; *p && k + 1 < sizeof plain; p++)
        if (*p != ',')
            plain[k++] = *p;
    plain[k] = '\0';
    if (!quoted)
        r->verdict = FIGURE_NO_SEED;
    else if (strcmp(plain, digits) == 0)
        r->verdict = f->seed_error[0] ? FIGURE_STALE : FIGURE_AGREES;
    else
        r->verdict = f->seed_error[0] ? FIGURE_SEED_WRONG : FIGURE_UNEXPLAINED;
    return 0;
}

/* The inputs a figure's value depends on, on the workloads a and b. */
static unsigned figure_reads(const Figure *f, const Workload *a, const Workload *b)
{
    unsigned reads = f->metric->reads;
    if ((reads & READS_MIXED_CONTEXT) && (workload_mixed(a) || workload_mixed(b)))
        reads |= WL_CONTEXT;
    return reads;
}

int figure_eval_changed(const Scenario *sc, const Workload *original, const Figure *f,
                        FigureResult *r, Error *e)
{
    Workload now, then;
    if (figure_eval(sc, f, r, e))
        return -1;
    if (figure_workload(sc, f, &now, e))
        return -1;
    if (figure_workload_on(original, f, &then, NULL) == 0 &&
        !(workload_changes(&now, &then) & figure_reads(f, &now, &then)))
        return 0;
    figure_text(r, -1, true);
    r->verdict = FIGURE_NOT_APPLICABLE;
    return 0;
}

/* ------------------------------------------------------------------------
 * Verdicts
 */

static const struct {
    const char *name, *id, *meaning;
    VerdictKind kind;
} VERDICTS[FIGURE_VERDICTS] = {
    [FIGURE_AGREES] = {"agrees", "agrees", "calc gives the seed's figure, at the seed's precision",
                       VERDICT_FINE},
    [FIGURE_SEED_WRONG] = {"seed wrong", "seed_wrong", "the seed is wrong; why is written below",
                           VERDICT_NOTE},
    [FIGURE_UNEXPLAINED] = {"DISAGREES", "unexplained", "calc differs and the scenario does not say why",
                            VERDICT_PROBLEM},
    [FIGURE_STALE] = {"stale", "stale", "calc agrees, but the scenario says the seed is wrong",
                      VERDICT_PROBLEM},
    [FIGURE_NO_SEED] = {"", "no_seed", "", VERDICT_SILENT},
    [FIGURE_NOT_APPLICABLE] = {"n/a", "not_applicable",
                               "not compared: an input of the figure changed, and the seed's is for "
                               "the scenario's; calc's is shown in full",
                               VERDICT_SILENT},
    [FIGURE_NO_FIGURE] = {"no figure", "no_figure",
                          "calc cannot work it out from these inputs (no KV pool, no bandwidth, or "
                          "not one sequence in the pool)",
                          VERDICT_PROBLEM},
};

const char *figure_verdict_name(FigureVerdict v)
{
    return VERDICTS[v].name;
}

const char *figure_verdict_id(FigureVerdict v)
{
    return VERDICTS[v].id;
}

const char *figure_verdict_meaning(FigureVerdict v)
{
    return VERDICTS[v].meaning;
}

VerdictKind figure_verdict_kind(FigureVerdict v)
{
    return VERDICTS[v].kind;
}

const char *figure_legend(const FigureVerdict *v, size_t n, char *buf, size_t size)
{
    bool shown[FIGURE_VERDICTS] = {false};
    for (size_t i = 0; i < n; i++)
        shown[v[i]] = true;
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < FIGURE_VERDICTS && k < size; i++)
        if (shown[i] && VERDICTS[i].name[0])
            k += (size_t)snprintf(buf + k, size - k, "%s %s = %s;", k ? "" : "verdict:", VERDICTS[i].name,
                                  VERDICTS[i].meaning);
    if (k && k < size)
        buf[k - 1] = '.';
    return buf;
}
