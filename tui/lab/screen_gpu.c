/* screen_gpu.c - the GPU lab: measured decode attention on this machine.
 *
 * The device (or why there is none: then the CPU reference is measured and
 * labelled so), a sweep over contexts for every format with a progress bar
 * that Esc cancels, the step time against context as a line plot, the
 * bandwidth achieved against the copy ceiling measured in the same run, and
 * each format's fitted slope next to published figures. All numbers come
 * from kernels/kv_bench.h, as `kvlab bench` prints them.
 *
 * Where no GPU is measured, a section of its own under them shows the
 * results stored from a GPU run (calc/stored.h): that GPU's name and date
 * in its title, its own plot with hollow markers, its own slopes; with a
 * GPU, s shows them. */
#include "screens.h"

#include "catalog.h"
#include "doc.h"
#include "kv_bench.h"
#include "paths.h"
#include "plotmath.h"
#include "stored.h"
#include "svg.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POINTS_MAX 12
#define SLOPE_TABLES 3           // the slopes table in three widths (screen_gpu_finish)
#define MAX_CONTEXT_DEFAULT (128 * CONTEXT_K)
#define CPU_CONTEXT_MAX (4 * CONTEXT_K)     // the CPU reference is slow: a sweep to 4k
#define ITERS_DEFAULT 30

/* vLLM with FlashAttention-3 on an H100 SXM, Llama-3.1-8B, concurrency 1:
 * decode ITL slope per context token, whole model (seed 000, section 6). */
static const struct {
    KvFormat format;
    double ms_per_token;
} PUBLISHED[] = {{KV_BF16, 4.37e-5}, {KV_FP8, 2.37e-5}};

/* One complete sweep, kept as measured: the fields may change after it. */
typedef struct {
    size_t n;                               // rows measured
    BenchRow rows[KV_FORMATS * POINTS_MAX]; // context by context, every format at each
    double xs[POINTS_MAX];                  // the contexts
    double ys[KV_FORMATS][POINTS_MAX];      // ms per step, one layer, by format and context
    size_t n_ctx;
    double slope[KV_FORMATS];               // ms per context token, one layer; NaN with one context
    double itl[KV_FORMATS];                 // the model's whole step replayed from a CUDA graph, its
                                            // ms per context token (bench_step); NaN on the CPU
    bool graph;                             // itl measured (a GPU)
    uint32_t layers;                        // the model's, for its whole-model slopes
    char what[200];                         // the model, batch, points, runs and time taken
    Table slopes[SLOPE_TABLES];             // the slopes (screen_gpu_slopes_table), narrower
                                            // and narrower: the first that fits is shown
} Sweep;

/* The results stored from a GPU run (calc/stored.h), read once, as the
 * plot and the slopes table draw them. */
typedef struct {
    bool have;                              // else why says why not
    char why[ERROR_MSG_MAX];
    StoredRun run;
    double xs[STORED_POINTS_MAX];           // the contexts
    double ys[STORED_FORMATS_MAX][STORED_POINTS_MAX]; // ms per step, one layer
    char names[STORED_FORMATS_MAX][128];    // the legend's: format and device
    Table slopes[SLOPE_TABLES];             // narrower and narrower, as Sweep's
} Stored;

typedef struct {
    CatalogList models;
    const char *model_names[CATALOG_MAX];
    int model_i, loaded_model;              // the model whose shape is in b
    u128 weight_bytes;                      // that model's weights: its step's weight stream
    uint64_t batch, max_context, iters;
    bool opened;
    BenchSetup b;
    Sweep shown;                            // the last complete sweep, if have_sweep
    bool have_sweep;
    Sweep next;                             // the sweep being measured
    bool running;
    char note[ERROR_MSG_MAX + 320];         // how the last sweep ended, when not complete or short of a step
    Stored stored;                          // the stored GPU run, shown where no GPU is measured
    bool show_stored;
} GpuLab;

/* Which of the slopes tables (SLOPE_TABLES, narrower and narrower) is the
 * widest that fits w columns; the narrowest where none does. */
static size_t screen_gpu_widest(const Table *slopes, int w)
{
    size_t shown = 0;
    while (shown + 1 < SLOPE_TABLES && table_width(&slopes[shown]) > w)
        shown++;
    return shown;
}

/* What a slopes table's slope columns mean, with the one-layer column
 * (layer) or without, the model's column measured as a CUDA graph (graph)
 * or the layer's times the layers; the length written. */
