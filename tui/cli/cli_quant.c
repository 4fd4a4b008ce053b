/* cli_quant.c - `kvlab quant`: what quantizing K (and V) does to attention.
 *
 * Input: seed 001's worked 4x4 example, a generated head (kvgen.h), or a
 * JSON matrix. Without --granularity the keys are quantized at every
 * granularity side by side, which is where per-token keys collapse next to
 * per-channel keys; with it, one run is shown token by token. */
#include "cli.h"
#include "commands.h"
#include "kvgenopts.h"

#include "experiment.h"
#include "kvgen.h"
#include "kvmatrix.h"
#include "rotate.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    O_PRESET, O_GENERATE, O_MATRIX, O_QUERY,
    O_TOKENS, O_HEAD_DIM, O_SEED, O_OUT_CH, O_OUT_SCALE, O_Q_OUT, O_SINKS, O_SINK_STR,
    O_V_OUT, O_V_OUT_SCALE,
    O_SCHEME, O_BITS, O_GRAN, O_VALUES, O_FP8, O_SCALE, O_NO_SAT,
    O_KIVI, O_GROUP, O_RESIDUAL, O_ROPE, O_THETA, O_ROTATE,
    O_JSON, O_MATRICES, O_HELP, O_COUNT
};

static const OptSpec OPTS[O_COUNT] = {
    [O_PRESET] = {"preset", "worked-4x4", "seed 001's 4x4 keys and query"},
    [O_GENERATE] = {"generate", NULL, "a synthetic head with outlier channels (the default)"},
    [O_MATRIX] = {"matrix", "FILE", "JSON: rows of keys, or an object with \"keys\", \"values\" and \"query\""},
    [O_QUERY] = {"query", "LIST", "the query vector: 1,1,0.1,1"},
    [O_TOKENS] = {"tokens", "T", "generated tokens" CLI_DEFAULT(KVGEN_TOKENS_DEFAULT)},
    [O_HEAD_DIM] = {"head-dim", "D", "generated head dimension" CLI_DEFAULT(KVGEN_HEAD_DIM_DEFAULT)},
    [O_SEED] = {"seed", "N", "generator seed" CLI_DEFAULT(KVGEN_SEED_DEFAULT)},
    [O_OUT_CH] = KVGEN_OPT_OUTLIER_CHANNELS,
    [O_OUT_SCALE] = KVGEN_OPT_OUTLIER_SCALE,
    [O_Q_OUT] = KVGEN_OPT_QUERY_OUTLIER_WEIGHT,
    [O_SINKS] = KVGEN_OPT_SINKS,
    [O_SINK_STR] = KVGEN_OPT_SINK_STRENGTH,
    [O_V_OUT] = KVGEN_OPT_VALUE_OUTLIERS,
    [O_V_OUT_SCALE] = KVGEN_OPT_VALUE_OUTLIER_SCALE,
    [O_SCHEME] = {"scheme", "int-min|int-zp|int-sym|fp8|nvfp4|mxfp4", "the quantizer (default int-min)"},
    [O_BITS] = {"bits", "N",
                "integer bits: " TEXT_OF(QUANT_BITS_MIN) " to " TEXT_OF(QUANT_BITS_MAX) CLI_DEFAULT(QUANT_BITS_DEFAULT)},
    [O_GRAN] = {"granularity", "tensor|token|channel|group:G|tgroup:G",
                "the keys that share a scale: the tensor, a token, a channel, G channels of a token or G tokens "
                "of a channel (default: each, side by side)"},
    [O_VALUES] = {"values", "exact|tensor|token|channel|group:G|tgroup:G",
                  "the values exact (the default) or quantized too, at this granularity"},
    [O_FP8] = {"fp8", "e4m3|e5m2", "the fp8 scheme's format (default e4m3)"},
    [O_SCALE] = {"scale", "S", "the fp8 scale: dynamic (the default) or a static per-tensor number"},
    [O_NO_SAT] = {"no-saturate", NULL, "fp8 overflow becomes NaN or Inf instead of the largest finite value"},
    [O_KIVI] = {"kivi", NULL, "KIVI: keys per channel over groups of tokens, values per token"},
    [O_GROUP] = {"group", "G", "KIVI group size" CLI_DEFAULT(KIVI_GROUP_DEFAULT)},
    [O_RESIDUAL] = {"residual", "R", "KIVI: most recent tokens kept in BF16 (default 0)"},
    [O_ROPE] = {"rope", "none|pre|post", "quantize the keys before (pre) or after (post) RoPE, or none (the default)"},
    [O_THETA] = {"rope-theta", "X", "the RoPE base (default 500000, Llama 3)"},
    [O_ROTATE] = {"rotate", "hadamard", "rotate each vector before quantizing (QuaRot)"},
    [O_JSON] = {"json", NULL, "print one JSON object"},
    [O_MATRICES] = {"matrices", NULL, "with --json: the key, quantized key and error matrices"},
    [O_HELP] = {"help", NULL, "show this help"},
};

