/* screen_quant.c - what quantization does to keys: a key matrix (tokens x
 * channels) as a heatmap next to its quantized form and the error, per
 * token and per channel side by side, and the score errors as bars. The
 * numbers come from calc/experiment.h, the same code as `kvlab quant`. */
#include "screens.h"

#include "cli.h"
#include "experiment.h"
#include "kvgen.h"
#include "rotate.h"
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_TOKENS 128
#define GEN_DIM 64
#define AVG_SEEDS 50
#define MOVED_MAX 16            // score-error bars drawn, at most

static const char *const SOURCES[] = {"generated", "worked 4x4"};
static const char *const SCHEMES[] = {"int-min", "int-zp", "int-sym", "fp8", "nvfp4", "mxfp4", "kivi"};
static const char *const GRANS[] = {"tensor", "token", "channel", "group", "tgroup"};
static const char *const ROPES[] = {"none", "pre", "post"};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

typedef struct {
    int source, scheme, gran, rope;
    uint64_t seed, outliers, bits, group;
    float outlier_scale;
    bool hadamard;
    size_t T, D;
    float k[GEN_TOKENS * GEN_DIM], v[GEN_TOKENS * GEN_DIM], q[GEN_DIM];
    ExperimentResult cur, tok, chan;
    float err_cur[GEN_TOKENS * GEN_DIM], err_tok[GEN_TOKENS * GEN_DIM], err_chan[GEN_TOKENS * GEN_DIM];
    double avg[3];              // mean K error over AVG_SEEDS seeds: current, token, channel
    bool have_avg;
    /* Drawn from the results, computed when they change (recompute). */
    double kmax;                // largest |key|: the keys' heatmap range
    double emax;                // largest |error| of the three runs: the errors' range
    size_t n_moved;
    size_t moved[MOVED_MAX];    // tokens whose scores moved most, most first
} Quant;

static void *create(Error *e)
{
    Quant *s = lab_state_new(sizeof *s, e);
    if (!s)
        return NULL;
    s->seed = 1;
    s->outliers = 2;
    s->outlier_scale = 20;
    s->bits = 4;
    s->group = 32;
    s->gran = 1;                // per token: the one that collapses
    return s;
}

static void free_results(Quant *s)
{
    experiment_result_free(&s->cur);
    experiment_result_free(&s->tok);
    experiment_result_free(&s->chan);
}

static void destroy(void *st)
{
    free_results(st);
    free(st);
}

static size_t fields(void *st, Field *f)
{
    Quant *s = st;
    size_t n = 0;
    f[n++] = (Field){"Keys", FK_CHOICE, &s->source, 0, N_OF(SOURCES), 0, SOURCES, NULL};
    f[n++] = (Field){"Seed", FK_COUNT, &s->seed, 0, UINT32_MAX, 1, NULL, NULL};
    f[n++] = (Field){"Outlier channels", FK_COUNT, &s->outliers, 0, GEN_DIM, 1, NULL, NULL};
    f[n++] = (Field){"Outlier scale", FK_FLOAT, &s->outlier_scale, 1, 1000, 0, NULL, NULL};
    f[n++] = (Field){"Scheme", FK_CHOICE, &s->scheme, 0, N_OF(SCHEMES), 0, SCHEMES, NULL};
    f[n++] = (Field){"Bits", FK_COUNT, &s->bits, 2, 8, 1, NULL, NULL};
    f[n++] = (Field){"Granularity", FK_CHOICE, &s->gran, 0, N_OF(GRANS), 0, GRANS, NULL};
    f[n++] = (Field){"Group size", FK_POW2, &s->group, 1, 1024, 0, NULL, NULL};
    f[n++] = (Field){"RoPE", FK_CHOICE, &s->rope, 0, N_OF(ROPES), 0, ROPES, NULL};
    f[n++] = (Field){"Hadamard", FK_TOGGLE, &s->hadamard, 0, 0, 0, NULL, NULL};
    return n;
}

static int load_keys(Quant *s, uint64_t seed, Error *e)
{
    if (s->source == 1) {
        s->T = s->D = 4;
        memcpy(s->k, KV_WORKED_K, sizeof KV_WORKED_K);
        memcpy(s->v, KV_WORKED_K, sizeof KV_WORKED_K);
        memcpy(s->q, KV_WORKED_Q, sizeof KV_WORKED_Q);
        return 0;
    }
    KvGenParams p;
    kvgen_defaults(&p);
    p.seed = seed;
    p.rope_theta = s->rope ? ROPE_THETA_LLAMA3 : 0;
    p.tokens = GEN_TOKENS;
    p.head_dim = GEN_DIM;
    p.outlier_channels = (unsigned)s->outliers;
    p.outlier_scale = s->outlier_scale;
    s->T = GEN_TOKENS;
    s->D = GEN_DIM;
    return kvgen(&p, s->k, s->v, s->q, e);
}

