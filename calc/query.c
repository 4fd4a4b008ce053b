/* query.c - calc's options onto a workload, and queries: one figure named
 * in one line of text. */
#include "query.h"

#include "ascii.h"
#include "catalog.h"
#include "paths.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT_DEFAULT (8 * CONTEXT_K)     // a typed shape's: "8k" in the help

static const QueryOption OPTIONS[QOPT_COUNT] = {
    [QOPT_SCENARIO] = {"scenario", "NAME", "start from a walk-through scenario (kvlab scenario list)"},
    [QOPT_MODEL] = {"model", "NAME", "a model from the data directory (kvlab models), e.g. llama-3.1-8b"},
    [QOPT_LAYERS] = {"layers", "L", "or type a shape: the layers ..."},
    [QOPT_KV_HEADS] = {"kv-heads", "H", "... the KV heads ..."},
    [QOPT_Q_HEADS] = {"q-heads", "H", "... the query heads (without them MHA or GQA is unknown: --mha and --tp "
                                      "need them) ..."},
    [QOPT_HEAD_DIM] = {"head-dim", "D", "... and the head dimension"},
    [QOPT_MHA] = {"mha", NULL, "the same model with one KV head per query head"},
    [QOPT_CONTEXT] = {"context", "S", "tokens per sequence: 8192, 8k, 128K (default 8k)"},
    [QOPT_BATCH] = {"batch", "B", "sequences (default 1; the default scenario has 16)"},
    [QOPT_FORMAT] = {"format", "F", "a storage format, repeatable (default all; kvlab formats)"},
    [QOPT_POOL] = {"pool", "SIZE", "bytes for the KV cache: 20GiB, 60GB"},
    [QOPT_GPU] = {"gpu", "NAME", "a GPU from the data directory (kvlab gpus): its bandwidth, and the pool unless "
                                 "--pool is given"},
    [QOPT_MEMORY] = {"memory", "SIZE", "the GPU's memory, instead of what its driver reports"},
    [QOPT_UTIL] = {"utilization", "FRACTION", "the share of GPU memory for weights and KV cache (default 0.9)"},
    [QOPT_RESERVE] = {"reserve", "SIZE", "GPU memory kept back for the runtime (default 0)"},
    [QOPT_WEIGHTS] = {"weights", "SIZE", "bytes of weights (default: the model's, in BF16)"},
    [QOPT_BANDWIDTH] = {"bandwidth", "RATE", "memory bandwidth: 3.35TB/s, 3352GB/s"},
    [QOPT_TP] = {"tp", "N", "tensor-parallel degree: every figure per GPU"},
    [QOPT_BLOCK] = {"block", "N", "paged-attention block size in tokens (default 16)"},
    [QOPT_RESIDUAL] = {"residual", "R", "keep the most recent R tokens in BF16 (KIVI)"},
    [QOPT_HEAD_SCALES] = {"head-scales", NULL, "FP8 and NVFP4 tensor scales per KV head, not per layer"},
    [QOPT_BF16_LAYERS] = {"bf16-layers", "LIST", "keep these layers in BF16: 0,1,31"},
    [QOPT_BF16_SLIDING] = {"bf16-sliding", NULL, "keep the sliding-window layers in BF16"},
};

const QueryOption *query_option(int k)
{
    return k >= 0 && k < QOPT_COUNT ? &OPTIONS[k] : NULL;
}

int query_option_by_name(const char *name)
{
    for (int k = 0; k < QOPT_COUNT; k++)
        if (strcmp(OPTIONS[k].name, name) == 0)
            return k;
    return -1;
}

