/* cli_niah.c - `kvlab niah`: needle in a haystack through the decode
 * kernels (kernels/niah.h), with the statistics of calc/stats.h: per cell
 * the accuracy and its Wilson 95% interval and the paired bootstrap 95%
 * interval of the difference to BF16; per format the rule's verdict.
 *
 * Ctrl-C stops between trials: what ran is printed, marked partial, and
 * the command exits 128 + SIGINT. */
#include "cli.h"
#include "commands.h"
#include "cudaopts.h"
#include "kvgenopts.h"

#include "kv_bench.h"
#include "kvtensors.h"
#include "niah.h"
#include "tui/lab/niahreport.h"
#include "rotate.h"
#include "stats.h"
#include "units.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    O_BACKEND, O_LENGTHS, O_DEPTHS, O_FORMAT, O_TRIALS, O_SEED, O_NEEDLE, O_DISTRACTORS, O_CLOSENESS,
    O_DIGITS, O_ROPE, O_OUT_CH, O_OUT_SCALE, O_Q_OUT, O_SINKS, O_SINK_STR, O_V_OUT, O_V_OUT_SCALE,
    O_KV, O_RESIDUAL, O_TOLERANCE, O_FP8_PATH, O_PROMOTE, O_SPLITS, O_JSON, O_CSV, O_HELP, O_COUNT
};

static const OptSpec OPTS[O_COUNT] = {
    [O_BACKEND] = {"backend", "auto|cuda|cpu", "auto (the default: CUDA where it works, else the CPU reference), cuda "
                                               "or cpu"},
    [O_LENGTHS] = {"lengths", "LIST", "haystack tokens (default " NIAH_LENGTHS_GPU_DEFAULT " on a GPU, "
                                      NIAH_LENGTHS_CPU_DEFAULT " on the CPU)"},
    [O_DEPTHS] = {"depths", "LIST", "needle depths from 0 (first token after the sinks) to 1 (last) (default "
                                    NIAH_DEPTHS_DEFAULT ")"},
    [O_FORMAT] = {"format", "F", "a format, repeatable (default " NIAH_FORMATS_DEFAULT "); bf16 always runs, "
                                 "first: the baseline"},
    [O_TRIALS] = {"trials", "N", "seeded trials a cell" CLI_DEFAULT(NIAH_TRIALS_DEFAULT)},
    [O_SEED] = {"seed", "N", "the grid's seed: haystacks, needles, bootstrap" CLI_DEFAULT(NIAH_SEED_DEFAULT)},
    [O_NEEDLE] = {"needle-logit", "X", "the needle's logit over the haystack's mean" CLI_DEFAULT(NIAH_NEEDLE_LOGIT_DEFAULT)},
    [O_DISTRACTORS] = {"distractors", "N", "near-duplicate keys with other passkeys" CLI_DEFAULT(NIAH_DISTRACTORS_DEFAULT)},
    [O_CLOSENESS] = {"closeness", "X", "a distractor's logit over the needle's, 0 to below 1: the difficulty"
                                       CLI_DEFAULT(NIAH_CLOSENESS_DEFAULT)},
    [O_DIGITS] = {"digits", "N", "passkey digits" CLI_DEFAULT(PASSKEY_DIGITS_DEFAULT)},
    [O_ROPE] = {"rope-theta", "X", "RoPE base on keys and query, 0 for none" CLI_DEFAULT(ROPE_THETA_LLAMA3)},
    [O_OUT_CH] = KVGEN_OPT_OUTLIER_CHANNELS,
    [O_OUT_SCALE] = KVGEN_OPT_OUTLIER_SCALE,
    [O_Q_OUT] = KVGEN_OPT_QUERY_OUTLIER_WEIGHT,
    [O_SINKS] = KVGEN_OPT_SINKS,
    [O_SINK_STR] = KVGEN_OPT_SINK_STRENGTH,
    [O_V_OUT] = KVGEN_OPT_VALUE_OUTLIERS,
    [O_V_OUT_SCALE] = KVGEN_OPT_VALUE_OUTLIER_SCALE,
    [O_KV] = {"kv", "FILE", "the haystack from a safetensors file (tensors k and v, [tokens, kv_heads, head_dim]): "
                            "its first tokens, each KV head in turn (default lengths: all its tokens)"},
    [O_RESIDUAL] = {"residual", "R", "int4 (KIVI): newest tokens kept in BF16" CLI_DEFAULT(NIAH_RESIDUAL_DEFAULT)},
    [O_TOLERANCE] = {"tolerance", "X", "the accuracy loss the verdicts allow: rejected where even its lower bound "
                                       "exceeds X, accepted where its upper bound does not (over at least 3/X "
                                       "trials), else undecided" CLI_DEFAULT(NIAH_TOLERANCE_DEFAULT)},
    [O_FP8_PATH] = CUDA_OPT_FP8_PATH,
    [O_PROMOTE] = CUDA_OPT_PROMOTE,
    [O_SPLITS] = CUDA_OPT_SPLITS,
    [O_JSON] = {"json", NULL, "print one JSON object"},
    [O_CSV] = {"csv", NULL, "print the cells as CSV"},
    [O_HELP] = {"help", NULL, "show this help"},
};