static void setup(const Quant *s, Experiment *x, GranKind g)
{
    experiment_init(x);
    static const Scheme MAP[] = {SCHEME_INT_MIN, SCHEME_INT_ZP, SCHEME_INT_SYM, SCHEME_FP8,
                                 SCHEME_NVFP4, SCHEME_MXFP4, SCHEME_INT_MIN};
    x->key.scheme = MAP[s->scheme];
    x->key.bits = (unsigned)s->bits;
    x->key.gran = (Granularity){g, s->group};
    x->kivi = s->scheme == 6;
    x->kivi_spec = (KiviSpec){(unsigned)s->bits, s->group, 0};
    x->values_exact = !x->kivi;
    x->rope = (RopeMode)s->rope;
    x->hadamard = s->hadamard;
}

/* The per-token and per-channel comparisons use integer keys at the same
 * bits: the block formats and KIVI fix their own layout. */
static bool fixed_layout(const Quant *s)
{
    return s->scheme >= 4;
}

/* One experiment; `compare` runs are the per-token and per-channel ones. */
static int run(Quant *s, GranKind g, bool compare, ExperimentResult *r, float *err, Error *e)
{
    Experiment x;
    setup(s, &x, g);
    if (compare && fixed_layout(s)) {
        x.kivi = false;
        x.key.scheme = SCHEME_INT_MIN;
        x.values_exact = true;
    }
    experiment_result_free(r);
    if (experiment_run(&x, s->k, s->v, s->q, s->T, s->D, r, e))
        return -1;
    for (size_t i = 0; i < s->T * s->D; i++)
        err[i] = r->k_hat[i] - r->k_ref[i];
    return 0;
}

/* The keys of `seed` quantized three ways: as set, per token and per channel. */
static int run_all(Quant *s, uint64_t seed, Error *e)
{
    static const GranKind G[] = {GRAN_TENSOR, GRAN_TOKEN, GRAN_CHANNEL, GRAN_GROUP_CHANNELS,
                                 GRAN_GROUP_TOKENS};    // by GRANS
    if (load_keys(s, seed, e) || run(s, G[s->gran], false, &s->cur, s->err_cur, e) ||
        run(s, GRAN_TOKEN, true, &s->tok, s->err_tok, e) ||
        run(s, GRAN_CHANNEL, true, &s->chan, s->err_chan, e))
        return -1;
    return 0;
}

static double amax(const float *m, size_t n)
{
    double a = 0;
    for (size_t i = 0; i < n; i++)
        a = fmax(a, fabs((double)m[i]));
    return a > 0 ? a : 1;
}

/* The heatmaps' ranges and the tokens whose scores moved most. */
static void summarise(Quant *s)
{
    size_t n = s->T * s->D;
    s->kmax = amax(s->cur.k_ref, n);
    s->emax = fmax(amax(s->err_tok, n), fmax(amax(s->err_chan, n), amax(s->err_cur, n)));
    size_t order[GEN_TOKENS];
    s->n_moved = experiment_most_moved(&s->cur, order, MOVED_MAX);
    for (size_t i = 0; i < s->n_moved; i++)
        s->moved[i] = order[i];
}

/* A copy of s without its results, to compute new ones beside the old. */
static Quant *scratch(const Quant *s)
{
    Quant *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    *t = *s;
    memset(&t->cur, 0, sizeof t->cur);
    memset(&t->tok, 0, sizeof t->tok);
    memset(&t->chan, 0, sizeof t->chan);
    return t;
}

/* The three runs (a failure leaves them to be run again: the lab puts the
 * settings before back and recomputes). */
static int recompute(void *st, Error *e)
{
    Quant *s = st;
    s->have_avg = false;
    if (run_all(s, s->seed, e))
        return -1;
    summarise(s);
    return 0;
}

static const char *describe(const Quant *s, char *buf, size_t n)
{
    if (s->scheme == 6)
        snprintf(buf, n, "KIVI %llu-bit, groups of %llu", (unsigned long long)s->bits,
                 (unsigned long long)s->group);
    else if (s->scheme == 3 || s->scheme == 4 || s->scheme == 5)
        snprintf(buf, n, "%s per %s", SCHEMES[s->scheme], s->scheme == 3 ? GRANS[s->gran] : "block");
    else
        snprintf(buf, n, "%s %llu-bit per %s", SCHEMES[s->scheme], (unsigned long long)s->bits,
                 GRANS[s->gran]);
    return buf;
}