static size_t screen_gpu_slopes_meaning(char *text, size_t n, bool layer, bool graph, uint64_t layers)
{
    const unsigned long long L = (unsigned long long)layers;
    if (graph)
        snprintf(text, n, "ms per context token: %sITL, graph = the model's whole decode step (%llu layers, each "
                          "its weights read and its attention) captured in a CUDA graph and replayed, as serving "
                          "engines run it (kvlab bench --itl also times it launched kernel by kernel)",
                 layer ? "layer = one attention layer (the plot's slope), " : "", L);
    else if (layer)
        snprintf(text, n, "ms per context token: layer = one attention layer (the plot's slope), model = %llu layers",
                 L);
    else
        snprintf(text, n, "ms per context token for the model: %llu layers x the plot's slope", L);
    return strlen(text);
}

/* ------------------------------------------------------------------------
 * The results stored from a GPU run: read once, drawn in a section of
 * their own, never in this machine's columns.
 */

/* Their slopes as screen_gpu_slopes_table gives this machine's, in
 * `digits` significant digits, with the bandwidth each format reached at
 * the longest context and its share of the copy rate measured in that
 * run. */
static void screen_gpu_stored_table(const StoredRun *r, int digits, Table *t)
{
    char rate_at[64], ctx[32];
    const StoredSeries *base = stored_series(r, kv_format_id(KV_BF16));
    const uint64_t longest = r->formats[0].points[r->formats[0].n - 1].context;
    snprintf(rate_at, sizeof rate_at, "bandwidth at %s", format_tick((double)longest, ctx, sizeof ctx));
    table_header(t, "format", "layer", "model", "ratio", rate_at, NULL);
    for (size_t i = 0; i < r->n_formats; i++) {
        const StoredSeries *f = &r->formats[i];
        const StoredPoint *last = &f->points[f->n - 1];
        char rate[32];
        table_row(t);
        table_cell(t, "%s", f->format);
        table_cell(t, "%.*e", digits - 1, f->slope);
        table_cell(t, "%.*e", digits - 1, f->slope * (double)r->layers);
        if (base)
            table_cell(t, "%.2f", f->slope / base->slope);
        else
            table_cell(t, "-");
        table_cell(t, "%s %.0f%%", units_rate_measured(rate, sizeof rate, last->gbps * 1e9),
                   100 * last->gbps / r->copy_gbps);
    }
}

/* Reads the stored run (stored_gpu_run) into st, or why there is none. */
static void screen_gpu_stored_load(Stored *st)
{
    Error e;
    memset(st, 0, sizeof *st);
    if (stored_gpu_run(&st->run, NULL, &e)) {
        snprintf(st->why, sizeof st->why, "%s", e.msg);
        return;
    }
    const StoredRun *r = &st->run;
    for (size_t k = 0; k < r->formats[0].n; k++)
        st->xs[k] = (double)r->formats[0].points[k].context;
    for (size_t i = 0; i < r->n_formats; i++) {
        for (size_t k = 0; k < r->formats[i].n; k++)
            st->ys[i][k] = r->formats[i].points[k].ms;
        snprintf(st->names[i], sizeof st->names[i], "%s %s", r->formats[i].format, r->device);
    }
    /* every column in three digits; without the one-layer column; then in
     * two digits, as this machine's */
    screen_gpu_stored_table(r, 3, &st->slopes[0]);
    screen_gpu_stored_table(r, 3, &st->slopes[1]);
    table_drop_column(&st->slopes[1], "layer");
    screen_gpu_stored_table(r, 2, &st->slopes[2]);
    table_drop_column(&st->slopes[2], "layer");
    st->have = true;
}

/* What the stored run is: the command and file that hold it, the GPU, the
 * shape and batch; the figures are that GPU's. */
static void screen_gpu_stored_about(const Stored *st, Doc *d)
{
    const StoredRun *r = &st->run;
    char line[1024], copy[32];
    snprintf(line, sizeof line,
             "Shipped with kvlab: %s (%s) on that GPU, %llu SMs, copy %s; batch %llu, %llu query heads over "
             "%llu KV heads of %llu, FP8 path %s. None of it was measured here.",
             r->command, r->source, (unsigned long long)r->sm_count,
             units_rate_measured(copy, sizeof copy, r->copy_gbps * 1e9), (unsigned long long)r->batch,
             (unsigned long long)r->q_heads, (unsigned long long)r->kv_heads, (unsigned long long)r->head_dim,
             r->fp8_path);
    doc_text(d, 0, crt_attr(ROLE_WARN), line);
}

