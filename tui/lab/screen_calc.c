/* screen_calc.c - the calculator: model, GPU and every workload number
 * editable; the formats table, capacity bars and the speedup-vs-context
 * plot recompute on each keystroke. Figures come from calc/budget.h through
 * tui/report.h, the same code as `kvlab calc`. */
#include "screens.h"

#include "catalog.h"
#include "doc.h"
#include "paths.h"
#include "pin.h"
#include "svg.h"
#include "tui/report.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

#define SERIES_DOUBLINGS 8      // the series when no contexts are typed: 1k, 2k, ... 128k
#define GPU_DEFAULT "h100-sxm"  // the seeds' GPU
#define CONTEXT_DEFAULT (8 * CONTEXT_K)
#define BATCH_DEFAULT 16
#define UTIL_DENOMINATOR 1000000        // the typed share kept to a millionth

_Static_assert(FIELD_CONTEXTS_MAX <= REPORT_CONTEXTS_MAX, "the Contexts field fits the report's series");

typedef struct {
    CatalogList models, gpus;
    const char *model_names[CATALOG_MAX];
    const char *gpu_names[CATALOG_MAX + 1];     // [0] is "none"
    int model_i, gpu_i, loaded_model, loaded_gpu;
    Model model;
    Gpu gpu;
    uint64_t context, batch, tp, residual, block;
    FieldContexts contexts;                     // the series' contexts; none: the doublings
    u128 pool, weights, bandwidth;              // 0: from the GPU or the model
    float util;
    bool mha;
    Report rp;
    Results res;
    /* What keeps figures from the screen, shown in place of them: the whole
     * table (a shape the tensor parallelism cannot split), or the slots (a
     * GPU whose memory the weights fill). The settings stay: another model,
     * GPU or degree may fix it. */
    char no_figures[ERROR_MSG_MAX + 32];
    char no_pool[ERROR_MSG_MAX + 16];
    double xs[REPORT_CONTEXTS_MAX], ys[REPORT_FORMATS_MAX][REPORT_CONTEXTS_MAX];
    /* The formats table as drawn, rebuilt only when the figures changed
     * (`stale`, set by screen_calc_recompute) or the view's width did. */
    bool stale;
    int table_w;                // the width `table` was fitted to
    Table table;
    Pin pin;                    // the pinned baseline, when on
} Calc;

static void *screen_calc_create(Error *e)
{
    Calc *c = lab_state_new(sizeof *c, e);
    if (!c)
        return NULL;
    if (catalog_list(paths_datadir(), CATALOG_MODELS, &c->models, e) ||
        catalog_list(paths_datadir(), CATALOG_GPUS, &c->gpus, e) || !c->models.count) {
        if (!c->models.count)
            error_set(e, "no models in %s/models", paths_datadir());
        free(c);
        return NULL;
    }
    for (size_t i = 0; i < c->models.count; i++) {
        c->model_names[i] = c->models.names[i];
        if (strcmp(c->models.names[i], MODEL_DEFAULT) == 0)
            c->model_i = (int)i;
    }
    c->gpu_names[0] = "none";
    for (size_t i = 0; i < c->gpus.count; i++) {
        c->gpu_names[i + 1] = c->gpus.names[i];
        if (strcmp(c->gpus.names[i], GPU_DEFAULT) == 0)
            c->gpu_i = (int)i + 1;
    }
    c->loaded_model = c->loaded_gpu = -1;
    c->context = CONTEXT_DEFAULT;
    c->batch = BATCH_DEFAULT;
    c->tp = 1;
    c->block = PAGED_BLOCK_DEFAULT;
    c->util = (float)q_to_double(GPU_UTILIZATION_DEFAULT);
    return c;
}

static int screen_calc_pin(void *st, bool on, Error *e)
{
    Calc *c = st;
    char what[200], a[64];
    snprintf(what, sizeof what, "%s%s%s, %s tokens x %llu", c->model.display, c->gpu_i ? " on " : "",
             c->gpu_i ? c->gpu_names[c->gpu_i] : "", units_context(a, sizeof a, c->rp.w.context),
             (unsigned long long)c->rp.w.batch);
    if (on && c->no_figures[0])
        return error_set(e, "%s", c->no_figures);
    if (on)
        pin_set(&c->pin, &c->rp, &c->res, what);
    else
        pin_clear(&c->pin);
    return 0;
}

