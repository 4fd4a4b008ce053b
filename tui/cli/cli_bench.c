/* cli_bench.c - `kvlab bench`: measured decode attention.
 *
 * For each format, batch and context: a cache of random but valid codes
 * (filled on the device), one decode step of one attention layer timed
 * with CUDA events (median after a warm-up, rotating over enough copies of
 * the cache that the L2 cannot hold them; the GPU's time from the first
 * kernel's start to the last's end, not the host's launches), the bytes
 * the step must read (calc/footprint.h) and the bandwidth that makes, against the
 * device-to-device copy measured in the same run. Without a GPU the CPU
 * reference is timed instead, and says so. Per format and batch, the ITL
 * slope (ms per context token, least squares) and its ratio to BF16. */
#include "cli.h"
#include "commands.h"
#include "cudaopts.h"

#include "catalog.h"
#include "footprint.h"
#include "format.h"
#include "kv_attn.h"
#include "kv_bench.h"
#include "kv_cuda.h"
#include "model.h"
#include "paths.h"
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The defaults, each written once: the help quotes them. */
#define BATCHES_DEFAULT "1,16"
#define CONTEXTS_GPU_DEFAULT "1k,4k,16k,32k,64k,128k"
#define CONTEXTS_CPU_DEFAULT "1k,4k"      // the CPU reference is slow
#define ITERS_GPU_DEFAULT 50
#define ITERS_CPU_DEFAULT 3

enum {
    O_BACKEND, O_MODEL, O_LAYERS, O_KV_HEADS, O_Q_HEADS, O_HEAD_DIM, O_BATCH, O_CONTEXTS,
    O_FORMAT, O_RESIDUAL, O_FP8_PATH, O_PROMOTE, O_SPLITS, O_ITERS, O_ITL, O_JSON, O_CSV, O_HELP, O_COUNT
};

static const OptSpec OPTS[O_COUNT] = {
    [O_BACKEND] = {"backend", "auto|cuda|cpu", "auto (the default: CUDA where it works, else the CPU reference), cuda "
                                               "or cpu"},
    [O_MODEL] = {"model", "NAME", "the attention shape of a model (default " MODEL_DEFAULT "; kvlab models)"},
    [O_LAYERS] = {"layers", "L", "or a shape: the layers (shown in the output; one layer is timed) ..."},
    [O_KV_HEADS] = {"kv-heads", "H", "... the KV heads ..."},
    [O_Q_HEADS] = {"q-heads", "H", "... the query heads (default: as many as KV heads) ..."},
    [O_HEAD_DIM] = {"head-dim", "D", "... and the head dimension"},
    [O_BATCH] = {"batch", "LIST", "sequences, comma-separated (default " BATCHES_DEFAULT ")"},
    [O_CONTEXTS] = {"contexts", "LIST", "tokens (default " CONTEXTS_GPU_DEFAULT "; CPU " CONTEXTS_CPU_DEFAULT ")"},
    [O_FORMAT] = {"format", "bf16|fp8_e4m3|int8|int4|nvfp4|mxfp4", "a format the kernels take, repeatable (default "
                                                                 "all)"},
    [O_RESIDUAL] = {"residual", "R", "int4 (KIVI): recent tokens kept in BF16" CLI_DEFAULT(BENCH_RESIDUAL_DEFAULT)},
    [O_FP8_PATH] = CUDA_OPT_FP8_PATH,
    [O_PROMOTE] = CUDA_OPT_PROMOTE,
    [O_SPLITS] = CUDA_OPT_SPLITS,
    [O_ITERS] = {"iters", "N", "timed runs per point (default " TEXT_OF(ITERS_GPU_DEFAULT) " on a GPU, "
                               TEXT_OF(ITERS_CPU_DEFAULT) " on the CPU)"},
    [O_ITL] = {"itl", NULL, "also time the model's whole decode step (every layer's weights and attention), "
                            "replayed from a CUDA graph (step_ms, the slopes' default) and launched kernel by kernel"},
    [O_JSON] = {"json", NULL, "print one JSON object"},
    [O_CSV] = {"csv", NULL, "print the rows as CSV"},
    [O_HELP] = {"help", NULL, "show this help"},
};

