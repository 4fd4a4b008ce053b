/* lesson.h - a lesson (lessons/NN-slug.md) as a document any front end can
 * show: blocks holding inline runs, widgets, predict-then-reveal blocks.
 *
 * A lesson is CommonMark read with md4c (lessons/FORMAT.md, "Lessons"):
 * a ```kvlab-lesson header block of `key: value` lines, then prose whose
 * live figures are code spans beginning with `=` and holding a query
 * (calc/query.h), citations `[text](src:ID "title")`, glossary links
 * `[text](term:TERM)`, widgets (```kvlab NAME, their options as text) and
 * ```kvlab-predict blocks.
 *
 * Parsing and evaluating are two steps, so that a front end parses once
 * and evaluates again when a setting changes: lesson_parse builds the
 * document and checks every reference (sources, terms, widgets, scenario,
 * exercises, and that every figure is a query that parses); lesson_eval
 * computes every figure's value and text. Every error names the file,
 * line and column ("lessons/01-why-kv-grows.md:12:7: ..."). */
#ifndef KVLAB_LESSON_H
#define KVLAB_LESSON_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>

#define LESSON_FILE_MAX (256u * 1024u)  // far above any lesson
#define LESSON_ID_MAX 64
#define LESSON_SOURCES_MAX 16
#define LESSON_EXERCISES_MAX 32
#define LESSON_CHOICES_MAX 8
#define LESSON_FIGURE_TEXT 64

typedef struct {
    int line, col;              // 1-based, col in bytes
} LessonPos;

/* ------------------------------------------------------------------------
 * Inline runs
 */
typedef enum {
    RUN_TEXT,                   // prose
    RUN_CODE,                   // a code span that is not a figure
    RUN_FIGURE,                 // a live figure: text is its query, figure its index
    RUN_CITE,                   // a citation: text as typed, target the source id, title
    RUN_TERM,                   // a glossary link: text, target the term
    RUN_BREAK,                  // a hard line break
} RunKind;

enum { RUN_EMPH = 1u, RUN_STRONG = 2u };

typedef struct {
    RunKind kind;
    unsigned style;             // RUN_EMPH | RUN_STRONG
    int cell;                   // in a table row: the cell's column (0-based)
    const char *text;
    const char *target;         // RUN_CITE: source id; RUN_TERM: term; else NULL
    const char *title;          // RUN_CITE: the link's title ("" when none); else NULL
    int figure;                 // RUN_FIGURE: index into Lesson.figures; else -1
    LessonPos pos;
    size_t offset;              // where it begins in Lesson.source
} LessonRun;

/* A live figure: its query and, after lesson_eval, its value. */
typedef struct {
    const char *query;          // the query, without the '='
    LessonPos pos;
    bool evaluated;
    double value;               // in the query's unit
    char text[LESSON_FIGURE_TEXT];      // as rendered: "41.94 GB"
} LessonFigure;

/* ------------------------------------------------------------------------
 * Blocks
 */
typedef enum {
    BLOCK_HEADING,              // level 1 to 6
    BLOCK_PARAGRAPH,
    BLOCK_ITEM,                 // the first paragraph of a list item
    BLOCK_CODE,                 // text: the code, info: its info string
    BLOCK_TABLE_ROW,            // runs carry their cell; header for the head row
    BLOCK_RULE,                 // a thematic break
    BLOCK_WIDGET,               // widget: its name, text: its options
    BLOCK_PREDICT,              // predict: index into Lesson.predicts
} BlockKind;

typedef struct {
    BlockKind kind;
    int level;                  // HEADING: 1 to 6
    int depth;                  // list nesting: 0 outside lists, 1 in a top-level list ...
    int quote;                  // block-quote nesting: 0 outside quotes
    bool ordered;               // ITEM: of an ordered list
    unsigned number;            // ITEM of an ordered list: its number
    bool header;                // TABLE_ROW: the head row
    int n_cells;                // TABLE_ROW: its cells
    size_t run0, n_runs;        // the block's runs: Lesson.runs[run0 .. run0 + n_runs)
    const char *info;           // CODE: its info string ("" when none)
    const char *text;           // CODE: the code; WIDGET: the options, as written
    const char *widget;         // WIDGET: its name ("calc")
    int predict;                // PREDICT: index into Lesson.predicts; else -1
    LessonPos pos;
} LessonBlock;

/* A ```kvlab-predict block: the question asked first, the answer (a live
 * figure) and the explanation revealed after. */
typedef struct {
    const char *question;
    int answer;                 // index into Lesson.figures
    size_t n_choices;
    const char *choices[LESSON_CHOICES_MAX];
    int correct;                // the right choice (0 is a); -1 when there are no choices
    size_t run0, n_runs;        // the explanation, as runs
    LessonPos pos;
} LessonPredict;

typedef struct {
    char id[LESSON_ID_MAX];
    const char *description;
} LessonSource;