static size_t screen_calc_fields(void *st, Field *f)
{
    Calc *c = st;
    size_t n = 0;
    f[n++] = (Field){"Model", FK_CHOICE, &c->model_i, 0, c->models.count, 0, c->model_names, NULL};
    f[n++] = (Field){"GPU", FK_CHOICE, &c->gpu_i, 0, c->gpus.count + 1, 0, c->gpu_names, NULL};
    f[n++] = (Field){"Context", FK_CONTEXT, &c->context, 1, (uint64_t)1 << 24, 0, NULL, NULL};
    f[n++] = (Field){"Batch", FK_COUNT, &c->batch, 1, 1u << 20, 1, NULL, NULL};
    f[n++] = (Field){"KV pool", FK_SIZE, &c->pool, 0, 0, GIB, NULL, c->gpu_i ? "from GPU" : "none"};
    f[n++] = (Field){"Weights", FK_SIZE, &c->weights, 0, 0, GB, NULL, "model's"};
    f[n++] = (Field){"Bandwidth", FK_RATE, &c->bandwidth, 0, 0, 100 * GB, NULL, c->gpu_i ? "GPU's" : "none"};
    f[n++] = (Field){"GPU share", FK_FLOAT, &c->util, 0, 1, 0, NULL, NULL};
    f[n++] = (Field){"Tensor parallel", FK_POW2, &c->tp, 1, 1024, 0, NULL, NULL};
    f[n++] = (Field){"KIVI residual", FK_COUNT, &c->residual, 0, 1u << 20, 32, NULL, NULL};
    f[n++] = (Field){"Paged block", FK_POW2, &c->block, 1, 1u << 16, 0, NULL, NULL};
    f[n++] = (Field){"As MHA", FK_TOGGLE, &c->mha, 0, 0, 0, NULL, NULL};
    f[n++] = (Field){"Contexts", FK_CONTEXTS, &c->contexts, 1, (uint64_t)1 << 24, 0, NULL, "1k,2k,...,128k"};
    return n;
}

static int screen_calc_recompute(void *st, Error *e)
{
    Calc *c = st;
    char path[1024];
    if (c->loaded_model != c->model_i) {
        if (catalog_path(paths_datadir(), CATALOG_MODELS, c->model_names[c->model_i], path,
                         sizeof path, e) || model_load(&c->model, path, e))
            return -1;
        c->loaded_model = c->model_i;
    }
    if (c->gpu_i && c->loaded_gpu != c->gpu_i) {
        if (catalog_path(paths_datadir(), CATALOG_GPUS, c->gpu_names[c->gpu_i], path, sizeof path, e) ||
            gpu_load(&c->gpu, path, e))
            return -1;
        c->loaded_gpu = c->gpu_i;
    }
    Report rp;
    memset(&rp, 0, sizeof rp);
    rp.model = c->model.display;
    rp.gpu = c->gpu_i ? &c->gpu : NULL;
    workload_init(&rp.w, &c->model.shape, c->context, c->batch);
    rp.w.tp = c->tp;
    rp.w.mha = c->mha;
    rp.w.block_tokens = c->block;
    rp.w.kv.residual = c->residual;
    rp.w.weights = c->weights ? c->weights : c->model.weight_bytes;
    rp.w.bandwidth = c->bandwidth ? c->bandwidth : (c->gpu_i ? c->gpu.bandwidth : 0);
    Q util = q_make((u128)((double)c->util * UTIL_DENOMINATOR + 0.5), UTIL_DENOMINATOR);
    Error why;
    c->no_pool[0] = c->no_figures[0] = '\0';
    if (c->pool)
        rp.w.pool = c->pool;
    else if (c->gpu_i && workload_pool_from_gpu(&rp.w, c->gpu.memory, util, 0, &why))
        snprintf(c->no_pool, sizeof c->no_pool, "no KV pool: %s", why.msg);
    for (size_t i = 0; i < format_count(); i++)
        rp.formats[rp.n_formats++] = format_at(i);
    for (size_t k = 0; k < c->contexts.n; k++)
        rp.contexts[rp.n_contexts++] = c->contexts.tokens[k];
    for (size_t k = 0; k < SERIES_DOUBLINGS && !c->contexts.n; k++)
        rp.contexts[rp.n_contexts++] = (uint64_t)CONTEXT_K << k;
    if (!rp.w.bandwidth)
        rp.n_contexts = 0;
    static Results res;
    c->rp = rp;
    c->stale = true;
    if (report_compute(&rp, &res, &why)) {
        snprintf(c->no_figures, sizeof c->no_figures, "no figures with these settings: %s", why.msg);
        return 0;
    }
    c->res = res;
    for (size_t k = 0; k < rp.n_contexts; k++) {
        c->xs[k] = (double)rp.contexts[k];
        for (size_t i = 0; i < rp.n_formats; i++)
            c->ys[i][k] = q_to_double(res.series[i][k]);
    }
    return 0;
}