static const CmdSpec CMD = {
    .name = "bench",
    .usage = "usage: kvlab bench [--backend auto|cuda|cpu] [--model NAME] [--batch LIST] "
             "[--contexts LIST] [--format F]... [--fp8-path A|B|C [--promote N]]\n"
             "       [--splits N] [--itl] [--json|--csv]\n\n"
             "Times one decode step of one attention layer over a quantized KV cache; on a GPU,\n"
             "beside each point, a plain read of its bytes timed the same way (read ms).",
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = O_FORMAT,
    .max_words = 0,
};

#define MAX_POINTS 16
/* The cache counts a sequence's tokens in a uint32_t, rounded up to whole
 * KIVI groups (kv_attn.h's KvShape.capacity). */
#define CONTEXT_MAX (UINT32_MAX / KV_KIVI_GROUP * KV_KIVI_GROUP)

typedef BenchRow Row;

typedef struct {
    BenchSetup s;
    Model model;
    bool have_model;
    KvFormat fmts[KV_FORMATS];
    size_t nf;
    uint64_t batches[MAX_POINTS], contexts[MAX_POINTS];
    size_t nb, nc;
    KvCudaOptions cuda;         // the environment's kernels, then --fp8-path, --promote and --splits
} Bench;

static const ShapeOptions SHAPE = {
    {O_LAYERS, O_KV_HEADS, O_Q_HEADS, O_HEAD_DIM}, {1000, 1024, 8192, KV_HEAD_DIM_MAX}};

static int cli_bench_parse_context(const char *s, uint64_t *v, Error *e)
{
    if (units_parse_context(s, v, e))
        return -1;
    if (*v > CONTEXT_MAX)
        return error_set(e, "context '%s' is %llu tokens; the cache holds at most %llu per sequence", s,
                         (unsigned long long)*v, (unsigned long long)CONTEXT_MAX);
    return 0;
}

static bool cli_bench_has_format(const Bench *b, KvFormat f)
{
    for (size_t i = 0; i < b->nf; i++)
        if (b->fmts[i] == f)
            return true;
    return false;
}

/* --format, repeatable: each format once; every one when none is given. */
static int cli_bench_formats(const Given *g, Bench *b, Error *e)
{
    if (g->n_repeat > KV_FORMATS)
        return error_set(e, "--format: at most %d formats", KV_FORMATS);
    for (size_t i = 0; i < g->n_repeat; i++) {
        if (kv_format_parse(g->repeat[i], &b->fmts[b->nf], e))
            return error_prefix(e, "--format");
        if (cli_bench_has_format(b, b->fmts[b->nf]))
            return error_set(e, "--format: %s is given twice", kv_format_id(b->fmts[b->nf]));
        b->nf++;
    }
    if (!b->nf)
        for (int f = 0; f < KV_FORMATS; f++)
            b->fmts[b->nf++] = (KvFormat)f;
    return 0;
}

static const CudaOpts CUDA_OPTS = {O_FP8_PATH, O_PROMOTE, O_SPLITS};

/* The FP8 path, its promotion interval and the splits, for the CUDA
 * plugin's options (b->cuda). */
static int cli_bench_fp8_options(const Given *g, Bench *b, Error *e)
{
    return cudaopts_parse(g, OPTS, CUDA_OPTS, cli_bench_has_format(b, KV_FP8), &b->cuda, e);
}

/* What the text table's first line adds about the kernels: path A or C,
 * or the FP32 kernels where the tensor-core ones do not take the shape. */
static const char *cli_bench_fp8_note(const BenchSetup *bs)
{
    const char *k = bench_fp8_kernel(bs);
    return !strcmp(k, "A") ? "; FP8 path A" : !strcmp(k, "C") ? "; FP8 path C" : !strcmp(k, "fp32") ? "; the FP32 kernels" : "";
}