int query_options_parse(const char *const *words, size_t n, QueryOptions *o, Error *e)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < n; i++) {
        const char *w = words[i];
        if (strncmp(w, "--", 2) != 0 || !w[2])
            return error_set(e, "'%s' is not an option (options begin with --)", w);
        char name[QUERY_WORD_MAX];
        const char *eq = strchr(w, '=');
        size_t len = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
        snprintf(name, sizeof name, "%.*s", (int)len, w + 2);
        int k = query_option_by_name(name);
        if (k < 0)
            return error_set(e, "unknown option '--%s' (a query takes kvlab calc's options)", name);
        const char *val = NULL;
        if (OPTIONS[k].arg) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < n)
                val = words[++i];
            else
                return error_set(e, "--%s needs a value (%s)", name, OPTIONS[k].arg);
        } else if (eq) {
            return error_set(e, "--%s takes no value", name);
        }
        if (k == QOPT_FORMAT) {
            if (o->n_formats == QUERY_FORMATS_MAX)
                return error_set(e, "--format: at most %d formats", QUERY_FORMATS_MAX);
            o->formats[o->n_formats++] = val;
        } else if (o->set[k]) {
            return error_set(e, "--%s is given twice", name);
        }
        o->set[k] = true;
        o->val[k] = val;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * The options onto a workload
 */

static const int SHAPE_OPTS[] = {QOPT_LAYERS, QOPT_KV_HEADS, QOPT_Q_HEADS, QOPT_HEAD_DIM};
static const uint64_t SHAPE_MAX[] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX};
enum { SHAPE_L, SHAPE_KV, SHAPE_Q, SHAPE_D, SHAPE_N };

static bool query_shape_given(const QueryOptions *o)
{
    for (int i = 0; i < SHAPE_N; i++)
        if (o->set[SHAPE_OPTS[i]])
            return true;
    return false;
}

/* Option k as a whole number from lo to hi where given (*out untouched
 * where not). */
static int query_count(const QueryOptions *o, int k, uint64_t lo, uint64_t hi, uint64_t *out, Error *e)
{
    if (o->set[k] && units_parse_count(o->val[k], lo, hi, out, e))
        return error_prefix(e, "--%s", OPTIONS[k].name);
    return 0;
}

static int query_typed_shape(const QueryOptions *o, Shape *out, Error *e)
{
    static const int NEEDED[] = {SHAPE_L, SHAPE_KV, SHAPE_D};
    for (size_t i = 0; i < sizeof NEEDED / sizeof NEEDED[0]; i++)
        if (!o->set[SHAPE_OPTS[NEEDED[i]]])
            return error_set(e, "a typed shape needs --layers, --kv-heads and --head-dim (missing --%s)",
                             OPTIONS[SHAPE_OPTS[NEEDED[i]]].name);
    uint64_t v[SHAPE_N];
    for (int i = 0; i < SHAPE_N; i++) {
        if (i == SHAPE_Q)
            v[i] = v[SHAPE_KV];                 // as many as KV heads where not given
        if (query_count(o, SHAPE_OPTS[i], 1, SHAPE_MAX[i], &v[i], e))
            return -1;
    }
    if (shape_init(out, v[SHAPE_L], v[SHAPE_Q], v[SHAPE_KV], v[SHAPE_D], e))
        return error_prefix(e, "--q-heads");
    return 0;
}

static int query_from_scenario(QuerySetup *s, const char *name, Error *e)
{
    static Scenario sc;
    char path[1024];
    if (catalog_path(paths_datadir(), CATALOG_SCENARIOS, name, path, sizeof path, e) ||
        scenario_load(&sc, path, paths_datadir(), e))
        return -1;
    snprintf(s->model, sizeof s->model, "%s", sc.model.display);
    snprintf(s->scenario, sizeof s->scenario, "%s", sc.name);
    s->w = sc.w;
    s->gpu = sc.gpu;
    s->has_gpu = sc.has_gpu;
    s->pool_given = sc.pool_given;
    s->utilization = sc.utilization;
    s->reserve = sc.reserve;
    s->n_formats = sc.n_formats;
    memcpy(s->formats, sc.formats, sc.n_formats * sizeof sc.formats[0]);
    return 0;
}