/* What follows the stored plot: the slopes, the widest table that fits. */
static void screen_gpu_stored_after(const Stored *st, Doc *d)
{
    const size_t shown = screen_gpu_widest(st->slopes, d->win.w);
    char text[512];
    size_t len = screen_gpu_slopes_meaning(text, sizeof text, shown == 0, false, st->run.layers);
    snprintf(text + len, sizeof text - len, "; ratio = to bf16; bandwidth = the bytes a step reads over its time "
                                            "at the longest context, and its share of that GPU's copy rate.");
    doc_gap(d, 1);
    doc_text(d, 0, crt_attr(ROLE_DIM), text);
    doc_table(d, &st->slopes[shown]);
}

/* The stored run's title: the GPU and the date, and that it is not this
 * machine's. */
static void screen_gpu_stored_title(const Stored *st, Doc *d)
{
    char title[256];
    snprintf(title, sizeof title, "Measured on %s, %s, not this machine", st->run.device, st->run.measured);
    doc_title(d, title);
}

/* The stored run's section: its title names the GPU and the date, then
 * what it is, its plot (hollow markers, the legend naming the GPU) as tall
 * as the window leaves it, and its slopes. */
static void screen_gpu_stored_layout(const GpuLab *s, Doc *d)
{
    const Stored *st = &s->stored;
    if (!st->have) {
        doc_title(d, "Results stored from a GPU run");
        doc_text(d, 0, crt_attr(ROLE_DIM), st->why);
        return;
    }
    screen_gpu_stored_title(st, d);
    screen_gpu_stored_about(st, d);
    Doc rest;
    doc_measure(&rest, d->win);
    screen_gpu_stored_title(st, &rest);
    screen_gpu_stored_about(st, &rest);
    screen_gpu_stored_after(st, &rest);
    /* the section fills the window below the row that says more lies above */
    const int h = rest.line + 1 + PLOT_MIN_ROWS > d->win.h ? PLOT_MIN_ROWS : d->win.h - 1 - rest.line;
    Rect r;
    if (doc_block(d, h, &r) && doc_whole(d, r)) {
        Series sr[STORED_FORMATS_MAX];
        for (size_t i = 0; i < st->run.n_formats; i++)
            sr[i] = (Series){st->names[i], st->xs, st->ys[i], st->run.formats[i].n};
        draw_plot_elsewhere(r, sr, st->run.n_formats, true, "context (tokens)", "ms per step (stored)");
    }
    screen_gpu_stored_after(st, d);
}

static void *screen_gpu_create(Error *e)
{
    GpuLab *s = lab_state_new(sizeof *s, e);
    if (!s)
        return NULL;
    if (catalog_list(paths_datadir(), CATALOG_MODELS, &s->models, e)) {
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < s->models.count; i++) {
        s->model_names[i] = s->models.names[i];
        if (!strcmp(s->models.names[i], MODEL_DEFAULT))
            s->model_i = (int)i;
    }
    s->loaded_model = -1;
    screen_gpu_stored_load(&s->stored);
    s->show_stored = true;                  // until a sweep finds a GPU
    s->batch = 1;
    s->max_context = MAX_CONTEXT_DEFAULT;
    s->iters = ITERS_DEFAULT;
    return s;
}

static size_t screen_gpu_fields(void *st, Field *f)
{
    GpuLab *s = st;
    size_t n = 0;
    f[n++] = (Field){"Model", FK_CHOICE, &s->model_i, 0, s->models.count, 0, s->model_names, NULL};
    f[n++] = (Field){"Batch", FK_COUNT, &s->batch, 1, 256, 1, NULL, NULL};
    f[n++] = (Field){"Longest context", FK_CONTEXT, &s->max_context, 1024, 1u << 20, 0, NULL, NULL};
    f[n++] = (Field){"Timed runs", FK_COUNT, &s->iters, 1, 1000, 10, NULL, NULL};
    return n;
}

/* The sweep's set-up from the fields; the model file is read when the
 * model changes. (The GPU is opened by the first sweep, not here.) */