/* Everything the command line says, before anything is timed: EXIT_USAGE
 * for what the options get wrong (each error names its option). */
static int cli_bench_options(const Given *g, Bench *b, Error *e)
{
    if (cli_bench_formats(g, b, e) || cli_bench_fp8_options(g, b, e))
        return -1;
    if (g->set[O_BACKEND] && bench_backend_check(g->val[O_BACKEND], e))
        return error_prefix(e, "--backend");
    if (cli_shape_given(g, &SHAPE)) {
        if (g->set[O_MODEL])
            return error_set(e, "give --model or a shape, not both");
        if (cli_shape(g, OPTS, &SHAPE, &b->s.shape, e))
            return -1;
    } else {
        char path[1024];
        if (catalog_path(paths_datadir(), CATALOG_MODELS, g->set[O_MODEL] ? g->val[O_MODEL] : MODEL_DEFAULT,
                         path, sizeof path, e) || model_load(&b->model, path, e))
            return error_prefix(e, "--model");
        b->have_model = true;
        b->s.shape = b->model.shape;
    }
    /* the kernels' own limits on a shape, here rather than at the first point */
    KvShape ks = {KV_BF16, 1, (uint32_t)b->s.shape.kv_heads, (uint32_t)b->s.shape.q_heads,
                  (uint32_t)b->s.shape.head_dim, KV_KIVI_GROUP, 0, false};     // the least capacity
    if (kv_shape_check(&ks, e))
        return error_prefix(e, "%s", b->have_model ? "--model" : "--head-dim");
    uint64_t res = BENCH_RESIDUAL_DEFAULT, iters = 0;
    if (cli_count(g, OPTS, O_RESIDUAL, 0, 1u << 20, &res, e) || cli_count(g, OPTS, O_ITERS, 1, 100000, &iters, e))
        return -1;
    if (res % KV_KIVI_GROUP)
        return error_set(e, "--residual: a multiple of %d tokens, not %llu", KV_KIVI_GROUP,
                         (unsigned long long)res);
    if (g->set[O_RESIDUAL] && !cli_bench_has_format(b, KV_INT4))
        return error_set(e, "--residual applies to int4 (KIVI), which no --format asks for");
    b->s.residual = (uint32_t)res;
    b->s.iters = (int)iters;
    if (g->set[O_ITL] && !b->have_model)
        return error_set(e, "--itl needs --model (its weights)");
    if (cli_parse_u64s("batch", g->set[O_BATCH] ? g->val[O_BATCH] : BATCHES_DEFAULT, b->batches, MAX_POINTS,
                       &b->nb, cli_parse_batch, e))
        return -1;
    if (g->set[O_CONTEXTS] && cli_parse_u64s("contexts", g->val[O_CONTEXTS], b->contexts, MAX_POINTS,
                                             &b->nc, cli_bench_parse_context, e))
        return -1;
    return 0;
}

/* Opens the backend and checks what depends on it: EXIT_RUNTIME when the
 * asked-for GPU cannot be used, EXIT_USAGE for an option this machine
 * cannot honour. */
