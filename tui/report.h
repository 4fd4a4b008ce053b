/* report.h - how a workload's figures are shown: the header that says
 * what was computed, the formats table, the speedup series, the warning
 * when the pool does not fit the GPU, and the same as JSON. Shared by the
 * command line (`kvlab calc`, `kvlab scenario show`) and the lab (the
 * calculator and the scenarios screens show the same table), so it lives
 * beside them in tui/, not in either room. */
#ifndef KVLAB_REPORT_H
#define KVLAB_REPORT_H

#include "budget.h"
#include "error.h"
#include "format.h"
#include "gpu.h"
#include "scenario.h"
#include "table.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

/* The formats of a report: a scenario's (at most SCENARIO_FORMATS_MAX), or
 * each format at most once (fewer). */
#define REPORT_FORMATS_MAX SCENARIO_FORMATS_MAX
/* The contexts of a speedup series. */
#define REPORT_CONTEXTS_MAX 16

typedef struct {
    const char *scenario;       // the scenario it started from, if any
    const char *model;          // display name; NULL for a typed shape
    const Gpu *gpu;             // NULL when none was named
    bool q_heads_unknown;       // a typed shape without its query heads (w.shape has the KV heads'
                                // count there, which does not say MHA)
    Workload w;
    size_t n_formats;
    const Format *formats[REPORT_FORMATS_MAX];
    size_t n_contexts;          // speedup series, optional
    uint64_t contexts[REPORT_CONTEXTS_MAX];
} Report;

/* Every format's figures, the speedup series when contexts are given, and
 * how the pool sits in the GPU's memory when both are known. */
typedef struct {
    FormatResult r[REPORT_FORMATS_MAX];
    bool has_fit;                           // a GPU and a pool are known
    GpuFit fit;
    Q series[REPORT_FORMATS_MAX][REPORT_CONTEXTS_MAX];      // speedup at each context
    Q series_ms[REPORT_FORMATS_MAX][REPORT_CONTEXTS_MAX];   // step floor at each context
} Results;

/* The report of a scenario's workload and formats, as it stands in sc. */
void report_from_scenario(const Scenario *sc, Report *rp);
int report_compute(const Report *rp, Results *res, Error *e);
/* The formats table as `kvlab calc` prints it (the lab shows the same). */
void report_table(const Report *rp, const Results *res, Table *t);
/* Drops the least needed columns until the table fits in width columns. */
void report_table_fit(Table *t, int width);
/* A scenario figure's value with its unit, as the figures tables show it:
 * "21.4 GiB", "1.12x", "38%", "never". */
const char *report_figure_text(const Figure *f, const FigureResult *r, char *buf, size_t n);

/* The warning that the pool and the weights exceed the GPU's memory, with
 * the fix; NULL (and buf untouched) when they fit or nothing is known. */
const char *report_fit_warning(const Results *res, char *buf, size_t n);
/* What the speedups are over, named as in the table: "speedup is over
 * bf16", or over a format of the same size (fp16) when BF16 is not in it. */
const char *report_baseline(const Report *rp, char *buf, size_t n);

/* Computes every format first, so an error prints nothing. */
int report_text(const Report *r, bool csv, FILE *out, Error *e);
/* The JSON object DESIGN.md's command-line contract specifies for
 * `kvlab calc --json`. */
cJSON *report_json(const Report *r, Error *e);

#endif
