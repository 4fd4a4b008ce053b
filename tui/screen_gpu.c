/* screen_gpu.c - the GPU lab: measured decode attention on this machine.
 *
 * The device (or why there is none: then the CPU reference is measured and
 * labelled so), a sweep over contexts for every format with a progress bar
 * that Esc cancels, the step time against context as a line plot with each
 * format's fitted slope, the bandwidth achieved against the copy ceiling
 * measured in the same run, and the slopes next to published figures. All
 * numbers come from kernels/kv_bench.h, as `kvlab bench` prints them. */
#include "screens.h"

#include "catalog.h"
#include "cli.h"
#include "kv_bench.h"
#include "svg.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POINTS_MAX 12

/* vLLM with FlashAttention-3 on an H100 SXM, Llama-3.1-8B, concurrency 1:
 * decode ITL slope per context token, whole model (seed 000, section 6). */
static const struct {
    KvFormat format;
    double ms_per_token;
} PUBLISHED[] = {{KV_BF16, 4.37e-5}, {KV_FP8, 2.37e-5}};

typedef struct {
    CatalogList models;
    const char *model_names[CATALOG_MAX];
    int model_i, loaded_model;              // the model whose shape is in b
    uint64_t batch, max_context, iters;
    bool opened;
    BenchSetup b;
    char status[ERROR_MSG_MAX];
    size_t n;                               // rows measured
    BenchRow rows[KV_FORMATS * POINTS_MAX];
    double xs[POINTS_MAX], ys[KV_FORMATS][POINTS_MAX];
    size_t n_ctx;
    bool complete;                          // a whole sweep is in rows
    double slope[KV_FORMATS];               // of the sweep, ms per context token
    Table slopes;                           // the slopes against the published ones
} GpuLab;

static void *create(Error *e)
{
    GpuLab *s = lab_state_new(sizeof *s, e);
    if (!s)
        return NULL;
    if (catalog_list(cli_datadir(), CATALOG_MODELS, &s->models, e)) {
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < s->models.count; i++) {
        s->model_names[i] = s->models.names[i];
        if (!strcmp(s->models.names[i], "llama-3.1-8b"))
            s->model_i = (int)i;
    }
    s->loaded_model = -1;
    s->batch = 1;
    s->max_context = 131072;
    s->iters = 30;
    return s;
}

static size_t fields(void *st, Field *f)
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
static int recompute(void *st, Error *e)
{
    GpuLab *s = st;
    if (s->loaded_model != s->model_i) {
        char path[1024];
        Model m;
        if (catalog_path(cli_datadir(), CATALOG_MODELS, s->model_names[s->model_i], path, sizeof path, e) ||
            model_load(&m, path, e))
            return -1;
        s->b.shape = m.shape;
        s->loaded_model = s->model_i;
    }
    s->b.residual = 128;
    s->b.iters = (int)s->iters;
    return 0;
}

static void series(GpuLab *s, Series *out, char names[][48])
{
    for (int f = 0; f < KV_FORMATS; f++) {
        if (isnan(s->slope[f]))             // one context: no line to fit
            snprintf(names[f], 48, "%s (needs 2+ contexts)", kv_format_id((KvFormat)f));
        else
            snprintf(names[f], 48, "%s %.2e ms/tok", kv_format_id((KvFormat)f), s->slope[f]);
        out[f] = (Series){names[f], s->xs, s->ys[f], s->n_ctx};
    }
}

