/* screen_scenarios.c - the seeds' walk-through scenarios, one after
 * another: the story, the live figures, and each figure the seed quotes
 * next to what calc computes, with the reason where the seed is wrong. Any
 * number of the workload can be changed in place. */
#include "screens.h"

#include "catalog.h"
#include "doc.h"
#include "paths.h"
#include "pin.h"
#include "scenario.h"
#include "svg.h"
#include "tui/report.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    CatalogList names;
    const char *choices[CATALOG_MAX];
    int pick, loaded;
    Scenario sc;
    Workload base;              // the file's workload, to notice edits
    uint64_t context, batch;
    u128 pool, weights, bandwidth;
    char no_pool[ERROR_MSG_MAX + 16]; // why the GPU leaves no pool, when it leaves none
    FigureResult fig[SCENARIO_FIGURES_MAX];     // FIGURE_NO_FIGURE where calc cannot work one out
    Report rp;
    Results res;
    /* The tables as drawn, rebuilt only when screen_scenarios_recompute has
     * run (`stale`) or the view's width changed: a key that changes nothing
     * else redraws them as they are. */
    bool stale;
    int fit_w;                  // the width the tables were fitted to
    Table table;                // the formats
    Table figs;                 // the figures the seed quotes, a row each
    bool stacked;               // too narrow for figs: each label on a line of its
    Table vals;                 // own, over its verdict and values
    Pin pin;                    // the pinned baseline, when on
    /* An exercise (sc.predict): its figures stay hidden until the learner
     * has answered each, then show beside the answers. */
    bool revealed;
    size_t asked;               // the figures answered so far
    char answer[SCENARIO_FIGURES_MAX][64];
} Scen;

static void *screen_scenarios_create(Error *e)
{
    Scen *s = lab_state_new(sizeof *s, e);
    if (!s)
        return NULL;
    if (catalog_list(paths_datadir(), CATALOG_SCENARIOS, &s->names, e) || !s->names.count) {
        if (!s->names.count)
            error_set(e, "no scenarios in %s", paths_datadir());
        free(s);
        return NULL;
    }
    /* the order of the story: the pool first */
    for (size_t i = 0; i < s->names.count; i++) {
        s->choices[i] = s->names.names[i];
        if (strcmp(s->names.names[i], "pool-20gib") == 0)
            s->pick = (int)i;
    }
    s->loaded = -1;
    return s;
}

static size_t screen_scenarios_fields(void *st, Field *f)
{
    Scen *s = st;
    size_t n = 0;
    f[n++] = (Field){"Scenario", FK_CHOICE, &s->pick, 0, s->names.count, 0, s->choices, NULL};
    f[n++] = (Field){"Context", FK_CONTEXT, &s->context, 1, (uint64_t)1 << 24, 0, NULL, NULL};
    f[n++] = (Field){"Batch", FK_COUNT, &s->batch, 1, 1u << 20, 1, NULL, NULL};
    f[n++] = (Field){"KV pool", FK_SIZE, &s->pool, 0, 0, GIB, NULL,
                     s->sc.has_gpu ? "from GPU" : "none"};
    f[n++] = (Field){"Weights", FK_SIZE, &s->weights, 0, 0, GB, NULL, "none"};
    f[n++] = (Field){"Bandwidth", FK_RATE, &s->bandwidth, 0, 0, 100 * GB, NULL, "none"};
    return n;
}

static int screen_scenarios_recompute(void *st, Error *e)
{
    Scen *s = st;
    s->stale = true;
    if (s->loaded != s->pick) {
        char path[1024];
        static Scenario sc;
        if (catalog_path(paths_datadir(), CATALOG_SCENARIOS, s->choices[s->pick], path, sizeof path, e) ||
            scenario_load(&sc, path, paths_datadir(), e))
            return -1;
        s->sc = sc;
        s->base = sc.w;
        s->loaded = s->pick;
        s->revealed = !sc.predict;          // asked again after another scenario or R
        s->asked = 0;
        s->context = sc.w.context;
        s->batch = sc.w.batch;
        s->pool = sc.pool_given || !sc.has_gpu ? sc.w.pool : 0;     // 0: from the GPU
        s->weights = sc.w.weights;
        s->bandwidth = sc.w.bandwidth;
    }
    s->sc.w.context = s->context;
    s->sc.w.batch = s->batch;
    s->sc.w.weights = s->weights;
    s->sc.w.bandwidth = s->bandwidth;
    s->sc.w.pool = s->pool;
    s->no_pool[0] = '\0';
    Error why;
    if (!s->pool && s->sc.has_gpu &&        /* the GPU's memory less these weights */
        workload_pool_from_gpu(&s->sc.w, s->sc.gpu.memory, s->sc.utilization, s->sc.reserve, &why))
        snprintf(s->no_pool, sizeof s->no_pool, "no KV pool: %s", why.msg);
    report_from_scenario(&s->sc, &s->rp);
    static Results res;
    if (report_compute(&s->rp, &res, e))
        return -1;
    s->res = res;
    for (size_t i = 0; i < s->sc.n_figures; i++)
        if (figure_eval_changed(&s->sc, &s->base, &s->sc.figures[i], &s->fig[i], NULL))
            s->fig[i] = (FigureResult){.text = "-", .verdict = FIGURE_NO_FIGURE};
    return 0;
}

