/* answer.h - a learner's answer to a number question, checked against a
 * query, and the mistake that explains a wrong one.
 *
 * An answer is a number with an optional unit: "20 GiB", "21.47 GB",
 * "3.55x", "71", "0.5625 B/elem", "40,960 B", "1.2e3 MB", "38%". It is
 * right when it is the query's value within a relative tolerance, in any
 * unit of the same family. A wrong one is recomputed under each mistake
 * model (one table, answer.c: GB read as GiB, only K or V counted, query
 * heads for KV heads, metadata left out, one sequence for all ...), alone
 * and two at once, and the model the answer matches is named. */
#ifndef KVLAB_ANSWER_H
#define KVLAB_ANSWER_H

#include "error.h"
#include "query.h"

#include <stdbool.h>
#include <stddef.h>

/* The relative tolerance of a number exercise that states none. */
#define ANSWER_TOLERANCE_DEFAULT 0.005

/* What a size is per, where the answer says: "0.5625 B/elem". */
typedef enum { PER_NONE, PER_ELEMENT, PER_TOKEN, PER_SEQUENCE } AnswerPer;

typedef struct {
    double value;               // the number as written
    const QueryUnit *unit;      // NULL: no unit written (taken as the question's)
    char unit_text[24];         // the unit as written ("slots", "gb"); "" none
    AnswerPer per;              // what the size is per, as written
    char number[128];           // the number as written, digits grouped: "21,474,836,480", "1.2e3"
    int decimals;               // the places it is given to: 2 for "0.38", 0 for "1.2e3"
} Answer;

/* Reads a number (digits, commas between groups of three, a decimal point,
 * an exponent), a unit and what a size is per ("per token"); an error says
 * what could not be read. Nothing may follow. */
int answer_parse(const char *text, Answer *a, Error *e);

/* ------------------------------------------------------------------------
 * Mistake models
 */
typedef struct MistakeModel MistakeModel;

size_t mistake_count(void);
const MistakeModel *mistake_at(size_t i);
const MistakeModel *mistake_by_id(const char *id);
const char *mistake_id(const MistakeModel *m);     // "gb_as_gib"
const char *mistake_name(const MistakeModel *m);   // "GB read as GiB"
const char *mistake_why(const MistakeModel *m);    // what goes wrong, one sentence
/* A model has variants where it is one mistake of several kinds: another
 * format's figure has one per format. Most have one. */
size_t mistake_variants(const MistakeModel *m);
/* The name with the variant: "another format's figure: BF16's". */
const char *mistake_label(const MistakeModel *m, size_t variant, char *buf, size_t n);

/* The query's value in unit `in` had the mistakes ms[0 .. n) been made,
 * each in its variant (variants NULL: the first of each), applied to the
 * query's workload and format. Returns 1 with *out set, 0 where a mistake
 * does not apply to this query or changes nothing, -1 on an error of the
 * query itself. */
int mistake_value(const Query *q, const MistakeModel *const *ms, const size_t *variants, size_t n,
                  const QueryUnit *in, Q *out, Error *e);

/* ------------------------------------------------------------------------
 * Checking
 */
#define VERDICT_MISTAKES_MAX 2

typedef struct {
    bool correct;
    Q truth;                    // the query's value in the asked unit
    char truth_text[64];        // "41.94 GB" (the query's digits, in the asked unit)
    double given;               // the answer in the asked unit
    char given_text[160];       // "10.48 GB": the learner's number and unit as written, digits grouped
    double off;                 // given / truth (0 where the truth is 0)
    char off_text[128];         // how far a wrong answer is: "is 4 times the answer", "is 1 more than ..."
    size_t n_mistakes;          // 0: no model explains it
    const MistakeModel *mistakes[VERDICT_MISTAKES_MAX];
    size_t variants[VERDICT_MISTAKES_MAX];     // each mistake's variant (mistake_label)
    char mistaken_text[160];    // the value the mistakes give, in the learner's unit and places
} AnswerVerdict;

/* A number and its unit as the checker writes them: "3.55x", "71",
 * "20 GiB" (no space before a ratio's unit; a count has none). */
const char *answer_join(const char *number, const QueryUnit *u, char *buf, size_t n);

/* Checks the answer to q, asked in `asked` (a unit of the query's family)
 * within the relative tolerance tol. An answer in another family is an
 * error (-1). */
int answer_check(const Query *q, const QueryUnit *asked, double tol, const Answer *a, AnswerVerdict *v,
                 Error *e);

/* Whether the answer is `value` (text as an answer, in the asked unit's
 * family) within tol: for a seed's own answer. */
bool answer_matches(const Answer *a, const QueryUnit *asked, const char *value, double tol);

#endif
