/* query.h - one figure of calc, named in one line of text.
 *
 * A query is a metric (a row of scenario.c's METRICS table), optionally the
 * unit and decimals to show it in, then `kvlab calc`'s own options:
 *
 *     METRIC[:UNIT[:DIGITS]] [--option value ...]
 *     gb_per_sequence:GB:2 --model llama-3.1-70b --context 128000
 *
 * The options are mapped onto a workload here, once: `kvlab calc` reads its
 * command line through query_setup too, so a query without its METRIC part
 * is a calc command line a learner can paste and run. Lessons write their
 * figures as queries and exercises their answers (lessons/FORMAT.md). */
#ifndef KVLAB_QUERY_H
#define KVLAB_QUERY_H

#include "budget.h"
#include "checked.h"
#include "error.h"
#include "format.h"
#include "gpu.h"
#include "scenario.h"

#include <stdbool.h>
#include <stddef.h>

/* The scenario `kvlab calc` starts from when neither a scenario, a model
 * nor a shape is given. */
#define QUERY_DEFAULT_SCENARIO "pool-20gib"

/* ------------------------------------------------------------------------
 * The options: one table (query.c), in this order. `kvlab calc` takes them
 * all and a few of its own (--contexts, --json, --csv, --help) after them.
 */
typedef enum {
    QOPT_SCENARIO, QOPT_MODEL, QOPT_LAYERS, QOPT_KV_HEADS, QOPT_Q_HEADS, QOPT_HEAD_DIM, QOPT_MHA,
    QOPT_CONTEXT, QOPT_BATCH, QOPT_FORMAT, QOPT_POOL, QOPT_GPU, QOPT_MEMORY, QOPT_UTIL, QOPT_RESERVE,
    QOPT_WEIGHTS, QOPT_BANDWIDTH, QOPT_TP, QOPT_BLOCK, QOPT_RESIDUAL, QOPT_HEAD_SCALES,
    QOPT_BF16_LAYERS, QOPT_BF16_SLIDING, QOPT_COUNT
} QueryOpt;

typedef struct {
    const char *name;           // "context" for --context
    const char *arg;            // "S" when it takes a value; NULL for a flag
    const char *help;
} QueryOption;

const QueryOption *query_option(int k);         // k < QOPT_COUNT
/* The option's index, or -1. */
int query_option_by_name(const char *name);

#define QUERY_FORMATS_MAX SCENARIO_FORMATS_MAX

/* The options as given; values point into the caller's strings. --format
 * is the one option that may be given more than once. */
typedef struct {
    bool set[QOPT_COUNT];
    const char *val[QOPT_COUNT];
    size_t n_formats;
    const char *formats[QUERY_FORMATS_MAX];
} QueryOptions;

/* Reads "--name value", "--name=value" and flags from words[0 .. n);
 * an unknown option, a missing value or an option given twice is an error
 * naming the word. */
int query_options_parse(const char *const *words, size_t n, QueryOptions *o, Error *e);

/* What the options make: the workload, and what a report says about it. */
typedef struct {
    Workload w;                 // pool, weights and bandwidth resolved
    char model[96];             // display name; "" for a typed shape
    char scenario[64];          // the scenario it started from; "" for none
    bool has_gpu;
    Gpu gpu;
    bool pool_given;            // the pool is given, not taken from the GPU
    Q utilization;
    u128 reserve;
    bool q_heads_unknown;       // a typed shape without --q-heads
    size_t n_formats;           // the formats given, the scenario's or all
    const Format *formats[QUERY_FORMATS_MAX];
    char note[256];             // a remark for the user ("" none): a bare size
} QuerySetup;

/* Starts from the scenario (or QUERY_DEFAULT_SCENARIO when no shape is
 * given), applies every option and checks the whole; each error names the
 * option behind it. */
int query_setup(const QueryOptions *o, QuerySetup *s, Error *e);

/* ------------------------------------------------------------------------
 * Units: one table (query.c) of the units a value may be shown or
 * answered in, each in a family; a value converts only within its family.
 */
typedef enum { UNIT_COUNT, UNIT_SIZE, UNIT_TIME, UNIT_RATIO, UNIT_FAMILIES } UnitFamily;

typedef struct QueryUnit QueryUnit;
const QueryUnit *query_unit_by_name(const char *name);     // exact, case-sensitive; NULL
/* The units in the table's order, for whoever needs them all. */
size_t query_unit_count(void);
const QueryUnit *query_unit_at(size_t i);                  // NULL past the end
const char *query_unit_name(const QueryUnit *u);
UnitFamily query_unit_family(const QueryUnit *u);
const char *query_family_name(UnitFamily f);               // "size", "time" ...
/* The unit a metric is computed in ("" is a count). */
const QueryUnit *query_metric_unit(const Metric *m);
/* v in unit `from` as a value in unit `to` (the same family); an overflow
 * is an error. */
int query_convert(Q v, const QueryUnit *from, const QueryUnit *to, Q *out, Error *e);
/* A value with its unit as calc prints it: "41.94 GB", "3.55x", "38%",
 * "1,024", "never". digits < 0: the unit's own, trailing zeros dropped
 * (two decimals for GiB, GB, ms and x; bytes and counts in full). */
const char *query_value_text(Q v, bool never, const QueryUnit *u, int digits, char *buf, size_t n);

/* ------------------------------------------------------------------------
 * Queries
 */
#define QUERY_TEXT_MAX 512
#define QUERY_WORDS_MAX 48
#define QUERY_WORD_MAX 96

typedef struct {
    const Metric *metric;
    const QueryUnit *unit;      // shown in; the metric's own unless given
    int digits;                 // decimals shown; -1 = the unit's own
    size_t n_words;             // the calc options, one word each
    char words[QUERY_WORDS_MAX][QUERY_WORD_MAX];
} Query;

/* Parses the text (metric, unit, digits, options); the options' values are
 * checked by query_eval, which loads the files they name. */
int query_parse(const char *text, Query *q, Error *e);

typedef struct {
    Q exact;                    // in the query's unit
    double value;
    bool never;                 // a crossover that never happens
    UnitFamily family;
    const QueryUnit *unit;
    char text[64];              // "41.94 GB"
    char number[48];            // "41.94"
} QueryValue;

/* The query's options as they are given (n words from q->words). */
int query_options(const Query *q, QueryOptions *o, Error *e);
/* The workload the query's options make, with the one format it is of:
 * the --format given (bf16 where none is); more than one is an error. */
int query_workload(const Query *q, QuerySetup *s, const Format **f, Error *e);
/* The metric on a workload and format, in the query's unit. */
int query_eval_on(const Query *q, const Workload *w, const Format *f, QueryValue *v, Error *e);
int query_eval(const Query *q, QueryValue *v, Error *e);
/* query_parse then query_eval. */
int query_run(const char *text, QueryValue *v, Error *e);
/* The query as text, in one line: "metric:unit:digits --opt value ...". */
const char *query_format(const Query *q, char *buf, size_t n);
/* The options alone, as a calc command line: "kvlab calc --model ...". */
const char *query_command(const Query *q, char *buf, size_t n);

#endif