static int cli_bench_open_backend(const Given *g, Bench *b, Error *e)
{
    if (bench_open(&b->s, g->set[O_BACKEND] ? g->val[O_BACKEND] : "auto", e)) {
        error_prefix(e, "--backend");
        return EXIT_RUNTIME;
    }
    b->s.cuda_opts = b->cuda;
    b->s.read_floor = true;
    if (!b->s.iters)
        b->s.iters = b->s.cuda ? ITERS_GPU_DEFAULT : ITERS_CPU_DEFAULT;
    if (!b->nc)
        cli_parse_u64s("contexts", b->s.cuda ? CONTEXTS_GPU_DEFAULT : CONTEXTS_CPU_DEFAULT, b->contexts,
                       MAX_POINTS, &b->nc, cli_bench_parse_context, NULL);
    const char *kernel_opt = cudaopts_given(g, OPTS, CUDA_OPTS);
    if (!b->s.cuda && kernel_opt) {
        error_set(e, "--%s chooses between CUDA kernels; the CPU reference is timed here (%s)", kernel_opt,
                  b->s.why_cpu);
        return EXIT_USAGE;
    }
    /* path A or C asked for where the plugin runs another kernel: say which */
    if (b->s.cuda &&
        cudaopts_kernel_check(g, CUDA_OPTS, &b->cuda, bench_fp8_kernel(&b->s), &b->s.info,
                              (unsigned long long)b->s.shape.head_dim,
                              (unsigned long long)(b->s.shape.q_heads / b->s.shape.kv_heads), e))
        return EXIT_USAGE;
    if (g->set[O_ITL] && bench_steps_here(&b->s, e)) {
        error_prefix(e, "--itl");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* The slope of one format and batch and its ratio to BF16's: of the
 * attention, or with --itl of the step replayed (or, launched, launched
 * kernel by kernel). */
static double cli_bench_slope(const Row *rows, size_t n, KvFormat f, uint64_t batch, bool itl, bool launched,
                              double *ratio)
{
    const BenchTime what = !itl ? BENCH_ATTENTION : launched ? BENCH_STEP_LAUNCHED : BENCH_STEP_GRAPH;
    const double sl = bench_slope(rows, n, f, (uint32_t)batch, what);
    *ratio = sl / bench_slope(rows, n, KV_BF16, (uint32_t)batch, what);
    return sl;
}

static int cli_bench_print_json(const BenchSetup *b, const Row *rows, size_t n, const KvFormat *fmts, size_t nf,
                                const uint64_t *batches, size_t nb, bool itl, Error *e)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "backend", b->cuda ? "cuda" : "cpu");
    if (b->cuda) {
        cJSON_AddStringToObject(root, "device", b->info.name);
        cJSON_AddNumberToObject(root, "sm_count", b->info.sm_count);
        cJSON_AddNumberToObject(root, "copy_GBps", b->copy_gbps);
    } else {
        cJSON_AddStringToObject(root, "why_cpu", b->why_cpu);
    }
    if (itl)
        cJSON_AddNumberToObject(root, "weights_ms", b->weights_ms);
    if (b->cuda) {
        const char *path = bench_fp8_kernel(b);
        cJSON_AddStringToObject(root, "fp8_path", path);
        if (!strcmp(path, "A") || !strcmp(path, "C"))
            cJSON_AddNumberToObject(root, "fp8_promote", b->cuda_opts.fp8_promote);
        if (b->cuda_opts.splits)
            cJSON_AddNumberToObject(root, "splits", b->cuda_opts.splits);
    }
    cJSON *shape = cJSON_AddObjectToObject(root, "shape");
    cJSON_AddNumberToObject(shape, "q_heads", (double)b->shape.q_heads);
    cJSON_AddNumberToObject(shape, "kv_heads", (double)b->shape.kv_heads);
    cJSON_AddNumberToObject(shape, "head_dim", (double)b->shape.head_dim);
    cJSON_AddNumberToObject(shape, "layers", (double)b->shape.layers);
    cJSON *arr = cJSON_AddArrayToObject(root, "rows");
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "format", kv_format_id(rows[i].format));
        cJSON_AddNumberToObject(o, "batch", rows[i].batch);
        cJSON_AddNumberToObject(o, "context", (double)rows[i].context);
        cJSON_AddNumberToObject(o, "attention_ms", rows[i].ms);
        json_add_u128(o, "kv_bytes", rows[i].kv_bytes);
        cJSON_AddNumberToObject(o, "GBps", rows[i].gbps);
        if (b->cuda) {
            cJSON_AddNumberToObject(o, "copy_fraction", rows[i].gbps / b->copy_gbps);
            cJSON_AddNumberToObject(o, "read_ms", rows[i].read_ms);
        }
        if (itl) {
            cJSON_AddNumberToObject(o, "step_ms", rows[i].step_ms);
            cJSON_AddNumberToObject(o, "step_launched_ms", rows[i].step_launched_ms);
        }
        cJSON_AddItemToArray(arr, o);
    }
    cJSON *fits = cJSON_AddArrayToObject(root, "fits");
    for (size_t f = 0; f < nf; f++)
        for (size_t k = 0; k < nb; k++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "format", kv_format_id(fmts[f]));
            cJSON_AddNumberToObject(o, "batch", (double)batches[k]);
            for (int launched = 0; launched <= itl; launched++) {
                double ratio, sl = cli_bench_slope(rows, n, fmts[f], batches[k], itl, launched, &ratio);
                cJSON_AddNumberToObject(o, launched ? "launched_slope_ms_per_token" : "slope_ms_per_token", sl);
                cJSON_AddNumberToObject(o, launched ? "launched_ratio_to_bf16" : "ratio_to_bf16", ratio);
            }
            cJSON_AddItemToArray(fits, o);
        }
    return json_emit(root, e);
}