static const CmdSpec CMD = {
    .name = "quant",
    .usage = "usage: kvlab quant [--preset worked-4x4 | --generate | --matrix FILE] [options]\n\n"
             "Quantizes one head's keys (and values) and measures what attention loses:\n"
             "scores, softmax and output. Without --granularity, every granularity side by side.",
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = -1,
    .max_words = 0,
};

/* ------------------------------------------------------------------------
 * Input
 */

typedef struct {
    size_t tokens, d;
    float *k, *v, *q;           // (tokens, d), (tokens, d), (d)
    bool has_values;            // V came with the input (not V = K)
    bool has_query;             // the input brought its own query
    char what[256];             // one line saying where the data came from
} Input;

static void cli_quant_input_free(Input *in)
{
    free(in->k);
    free(in->v);
    free(in->q);
}

static int cli_quant_input_alloc(Input *in, size_t tokens, size_t d, Error *e)
{
    in->tokens = tokens;
    in->d = d;
    in->k = calloc(tokens * d, sizeof *in->k);
    in->v = calloc(tokens * d, sizeof *in->v);
    in->q = calloc(d, sizeof *in->q);
    if (!in->k || !in->v || !in->q)
        return error_runtime(e, "out of memory for %zu x %zu keys", tokens, d);
    return 0;
}

/* Seed 001: channel 3 (index 2 here) is the outlier; q = [1, 1, 0.1, 1]. */
static int cli_quant_preset_worked(Input *in, Error *e)
{
    if (cli_quant_input_alloc(in, 4, 4, e))
        return -1;
    memcpy(in->k, KV_WORKED_K, sizeof KV_WORKED_K);
    memcpy(in->v, KV_WORKED_K, sizeof KV_WORKED_K);
    memcpy(in->q, KV_WORKED_Q, sizeof KV_WORKED_Q);
    in->has_query = true;
    snprintf(in->what, sizeof in->what,
             "seed 001's worked example: 4 tokens x 4 channels, channel 2 the outlier, "
             "query [1, 1, 0.1, 1]; V = K");
    return 0;
}

static int cli_quant_matrix_file(Input *in, const char *path, Error *e)
{
    KvMatrix m;
    if (kvmatrix_load(&m, path, e))
        return -1;
    *in = (Input){m.tokens, m.d, m.k, m.v, m.q, m.has_values, m.has_query, ""};
    snprintf(in->what, sizeof in->what, "%s: %zu tokens x %zu channels%s", path, m.tokens, m.d,
             m.has_values ? "" : "; V = K");
    return 0;
}

/* ------------------------------------------------------------------------
 * Options
 */

typedef struct {
    Input in;
    Experiment x;
    bool compare;               // no --granularity: every granularity side by side
    bool query_given;
} Setup;

/* A finite float option, at least lo. */
static int cli_quant_float_opt(const Given *g, int k, float lo, float *out, Error *e)
{
    if (!g->set[k])
        return 0;
    if (units_parse_finite(g->val[k], out, e))
        return error_prefix(e, "--%s", OPTS[k].name);
    if (*out < lo)
        return error_set(e, "--%s: '%s' is below %g", OPTS[k].name, g->val[k], (double)lo);
    return 0;
}

