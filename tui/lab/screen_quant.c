/* screen_quant.c - what quantization does to keys: the errors of the
 * setting, per token and per channel side by side as a table, the key
 * matrix (tokens x channels) as a heatmap next to its quantized form and
 * the error, the errors per token and per channel side by side, and the
 * score errors as bars, laid out as a document that scrolls where the
 * window is short. The numbers come from calc/experiment.h, the same code
 * and the same generated head (kvgen.h's defaults) as `kvlab quant`. */
#include "screens.h"

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
#define OUTLIER_SCALE_MIN 1
#define OUTLIER_SCALE_MAX 1000
#define PERCENT 100             // a figure's scale shown with %
#define MOVED_MAX 16            // score-error bars drawn, at most

static const char *const SOURCES[] = {"generated", "worked 4x4"};

/* The schemes the screen offers: the keys' quantizer (calc/quant.h) and
 * what sets its layout. */
static const struct {
    const char *name;
    Scheme scheme;
    bool fixed_bits;            // FP8 and the block formats: the format sets the bits
    bool block;                 // NVFP4, MXFP4: blocks of their own, not the granularity
    bool kivi;                  // KIVI: integer keys per channel, values per token
} SCHEMES[] = {
    {"int-min", SCHEME_INT_MIN, false, false, false}, {"int-zp", SCHEME_INT_ZP, false, false, false},
    {"int-sym", SCHEME_INT_SYM, false, false, false}, {"fp8", SCHEME_FP8, true, false, false},
    {"nvfp4", SCHEME_NVFP4, true, true, false},       {"mxfp4", SCHEME_MXFP4, true, true, false},
    {"kivi", SCHEME_INT_MIN, false, false, true},
};
static const char *const GRANS[] = {"tensor", "token", "channel", "group", "tgroup"};
static const GranKind GRAN_KINDS[] = {GRAN_TENSOR, GRAN_TOKEN, GRAN_CHANNEL, GRAN_GROUP_CHANNELS,
                                      GRAN_GROUP_TOKENS};   // by GRANS
/* The values: exact, or quantized as the keys are at one of GRANS (VALUES[i + 1] is GRANS[i]). */
static const char *const VALUES[] = {"exact", "tensor", "token", "channel", "group", "tgroup"};
#define SCALE_MAX 1000          // a static fp8 scale, at most
static const char *const ROPES[] = {"none", "pre", "post"};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

typedef struct {
    const char *scheme_names[N_OF(SCHEMES)];    // the Scheme field's choices
    int source, scheme, gran, rope;
    int values;                 // VALUES: 0 exact, else GRANS[values - 1]
    float static_scale;         // fp8: one scale for the tensor; 0: dynamic
    uint64_t seed, outliers, bits, group;
    float outlier_scale;
    bool hadamard;
    size_t T, D;
    float k[GEN_TOKENS * GEN_DIM], v[GEN_TOKENS * GEN_DIM], q[GEN_DIM];
    ExperimentResult cur, tok, chan;
    float err_cur[GEN_TOKENS * GEN_DIM], err_tok[GEN_TOKENS * GEN_DIM], err_chan[GEN_TOKENS * GEN_DIM];
    double avg[3];              // mean K error over AVG_SEEDS seeds: current, token, channel
    bool have_avg;
    /* Drawn from the results, computed when they change (screen_quant_recompute). */
    double kmax;                // largest |key|: the keys' heatmap range
    double emax;                // largest |error| of the three runs: the errors' range
    size_t n_moved;
    size_t moved[MOVED_MAX];    // tokens whose scores moved most, most first
    Table table;                // the errors (screen_quant_figures), as drawn
} Quant;

static void *screen_quant_create(Error *e)
{
    Quant *s = lab_state_new(sizeof *s, e);
    if (!s)
        return NULL;
    s->seed = KVGEN_SEED_DEFAULT;
    s->outliers = KVGEN_OUTLIER_CHANNELS_DEFAULT;
    s->outlier_scale = KVGEN_OUTLIER_SCALE_DEFAULT;
    s->bits = QUANT_BITS_DEFAULT;
    s->group = KIVI_GROUP_DEFAULT;
    s->gran = 1;                // per token: the one that collapses
    for (size_t i = 0; i < N_OF(SCHEMES); i++)
        s->scheme_names[i] = SCHEMES[i].name;
    return s;
}