/* The measured rows as a table: the CSV's columns are named as the JSON's
 * fields, the text's for people, each value in the form its reader wants
 * (the fraction of the copy rate in the CSV, a percentage in the text). On
 * a GPU the copy rate's share and the plain read of each point's bytes. */
static void cli_bench_rows_table(const BenchSetup *bs, const Row *rows, size_t n, bool itl, bool csv, Table *t)
{
    enum { C_COPY = 6, C_READ = 7, C_STEP = 8 };
    static const char *const HEAD[][2] = {
        {"format", "format"},     {"batch", "batch"}, {"context", "context"},      {"attention_ms", "attention ms"},
        {"kv_bytes", "KV bytes"}, {"GBps", "GB/s"},   {"copy_fraction", "of copy"}, {"read_ms", "read ms"},
        {"step_ms", "step ms, graph"}, {"step_launched_ms", "step ms, launched"},
    };
    table_init(t, TABLE_COLS);
    table_row(t);
    for (size_t k = 0; k < sizeof HEAD / sizeof HEAD[0]; k++)
        if ((k < C_COPY || k > C_READ || bs->cuda) && (k < C_STEP || itl))
            table_cell(t, "%s", HEAD[k][!csv]);
    t->cols = t->col;
    for (size_t i = 0; i < n; i++) {
        const Row *r = &rows[i];
        char kb[64];
        table_row(t);
        table_cell(t, "%s", kv_format_id(r->format));
        table_cell(t, "%u", r->batch);
        table_cell(t, "%llu", (unsigned long long)r->context);
        table_cell(t, csv ? "%.6f" : "%.4f", r->ms);
        table_cell(t, "%s", u128_str(kb, sizeof kb, r->kv_bytes, !csv));
        table_cell(t, "%.*f", csv || r->gbps < 10 ? 2 : 0, r->gbps);
        if (bs->cuda) {
            table_cell(t, csv ? "%.4f" : "%.1f%%", (csv ? 1 : 100) * r->gbps / bs->copy_gbps);
            table_cell(t, csv ? "%.6f" : "%.4f", r->read_ms);
        }
        if (itl) {
            table_cell(t, csv ? "%.4f" : "%.3f", r->step_ms);
            table_cell(t, csv ? "%.4f" : "%.3f", r->step_launched_ms);
        }
    }
}

/* The slopes as text: once, where one context cannot make a slope; with
 * the model's step, the graph's and then the launched form's. */
static void cli_bench_slopes_text(const Bench *b, const Row *rows, size_t n, bool itl)
{
    printf("\n%s slope (ms per context token) and ratio to BF16%s", itl ? "ITL" : "Attention",
           itl ? ", the step replayed from a CUDA graph, then launched kernel by kernel" : "");
    if (b->nc < 2) {
        printf(": needs two or more contexts\n");
        return;
    }
    printf(":\n");
    for (size_t f = 0; f < b->nf; f++)
        for (size_t i = 0; i < b->nb; i++) {
            printf("  %-9s batch %-4llu", kv_format_id(b->fmts[f]), (unsigned long long)b->batches[i]);
            for (int launched = 0; launched <= itl; launched++) {
                double ratio, sl = cli_bench_slope(rows, n, b->fmts[f], b->batches[i], itl, launched, &ratio);
                if (isnan(ratio) && !isnan(sl))
                    printf("  %.3e  (no BF16 slope to compare with)", sl);
                else
                    printf("  %.3e  %.3f", sl, ratio);
            }
            putchar('\n');
        }
}