static const CudaOpts CUDA_OPTS = {O_FP8_PATH, O_PROMOTE, O_SPLITS};

static void cli_niah_formats_help(FILE *out)
{
    fputs("\nFormats (simulated: quantized and dequantized on the host, then the BF16 kernel):\n", out);
    for (size_t i = 0; niah_format_at(i); i++) {
        const NiahFormat *f = niah_format_at(i);
        fprintf(out, "  %-24s %s%s\n", f->id, f->simulated ? "simulated: " : "", f->what);
    }
}

static const CmdSpec CMD = {
    .name = "niah",
    .usage = "usage: kvlab niah [--backend auto|cuda|cpu] [--lengths LIST] [--depths LIST] [--format F]...\n"
             "       [--trials N] [--seed N] [--closeness X] ... [--tolerance X] [--json|--csv]\n\n"
             "Needle in a haystack through the decode kernels: a passkey planted at each depth of\n"
             "a synthetic haystack among near-duplicate distractors, read back after one decode step;\n"
             "accuracy per cell with a Wilson 95% interval, the paired bootstrap 95% interval of the\n"
             "difference to BF16, and per format the rule's verdict.",
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = O_FORMAT,
    .max_words = 0,
    .more_help = cli_niah_formats_help,
};

/* ------------------------------------------------------------------------
 * Options
 */

typedef struct {
    NiahGrid g;
    KvTensors kv;               // --kv's
    const char *kv_path;
    NiahBackend be;
    BenchSetup bs;              // the backend as kvlab bench opens it
    double tolerance;
    bool lengths_given, fp8;
} Niah;

static int cli_niah_float(const Given *g, int k, float lo, float hi, float *out, Error *e)
{
    if (!g->set[k])
        return 0;
    if (units_parse_finite(g->val[k], out, e))
        return error_prefix(e, "--%s", OPTS[k].name);
    if (!(*out >= lo && *out <= hi))
        return error_set(e, "--%s: '%s' is outside %g .. %g", OPTS[k].name, g->val[k], (double)lo, (double)hi);
    return 0;
}

static int cli_niah_length(const char *s, uint64_t *v, Error *e)
{
    if (units_parse_context(s, v, e))
        return -1;
    if (*v < NIAH_LENGTH_MIN || *v > KVGEN_TOKENS_MAX)
        return error_set(e, "'%s': from %d to %u tokens", s, NIAH_LENGTH_MIN, KVGEN_TOKENS_MAX);
    return 0;
}

static int cli_niah_lengths(const char *s, NiahGrid *g, Error *e)
{
    uint64_t v[NIAH_LENGTHS_MAX];
    if (cli_parse_u64s("lengths", s, v, NIAH_LENGTHS_MAX, &g->n_lengths, cli_niah_length, e))
        return -1;
    for (size_t i = 0; i < g->n_lengths; i++)
        g->lengths[i] = (uint32_t)v[i];
    return 0;
}

static int cli_niah_depths(const char *s, NiahGrid *g, Error *e)
{
    float v[NIAH_DEPTHS_MAX];
    if (cli_parse_floats(s, v, NIAH_DEPTHS_MAX, &g->n_depths, e))
        return error_prefix(e, "--depths");
    for (size_t i = 0; i < g->n_depths; i++) {
        if (!(v[i] >= 0 && v[i] <= 1))
            return error_set(e, "--depths: %g is outside 0 .. 1", (double)v[i]);
        for (size_t j = 0; j < i; j++)
            if (v[j] == v[i])
                return error_set(e, "--depths: %g is listed twice", (double)v[i]);
        g->depths[i] = v[i];
    }
    return 0;
}