static void screen_scenarios_ask(Scen *s, Lab *lab);

/* The prompt's answer for the next figure; the next is asked, or, after
 * the last, the figures show. */
static void screen_scenarios_answered(void *ctx, Lab *lab, const char *answer)
{
    Scen *s = ctx;
    snprintf(s->answer[s->asked], sizeof s->answer[0], "%s", answer[0] ? answer : "-");
    s->stale = true;
    if (++s->asked < s->sc.n_figures) {
        screen_scenarios_ask(s, lab);
        return;
    }
    s->revealed = true;
    lab_status(lab, false, "revealed: your answers (you) beside calc's and the seed's");
}

static void screen_scenarios_ask(Scen *s, Lab *lab)
{
    static char label[256];
    snprintf(label, sizeof label, "%s (%s), with its unit: ", s->sc.figures[s->asked].label,
             s->sc.figures[s->asked].format->id);
    lab_prompt(lab, label, screen_scenarios_answered, s);
}

static int screen_scenarios_key(void *st, int ch, Lab *lab)
{
    Scen *s = st;
    if (ch != 'a')
        return KEY_IGNORED;
    if (s->revealed) {
        lab_status(lab, false, "%s", s->sc.predict ? "answered: R asks again" : "this scenario asks nothing");
        return KEY_REDRAW;
    }
    screen_scenarios_ask(s, lab);
    return KEY_REDRAW;
}

static const ScreenKey KEYS[] = {
    {"a", "answer", "an exercise: answer its figures one by one, then they show"},
};

/* Back to the scenario's own inputs: its file is read again. */
static void screen_scenarios_reset(void *st)
{
    ((Scen *)st)->loaded = -1;
}

static int screen_scenarios_pin(void *st, bool on, Error *e)
{
    Scen *s = st;
    char what[200], a[64];
    snprintf(what, sizeof what, "%s, %s tokens x %llu", s->choices[s->pick],
             units_context(a, sizeof a, s->sc.w.context), (unsigned long long)s->sc.w.batch);
    (void)e;                    // a scenario always has its figures
    if (on)
        pin_set(&s->pin, &s->rp, &s->res, what);
    else
        pin_clear(&s->pin);
    return 0;
}

static bool screen_scenarios_edited(const Scen *s)
{
    const Workload *a = &s->sc.w, *b = &s->base;
    return a->context != b->context || a->batch != b->batch || a->pool != b->pool ||
           a->weights != b->weights || a->bandwidth != b->bandwidth;   // a derived pool moves too
}

/* ------------------------------------------------------------------------
 * The figures: calc's verdict words (scenario.h), whatever the width, each
 * in the colour of its kind (widget.h's cell markers) and with its line in
 * the legend.
 */

static const char *const MARK[] = {
    [VERDICT_SILENT] = "", [VERDICT_FINE] = "+", [VERDICT_NOTE] = "~", [VERDICT_PROBLEM] = "!"};

/* The figures one per row (figs), and for a view too narrow for that the
 * verdicts and values alone (vals), to stand under each label. */
