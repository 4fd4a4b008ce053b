/* cli_calc.c - `kvlab calc`: the KV-cache calculator on the command line.
 *
 * The options are calc/query.h's (a lesson's figure is a calc command line
 * with a metric in front), mapped onto the workload there; this file adds
 * the speedup series and the output switches, and prints the formats table
 * or its JSON. Every figure comes from calc/budget.h. */
#include "cli.h"
#include "commands.h"
#include "tui/report.h"

#include "query.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

/* The query options first, at the same indices, then calc's own. */
enum { O_CONTEXTS = QOPT_COUNT, O_JSON, O_CSV, O_HELP, O_COUNT };

static const OptSpec OWN[O_COUNT - QOPT_COUNT] = {
    {"contexts", "LIST", "the speedup over BF16 at each context: 1k,8k,32k"},
    {"json", NULL, "print one JSON object"},
    {"csv", NULL, "print the formats table as CSV"},
    {"help", NULL, "show this help"},
};

static OptSpec OPTS[O_COUNT];

static const CmdSpec CMD = {
    .name = "calc",
    .usage = "usage: kvlab calc [--scenario NAME | --model NAME | --layers L --kv-heads H "
             "--head-dim D [--q-heads H]] [options]\n\n"
             "KV-cache footprint, slots, step floors and speedups per format.\n"
             "With no shape, the default scenario (" QUERY_DEFAULT_SCENARIO ") is used.",
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = QOPT_FORMAT,
    .max_words = 0,
};

static void cli_calc_opts(void)
{
    for (int k = 0; k < QOPT_COUNT; k++) {
        const QueryOption *q = query_option(k);
        OPTS[k] = (OptSpec){q->name, q->arg, q->help};
    }
    memcpy(&OPTS[QOPT_COUNT], OWN, sizeof OWN);
}

int cmd_calc(int argc, char **argv)
{
    cli_calc_opts();
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    QueryOptions o = {0};
    for (int k = 0; k < QOPT_COUNT; k++) {
        o.set[k] = g.set[k];
        o.val[k] = g.val[k];
    }
    o.n_formats = g.n_repeat;
    memcpy(o.formats, g.repeat, g.n_repeat * sizeof g.repeat[0]);
    Error e;
    static QuerySetup s;
    static Report rp;
    memset(&rp, 0, sizeof rp);
    if (query_setup(&o, &s, &e))
        return cli_error("calc", &e);
    if (s.note[0])
        fprintf(stderr, "kvlab calc: %s\n", s.note);
    if (g.set[O_CONTEXTS] &&
        cli_parse_u64s("contexts", g.val[O_CONTEXTS], rp.contexts, REPORT_CONTEXTS_MAX, &rp.n_contexts,
                       units_parse_context, &e))
        return cli_error("calc", &e);
    rp.scenario = s.scenario[0] ? s.scenario : NULL;
    rp.model = s.model[0] ? s.model : NULL;
    rp.gpu = s.has_gpu ? &s.gpu : NULL;
    rp.q_heads_unknown = s.q_heads_unknown;
    rp.w = s.w;
    rp.n_formats = s.n_formats;
    memcpy(rp.formats, s.formats, s.n_formats * sizeof s.formats[0]);
    if (g.set[O_JSON]) {
        cJSON *j = report_json(&rp, &e);
        if (!j || json_emit(j, &e))
            return cli_error("calc", &e);
        return EXIT_OK;
    }
    if (report_text(&rp, g.set[O_CSV], stdout, &e))
        return cli_error("calc", &e);
    return EXIT_OK;
}
