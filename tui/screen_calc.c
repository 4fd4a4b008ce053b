/* screen_calc.c - the calculator: model, GPU and every workload number
 * editable; the formats table, capacity bars and the speedup-vs-context
 * plot recompute on each keystroke. Figures come from calc/budget.h through
 * report.h, the same code as `kvlab calc`. */
#include "screens.h"

#include "catalog.h"
#include "cli.h"
#include "report.h"
#include "svg.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

#define SERIES_POINTS 8         // 1k, 2k, ... 128k

typedef struct {
    CatalogList models, gpus;
    const char *model_names[CATALOG_MAX];
    const char *gpu_names[CATALOG_MAX + 1];     // [0] is "none"
    int model_i, gpu_i, loaded_model, loaded_gpu;
    Model model;
    Gpu gpu;
    uint64_t context, batch, tp, residual, block;
    u128 pool, weights, bandwidth;              // 0: from the GPU or the model
    float util;
    bool mha;
    Report rp;
    Results res;
    double xs[SERIES_POINTS], ys[16][SERIES_POINTS];
    /* The formats table as drawn, rebuilt only when the figures changed
     * (`stale`, set by recompute) or the view's width did. */
    bool stale;
    int table_w;                // the width `table` was fitted to
    Table table;
} Calc;

static void *create(Error *e)
{
    Calc *c = lab_state_new(sizeof *c, e);
    if (!c)
        return NULL;
    if (catalog_list(cli_datadir(), CATALOG_MODELS, &c->models, e) ||
        catalog_list(cli_datadir(), CATALOG_GPUS, &c->gpus, e) || !c->models.count) {
        if (!c->models.count)
            error_set(e, "no models in %s/models", cli_datadir());
        free(c);
        return NULL;
    }
    for (size_t i = 0; i < c->models.count; i++) {
        c->model_names[i] = c->models.names[i];
        if (strcmp(c->models.names[i], "llama-3.1-8b") == 0)
            c->model_i = (int)i;
    }
    c->gpu_names[0] = "none";
    for (size_t i = 0; i < c->gpus.count; i++) {
        c->gpu_names[i + 1] = c->gpus.names[i];
        if (strcmp(c->gpus.names[i], "h100-sxm") == 0)
            c->gpu_i = (int)i + 1;
    }
    c->loaded_model = c->loaded_gpu = -1;
    c->context = 8192;
    c->batch = 16;
    c->tp = 1;
    c->block = PAGED_BLOCK_DEFAULT;
    c->util = 0.9f;
    return c;
}

static size_t fields(void *st, Field *f)
{
    Calc *c = st;
    size_t n = 0;
    f[n++] = (Field){"Model", FK_CHOICE, &c->model_i, 0, c->models.count, 0, c->model_names, NULL};
    f[n++] = (Field){"GPU", FK_CHOICE, &c->gpu_i, 0, c->gpus.count + 1, 0, c->gpu_names, NULL};
    f[n++] = (Field){"Context", FK_CONTEXT, &c->context, 1, (uint64_t)1 << 24, 0, NULL, NULL};
    f[n++] = (Field){"Batch", FK_COUNT, &c->batch, 1, 1u << 20, 1, NULL, NULL};
    f[n++] = (Field){"KV pool", FK_SIZE, &c->pool, 0, 0, GIB, NULL, "from GPU"};
    f[n++] = (Field){"Weights", FK_SIZE, &c->weights, 0, 0, GB, NULL, "model's"};
    f[n++] = (Field){"Bandwidth", FK_RATE, &c->bandwidth, 0, 0, 100 * GB, NULL, "GPU's"};
    f[n++] = (Field){"GPU share", FK_FLOAT, &c->util, 0, 1, 0, NULL, NULL};
    f[n++] = (Field){"Tensor parallel", FK_POW2, &c->tp, 1, 1024, 0, NULL, NULL};
    f[n++] = (Field){"KIVI residual", FK_COUNT, &c->residual, 0, 1u << 20, 32, NULL, NULL};
    f[n++] = (Field){"Paged block", FK_POW2, &c->block, 1, 1u << 16, 0, NULL, NULL};
    f[n++] = (Field){"As MHA", FK_TOGGLE, &c->mha, 0, 0, 0, NULL, NULL};
    return n;
}