static void screen_scenarios_figures_tables(Scen *s)
{
    if (s->sc.predict)
        table_header(&s->figs, "what the seed says", "format", "you", "calc", "seed", "verdict", NULL);
    else
        table_header(&s->figs, "what the seed says", "format", "calc", "seed", "verdict", NULL);
    table_header(&s->vals, "verdict", "calc", "seed", NULL);
    for (size_t i = 0; i < s->sc.n_figures; i++) {
        const Figure *f = &s->sc.figures[i];
        const FigureVerdict v = s->fig[i].verdict;
        char calc[TABLE_CELL];
        const char *value = v == FIGURE_NO_FIGURE ? "-" : report_figure_text(f, &s->fig[i], calc, sizeof calc);
        const char *seed = f->seed[0] ? f->seed : "-";
        table_row(&s->figs);
        table_cell(&s->figs, "%s", f->label);
        table_cell(&s->figs, "%s", f->format->id);
        if (s->sc.predict)
            table_cell(&s->figs, "%s", s->answer[i][0] ? s->answer[i] : "-");
        table_cell(&s->figs, "%s", value);
        table_cell(&s->figs, "%s", seed);
        table_cell(&s->figs, "%s%s", MARK[figure_verdict_kind(v)], figure_verdict_name(v));
        table_row(&s->vals);
        table_cell(&s->vals, "%s%s", MARK[figure_verdict_kind(v)], figure_verdict_name(v));
        table_cell(&s->vals, "%s", value);
        table_cell(&s->vals, "%s", seed);
    }
}

/* The formats and figures tables fitted to w columns: the figures lose
 * their format column (the label names it), then stand each label on a
 * line of its own over its values, rather than cut anything. */
static void screen_scenarios_fit_tables(Scen *s, int w)
{
    if (!s->stale && s->fit_w == w)
        return;
    report_table(&s->rp, &s->res, &s->table);
    report_table_fit(&s->table, w);
    screen_scenarios_figures_tables(s);
    if (table_width(&s->figs) > w)
        table_drop_column(&s->figs, "format");
    s->stacked = table_width(&s->figs) > w;
    s->fit_w = w;
    s->stale = false;
}

/* ------------------------------------------------------------------------
 * The view: one document (doc.h) from the title down, so that a long
 * story or a narrow window scrolls instead of losing lines.
 */

static void screen_scenarios_figures_doc(const Scen *s, Doc *d)
{
    if (!s->stacked) {
        doc_table(d, &s->figs);
    } else {
        doc_text(d, 0, crt_attr(ROLE_TITLE), s->figs.cell[0][0]);
        doc_table_row(d, &s->vals, 0, 0);
        for (size_t i = 0; i < s->sc.n_figures; i++) {
            char label[256];
            snprintf(label, sizeof label, "%s%s%s%s", s->sc.figures[i].label, s->sc.predict ? " (you: " : "",
                     s->sc.predict ? s->answer[i] : "", s->sc.predict ? ")" : "");
            doc_text(d, 0, crt_attr(ROLE_NORMAL), label);
            doc_table_row(d, &s->vals, i + 1, 0);
        }
    }
    char text[1024];
    FigureVerdict v[SCENARIO_FIGURES_MAX];
    for (size_t i = 0; i < s->sc.n_figures; i++)
        v[i] = s->fig[i].verdict;
    doc_text(d, 0, crt_attr(ROLE_DIM), figure_legend(v, s->sc.n_figures, text, sizeof text));
    /* the notes on wrong seeds, only where the seed's figure is compared */
    for (size_t i = 0; i < s->sc.n_figures; i++) {
        if (!s->sc.figures[i].seed_error[0] || (v[i] != FIGURE_SEED_WRONG && v[i] != FIGURE_STALE))
            continue;
        snprintf(text, sizeof text, "%s: %s", s->sc.figures[i].label, s->sc.figures[i].seed_error);
        doc_text(d, 0, crt_attr(ROLE_WARN), text);
    }
}

/* An exercise before it is answered: what it asks, and the answers so
 * far, with no figure of calc's or the seed's. */
static void screen_scenarios_predict_doc(const Scen *s, Doc *d)
{
    char text[400];
    doc_gap(d, 1);
    doc_text(d, 0, crt_attr(ROLE_TITLE), "Predict first: the figures show once you have answered each "
                                         "(a answers; Esc stops)");
    for (size_t i = 0; i < s->sc.n_figures; i++) {
        snprintf(text, sizeof text, "%zu. %s (%s): %s", i + 1, s->sc.figures[i].label, s->sc.figures[i].format->id,
                 i < s->asked ? s->answer[i] : "?");
        doc_text(d, 2, crt_attr(i == s->asked ? ROLE_FIELD_ON : ROLE_NORMAL), text);
    }
}

