/* scenario.h - the walk-through scenarios and the figures they claim.
 *
 * A scenario is a workload taken from the seed texts (model, GPU, context,
 * batch, pool ...), a short story that sets it up, and the figures the seed
 * quotes for it. Each figure names a metric of one format (slots, step_ms,
 * speedup ...), may change the batch, context or weights for that figure
 * alone, and carries the seed's value as written ("21.4", "38%", "1.12x").
 *
 * calc computes every figure and compares it with the seed at the seed's
 * own precision. Where they differ the file must say why in `seed_error`;
 * `kvlab scenario check` fails on a disagreement nobody explained and on an
 * explanation that is no longer needed.
 */
#ifndef KVLAB_SCENARIO_H
#define KVLAB_SCENARIO_H

#include "budget.h"
#include "checked.h"
#include "error.h"
#include "format.h"
#include "gpu.h"
#include "model.h"

#include <stdbool.h>
#include <stddef.h>

#define SCENARIO_FORMATS_MAX 16
#define SCENARIO_FIGURES_MAX 32

/* ------------------------------------------------------------------------
 * Metrics: what a figure measures. One table (scenario.c); each row has an
 * id used in files and a unit used when printing.
 */
typedef struct Metric Metric;

size_t metric_count(void);
const Metric *metric_at(size_t i);
const Metric *metric_by_id(const char *id);
const char *metric_id(const Metric *m);
const char *metric_unit(const Metric *m);       // "GiB", "ms", "x", "%", ""
const char *metric_help(const Metric *m);
/* The workload inputs (budget.h's WL_* bits) the metric's value depends on. */
unsigned metric_reads(const Metric *m);

typedef struct FigureResult FigureResult;
/* The metric of format f on the workload w (BF16's figures beside it for
 * the ratios); r's value and `never` set, its text and verdict not. */
int metric_eval(const Metric *m, const Workload *w, const Format *f, FigureResult *r, Error *e);
/* A value as figures print it: at `decimals` places (trimmed when `trim`),
 * in full when decimals < 0, "never" when never; whole numbers from 1,000
 * grouped: 3,815 beside 122,071. Returns buf. */
const char *metric_value_text(Q v, bool never, int decimals, bool trim, char *buf, size_t n);

/* ------------------------------------------------------------------------
 * Scenarios
 */
typedef struct {
    char label[128];
    const Format *format;
    const Metric *metric;
    bool batch_at_slots;        // evaluate at batch = this format's slots
    uint64_t batch;             // 0 = the scenario's
    uint64_t context;           // 0 = the scenario's
    u128 weights;               // 0 = the scenario's
    bool mha;                   // evaluate the model as multi-head attention
    char seed[32];              // the seed's value as written; "" = none quoted
    char seed_error[512];       // what the seed got wrong; "" = it agrees
} Figure;

typedef struct {
    char name[64];              // file stem
    char title[128];
    char source[256];           // which seed and section
    char story[1024];           // the narrative line shown before the figures
    bool predict;               // an exercise: the lab asks for the answers before it shows the figures
    Model model;
    bool has_gpu;
    Gpu gpu;
    Workload w;                 // pool, weights, bandwidth resolved
    bool pool_given;            // the file sets the pool; else it comes from the GPU
    Q utilization;              // share of GPU memory for weights + KV
    u128 reserve;               // GPU memory kept for the runtime
    size_t n_formats;
    const Format *formats[SCENARIO_FORMATS_MAX];
    size_t n_figures;
    Figure figures[SCENARIO_FIGURES_MAX];
} Scenario;

/* Loads a scenario file; models and GPUs it names come from datadir. */
int scenario_load(Scenario *sc, const char *path, const char *datadir, Error *e);
/* The same from text in memory (len bytes, no NUL needed); name stands for
 * the file in messages and in the check of the "name" field. */
int scenario_parse(Scenario *sc, const char *name, const char *text, size_t len,
                   const char *datadir, Error *e);

typedef enum {
    FIGURE_AGREES,              // calc matches the seed at the seed's precision
    FIGURE_SEED_WRONG,          // calc differs and the file explains why
    FIGURE_UNEXPLAINED,         // calc differs and nobody said why: a failure
    FIGURE_STALE,               // the file says the seed is wrong but it agrees
    FIGURE_NO_SEED,             // the seed quotes no value
    FIGURE_NOT_APPLICABLE,      // an input of the figure changed: the seed's value
                                // was for the scenario's, and is not compared
    FIGURE_NO_FIGURE,           // calc cannot work the figure out from changed inputs
                                // (no pool, no bandwidth); set by callers whose
                                // figure_eval_changed failed, never by calc
    FIGURE_VERDICTS             // how many there are
} FigureVerdict;

struct FigureResult {
    Q value;
    bool never;                 // crossover that never happens
    char text[48];              // value at the seed's precision (or 3 places; in full
                                // when not compared), whole numbers from 1,000 grouped
    FigureVerdict verdict;
};

/* The workload a figure is evaluated on: the scenario's with the figure's
 * own batch, context, weights and MHA switch. */
int figure_workload(const Scenario *sc, const Figure *f, Workload *w, Error *e);
int figure_eval(const Scenario *sc, const Figure *f, FigureResult *r, Error *e);
/* figure_eval on a scenario whose workload was changed from `original`,
 * the file's. A figure whose value depends on an input that changed (in
 * its own workload, figure_workload) is FIGURE_NOT_APPLICABLE, in full
 * rather than at the seed's precision: the seed's value, and the file's
 * explanation of it, are about the file's inputs. A figure that depends on
 * none of them (bytes per element after a new context, bytes per token
 * with other weights) keeps figure_eval's verdict. */
int figure_eval_changed(const Scenario *sc, const Workload *original, const Figure *f,
                        FigureResult *r, Error *e);

/* ------------------------------------------------------------------------
 * Verdicts: one table (scenario.c) of the words `kvlab scenario show` and
 * the lab both print, their identifiers and what they mean.
 */
typedef enum {
    VERDICT_SILENT,             // nothing to say: no seed, or not compared
    VERDICT_FINE,               // the seed is right
    VERDICT_NOTE,               // the seed is wrong, and the file says why
    VERDICT_PROBLEM,            // the file or the inputs need fixing (check fails)
} VerdictKind;

/* The word for a verdict: "agrees", "seed wrong", "DISAGREES", "stale",
 * "n/a", "no figure"; "" for FIGURE_NO_SEED. */
const char *figure_verdict_name(FigureVerdict v);
/* The verdict as an identifier for JSON and CSV ("agrees", "seed_wrong",
 * "unexplained", "stale", "no_seed", "not_applicable", "no_figure"). */
const char *figure_verdict_id(FigureVerdict v);
/* What the word means, for the legend under the figures. */
const char *figure_verdict_meaning(FigureVerdict v);
VerdictKind figure_verdict_kind(FigureVerdict v);
/* The legend of the verdicts among v[0 .. n), in the table's order, into
 * buf: "verdict: agrees = calc gives ...; seed wrong = ... ."; "" when none
 * of them has a word. Returns buf. */
const char *figure_legend(const FigureVerdict *v, size_t n, char *buf, size_t size);

#endif