static void screen_quant_free_results(Quant *s)
{
    experiment_result_free(&s->cur);
    experiment_result_free(&s->tok);
    experiment_result_free(&s->chan);
}

static void screen_quant_destroy(void *st)
{
    screen_quant_free_results(st);
    free(st);
}

static size_t screen_quant_fields(void *st, Field *f)
{
    Quant *s = st;
    size_t n = 0;
    f[n++] = (Field){"Keys", FK_CHOICE, &s->source, 0, N_OF(SOURCES), 0, SOURCES, NULL};
    f[n++] = (Field){"Seed", FK_COUNT, &s->seed, 0, UINT32_MAX, 1, NULL, NULL};
    f[n++] = (Field){"Outlier channels", FK_COUNT, &s->outliers, 0, GEN_DIM, 1, NULL, NULL};
    f[n++] = (Field){"Outlier scale", FK_FLOAT, &s->outlier_scale, OUTLIER_SCALE_MIN, OUTLIER_SCALE_MAX, 0, NULL,
                     NULL};
    f[n++] = (Field){"Scheme", FK_CHOICE, &s->scheme, 0, N_OF(SCHEMES), 0, s->scheme_names, NULL};
    f[n++] = (Field){"Bits", FK_COUNT, &s->bits, 2, 8, 1, NULL, NULL};
    f[n++] = (Field){"Granularity", FK_CHOICE, &s->gran, 0, N_OF(GRANS), 0, GRANS, NULL};
    f[n++] = (Field){"Values", FK_CHOICE, &s->values, 0, N_OF(VALUES), 0, VALUES, NULL};
    f[n++] = (Field){"Scale", FK_FLOAT, &s->static_scale, 0, SCALE_MAX, 0, NULL, "dynamic"};
    f[n++] = (Field){"Group size", FK_POW2, &s->group, 1, 1024, 0, NULL, NULL};
    f[n++] = (Field){"RoPE", FK_CHOICE, &s->rope, 0, N_OF(ROPES), 0, ROPES, NULL};
    f[n++] = (Field){"Hadamard", FK_TOGGLE, &s->hadamard, 0, 0, 0, NULL, NULL};
    return n;
}

static int screen_quant_load_keys(Quant *s, uint64_t seed, Error *e)
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

/* The per-token and per-channel comparisons use integer keys at the same
 * bits: the block formats and KIVI fix their own layout. */
static bool screen_quant_fixed_layout(const Quant *s)
{
    return SCHEMES[s->scheme].block || SCHEMES[s->scheme].kivi;
}

/* Whether a run leaves the values exact: KIVI quantizes them by definition;
 * else the Values field says, as --values does for `kvlab quant`, except in
 * the comparisons a fixed layout turns into integer keys. */
static bool screen_quant_values_exact(const Quant *s, bool compare)
{
    if (compare && screen_quant_fixed_layout(s))
        return true;
    return !SCHEMES[s->scheme].kivi && s->values == 0;
}

/* A static scale is fp8's alone. */
static bool screen_quant_static(const Quant *s)
{
    return SCHEMES[s->scheme].scheme == SCHEME_FP8 && s->static_scale > 0;
}

/* The experiment `kvlab quant` runs for the same options: the values, where
 * quantized, as the keys are (--values copies the keys' spec) at their own
 * granularity. */
static void screen_quant_setup(const Quant *s, Experiment *x, GranKind g)
{
    experiment_init(x);
    x->key.scheme = SCHEMES[s->scheme].scheme;
    x->key.bits = (unsigned)s->bits;
    x->key.gran = (Granularity){g, s->group};
    x->key.static_scale = screen_quant_static(s) ? s->static_scale : 0;
    x->kivi = SCHEMES[s->scheme].kivi;
    x->kivi_spec = (KiviSpec){(unsigned)s->bits, s->group, 0};
    x->values_exact = screen_quant_values_exact(s, false);
    x->value = x->key;
    if (s->values)
        x->value.gran = (Granularity){GRAN_KINDS[s->values - 1], s->group};
    x->rope = (RopeMode)s->rope;
    x->hadamard = s->hadamard;
}