/* ------------------------------------------------------------------------
 * The lesson
 */
typedef struct LessonArena LessonArena;

typedef struct {
    char path[512];             // as given, for messages
    const char *source;         // the text parsed (source_len bytes and a NUL)
    size_t source_len;
    /* The header. */
    char id[LESSON_ID_MAX];
    const char *title, *question;
    char scenario[LESSON_ID_MAX];       // "" when none
    size_t n_exercises;
    char exercises[LESSON_EXERCISES_MAX][LESSON_ID_MAX];
    size_t n_sources;
    LessonSource sources[LESSON_SOURCES_MAX];
    /* The body. */
    LessonBlock *blocks;
    size_t n_blocks;
    LessonRun *runs;
    size_t n_runs;
    LessonFigure *figures;
    size_t n_figures;
    LessonPredict *predicts;
    size_t n_predicts;
    LessonArena *arena;         // the texts above
} Lesson;

/* What a lesson's references are checked against; each NULL is not
 * checked (the fuzz harness, a front end that has not loaded it). */
typedef struct {
    const char *datadir;        // scenarios/: the header's scenario and the queries' names
    /* Whether term (or an alias of one) is in the glossary. */
    bool (*term_known)(const char *term, const void *ctx);
    const void *term_ctx;
    /* Whether a lesson has this id (lesson_shipped). */
    bool (*lesson_known)(const char *id, const void *ctx);
    const void *lesson_ctx;
    /* Whether an exercise has this id. */
    bool (*exercise_known)(const char *id, const void *ctx);
    const void *exercise_ctx;
    /* 0 when widget `name` takes `options` (its command's own check);
     * LESSON_WIDGET_UNKNOWN for a name no widget has; -1 with the
     * command's message when it refuses them. */
    int (*widget_check)(const char *name, const char *options, const void *ctx, Error *e);
    const void *widget_ctx;
    /* The names widget_check knows, for the message about an unknown one. */
    const char *widget_names;
} LessonRefs;

enum { LESSON_WIDGET_UNKNOWN = 1 };

/* Whether the lessons directory (ctx, a path; NULL for paths_lessondir())
 * holds the lesson `id`, a file NN-id.md; for LessonRefs.lesson_known. */
bool lesson_shipped(const char *id, const void *ctx);

/* Parses len bytes of text (no NUL needed) named path in messages. On
 * failure nothing is left allocated and e holds "path:line:col: what". */
int lesson_parse(Lesson *l, const char *path, const char *text, size_t len, const LessonRefs *refs,
                 Error *e);
/* A text in a lesson's inline syntax that is not a lesson (a glossary
 * definition, an exercise's question): paragraphs, lists, figures and
 * term links; no header and no summary. */
int lesson_parse_text(Lesson *l, const char *path, const char *text, size_t len, const LessonRefs *refs,
                      Error *e);
/* lesson_parse of a file. */
int lesson_load(Lesson *l, const char *path, const LessonRefs *refs, Error *e);
void lesson_free(Lesson *l);

/* Computes every figure (again, after a model file or a setting
 * changed); a figure calc cannot compute is an error at its place. */
int lesson_eval(Lesson *l, Error *e);

/* "path:line:col: " and the message, for an error at pos. */
int lesson_error(const Lesson *l, LessonPos pos, Error *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The source of the header with this id; NULL when none. */
const LessonSource *lesson_source(const Lesson *l, const char *id);

/* ------------------------------------------------------------------------
 * The typed-number rule (lessons/FORMAT.md): a number typed in prose must
 * not be one calc computes for the lesson's inputs.
 */
typedef struct {
    char where[32];             // text_typed_numbers: the text's name ("question"); else ""
    char number[32];            // as typed: "41.94"
    char figure[600];           // the query of what calc computes that it equals:
                                // "gb_per_sequence:GB --model llama-3.1-70b --format bf16"
    LessonPos pos;
} TypedNumber;

/* Lists, into out (room for max), the typed numbers of the prose that
 * equal, at their printed precision, a figure calc computes for the
 * lesson's inputs; returns how many there are (may exceed max), or -1 on
 * error. The lesson must have been evaluated. */
int lesson_typed_numbers(const Lesson *l, TypedNumber *out, size_t max, Error *e);

/* A text that is not a lesson, for the rule: its name and its text in a
 * lesson's inline syntax (figures, term links). */
typedef struct {
    const char *name;
    const char *text;
} RuleText;

/* lesson_typed_numbers over texts that are not a lesson (an exercise's,
 * a glossary definition): the inputs are their figures' queries and
 * `queries` (an exercise's answer); each TypedNumber's where names its
 * text and pos is its place in that text. */
int text_typed_numbers(const RuleText *texts, size_t n_texts, const char *const *queries, size_t n_queries,
                       TypedNumber *out, size_t max, Error *e);

#endif
