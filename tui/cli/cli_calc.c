/* cli_calc.c - `kvlab calc`: the KV-cache calculator on the command line.
 *
 * Starts from a scenario (the default one when no shape is given) or from a
 * model or typed shape, applies every option on top, and prints the formats
 * table or its JSON. Every figure comes from calc/budget.h. */
#include "cli.h"
#include "commands.h"
#include "tui/report.h"

#include "catalog.h"
#include "paths.h"
#include "scenario.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_SCENARIO "pool-20gib"
#define CONTEXT_DEFAULT (8 * CONTEXT_K)     // a typed shape's: "8k" in the help

enum {
    O_SCENARIO, O_MODEL, O_LAYERS, O_KV_HEADS, O_Q_HEADS, O_HEAD_DIM, O_MHA, O_CONTEXT, O_BATCH,
    O_FORMAT, O_POOL, O_GPU, O_MEMORY, O_UTIL, O_RESERVE, O_WEIGHTS, O_BANDWIDTH, O_TP, O_BLOCK,
    O_RESIDUAL, O_HEAD_SCALES, O_BF16_LAYERS, O_BF16_SLIDING, O_CONTEXTS, O_JSON, O_CSV, O_HELP,
    O_COUNT
};

static const OptSpec OPTS[O_COUNT] = {
    [O_SCENARIO] = {"scenario", "NAME", "start from a walk-through scenario (kvlab scenario list)"},
    [O_MODEL] = {"model", "NAME", "a model from the data directory (kvlab models), e.g. llama-3.1-8b"},
    [O_LAYERS] = {"layers", "L", "or type a shape: the layers ..."},
    [O_KV_HEADS] = {"kv-heads", "H", "... the KV heads ..."},
    [O_Q_HEADS] = {"q-heads", "H", "... the query heads (without them MHA or GQA is unknown: --mha and --tp need "
                                   "them) ..."},
    [O_HEAD_DIM] = {"head-dim", "D", "... and the head dimension"},
    [O_MHA] = {"mha", NULL, "the same model with one KV head per query head"},
    [O_CONTEXT] = {"context", "S", "tokens per sequence: 8192, 8k, 128K (default 8k)"},
    [O_BATCH] = {"batch", "B", "sequences (default 1; the default scenario has 16)"},
    [O_FORMAT] = {"format", "F", "a storage format, repeatable (default all; kvlab formats)"},
    [O_POOL] = {"pool", "SIZE", "bytes for the KV cache: 20GiB, 60GB"},
    [O_GPU] = {"gpu", "NAME", "a GPU from the data directory (kvlab gpus): its bandwidth, and the pool unless --pool "
                              "is given"},
    [O_MEMORY] = {"memory", "SIZE", "the GPU's memory, instead of what its driver reports"},
    [O_UTIL] = {"utilization", "FRACTION", "the share of GPU memory for weights and KV cache (default 0.9)"},
    [O_RESERVE] = {"reserve", "SIZE", "GPU memory kept back for the runtime (default 0)"},
    [O_WEIGHTS] = {"weights", "SIZE", "bytes of weights (default: the model's, in BF16)"},
    [O_BANDWIDTH] = {"bandwidth", "RATE", "memory bandwidth: 3.35TB/s, 3352GB/s"},
    [O_TP] = {"tp", "N", "tensor-parallel degree: every figure per GPU"},
    [O_BLOCK] = {"block", "N", "paged-attention block size in tokens (default 16)"},
    [O_RESIDUAL] = {"residual", "R", "keep the most recent R tokens in BF16 (KIVI)"},
    [O_HEAD_SCALES] = {"head-scales", NULL, "FP8 and NVFP4 tensor scales per KV head, not per layer"},
    [O_BF16_LAYERS] = {"bf16-layers", "LIST", "keep these layers in BF16: 0,1,31"},
    [O_BF16_SLIDING] = {"bf16-sliding", NULL, "keep the sliding-window layers in BF16"},
    [O_CONTEXTS] = {"contexts", "LIST", "the speedup over BF16 at each context: 1k,8k,32k"},
    [O_JSON] = {"json", NULL, "print one JSON object"},
    [O_CSV] = {"csv", NULL, "print the formats table as CSV"},
    [O_HELP] = {"help", NULL, "show this help"},
};

static const CmdSpec CMD = {
    .name = "calc",
    .usage = "usage: kvlab calc [--scenario NAME | --model NAME | --layers L --kv-heads H "
             "--head-dim D [--q-heads H]] [options]\n\n"
             "KV-cache footprint, slots, step floors and speedups per format.\n"
             "With no shape, the default scenario (" DEFAULT_SCENARIO ") is used.",
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = O_FORMAT,
    .max_words = 0,
};