/* One experiment; `compare` runs are the per-token and per-channel ones. */
static int screen_quant_run(Quant *s, GranKind g, bool compare, ExperimentResult *r, float *err, Error *e)
{
    Experiment x;
    screen_quant_setup(s, &x, g);
    if (compare && screen_quant_fixed_layout(s)) {
        x.kivi = false;
        x.key.scheme = SCHEME_INT_MIN;
        x.values_exact = true;
    }
    if (compare)                /* a static scale is one per tensor: compare the dynamic ones */
        x.key.static_scale = x.value.static_scale = 0;
    experiment_result_free(r);
    if (experiment_run(&x, s->k, s->v, s->q, s->T, s->D, r, e))
        return -1;
    for (size_t i = 0; i < s->T * s->D; i++)
        err[i] = r->k_hat[i] - r->k_ref[i];
    return 0;
}

/* The keys of `seed` quantized three ways: as set, per token and per channel. */
static int screen_quant_run_all(Quant *s, uint64_t seed, Error *e)
{
    if (screen_quant_load_keys(s, seed, e) || screen_quant_run(s, GRAN_KINDS[s->gran], false, &s->cur, s->err_cur, e) ||
        screen_quant_run(s, GRAN_TOKEN, true, &s->tok, s->err_tok, e) ||
        screen_quant_run(s, GRAN_CHANNEL, true, &s->chan, s->err_chan, e))
        return -1;
    return 0;
}

static double screen_quant_amax(const float *m, size_t n)
{
    double a = 0;
    for (size_t i = 0; i < n; i++)
        a = fmax(a, fabs((double)m[i]));
    return a > 0 ? a : 1;
}

/* The heatmaps' ranges and the tokens whose scores moved most. */
static void screen_quant_summarise(Quant *s)
{
    size_t n = s->T * s->D;
    s->kmax = screen_quant_amax(s->cur.k_ref, n);
    s->emax = fmax(screen_quant_amax(s->err_tok, n),
                   fmax(screen_quant_amax(s->err_chan, n), screen_quant_amax(s->err_cur, n)));
    size_t order[GEN_TOKENS];
    s->n_moved = experiment_most_moved(&s->cur, order, MOVED_MAX);
    for (size_t i = 0; i < s->n_moved; i++)
        s->moved[i] = order[i];
}

/* A copy of s without its results, to compute new ones beside the old. */
static Quant *screen_quant_scratch(const Quant *s)
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

/* The keys' setting (gran: GRANS' index), or the values' at theirs. */
static const char *screen_quant_describe(const Quant *s, int gran, char *buf, size_t n)
{
    const char *name = SCHEMES[s->scheme].name, *per = SCHEMES[s->scheme].block ? "block" : GRANS[gran];
    if (SCHEMES[s->scheme].kivi)
        snprintf(buf, n, "KIVI %llu-bit, groups of %llu", (unsigned long long)s->bits,
                 (unsigned long long)s->group);
    else if (screen_quant_static(s))
        snprintf(buf, n, "%s, static scale %g", name, (double)s->static_scale);
    else if (SCHEMES[s->scheme].fixed_bits)
        snprintf(buf, n, "%s per %s", name, per);
    else
        snprintf(buf, n, "%s %llu-bit per %s", name, (unsigned long long)s->bits, per);
    return buf;
}

/* The first of `forms` (longest first) that fits w columns; the last one
 * where none does. */