/* --format, repeatable; bf16 first whether named or not. */
static int cli_niah_formats(const Given *gv, NiahGrid *g, Error *e)
{
    const char *defaults[NIAH_FORMATS_MAX];
    size_t n = gv->n_repeat;
    const char *const *ids = gv->repeat;
    char buf[] = NIAH_FORMATS_DEFAULT;
    if (!n) {
        for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            defaults[n++] = tok;
        ids = defaults;
    }
    niah_format_parse("bf16", &g->formats[0], e);
    g->n_formats = 1;
    for (size_t i = 0; i < n; i++) {
        const NiahFormat *f;
        if (niah_format_parse(ids[i], &f, e))
            return error_prefix(e, "--format");
        bool seen = false;
        for (size_t j = 0; j < g->n_formats; j++)
            seen |= g->formats[j] == f;
        if (seen && f != g->formats[0])
            return error_set(e, "--format: %s is given twice", f->id);
        if (!seen)
            g->formats[g->n_formats++] = f;
    }
    return 0;
}

static int cli_niah_generator(const Given *g, NiahHaystack *h, Error *e)
{
    KvGenParams *p = &h->gen;
    uint64_t oc = p->outlier_channels, sk = p->sinks, vo = p->value_outliers, dis = h->distractors,
             dig = h->digits, res = h->residual;
    float rope = (float)h->rope_theta;
    if (cli_count(g, OPTS, O_OUT_CH, 0, NIAH_HEAD_DIM, &oc, e) || cli_count(g, OPTS, O_SINKS, 0, 1u << 20, &sk, e) ||
        cli_count(g, OPTS, O_V_OUT, 0, 4096, &vo, e) || cli_count(g, OPTS, O_DISTRACTORS, 0, 1000, &dis, e) ||
        cli_count(g, OPTS, O_DIGITS, 1, PASSKEY_DIGITS_MAX, &dig, e) ||
        cli_count(g, OPTS, O_RESIDUAL, 0, 1u << 20, &res, e) ||
        cli_niah_float(g, O_OUT_SCALE, 0, 1000, &p->outlier_scale, e) ||
        cli_niah_float(g, O_Q_OUT, 0, 1000, &p->query_outlier_weight, e) ||
        cli_niah_float(g, O_SINK_STR, 0, 100, &p->sink_strength, e) ||
        cli_niah_float(g, O_V_OUT_SCALE, 0, 1000, &p->value_outlier_scale, e) ||
        cli_niah_float(g, O_NEEDLE, 0, 100, &h->needle_logit, e) ||
        cli_niah_float(g, O_CLOSENESS, 0, 1, &h->closeness, e) || cli_niah_float(g, O_ROPE, 0, 1e9f, &rope, e))
        return -1;
    /* the two bounds that are not reached (the check below says so, but not
     * which option) */
    if (g->set[O_CLOSENESS] && !(h->closeness < 1))
        return error_set(e, "--closeness: '%s' must be below 1 (at 1 a distractor is as strong as the needle)",
                         g->val[O_CLOSENESS]);
    if (g->set[O_NEEDLE] && !(h->needle_logit > 0))
        return error_set(e, "--needle-logit: '%s' must be above 0", g->val[O_NEEDLE]);
    p->outlier_channels = (unsigned)oc;
    p->sinks = (unsigned)sk;
    p->value_outliers = (unsigned)vo;
    h->distractors = (unsigned)dis;
    h->digits = (unsigned)dig;
    h->residual = (uint32_t)res;
    h->rope_theta = rope;
    return niah_haystack_check(h, e);
}

static bool cli_niah_has_kernel_format(const NiahGrid *g, KvFormat k)
{
    for (size_t f = 0; f < g->n_formats; f++)
        if (!g->formats[f]->simulated && g->formats[f]->kernel == k)
            return true;
    return false;
}

/* --kv: the file loaded; the generator's options that shape only a
 * synthetic haystack refused beside it; the lengths, unless given, its
 * tokens. */