static const ShapeOptions SHAPE = {
    {O_LAYERS, O_KV_HEADS, O_Q_HEADS, O_HEAD_DIM}, {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX}};

/* Everything needed to fill a Report, with the pool decided last. */
typedef struct {
    Report rp;
    char model[96];
    Gpu gpu;
    bool has_gpu, pool_given;
    Q util;
    u128 reserve;
} Setup;

static int cli_calc_from_scenario(Setup *s, const char *name, Error *e)
{
    static Scenario sc;
    char path[1024];
    if (catalog_path(paths_datadir(), CATALOG_SCENARIOS, name, path, sizeof path, e) ||
        scenario_load(&sc, path, paths_datadir(), e))
        return -1;
    snprintf(s->model, sizeof s->model, "%s", sc.model.display);
    s->rp.model = s->model;
    s->rp.scenario = sc.name;
    s->rp.w = sc.w;
    s->gpu = sc.gpu;
    s->has_gpu = sc.has_gpu;
    s->pool_given = sc.pool_given;
    s->util = sc.utilization;
    s->reserve = sc.reserve;
    s->rp.n_formats = sc.n_formats;
    memcpy(s->rp.formats, sc.formats, sc.n_formats * sizeof sc.formats[0]);
    return 0;
}

static int cli_calc_shape_options(const Given *g, Setup *s, Error *e)
{
    bool typed = cli_shape_given(g, &SHAPE);
    if (g->set[O_SCENARIO] && (typed || g->set[O_MODEL]))
        return error_set(e, "--scenario fixes the model; drop it to give --model or a shape");
    if (typed && g->set[O_MODEL])
        return error_set(e, "give --model or --layers/--kv-heads/--head-dim, not both");
    Shape shape;
    if (g->set[O_MODEL]) {
        static Model m;
        char path[1024];
        if (catalog_path(paths_datadir(), CATALOG_MODELS, g->val[O_MODEL], path, sizeof path, e) ||
            model_load(&m, path, e))
            return error_prefix(e, "--model");
        snprintf(s->model, sizeof s->model, "%s", m.display);
        s->rp.model = s->model;
        s->rp.scenario = NULL;
        shape = m.shape;
        s->rp.w.weights = m.weight_bytes;
    } else if (typed) {
        if (cli_shape(g, OPTS, &SHAPE, &shape, e))
            return -1;
        s->rp.q_heads_unknown = !g->set[O_Q_HEADS];
        s->rp.model = NULL;
        s->rp.scenario = NULL;
        s->rp.w.weights = 0;
    } else {
        return 0;
    }
    s->rp.w.shape = shape;
    return 0;
}

static int cli_calc_workload_options(const Given *g, Setup *s, Error *e)
{
    Workload *w = &s->rp.w;
    if (g->set[O_CONTEXT] && units_parse_context(g->val[O_CONTEXT], &w->context, e))
        return error_prefix(e, "--context");
    if (cli_count(g, OPTS, O_BATCH, 1, UINT32_MAX, &w->batch, e) ||
        cli_count(g, OPTS, O_TP, 1, 1u << 16, &w->tp, e) ||
        cli_count(g, OPTS, O_BLOCK, 1, 1u << 20, &w->block_tokens, e))
        return -1;
    if (g->set[O_RESIDUAL] && units_parse_context(g->val[O_RESIDUAL], &w->kv.residual, e))
        return error_prefix(e, "--residual");
    if (g->set[O_MHA])
        w->mha = true;
    if (g->set[O_HEAD_SCALES])
        w->kv.head_scales = true;
    if (g->set[O_BF16_SLIDING])
        w->kv.bf16_sliding = true;
    if (g->set[O_BF16_LAYERS] &&
        cli_parse_u64s("bf16-layers", g->val[O_BF16_LAYERS], w->kv.bf16_layers, KV_OVERRIDES_MAX,
                       &w->kv.n_bf16_layers, cli_parse_layer, e))
        return -1;
    if (g->set[O_CONTEXTS] &&
        cli_parse_u64s("contexts", g->val[O_CONTEXTS], s->rp.contexts, REPORT_CONTEXTS_MAX,
                       &s->rp.n_contexts, units_parse_context, e))
        return -1;
    return 0;
}

/* A size written without a unit and below this is surely a unit left out
 * (--pool 20 is 20 bytes): it is taken as given, with a note on stderr. */
#define BARE_SIZE_NOTE ((u128)1 << 20)