static const char *screen_quant_fitting(const char *const *forms, size_t n, int w)
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
    double scale;               // PERCENT: a percentage
    bool values;                // V's error
} METRICS[] = {
    {"K error", offsetof(KvErrors, rel_fro_k), PERCENT, false},
    {"V error", offsetof(KvErrors, rel_fro_v), PERCENT, true},
    {"max score err", offsetof(KvErrors, max_score_error), 1, false},
    {"softmax TV", offsetof(KvErrors, softmax_tv), 1, false},
    {"output err", offsetof(KvErrors, output_rel_error), PERCENT, false},
};

/* The three runs side by side, one metric per row (so that the table fits
 * the narrowest view); a lost top token is marked. */
static void screen_quant_figures(const Quant *s, Table *t)
{
    const ExperimentResult *runs[3] = {&s->cur, &s->tok, &s->chan};
    const bool exact[3] = {screen_quant_values_exact(s, false), screen_quant_values_exact(s, true),
                           screen_quant_values_exact(s, true)};
    table_header(t, "keys per", "as set", "token", "channel", NULL);
    for (size_t m = 0; m < N_OF(METRICS); m++) {
        table_row(t);
        table_cell(t, "%s", METRICS[m].name);
        for (int i = 0; i < 3; i++) {
            double v = *(const double *)((const char *)&runs[i]->err + METRICS[m].offset) * METRICS[m].scale;
            if (METRICS[m].values && exact[i])
                table_cell(t, "exact");
            else
                table_cell(t, METRICS[m].scale == PERCENT ? "%.3g%%" : "%.3g", v);
        }
    }
    table_row(t);
    table_cell(t, "top token");
    for (int i = 0; i < 3; i++)
        table_cell(t, "%s", runs[i]->err.top == runs[i]->err.top_ref ? "kept" : "!lost");
    if (s->have_avg) {
        table_row(t);
        table_cell(t, "%d-seed K error", AVG_SEEDS);
        for (int i = 0; i < 3; i++)
            table_cell(t, "%.3g%%", PERCENT * s->avg[i]);
    }
}

/* The three runs (a failure leaves them to be run again: the lab puts the
 * settings before back and recomputes). */
static int screen_quant_recompute(void *st, Error *e)
{
    Quant *s = st;
    s->have_avg = false;
    if (screen_quant_run_all(s, s->seed, e))
        return -1;
    screen_quant_summarise(s);
    screen_quant_figures(s, &s->table);
    return 0;
}

static const ScreenKey KEYS[] = {
    {"b", "bits", "bits: 2, 3, ... 8"},
    {"f", "format", "format: the next scheme"},
    {"g", "granularity", "granularity: the next one"},
    {"r", "RoPE", "RoPE: none, pre, post"},
    {"H", "Hadamard", "Hadamard: rotation on or off"},
    {"o O", "outliers", "outliers: their magnitude halved or doubled"},
    {"s", "seed", "seed: the next one"},
    {"w", "worked 4x4", "worked 4x4: generated keys or the worked example"},
    {"a", "mean over " TEXT_OF(AVG_SEEDS) " seeds",
     "mean over " TEXT_OF(AVG_SEEDS) " seeds: the K errors (Esc cancels)"},
};
static const size_t N_KEYS = N_OF(KEYS);

/* ------------------------------------------------------------------------
 * The view: one document (doc.h): the setting, the errors, the keys, then
 * two rows of heatmaps, the score errors beside the second.
 */

#define HINT_TALL 30            // a window this tall gives the key hint a second row
#define HEATMAP_MIN_H 6         // title, four rows, scale

/* The screen's keys, each with its name, in the rows the window gives
 * them (HINT_TALL); where they need more, the keys alone and where to read
 * what they do. */