static int screen_gpu_recompute(void *st, Error *e)
{
    GpuLab *s = st;
    if (s->loaded_model != s->model_i) {
        char path[1024];
        Model m;
        if (catalog_path(paths_datadir(), CATALOG_MODELS, s->model_names[s->model_i], path, sizeof path, e) ||
            model_load(&m, path, e))
            return -1;
        s->b.shape = m.shape;
        s->weight_bytes = m.weight_bytes;
        s->loaded_model = s->model_i;
    }
    s->b.residual = BENCH_RESIDUAL_DEFAULT;
    s->b.iters = (int)s->iters;
    return 0;
}

/* The sweep as plot series; with_slopes, each name carries its fitted
 * slope (the exported chart, which has no table beside it). */
static void screen_gpu_series(const Sweep *w, Series *out, char names[][48], bool with_slopes)
{
    for (int f = 0; f < KV_FORMATS; f++) {
        if (!with_slopes)
            snprintf(names[f], 48, "%s", kv_format_id((KvFormat)f));
        else if (isnan(w->slope[f]))        // one context: no line to fit
            snprintf(names[f], 48, "%s (needs 2+ contexts)", kv_format_id((KvFormat)f));
        else
            snprintf(names[f], 48, "%s %.2e ms/tok", kv_format_id((KvFormat)f), w->slope[f]);
        out[f] = (Series){names[f], w->xs, w->ys[f], w->n_ctx};
    }
}

/* ------------------------------------------------------------------------
 * Drawing: one document (doc.h): a header, then the plot with the bars
 * beside it where the window is wide (under it where not), then the slopes;
 * the lab scrolls it where the window is too short.
 */

/* The slopes against the published ones: one layer (the plot's), the
 * model and the ratio to BF16, slopes in `digits` significant digits; the
 * published figures are whole models. The model's: on a GPU its whole
 * step's, measured as a CUDA graph replayed (ITL); on the CPU, the
 * layer's times the layers. */
static void screen_gpu_slopes_table(const Sweep *w, int digits, Table *t)
{
    table_header(t, "format", "layer", w->graph ? "ITL, graph" : "model", "ratio", "published", "ratio", NULL);
    const double *model = w->graph ? w->itl : w->slope, base = model[KV_BF16];
    for (int f = 0; f < KV_FORMATS; f++) {
        const double sl = w->slope[f];
        table_row(t);
        table_cell(t, "%s", kv_format_id((KvFormat)f));
        if (isnan(sl)) {                    // one context: no line to fit
            table_cell(t, "-");
            table_cell(t, "-");
            table_cell(t, "-");
        } else {
            table_cell(t, "%.*e", digits - 1, sl);
            table_cell(t, "%.*e", digits - 1, w->graph ? model[f] : sl * w->layers);
            table_cell(t, "%.2f", model[f] / base);
        }
        char pub[32] = "-", ratio[32] = "-";
        for (size_t k = 0; k < sizeof PUBLISHED / sizeof PUBLISHED[0]; k++)
            if (PUBLISHED[k].format == (KvFormat)f) {
                snprintf(pub, sizeof pub, "%.2e", PUBLISHED[k].ms_per_token);
                snprintf(ratio, sizeof ratio, "%.2f", PUBLISHED[k].ms_per_token / PUBLISHED[0].ms_per_token);
            }
        table_cell(t, "%s", pub);
        table_cell(t, "%s", ratio);
    }
}

/* The slopes: what the columns mean (and, on the CPU, what they cannot
 * mean), then the table, narrowed to the width by leaving out the
 * one-layer column. */
static void screen_gpu_slopes_layout(const GpuLab *s, Doc *d)
{
    const Sweep *w = &s->shown;
    const size_t shown = screen_gpu_widest(w->slopes, d->win.w);
    char text[768];
    size_t len = screen_gpu_slopes_meaning(text, sizeof text, shown == 0, w->graph, w->layers);
    snprintf(text + len, sizeof text - len, "; ratio = to bf16; published = vLLM with FlashAttention-3 on "
                                            "an H100 SXM, Llama-3.1-8B (seed 000).%s",
             isnan(w->slope[KV_BF16]) ? " One context measured: no slope to fit (a longest "
                                        "context of 2k or more gives one)." : "");
    if (!s->b.cuda)
        doc_text(d, 0, crt_attr(ROLE_WARN), "CPU reference: its slopes say nothing about a GPU's speed.");
    doc_text(d, 0, crt_attr(ROLE_DIM), text);
    doc_table(d, &w->slopes[shown]);
}