static int cli_calc_size_opt(const Given *g, int k, u128 *out, Error *e)
{
    if (!g->set[k])
        return 0;
    if (units_parse_size(g->val[k], out, e))
        return error_prefix(e, "--%s", OPTS[k].name);
    if (*out < BARE_SIZE_NOTE && units_size_is_bare(g->val[k])) {
        char v[64];
        text_escape(v, sizeof v, g->val[k], false);
        fprintf(stderr, "kvlab calc: note: --%s %s is %s bytes; a unit was probably meant (%sGiB or %sGB?)\n",
                OPTS[k].name, v, v, v, v);
    }
    return 0;
}

static int cli_calc_machine_options(const Given *g, Setup *s, Error *e)
{
    Workload *w = &s->rp.w;
    if (g->set[O_GPU]) {
        char path[1024];
        if (catalog_path(paths_datadir(), CATALOG_GPUS, g->val[O_GPU], path, sizeof path, e) ||
            gpu_load(&s->gpu, path, e))
            return error_prefix(e, "--gpu");
        s->has_gpu = true;
        w->bandwidth = s->gpu.bandwidth;
        s->pool_given = false;
    }
    if (cli_calc_size_opt(g, O_MEMORY, &s->gpu.memory, e) || cli_calc_size_opt(g, O_WEIGHTS, &w->weights, e))
        return -1;
    if (g->set[O_BANDWIDTH] && units_parse_rate(g->val[O_BANDWIDTH], &w->bandwidth, e))
        return error_prefix(e, "--bandwidth");
    if (g->set[O_UTIL] && units_parse_fraction(g->val[O_UTIL], &s->util, e))
        return error_prefix(e, "--utilization");
    if (cli_calc_size_opt(g, O_RESERVE, &s->reserve, e))
        return -1;
    if (g->set[O_POOL]) {
        if (cli_calc_size_opt(g, O_POOL, &w->pool, e))
            return -1;
        s->pool_given = true;
    }
    if ((g->set[O_UTIL] || g->set[O_RESERVE] || g->set[O_MEMORY]) && !s->has_gpu)
        return error_set(e, "--memory, --utilization and --reserve need --gpu");
    if (!s->pool_given && s->has_gpu) {
        if (!w->weights)
            return error_set(e, "--gpu with a typed shape needs --weights (or give --pool)");
        if (workload_pool_from_gpu(w, s->gpu.memory, s->util, s->reserve, e))
            return error_prefix(e, "--gpu");
    } else if (!s->pool_given) {
        w->pool = 0;
    }
    s->rp.gpu = s->has_gpu ? &s->gpu : NULL;
    return 0;
}