/* The formats to plot: one of each size, so lines do not sit on each other. */
static const char *const PLOTTED[] = {"bf16", "fp8_e4m3", "int8", "int4", "int2", "nvfp4", "mxfp4"};
#define N_PLOTTED (sizeof PLOTTED / sizeof PLOTTED[0])

static size_t screen_calc_series(Calc *c, Series *s)
{
    size_t n = 0;
    for (size_t i = 0; i < c->rp.n_formats; i++)
        for (size_t k = 0; k < N_PLOTTED; k++)
            if (strcmp(c->rp.formats[i]->id, PLOTTED[k]) == 0 && c->rp.n_contexts)
                s[n++] = (Series){c->rp.formats[i]->id, c->xs, c->ys[i], c->rp.n_contexts};
    return n;
}

static size_t screen_calc_bars(Calc *c, BarItem *b, char text[][48])
{
    size_t n = 0;
    for (size_t i = 0; i < c->rp.n_formats && c->res.r[0].has_slots; i++) {
        const FormatResult *r = &c->res.r[i];
        char a[48];
        snprintf(text[n], 48, "%s", u128_str(a, sizeof a, r->slots, true));
        b[n] = (BarItem){r->format->id, (double)r->slots, text[n]};
        n++;
    }
    return n;
}

/* ------------------------------------------------------------------------
 * The view: one document (doc.h), the bars beside the plot where the
 * window is wide, under each other where it is not, scrolling when it is
 * too short for them.
 */

#define WIDE 80                 // columns for the bars and the plot side by side

/* What the KV pool, weights and bandwidth are, per GPU under TP. */
static void screen_calc_summary(const Calc *c, char *line, size_t n)
{
    const Workload *w = &c->rp.w;
    const bool tp = w->tp > 1;
    char a[64], b[64], d[64], pool[160] = "", weights[160], bw[96];
    if (w->pool)
        snprintf(pool, sizeof pool, "KV pool %s = %s%s%s; ", units_gib(a, sizeof a, w->pool, 2),
                 units_gb(b, sizeof b, w->pool, 2), tp ? " per GPU" : "", c->pool ? "" : ", from the GPU");
    else if (!c->no_pool[0])
        snprintf(pool, sizeof pool, "no KV pool (give a GPU or a KV pool); ");
    if (tp)
        snprintf(weights, sizeof weights, "weights %s for the whole model, %s per GPU",
                 units_gb(a, sizeof a, w->weights, 2), units_gb(b, sizeof b, (w->weights + w->tp - 1) / w->tp, 2));
    else
        snprintf(weights, sizeof weights, "weights %s", units_gb(a, sizeof a, w->weights, 2));
    if (w->bandwidth)
        snprintf(bw, sizeof bw, "bandwidth %s%s", units_rate(d, sizeof d, w->bandwidth), tp ? " per GPU" : "");
    else
        snprintf(bw, sizeof bw, "no bandwidth");
    if (tp)
        snprintf(line, n, "tensor parallel over %llu GPUs: the table is per GPU. %s%s; %s",
                 (unsigned long long)w->tp, pool, weights, bw);
    else
        snprintf(line, n, "%s%s; %s", pool, weights, bw);
}

/* The sequences each format's cache fits in the pool, one bar per line. */
static void screen_calc_bars_layout(Calc *c, Doc *d)
{
    BarItem items[16];
    char text[16][48];
    doc_bars(d, "Sequences the pool holds", items, screen_calc_bars(c, items, text),
             c->no_pool[0] ? "none: see above" : "give a GPU or a KV pool");
}