static int cli_niah_kv(const Given *gv, Niah *n, Error *e)
{
    static const int SYNTHETIC[] = {O_OUT_SCALE, O_SINKS, O_SINK_STR, O_V_OUT, O_V_OUT_SCALE};
    for (size_t i = 0; i < sizeof SYNTHETIC / sizeof SYNTHETIC[0]; i++)
        if (gv->set[SYNTHETIC[i]])
            return error_set(e, "--%s shapes the generated haystack, not --kv's", OPTS[SYNTHETIC[i]].name);
    n->kv_path = gv->val[O_KV];
    if (kvtensors_load(n->kv_path, &n->kv, e))
        return error_prefix(e, "--kv");
    n->g.kv = &n->kv;
    if (!n->lengths_given) {
        n->g.lengths[0] = (uint32_t)n->kv.tokens;
        n->g.n_lengths = 1;
        n->lengths_given = true;
    }
    return niah_grid_check(&n->g, e) ? error_prefix(e, "--kv %s", n->kv_path) : 0;
}

static int cli_niah_options(const Given *gv, Niah *n, Error *e)
{
    NiahGrid *g = &n->g;
    niah_haystack_defaults(&g->hay);
    uint64_t trials = NIAH_TRIALS_DEFAULT;
    g->seed = NIAH_SEED_DEFAULT;
    n->tolerance = NIAH_TOLERANCE_DEFAULT;
    float tol = (float)n->tolerance;
    if (cli_niah_formats(gv, g, e) || cli_niah_generator(gv, &g->hay, e) ||
        cli_count(gv, OPTS, O_TRIALS, 1, NIAH_TRIALS_MAX, &trials, e) ||
        cli_count(gv, OPTS, O_SEED, 0, UINT64_MAX, &g->seed, e) || cli_niah_float(gv, O_TOLERANCE, 0, 1, &tol, e) ||
        cli_niah_depths(gv->set[O_DEPTHS] ? gv->val[O_DEPTHS] : NIAH_DEPTHS_DEFAULT, g, e))
        return -1;
    if (gv->set[O_TOLERANCE])
        n->tolerance = tol;
    g->trials = (unsigned)trials;
    if (gv->set[O_BACKEND] && bench_backend_check(gv->val[O_BACKEND], e))
        return error_prefix(e, "--backend");
    if (gv->set[O_RESIDUAL] && !cli_niah_has_kernel_format(g, KV_INT4))
        return error_set(e, "--residual applies to int4 (KIVI), which no --format asks for");
    n->fp8 = cli_niah_has_kernel_format(g, KV_FP8);
    if (cudaopts_parse(gv, OPTS, CUDA_OPTS, n->fp8, &n->be.opts, e))
        return -1;
    n->lengths_given = gv->set[O_LENGTHS];
    if (n->lengths_given && cli_niah_lengths(gv->val[O_LENGTHS], g, e))
        return -1;
    return gv->set[O_KV] ? cli_niah_kv(gv, n, e) : 0;
}

/* The FP8 kernel the plugin runs ("A", "B", "fp32"), "reference" on the
 * CPU. */
static const char *cli_niah_fp8_path(const Niah *n)
{
    if (!n->be.cuda)
        return "reference";
    KvShape ks = {KV_FP8, 1, 1, 1, NIAH_HEAD_DIM, 32, 0, false};
    return n->be.api->fp8_kernel(&ks, &n->be.opts);
}

/* Opens the backend; the default lengths follow it. */
static int cli_niah_open(const Given *gv, Niah *n, Error *e)
{
    if (bench_open(&n->bs, gv->set[O_BACKEND] ? gv->val[O_BACKEND] : "auto", e)) {
        error_prefix(e, "--backend");
        return EXIT_RUNTIME;
    }
    n->be.cuda = n->bs.cuda;
    n->be.api = n->bs.api;
    const char *kernel_opt = cudaopts_given(gv, OPTS, CUDA_OPTS);
    if (!n->be.cuda && kernel_opt) {
        error_set(e, "--%s chooses between CUDA kernels; the CPU reference runs here (%s)", kernel_opt,
                  n->bs.why_cpu);
        return EXIT_USAGE;
    }
    if (n->be.cuda && n->fp8 &&
        cudaopts_kernel_check(gv, CUDA_OPTS, &n->be.opts, cli_niah_fp8_path(n), &n->bs.info, NIAH_HEAD_DIM, 1, e))
        return EXIT_USAGE;
    if (!n->lengths_given)
        cli_niah_lengths(n->be.cuda ? NIAH_LENGTHS_GPU_DEFAULT : NIAH_LENGTHS_CPU_DEFAULT, &n->g, NULL);
    if (niah_grid_check(&n->g, e))
        return EXIT_USAGE;
    return EXIT_OK;
}