/* The bandwidth each format reached at the longest context, one bar per
 * line under the title: a rate in the unit that fits it, and on a GPU its
 * share of the copy bandwidth and its time over a plain read of the same
 * bytes timed alike (1.00x: as fast as a kernel that only reads them). */
static void screen_gpu_bars_layout(const GpuLab *s, Doc *d)
{
    const Sweep *w = &s->shown;
    BarItem items[KV_FORMATS];
    char text[KV_FORMATS][48], title[96], rate[32], ctx[32];
    size_t nb = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->rows[i].context == (uint64_t)w->xs[w->n_ctx - 1]) {
            units_rate_measured(rate, sizeof rate, w->rows[i].gbps * 1e9);
            if (s->b.cuda && w->rows[i].read_ms > 0)
                snprintf(text[nb], 48, "%s %.0f%%, %.2fx read", rate, 100 * w->rows[i].gbps / s->b.copy_gbps,
                         w->rows[i].ms / w->rows[i].read_ms);
            else if (s->b.cuda)
                snprintf(text[nb], 48, "%s %.0f%%", rate, 100 * w->rows[i].gbps / s->b.copy_gbps);
            else
                snprintf(text[nb], 48, "%s", rate);
            items[nb] = (BarItem){kv_format_id(w->rows[i].format), w->rows[i].gbps, text[nb]};
            nb++;
        }
    snprintf(title, sizeof title, "bandwidth at %s%s", format_tick(w->xs[w->n_ctx - 1], ctx, sizeof ctx),
             s->b.cuda ? ", % of copy, time over a plain read" : "");
    doc_bars(d, title, items, nb, "-");
}

/* The plot in a block of h lines, shown whole or not at all. */
static void screen_gpu_plot_layout(const GpuLab *s, Doc *d, int h)
{
    Rect r;
    if (!doc_block(d, h, &r) || !doc_whole(d, r))
        return;
    Series sr[KV_FORMATS];
    char names[KV_FORMATS][48];
    screen_gpu_series(&s->shown, sr, names, false);
    draw_plot(r, sr, KV_FORMATS, true, "context (tokens)", "ms per step, one layer");
}

/* The device (or why there is none), what is shown and what is going on. */
static void screen_gpu_header_layout(const GpuLab *s, Doc *d)
{
    char line[1536], a[64], b[64], c[32];
    if (s->b.cuda)
        snprintf(line, sizeof line, "%s: %d SMs, %s memory (%s free), copy %s measured", s->b.info.name,
                 s->b.info.sm_count, units_size(a, sizeof a, s->b.info.memory_total),
                 units_size(b, sizeof b, s->b.info.memory_free),
                 units_rate_measured(c, sizeof c, s->b.copy_gbps * 1e9));
    else
        snprintf(line, sizeof line, "CPU reference (%.900s)", s->b.why_cpu);
    doc_text(d, 0, crt_attr(s->b.cuda ? ROLE_GOOD : ROLE_WARN), line);
    const char *now = s->running ? "A new sweep is being measured; this one stays until it completes."
                                 : s->note;
    if (s->have_sweep)
        snprintf(line, sizeof line, "%s; r runs again. %s", s->shown.what, now);
    else
        snprintf(line, sizeof line, "%s", s->running ? "Measuring the first sweep." : s->note);
    doc_text(d, 0, crt_attr(ROLE_DIM), line);
}

/* What follows the plot: the bars where they are not beside it, then the
 * slopes. */
static void screen_gpu_below_plot(const GpuLab *s, Doc *d, bool beside)
{
    if (!beside) {
        doc_gap(d, 1);
        screen_gpu_bars_layout(s, d);
    }
    doc_gap(d, 1);
    screen_gpu_slopes_layout(s, d);
}