/* The plot under its title, in a block of h lines shown whole or not at
 * all: a plot is not cut into lines. */
static void screen_calc_plot_layout(Calc *c, Doc *d, int h)
{
    Series s[16];
    size_t ns = screen_calc_series(c, s);
    Rect r;
    if (!doc_block(d, h, &r) || !doc_whole(d, r))
        return;
    draw_title((Rect){r.y, r.x, 1, r.w}, "Step-floor speedup over BF16 by context");
    if (ns)
        draw_plot((Rect){r.y + 1, r.x, r.h - 1, r.w}, s, ns, true, "context (tokens)", "x");
    else
        put_text(r.y + 1, r.x, r.w, crt_attr(ROLE_DIM), "give a GPU or a bandwidth");
}

static void screen_calc_layout(void *st, Doc *d)
{
    Calc *c = st;
    char a[64], line[480];
    const Workload *w = &c->rp.w;
    snprintf(line, sizeof line, "%s, %s tokens x %llu", c->model.display,
             units_context(a, sizeof a, w->context), (unsigned long long)w->batch);
    doc_title(d, line);
    screen_calc_summary(c, line, sizeof line);
    doc_text(d, 0, crt_attr(ROLE_DIM), line);
    if (c->no_figures[0]) {     // nothing more can be shown: why, in place of it all
        doc_text(d, 0, crt_attr(ROLE_WARN), c->no_figures);
        return;
    }
    if (c->no_pool[0])
        doc_text(d, 0, crt_attr(ROLE_WARN), c->no_pool);
    if (report_fit_warning(&c->res, line, sizeof line))
        doc_text(d, 0, crt_attr(ROLE_WARN), line);
    doc_gap(d, 1);
    if (c->pin.on) {
        pin_layout(&c->pin, &c->rp, &c->res, d);
        doc_gap(d, 1);
    }
    if (c->stale || c->table_w != d->win.w) {
        report_table(&c->rp, &c->res, &c->table);
        report_table_fit(&c->table, d->win.w);
        c->table_w = d->win.w;
        c->stale = false;
    }
    doc_table(d, &c->table);
    doc_gap(d, 1);
    if (d->win.w >= WIDE) {     // the bars beside the plot
        const int bw = d->win.w * 2 / 5, h = doc_fill(d, 0, 1 + PLOT_MIN_ROWS);   // a title, the plot
        Doc left = doc_beside(d, 0, bw - 2), right = doc_beside(d, bw, d->win.w - bw);
        screen_calc_bars_layout(c, &left);
        screen_calc_plot_layout(c, &right, h);
        doc_below(d, &left, &right);
        return;
    }
    screen_calc_bars_layout(c, d);
    doc_gap(d, 1);
    screen_calc_plot_layout(c, d, doc_fill(d, 0, 1 + PLOT_MIN_ROWS));
}

/* In a lesson's page (a speedup widget): the plot as the screen draws
 * it, then the speedup at the longest context in figures. */
static void screen_calc_inline(void *st, Doc *d)
{
    Calc *c = st;
    char line[480], a[64];
    snprintf(line, sizeof line, "%s, batch %llu%s%s", c->model.display, (unsigned long long)c->rp.w.batch,
             c->gpu_i ? " on " : "", c->gpu_i ? c->gpu_names[c->gpu_i] : "");
    doc_text(d, 0, crt_attr(ROLE_DIM), line);
    if (c->no_figures[0]) {
        doc_text(d, 0, crt_attr(ROLE_WARN), c->no_figures);
        return;
    }
    screen_calc_plot_layout(c, d, 1 + PLOT_MIN_ROWS);
    Series s[16];
    const size_t ns = screen_calc_series(c, s);
    if (!ns)
        return;
    size_t len = (size_t)snprintf(line, sizeof line, "at %s tokens:",
                                  units_context(a, sizeof a, c->rp.contexts[c->rp.n_contexts - 1]));
    for (size_t i = 0; i < ns && len < sizeof line; i++)
        len += (size_t)snprintf(line + len, sizeof line - len, " %s %.2fx%s", s[i].name, s[i].y[s[i].n - 1],
                                i + 1 < ns ? "," : "");
    doc_text(d, 0, crt_attr(ROLE_NORMAL), line);
}

