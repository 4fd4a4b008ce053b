/* screen_quant.c - what quantization does to keys: the errors of the
 * setting, per token and per channel side by side as a table, the key
 * matrix (tokens x channels) as a heatmap next to its quantized form and
 * the error, and the score errors as bars. The numbers come from
 * calc/experiment.h, the same code and the same generated head (kvgen.h's
 * defaults) as `kvlab quant`. */
#include "screens.h"

#include "cli.h"
#include "experiment.h"
#include "kvgen.h"
#include "plotmath.h"
#include "rotate.h"
#include "svg.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_TOKENS KVGEN_TOKENS_DEFAULT
#define GEN_DIM KVGEN_HEAD_DIM_DEFAULT
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

/* The first of `forms` (longest first) that fits w columns; the last one
 * where none does. */
static const char *fitting(const char *const *forms, size_t n, int w)
{
    for (size_t i = 0; i + 1 < n; i++)
        if ((int)text_columns(forms[i]) <= w)
            return forms[i];
    return forms[n - 1];
}

/* The errors the table shows, a row each, in the words of `kvlab quant`;
 * V's error is "exact" where values were not quantized. */
static const struct {
    const char *name;
    size_t offset;              // of the figure in KvErrors
    double scale;               // 100: a percentage
    bool values;                // V's error
} METRICS[] = {
    {"K error", offsetof(KvErrors, rel_fro_k), 100, false},
    {"V error", offsetof(KvErrors, rel_fro_v), 100, true},
    {"max score err", offsetof(KvErrors, max_score_error), 1, false},
    {"softmax TV", offsetof(KvErrors, softmax_tv), 1, false},
    {"output err", offsetof(KvErrors, output_rel_error), 100, false},
};

/* The three runs side by side, a metric a row (so that the table fits the
 * narrowest view); a lost top token is marked. */
static void figures(const Quant *s, Table *t)
{
    const ExperimentResult *run[3] = {&s->cur, &s->tok, &s->chan};
    const bool exact[3] = {s->scheme != 6, true, true};    // the comparisons keep values exact
    table_header(t, "keys per", "as set", "token", "channel", NULL);
    for (size_t m = 0; m < N_OF(METRICS); m++) {
        table_row(t);
        table_cell(t, "%s", METRICS[m].name);
        for (int i = 0; i < 3; i++) {
            double v = *(const double *)((const char *)&run[i]->err + METRICS[m].offset) * METRICS[m].scale;
            if (METRICS[m].values && exact[i])
                table_cell(t, "exact");
            else
                table_cell(t, METRICS[m].scale == 100 ? "%.3g%%" : "%.3g", v);
        }
    }
    table_row(t);
    table_cell(t, "top token");
    for (int i = 0; i < 3; i++)
        table_cell(t, "%s", run[i]->err.top == run[i]->err.top_ref ? "kept" : "!lost");
    if (s->have_avg) {
        table_row(t);
        table_cell(t, "%d-seed K error", AVG_SEEDS);
        for (int i = 0; i < 3; i++)
            table_cell(t, "%.3g%%", 100 * s->avg[i]);
    }
}

/* Each key's help starts with its name and a colon: the hint shows the name. */
static const ScreenKey KEYS[] = {
    {"b", "bits: 2, 3, ... 8"},
    {"f", "format: the next scheme"},
    {"g", "granularity: the next one"},
    {"r", "RoPE: none, pre, post"},
    {"H", "Hadamard: rotation on or off"},
    {"o O", "outliers: their magnitude halved or doubled"},
    {"s", "seed: the next one"},
    {"w", "worked 4x4: generated keys or the worked example"},
    {"a", "mean over 50 seeds: the K errors (Esc cancels)"},
};
static const size_t N_KEYS = N_OF(KEYS);

/* The screen's keys, each with the name its help gives it (the words
 * before the colon), in as many rows as r has; where they need more, the
 * keys alone and where to read what they do. Returns the rows drawn. */
static int key_hint(Rect r)
{
    enum { N = N_OF(KEYS) + 1 };
    char entry[N][64], brief[96] = "keys:";
    int widths[N], col[N], row[N];
    snprintf(entry[0], sizeof entry[0], "keys:");
    for (size_t i = 0; i < N_KEYS; i++) {
        int name = (int)(strchr(KEYS[i].what, ':') - KEYS[i].what);
        snprintf(entry[i + 1], sizeof entry[i + 1], "%s %.*s", KEYS[i].key, name, KEYS[i].what);
        size_t b = strlen(brief);
        snprintf(brief + b, sizeof brief - b, " %s", KEYS[i].key);
    }
    for (size_t i = 0; i < N; i++)
        widths[i] = (int)text_columns(entry[i]);
    int rows = legend_layout(widths, N, r.w, 2, col, row);
    if (rows > r.h) {
        strncat(brief, " (F1 says what)", sizeof brief - strlen(brief) - 1);
        return draw_wrapped(r, crt_attr(ROLE_DIM), brief, 0);
    }
    for (size_t i = 0; i < N; i++)
        put_text(r.y + row[i], r.x + col[i], widths[i], crt_attr(ROLE_DIM), entry[i]);
    return rows;
}

