/* cli_scenario.c - `kvlab scenario list|show NAME|check FILE`.
 *
 * show prints a scenario's story, its formats table and every figure the
 * seed quotes next to what calc computes; check does the same comparison
 * and says no (exit 1) when a disagreement is unexplained. */
#include "cli.h"
#include "commands.h"
#include "tui/report.h"

#include "catalog.h"
#include "paths.h"
#include "scenario.h"
#include "units.h"

#include <string.h>

enum { O_JSON, O_HELP, O_COUNT };

static const OptSpec OPTS[O_COUNT] = {
    [O_JSON] = {"json", NULL, "print one JSON object"},
    [O_HELP] = {"help", NULL, "show this help"},
};

static const char *const USAGE =
    "usage: kvlab scenario list [--json]\n"
    "       kvlab scenario show NAME [--json]\n"
    "       kvlab scenario check FILE|NAME [--json]\n\n"
    "The walk-through scenarios: each one's story, figures, and whether the seed\n"
    "text it comes from got them right. check exits 1 when calc disagrees with\n"
    "a figure and the file does not explain why.";

static void cli_scenario_metrics_help(FILE *out)
{
    fprintf(out, "\nmetrics a scenario's figures can name:\n");
    for (size_t i = 0; i < metric_count(); i++)
        fprintf(out, "  %-20s %s\n", metric_id(metric_at(i)), metric_help(metric_at(i)));
}

static const CmdSpec CMD = {
    .name = "scenario",
    .usage = USAGE,
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = -1,
    .max_words = 2,
    .more_help = cli_scenario_metrics_help,
};

static int cli_scenario_load(const char *name, Scenario *sc, Error *e)
{
    char path[1024];
    if (catalog_path(paths_datadir(), CATALOG_SCENARIOS, name, path, sizeof path, e))
        return -1;
    return scenario_load(sc, path, paths_datadir(), e);
}

static int cli_scenario_list(bool json)
{
    CatalogList names;
    Error e;
    static Scenario sc;
    if (catalog_list(paths_datadir(), CATALOG_SCENARIOS, &names, &e))
        return cli_error("scenario", &e);
    cJSON *root = json ? cJSON_CreateObject() : NULL;
    cJSON *arr = json ? cJSON_AddArrayToObject(root, "scenarios") : NULL;
    Table t;
    table_header(&t, "name", "title", "source", NULL);
    int bad = EXIT_OK;              // the worst code of a file that did not load
    for (size_t i = 0; i < names.count; i++) {
        /* A broken file is reported and skipped; the good ones still list. */
        if (cli_scenario_load(names.names[i], &sc, &e)) {
            int code = cli_error("scenario list", &e);
            bad = code > bad ? code : bad;
            continue;
        }
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", sc.name);
            cJSON_AddStringToObject(o, "title", sc.title);
            cJSON_AddStringToObject(o, "source", sc.source);
            cJSON_AddItemToArray(arr, o);
        } else {
            table_row(&t);
            table_cell(&t, "%s", names.names[i]);
            table_cell(&t, "%s", sc.title);
            table_cell(&t, "%s", sc.source);
        }
    }
    int rc = json ? json_emit(root, &e) : table_check(&t, &e) ? -1 : (table_print(&t, stdout), 0);
    table_free(&t);
    return rc ? cli_error("scenario list", &e) : bad;
}

/* Evaluates every figure; *bad counts the ones that make check say no. */
static int cli_scenario_figures(const Scenario *sc, FigureResult *res, int *bad, Error *e)
{
    *bad = 0;
    for (size_t i = 0; i < sc->n_figures; i++) {
        if (figure_eval(sc, &sc->figures[i], &res[i], e))
            return error_prefix(e, "figure '%s'", sc->figures[i].label);
        *bad += figure_verdict_kind(res[i].verdict) == VERDICT_PROBLEM;
    }
    return 0;
}