static int screen_calc_export(void *st, FILE *csv, FILE *svg, Error *e)
{
    Calc *c = st;
    if (c->no_figures[0])
        return error_set(e, "%s", c->no_figures);
    fprintf(csv, "format,bytes_per_sequence,bytes,slots,step_ms,speedup");
    for (size_t k = 0; k < c->rp.n_contexts; k++)   // the plotted series, a column a context
        fprintf(csv, ",speedup_at_%llu", (unsigned long long)c->rp.contexts[k]);
    for (size_t i = 0; i < c->rp.n_formats; i++) {
        const FormatResult *r = &c->res.r[i];
        char a[64], b[64], d[64], f[64], g[64];
        fprintf(csv, "\n%s,%s,%s,%s,%s,%s", r->format->id,
                u128_str(a, sizeof a, r->fp.bytes_per_sequence, false),
                u128_str(b, sizeof b, r->fp.bytes, false),
                r->has_slots ? u128_str(d, sizeof d, r->slots, false) : "",
                r->has_step ? q_str(f, sizeof f, r->step_ms, 6, true) : "",
                r->has_step ? q_str(g, sizeof g, r->speedup, 6, true) : "");
        for (size_t k = 0; k < c->rp.n_contexts; k++)
            fprintf(csv, ",%s", q_str(g, sizeof g, c->res.series[i][k], 6, true));
    }
    fprintf(csv, "\n");
    Series s[16];
    size_t ns = screen_calc_series(c, s);
    char title[160];
    snprintf(title, sizeof title, "%s: step-floor speedup over BF16, batch %llu",
             c->model.display, (unsigned long long)c->rp.w.batch);
    if (ns) {
        svg_plot(svg, title, s, ns, true, "context (tokens)", "speedup over BF16");
    } else {
        BarItem items[16];
        char text[16][48];
        svg_bars(svg, "Sequences the pool holds", items, screen_calc_bars(c, items, text));
    }
    return 0;
}

static const Table *screen_calc_columns(void *st)
{
    const Calc *c = st;
    return c->no_figures[0] ? NULL : &c->table;
}

static const ScreenOption OPTIONS[] = {
    {"--model", "Model", true, NULL, NULL},
    {"--gpu", "GPU", true, NULL, "none"},
    {"--context", "Context", true, NULL, NULL},
    {"--batch", "Batch", true, NULL, NULL},
    {"--pool", "KV pool", true, NULL, NULL},
    {"--weights", "Weights", true, NULL, NULL},
    {"--bandwidth", "Bandwidth", true, NULL, NULL},
    {"--utilization", "GPU share", true, NULL, NULL},
    {"--tp", "Tensor parallel", true, NULL, NULL},
    {"--residual", "KIVI residual", true, NULL, NULL},
    {"--block", "Paged block", true, NULL, NULL},
    {"--mha", "As MHA", false, "on", NULL},
    {"--contexts", "Contexts", true, NULL, NULL},
};

const ScreenDef SCREEN_CALC = {
    .id = "calc",
    .name = "Calculator",
    .help = "Every number on the left can be changed: the table shows each format's bytes per "
            "element (metadata included), the cache per sequence and in total (binary and decimal "
            "units), the per-tensor scale bytes, how many whole sequences the KV pool holds (and "
            "in paged blocks), the decode-step floor ((weights + KV) / bandwidth) and its speedup "
            "over BF16, and the context at which the cache outweighs the weights. The KV pool "
            "comes from the GPU's memory times the GPU share, less the weights, unless you type "
            "one; where the weights leave no room for it, or a typed pool does not fit beside "
            "them, the screen says so and what would fix it, and shows the rest as a what-if. "
            "Under tensor parallelism the table is per GPU. The same figures come out of "
            "`kvlab calc`.",
    .create = screen_calc_create,
    .destroy = free,
    .fields = screen_calc_fields,
    .recompute = screen_calc_recompute,
    .layout = screen_calc_layout,
    .export = screen_calc_export,
    .pin = screen_calc_pin,
    .options = OPTIONS,
    .n_options = sizeof OPTIONS / sizeof OPTIONS[0],
    .columns = screen_calc_columns,
    .inline_layout = screen_calc_inline,
};