static void draw(void *st, Rect r, int scroll)
{
    GpuLab *s = st;
    (void)scroll;
    char line[512], a[64], b[64];
    draw_title((Rect){r.y, r.x, 1, r.w}, "Measured decode attention on this machine");
    if (!s->opened) {
        put_text(r.y + 2, r.x, r.w, crt_attr(ROLE_NORMAL),
                 "Press r to find the GPU and run the sweep: every format, contexts from 1k to the "
                 "longest, one decode step of one attention layer each.");
        put_text(r.y + 3, r.x, r.w, crt_attr(ROLE_DIM), "Without a GPU the CPU reference is measured "
                                                        "instead, over shorter contexts.");
        return;
    }
    if (s->b.cuda)
        snprintf(line, sizeof line, "%s: %d SMs, %s memory (%s free), copy %.0f GB/s measured",
                 s->b.info.name, s->b.info.sm_count, units_size(a, sizeof a, s->b.info.memory_total),
                 units_size(b, sizeof b, s->b.info.memory_free), s->b.copy_gbps);
    else
        snprintf(line, sizeof line, "CPU reference (%.480s)", s->b.why_cpu);
    put_text(r.y + 1, r.x, r.w, crt_attr(s->b.cuda ? ROLE_GOOD : ROLE_WARN), line);
    put_text(r.y + 2, r.x, r.w, crt_attr(ROLE_DIM), s->status);
    if (!s->complete)
        return;
    int top = r.y + 4, ph = (r.h - 4) * 3 / 5;
    Series sr[KV_FORMATS];
    char names[KV_FORMATS][48];
    series(s, sr, names);
    draw_plot((Rect){top, r.x, ph, r.w * 3 / 5}, sr, KV_FORMATS, true, "context (tokens)",
              "ms per step, one layer");
    /* bandwidth at the longest context against the copy ceiling */
    BarItem items[KV_FORMATS];
    char text[KV_FORMATS][48];
    size_t nb = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->rows[i].context == (uint64_t)s->xs[s->n_ctx - 1]) {
            if (s->b.cuda)
                snprintf(text[nb], 48, "%.0f GB/s, %.0f%% of copy", s->rows[i].gbps,
                         100 * s->rows[i].gbps / s->b.copy_gbps);
            else
                snprintf(text[nb], 48, "%.0f GB/s", s->rows[i].gbps);
            items[nb] = (BarItem){kv_format_id(s->rows[i].format), s->rows[i].gbps, text[nb]};
            nb++;
        }
    int bx = r.x + r.w * 3 / 5 + 1, bw = r.w - (bx - r.x);
    draw_title((Rect){top, bx, 1, bw}, "bandwidth at the longest context");
    draw_bars((Rect){top + 1, bx, ph - 1, bw}, items, nb);
    draw_table((Rect){top + ph + 1, r.x, r.y + r.h - top - ph - 1, r.w}, &s->slopes, 0);
}

/* The sweep's slopes against the published ones (whole model: layers x ours). */
static void slopes_table(const GpuLab *s, Table *t)
{
    table_header(t, "format", "ms/token, layer", "x layers", "vs BF16", "published (H100, FA3)",
                 NULL);
    const double base = s->slope[KV_BF16];
    for (int f = 0; f < KV_FORMATS; f++) {
        const double sl = s->slope[f];
        table_row(t);
        table_cell(t, "%s", kv_format_id((KvFormat)f));
        if (isnan(sl)) {                    // one context: no line to fit
            table_cell(t, "needs 2+ contexts");
            table_cell(t, "-");
            table_cell(t, "-");
        } else {
            table_cell(t, "%.3e", sl);
            table_cell(t, "%.3e", sl * (double)s->b.shape.layers);
            table_cell(t, "%.2f", sl / base);
        }
        const char *pub = "-";
        char pb[64];
        for (size_t k = 0; k < sizeof PUBLISHED / sizeof PUBLISHED[0]; k++)
            if (PUBLISHED[k].format == (KvFormat)f) {
                snprintf(pb, sizeof pb, "%.2e (%.2f)", PUBLISHED[k].ms_per_token,
                         PUBLISHED[k].ms_per_token / PUBLISHED[0].ms_per_token);
                pub = pb;
            }
        table_cell(t, "%s", pub);
    }
}