static void draw(void *st, Rect r, int scroll)
{
    Quant *s = st;
    (void)scroll;
    char a[96], line[320];
    snprintf(line, sizeof line, "%s keys, %zu tokens x %zu channels: %s%s%s",
             SOURCES[s->source], s->T, s->D, describe(s, a, sizeof a),
             s->rope ? (s->rope == 1 ? ", before RoPE" : ", after RoPE") : "",
             s->hadamard ? ", Hadamard-rotated" : "");
    draw_title((Rect){r.y, r.x, 1, r.w}, line);
    const KvErrors *k = &s->cur.err;
    snprintf(line, sizeof line, "K error %.3g%%   V error %.3g%%   largest score error %.3g   "
                                "softmax moved %.3g   output error %.3g%%   top token %s",
             100 * k->rel_fro_k, 100 * k->rel_fro_v, k->max_score_error, k->softmax_tv,
             100 * k->output_rel_error, k->top == k->top_ref ? "kept" : "LOST");
    put_text(r.y + 1, r.x, r.w, crt_attr(ROLE_NORMAL), line);
    char same[48] = "";
    if (fixed_layout(s))        /* the block formats fix their layout: compare integers */
        snprintf(same, sizeof same, "int-min %llu-bit keys ", (unsigned long long)s->bits);
    snprintf(line, sizeof line, "%sper token: K error %.3g%%, score error %.3g   |   per "
                                "channel: K error %.3g%%, score error %.3g",
             same, 100 * s->tok.err.rel_fro_k, s->tok.err.max_score_error,
             100 * s->chan.err.rel_fro_k, s->chan.err.max_score_error);
    put_text(r.y + 2, r.x, r.w, crt_attr(ROLE_DIM), line);
    put_text(r.y + 3, r.x, r.w, crt_attr(ROLE_DIM),
             "keys: b bits  f format  g granularity  r RoPE  H Hadamard  o/O outliers  s seed  "
             "w worked 4x4  a mean over 50 seeds");
    if (s->have_avg) {
        snprintf(line, sizeof line, "mean over %d seeds: K error %.3g%% (this setting), %.3g%% per "
                                    "token, %.3g%% per channel", AVG_SEEDS, 100 * s->avg[0],
                 100 * s->avg[1], 100 * s->avg[2]);
        put_text(r.y + 4, r.x, r.w, crt_attr(ROLE_GOOD), line);
    }
    int top = r.y + 6, hh = (r.y + r.h - top) / 2, cw = r.w / 3;
    const double kmax = s->kmax, emax = s->emax;
    draw_heatmap((Rect){top, r.x, hh, cw - 1}, "keys K", s->cur.k_ref, s->T, s->D, -kmax, kmax);
    draw_heatmap((Rect){top, r.x + cw, hh, cw - 1}, "quantized (this setting)", s->cur.k_hat, s->T,
                 s->D, -kmax, kmax);
    draw_heatmap((Rect){top, r.x + 2 * cw, hh, cw - 1}, "error (this setting)", s->err_cur, s->T,
                 s->D, -emax, emax);
    int y2 = top + hh;
    draw_heatmap((Rect){y2, r.x, r.y + r.h - y2, cw - 1}, "error, per token", s->err_tok, s->T, s->D,
                 -emax, emax);
    draw_heatmap((Rect){y2, r.x + cw, r.y + r.h - y2, cw - 1}, "error, per channel", s->err_chan,
                 s->T, s->D, -emax, emax);
    /* score errors of the tokens that moved most */
    BarItem items[MOVED_MAX];
    char labels[MOVED_MAX][24], text[MOVED_MAX][32];
    size_t nb = s->n_moved;
    int bh = r.y + r.h - y2 - 1;
    if (nb > (size_t)bh)
        nb = bh > 0 ? (size_t)bh : 0;
    for (size_t i = 0; i < nb; i++) {
        size_t t = s->moved[i];
        double d = s->cur.scores[t] - s->cur.scores_ref[t];
        snprintf(labels[i], sizeof labels[i], "token %zu", t);
        snprintf(text[i], sizeof text[i], "%+.3g", d);
        items[i] = (BarItem){labels[i], fabs(d), text[i]};
    }
    put_text(y2, r.x + 2 * cw, cw - 1, crt_attr(ROLE_TITLE), "score errors q.k^ - q.k (this setting)");
    draw_bars((Rect){y2 + 1, r.x + 2 * cw, bh, cw - 1}, items, nb);
}

/* 'a': the mean K error over AVG_SEEDS generated seeds, with a progress
 * bar that Esc cancels. */