static void screen_quant_key_hint(Doc *d)
{
    enum { N = N_OF(KEYS) + 1 };
    char entry[N][64], brief[96] = "keys:";
    int widths[N], col[N], row[N];
    snprintf(entry[0], sizeof entry[0], "keys:");
    for (size_t i = 0; i < N_KEYS; i++) {
        snprintf(entry[i + 1], sizeof entry[i + 1], "%s %s", KEYS[i].key, KEYS[i].name);
        size_t b = strlen(brief);
        snprintf(brief + b, sizeof brief - b, " %s", KEYS[i].key);
    }
    for (size_t i = 0; i < N; i++)
        widths[i] = (int)text_columns(entry[i]);
    const int rows = legend_layout(widths, N, d->win.w, 2, col, row);
    Rect r;
    if (rows > (d->win.h >= HINT_TALL ? 2 : 1)) {
        strncat(brief, " (F1 says what)", sizeof brief - strlen(brief) - 1);
        doc_text(d, 0, crt_attr(ROLE_DIM), brief);
    } else if (doc_block(d, rows, &r)) {
        for (size_t i = 0; i < N; i++)
            put_text(r.y + row[i], r.x + col[i], widths[i], crt_attr(ROLE_DIM), entry[i]);
    }
}

/* The score errors of the tokens that moved most, as many as r has rows
 * for, as bars under a title and a header that names the columns. */
static void screen_quant_score_bars(const Quant *s, Rect r)
{
    static const char *const TITLE[] = {"score errors q.k^ - q.k (this setting)", "score errors q.k^ - q.k",
                                        "score errors"};
    put_text(r.y, r.x, r.w, crt_attr(ROLE_TITLE), screen_quant_fitting(TITLE, N_OF(TITLE), r.w));
    put_text(r.y + 1, r.x, r.w, crt_attr(ROLE_DIM), "token");
    put_text(r.y + 1, r.x + r.w - 5, 5, crt_attr(ROLE_DIM), "error");
    BarItem items[MOVED_MAX];
    char labels[MOVED_MAX][24], text[MOVED_MAX][32];
    const size_t room = r.h > 2 ? (size_t)(r.h - 2) : 0, nb = s->n_moved < room ? s->n_moved : room;
    for (size_t i = 0; i < nb; i++) {
        size_t t = s->moved[i];
        double d = s->cur.scores[t] - s->cur.scores_ref[t];
        snprintf(labels[i], sizeof labels[i], "%zu", t);
        snprintf(text[i], sizeof text[i], "%+.3g", d);
        items[i] = (BarItem){labels[i], fabs(d), text[i]};
    }
    draw_bars((Rect){r.y + 2, r.x, (int)nb, r.w}, items, nb);
}

/* A heatmap whose title takes the longest of its forms that fits. */
static void screen_quant_heatmap(Rect r, const char *const *titles, const float *m, const Quant *s, double range)
{
    draw_heatmap(r, screen_quant_fitting(titles, 2, r.w), m, s->T, s->D, -range, range);
}

/* The heatmaps, two rows of three: the keys, their quantized form and the
 * error of the setting, then the errors per token and per channel beside
 * the score errors. They fill the window where it has room for both rows;
 * else each is half the window less its marks, so that both show together
 * when scrolled to. */
static void screen_quant_heatmaps(const Quant *s, Doc *d)
{
    static const char *const T_KEYS[] = {"keys K", "K"}, *const T_QUANT[] = {"quantized (this setting)", "quantized"},
                             *const T_ERR[] = {"error (this setting)", "error"},
                             *const T_TOK[] = {"error, per token", "per token"},
                             *const T_CHAN[] = {"error, per channel", "per channel"};
    const int room = doc_room(d), half = (d->win.h - 2) / 2;
    const int top = room >= 2 * HEATMAP_MIN_H ? room / 2 : half > HEATMAP_MIN_H ? half : HEATMAP_MIN_H;
    const int bottom = room >= 2 * HEATMAP_MIN_H ? room - top : top, cw = d->win.w / 3;
    Rect r;
    if (doc_block(d, top, &r)) {
        screen_quant_heatmap((Rect){r.y, r.x, r.h, cw - 1}, T_KEYS, s->cur.k_ref, s, s->kmax);
        screen_quant_heatmap((Rect){r.y, r.x + cw, r.h, cw - 1}, T_QUANT, s->cur.k_hat, s, s->kmax);
        screen_quant_heatmap((Rect){r.y, r.x + 2 * cw, r.h, cw - 1}, T_ERR, s->err_cur, s, s->emax);
    }
    if (doc_block(d, bottom, &r)) {
        screen_quant_heatmap((Rect){r.y, r.x, r.h, cw - 1}, T_TOK, s->err_tok, s, s->emax);
        screen_quant_heatmap((Rect){r.y, r.x + cw, r.h, cw - 1}, T_CHAN, s->err_chan, s, s->emax);
        screen_quant_score_bars(s, (Rect){r.y, r.x + 2 * cw, r.h, r.w - 2 * cw});
    }
}