int cmd_bench(int argc, char **argv)
{
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    Error e;
    static Bench b;
    memset(&b, 0, sizeof b);
    if (cli_bench_options(&g, &b, &e))
        return cli_error("bench", &e);
    if ((rc = cli_bench_open_backend(&g, &b, &e)) != EXIT_OK)
        return cli_fail("bench", rc, &e);
    const BenchSetup *bs = &b.s;
    if (!bs->cuda) {
        fputs("kvlab bench: timing the CPU reference (", stderr);
        text_put(stderr, bs->why_cpu, false);   // may quote a path from the environment
        fputs(")\n", stderr);
    }
    const size_t nf = b.nf, nb = b.nb, nc = b.nc;
    Row *rows = calloc(nf * nb * nc, sizeof *rows);
    if (!rows) {
        error_runtime(&e, "out of memory for %zu points", nf * nb * nc);
        return cli_fail("bench", EXIT_RUNTIME, &e);
    }
    size_t n = 0;
    for (size_t f = 0; f < nf; f++)
        for (size_t i = 0; i < nb; i++)
            for (size_t k = 0; k < nc; k++) {
                fprintf(stderr, "bench: %s, batch %llu, context %llu (%zu of %zu)\n",
                        kv_format_id(b.fmts[f]), (unsigned long long)b.batches[i],
                        (unsigned long long)b.contexts[k], n + 1, nf * nb * nc);
                if (bench_point(&b.s, b.fmts[f], (uint32_t)b.batches[i], b.contexts[k], &rows[n], &e)) {
                    free(rows);
                    return cli_fail("bench", EXIT_RUNTIME, &e);
                }
                n++;
            }
    if (g.set[O_ITL] && bench_steps(&b.s, b.model.weight_bytes, rows, n, &e)) {     // last: see kv_bench.h
        free(rows);
        error_prefix(&e, "--itl");
        return cli_fail("bench", EXIT_RUNTIME, &e);
    }
    if (g.set[O_JSON]) {
        if (cli_bench_print_json(bs, rows, n, b.fmts, nf, b.batches, nb, g.set[O_ITL], &e)) {
            free(rows);
            return cli_error("bench", &e);
        }
    } else {
        if (!g.set[O_CSV]) {
            printf("%s, ", bs->cuda ? "CUDA" : "CPU reference");
            text_put(stdout, bs->cuda ? bs->info.name : bs->why_cpu, false);
            printf("; one attention layer: %llu query heads, %llu KV heads, head dim %llu%s\n\n",
                   (unsigned long long)bs->shape.q_heads, (unsigned long long)bs->shape.kv_heads,
                   (unsigned long long)bs->shape.head_dim, cli_bench_fp8_note(bs));
        }
        Table t;
        cli_bench_rows_table(bs, rows, n, g.set[O_ITL], g.set[O_CSV], &t);
        if (table_check(&t, &e)) {
            table_free(&t);
            free(rows);
            return cli_error("bench", &e);
        }
        (g.set[O_CSV] ? table_csv : table_print)(&t, stdout);
        table_free(&t);
        if (!g.set[O_CSV]) {
            if (bs->cuda)
                printf("\ncopy bandwidth (device to device, read + write): %.0f GB/s\n"
                       "read ms: a plain read of the point's KV bytes, timed as its attention is, fixed\n"
                       "costs and all: the time a kernel that does nothing but read them takes\n",
                       bs->copy_gbps);
            if (g.set[O_ITL])
                printf("the model's weights read alone, timed so: %.3f ms\n", bs->weights_ms);
            cli_bench_slopes_text(&b, rows, n, g.set[O_ITL]);
        }
    }
    free(rows);
    return EXIT_OK;
}