static int recompute(void *st, Error *e)
{
    Calc *c = st;
    char path[1024];
    if (c->loaded_model != c->model_i) {
        if (catalog_path(cli_datadir(), CATALOG_MODELS, c->model_names[c->model_i], path,
                         sizeof path, e) || model_load(&c->model, path, e))
            return -1;
        c->loaded_model = c->model_i;
    }
    if (c->gpu_i && c->loaded_gpu != c->gpu_i) {
        if (catalog_path(cli_datadir(), CATALOG_GPUS, c->gpu_names[c->gpu_i], path, sizeof path, e) ||
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
    Q util = q_make((u128)((double)c->util * 1000000 + 0.5), 1000000);
    if (c->pool)
        rp.w.pool = c->pool;
    else if (c->gpu_i && workload_pool_from_gpu(&rp.w, c->gpu.memory, util, 0, e))
        return -1;
    for (size_t i = 0; i < format_count(); i++)
        rp.formats[rp.n_formats++] = format_at(i);
    for (size_t k = 0; k < SERIES_POINTS; k++)
        rp.contexts[rp.n_contexts++] = (uint64_t)1024 << k;
    if (!rp.w.bandwidth)
        rp.n_contexts = 0;
    static Results res;
    if (report_compute(&rp, &res, e))
        return -1;
    c->rp = rp;
    c->res = res;
    c->stale = true;
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

static size_t series(Calc *c, Series *s)
{
    size_t n = 0;
    for (size_t i = 0; i < c->rp.n_formats; i++)
        for (size_t k = 0; k < N_PLOTTED; k++)
            if (strcmp(c->rp.formats[i]->id, PLOTTED[k]) == 0 && c->rp.n_contexts)
                s[n++] = (Series){c->rp.formats[i]->id, c->xs, c->ys[i], c->rp.n_contexts};
    return n;
}

static size_t bars(Calc *c, BarItem *b, char text[][48])
{
    size_t n = 0;
    for (size_t i = 0; i < c->rp.n_formats && c->res.r[0].has_slots; i++) {
        const FormatResult *r = &c->res.r[i];
        char a[48];
        snprintf(text[n], 48, "%s slots", u128_str(a, sizeof a, r->slots, true));
        b[n] = (BarItem){r->format->id, (double)r->slots, text[n]};
        n++;
    }
    return n;
}

static void draw(void *st, Rect r, int scroll)
{
    Calc *c = st;
    (void)scroll;
    char a[64], b[64], d[64], f[64], line[320];
    const Workload *w = &c->rp.w;
    snprintf(line, sizeof line, "%s, %s tokens x %llu", c->model.display,
             units_context(a, sizeof a, w->context), (unsigned long long)w->batch);
    draw_title((Rect){r.y, r.x, 1, r.w}, line);
    snprintf(line, sizeof line, "KV pool %s = %s; weights %s; %s%s",
             w->pool ? units_gib(a, sizeof a, w->pool, 2) : "not set",
             w->pool ? units_gb(b, sizeof b, w->pool, 2) : "-", units_gb(d, sizeof d, w->weights, 2),
             w->bandwidth ? units_rate(f, sizeof f, w->bandwidth) : "no bandwidth",
             w->tp > 1 ? "; every figure per GPU" : "");
    put_text(r.y + 1, r.x, r.w, crt_attr(ROLE_DIM), line);
    if (c->stale || c->table_w != r.w) {
        report_table(&c->rp, &c->res, &c->table);
        report_table_fit(&c->table, r.w);
        c->table_w = r.w;
        c->stale = false;
    }
    Rect tr = {r.y + 3, r.x, (int)c->table.rows, r.w};
    draw_table(tr, &c->table, 0);
    int y = tr.y + tr.h + 1, h = r.y + r.h - y;
    if (h < 6)
        return;
    int bw = r.w * 2 / 5;
    BarItem items[16];
    char text[16][48];
    size_t nb = bars(c, items, text);
    draw_title((Rect){y, r.x, 1, bw - 1}, "Sequences the pool holds");
    if (nb)
        draw_bars((Rect){y + 1, r.x, h - 1, bw - 2}, items, nb);
    else
        put_text(y + 1, r.x, bw - 2, crt_attr(ROLE_DIM), "give a GPU or a KV pool");
    Series s[16];
    size_t ns = series(c, s);
    draw_title((Rect){y, r.x + bw, 1, r.w - bw}, "Step-floor speedup over BF16 by context");
    if (ns)
        draw_plot((Rect){y + 1, r.x + bw, h - 1, r.w - bw}, s, ns, true, "context (tokens)", "x");
    else
        put_text(y + 1, r.x + bw, r.w - bw, crt_attr(ROLE_DIM), "give a GPU or a bandwidth");
}

static int export(void *st, FILE *csv, FILE *svg, Error *e)
{
    Calc *c = st;
    (void)e;
    fprintf(csv, "format,bytes_per_sequence,bytes,slots,step_ms,speedup\n");
    for (size_t i = 0; i < c->rp.n_formats; i++) {
        const FormatResult *r = &c->res.r[i];
        char a[64], b[64], d[64], f[64], g[64];
        fprintf(csv, "%s,%s,%s,%s,%s,%s\n", r->format->id,
                u128_str(a, sizeof a, r->fp.bytes_per_sequence, false),
                u128_str(b, sizeof b, r->fp.bytes, false),
                r->has_slots ? u128_str(d, sizeof d, r->slots, false) : "",
                r->has_step ? q_str(f, sizeof f, r->step_ms, 6, true) : "",
                r->has_step ? q_str(g, sizeof g, r->speedup, 6, true) : "");
    }
    Series s[16];
    size_t ns = series(c, s);
    char title[160];
    snprintf(title, sizeof title, "%s: step-floor speedup over BF16, batch %llu",
             c->model.display, (unsigned long long)c->rp.w.batch);
    if (ns) {
        svg_plot(svg, title, s, ns, true, "context (tokens)", "speedup over BF16");
    } else {
        BarItem items[16];
        char text[16][48];
        svg_bars(svg, "Sequences the pool holds", items, bars(c, items, text));
    }
    return 0;
}

const ScreenDef SCREEN_CALC = {
    .name = "Calculator",
    .help = "Every number on the left can be changed: the table shows each format's bytes per "
            "element (metadata included), the cache per sequence and in total (binary and decimal "
            "units), the per-tensor scale bytes, how many whole sequences the KV pool holds (and "
            "in paged blocks), the decode-step floor ((weights + KV) / bandwidth) and its speedup "
            "over BF16, and the context at which the cache outweighs the weights. The KV pool "
            "comes from the GPU's memory times the GPU share, less the weights, unless you type "
            "one. The same figures come out of `kvlab calc`.",
    .create = create,
    .destroy = free,
    .fields = fields,
    .recompute = recompute,
    .draw = draw,
    .export = export,
};