/* The setting in the words of `kvlab quant`. */
static const char *screen_quant_setting(const Quant *s, char *line, size_t n)
{
    static const char *const ROPE[] = {"no RoPE", "keys quantized before RoPE", "keys quantized after RoPE"};
    char a[96], v[96];
    snprintf(line, n, "keys: %s; values: %s; %s%s", screen_quant_describe(s, s->gran, a, sizeof a),
             SCHEMES[s->scheme].kivi ? "KIVI per token"
             : s->values            ? screen_quant_describe(s, s->values - 1, v, sizeof v)
                                    : "exact",
             ROPE[s->rope],
             s->hadamard ? "; Hadamard-rotated" : "");
    size_t len = strlen(line);
    if (screen_quant_fixed_layout(s))       /* the block formats fix their layout: compare integers */
        snprintf(line + len, n - len, "; token and channel: int-min %llu-bit keys", (unsigned long long)s->bits);
    else if (screen_quant_static(s))
        snprintf(line + len, n - len, "; token and channel: dynamic scales");
    return line;
}

static void screen_quant_layout(void *st, Doc *d)
{
    Quant *s = st;
    char line[320];
    snprintf(line, sizeof line, "%s keys, %zu tokens x %zu channels", SOURCES[s->source], s->T, s->D);
    doc_title(d, line);
    doc_text(d, 0, crt_attr(ROLE_NORMAL), screen_quant_setting(s, line, sizeof line));
    doc_table(d, &s->table);
    screen_quant_key_hint(d);
    doc_gap(d, 1);
    screen_quant_heatmaps(s, d);
}

#define INLINE_HEATMAP_H 6      // a heatmap in a lesson's page: title, four rows, scale

/* In a lesson's page: the setting, the key errors as set, per token and
 * per channel side by side on one scale (the same in every widget on the
 * same keys, so that two of them compare), then the screen's table of
 * errors. */
static void screen_quant_inline(void *st, Doc *d)
{
    static const char *const T_ERR[] = {"K error, as set", "as set"}, *const T_TOK[] = {"K error, per token", "per token"},
                             *const T_CHAN[] = {"K error, per channel", "per channel"};
    const Quant *s = st;
    char line[320];
    doc_text(d, 0, crt_attr(ROLE_NORMAL), screen_quant_setting(s, line, sizeof line));
    const int cw = d->win.w / 3;
    Rect r;
    if (doc_block(d, INLINE_HEATMAP_H, &r)) {
        screen_quant_heatmap((Rect){r.y, r.x, r.h, cw - 1}, T_ERR, s->err_cur, s, s->emax);
        screen_quant_heatmap((Rect){r.y, r.x + cw, r.h, cw - 1}, T_TOK, s->err_tok, s, s->emax);
        screen_quant_heatmap((Rect){r.y, r.x + 2 * cw, r.h, r.w - 2 * cw}, T_CHAN, s->err_chan, s, s->emax);
    }
    doc_table(d, &s->table);
}

/* 'a': the mean K error over AVG_SEEDS generated seeds, with a progress
 * bar that Esc cancels. */