static cJSON *cli_scenario_figures_json(const Scenario *sc, const FigureResult *res)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < sc->n_figures; i++) {
        const Figure *f = &sc->figures[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "label", f->label);
        cJSON_AddStringToObject(o, "format", f->format->id);
        cJSON_AddStringToObject(o, "metric", metric_id(f->metric));
        if (res[i].never)
            cJSON_AddNullToObject(o, "value");
        else
            json_add_q(o, "value", res[i].value);
        cJSON_AddStringToObject(o, "calc", res[i].text);
        if (f->seed[0])
            cJSON_AddStringToObject(o, "seed", f->seed);
        cJSON_AddStringToObject(o, "verdict", figure_verdict_id(res[i].verdict));
        if (f->seed_error[0])
            cJSON_AddStringToObject(o, "seed_error", f->seed_error);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static void cli_scenario_figures_text(const Scenario *sc, const FigureResult *res, FILE *out)
{
    Table t;
    table_header(&t, "figure", "format", "calc", "seed", "verdict", NULL);
    for (size_t i = 0; i < sc->n_figures; i++) {
        const Figure *f = &sc->figures[i];
        char calc[TABLE_CELL];
        table_row(&t);
        table_cell(&t, "%s", f->label);
        table_cell(&t, "%s", f->format->id);
        table_cell(&t, "%s", report_figure_text(f, &res[i], calc, sizeof calc));
        table_cell(&t, "%s", f->seed[0] ? f->seed : "-");
        table_cell(&t, "%s", figure_verdict_name(res[i].verdict));
    }
    table_print(&t, out);
    table_free(&t);
    FigureVerdict v[SCENARIO_FIGURES_MAX];
    char legend[1024];
    for (size_t i = 0; i < sc->n_figures; i++)
        v[i] = res[i].verdict;
    if (*figure_legend(v, sc->n_figures, legend, sizeof legend))
        fprintf(out, "%s\n", legend);
    bool first = true;
    for (size_t i = 0; i < sc->n_figures; i++)
        if (sc->figures[i].seed_error[0]) {
            fprintf(out, "%s- ", first ? "\nwhere the seed is wrong:\n" : "");
            text_put(out, sc->figures[i].label, false);
            fputs(": ", out);
            text_put(out, sc->figures[i].seed_error, false);
            fputc('\n', out);
            first = false;
        }
}

static int cli_scenario_show(const char *name, bool json, bool check_only)
{
    static Scenario sc;
    static FigureResult res[SCENARIO_FIGURES_MAX];
    Error e;
    int bad;
    const char *cmd = check_only ? "scenario check" : "scenario show";
    if (cli_scenario_load(name, &sc, &e))
        return cli_error(cmd, &e);
    if (cli_scenario_figures(&sc, res, &bad, &e))
        return cli_error(cmd, &e);
    Report rp;
    report_from_scenario(&sc, &rp);
    if (json) {
        cJSON *root = check_only ? cJSON_CreateObject() : report_json(&rp, &e);
        if (!root)
            return cli_error(cmd, &e);
        cJSON_AddStringToObject(root, "scenario", sc.name);
        cJSON_AddStringToObject(root, "title", sc.title);
        if (!check_only) {
            cJSON_AddStringToObject(root, "source", sc.source);
            cJSON_AddStringToObject(root, "story", sc.story);
        }
        cJSON_AddItemToObject(root, "figures", cli_scenario_figures_json(&sc, res));
        cJSON_AddBoolToObject(root, "ok", bad == 0);
        if (json_emit(root, &e))
            return cli_error(cmd, &e);
        return check_only && bad ? EXIT_NO : EXIT_OK;
    }
    text_put(stdout, sc.title, false);          // one line each, whatever the file holds
    putchar('\n');
    text_put(stdout, sc.source, false);
    fputs("\n\n", stdout);
    text_put(stdout, sc.story, true);
    fputs("\n\n", stdout);
    if (!check_only && report_text(&rp, false, stdout, &e))
        return cli_error(cmd, &e);
    if (sc.n_figures) {
        if (!check_only)
            printf("\nfigures the seed quotes\n");
        cli_scenario_figures_text(&sc, res, stdout);
    }
    if (check_only) {
        putchar('\n');
        text_put(stdout, sc.name, false);
        printf(": %zu figures, %d %s\n", sc.n_figures, bad, bad == 1 ? "problem" : "problems");
    }
    return check_only && bad ? EXIT_NO : EXIT_OK;
}

int cmd_scenario(int argc, char **argv)
{
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    Error e;
    const bool *set = g.set;
    const char *const *words = g.words;
    int n_words = g.n_words;
    const char *verb = words[0] ? words[0] : "";
    if (strcmp(verb, "list") == 0 && n_words == 1)
        return cli_scenario_list(set[O_JSON]);
    if ((strcmp(verb, "show") == 0 || strcmp(verb, "check") == 0) && n_words == 2)
        return cli_scenario_show(words[1], set[O_JSON], strcmp(verb, "check") == 0);
    if (strcmp(verb, "list") == 0)
        error_set(&e, "list takes no argument (got '%s')", words[1]);
    else if (strcmp(verb, "show") == 0 || strcmp(verb, "check") == 0)
        error_set(&e, "%s needs a scenario %s", verb, verb[0] == 's' ? "NAME" : "FILE or NAME");
    else if (!*verb)
        error_set(&e, "expected list, show NAME or check FILE");
    else
        error_set(&e, "unknown action '%s'; expected list, show NAME or check FILE", verb);
    return cli_error("scenario", &e);
}