static int cli_calc_format_options(const Given *g, Setup *s, Error *e)
{
    if (!g->n_repeat) {
        if (!s->rp.n_formats)
            for (size_t i = 0; i < format_count(); i++)
                s->rp.formats[s->rp.n_formats++] = format_at(i);
        return 0;
    }
    s->rp.n_formats = 0;
    for (size_t i = 0; i < g->n_repeat; i++) {
        const Format *f = format_by_id(g->repeat[i]);
        if (!f) {
            char list[256];
            return error_set(e, "--format: unknown format '%s'; expected one of %s",
                             g->repeat[i], format_id_list(list, sizeof list));
        }
        for (size_t k = 0; k < s->rp.n_formats; k++)
            if (s->rp.formats[k] == f)
                return error_set(e, "--format: %s is given twice", f->id);
        s->rp.formats[s->rp.n_formats++] = f;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Options that mean something only with others: once everything is read,
 * an option that would change nothing is refused, saying what it needs.
 */

static bool cli_calc_quantized_format(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    for (size_t i = 0; i < s->rp.n_formats; i++)
        if (!format_is_full_precision(s->rp.formats[i]))
            return true;
    return false;
}

static bool cli_calc_tensor_scaled_format(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    for (size_t i = 0; i < s->rp.n_formats; i++)
        if (s->rp.formats[i]->tensor_scale_bytes)
            return true;
    return false;
}

static bool cli_calc_sliding_layers(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    return shape_layers_of_kind(&s->rp.w.shape, ATTN_SLIDING) > 0;
}

static bool cli_calc_pool_known(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    return s->rp.w.pool > 0;
}

static bool cli_calc_pool_from_gpu(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    return !s->pool_given;
}

static bool cli_calc_q_heads_known(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    return !s->rp.q_heads_unknown;
}

static bool cli_calc_grouped_query(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    return s->rp.w.shape.q_heads != s->rp.w.shape.kv_heads;
}

/* Why a BF16 option does nothing where every format is BF16 or FP16. */
#define ALL_16_BIT "; every --format here is 16-bit already"

static const OptRule RULES[] = {
    {O_RESIDUAL, cli_calc_quantized_format, "keeps recent tokens in BF16 ahead of a quantized format" ALL_16_BIT},
    {O_BF16_LAYERS, cli_calc_quantized_format, "keeps layers in BF16 instead of a quantized format" ALL_16_BIT},
    {O_BF16_SLIDING, cli_calc_quantized_format, "keeps layers in BF16 instead of a quantized format" ALL_16_BIT},
    {O_BF16_SLIDING, cli_calc_sliding_layers, "needs a model with sliding-window layers"},
    {O_HEAD_SCALES, cli_calc_tensor_scaled_format, "applies to formats with per-tensor scales (see kvlab formats)"},
    {O_BLOCK, cli_calc_pool_known, "sizes the paged slots, which need a pool (--pool or --gpu)"},
    {O_UTIL, cli_calc_pool_from_gpu, "sizes the pool from the GPU's memory, but the pool is given"},
    {O_RESERVE, cli_calc_pool_from_gpu, "sizes the pool from the GPU's memory, but the pool is given"},
    {O_MHA, cli_calc_q_heads_known, "needs --q-heads: a typed shape has no query heads to match without them"},
    {O_MHA, cli_calc_grouped_query, "changes nothing: the shape has a KV head per query head already"},
    {O_TP, cli_calc_q_heads_known, "needs --q-heads: tensor parallelism splits the query heads too"},
};

/* ------------------------------------------------------------------------
 * The workload as a whole: calc's own checks (budget.h), made once every
 * option is read, so that each error names the option behind it.
 */

/* The options whose values enter the figures' sizes: an overflow's. */
static const int SIZE_OPTS[] = {O_CONTEXT, O_BATCH, O_BLOCK, O_RESIDUAL, O_WEIGHTS, O_POOL, O_BANDWIDTH,
                                O_LAYERS, O_KV_HEADS, O_HEAD_DIM, O_MODEL};

static int cli_calc_workload_checks(const Given *g, const Setup *s, Error *e)
{
    const Workload *w = &s->rp.w;
    Shape full = w->mha ? shape_as_mha(&w->shape) : w->shape, per;
    uint64_t replicas;
    if (shape_split_tp(&full, w->tp ? w->tp : 1, &per, &replicas, e))
        return g->set[O_TP] || g->set[O_MHA] ? error_prefix(e, "--%s", OPTS[g->set[O_TP] ? O_TP : O_MHA].name) : -1;
    if (kv_options_check(&w->shape, &w->kv, e))
        return error_prefix(e, "--bf16-layers");
    for (size_t i = 0; i < s->rp.n_formats; i++) {
        FormatResult r;
        if (budget_compute(w, s->rp.formats[i], &r, e)) {
            char opts[256] = "";
            for (size_t k = 0; k < sizeof SIZE_OPTS / sizeof SIZE_OPTS[0]; k++)
                if (g->set[SIZE_OPTS[k]]) {
                    size_t l = strlen(opts);
                    snprintf(opts + l, sizeof opts - l, "%s--%s", l ? ", " : "", OPTS[SIZE_OPTS[k]].name);
                }
            return opts[0] ? error_prefix(e, "%s", opts) : -1;
        }
    }
    return 0;
}

int cmd_calc(int argc, char **argv)
{
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    Error e;
    static Setup s;
    memset(&s, 0, sizeof s);
    s.util = GPU_UTILIZATION_DEFAULT;
    bool shape_given = g.set[O_MODEL] || cli_shape_given(&g, &SHAPE);
    if (g.set[O_SCENARIO] || !shape_given) {
        if (cli_calc_from_scenario(&s, g.set[O_SCENARIO] ? g.val[O_SCENARIO] : DEFAULT_SCENARIO, &e))
            return cli_error("calc", &e);
    } else {
        Shape none = {0};
        workload_init(&s.rp.w, &none, CONTEXT_DEFAULT, 1);
    }
    if (cli_calc_shape_options(&g, &s, &e) || cli_calc_workload_options(&g, &s, &e) ||
        cli_calc_machine_options(&g, &s, &e) || cli_calc_format_options(&g, &s, &e) ||
        cli_rules(&g, OPTS, RULES, sizeof RULES / sizeof RULES[0], &s, &e) ||
        cli_calc_workload_checks(&g, &s, &e))
        return cli_error("calc", &e);
    if (g.set[O_JSON]) {
        cJSON *j = report_json(&s.rp, &e);
        if (!j || json_emit(j, &e))
            return cli_error("calc", &e);
        return EXIT_OK;
    }
    if (report_text(&s.rp, g.set[O_CSV], stdout, &e))
        return cli_error("calc", &e);
    return EXIT_OK;
}