static int cli_quant_generate(const Given *g, Input *in, const Experiment *x, Error *e)
{
    KvGenParams p;
    kvgen_defaults(&p);
    p.rope_theta = x->rope != ROPE_NONE ? x->rope_theta : 0;
    uint64_t t = p.tokens, d = p.head_dim, oc = p.outlier_channels, sk = p.sinks,
             vo = p.value_outliers;
    if (cli_count(g, OPTS, O_TOKENS, 1, 1u << 20, &t, e) ||
        cli_count(g, OPTS, O_HEAD_DIM, 1, KVGEN_MAX_DIM, &d, e) ||
        cli_count(g, OPTS, O_SEED, 0, UINT64_MAX, &p.seed, e) ||
        cli_count(g, OPTS, O_OUT_CH, 0, KVGEN_MAX_DIM, &oc, e) || cli_count(g, OPTS, O_SINKS, 0, 1u << 20, &sk, e) ||
        cli_count(g, OPTS, O_V_OUT, 0, 1u << 20, &vo, e) ||
        cli_quant_float_opt(g, O_OUT_SCALE, 0, &p.outlier_scale, e) ||
        cli_quant_float_opt(g, O_Q_OUT, 0, &p.query_outlier_weight, e) ||
        cli_quant_float_opt(g, O_SINK_STR, 0, &p.sink_strength, e) ||
        cli_quant_float_opt(g, O_V_OUT_SCALE, 0, &p.value_outlier_scale, e))
        return -1;
    p.tokens = t;
    p.head_dim = d;
    p.outlier_channels = (unsigned)oc;
    p.sinks = (unsigned)sk;
    p.value_outliers = (unsigned)vo;
    if (kvgen_check(&p, e) || cli_quant_input_alloc(in, p.tokens, p.head_dim, e) ||
        kvgen(&p, in->k, in->v, in->q, e))
        return -1;
    in->has_values = true;
    size_t ch[8];
    size_t n = kvgen_outlier_channels(&p, ch, 8);
    char list[96] = "";
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%zu", i ? ", " : "", ch[i]);
    }
    snprintf(in->what, sizeof in->what,
             "generated (seed %llu): %zu tokens x %zu channels; %u outlier channels at %gx (%s%s); "
             "%u sink(s); %u value outlier(s) at %gx",
             (unsigned long long)p.seed, p.tokens, p.head_dim, p.outlier_channels,
             (double)p.outlier_scale, n ? list : "none", p.outlier_channels > n ? ", ..." : "",
             p.sinks, p.value_outliers, (double)p.value_outlier_scale);
    return 0;
}