/* The score errors of the tokens that moved most, as bars: token numbers
 * alone where "token 12" does not leave room for bars. */
static void score_bars(const Quant *s, Rect r)
{
    static const char *const TITLE[] = {"score errors q.k^ - q.k (this setting)", "score errors q.k^ - q.k",
                                        "score errors"};
    put_text(r.y, r.x, r.w, crt_attr(ROLE_TITLE), fitting(TITLE, N_OF(TITLE), r.w));
    BarItem items[MOVED_MAX];
    char labels[MOVED_MAX][24], text[MOVED_MAX][32];
    size_t nb = s->n_moved < (size_t)(r.h - 1) ? s->n_moved : (size_t)(r.h > 1 ? r.h - 1 : 0);
    const bool words = r.w >= 25;      // "token 255", a bar of 6, "-20.5"
    for (size_t i = 0; i < nb; i++) {
        size_t t = s->moved[i];
        double d = s->cur.scores[t] - s->cur.scores_ref[t];
        snprintf(labels[i], sizeof labels[i], words ? "token %zu" : "%zu", t);
        snprintf(text[i], sizeof text[i], "%+.3g", d);
        items[i] = (BarItem){labels[i], fabs(d), text[i]};
    }
    draw_bars((Rect){r.y + 1, r.x, r.h - 1, r.w}, items, nb);
}

/* A heatmap whose title takes the longest of its forms that fits. */
static void heatmap(Rect r, const char *const *titles, const float *m, const Quant *s, double range)
{
    draw_heatmap(r, fitting(titles, 2, r.w), m, s->T, s->D, -range, range);
}

#define HEATMAP_MIN_H 6         // title, four rows, scale

static void draw(void *st, Rect r, int scroll)
{
    Quant *s = st;
    (void)scroll;
    char a[96], line[320];
    snprintf(line, sizeof line, "%s keys, %zu tokens x %zu channels", SOURCES[s->source], s->T, s->D);
    draw_title((Rect){r.y, r.x, 1, r.w}, line);
    /* the setting in the words of `kvlab quant` */
    static const char *const ROPE[] = {"no RoPE", "keys quantized before RoPE", "keys quantized after RoPE"};
    snprintf(line, sizeof line, "keys: %s; values: %s; %s%s", describe(s, a, sizeof a),
             s->scheme == 6 ? "KIVI per token" : "exact", ROPE[s->rope], s->hadamard ? "; Hadamard-rotated" : "");
    if (fixed_layout(s)) {      /* the block formats fix their layout: compare integers */
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, "; token and channel: int-min %llu-bit keys",
                 (unsigned long long)s->bits);
    }
    int y = r.y + 1;
    y += draw_wrapped((Rect){y, r.x, r.y + r.h - y, r.w}, crt_attr(ROLE_NORMAL), line, 0);
    static Table t;
    figures(s, &t);
    draw_table((Rect){y, r.x, (int)t.rows, r.w}, &t, 0);
    y += (int)t.rows;
    y += key_hint((Rect){y, r.x, r.h >= 30 ? 2 : 1, r.w}) + 1;
    /* the heatmaps, two rows where they fit, else the row that compares
     * per token with per channel, beside the score errors */
    static const char *const T_KEYS[] = {"keys K", "K"}, *const T_QUANT[] = {"quantized (this setting)", "quantized"},
                             *const T_ERR[] = {"error (this setting)", "error"},
                             *const T_TOK[] = {"error, per token", "per token"},
                             *const T_CHAN[] = {"error, per channel", "per channel"};
    const int cw = r.w / 3, left = r.y + r.h - y;
    if (left >= 2 * HEATMAP_MIN_H) {
        int hh = left / 2;
        heatmap((Rect){y, r.x, hh, cw - 1}, T_KEYS, s->cur.k_ref, s, s->kmax);
        heatmap((Rect){y, r.x + cw, hh, cw - 1}, T_QUANT, s->cur.k_hat, s, s->kmax);
        heatmap((Rect){y, r.x + 2 * cw, hh, cw - 1}, T_ERR, s->err_cur, s, s->emax);
        y += hh;
    }
    heatmap((Rect){y, r.x, r.y + r.h - y, cw - 1}, T_TOK, s->err_tok, s, s->emax);
    heatmap((Rect){y, r.x + cw, r.y + r.h - y, cw - 1}, T_CHAN, s->err_chan, s, s->emax);
    score_bars(s, (Rect){y, r.x + 2 * cw, r.y + r.h - y, r.w - 2 * cw});
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
            "table gives the errors of the setting, per token and per channel in the words of "
            "`kvlab quant`, on the same generated head; the bottom row of heatmaps puts the two "
            "errors side by side; the bars show how far each token's score q.k moved. Change "
            "the scheme, bits, granularity, RoPE, Hadamard rotation, outliers and seed on the "
            "left or with the keys below.",
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