static void screen_gpu_here_layout(const GpuLab *s, Doc *d)
{
    doc_title(d, "Measured decode attention on this machine");
    if (!s->opened) {
        doc_text(d, 0, crt_attr(ROLE_NORMAL),
                 "Press r to find the GPU and run the sweep: every format, contexts from 1k to the "
                 "longest, one decode step of one attention layer each.");
        doc_text(d, 0, crt_attr(ROLE_DIM),
                 "Without a GPU the CPU reference is measured instead, over shorter contexts.");
        return;
    }
    screen_gpu_header_layout(s, d);
    if (!s->have_sweep)
        return;
    doc_gap(d, 1);
    const int bars_w = d->win.w * 2 / 5;
    const bool beside = bars_w >= 30;       // labels, a bar, "1.23 TB/s 45%"
    Doc rest;                               // the plot takes the rows the rest leaves
    doc_measure(&rest, d->win);
    screen_gpu_below_plot(s, &rest, beside);
    const int h = doc_fill(d, rest.line, PLOT_MIN_ROWS);
    if (beside) {
        Doc plot = doc_beside(d, 0, d->win.w - bars_w - 1), bars = doc_beside(d, d->win.w - bars_w, bars_w);
        screen_gpu_plot_layout(s, &plot, h);
        screen_gpu_bars_layout(s, &bars);
        doc_below(d, &plot, &bars);
    } else {
        screen_gpu_plot_layout(s, d, h);
    }
    screen_gpu_below_plot(s, d, beside);
}

/* The stored run's figures for a lesson's gpu widget where this session
 * has measured nothing: none are shown there yet (NULL); the GPU lab's
 * own screen shows the stored run. */
static const Stored *screen_gpu_widget_stored(const GpuLab *s)
{
    return s->stored.have ? &s->stored : NULL;
}


/* In a lesson's page: the slopes this session's last complete sweep
 * measured; else that nothing is measured yet, and the stored run's
 * figures where the widget shows them. */
static void screen_gpu_inline(void *st, Doc *d)
{
    const GpuLab *s = st;
    char line[400];
    if (s->have_sweep) {
        snprintf(line, sizeof line, "Measured in this session on %s: %s", s->b.cuda ? s->b.info.name : "the CPU",
                 s->shown.what);
        doc_text(d, 0, crt_attr(ROLE_NORMAL), line);
        screen_gpu_slopes_layout(s, d);
        return;
    }
    doc_text(d, 0, crt_attr(ROLE_NORMAL), "Nothing measured yet in this session: Enter opens the GPU lab, "
                                          "where r measures every format on this machine.");
    const Stored *stored = screen_gpu_widget_stored(s);
    if (stored) {
        doc_gap(d, 1);
        screen_gpu_stored_title(stored, d);
        screen_gpu_stored_about(stored, d);
        screen_gpu_stored_after(stored, d);
    }
}

/* This machine's section (what it measured, or how to measure it), then,
 * where shown, the stored GPU run's below it. */
static void screen_gpu_layout(void *st, Doc *d)
{
    const GpuLab *s = st;
    screen_gpu_here_layout(s, d);
    if (s->show_stored) {
        doc_gap(d, 1);
        screen_gpu_stored_layout(s, d);
    }
}

/* The sweep's summary, its slopes and the time it took, once complete. */
static void screen_gpu_finish(GpuLab *s, Sweep *w, double seconds)
{
    for (int f = 0; f < KV_FORMATS; f++) {
        w->slope[f] = bench_slope(w->rows, w->n, (KvFormat)f, (uint32_t)s->batch, BENCH_ATTENTION);
        w->itl[f] = w->graph ? bench_slope(w->rows, w->n, (KvFormat)f, (uint32_t)s->batch, BENCH_STEP_GRAPH) : NAN;
    }
    w->layers = (uint32_t)s->b.shape.layers;
    /* every column in three digits; without the one-layer column; then in
     * two digits (a noisy CPU slope can be negative, a column wider) */
    screen_gpu_slopes_table(w, 3, &w->slopes[0]);
    screen_gpu_slopes_table(w, 3, &w->slopes[1]);
    table_drop_column(&w->slopes[1], "layer");
    screen_gpu_slopes_table(w, 2, &w->slopes[2]);
    table_drop_column(&w->slopes[2], "layer");
    char t[32];
    snprintf(w->what, sizeof w->what, "%s, batch %llu: %zu points, the median of %d runs each, in %s",
             s->model_names[s->loaded_model],
             (unsigned long long)s->batch, w->n, s->b.iters, format_duration(seconds, t, sizeof t));
}

/* On a GPU, after every point's attention (a step reads all the weights,
 * and attention timed right after that measures slower: kv_bench.h), the
 * model's whole step at each point, replayed from a CUDA graph. A step
 * that cannot be measured (a long context of a large model may leave no
 * room for its layers' caches and weights) leaves the sweep without the
 * ITL, saying why; a cancel, without the sweep (-1). */