static int cli_quant_source(const Given *g, Setup *s, Error *e)
{
    int n = g->set[O_PRESET] + g->set[O_GENERATE] + g->set[O_MATRIX];
    if (n > 1)
        return error_set(e, "give one of --preset, --generate and --matrix");
    if (g->set[O_PRESET]) {
        if (strcmp(g->val[O_PRESET], "worked-4x4") != 0)
            return error_set(e, "--preset: unknown preset '%s'; expected worked-4x4",
                             g->val[O_PRESET]);
        if (cli_quant_preset_worked(&s->in, e))
            return -1;
    } else if (g->set[O_MATRIX]) {
        if (cli_quant_matrix_file(&s->in, g->val[O_MATRIX], e))
            return error_prefix(e, "--matrix");
    } else if (cli_quant_generate(g, &s->in, &s->x, e)) {
        return -1;
    }
    if (g->set[O_MATRIX] && !g->set[O_QUERY] && !s->in.has_query)
        return error_set(e, "--matrix needs a query: a \"query\" field in the file or --query");
    if (g->set[O_QUERY]) {
        size_t got;
        float *tmp = malloc(s->in.d * sizeof *tmp);
        if (!tmp)
            return error_runtime(e, "out of memory");
        int rc = cli_parse_floats(g->val[O_QUERY], tmp, s->in.d, &got, e);
        if (!rc && got != s->in.d)
            rc = error_set(e, "%zu values, one per channel, not %zu", s->in.d, got);
        if (!rc)
            memcpy(s->in.q, tmp, s->in.d * sizeof *tmp);
        free(tmp);
        if (rc)
            return error_prefix(e, "--query");
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Options that mean something only with others: an option given where it
 * would change nothing is refused, saying what it needs, rather than
 * ignored.
 */

/* Whether the scheme fixes which elements share a scale (nvfp4's and
 * mxfp4's blocks of channels, a static FP8 scale's one per tensor), and
 * that granularity. */
static bool cli_quant_fixed_groups(const Experiment *x, Granularity *g)
{
    static const Granularity NVFP4 = {GRAN_GROUP_CHANNELS, 16}, MXFP4 = {GRAN_GROUP_CHANNELS, 32},
                             TENSOR = {GRAN_TENSOR, 0};
    const Granularity *f = x->key.scheme == SCHEME_NVFP4   ? &NVFP4
                           : x->key.scheme == SCHEME_MXFP4 ? &MXFP4
                           : x->key.scheme == SCHEME_FP8 && x->key.static_scale ? &TENSOR
                                                                                 : NULL;
    if (f && g)
        *g = *f;
    return f != NULL;
}

static bool cli_quant_fp8_scheme(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    return s->x.key.scheme == SCHEME_FP8;
}

static bool cli_quant_json_output(const Given *g, const void *ctx)
{
    (void)ctx;
    return g->set[O_JSON];
}

static bool cli_quant_one_run(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    return !s->compare;
}

static bool cli_quant_kivi_on(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    return s->x.kivi;
}

static bool cli_quant_kivi_off(const Given *g, const void *ctx)
{
    return !cli_quant_kivi_on(g, ctx);
}

static bool cli_quant_rope_on(const Given *g, const void *ctx)
{
    const Setup *s = ctx;
    (void)g;
    return s->x.rope != ROPE_NONE;
}

static const OptRule RULES[] = {
    {O_FP8, cli_quant_fp8_scheme, "applies to --scheme fp8"},
    {O_SCALE, cli_quant_fp8_scheme, "applies to --scheme fp8"},
    {O_NO_SAT, cli_quant_fp8_scheme, "applies to --scheme fp8 (the other schemes always clamp)"},
    {O_MATRICES, cli_quant_json_output, "needs --json"},
    {O_MATRICES, cli_quant_one_run, "needs one run, not every granularity side by side: give --granularity"},
    {O_GROUP, cli_quant_kivi_on, "belongs to --kivi"},
    {O_RESIDUAL, cli_quant_kivi_on, "belongs to --kivi"},
    {O_SCHEME, cli_quant_kivi_off, "cannot go with --kivi, which is int-min by definition"},
    {O_GRAN, cli_quant_kivi_off, "cannot go with --kivi: keys per channel in groups of --group tokens"},
    {O_THETA, cli_quant_rope_on, "needs --rope pre or --rope post"},
};

/* The generator's options, O_TOKENS to O_V_OUT_SCALE, shape only the
 * generated head. */
static int cli_quant_option_rules(const Given *g, const Setup *s, Error *e)
{
    if (cli_rules(g, OPTS, RULES, sizeof RULES / sizeof RULES[0], s, e))
        return -1;
    for (int k = O_TOKENS; k <= O_V_OUT_SCALE; k++)
        if (g->set[k] && (g->set[O_PRESET] || g->set[O_MATRIX]))
            return error_set(e, "--%s shapes the generated head; --%s brings its own data", OPTS[k].name,
                             g->set[O_PRESET] ? "preset" : "matrix");
    const Experiment *x = &s->x;
    if (g->set[O_VALUES] && !x->values_exact && x->kivi)
        return error_set(e, "--values: with --kivi values are KIVI's (per token, in groups of --group "
                            "channels); give exact or leave --values out");
    Granularity fixed;
    char a[32], b[32];
    if (cli_quant_fixed_groups(x, &fixed)) {
        const Granularity *given[] = {g->set[O_GRAN] ? &x->key.gran : NULL,
                                      g->set[O_VALUES] && !x->values_exact ? &x->value.gran : NULL};
        for (int k = 0; k < 2; k++)
            if (given[k] && (given[k]->kind != fixed.kind || given[k]->size != fixed.size))
                return error_set(e, "--%s: %s shares a scale over %s, not %s", k ? "values" : "granularity",
                                 x->key.static_scale ? "a static --scale" : scheme_str(x->key.scheme),
                                 granularity_str(&fixed, a, sizeof a), granularity_str(given[k], b, sizeof b));
    }
    return 0;
}

static int cli_quant_scheme_options(const Given *g, Setup *s, Error *e)
{
    Experiment *x = &s->x;
    uint64_t bits = QUANT_BITS_DEFAULT, group = KIVI_GROUP_DEFAULT, residual = 0;
    if (g->set[O_SCHEME] && scheme_parse(g->val[O_SCHEME], &x->key.scheme, e))
        return error_prefix(e, "--scheme");
    if (cli_count(g, OPTS, O_BITS, QUANT_BITS_MIN, QUANT_BITS_MAX, &bits, e) ||
        cli_count(g, OPTS, O_GROUP, 1, 1u << 20, &group, e) || cli_count(g, OPTS, O_RESIDUAL, 0, 1u << 24, &residual, e))
        return -1;
    x->key.bits = (unsigned)bits;
    bool integer = x->key.scheme == SCHEME_INT_SYM || x->key.scheme == SCHEME_INT_MIN ||
                   x->key.scheme == SCHEME_INT_ZP;
    if (g->set[O_BITS] && !integer && !g->set[O_KIVI])
        return error_set(e, "--bits applies to the integer schemes and KIVI; %s has a fixed width",
                         scheme_str(x->key.scheme));
    if (g->set[O_FP8] && !(x->key.fp8 = minifloat_by_id(g->val[O_FP8])))
        return error_set(e, "--fp8: expected e4m3 or e5m2, not '%s'", g->val[O_FP8]);
    if (x->key.fp8 == &MF_E2M1)
        return error_set(e, "--fp8: e2m1 is a 4-bit format; use --scheme nvfp4 or mxfp4");
    if (g->set[O_SCALE] && strcmp(g->val[O_SCALE], "dynamic") != 0) {
        Error why;
        if (units_parse_finite(g->val[O_SCALE], &x->key.static_scale, &why))
            return error_set(e, "--scale: %s; expected dynamic or a positive number", why.msg);
        if (!(x->key.static_scale > 0))
            return error_set(e, "--scale: expected dynamic or a positive number, not '%s'",
                             g->val[O_SCALE]);
    }
    x->key.saturate = !g->set[O_NO_SAT];
    x->kivi = g->set[O_KIVI];
    s->compare = !g->set[O_GRAN] && !x->kivi && !cli_quant_fixed_groups(x, NULL);
    if (g->set[O_GRAN] && granularity_parse(g->val[O_GRAN], &x->key.gran, e))
        return error_prefix(e, "--granularity");
    x->value = x->key;
    x->kivi_spec = (KiviSpec){(unsigned)bits, group, residual};
    /* Values stay exact unless asked for; KIVI quantizes them by definition. */
    x->values_exact = g->set[O_VALUES] ? strcmp(g->val[O_VALUES], "exact") == 0 : !x->kivi;
    if (!x->values_exact && g->set[O_VALUES] && granularity_parse(g->val[O_VALUES], &x->value.gran, e))
        return error_prefix(e, "--values: exact, or a granularity");
    if (g->set[O_ROPE]) {
        static const char *const M[] = {"none", "pre", "post"};
        size_t i = 0;
        while (i < 3 && strcmp(M[i], g->val[O_ROPE]) != 0)
            i++;
        if (i == 3)
            return error_set(e, "--rope: expected none, pre or post, not '%s'", g->val[O_ROPE]);
        x->rope = (RopeMode)i;
    }
    float theta = (float)x->rope_theta;
    if (cli_quant_float_opt(g, O_THETA, 1, &theta, e))
        return -1;
    if (!(theta > 1))
        return error_set(e, "--rope-theta: the RoPE base must be greater than 1, not %g", (double)theta);
    x->rope_theta = theta;
    if (g->set[O_ROTATE]) {
        if (strcmp(g->val[O_ROTATE], "hadamard") != 0)
            return error_set(e, "--rotate: expected hadamard, not '%s'", g->val[O_ROTATE]);
        x->hadamard = true;
    }
    if (cli_quant_option_rules(g, s, e))
        return -1;
    return quant_spec_check(&x->key, e);
}

/* ------------------------------------------------------------------------
 * Output
 */

/* "int-min 2-bit per token", "fp8 E4M3 static scale 0.268", "KIVI 2-bit". */
static const char *cli_quant_describe(const Experiment *x, const QuantSpec *q, char *buf, size_t n)
{
    char g[32];
    granularity_str(&q->gran, g, sizeof g);
    if (x->kivi)
        snprintf(buf, n, "KIVI %u-bit, groups of %zu, residual %zu", x->kivi_spec.bits,
                 x->kivi_spec.group, x->kivi_spec.residual);
    else if (q->scheme == SCHEME_FP8 && q->static_scale)
        snprintf(buf, n, "fp8 %s, static scale %g%s", q->fp8->name, (double)q->static_scale,
                 q->saturate ? "" : ", not saturating");
    else if (q->scheme == SCHEME_FP8)
        snprintf(buf, n, "fp8 %s, dynamic scale per %s%s", q->fp8->name, g,
                 q->saturate ? "" : ", not saturating");
    else if (q->scheme == SCHEME_NVFP4 || q->scheme == SCHEME_MXFP4)
        snprintf(buf, n, "%s", scheme_str(q->scheme));
    else
        snprintf(buf, n, "%s %u-bit per %s", scheme_str(q->scheme), q->bits, g);
    return buf;
}

static void cli_quant_header(const Setup *s, FILE *out)
{
    const Experiment *x = &s->x;
    char a[128], b[128];
    static const char *const ROPE[] = {"no RoPE", "keys quantized before RoPE",
                                       "keys quantized after RoPE"};
    text_put(out, s->in.what, false);       // holds the --matrix path as given
    fputc('\n', out);
    fprintf(out, "keys: %s; values: %s; %s%s\n",
            s->compare ? "each granularity below" : cli_quant_describe(x, &x->key, a, sizeof a),
            x->values_exact ? "exact"
            : x->kivi       ? "KIVI per token"
                            : cli_quant_describe(x, &x->value, b, sizeof b),
            ROPE[x->rope], x->hadamard ? "; Hadamard-rotated" : "");
}

static void cli_quant_metrics_text(const ExperimentResult *r, bool saturate, FILE *out)
{
    fprintf(out, "relative error of K (Frobenius)  %.4g%%\n", 100 * r->err.rel_fro_k);
    fprintf(out, "relative error of V (Frobenius)  %.4g%%\n", 100 * r->err.rel_fro_v);
    fprintf(out, "largest score error              %.4g\n", r->err.max_score_error);
    fprintf(out, "softmax total variation          %.4g\n", r->err.softmax_tv);
    fprintf(out, "attention output error           %.4g%%\n", 100 * r->err.output_rel_error);
    fprintf(out, "top-scoring token                %zu -> %zu%s\n", r->err.top_ref, r->err.top,
            r->err.top == r->err.top_ref ? "" : "  (changed)");
    if (r->err.nan_scores)
        fprintf(out, "%zu quantized scores are NaN: %s\n", r->err.nan_scores,
                saturate ? "the arithmetic overflowed"
                         : "values past the format's range became NaN (--no-saturate; without it they saturate)");
}

/* Scores token by token; with many tokens, the ones most in error. */
static void cli_quant_scores_text(const ExperimentResult *r, FILE *out)
{
    size_t n = r->tokens, show = n <= 16 ? n : 12;
    size_t *idx = malloc(n * sizeof *idx);
    if (!idx)
        return;
    experiment_most_moved(r, idx, n > show ? show : 0);   // all in token order when they fit
    Table t;
    table_header(&t, "token", "score", "quantized", "error", NULL);
    for (size_t i = 0; i < show; i++) {
        size_t k = idx[i];
        table_row(&t);
        table_cell(&t, "%zu", k);
        table_cell(&t, "%.4g", r->scores_ref[k]);
        table_cell(&t, "%.4g", r->scores[k]);
        table_cell(&t, "%+.4g", r->scores[k] - r->scores_ref[k]);
    }
    if (n > show)
        fprintf(out, "the %zu of %zu tokens whose scores moved most:\n", show, n);
    table_print(&t, out);
    table_free(&t);
    fputc('\n', out);
    free(idx);
}

static void cli_quant_add_doubles(cJSON *o, const char *name, const double *v, size_t n)
{
    cJSON *a = cJSON_AddArrayToObject(o, name);
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
}

static void cli_quant_add_matrix(cJSON *o, const char *name, const float *m, const float *minus, size_t rows,
                                 size_t cols)
{
    cJSON *a = cJSON_AddArrayToObject(o, name);
    for (size_t r = 0; r < rows; r++) {
        cJSON *row = cJSON_CreateArray();
        for (size_t c = 0; c < cols; c++)
            cJSON_AddItemToArray(row, cJSON_CreateNumber((double)m[r * cols + c] -
                                                         (minus ? (double)minus[r * cols + c] : 0)));
        cJSON_AddItemToArray(a, row);
    }
}

static void cli_quant_errors_json(cJSON *o, const KvErrors *k)
{
    cJSON_AddNumberToObject(o, "nan_scores", (double)k->nan_scores);
    cJSON_AddNumberToObject(o, "rel_fro_error", k->rel_fro_k);
    cJSON_AddNumberToObject(o, "rel_fro_error_v", k->rel_fro_v);
    cJSON_AddNumberToObject(o, "max_score_error", k->max_score_error);
    cJSON_AddNumberToObject(o, "softmax_tv", k->softmax_tv);
    cJSON_AddNumberToObject(o, "output_rel_error", k->output_rel_error);
    cJSON_AddNumberToObject(o, "top_ref", (double)k->top_ref);
    cJSON_AddNumberToObject(o, "top", (double)k->top);
}

static cJSON *cli_quant_json_base(const Setup *s)
{
    cJSON *o = cJSON_CreateObject();
    char a[128];
    cJSON_AddStringToObject(o, "input", s->in.what);
    cJSON_AddNumberToObject(o, "tokens", (double)s->in.tokens);
    cJSON_AddNumberToObject(o, "head_dim", (double)s->in.d);
    const QuantSpec *k = &s->x.key;
    cJSON_AddStringToObject(o, "scheme", s->x.kivi ? "kivi" : scheme_str(k->scheme));
    static const unsigned FIXED[] = {[SCHEME_FP8] = 8, [SCHEME_NVFP4] = 4, [SCHEME_MXFP4] = 4};
    bool fixed = !s->x.kivi && (k->scheme == SCHEME_FP8 || k->scheme == SCHEME_NVFP4 ||
                                k->scheme == SCHEME_MXFP4);
    cJSON_AddNumberToObject(o, "bits", s->x.kivi ? s->x.kivi_spec.bits : fixed ? FIXED[k->scheme] : k->bits);
    if (s->x.kivi)
        cJSON_AddStringToObject(o, "granularity", "kivi");
    else if (k->scheme == SCHEME_NVFP4 || k->scheme == SCHEME_MXFP4)
        cJSON_AddStringToObject(o, "granularity", k->scheme == SCHEME_NVFP4 ? "block:16" : "block:32");
    else if (k->scheme == SCHEME_FP8 && k->static_scale)
        cJSON_AddStringToObject(o, "granularity", "tensor (static scale)");
    else if (!s->compare)
        cJSON_AddStringToObject(o, "granularity", granularity_str(&k->gran, a, sizeof a));
    static const char *const ROPE[] = {"none", "pre", "post"};
    cJSON_AddStringToObject(o, "rope", ROPE[s->x.rope]);
    cJSON_AddBoolToObject(o, "hadamard", s->x.hadamard);
    cJSON_AddBoolToObject(o, "values_exact", s->x.values_exact);
    return o;
}

static int cli_quant_run_one(const Setup *s, bool json, bool matrices, Error *e)
{
    ExperimentResult r;
    if (experiment_run(&s->x, s->in.k, s->in.v, s->in.q, s->in.tokens, s->in.d, &r, e))
        return -1;
    if (json) {
        cJSON *o = cli_quant_json_base(s);
        cli_quant_add_doubles(o, "scores_ref", r.scores_ref, r.tokens);
        cli_quant_add_doubles(o, "scores", r.scores, r.tokens);
        cli_quant_errors_json(o, &r.err);
        if (matrices) {
            cli_quant_add_matrix(o, "keys", r.k_ref, NULL, r.tokens, r.d);
            cli_quant_add_matrix(o, "keys_quantized", r.k_hat, NULL, r.tokens, r.d);
            cli_quant_add_matrix(o, "key_error", r.k_hat, r.k_ref, r.tokens, r.d);
        }
        experiment_result_free(&r);
        return json_emit(o, e);
    }
    cli_quant_header(s, stdout);
    fputc('\n', stdout);
    cli_quant_scores_text(&r, stdout);
    cli_quant_metrics_text(&r, s->x.key.saturate, stdout);
    experiment_result_free(&r);
    return 0;
}

/* The granularities worth comparing for this shape. */
static size_t cli_quant_compare_list(const Setup *s, Granularity *out)
{
    size_t n = 0;
    out[n++] = (Granularity){GRAN_TENSOR, 0};
    out[n++] = (Granularity){GRAN_TOKEN, 0};
    out[n++] = (Granularity){GRAN_CHANNEL, 0};
    if (s->in.d > 32)
        out[n++] = (Granularity){GRAN_GROUP_CHANNELS, 32};
    if (s->in.tokens > 32)
        out[n++] = (Granularity){GRAN_GROUP_TOKENS, 32};
    return n;
}

static int cli_quant_run_compare(Setup *s, bool json, Error *e)
{
    Granularity gs[8];
    size_t n = cli_quant_compare_list(s, gs);
    ExperimentResult r[8];
    for (size_t i = 0; i < n; i++) {
        s->x.key.gran = gs[i];
        if (experiment_run(&s->x, s->in.k, s->in.v, s->in.q, s->in.tokens, s->in.d, &r[i], e)) {
            while (i--)
                experiment_result_free(&r[i]);
            return -1;
        }
    }
    cJSON *o = json ? cli_quant_json_base(s) : NULL;
    cJSON *runs = json ? cJSON_AddArrayToObject(o, "runs") : NULL;
    Table t;
    table_header(&t, "keys per", "K error", "max score err", "softmax TV", "output err", "top token",
                 NULL);
    for (size_t i = 0; i < n; i++) {
        char g[32];
        granularity_str(&gs[i], g, sizeof g);
        if (json) {
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "granularity", g);
            if (i == 0)
                cli_quant_add_doubles(o, "scores_ref", r[i].scores_ref, r[i].tokens);
            cli_quant_add_doubles(row, "scores", r[i].scores, r[i].tokens);
            cli_quant_errors_json(row, &r[i].err);
            cJSON_AddItemToArray(runs, row);
        } else {
            table_row(&t);
            table_cell(&t, "%s", g);
            table_cell(&t, "%.3g%%", 100 * r[i].err.rel_fro_k);
            table_cell(&t, "%.3g", r[i].err.max_score_error);
            table_cell(&t, "%.3g", r[i].err.softmax_tv);
            table_cell(&t, "%.3g%%", 100 * r[i].err.output_rel_error);
            table_cell(&t, "%s", r[i].err.top == r[i].err.top_ref ? "kept" : "lost");
        }
        experiment_result_free(&r[i]);
    }
    if (json) {
        table_free(&t);
        return json_emit(o, e);
    }
    cli_quant_header(s, stdout);
    if (s->x.key.scheme == SCHEME_FP8)
        printf("scheme: fp8 %s, a dynamic scale per group\n\n", s->x.key.fp8->name);
    else
        printf("scheme: %s %u-bit\n\n", scheme_str(s->x.key.scheme), s->x.key.bits);
    table_print(&t, stdout);
    table_free(&t);
    printf("\nK error: ||K^ - K|| / ||K||; score error: largest |q.k^ - q.k|; softmax TV: "
           "how much attention moved (0 to 1);\noutput err: ||o^ - o|| / ||o||; top token: "
           "whether the most-attended token stays on top.\n");
    return 0;
}

int cmd_quant(int argc, char **argv)
{
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    Error e;
    static Setup s;
    memset(&s, 0, sizeof s);
    experiment_init(&s.x);
    rc = EXIT_OK;
    if (cli_quant_scheme_options(&g, &s, &e) || cli_quant_source(&g, &s, &e) ||
        (s.compare ? cli_quant_run_compare(&s, g.set[O_JSON], &e)
                   : cli_quant_run_one(&s, g.set[O_JSON], g.set[O_MATRICES], &e)))
        rc = cli_error("quant", &e);        // exit 3 where the machine failed (out of memory)
    cli_quant_input_free(&s.in);
    return rc;
}
