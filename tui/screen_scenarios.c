/* screen_scenarios.c - the seeds' walk-through scenarios, one after
 * another: the story, the live figures, and each figure the seed quotes
 * next to what calc computes, with the reason where the seed is wrong. Any
 * number of the workload can be changed in place. */
#include "screens.h"

#include "catalog.h"
#include "cli.h"
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
    FigureResult fig[SCENARIO_FIGURES_MAX];
    bool fig_ok[SCENARIO_FIGURES_MAX];
    Report rp;
    Results res;
    /* The tables as drawn, rebuilt only when recompute has run (`stale`)
     * or the view's width changed: a key that changes nothing else redraws
     * them as they are. */
    bool stale;
    int fit_w;                  // the width `table` and `figs` were fitted to
    Table table;                // the formats
    Table figs;                 // the figures the seed quotes
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
    if (!s->pool && s->sc.has_gpu &&        /* the GPU's memory less these weights */
        workload_pool_from_gpu(&s->sc.w, s->sc.gpu.memory, s->sc.utilization, s->sc.reserve, e))
        return -1;
    report_from_scenario(&s->sc, &s->rp);
    static Results res;
    if (report_compute(&s->rp, &res, e))
        return -1;
    s->res = res;
    for (size_t i = 0; i < s->sc.n_figures; i++)
        s->fig_ok[i] = figure_eval(&s->sc, &s->sc.figures[i], &s->fig[i], NULL) == 0;
    return 0;
}

static bool edited(const Scen *s)
{
    const Workload *a = &s->sc.w, *b = &s->base;
    return a->context != b->context || a->batch != b->batch || a->pool != b->pool ||
           a->weights != b->weights || a->bandwidth != b->bandwidth;   // a derived pool moves too
}

static void figures_table(const Scen *s, Table *t)
{
    table_header(t, "what the seed says", "format", "calc", "seed", "verdict", NULL);
    static const char MARK[] = {[FIGURE_AGREES] = '+', [FIGURE_SEED_WRONG] = '~',
                                [FIGURE_UNEXPLAINED] = '!', [FIGURE_STALE] = '!',
                                [FIGURE_NO_SEED] = ' '};
    for (size_t i = 0; i < s->sc.n_figures; i++) {
        const Figure *f = &s->sc.figures[i];
        const FigureResult *r = &s->fig[i];
        table_row(t);
        table_cell(t, "%s", f->label);
        table_cell(t, "%s", f->format->id);
        if (!s->fig_ok[i]) {
            table_cell(t, "-");
            table_cell(t, "%s", f->seed[0] ? f->seed : "-");
            table_cell(t, "!needs more inputs");
            continue;
        }
        char calc[TABLE_CELL];
        table_cell(t, "%s", report_figure_text(f, r, calc, sizeof calc));
        table_cell(t, "%s", f->seed[0] ? f->seed : "-");
        if (r->verdict == FIGURE_NO_SEED)
            table_cell(t, " ");
        else
            table_cell(t, "%c%s", MARK[r->verdict], figure_verdict_name(r->verdict));
    }
}

/* Fits the figures table into w columns: verdicts to a word, then no seed
 * column, then the labels clipped (the full table is in the export and in
 * `kvlab scenario show`). */
