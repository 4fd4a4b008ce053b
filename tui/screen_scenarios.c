/* screen_scenarios.c - the seeds' walk-through scenarios, one after
 * another: the story, the live figures, and each figure the seed quotes
 * next to what calc computes, with the reason where the seed is wrong. Any
 * number of the workload can be changed in place. */
#include "screens.h"

#include "catalog.h"
#include "cli.h"
#include "doc.h"
#include "report.h"
#include "scenario.h"
#include "svg.h"
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
    FigureResult fig[SCENARIO_FIGURES_MAX];
    bool fig_ok[SCENARIO_FIGURES_MAX];
    Report rp;
    Results res;
    /* The tables as drawn, rebuilt only when recompute has run (`stale`)
     * or the view's width changed: a key that changes nothing else redraws
     * them as they are. */
    bool stale;
    int fit_w;                  // the width the tables were fitted to
    Table table;                // the formats
    Table figs;                 // the figures the seed quotes, a row each
    bool stacked;               // too narrow for figs: each label on a line of its
    Table vals;                 // own, over its verdict and values
} Scen;

static void *create(Error *e)
{
    Scen *s = lab_state_new(sizeof *s, e);
    if (!s)
        return NULL;
    if (catalog_list(cli_datadir(), CATALOG_SCENARIOS, &s->names, e) || !s->names.count) {
        if (!s->names.count)
            error_set(e, "no scenarios in %s", cli_datadir());
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

static size_t fields(void *st, Field *f)
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

static int recompute(void *st, Error *e)
{
    Scen *s = st;
    s->stale = true;
    if (s->loaded != s->pick) {
        char path[1024];
        static Scenario sc;
        if (catalog_path(cli_datadir(), CATALOG_SCENARIOS, s->choices[s->pick], path, sizeof path, e) ||
            scenario_load(&sc, path, cli_datadir(), e))
            return -1;
        s->sc = sc;
        s->base = sc.w;
        s->loaded = s->pick;
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
        s->fig_ok[i] = figure_eval_changed(&s->sc, &s->base, &s->sc.figures[i], &s->fig[i], NULL) == 0;
    return 0;
}

static bool edited(const Scen *s)
{
    const Workload *a = &s->sc.w, *b = &s->base;
    return a->context != b->context || a->batch != b->batch || a->pool != b->pool ||
           a->weights != b->weights || a->bandwidth != b->bandwidth;   // a derived pool moves too
}

/* ------------------------------------------------------------------------
 * The figures: one set of verdict words, whatever the width, each with its
 * colour marker (widget.h) and its line in the legend.
 */

enum { NO_FIGURE = FIGURE_NOT_APPLICABLE + 1, N_VERDICTS };    // calc cannot give it here

static const struct {
    const char *mark, *word, *legend;
} VERDICT[N_VERDICTS] = {
    [FIGURE_AGREES] = {"+", "agrees", "calc gives the seed's figure, at the seed's precision"},
    [FIGURE_SEED_WRONG] = {"~", "seed wrong", "the seed is wrong; why is written below"},
    [FIGURE_UNEXPLAINED] = {"!", "UNEXPLAINED", "calc differs and the scenario does not say why"},
    [FIGURE_STALE] = {"!", "stale", "calc agrees, but the scenario says the seed is wrong"},
    [FIGURE_NO_SEED] = {"", "", ""},
    [FIGURE_NOT_APPLICABLE] = {"", "n/a", "not compared: the figure's inputs were changed, and "
                                          "the seed's value is for the scenario's; calc's is "
                                          "shown in full"},
    [NO_FIGURE] = {"!", "no figure", "calc cannot work it out from these inputs (no KV pool, "
                                     "no bandwidth, or not one sequence in the pool)"},
};

static int verdict_of(const Scen *s, size_t i)
{
    return s->fig_ok[i] ? (int)s->fig[i].verdict : NO_FIGURE;
}

static void figures_table(const Scen *s, Table *t)
{
    table_header(t, "what the seed says", "format", "calc", "seed", "verdict", NULL);
    for (size_t i = 0; i < s->sc.n_figures; i++) {
        const Figure *f = &s->sc.figures[i];
        int v = verdict_of(s, i);
        char calc[TABLE_CELL];
        table_row(t);
        table_cell(t, "%s", f->label);
        table_cell(t, "%s", f->format->id);
        table_cell(t, "%s", v == NO_FIGURE ? "-" : report_figure_text(f, &s->fig[i], calc, sizeof calc));
        table_cell(t, "%s", f->seed[0] ? f->seed : "-");
        table_cell(t, "%s%s", VERDICT[v].mark, VERDICT[v].word);
    }
}

/* The formats and figures tables fitted to w columns: the figures lose
 * their format column (the label names it), then stand each label on a
 * line of its own over its values, rather than cut anything. */
static void fit_tables(Scen *s, int w)
{
    if (!s->stale && s->fit_w == w)
        return;
    report_table(&s->rp, &s->res, &s->table);
    report_table_fit(&s->table, w);
    figures_table(s, &s->figs);
    if (table_width(&s->figs) > w)
        table_drop_column(&s->figs, "format");
    s->stacked = table_width(&s->figs) > w;
    if (s->stacked) {           /* the verdict first: a word, then the numbers aligned */
        static const char *const COLS[] = {"verdict", "calc", "seed"};
        size_t from[3] = {0};
        for (size_t k = 0; k < 3; k++)
            for (size_t c = 0; c < s->figs.cols; c++)
                if (!strcmp(s->figs.cell[0][c], COLS[k]))
                    from[k] = c;
        table_init(&s->vals, 3);
        for (size_t r = 0; r < s->figs.rows; r++) {
            table_row(&s->vals);
            for (size_t k = 0; k < 3; k++)
                table_cell(&s->vals, "%s", s->figs.cell[r][from[k]]);
        }
    }
    s->fit_w = w;
    s->stale = false;
}

/* The legend of the verdicts the table shows. */
static void legend(const Scen *s, char *buf, size_t n)
{
    bool shown[N_VERDICTS] = {false};
    for (size_t i = 0; i < s->sc.n_figures; i++)
        shown[verdict_of(s, i)] = true;
    size_t k = (size_t)snprintf(buf, n, "verdict:");
    for (int v = 0; v < N_VERDICTS && k < n; v++)
        if (shown[v] && *VERDICT[v].word)
            k += (size_t)snprintf(buf + k, n - k, " %s = %s;", VERDICT[v].word, VERDICT[v].legend);
    if (k < n && buf[k - 1] == ';')
        buf[k - 1] = '.';
}

/* ------------------------------------------------------------------------
 * The view: one document (doc.h) from the title down, so that a long
 * story or a narrow window scrolls instead of losing lines.
 */

static void figures_doc(const Scen *s, Doc *d)
{
    if (!s->stacked) {
        doc_table(d, &s->figs);
    } else {
        doc_text(d, 0, crt_attr(ROLE_TITLE), s->figs.cell[0][0]);
        doc_table_row(d, &s->vals, 0, 0);
        for (size_t i = 0; i < s->sc.n_figures; i++) {
            doc_text(d, 0, crt_attr(ROLE_NORMAL), s->sc.figures[i].label);
            doc_table_row(d, &s->vals, i + 1, 0);
        }
    }
    char text[1024];
    legend(s, text, sizeof text);
    doc_text(d, 0, crt_attr(ROLE_DIM), text);
    /* the notes on wrong seeds, only where the seed's figure is compared */
    for (size_t i = 0; i < s->sc.n_figures; i++) {
        int v = verdict_of(s, i);
        if (!s->sc.figures[i].seed_error[0] || (v != FIGURE_SEED_WRONG && v != FIGURE_STALE))
            continue;
        snprintf(text, sizeof text, "%s: %s", s->sc.figures[i].label, s->sc.figures[i].seed_error);
        doc_text(d, 0, crt_attr(ROLE_WARN), text);
    }
}

static void layout(void *st, Doc *d)
{
    Scen *s = st;
    fit_tables(s, d->win.w);
    doc_title(d, s->sc.title);
    doc_text(d, 0, crt_attr(ROLE_DIM), s->sc.source);
    doc_text(d, 0, crt_attr(ROLE_NORMAL), s->sc.story);
    char text[400];
    if (edited(s))
        doc_text(d, 0, crt_attr(ROLE_WARN), "inputs changed from the scenario's: a figure whose "
                                           "inputs changed is shown in full, not compared with the "
                                           "seed (n/a)");
    if (s->no_pool[0])
        doc_text(d, 0, crt_attr(ROLE_WARN), s->no_pool);
    if (report_fit_warning(&s->res, text, sizeof text))
        doc_text(d, 0, crt_attr(ROLE_WARN), text);
    doc_gap(d, 1);
    doc_table(d, &s->table);
    if (s->res.r[0].has_step) {
        char base[96];
        snprintf(text, sizeof text, "step ms: floor of a decode step, (weights + KV) / bandwidth; %s",
                 report_baseline(&s->rp, base, sizeof base));
        doc_text(d, 0, crt_attr(ROLE_DIM), text);
    }
    doc_gap(d, 1);
    figures_doc(s, d);
}

static void draw(void *st, Rect r, int scroll)
{
    doc_view(r, scroll, layout, st);
}

static int scroll_lines(void *st, Rect r, Rect *win)
{
    *win = r;
    return doc_view_lines(r, layout, st);
}

static int export(void *st, FILE *csv, FILE *svg, Error *e)
{
    Scen *s = st;
    (void)e;
    fprintf(csv, "figure,format,metric,calc,seed,verdict\n");
    for (size_t i = 0; i < s->sc.n_figures; i++) {
        const Figure *f = &s->sc.figures[i];
        fputc('"', csv);
        for (const char *p = f->label; *p; p++) {
            if (*p == '"')
                fputc('"', csv);
            fputc(*p, csv);
        }
        fprintf(csv, "\",%s,%s,\"%s\",\"%s\",%s\n", f->format->id, metric_id(f->metric),
                s->fig_ok[i] ? s->fig[i].text : "", f->seed,
                s->fig_ok[i] ? figure_verdict_id(s->fig[i].verdict) : "no_figure");
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

const ScreenDef SCREEN_SCENARIOS = {
    .name = "Scenarios",
    .help = "The walk-through scenarios of the lessons' sources: pick one with + and -, read its "
            "story, and compare each figure the source quotes with what kvlab computes; the "
            "legend under the figures says what each verdict means, and where the source is "
            "wrong the reason is underneath. Change the context, batch, pool, weights or "
            "bandwidth to see the figures move: a figure whose inputs changed is shown in full "
            "and no longer compared with the source. Tab then Up/Down (or PgUp, PgDn) scrolls "
            "the screen.",
    .create = create,
    .destroy = free,
    .fields = fields,
    .recompute = recompute,
    .draw = draw,
    .scroll_lines = scroll_lines,
    .export = export,
};
