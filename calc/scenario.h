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
    FIGURE_NOT_APPLICABLE,      // the figure's inputs were changed: the seed's value
                                // was for others, and is not compared
} FigureVerdict;

typedef struct {
    Q value;
    bool never;                 // crossover that never happens
    char text[48];              // value at the seed's precision (or 3 places; in full
                                // when not compared), whole numbers from 1,000 grouped
    FigureVerdict verdict;
} FigureResult;

/* The workload a figure is evaluated on: the scenario's with the figure's
 * own batch, context, weights and MHA switch. */
int figure_workload(const Scenario *sc, const Figure *f, Workload *w, Error *e);
int figure_eval(const Scenario *sc, const Figure *f, FigureResult *r, Error *e);
/* figure_eval on a scenario whose workload was changed from `original`,
 * the file's: a figure whose own workload (figure_workload) is no longer
 * the one the seed's value was for is FIGURE_NOT_APPLICABLE, with its value
 * in full rather than at the seed's precision. */
int figure_eval_changed(const Scenario *sc, const Workload *original, const Figure *f,
                        FigureResult *r, Error *e);
const char *figure_verdict_name(FigureVerdict v);
/* The verdict as an identifier for JSON and CSV ("agrees", "seed_wrong",
 * "unexplained", "stale", "no_seed"). */
const char *figure_verdict_id(FigureVerdict v);

#endif