static int query_shape_options(const QueryOptions *o, QuerySetup *s, Error *e)
{
    bool typed = query_shape_given(o);
    if (o->set[QOPT_SCENARIO] && (typed || o->set[QOPT_MODEL]))
        return error_set(e, "--scenario fixes the model; drop it to give --model or a shape");
    if (typed && o->set[QOPT_MODEL])
        return error_set(e, "give --model or --layers/--kv-heads/--head-dim, not both");
    Shape shape;
    if (o->set[QOPT_MODEL]) {
        static Model m;
        char path[1024];
        if (catalog_path(paths_datadir(), CATALOG_MODELS, o->val[QOPT_MODEL], path, sizeof path, e) ||
            model_load(&m, path, e))
            return error_prefix(e, "--model");
        snprintf(s->model, sizeof s->model, "%s", m.display);
        s->scenario[0] = '\0';
        shape = m.shape;
        s->w.weights = m.weight_bytes;
    } else if (typed) {
        if (query_typed_shape(o, &shape, e))
            return -1;
        s->q_heads_unknown = !o->set[QOPT_Q_HEADS];
        s->model[0] = s->scenario[0] = '\0';
        s->w.weights = 0;
    } else {
        return 0;
    }
    s->w.shape = shape;
    return 0;
}

/* A comma-separated list of layer indices, each at most once. */
static int query_layers(const char *list, uint64_t *out, size_t max, size_t *n, Error *e)
{
    *n = 0;
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        if (!len || len >= sizeof item)
            return error_set(e, "--bf16-layers: '%s' is not a list of layers (0,1,31)", list);
        snprintf(item, sizeof item, "%.*s", (int)len, p);
        if (*n == max)
            return error_set(e, "--bf16-layers: at most %zu layers", max);
        if (units_parse_count(item, 0, UINT32_MAX, &out[*n], e))
            return error_prefix(e, "--bf16-layers");
        for (size_t k = 0; k < *n; k++)
            if (out[k] == out[*n])
                return error_set(e, "--bf16-layers: layer %s is listed twice", item);
        (*n)++;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

static int query_workload_options(const QueryOptions *o, QuerySetup *s, Error *e)
{
    Workload *w = &s->w;
    if (o->set[QOPT_CONTEXT] && units_parse_context(o->val[QOPT_CONTEXT], &w->context, e))
        return error_prefix(e, "--context");
    if (query_count(o, QOPT_BATCH, 1, UINT32_MAX, &w->batch, e) ||
        query_count(o, QOPT_TP, 1, 1u << 16, &w->tp, e) ||
        query_count(o, QOPT_BLOCK, 1, 1u << 20, &w->block_tokens, e))
        return -1;
    if (o->set[QOPT_RESIDUAL] && units_parse_context(o->val[QOPT_RESIDUAL], &w->kv.residual, e))
        return error_prefix(e, "--residual");
    if (o->set[QOPT_MHA])
        w->mha = true;
    if (o->set[QOPT_HEAD_SCALES])
        w->kv.head_scales = true;
    if (o->set[QOPT_BF16_SLIDING])
        w->kv.bf16_sliding = true;
    if (o->set[QOPT_BF16_LAYERS] &&
        query_layers(o->val[QOPT_BF16_LAYERS], w->kv.bf16_layers, KV_OVERRIDES_MAX, &w->kv.n_bf16_layers, e))
        return -1;
    return 0;
}

/* A size written without a unit and below this is surely a unit left out
 * (--pool 20 is 20 bytes): it is taken as given, with a note. */
#define BARE_SIZE_NOTE ((u128)1 << 20)

static int query_size_opt(const QueryOptions *o, int k, u128 *out, QuerySetup *s, Error *e)
{
    if (!o->set[k])
        return 0;
    if (units_parse_size(o->val[k], out, e))
        return error_prefix(e, "--%s", OPTIONS[k].name);
    if (*out < BARE_SIZE_NOTE && units_size_is_bare(o->val[k])) {
        const char *v = o->val[k];
        snprintf(s->note, sizeof s->note,
                 "note: --%s %s is %s bytes; a unit was probably meant (%sGiB or %sGB?)", OPTIONS[k].name, v,
                 v, v, v);
    }
    return 0;
}

static int query_machine_options(const QueryOptions *o, QuerySetup *s, Error *e)
{
    Workload *w = &s->w;
    if (o->set[QOPT_GPU]) {
        char path[1024];
        if (catalog_path(paths_datadir(), CATALOG_GPUS, o->val[QOPT_GPU], path, sizeof path, e) ||
            gpu_load(&s->gpu, path, e))
            return error_prefix(e, "--gpu");
        s->has_gpu = true;
        w->bandwidth = s->gpu.bandwidth;
        s->pool_given = false;
    }
    if (query_size_opt(o, QOPT_MEMORY, &s->gpu.memory, s, e) || query_size_opt(o, QOPT_WEIGHTS, &w->weights, s, e))
        return -1;
    if (o->set[QOPT_BANDWIDTH] && units_parse_rate(o->val[QOPT_BANDWIDTH], &w->bandwidth, e))
        return error_prefix(e, "--bandwidth");
    if (o->set[QOPT_UTIL] && units_parse_fraction(o->val[QOPT_UTIL], &s->utilization, e))
        return error_prefix(e, "--utilization");
    if (query_size_opt(o, QOPT_RESERVE, &s->reserve, s, e))
        return -1;
    if (o->set[QOPT_POOL]) {
        if (query_size_opt(o, QOPT_POOL, &w->pool, s, e))
            return -1;
        s->pool_given = true;
    }
    if ((o->set[QOPT_UTIL] || o->set[QOPT_RESERVE] || o->set[QOPT_MEMORY]) && !s->has_gpu)
        return error_set(e, "--memory, --utilization and --reserve need --gpu");
    if (!s->pool_given && s->has_gpu) {
        if (!w->weights)
            return error_set(e, "--gpu with a typed shape needs --weights (or give --pool)");
        if (workload_pool_from_gpu(w, s->gpu.memory, s->utilization, s->reserve, e))
            return error_prefix(e, "--gpu");
    } else if (!s->pool_given) {
        w->pool = 0;
    }
    return 0;
}

static int query_format_options(const QueryOptions *o, QuerySetup *s, Error *e)
{
    if (!o->n_formats) {
        if (!s->n_formats)
            for (size_t i = 0; i < format_count(); i++)
                s->formats[s->n_formats++] = format_at(i);
        return 0;
    }
    s->n_formats = 0;
    for (size_t i = 0; i < o->n_formats; i++) {
        const Format *f = format_by_id(o->formats[i]);
        if (!f) {
            char list[256];
            return error_set(e, "--format: unknown format '%s'; expected one of %s", o->formats[i],
                             format_id_list(list, sizeof list));
        }
        for (size_t k = 0; k < s->n_formats; k++)
            if (s->formats[k] == f)
                return error_set(e, "--format: %s is given twice", f->id);
        s->formats[s->n_formats++] = f;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Options that mean something only with others: once everything is read,
 * an option that would change nothing is refused, saying what it needs.
 */

static bool query_quantized_format(const QuerySetup *s)
{
    for (size_t i = 0; i < s->n_formats; i++)
        if (!format_is_full_precision(s->formats[i]))
            return true;
    return false;
}

static bool query_tensor_scaled_format(const QuerySetup *s)
{
    for (size_t i = 0; i < s->n_formats; i++)
        if (s->formats[i]->tensor_scale_bytes)
            return true;
    return false;
}

static bool query_sliding_layers(const QuerySetup *s)
{
    return shape_layers_of_kind(&s->w.shape, ATTN_SLIDING) > 0;
}

static bool query_pool_known(const QuerySetup *s)
{
    return s->w.pool > 0;
}

static bool query_pool_from_gpu(const QuerySetup *s)
{
    return !s->pool_given;
}

static bool query_q_heads_known(const QuerySetup *s)
{
    return !s->q_heads_unknown;
}

static bool query_grouped_query(const QuerySetup *s)
{
    return s->w.shape.q_heads != s->w.shape.kv_heads;
}

/* Why a BF16 option does nothing where every format is BF16 or FP16. */
#define ALL_16_BIT "; every --format here is 16-bit already"

static const struct {
    int opt;
    bool (*holds)(const QuerySetup *s);
    const char *needs;
} RULES[] = {
    {QOPT_RESIDUAL, query_quantized_format, "keeps recent tokens in BF16 ahead of a quantized format" ALL_16_BIT},
    {QOPT_BF16_LAYERS, query_quantized_format, "keeps layers in BF16 instead of a quantized format" ALL_16_BIT},
    {QOPT_BF16_SLIDING, query_quantized_format, "keeps layers in BF16 instead of a quantized format" ALL_16_BIT},
    {QOPT_BF16_SLIDING, query_sliding_layers, "needs a model with sliding-window layers"},
    {QOPT_HEAD_SCALES, query_tensor_scaled_format, "applies to formats with per-tensor scales (see kvlab formats)"},
    {QOPT_BLOCK, query_pool_known, "sizes the paged slots, which need a pool (--pool or --gpu)"},
    {QOPT_UTIL, query_pool_from_gpu, "sizes the pool from the GPU's memory, but the pool is given"},
    {QOPT_RESERVE, query_pool_from_gpu, "sizes the pool from the GPU's memory, but the pool is given"},
    {QOPT_MHA, query_q_heads_known, "needs --q-heads: a typed shape has no query heads to match without them"},
    {QOPT_MHA, query_grouped_query, "changes nothing: the shape has a KV head per query head already"},
    {QOPT_TP, query_q_heads_known, "needs --q-heads: tensor parallelism splits the query heads too"},
};

static int query_rules(const QueryOptions *o, const QuerySetup *s, Error *e)
{
    for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++)
        if (o->set[RULES[i].opt] && !RULES[i].holds(s))
            return error_set(e, "--%s %s", OPTIONS[RULES[i].opt].name, RULES[i].needs);
    return 0;
}

/* The options whose values enter the figures' sizes: an overflow's. */
static const int SIZE_OPTS[] = {QOPT_CONTEXT, QOPT_BATCH,  QOPT_BLOCK,  QOPT_RESIDUAL, QOPT_WEIGHTS, QOPT_POOL,
                                QOPT_BANDWIDTH, QOPT_LAYERS, QOPT_KV_HEADS, QOPT_HEAD_DIM, QOPT_MODEL};

/* calc's own checks (budget.h), made once every option is read, so that
 * each error names the option behind it. */
static int query_workload_checks(const QueryOptions *o, const QuerySetup *s, Error *e)
{
    const Workload *w = &s->w;
    Shape full = w->mha ? shape_as_mha(&w->shape) : w->shape, per;
    uint64_t replicas;
    if (shape_split_tp(&full, w->tp ? w->tp : 1, &per, &replicas, e))
        return o->set[QOPT_TP] || o->set[QOPT_MHA]
                   ? error_prefix(e, "--%s", OPTIONS[o->set[QOPT_TP] ? QOPT_TP : QOPT_MHA].name)
                   : -1;
    if (kv_options_check(&w->shape, &w->kv, e))
        return error_prefix(e, "--bf16-layers");
    for (size_t i = 0; i < s->n_formats; i++) {
        FormatResult r;
        if (budget_compute(w, s->formats[i], &r, e)) {
            char opts[256] = "";
            for (size_t k = 0; k < sizeof SIZE_OPTS / sizeof SIZE_OPTS[0]; k++)
                if (o->set[SIZE_OPTS[k]]) {
                    size_t l = strlen(opts);
                    snprintf(opts + l, sizeof opts - l, "%s--%s", l ? ", " : "", OPTIONS[SIZE_OPTS[k]].name);
                }
            return opts[0] ? error_prefix(e, "%s", opts) : -1;
        }
    }
    return 0;
}

int query_setup(const QueryOptions *o, QuerySetup *s, Error *e)
{
    memset(s, 0, sizeof *s);
    s->utilization = GPU_UTILIZATION_DEFAULT;
    bool shape_given = o->set[QOPT_MODEL] || query_shape_given(o);
    if (o->set[QOPT_SCENARIO] || !shape_given) {
        if (query_from_scenario(s, o->set[QOPT_SCENARIO] ? o->val[QOPT_SCENARIO] : QUERY_DEFAULT_SCENARIO, e))
            return o->set[QOPT_SCENARIO] ? error_prefix(e, "--scenario") : -1;
    } else {
        Shape none = {0};
        workload_init(&s->w, &none, CONTEXT_DEFAULT, 1);
    }
    return query_shape_options(o, s, e) || query_workload_options(o, s, e) || query_machine_options(o, s, e) ||
                   query_format_options(o, s, e) || query_rules(o, s, e) || query_workload_checks(o, s, e)
               ? -1
               : 0;
}

/* ------------------------------------------------------------------------
 * Units
 */

struct QueryUnit {
    const char *name;
    UnitFamily family;
    u128 num, den;              // one of it in the family's base unit: B, ms, x, a count
    int digits;                 // decimals shown by default; -1 in full (within a millionth)
};

static const QueryUnit UNITS[] = {
    {"", UNIT_COUNT, 1, 1, -1},
    {"tokens", UNIT_COUNT, 1, 1, 0},
    {"B", UNIT_SIZE, 1, 1, -1},
    {"KB", UNIT_SIZE, KB, 1, 2},
    {"MB", UNIT_SIZE, MB, 1, 2},
    {"GB", UNIT_SIZE, GB, 1, 2},
    {"TB", UNIT_SIZE, GB * 1000u, 1, 2},
    {"KiB", UNIT_SIZE, (u128)1 << 10, 1, 2},
    {"MiB", UNIT_SIZE, (u128)1 << 20, 1, 2},
    {"GiB", UNIT_SIZE, GIB, 1, 2},
    {"TiB", UNIT_SIZE, (u128)1 << 40, 1, 2},
    {"s", UNIT_TIME, 1000, 1, 3},
    {"ms", UNIT_TIME, 1, 1, 2},
    {"us", UNIT_TIME, 1, 1000, 1},
    {"x", UNIT_RATIO, 1, 1, 2},
    {"%", UNIT_RATIO, 1, 100, 1},
};

size_t query_unit_count(void)
{
    return sizeof UNITS / sizeof UNITS[0];
}

const QueryUnit *query_unit_at(size_t i)
{
    return i < query_unit_count() ? &UNITS[i] : NULL;
}

static const char *const FAMILY_NAMES[UNIT_FAMILIES] = {
    [UNIT_COUNT] = "count", [UNIT_SIZE] = "size", [UNIT_TIME] = "time", [UNIT_RATIO] = "ratio",
};

const QueryUnit *query_unit_by_name(const char *name)
{
    for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++)
        if (strcmp(UNITS[i].name, name) == 0)
            return &UNITS[i];
    return NULL;
}

const char *query_unit_name(const QueryUnit *u)
{
    return u->name;
}

UnitFamily query_unit_family(const QueryUnit *u)
{
    return u->family;
}

const char *query_family_name(UnitFamily f)
{
    return f < UNIT_FAMILIES ? FAMILY_NAMES[f] : "?";
}

const QueryUnit *query_metric_unit(const Metric *m)
{
    const QueryUnit *u = query_unit_by_name(metric_unit(m));
    return u ? u : &UNITS[0];
}

static u128 gcd128(u128 a, u128 b)
{
    while (b) {
        u128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int query_convert(Q v, const QueryUnit *from, const QueryUnit *to, Q *out, Error *e)
{
    if (from->family != to->family)
        return error_set(e, "a %s cannot be shown in %s (a %s)", FAMILY_NAMES[from->family],
                         to->name[0] ? to->name : "a plain count", FAMILY_NAMES[to->family]);
    u128 a = v.num, b = v.den, c = from->num * to->den, d = from->den * to->num;
    u128 g = gcd128(a, d);
    if (g > 1)
        a /= g, d /= g;
    g = gcd128(c, b);
    if (g > 1)
        c /= g, b /= g;
    Checked ck = {0};
    out->num = checked_mul(&ck, a, c);
    out->den = checked_mul(&ck, b, d);
    if (ck.overflow)
        return error_set(e, "overflow converting to %s", to->name);
    return 0;
}

const char *query_value_text(Q v, bool never, const QueryUnit *u, int digits, char *buf, size_t n)
{
    char num[48];
    metric_value_text(v, never, digits < 0 ? u->digits : digits, digits < 0, num, sizeof num);
    if (never || !u->name[0])
        snprintf(buf, n, "%s", num);
    else if (u->family == UNIT_RATIO)
        snprintf(buf, n, "%s%s", num, u->name);
    else
        snprintf(buf, n, "%s %s", num, u->name);
    return buf;
}

/* ------------------------------------------------------------------------
 * Queries
 */

static int query_head(const char *head, Query *q, Error *e)
{
    char part[3][QUERY_WORD_MAX] = {"", "", ""};
    int n = 0;
    for (const char *p = head; n < 3; n++) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len >= QUERY_WORD_MAX)
            return error_set(e, "'%s' is too long", head);
        snprintf(part[n], sizeof part[n], "%.*s", (int)len, p);
        if (!colon) {
            n++;
            break;
        }
        p = colon + 1;
        if (n == 2)
            return error_set(e, "'%s': write METRIC[:UNIT[:DIGITS]]", head);
    }
    q->metric = metric_by_id(part[0]);
    if (!q->metric) {
        char list[1024] = "";
        for (size_t i = 0; i < metric_count(); i++) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", metric_id(metric_at(i)));
        }
        return error_set(e, "unknown metric '%s'; expected one of %s", part[0], list);
    }
    q->unit = query_metric_unit(q->metric);
    q->digits = -1;
    /* "slots:0" names no unit: digits alone, where a count needs none. */
    const char *unit = part[1], *digits = part[2];
    if (n == 2 && unit[0] && strspn(unit, "0123456789") == strlen(unit))
        digits = unit, unit = "";
    if (unit[0]) {
        const QueryUnit *u = query_unit_by_name(unit);
        if (!u)
            return error_set(e, "unknown unit '%s' (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, s, ms, us, x, %%)",
                             unit);
        if (u->family != q->unit->family)
            return error_set(e, "unit '%s' is a %s, but %s is a %s", unit, FAMILY_NAMES[u->family], part[0],
                             FAMILY_NAMES[q->unit->family]);
        q->unit = u;
    }
    if (digits[0]) {
        uint64_t d;
        if (units_parse_count(digits, 0, 12, &d, e))
            return error_prefix(e, "digits '%s'", digits);
        q->digits = (int)d;
    }
    return 0;
}