/* ------------------------------------------------------------------------
 * Running
 */

static volatile sig_atomic_t cli_niah_stop_signal;

static void cli_niah_on_signal(int sig)
{
    cli_niah_stop_signal = sig;
}

/* A line on stderr after each trial when stderr is a terminal (rewritten
 * in place), else one per tenth of the grid: the share done and the time
 * left at the rate measured so far. */
typedef struct {
    bool tty;
    int tenth;                  // the last tenth reported
} Progress;

static bool cli_niah_progress(void *ctx, uint64_t done, uint64_t total, double seconds)
{
    Progress *p = ctx;
    int tenth = (int)(done * 10 / total);
    if (!p->tty && tenth == p->tenth)
        return true;
    p->tenth = tenth;
    double left = seconds / (double)done * (double)(total - done);
    fprintf(stderr, "%sniah: %3.0f%% of the grid, %.1f s, about %.0f s left%s", p->tty ? "\r" : "",
            100.0 * (double)done / (double)total, seconds, left, p->tty && done < total ? "" : "\n");
    return true;
}

/* ------------------------------------------------------------------------
 * Output
 */

static void cli_niah_params_json(const Niah *n, cJSON *o)
{
    const NiahHaystack *h = &n->g.hay;
    const KvGenParams *p = &h->gen;
    cJSON_AddNumberToObject(o, "head_dim", (double)niah_head_dim(&n->g));
    if (n->g.kv) {
        cJSON *f = cJSON_AddObjectToObject(o, "kv_file");
        cJSON_AddStringToObject(f, "path", n->kv_path);
        cJSON_AddNumberToObject(f, "tokens", (double)n->kv.tokens);
        cJSON_AddNumberToObject(f, "kv_heads", (double)n->kv.kv_heads);
        cJSON_AddStringToObject(f, "dtype", n->kv.dtype);
        cJSON_AddStringToObject(f, "heads", "each in turn: trial t reads head t mod kv_heads");
    }
    cJSON_AddNumberToObject(o, "outlier_channels", p->outlier_channels);
    cJSON_AddNumberToObject(o, "outlier_scale", p->outlier_scale);
    cJSON_AddNumberToObject(o, "query_outlier_weight", p->query_outlier_weight);
    cJSON_AddNumberToObject(o, "sinks", p->sinks);
    cJSON_AddNumberToObject(o, "sink_strength", p->sink_strength);
    cJSON_AddNumberToObject(o, "value_outliers", p->value_outliers);
    cJSON_AddNumberToObject(o, "value_outlier_scale", p->value_outlier_scale);
    cJSON_AddNumberToObject(o, "rope_theta", h->rope_theta);
    cJSON_AddNumberToObject(o, "needle_logit", h->needle_logit);
    cJSON_AddNumberToObject(o, "distractors", h->distractors);
    cJSON_AddNumberToObject(o, "closeness", h->closeness);
    cJSON_AddNumberToObject(o, "digits", h->digits);
    cJSON_AddNumberToObject(o, "amplitude", h->amplitude);
    cJSON_AddNumberToObject(o, "residual", h->residual);
    cJSON_AddNumberToObject(o, "trials", n->g.trials);
    cJSON_AddNumberToObject(o, "seed", (double)n->g.seed);
    cJSON_AddNumberToObject(o, "tolerance", n->tolerance);
    cJSON_AddNumberToObject(o, "resamples", STATS_RESAMPLES);
}

/* A number, or null where no trial ran. */
static void cli_niah_add_num(cJSON *o, const char *name, double v)
{
    if (isnan(v))
        cJSON_AddNullToObject(o, name);
    else
        cJSON_AddNumberToObject(o, name, v);
}

static void cli_niah_add_figures(cJSON *o, const NiahCell *c)
{
    cJSON_AddNumberToObject(o, "trials", c->trials);
    cli_niah_add_num(o, "accuracy", c->accuracy);
    cli_niah_add_num(o, "ci_low", c->ci_low);
    cli_niah_add_num(o, "ci_high", c->ci_high);
    cli_niah_add_num(o, "diff_low", c->diff_low);
    cli_niah_add_num(o, "diff_high", c->diff_high);
}