static int average(Quant *s, Lab *lab)
{
    if (s->source != 0) {
        lab_status(lab, true, "averaging needs generated keys (set Keys to generated)");
        return KEY_REDRAW;
    }
    double sum[3] = {0};
    Quant *tmp = scratch(s);
    if (!tmp) {
        lab_status(lab, true, "out of memory for averaging");
        return KEY_REDRAW;
    }
    int done = 0, failed = 0;
    Error e;
    for (; done < AVG_SEEDS; done++) {
        if (lab_progress(lab, "mean over seeds", done, AVG_SEEDS))
            break;
        if ((failed = run_all(tmp, s->seed + (uint64_t)done, &e)))
            break;
        sum[0] += tmp->cur.err.rel_fro_k;
        sum[1] += tmp->tok.err.rel_fro_k;
        sum[2] += tmp->chan.err.rel_fro_k;
    }
    free_results(tmp);
    free(tmp);
    if (failed) {
        lab_status(lab, true, "averaging stopped at seed %llu: %s", (unsigned long long)s->seed + done, e.msg);
        return KEY_REDRAW;
    }
    if (done < AVG_SEEDS) {
        lab_status(lab, false, "averaging cancelled after %d of %d seeds", done, AVG_SEEDS);
        return KEY_REDRAW;
    }
    for (int i = 0; i < 3; i++)
        s->avg[i] = sum[i] / AVG_SEEDS;
    s->have_avg = true;
    lab_status(lab, false, "averaged seeds %llu to %llu", (unsigned long long)s->seed,
               (unsigned long long)s->seed + AVG_SEEDS - 1);
    return KEY_REDRAW;
}

static int key(void *st, int ch, Lab *lab)
{
    Quant *s = st;
    switch (ch) {
    case 'a':
        return average(s, lab);
    case 's':
        s->seed = s->seed < UINT32_MAX ? s->seed + 1 : 0;
        break;
    case 'b':
        s->bits = s->bits >= 8 ? 2 : s->bits + 1;
        break;
    case 'f':
        s->scheme = (s->scheme + 1) % (int)N_OF(SCHEMES);
        break;
    case 'g':
        s->gran = (s->gran + 1) % (int)N_OF(GRANS);
        break;
    case 'r':
        s->rope = (s->rope + 1) % (int)N_OF(ROPES);
        break;
    case 'H':
        s->hadamard = !s->hadamard;
        break;
    case 'o':
        s->outlier_scale = s->outlier_scale > 1 ? s->outlier_scale / 2 : 1;
        break;
    case 'O':
        s->outlier_scale = s->outlier_scale < 500 ? s->outlier_scale * 2 : s->outlier_scale;
        break;
    case 'w':                       /* the worked example as seed 001 works it: 2-bit, per token */
        s->source = !s->source;
        if (s->source == 1)
            s->scheme = 0, s->bits = 2, s->gran = 1;
        break;
    default:
        return KEY_IGNORED;
    }
    return KEY_RECOMPUTE | KEY_REDRAW;
}

static const ScreenKey KEYS[] = {
    {"b", "bits: 2, 3, ... 8"},           {"f", "format: the next scheme"},
    {"g", "granularity: the next one"},   {"r", "RoPE: none, pre, post"},
    {"H", "Hadamard rotation on or off"}, {"o O", "outlier magnitude halved or doubled"},
    {"s", "the next seed"},               {"w", "generated keys or the worked 4x4 example"},
    {"a", "mean K error over 50 seeds (a progress bar; Esc cancels)"},
};

static int export(void *st, FILE *csv, FILE *svg, Error *e)
{
    Quant *s = st;
    (void)e;
    fprintf(csv, "token,channel,key,quantized,error\n");
    for (size_t t = 0; t < s->T; t++)
        for (size_t c = 0; c < s->D; c++) {
            size_t i = t * s->D + c;
            fprintf(csv, "%zu,%zu,%.9g,%.9g,%.9g\n", t, c, (double)s->cur.k_ref[i],
                    (double)s->cur.k_hat[i], (double)s->err_cur[i]);
        }
    char a[96], title[160];
    snprintf(title, sizeof title, "key error, %s", describe(s, a, sizeof a));
    double emax = amax(s->err_cur, s->T * s->D);
    svg_heatmap(svg, title, s->err_cur, s->T, s->D, -emax, emax);
    return 0;
}

const ScreenDef SCREEN_QUANT = {
    .name = "Quantization error",
    .help = "Keys of one attention head, tokens down and channels across, with a few outlier "
            "channels many times larger than the rest (as real models have). Quantized per "
            "token, an outlier channel stretches every token's range, so the ordinary channels "
            "collapse onto a few levels; per channel, each outlier gets its own range. The "
            "bottom row puts the two errors side by side; the bars show how far each token's "
            "score q.k moved. Change the scheme, bits, granularity, RoPE, Hadamard rotation, "
            "outliers and seed on the left or with the keys below.",
    .create = create,
    .destroy = destroy,
    .fields = fields,
    .recompute = recompute,
    .draw = draw,
    .key = key,
    .keys = KEYS,
    .n_keys = N_OF(KEYS),
    .export = export,
};