static void narrow(Table *t, int w)
{
    static const struct { const char *from, *to; } SHORT[] = {
        {"agrees", "ok"}, {"seed is wrong", "wrong"}, {"DISAGREES (unexplained)", "!!"},
        {"agrees, but the file says the seed is wrong", "stale"}};
    for (size_t r = 1; r < t->rows; r++) {
        char *v = t->cell[r][t->cols - 1];
        const char *body = cell_text(v);
        for (size_t k = 0; k < sizeof SHORT / sizeof SHORT[0]; k++)
            if (!strcmp(body, SHORT[k].from)) {
                char mark = *v;
                snprintf(v, TABLE_CELL, "%c%s", mark, SHORT[k].to);
                break;
            }
    }
    snprintf(t->cell[0][t->cols - 1], TABLE_CELL, "%s", "");
    if (table_width(t) > w)                 /* the verdict says whether calc and seed agree */
        table_drop_column(t, "seed");
    int over = table_width(t) - w;
    if (over <= 0)
        return;
    size_t label_w = 0;
    for (size_t r = 0; r < t->rows; r++)
        label_w = strlen(t->cell[r][0]) > label_w ? strlen(t->cell[r][0]) : label_w;
    size_t keep = label_w > (size_t)over + 4 ? label_w - (size_t)over : 4;
    for (size_t r = 0; r < t->rows; r++)
        if (strlen(t->cell[r][0]) > keep)
            snprintf(t->cell[r][0] + keep - 1, TABLE_CELL - keep + 1, "%s", ".");
}

/* The formats and figures tables fitted to w columns. */
static void fit_tables(Scen *s, int w)
{
    if (!s->stale && s->fit_w == w)
        return;
    report_table(&s->rp, &s->res, &s->table);
    report_table_fit(&s->table, w);
    figures_table(s, &s->figs);
    if (table_width(&s->figs) > w)          /* narrow: the format is in the label anyway */
        table_drop_column(&s->figs, "format");
    if (table_width(&s->figs) > w)          /* still narrow: short verdicts, clipped labels */
        narrow(&s->figs, w);
    s->fit_w = w;
    s->stale = false;
}

static void draw(void *st, Rect r, int scroll)
{
    Scen *s = st;
    draw_title((Rect){r.y, r.x, 1, r.w}, s->sc.title);
    put_text(r.y + 1, r.x, r.w, crt_attr(ROLE_DIM), s->sc.source);
    int y = r.y + 2;
    y += draw_wrapped((Rect){y, r.x, r.h < 30 ? 3 : 6, r.w}, crt_attr(ROLE_NORMAL), s->sc.story, 0);
    if (edited(s))
        put_text(y++, r.x, r.w, crt_attr(ROLE_WARN),
                 "inputs changed: the seed's figures were for the original workload");
    y++;
    fit_tables(s, r.w);
    draw_table((Rect){y, r.x, (int)s->table.rows, r.w}, &s->table, 0);
    y += (int)s->table.rows + 1;
    /* the figures and the notes on wrong seeds scroll together */
    Rect fr = {y, r.x, r.y + r.h - y, r.w};
    if (fr.h <= 1)
        return;
    int skip = scroll < (int)s->figs.rows - 1 ? scroll : (int)s->figs.rows - 2;
    if (skip < 0)
        skip = 0;
    draw_table(fr, &s->figs, skip);
    int ny = fr.y + (int)s->figs.rows - skip + 1;
    for (size_t i = 0; i < s->sc.n_figures && ny < r.y + r.h; i++) {
        if (!s->sc.figures[i].seed_error[0] || (int)i + 1 <= skip)
            continue;
        char note[800];
        snprintf(note, sizeof note, "%s: %s", s->sc.figures[i].label, s->sc.figures[i].seed_error);
        ny += draw_wrapped((Rect){ny, r.x, r.y + r.h - ny, r.w}, crt_attr(ROLE_WARN), note, 0);
    }
}

static int scroll_max(void *st)
{
    Scen *s = st;
    return s->sc.n_figures > 1 ? (int)s->sc.n_figures - 1 : 0;
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
                s->fig_ok[i] ? figure_verdict_id(s->fig[i].verdict) : "");
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
            "story, and compare each figure the source quotes with what kvlab computes. Green "
            "agrees, orange means the source is wrong (the reason is underneath), red means "
            "kvlab cannot reproduce it. Change the context, batch, pool, weights or bandwidth "
            "to see the figures move. Tab then Up/Down scrolls the figures.",
    .create = create,
    .destroy = free,
    .fields = fields,
    .recompute = recompute,
    .draw = draw,
    .scroll_max = scroll_max,
    .export = export,
};
