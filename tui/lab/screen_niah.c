/* screen_niah.c - the NIAH lab: needle in a haystack through the decode
 * kernels on this machine.
 *
 * A run of the grid (kernels/niah.h, as `kvlab niah` runs it) with a
 * progress bar that Esc cancels and a time estimate from the trials
 * measured; then one heatmap of accuracy (depth x length) per format side
 * by side, each with its verdict under the rule, the formats' table and
 * every cell with its intervals. Without a GPU the CPU reference runs and
 * says so, and the stored GPU run's grid (calc/stored.h) is shown apart in
 * a section of its own, titled with the GPU and the date it was measured,
 * drawn by the same code from its figures; with a GPU, s shows it. */
#include "screens.h"

#include "doc.h"
#include "kv_bench.h"
#include "niah.h"
#include "niahreport.h"
#include "plotmath.h"
#include "stats.h"
#include "stored.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets of formats to compare, each a question the sources ask: the ids as
 * kvlab niah lists them (--format's values joined by commas), bf16 first. */
static const struct {
    const char *name;
    const char *ids;
} PRESETS[] = {
    {"defaults", NIAH_FORMATS_DEFAULT},     // kvlab niah's
    {"token vs channel", "bf16,int2-k-token,int2-k-channel"},
    {"kernel formats", "bf16,fp8_e4m3,int8,int4,nvfp4,mxfp4"},
    {"keys vs values", "bf16,int2-k-channel,int2-v-token,int2-kivi"},
    {"rotations, KVQuant", "bf16,int2-k-token,int2-k-token-hadamard,int2-k-channel,int2-k-channel-prerope,nuq4-k,"
                           "nuq4-k-sparse"},
};
#define N_PRESETS (sizeof PRESETS / sizeof PRESETS[0])

/* Sets of depths, each named as kvlab niah --depths takes it. */
static const struct {
    const char *name;
    double at[NIAH_DEPTHS_MAX];
    size_t n;
} DEPTHS[] = {
    {NIAH_DEPTHS_DEFAULT, {0, 0.25, 0.5, 0.75, 1}, 5},
    {"0,0.5,1", {0, 0.5, 1}, 3},
    {"0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1", {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}, 11},
};
#define N_DEPTHS (sizeof DEPTHS / sizeof DEPTHS[0])

#define SWATCH 2                // columns of a cell's colour
#define CELL_W 6                // a cell: swatch, "100", a space
#define DEPTH_W 5               // the depth column: "0.25 "

typedef struct {
    const char *preset_names[N_PRESETS];
    int preset;
    const char *depth_names[N_DEPTHS];
    int depths;
    FieldContexts lengths;
    uint64_t trials;
    float closeness, tolerance;
    bool opened;
    BenchSetup b;               // the backend, as kvlab bench opens it
    NiahResult shown;           // the last run, if have
    bool have;
    double tolerance_shown;     // the tolerance its verdicts were drawn with
    NiahFigures fig;            // its figures at tolerance_shown, as drawn
    char what[256];             // what was run, on what, in how long
    char note[ERROR_MSG_MAX + 160];     // how the last run ended, when not complete
    StoredRun stored;           // the stored GPU run, if have_stored
    bool have_stored;
    char stored_why[ERROR_MSG_MAX];     // else why there is none
    bool show_stored;           // where no GPU runs the grid, or s shows it
} NiahLab;

/* The state that made this session's last complete run (the lab's own:
 * only it runs), for a lesson's niah widget to show in place. */
static const NiahLab *last_run;

static void screen_niah_drop(NiahLab *s)
{
    if (!s->have)
        return;
    niah_result_free(&s->shown);
    s->have = false;
}

static void *screen_niah_create(Error *e)
{
    NiahLab *s = lab_state_new(sizeof *s, e);
    if (!s)
        return NULL;
    for (size_t i = 0; i < N_PRESETS; i++)
        s->preset_names[i] = PRESETS[i].name;
    for (size_t i = 0; i < N_DEPTHS; i++)
        s->depth_names[i] = DEPTHS[i].name;
    static const uint64_t LENGTHS[] = {1024, 4096, 16384, 32768};     // NIAH_LENGTHS_CPU_DEFAULT
    memcpy(s->lengths.tokens, LENGTHS, sizeof LENGTHS);
    s->lengths.n = sizeof LENGTHS / sizeof LENGTHS[0];
    s->trials = NIAH_TRIALS_DEFAULT;
    s->closeness = (float)NIAH_CLOSENESS_DEFAULT;
    s->tolerance = (float)NIAH_TOLERANCE_DEFAULT;
    Error e2;
    s->have_stored = stored_gpu_run(&s->stored, NULL, &e2) == 0 && stored_niah_check(&s->stored, &e2) == 0;
    if (!s->have_stored)
        snprintf(s->stored_why, sizeof s->stored_why, "%s", e2.msg);
    s->show_stored = true;      // until a run finds a GPU
    return s;
}

static void screen_niah_destroy(void *st)
{
    if (last_run == st)
        last_run = NULL;
    screen_niah_drop(st);
    free(st);
}

static size_t screen_niah_fields(void *st, Field *f)
{
    NiahLab *s = st;
    size_t n = 0;
    f[n++] = (Field){"Formats", FK_CHOICE, &s->preset, 0, N_PRESETS, 0, s->preset_names, NULL};
    f[n++] = (Field){"Lengths", FK_CONTEXTS, &s->lengths, NIAH_LENGTH_MIN, KVGEN_TOKENS_MAX, 0, NULL,
                     NIAH_LENGTHS_CPU_DEFAULT};
    f[n++] = (Field){"Trials", FK_COUNT, &s->trials, 1, 1000, 5, NULL, NULL};
    f[n++] = (Field){"Closeness", FK_FLOAT, &s->closeness, 0, 1, 0, NULL, NULL};     // below 1: the grid says
    f[n++] = (Field){"Tolerance", FK_FLOAT, &s->tolerance, 0, 1, 0, NULL, NULL};
    f[n++] = (Field){"Depths", FK_CHOICE, &s->depths, 0, N_DEPTHS, 0, s->depth_names, NULL};
    return n;
}

/* The grid the fields ask for; an error names the field. */
static int screen_niah_grid(const NiahLab *s, NiahGrid *g, Error *e)
{
    memset(g, 0, sizeof *g);
    niah_haystack_defaults(&g->hay);
    g->hay.closeness = s->closeness;
    g->trials = (unsigned)s->trials;
    g->seed = NIAH_SEED_DEFAULT;
    const uint64_t *lengths = s->lengths.tokens;
    size_t nl = s->lengths.n;
    static const uint64_t DEFAULT[] = {1024, 4096, 16384, 32768};
    if (!nl)
        lengths = DEFAULT, nl = sizeof DEFAULT / sizeof DEFAULT[0];
    for (size_t i = 0; i < nl && i < NIAH_LENGTHS_MAX; i++)
        g->lengths[g->n_lengths++] = (uint32_t)lengths[i];
    memcpy(g->depths, DEPTHS[s->depths].at, sizeof DEPTHS[s->depths].at[0] * DEPTHS[s->depths].n);
    g->n_depths = DEPTHS[s->depths].n;
    char ids[NIAH_FORMATS_MAX * 32];
    snprintf(ids, sizeof ids, "%s", PRESETS[s->preset].ids);
    for (char *save, *id = strtok_r(ids, ",", &save); id && g->n_formats < NIAH_FORMATS_MAX;
         id = strtok_r(NULL, ",", &save))
        if (niah_format_parse(id, &g->formats[g->n_formats++], e))
            return -1;
    if (!(s->tolerance >= 0 && s->tolerance <= 1))
        return error_set(e, "Tolerance: from 0 to 1, not %g", (double)s->tolerance);
    if (niah_haystack_check(&g->hay, e))
        return error_prefix(e, "Closeness");
    return niah_grid_check(g, e) ? error_prefix(e, "Lengths") : 0;
}

/* The run shown's figures at `tolerance`, as the stored run's are read
 * (a cell whose figures cannot be computed shows no trials). */
static void screen_niah_figures(NiahLab *s, double tolerance)
{
    const NiahResult *r = &s->shown;
    const NiahGrid *g = &r->g;
    NiahFigures *fig = &s->fig;
    Error e;
    memset(fig, 0, sizeof *fig);
    s->tolerance_shown = fig->tolerance = tolerance;
    fig->trials = g->trials;
    fig->n_formats = g->n_formats < NIAH_FIG_FORMATS_MAX ? g->n_formats : NIAH_FIG_FORMATS_MAX;
    fig->n_lengths = g->n_lengths < NIAH_FIG_LENGTHS_MAX ? g->n_lengths : NIAH_FIG_LENGTHS_MAX;
    fig->n_depths = g->n_depths < NIAH_FIG_DEPTHS_MAX ? g->n_depths : NIAH_FIG_DEPTHS_MAX;
    for (size_t l = 0; l < fig->n_lengths; l++)
        fig->lengths[l] = g->lengths[l];
    memcpy(fig->depths, g->depths, fig->n_depths * sizeof fig->depths[0]);
    for (size_t f = 0; f < fig->n_formats; f++) {
        snprintf(fig->formats[f].id, sizeof fig->formats[f].id, "%s", g->formats[f]->id);
        fig->formats[f].simulated = g->formats[f]->simulated;
        NiahCell c;
        int v = -1;
        if (niah_format_summary(r, f, tolerance, &c, &v, &e))
            c.trials = 0, v = -1;
        fig->formats[f].all = (NiahFigure){c.trials, c.accuracy, c.ci_low, c.ci_high, c.diff_low, c.diff_high};
        fig->formats[f].verdict = v;
        for (size_t l = 0; l < fig->n_lengths; l++)
            for (size_t d = 0; d < fig->n_depths; d++) {
                if (niah_cell(r, f, l, d, &c, &e))
                    c.trials = 0;
                fig->cells[f][l][d] = (NiahFigure){c.trials, c.accuracy, c.ci_low, c.ci_high, c.diff_low,
                                                   c.diff_high};
            }
    }
}

/* Nothing is run here (r runs): the fields are checked; a new tolerance
 * gives the run shown its verdicts anew. */
static int screen_niah_recompute(void *st, Error *e)
{
    NiahLab *s = st;
    NiahGrid g;
    if (screen_niah_grid(s, &g, e))
        return -1;
    s->tolerance_shown = s->tolerance;
    if (s->have)
        screen_niah_figures(s, s->tolerance);
    return 0;
}

/* ------------------------------------------------------------------------
 * Drawing: one document (doc.h): what ran, the heatmaps side by side as
 * many as the width holds, the formats' verdicts, every cell; then the
 * stored GPU results where this machine has no GPU.
 */

/* A heatmap's width: its cells, or its longest line of words
 * ("simulated, not rejected"). */
static int screen_niah_map_width(const NiahFigures *g)
{
    const int cells = DEPTH_W + CELL_W * (int)g->n_lengths, words = (int)strlen("simulated, not rejected");
    return cells > words ? cells : words;
}

/* A format's verdict's colour: rejected bad, accepted good, undecided a
 * warning. */
static ColorRole screen_niah_role(const NiahFigures *g, size_t f)
{
    const int v = g->formats[f].verdict;
    if (v == VERDICT_REJECTED)
        return ROLE_BAD;
    if (v != VERDICT_NOT_REJECTED)
        return ROLE_NORMAL;
    return niahreport_accepted(v, g->formats[f].all.diff_low, g->formats[f].all.trials, g->tolerance) ? ROLE_GOOD
                                                                                                    : ROLE_WARN;
}

/* A format's heatmap: its id, kernel or simulated and its verdict, the
 * lengths, then a row per depth of accuracies in percent, each beside a
 * swatch of its loss's colour. */
static void screen_niah_map(const NiahFigures *g, size_t f, Doc *d)
{
    const int w = screen_niah_map_width(g), v = g->formats[f].verdict;
    Rect rc;
    char line[96], t[16];
    if (doc_block(d, 1, &rc))
        put_text(rc.y, rc.x, w, crt_attr(ROLE_TITLE), g->formats[f].id);
    snprintf(line, sizeof line, "%s, %s", g->formats[f].simulated ? "simulated" : "kernel",
             niahreport_judgement(v, g->formats[f].all.diff_low, g->formats[f].all.trials, g->tolerance));
    if (doc_block(d, 1, &rc))
        put_text(rc.y, rc.x, w, crt_attr(v == VERDICT_BASELINE ? ROLE_DIM : screen_niah_role(g, f)), line);
    if (doc_block(d, 1, &rc)) {
        put_text(rc.y, rc.x, DEPTH_W, crt_attr(ROLE_DIM), "depth");
        for (size_t l = 0; l < g->n_lengths; l++) {
            snprintf(line, sizeof line, "%*s", CELL_W - 1, format_tick(g->lengths[l], t, sizeof t));
            put_text(rc.y, rc.x + DEPTH_W + CELL_W * (int)l, CELL_W, crt_attr(ROLE_DIM), line);
        }
    }
    for (size_t dp = 0; dp < g->n_depths; dp++) {
        if (!doc_block(d, 1, &rc))
            continue;
        snprintf(line, sizeof line, "%g", g->depths[dp]);
        put_text(rc.y, rc.x, DEPTH_W, crt_attr(ROLE_DIM), line);
        for (size_t l = 0; l < g->n_lengths; l++) {
            const NiahFigure c = g->cells[f][l][dp];
            int x = rc.x + DEPTH_W + CELL_W * (int)l;
            if (!c.trials) {
                put_text(rc.y, x, CELL_W, crt_attr(ROLE_DIM), "   -");
                continue;
            }
            int level = heat_level(1 - c.accuracy, 0, 1, 9);
            put_text(rc.y, x, SWATCH, crt_attr((ColorRole)(ROLE_HEAT_0 + level)), "  ");
            snprintf(line, sizeof line, "%3.0f", 100 * c.accuracy);
            put_text(rc.y, x + SWATCH, CELL_W - SWATCH, crt_attr(c.accuracy >= 0.95 ? ROLE_GOOD : c.accuracy >= 0.5
                                                                     ? ROLE_WARN : ROLE_BAD), line);
        }
    }
}

/* The heatmaps in rows of as many as fit side by side. */
static void screen_niah_maps(const NiahFigures *g, Doc *d)
{
    const int w = screen_niah_map_width(g), gap = 2;
    int per = (d->win.w + gap) / (w + gap);
    if (per < 1)
        per = 1;
    for (size_t f0 = 0; f0 < g->n_formats; f0 += (size_t)per) {
        Doc row = *d;                       // the tallest so far of this row's maps
        for (size_t f = f0; f < g->n_formats && f < f0 + (size_t)per; f++) {
            Doc one = doc_beside(d, (int)(f - f0) * (w + gap), w < d->win.w ? w : d->win.w);
            screen_niah_map(g, f, &one);
            doc_below(&row, &row, &one);
        }
        d->line = row.line;
        doc_gap(d, 1);
    }
}

/* Each format's figures over the grid and its verdict, as wrapped text. */
static void screen_niah_verdicts(const NiahFigures *g, Doc *d)
{
    char line[640], rules[320];
    snprintf(line, sizeof line, "Per format over the grid: its accuracy and Wilson 95%% interval, the paired "
                                "bootstrap 95%% interval (%d resamples) of its difference to bf16, in points; %s:",
             STATS_RESAMPLES, niahreport_rules(g->tolerance, rules, sizeof rules));
    doc_text(d, 0, crt_attr(ROLE_NORMAL), line);
    for (size_t f = 0; f < g->n_formats; f++) {
        const NiahFigure c = g->formats[f].all;
        const int v = g->formats[f].verdict;
        if (!c.trials)
            continue;
        snprintf(line, sizeof line, "%s%s: %.1f%% [%.1f, %.1f]; %s [%+.1f, %+.1f]: %s", g->formats[f].id,
                 g->formats[f].simulated ? " (simulated)" : "", 100 * c.accuracy, 100 * c.ci_low, 100 * c.ci_high,
                 "diff", f ? 100 * c.diff_low : 0, f ? 100 * c.diff_high : 0,
                 niahreport_judgement(v, c.diff_low, c.trials, g->tolerance));
        doc_text(d, 2, crt_attr(screen_niah_role(g, f)), line);
    }
}

/* Every cell with its intervals, a narrow table per format (percent). */
static void screen_niah_intervals(const NiahLab *s, Doc *d)
{
    const NiahGrid *g = &s->shown.g;
    doc_text(d, 0, crt_attr(ROLE_NORMAL), "Every cell: accuracy (%) with its Wilson 95% interval, and the "
                                          "difference to bf16 (points) with its paired bootstrap 95% interval:");
    for (size_t f = 0; f < g->n_formats; f++) {
        doc_gap(d, 1);
        doc_text(d, 0, crt_attr(ROLE_TITLE), g->formats[f]->id);
        Table t;
        Error e;
        if (niahreport_cells_narrow(&s->shown, f, &t, &e) == 0)
            doc_table(d, &t);
        table_free(&t);
    }
}

/* The backend (or why there is none), what ran and what is going on. */
static void screen_niah_header(const NiahLab *s, Doc *d)
{
    char line[1024];
    if (s->b.cuda)
        snprintf(line, sizeof line, "%s, through the CUDA kernels", s->b.info.name);
    else
        snprintf(line, sizeof line, "CPU reference (%.900s)", s->b.why_cpu);
    doc_text(d, 0, crt_attr(s->b.cuda ? ROLE_GOOD : ROLE_WARN), line);
    if (s->have) {
        char what[sizeof s->what + 16];
        snprintf(what, sizeof what, "%s; r runs again.", s->what);
        doc_text(d, 0, crt_attr(ROLE_DIM), what);
    }
    if (*s->note)
        doc_text(d, 0, crt_attr(ROLE_WARN), s->note);
}

/* The generator's parameters, shown with every result. */
static void screen_niah_params(const NiahGrid *g, Doc *d)
{
    const NiahHaystack *h = &g->hay;
    const KvGenParams *p = &h->gen;
    char line[512];
    snprintf(line, sizeof line,
             "Haystack: head dim %zu, %u outlier key channels at %gx (query weight %g), %u sink(s) at +%g, %u value "
             "outlier(s) at %gx, RoPE theta %g. Needle: logit +%g, a %u-digit passkey; %u distractors at %g of its "
             "logit. Accuracy in %% per depth and length; the colour is the loss.",
             p->head_dim, p->outlier_channels, (double)p->outlier_scale, (double)p->query_outlier_weight, p->sinks,
             (double)p->sink_strength, p->value_outliers, (double)p->value_outlier_scale, h->rope_theta,
             (double)h->needle_logit, h->digits, h->distractors, (double)h->closeness);
    doc_text(d, 0, crt_attr(ROLE_DIM), line);
}

/* The stored GPU run's grid, in a section of its own: its title names the
 * GPU and the date, then what ran it and where it is kept, its heatmaps
 * and verdicts as this machine's are drawn; or why there is none. */
static void screen_niah_stored(const NiahLab *s, Doc *d)
{
    if (!s->have_stored) {
        doc_title(d, "Stored GPU NIAH results");
        doc_text(d, 0, crt_attr(ROLE_DIM), s->stored_why);
        return;
    }
    const NiahFigures *g = &s->stored.niah;
    char line[1024];
    snprintf(line, sizeof line, "Measured on %s, %s, not this machine", g->device, g->measured);
    doc_title(d, line);
    snprintf(line, sizeof line, "Shipped with kvlab: %s (%s) on that GPU, %u trials a cell; the verdicts at the "
                                "run's tolerance. None of it was measured here.",
             g->command, g->source, g->trials);
    doc_text(d, 0, crt_attr(ROLE_WARN), line);
    doc_gap(d, 1);
    screen_niah_maps(g, d);
    screen_niah_verdicts(g, d);
}

static void screen_niah_layout(void *st, Doc *d)
{
    const NiahLab *s = st;
    doc_title(d, "Needle in a haystack through the decode kernels");
    if (!s->opened) {
        char line[1024];
        size_t len = (size_t)snprintf(line, sizeof line,
                                      "Press r to run the grid: a passkey planted at each depth of a synthetic "
                                      "haystack of each length, among near-duplicate distractors, read back after "
                                      "one decode step, in every format of the set (");
        for (const char *c = PRESETS[s->preset].ids; *c && len + 3 < sizeof line; c++) {  // ", " between
            line[len++] = *c;
            if (*c == ',')
                line[len++] = ' ';
        }
        line[len] = '\0';
        if (len < sizeof line)
            snprintf(line + len, sizeof line - len, "); the same haystacks for every format.");
        doc_text(d, 0, crt_attr(ROLE_NORMAL), line);
        doc_text(d, 0, crt_attr(ROLE_DIM), "Without a GPU the CPU reference runs instead, and says so.");
    } else {
        screen_niah_header(s, d);
    }
    if (s->have) {
        doc_gap(d, 1);
        screen_niah_params(&s->shown.g, d);
        doc_gap(d, 1);
        screen_niah_maps(&s->fig, d);
        screen_niah_verdicts(&s->fig, d);
        doc_gap(d, 1);
        screen_niah_intervals(s, d);
    }
    if (s->show_stored) {
        doc_gap(d, 1);
        screen_niah_stored(s, d);
    }
}

/* In a lesson's page, under the niah widget (st: the widget's settings):
 * this session's last run where it was made with those settings, its
 * heatmaps and verdicts; else how to run it (a run takes seconds, too long
 * to make while the page draws). */
static void screen_niah_inline(void *st, Doc *d)
{
    const NiahLab *s = st;
    NiahGrid g;
    Error e;
    if (screen_niah_grid(s, &g, &e)) {
        doc_text(d, 0, crt_attr(ROLE_WARN), e.msg);
        return;
    }
    const NiahGrid *r = last_run ? &last_run->shown.g : NULL;
    bool same = r && r->n_lengths == g.n_lengths && r->n_depths == g.n_depths && r->n_formats == g.n_formats &&
                r->trials == g.trials && r->seed == g.seed && r->hay.closeness == g.hay.closeness &&
                last_run->tolerance_shown == s->tolerance &&
                !memcmp(r->lengths, g.lengths, sizeof g.lengths[0] * g.n_lengths) &&
                !memcmp(r->depths, g.depths, sizeof g.depths[0] * g.n_depths);
    for (size_t f = 0; same && f < g.n_formats; f++)
        same = r->formats[f] == g.formats[f];
    if (!same) {
        doc_text(d, 0, crt_attr(ROLE_DIM), "Not run yet in this session with these settings: Enter opens the NIAH "
                                           "screen with them, where r runs the grid (seconds on the CPU).");
        return;
    }
    doc_text(d, 0, crt_attr(ROLE_DIM), last_run->what);
    screen_niah_maps(&last_run->fig, d);
    screen_niah_verdicts(&last_run->fig, d);
}

/* ------------------------------------------------------------------------
 * Running
 */

typedef struct {
    Lab *lab;
    bool cancelled;
} Progress;

static bool screen_niah_progress(void *ctx, uint64_t done, uint64_t total, double seconds)
{
    Progress *p = ctx;
    (void)seconds;
    char label[64];
    snprintf(label, sizeof label, "NIAH grid, %.0f%% of the trials' tokens", 100.0 * (double)done / (double)total);
    p->cancelled = lab_progress(p->lab, label, (double)done, (double)total);
    return !p->cancelled;
}

/* 'r': the grid, trial by trial; Esc cancels, keeping the last complete
 * run on screen. */
static int screen_niah_run(void *st, Lab *lab)
{
    NiahLab *s = st;
    Error e;
    NiahGrid g;
    if (screen_niah_grid(s, &g, &e)) {
        lab_status(lab, true, "%s", e.msg);
        return KEY_REDRAW;
    }
    if (!s->opened) {
        if (bench_open(&s->b, "auto", &e)) {
            lab_status(lab, true, "%s", e.msg);
            return KEY_REDRAW;
        }
        s->opened = true;
        s->show_stored = !s->b.cuda;    // with a GPU, this machine's figures alone (s shows them)
    }
    NiahBackend be = {s->b.cuda, s->b.api, s->b.cuda_opts, 0};
    Progress p = {lab, false};
    NiahResult r;
    lab_progress(lab, "NIAH grid, starting", 0, 1);
    s->note[0] = '\0';
    if (niah_run(&g, &be, screen_niah_progress, &p, NULL, &r, &e)) {
        snprintf(s->note, sizeof s->note, "The run stopped: %s", e.msg);
        lab_status(lab, true, "%s", e.msg);
        return KEY_REDRAW;
    }
    if (r.partial) {
        niah_result_free(&r);
        snprintf(s->note, sizeof s->note, "The run was cancelled%s", s->have ? "; the last complete one is shown." : ".");
        lab_status(lab, false, "NIAH run cancelled");
        return KEY_REDRAW;
    }
    screen_niah_drop(s);
    s->shown = r;
    s->have = true;
    screen_niah_figures(s, s->tolerance);
    last_run = s;
    char t[32];
    snprintf(s->what, sizeof s->what, "%s: %zu length%s x %zu depth%s x %zu formats, %u trial%s a cell, on %.100s, in %s",
             PRESETS[s->preset].name, g.n_lengths, g.n_lengths == 1 ? "" : "s", g.n_depths,
             g.n_depths == 1 ? "" : "s", g.n_formats, g.trials, g.trials == 1 ? "" : "s",
             s->b.cuda ? s->b.info.name : "the CPU reference", format_duration(r.seconds, t, sizeof t));
    lab_status(lab, false, "NIAH run done in %s", t);
    return KEY_REDRAW;
}

static int screen_niah_key(void *st, int ch, Lab *lab)
{
    return lab_measure_key(ch, &((NiahLab *)st)->show_stored, screen_niah_run, st, lab);
}

/* kvlab niah's options that set the fields: a lesson's niah widget and a
 * task's settings (a set of --format is one of the Formats, bf16 left
 * out; --depths one of the Depths). */
static const ScreenOption OPTIONS[] = {
    {"--format", "Formats", true, NULL, NULL},
    {"--lengths", "Lengths", true, NULL, NULL},
    {"--depths", "Depths", true, NULL, NULL},
    {"--trials", "Trials", true, NULL, NULL},
    {"--closeness", "Closeness", true, NULL, NULL},
    {"--tolerance", "Tolerance", true, NULL, NULL},
};

/* A set of --format (the lab lists a repeated option's values,
 * "fp8_e4m3,int4") is the Formats whose formats it names, bf16 first
 * whether named or not. */
static const char *screen_niah_option_input(const char *label, const char *value)
{
    if (strcmp(label, "Formats"))
        return value;
    for (size_t i = 0; i < N_PRESETS; i++)
        if (!strcmp(value, PRESETS[i].ids) || !strcmp(value, PRESETS[i].ids + strlen("bf16,")))
            return PRESETS[i].name;
    return value;
}

static const ScreenKey KEYS[] = {
    {"r", "run", "run the grid (a progress bar; Esc cancels)"},
    {"s", "stored", "show or hide the NIAH grid stored from a GPU run (shown where no GPU runs it)"},
};

/* The cells as kvlab niah --csv writes them; the heatmaps as one SVG, a
 * grid per format side by side, each cell's accuracy written in it. */
static int screen_niah_export(void *st, FILE *csv, FILE *svg, Error *e)
{
    NiahLab *s = st;
    if (!s->have)
        return error_set(e, "nothing run yet: press r first");
    Table t;
    if (niahreport_cells(&s->shown, true, &t, e)) {
        table_free(&t);
        return -1;
    }
    table_csv(&t, csv);
    table_free(&t);
    const NiahGrid *g = &s->shown.g;
    const int cell = 44, pad = 60, mw = (int)g->n_lengths * cell + pad;
    const int W = (int)g->n_formats * mw + 20, H = (int)g->n_depths * cell + 90;
    fprintf(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
                 "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    for (size_t f = 0; f < g->n_formats; f++) {
        int x0 = 10 + (int)f * mw + pad - 10;
        fprintf(svg, "<text x=\"%d\" y=\"20\" font-weight=\"bold\">%s%s</text>\n", x0, g->formats[f]->id,
                g->formats[f]->simulated ? " (simulated)" : "");
        for (size_t l = 0; l < g->n_lengths; l++)
            fprintf(svg, "<text x=\"%d\" y=\"40\" text-anchor=\"middle\">%u</text>\n",
                    x0 + (int)l * cell + cell / 2, g->lengths[l]);
        for (size_t dp = 0; dp < g->n_depths; dp++) {
            int y = 50 + (int)dp * cell;
            if (f == 0)
                fprintf(svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%g</text>\n", x0 - 6, y + cell / 2 + 4,
                        g->depths[dp]);
            for (size_t l = 0; l < g->n_lengths; l++) {
                NiahCell c;
                if (niah_cell(&s->shown, f, l, dp, &c, e))
                    return -1;
                int red = (int)lround(255 * (1 - c.accuracy)), blue = (int)lround(255 * c.accuracy);
                fprintf(svg, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,96,%d)\"/>\n"
                             "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"white\">%.0f</text>\n",
                        x0 + (int)l * cell, y, cell - 2, cell - 2, red, blue, x0 + (int)l * cell + cell / 2,
                        y + cell / 2 + 4, 100 * c.accuracy);
            }
        }
    }
    fprintf(svg, "<text x=\"10\" y=\"%d\">accuracy (%%) by depth (rows) and length (columns), %u trials a cell; %s"
                 "</text>\n</svg>\n",
            H - 12, g->trials, s->b.cuda ? s->b.info.name : "CPU reference");
    return 0;
}