static int cli_niah_json(const Niah *n, const NiahResult *r, Error *e)
{
    const NiahGrid *g = &r->g;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "backend", n->be.cuda ? "cuda" : "cpu");
    if (n->be.cuda)
        cJSON_AddStringToObject(root, "device", n->bs.info.name);
    else
        cJSON_AddStringToObject(root, "why_cpu", n->bs.why_cpu);
    if (n->fp8) {
        cJSON_AddStringToObject(root, "fp8_path", cli_niah_fp8_path(n));
        if (n->be.cuda && cudaopts_e4m3_chosen(&n->be.opts))
            cJSON_AddNumberToObject(root, "fp8_promote", n->be.opts.fp8_promote);
    }
    if (n->be.cuda && n->be.opts.splits)
        cJSON_AddNumberToObject(root, "splits", n->be.opts.splits);
    cJSON_AddBoolToObject(root, "partial", r->partial);
    cJSON_AddNumberToObject(root, "seconds", r->seconds);
    cli_niah_params_json(n, cJSON_AddObjectToObject(root, "generator"));
    cJSON *fmts = cJSON_AddArrayToObject(root, "formats");
    for (size_t f = 0; f < g->n_formats; f++) {
        NiahCell c;
        int v;
        if (niah_format_summary(r, f, n->tolerance, &c, &v, e)) {
            cJSON_Delete(root);
            return -1;
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "format", g->formats[f]->id);
        cJSON_AddBoolToObject(o, "simulated", g->formats[f]->simulated);
        cJSON_AddStringToObject(o, "kernel", kv_format_id(g->formats[f]->kernel));
        cli_niah_add_figures(o, &c);
        cJSON_AddStringToObject(o, "verdict", niahreport_verdict(v));
        if (f)          // the whole interval clears the tolerance
            cJSON_AddBoolToObject(o, "accepted", niahreport_accepted(v, c.diff_low, c.trials, n->tolerance));
        cJSON_AddItemToArray(fmts, o);
    }
    cJSON *cells = cJSON_AddArrayToObject(root, "cells");
    for (size_t f = 0; f < g->n_formats; f++)
        for (size_t l = 0; l < g->n_lengths; l++)
            for (size_t d = 0; d < g->n_depths; d++) {
                NiahCell c;
                if (niah_cell(r, f, l, d, &c, e)) {
                    cJSON_Delete(root);
                    return -1;
                }
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "format", g->formats[f]->id);
                cJSON_AddBoolToObject(o, "simulated", g->formats[f]->simulated);
                cJSON_AddNumberToObject(o, "length", g->lengths[l]);
                cJSON_AddNumberToObject(o, "depth", g->depths[d]);
                cli_niah_add_figures(o, &c);
                cJSON_AddItemToArray(cells, o);
            }
    return json_emit(root, e);
}

static int cli_niah_text(const Niah *n, const NiahResult *r, Error *e)
{
    const NiahGrid *g = &r->g;
    const NiahHaystack *h = &g->hay;
    const KvGenParams *p = &h->gen;
    printf("%s, ", n->be.cuda ? "CUDA" : "CPU reference");
    text_put(stdout, n->be.cuda ? n->bs.info.name : n->bs.why_cpu, false);
    if (n->fp8)
        printf("; FP8 kernel: %s", cli_niah_fp8_path(n));
    if (n->fp8 && n->be.opts.fp8_promote)
        printf(", promoted every %d", n->be.opts.fp8_promote);
    if (n->be.cuda && n->be.opts.splits)
        printf("; %d split%s a sequence", n->be.opts.splits, n->be.opts.splits == 1 ? "" : "s");
    printf("%s\n", r->partial ? "; PARTIAL: stopped before every trial ran" : "");
    if (n->g.kv) {
        printf("haystack: ");
        text_put(stdout, n->kv_path, false);
        printf(" (%zu tokens, %zu KV heads, head dim %zu, %s), each KV head in turn; the query drawn with %u "
               "outlier channels (the largest keys) at weight %g; RoPE theta %g\n",
               n->kv.tokens, n->kv.kv_heads, n->kv.head_dim, n->kv.dtype, p->outlier_channels,
               (double)p->query_outlier_weight, h->rope_theta);
    } else {
        printf("haystack: head dim %zu, %u outlier channels at %gx (query weight %g), %u sink(s) at +%g, "
               "%u value outlier(s) at %gx, RoPE theta %g\n",
               p->head_dim, p->outlier_channels, (double)p->outlier_scale, (double)p->query_outlier_weight,
               p->sinks, (double)p->sink_strength, p->value_outliers, (double)p->value_outlier_scale,
               h->rope_theta);
    }
    printf("needle: logit +%g, %u-digit passkey at amplitude %g (of the values' RMS); %u distractor(s) at %g of "
           "its logit; "
           "int4 window %u\n",
           (double)h->needle_logit, h->digits, (double)h->amplitude, h->distractors, (double)h->closeness,
           h->residual);
    printf("%u trials a cell, seed %llu, %.1f s; Wilson 95%% intervals; paired bootstrap of the difference "
           "to bf16 (%d resamples)\n\n",
           g->trials, (unsigned long long)g->seed, r->seconds, STATS_RESAMPLES);
    Table t;
    if (niahreport_cells(r, false, &t, e) || table_check(&t, e)) {
        table_free(&t);
        return -1;
    }
    table_print(&t, stdout);
    table_free(&t);
    char rules[320];
    printf("\nPer format over the grid, %s:\n\n", niahreport_rules(n->tolerance, rules, sizeof rules));
    if (niahreport_formats(r, n->tolerance, &t, e) || table_check(&t, e)) {
        table_free(&t);
        return -1;
    }
    table_print(&t, stdout);
    table_free(&t);
    return 0;
}