int query_parse(const char *text, Query *q, Error *e)
{
    memset(q, 0, sizeof *q);
    if (strlen(text) >= QUERY_TEXT_MAX)
        return error_set(e, "a query is at most %d characters", QUERY_TEXT_MAX - 1);
    char head[QUERY_WORD_MAX] = "";
    size_t n = 0;
    for (const char *p = text;;) {
        while (*p && ascii_isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        size_t len = 0;
        while (p[len] && !ascii_isspace((unsigned char)p[len]))
            len++;
        if (len >= QUERY_WORD_MAX)
            return error_set(e, "'%.20s...' is too long a word", p);
        if (n == 0) {
            snprintf(head, sizeof head, "%.*s", (int)len, p);
        } else {
            if (n - 1 == QUERY_WORDS_MAX)
                return error_set(e, "a query has at most %d options and values", QUERY_WORDS_MAX);
            snprintf(q->words[n - 1], QUERY_WORD_MAX, "%.*s", (int)len, p);
        }
        n++;
        p += len;
    }
    if (!n)
        return error_set(e, "an empty query: write METRIC[:UNIT[:DIGITS]] [--option value ...]");
    q->n_words = n - 1;
    if (query_head(head, q, e))
        return -1;
    QueryOptions o;
    return query_options(q, &o, e);
}

int query_options(const Query *q, QueryOptions *o, Error *e)
{
    const char *words[QUERY_WORDS_MAX];
    for (size_t i = 0; i < q->n_words; i++)
        words[i] = q->words[i];
    return query_options_parse(words, q->n_words, o, e);
}

int query_workload(const Query *q, QuerySetup *s, const Format **f, Error *e)
{
    QueryOptions o;
    if (query_options(q, &o, e))
        return -1;
    if (o.n_formats > 1)
        return error_set(e, "a query is of one format; --format is given %zu times", o.n_formats);
    if (!o.n_formats) {
        o.formats[o.n_formats++] = format_bf16()->id;
        o.set[QOPT_FORMAT] = true;
    }
    if (query_setup(&o, s, e))
        return -1;
    *f = s->formats[0];
    return 0;
}

int query_eval_on(const Query *q, const Workload *w, const Format *f, QueryValue *v, Error *e)
{
    memset(v, 0, sizeof *v);
    FigureResult r;
    if (metric_eval(q->metric, w, f, &r, e))
        return error_prefix(e, "%s", metric_id(q->metric));
    v->never = r.never;
    if (query_convert(r.value, query_metric_unit(q->metric), q->unit, &v->exact, e))
        return -1;
    v->value = q_to_double(v->exact);
    v->unit = q->unit;
    v->family = q->unit->family;
    query_value_text(v->exact, v->never, q->unit, q->digits, v->text, sizeof v->text);
    metric_value_text(v->exact, v->never, q->digits < 0 ? q->unit->digits : q->digits, q->digits < 0, v->number,
                      sizeof v->number);
    return 0;
}

int query_eval(const Query *q, QueryValue *v, Error *e)
{
    static QuerySetup s;
    const Format *f;
    return query_workload(q, &s, &f, e) || query_eval_on(q, &s.w, f, v, e) ? -1 : 0;
}

int query_run(const char *text, QueryValue *v, Error *e)
{
    static Query q;
    return query_parse(text, &q, e) || query_eval(&q, v, e) ? -1 : 0;
}

static const char *query_words(const Query *q, char *buf, size_t n, size_t at)
{
    for (size_t i = 0; i < q->n_words && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, " %s", q->words[i]);
    return buf;
}

const char *query_format(const Query *q, char *buf, size_t n)
{
    int at = q->digits >= 0 ? snprintf(buf, n, "%s:%s:%d", metric_id(q->metric), q->unit->name, q->digits)
             : q->unit != query_metric_unit(q->metric) ? snprintf(buf, n, "%s:%s", metric_id(q->metric), q->unit->name)
                                                      : snprintf(buf, n, "%s", metric_id(q->metric));
    return query_words(q, buf, n, at < 0 ? 0 : (size_t)at);
}

const char *query_command(const Query *q, char *buf, size_t n)
{
    int at = snprintf(buf, n, "kvlab calc");
    return query_words(q, buf, n, (size_t)at);
}