const ScreenDef SCREEN_NIAH = {
    .id = "niah",
    .name = "NIAH",
    .help = "Needle in a haystack through the decode kernels, as kvlab niah runs it: press r to plant a "
            "passkey at each depth of a synthetic haystack of each length, among near-duplicate distractors "
            "whose Closeness sets the difficulty, and read it back after one decode step in every format of "
            "the set (simulated ones are quantized on the host and run on the BF16 kernel, and say so). One "
            "heatmap of accuracy per format, its verdict at the Tolerance (rejected when even the paired "
            "bootstrap interval's best end loses more against BF16, the sources' rule; accepted when its worst "
            "end loses no more, over enough trials; undecided otherwise), and every cell with its Wilson 95% "
            "interval. The time left is foreseen from the trials run; Esc cancels, keeping the last "
            "complete run. Without a GPU the CPU reference runs and says so, and the grid stored from a GPU run is "
            "shown in a section of its own, titled with that GPU and the date it was measured (s shows or hides "
            "it).",
    .create = screen_niah_create,
    .destroy = screen_niah_destroy,
    .fields = screen_niah_fields,
    .recompute = screen_niah_recompute,
    .layout = screen_niah_layout,
    .key = screen_niah_key,
    .keys = KEYS,
    .n_keys = sizeof KEYS / sizeof KEYS[0],
    .bar = LAB_MEASURE_BAR,
    .n_bar = LAB_MEASURE_BAR_N,
    .export = screen_niah_export,
    .options = OPTIONS,
    .n_options = sizeof OPTIONS / sizeof OPTIONS[0],
    .inline_layout = screen_niah_inline,
    .option_input = screen_niah_option_input,
};