static void screen_scenarios_layout(void *st, Doc *d)
{
    Scen *s = st;
    screen_scenarios_fit_tables(s, d->win.w);
    doc_title(d, s->sc.title);
    doc_text(d, 0, crt_attr(ROLE_DIM), s->sc.source);
    doc_text(d, 0, crt_attr(ROLE_NORMAL), s->sc.story);
    if (!s->revealed) {
        screen_scenarios_predict_doc(s, d);
        return;
    }
    char text[400];
    if (screen_scenarios_edited(s))
        doc_text(d, 0, crt_attr(ROLE_WARN), "inputs changed from the scenario's: a figure they move "
                                           "is shown in full and not compared with the seed (n/a)");
    if (s->no_pool[0])
        doc_text(d, 0, crt_attr(ROLE_WARN), s->no_pool);
    if (report_fit_warning(&s->res, text, sizeof text))
        doc_text(d, 0, crt_attr(ROLE_WARN), text);
    doc_gap(d, 1);
    if (s->pin.on) {
        pin_layout(&s->pin, &s->rp, &s->res, d);
        doc_gap(d, 1);
    }
    doc_table(d, &s->table);
    if (s->res.r[0].has_step) {
        char base[96];
        snprintf(text, sizeof text, "step ms: floor of a decode step, (weights + KV) / bandwidth; %s",
                 report_baseline(&s->rp, base, sizeof base));
        doc_text(d, 0, crt_attr(ROLE_DIM), text);
    }
    doc_gap(d, 1);
    screen_scenarios_figures_doc(s, d);
}

static int screen_scenarios_export(void *st, FILE *csv, FILE *svg, Error *e)
{
    Scen *s = st;
    if (!s->revealed)
        return error_set(e, "an exercise: answer it first (a), its figures are hidden until then");
    fprintf(csv, "figure,format,metric,calc,seed,verdict\n");
    for (size_t i = 0; i < s->sc.n_figures; i++) {
        const Figure *f = &s->sc.figures[i];
        fputc('"', csv);
        for (const char *p = f->label; *p; p++) {
            if (*p == '"')
                fputc('"', csv);
            fputc(*p, csv);
        }
        const FigureResult *r = &s->fig[i];
        fprintf(csv, "\",%s,%s,\"%s\",\"%s\",%s\n", f->format->id, metric_id(f->metric),
                r->verdict == FIGURE_NO_FIGURE ? "" : r->text, f->seed, figure_verdict_id(r->verdict));
    }
    BarItem items[16];
    char text[16][48];
    for (size_t i = 0; i < s->rp.n_formats; i++) {
        char a[48];
        const FormatResult *r = &s->res.r[i];
        snprintf(text[i], 48, "%s", units_gib(a, sizeof a, r->fp.bytes, 3));
        items[i] = (BarItem){r->format->id, q_to_double(q_make(r->fp.bytes, GIB)), text[i]};
    }
    char title[200];
    snprintf(title, sizeof title, "%s: KV cache by format", s->sc.title);
    svg_bars(svg, title, items, s->rp.n_formats);
    return 0;
}

static const Table *screen_scenarios_columns(void *st)
{
    const Scen *s = st;
    return s->revealed ? &s->table : NULL;     // an exercise's columns after it is answered
}

static const ScreenOption OPTIONS[] = {
    {NULL, "Scenario", false, NULL, NULL},
    {"--scenario", "Scenario", true, NULL, NULL},
    {"--context", "Context", true, NULL, NULL},
    {"--batch", "Batch", true, NULL, NULL},
    {"--pool", "KV pool", true, NULL, NULL},
    {"--weights", "Weights", true, NULL, NULL},
    {"--bandwidth", "Bandwidth", true, NULL, NULL},
};

const ScreenDef SCREEN_SCENARIOS = {
    .id = "scenarios",
    .name = "Scenarios",
    .help = "The walk-through scenarios of the lessons' sources: pick one with + and -, read its "
            "story, and compare each figure the source quotes with what kvlab computes; the "
            "legend under the figures says what each verdict means, and where the source is "
            "wrong the reason is underneath. Change the context, batch, pool, weights or "
            "bandwidth to see the figures move: a figure the change moves is shown in full "
            "and no longer compared with the source. Tab then Up/Down (or PgUp, PgDn) scrolls "
            "the screen.",
    .create = screen_scenarios_create,
    .destroy = free,
    .fields = screen_scenarios_fields,
    .recompute = screen_scenarios_recompute,
    .layout = screen_scenarios_layout,
    .export = screen_scenarios_export,
    .reset = screen_scenarios_reset,
    .key = screen_scenarios_key,
    .keys = KEYS,
    .n_keys = sizeof KEYS / sizeof KEYS[0],
    .origin = "the scenario's inputs",
    .pin = screen_scenarios_pin,
    .options = OPTIONS,
    .n_options = sizeof OPTIONS / sizeof OPTIONS[0],
    .columns = screen_scenarios_columns,
};