/* Runs the grid and prints it; the exit code. */
static int cli_niah_run(const Given *g, Niah *n, Error *e)
{
    if (cli_niah_options(g, n, e))
        return cli_error("niah", e);
    int rc = cli_niah_open(g, n, e);
    if (rc != EXIT_OK)
        return cli_fail("niah", rc, e);
    if (!n->be.cuda) {
        fputs("kvlab niah: running the CPU reference (", stderr);
        text_put(stderr, n->bs.why_cpu, false);
        fputs(")\n", stderr);
    }
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = cli_niah_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    Progress pr = {isatty(STDERR_FILENO), 0};
    NiahResult r;
    rc = niah_run(&n->g, &n->be, cli_niah_progress, &pr, &cli_niah_stop_signal, &r, e);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rc)
        return cli_error("niah", e);
    if (pr.tty && r.partial)
        fputc('\n', stderr);
    if (r.partial)
        fprintf(stderr, "kvlab niah: stopped by signal %d; the results are partial\n", (int)cli_niah_stop_signal);
    if (g->set[O_JSON]) {
        rc = cli_niah_json(n, &r, e);
    } else if (g->set[O_CSV]) {
        Table t;
        rc = niahreport_cells(&r, true, &t, e) || table_check(&t, e) ? -1 : 0;
        if (!rc)
            table_csv(&t, stdout);
        table_free(&t);
    } else {
        rc = cli_niah_text(n, &r, e);
    }
    int sig = r.partial ? (int)cli_niah_stop_signal : 0;
    niah_result_free(&r);
    if (rc)
        return cli_error("niah", e);
    return sig ? 128 + sig : EXIT_OK;
}

/* The options checked as a run checks them before it opens a backend, the
 * grid not run: the exit code. What depends on the backend is not checked
 * (the CUDA kernels' options where no GPU runs, the GPU's default lengths:
 * the CPU's are). */
static int cli_niah_check(const Given *g, Niah *n, Error *e)
{
    int rc = cli_niah_options(g, n, e) ? -1 : 0;
    if (!rc && !n->lengths_given)       // the lengths the CPU runs: the shorter defaults
        rc = cli_niah_lengths(NIAH_LENGTHS_CPU_DEFAULT, &n->g, e);
    if (!rc)
        rc = niah_grid_check(&n->g, e);
    return rc ? cli_error("niah", e) : EXIT_OK;
}

/* kvlab niah's arguments, then the grid run, or (check) only checked. */
static int cli_niah_main(int argc, char **argv, bool check)
{
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    Error e;
    static Niah n;
    memset(&n, 0, sizeof n);
    rc = check ? cli_niah_check(&g, &n, &e) : cli_niah_run(&g, &n, &e);
    kvtensors_free(&n.kv);
    return rc;
}

int cmd_niah_check(int argc, char **argv)
{
    return cli_niah_main(argc, argv, true);
}

int cmd_niah(int argc, char **argv)
{
    return cli_niah_main(argc, argv, false);
}