static int screen_gpu_steps(GpuLab *s, Sweep *w, Lab *lab, double *spent)
{
    BenchRow done[KV_FORMATS * POINTS_MAX];    // the steps' own times, for the time left
    uint64_t contexts[KV_FORMATS * POINTS_MAX];
    for (size_t i = 0; i < w->n; i++)
        contexts[i] = w->rows[i].context;
    w->graph = true;
    for (size_t i = 0; i < w->n; i++) {
        BenchRow *row = &w->rows[i];
        char label[112], t[32];
        const double ahead = bench_seconds_left(done, i, contexts + i, w->n - i);
        snprintf(label, sizeof label, "the model's step, %s at %s, %zu of %zu", kv_format_id(row->format),
                 format_tick((double)row->context, t, sizeof t), i + 1, w->n);
        if (lab_progress(lab, label, *spent, ahead < 0 ? *spent + 1 : *spent + ahead)) {
            snprintf(s->note, sizeof s->note, "The sweep was cancelled measuring the model's step, %zu of %zu%s", i,
                     w->n, s->have_sweep ? "." : "; nothing measured yet.");
            lab_status(lab, false, "sweep cancelled");
            s->running = false;
            return -1;
        }
        const double before = row->wall_s;
        Error e;
        if (bench_step(&s->b, s->weight_bytes, row, &e)) {
            snprintf(s->note, sizeof s->note, "The model's step was not measured at %s: %s; the model column is "
                                              "the layer's slope times the layers.", label, e.msg);
            w->graph = false;
            return 0;
        }
        done[i] = (BenchRow){.context = row->context, .wall_s = row->wall_s - before};
        *spent += done[i].wall_s;
    }
    return 0;
}

/* 'r': the sweep, context by context with every format at each, so that
 * the time left is foreseen from the points measured (bench_seconds_left).
 * The last complete sweep stays on screen until this one completes. */
static int screen_gpu_sweep(void *st, Lab *lab)
{
    GpuLab *s = st;
    Error e;
    if (!s->opened) {
        if (bench_open(&s->b, "auto", &e)) {
            lab_status(lab, true, "%s", e.msg);
            return KEY_REDRAW;
        }
        s->opened = true;
        s->show_stored = !s->b.cuda;        // with a GPU, this machine's figures alone (s shows them)
    }
    Sweep *w = &s->next;
    w->n = w->n_ctx = 0;
    w->graph = false;
    uint64_t longest = s->b.cuda || s->max_context < CPU_CONTEXT_MAX ? s->max_context : CPU_CONTEXT_MAX;
    for (uint64_t c = CONTEXT_K; c <= longest && w->n_ctx < POINTS_MAX; c *= 2)
        w->xs[w->n_ctx++] = (double)c;
    const size_t total = (size_t)KV_FORMATS * w->n_ctx;
    uint64_t contexts[KV_FORMATS * POINTS_MAX];         // of every point, in the order measured
    for (size_t i = 0; i < total; i++)
        contexts[i] = (uint64_t)w->xs[i / KV_FORMATS];
    s->running = true;
    s->note[0] = '\0';
    lab_status(lab, false, "sweeping %zu points (Esc cancels)", total);
    double spent = 0;
    for (size_t k = 0; k < w->n_ctx; k++)
        for (int f = 0; f < KV_FORMATS; f++) {
            char label[96], t[32];
            const double ahead = bench_seconds_left(w->rows, w->n, contexts + w->n, total - w->n);
            snprintf(label, sizeof label, "%s at %s, point %zu of %zu", kv_format_id((KvFormat)f),
                     format_tick(w->xs[k], t, sizeof t), w->n + 1, total);
            if (lab_progress(lab, label, spent, ahead < 0 ? 1 : spent + ahead)) {
                snprintf(s->note, sizeof s->note, "The sweep was cancelled after %zu of %zu points%s", w->n,
                         total, s->have_sweep ? "." : "; nothing measured yet.");
                lab_status(lab, false, "sweep cancelled after %zu of %zu points", w->n, total);
                s->running = false;
                return KEY_REDRAW;
            }
            BenchRow *row = &w->rows[w->n];
            s->b.read_floor = k + 1 == w->n_ctx;    // the bars show the longest context
            if (bench_point(&s->b, (KvFormat)f, (uint32_t)s->batch, (uint64_t)w->xs[k], row, &e)) {
                snprintf(s->note, sizeof s->note, "The sweep stopped at %s: %s", label, e.msg);
                lab_status(lab, true, "%s", e.msg);
                s->running = false;
                return KEY_REDRAW;
            }
            w->ys[f][k] = row->ms;
            spent += row->wall_s;
            w->n++;
        }
    if (s->b.cuda && screen_gpu_steps(s, w, lab, &spent) < 0)
        return KEY_REDRAW;
    screen_gpu_finish(s, w, spent);
    s->shown = *w;
    s->have_sweep = true;
    s->running = false;
    char t[32];
    lab_status(lab, false, "sweep done: %zu points in %s", w->n, format_duration(spent, t, sizeof t));
    return KEY_REDRAW;
}