/* 'r': the sweep, cancellable. */
static int sweep(GpuLab *s, Lab *lab)
{
    Error e;
    if (!s->opened) {
        if (bench_open(&s->b, "auto", &e)) {
            lab_status(lab, true, "%s", e.msg);
            return KEY_REDRAW;
        }
        s->opened = true;
    }
    s->n = s->n_ctx = 0;
    s->complete = false;
    uint64_t longest = s->b.cuda ? s->max_context : (s->max_context < 4096 ? s->max_context : 4096);
    for (uint64_t c = 1024; c <= longest && s->n_ctx < POINTS_MAX; c *= 2)
        s->xs[s->n_ctx++] = (double)c;
    size_t total = (size_t)KV_FORMATS * s->n_ctx, done = 0;
    for (int f = 0; f < KV_FORMATS; f++)
        for (size_t k = 0; k < s->n_ctx; k++, done++) {
            char label[96];
            snprintf(label, sizeof label, "%s at %.0fk", kv_format_id((KvFormat)f), s->xs[k] / 1024);
            if (lab_progress(lab, label, (double)done, (double)total)) {
                snprintf(s->status, sizeof s->status, "sweep cancelled after %zu of %zu points", done, total);
                s->n = 0;
                return KEY_REDRAW;
            }
            BenchRow *row = &s->rows[s->n];
            if (bench_point(&s->b, (KvFormat)f, (uint32_t)s->batch, (uint64_t)s->xs[k], row, &e)) {
                snprintf(s->status, sizeof s->status, "%s", e.msg);
                lab_status(lab, true, "%s", e.msg);
                s->n = 0;
                return KEY_REDRAW;
            }
            s->ys[f][k] = row->ms;
            s->n++;
        }
    /* the slopes of this sweep, kept: the fields may change before the next */
    for (int f = 0; f < KV_FORMATS; f++)
        s->slope[f] = bench_slope(s->rows, s->n, (KvFormat)f, (uint32_t)s->batch, false);
    slopes_table(s, &s->slopes);
    s->complete = true;
    snprintf(s->status, sizeof s->status, "%zu points, batch %llu, median of %d runs each; r runs "
                                          "again, e exports", s->n, (unsigned long long)s->batch, s->b.iters);
    lab_status(lab, false, "sweep done");
    return KEY_REDRAW;
}

static int key(void *st, int ch, Lab *lab)
{
    return ch == 'r' ? sweep(st, lab) : KEY_IGNORED;
}

static const ScreenKey KEYS[] = {{"r", "run the sweep (a progress bar; Esc cancels)"}};

static int export(void *st, FILE *csv, FILE *svg, Error *e)
{
    GpuLab *s = st;
    if (!s->complete)
        return error_set(e, "nothing measured yet: press r first");
    fprintf(csv, "format,batch,context,attention_ms,kv_bytes,GBps\n");
    for (size_t i = 0; i < s->n; i++) {
        char kb[64];
        fprintf(csv, "%s,%u,%llu,%.6f,%s,%.3f\n", kv_format_id(s->rows[i].format), s->rows[i].batch,
                (unsigned long long)s->rows[i].context, s->rows[i].ms,
                u128_str(kb, sizeof kb, s->rows[i].kv_bytes, false), s->rows[i].gbps);
    }
    Series sr[KV_FORMATS];
    char names[KV_FORMATS][48];
    series(s, sr, names);
    svg_plot(svg, s->b.cuda ? s->b.info.name : "CPU reference", sr, KV_FORMATS, true,
             "context (tokens)", "ms per decode step, one layer");
    return 0;
}

const ScreenDef SCREEN_GPU = {
    .name = "GPU lab",
    .help = "Real decode-attention kernels over a quantized KV cache, timed on this machine: "
            "press r to sweep every format over contexts from 1k to the longest, one decode "
            "step of one attention layer each (CUDA events, the median of the timed runs, "
            "caches rotated so the L2 cannot hold them). The plot shows step time against "
            "context with each format's fitted slope (ms per token), the bars the bandwidth "
            "achieved against a device-to-device copy measured in the same run, and the table "
            "the slopes next to vLLM's published figures. Without a GPU, the CPU reference is "
            "measured instead and says so.",
    .create = create,
    .destroy = free,
    .fields = fields,
    .recompute = recompute,
    .draw = draw,
    .key = key,
    .keys = KEYS,
    .n_keys = sizeof KEYS / sizeof KEYS[0],
    .export = export,
};