static int screen_quant_average(Quant *s, Lab *lab)
{
    if (s->source != 0) {
        lab_status(lab, true, "averaging needs generated keys (set Keys to generated)");
        return KEY_REDRAW;
    }
    double sum[3] = {0};
    Quant *tmp = screen_quant_scratch(s);
    if (!tmp) {
        lab_status(lab, true, "out of memory for averaging");
        return KEY_REDRAW;
    }
    int done = 0, failed = 0;
    Error e;
    for (; done < AVG_SEEDS; done++) {
        if (lab_progress(lab, "mean over seeds", done, AVG_SEEDS))
            break;
        if ((failed = screen_quant_run_all(tmp, s->seed + (uint64_t)done, &e)))
            break;
        sum[0] += tmp->cur.err.rel_fro_k;
        sum[1] += tmp->tok.err.rel_fro_k;
        sum[2] += tmp->chan.err.rel_fro_k;
    }
    screen_quant_free_results(tmp);
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
    screen_quant_figures(s, &s->table);
    lab_status(lab, false, "averaged seeds %llu to %llu", (unsigned long long)s->seed,
               (unsigned long long)s->seed + AVG_SEEDS - 1);
    return KEY_REDRAW;
}

static int screen_quant_key(void *st, int ch, Lab *lab)
{
    Quant *s = st;
    switch (ch) {
    case 'a':
        return screen_quant_average(s, lab);
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
        s->outlier_scale = s->outlier_scale > OUTLIER_SCALE_MIN ? s->outlier_scale / 2 : OUTLIER_SCALE_MIN;
        break;
    case 'O':
        s->outlier_scale = s->outlier_scale < OUTLIER_SCALE_MAX / 2 ? s->outlier_scale * 2 : s->outlier_scale;
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

static int screen_quant_export(void *st, FILE *csv, FILE *svg, Error *e)
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
    snprintf(title, sizeof title, "key error, %s", screen_quant_describe(s, s->gran, a, sizeof a));
    double emax = screen_quant_amax(s->err_cur, s->T * s->D);
    svg_heatmap(svg, title, s->err_cur, s->T, s->D, -emax, emax);
    return 0;
}

static const Table *screen_quant_columns(void *st)
{
    return &((const Quant *)st)->table;
}

static const ScreenOption OPTIONS[] = {
    {"--preset", "Keys", true, "worked 4x4", NULL},
    {"--generate", "Keys", false, "generated", NULL},
    {"--seed", "Seed", true, NULL, NULL},
    {"--outlier-channels", "Outlier channels", true, NULL, NULL},
    {"--outlier-scale", "Outlier scale", true, NULL, NULL},
    {"--scheme", "Scheme", true, NULL, NULL},
    {"--bits", "Bits", true, NULL, NULL},
    {"--granularity", "Granularity", true, NULL, NULL},
    {"--kivi", "Scheme", false, "kivi", NULL},
    {"--values", "Values", true, NULL, "exact"},
    {"--scale", "Scale", true, NULL, "dynamic"},
    {"--group", "Group size", true, NULL, NULL},
    {"--rope", "RoPE", true, NULL, NULL},
    {"--rotate", "Hadamard", true, "on", NULL},
};

const ScreenDef SCREEN_QUANT = {
    .id = "quant",
    .name = "Quantization error",
    .help = "Keys of one attention head, tokens down and channels across, with a few outlier "
            "channels many times larger than the rest (as real models have). Quantized per "
            "token, an outlier channel stretches every token's range, so the ordinary channels "
            "collapse onto a few levels; per channel, each outlier gets its own range. The "
            "table gives the errors of the setting, per token and per channel in the words of "
            "`kvlab quant`, on the same generated head. Under it, the keys as a heatmap next to "
            "their quantized form and the error; below them the errors per token and per "
            "channel side by side, and bars of how far the scores q.k of the tokens that moved "
            "most moved (where the window is short, Tab then Down scrolls to them). Change "
            "the scheme, bits, granularity, RoPE, Hadamard rotation, outliers and seed on the "
            "left or with the keys below.",
    .create = screen_quant_create,
    .destroy = screen_quant_destroy,
    .fields = screen_quant_fields,
    .recompute = screen_quant_recompute,
    .layout = screen_quant_layout,
    .key = screen_quant_key,
    .keys = KEYS,
    .n_keys = N_OF(KEYS),
    .export = screen_quant_export,
    .options = OPTIONS,
    .n_options = sizeof OPTIONS / sizeof OPTIONS[0],
    .columns = screen_quant_columns,
    .inline_layout = screen_quant_inline,
};