static int screen_gpu_key(void *st, int ch, Lab *lab)
{
    return lab_measure_key(ch, &((GpuLab *)st)->show_stored, screen_gpu_sweep, st, lab);
}

static const ScreenKey KEYS[] = {
    {"r", "sweep", "run the sweep (a progress bar; Esc cancels)"},
    {"s", "stored", "show or hide the results stored from a GPU run (shown where no GPU is measured)"},
};

static int screen_gpu_export(void *st, FILE *csv, FILE *svg, Error *e)
{
    GpuLab *s = st;
    const Sweep *w = &s->shown;
    if (!s->have_sweep)
        return error_set(e, "nothing measured yet: press r first");
    fprintf(csv, "format,batch,context,attention_ms,kv_bytes,GBps\n");
    for (size_t i = 0; i < w->n; i++) {
        char kb[64];
        fprintf(csv, "%s,%u,%llu,%.6f,%s,%.3f\n", kv_format_id(w->rows[i].format), w->rows[i].batch,
                (unsigned long long)w->rows[i].context, w->rows[i].ms,
                u128_str(kb, sizeof kb, w->rows[i].kv_bytes, false), w->rows[i].gbps);
    }
    Series sr[KV_FORMATS];
    char names[KV_FORMATS][48];
    screen_gpu_series(w, sr, names, true);
    svg_plot(svg, s->b.cuda ? s->b.info.name : "CPU reference", sr, KV_FORMATS, true,
             "context (tokens)", "ms per decode step, one layer");
    return 0;
}

static const ScreenOption OPTIONS[] = {
    {"--model", "Model", true, NULL, NULL},
    {"--batch", "Batch", true, NULL, NULL},
};

const ScreenDef SCREEN_GPU = {
    .id = "gpu",
    .name = "GPU lab",
    .help = "Real decode-attention kernels over a quantized KV cache, timed on this machine: "
            "press r to sweep every format over contexts from 1k to the longest, one decode "
            "step of one attention layer each (CUDA events, the median of the timed runs, "
            "caches rotated so the L2 cannot hold them). The plot shows step time against "
            "context, the bars the bandwidth achieved against a device-to-device copy measured "
            "in the same run, and the table each format's fitted slope (ms per context token) "
            "next to vLLM's published figures. On a GPU each point also times the model's whole "
            "decode step (every layer's weights read and its attention) captured in a CUDA graph and "
            "replayed, as serving engines run it: the table's ITL column is that step's slope. The last "
            "complete sweep stays until a new one "
            "completes; the time left is foreseen from the points measured. Without a GPU, the "
            "CPU reference is measured instead and says so, and a section below it shows the "
            "results kvlab stores from a GPU run (NVIDIA H200): their own plot with hollow "
            "markers and their own slopes, titled with the GPU and the date they were measured; "
            "s shows or hides them (with a GPU they are hidden until s).",
    .create = screen_gpu_create,
    .destroy = free,
    .fields = screen_gpu_fields,
    .recompute = screen_gpu_recompute,
    .layout = screen_gpu_layout,
    .key = screen_gpu_key,
    .keys = KEYS,
    .n_keys = sizeof KEYS / sizeof KEYS[0],
    .bar = LAB_MEASURE_BAR,
    .n_bar = LAB_MEASURE_BAR_N,
    .export = screen_gpu_export,
    .options = OPTIONS,
    .n_options = sizeof OPTIONS / sizeof OPTIONS[0],
    .inline_layout = screen_gpu_inline,
};
