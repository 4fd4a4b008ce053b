/* cli.h - what every command-line subcommand shares: exit codes, option
 * parsing, the data directory, aligned tables and exact JSON numbers. */
#ifndef KVLAB_CLI_H
#define KVLAB_CLI_H

#include "checked.h"
#include "error.h"
#include "model.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit codes, as DESIGN.md fixes them. */
enum {
    EXIT_OK = 0,        // success
    EXIT_NO = 1,        // a check ran and said no
    EXIT_USAGE = 2,     // bad usage or bad input
    EXIT_RUNTIME = 3,   // a run-time failure
};

/* ------------------------------------------------------------------------
 * Options: a table of OptSpec per subcommand, walked by opt_next.
 */
typedef struct {
    const char *name;   // "context" for --context
    const char *arg;    // "S" when the option takes a value; NULL for a flag
    const char *help;
} OptSpec;

typedef struct {
    int argc;
    char **argv;
    int i;              // next argument to read
    const char *cmd;    // "calc", for messages
} Args;

enum { OPT_END = -1, OPT_ERROR = -2, OPT_POSITIONAL = -3 };

/* Returns the index of the next option in specs and its value (NULL for a
 * flag), OPT_POSITIONAL with the word in *value, OPT_END, or OPT_ERROR with
 * a message naming the argument. Accepts --name value and --name=value. */
int opt_next(Args *a, const OptSpec *specs, size_t n, const char **value, Error *e);
void opt_usage(FILE *out, const char *synopsis, const OptSpec *specs, size_t n);

/* All options of a command line, gathered in one pass: the value of each
 * option (one that takes a value and is given twice is refused), every
 * value of one repeatable option, and the words that are not options (at
 * most max_words of them). */
#define OPT_MAX 32
#define OPT_REPEAT_MAX 16
#define OPT_WORDS_MAX 4
typedef struct {
    const char *val[OPT_MAX];
    bool set[OPT_MAX];
    size_t n_repeat;
    const char *repeat[OPT_REPEAT_MAX];
    int n_words;
    const char *words[OPT_WORDS_MAX];
} Given;

/* repeat_opt: index of the repeatable option, or -1. */
int opt_gather(Args *a, const OptSpec *specs, size_t n, int repeat_opt, int max_words, Given *g,
               Error *e);

/* A subcommand's command line: its name, its help and its options; one
 * filled-in table per cli_*.c. */
typedef struct {
    const char *name;           // "calc", for messages
    const char *usage;          // the synopsis and what the command does, for --help
    const OptSpec *opts;
    size_t n_opts;
    int help_opt;               // index of --help in opts
    int repeat_opt;             // index of the repeatable option, or -1
    int max_words;              // words that are not options, at most
    void (*more_help)(FILE *out);   // printed after the options by --help; may be NULL
} CmdSpec;

enum { CLI_GO_ON = -1 };

/* What every subcommand does first: gathers its options into g and answers
 * --help. Returns CLI_GO_ON, or the exit code to return at once: EXIT_USAGE
 * after printing the error, EXIT_OK after printing the help. */
int cli_begin(const CmdSpec *c, int argc, char **argv, Given *g);

/* A float in decimal or C hex-float notation, "nan" or "inf", read in the
 * C locale whatever the user's; the whole text (bar surrounding blanks)
 * must be the number. */
bool cli_parse_float(const char *s, float *out);
/* cli_parse_float for a value kvlab computes with: nan, inf and numbers
 * beyond a float's range (1e39) are refused, each saying so. */
int cli_parse_finite(const char *s, float *out, Error *e);
/* A comma-separated list of finite floats (cli_parse_finite), at most max;
 * an empty entry is an error. */
int cli_parse_floats(const char *s, float *out, size_t max, size_t *n, Error *e);

/* A comma-separated list of at most max whole numbers, each read by fn
 * (which says what is wrong with one); an empty entry or a value listed
 * twice is an error, and every error begins "--opt: ". */
int cli_parse_u64s(const char *opt, const char *s, uint64_t *out, size_t max, size_t *n,
                   int (*fn)(const char *, uint64_t *, Error *), Error *e);
/* The entries of bench --batch (sequences, 1 to CLI_BATCH_MAX) and of calc
 * --bf16-layers (layer indices, 0 to 2^32 - 1), for cli_parse_u64s. */
#define CLI_BATCH_MAX 4096
int cli_parse_batch(const char *s, uint64_t *v, Error *e);
int cli_parse_layer(const char *s, uint64_t *v, Error *e);

/* An option that means something only with others: where holds() is
 * false it would change nothing, and cli_rules refuses it with "--opt " +
 * needs. ctx is the command's own setup. */
typedef struct {
    int opt;
    bool (*holds)(const Given *g, const void *ctx);
    const char *needs;
} OptRule;
int cli_rules(const Given *g, const OptSpec *specs, const OptRule *rules, size_t n, const void *ctx, Error *e);

/* Option k's value as a whole number from lo to hi, where it is given
 * (*out untouched where not); an error begins "--opt: ". */
int cli_count(const Given *g, const OptSpec *specs, int k, uint64_t lo, uint64_t hi, uint64_t *out, Error *e);

/* A shape typed as options, as calc and bench both take it: the options'
 * indices in the command's OptSpec and the largest value of each. */
enum { SHAPE_LAYERS, SHAPE_KV_HEADS, SHAPE_Q_HEADS, SHAPE_HEAD_DIM, SHAPE_FIELDS };
typedef struct {
    int opt[SHAPE_FIELDS];
    uint64_t max[SHAPE_FIELDS];
} ShapeOptions;

/* Whether any of the shape's options is given. */
bool cli_shape_given(const Given *g, const ShapeOptions *so);
/* The typed shape: layers, KV heads and head dimension are all needed,
 * query heads default to the KV heads; every error names its option. */
int cli_shape(const Given *g, const OptSpec *specs, const ShapeOptions *so, Shape *out, Error *e);

/* Prints "kvlab CMD: message" on stderr (cmd may be NULL), the message
 * through text_put, and returns code. */
int cli_fail(const char *cmd, int code, const Error *e);
/* cli_fail with the code the error's kind gives: EXIT_RUNTIME where the
 * machine failed (e->runtime), EXIT_USAGE where the input was wrong. */
int cli_error(const char *cmd, const Error *e);

/* ------------------------------------------------------------------------
 * Text that reaches a terminal: arguments and data files may hold control
 * characters (a newline in a title, ESC sequences that retitle the window
 * or move the cursor). Every message, table cell and text output goes
 * through this one escaping: C0 and C1 control characters and DEL become
 * visible escapes (\n, \t, \r, \e, \x07, \u009b), as do bytes that are
 * not UTF-8 (\xff); everything else is kept. keep_newlines keeps '\n' in
 * text of several lines (a scenario's story). JSON output escapes by
 * itself.
 */
/* Into dst (n bytes, NUL included), cut at a character or escape boundary
 * when it does not fit; returns dst. */
char *text_escape(char *dst, size_t n, const char *src, bool keep_newlines);
/* The same, written to out whatever its length. */
void text_put(FILE *out, const char *s, bool keep_newlines);
/* Whether s is as text_escape leaves it (no newline kept): nothing in it
 * to escape. */
bool text_safe(const char *s);

/* Where scenarios/ lives: $KVLAB_DATA, else the first place paths.h lists
 * that is there, else the place under PREFIX (named in the errors). */
const char *cli_datadir(void);

/* ------------------------------------------------------------------------
 * Aligned text tables: add cells row by row, then print. A table holds any
 * number of rows and cells of any length. What the lab's tables need (at
 * most TABLE_ROWS rows and TABLE_TEXT bytes of text: the formats, a
 * scenario's figures with their longest labels escaped) it keeps in itself,
 * so that a table in a screen's state or a static, rebuilt again and again,
 * allocates nothing, and a copy of it (made to drop a column from) is a
 * table of its own that reads the same text. Beyond that it grows on the
 * heap, which table_free gives back: the command line's tables, whose rows
 * come from the data, end with it. The lab reads its cells as t->cell;
 * rows past TABLE_ROWS are read with table_at.
 */
#define TABLE_COLS 16
#define TABLE_ROWS 64
#define TABLE_TEXT 65536
/* A buffer for one cell's text, formatted before table_cell (a figure's
 * value): cells themselves have no limit. */
#define TABLE_CELL 80

typedef struct TableChunk TableChunk;

typedef struct {
    size_t cols, rows;
    size_t col;                         // next cell of the current row
    bool lost;                          // a row or cell could not be stored: out of memory
    char *cell[TABLE_ROWS][TABLE_COLS]; // the first TABLE_ROWS rows: each cell's text
    char *(*more)[TABLE_COLS];          // (more_cap, cols) the rows past them, on the heap
    size_t more_cap;
    size_t used;                        // bytes of `text` taken
    char text[TABLE_TEXT];              // the cells' text, while it fits
    TableChunk *chunks;                 // the text beyond, on the heap
} Table;

/* Starts t empty, whatever its memory held (a table that grew onto the
 * heap is table_free'd first). */
void table_init(Table *t, size_t cols);
/* table_init with a header row: the column names, then NULL; as many
 * columns as names. */
void table_header(Table *t, const char *name, ...) __attribute__((sentinel));
/* Starts a row; then table_cell per column. */
void table_row(Table *t);
/* The cell's text goes through text_escape. */
void table_cell(Table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Cell (r, c)'s text, for every row. */
const char *table_at(const Table *t, size_t r, size_t c);
/* Numeric columns right-aligned, words left-aligned, a rule under row 0. */
void table_print(const Table *t, FILE *out);
void table_csv(const Table *t, FILE *out);
/* 0, or -1 with a run-time error when a row or cell could not be stored
 * (out of memory): for a command to check before it prints. */
int table_check(const Table *t, Error *e);
/* Gives back what t took from the heap; t is then empty. */
void table_free(Table *t);
/* Terminal columns of a UTF-8 string (every glyph kvlab uses is one
 * column wide). */
size_t text_columns(const char *s);
/* A lab table cell without its leading colour marker ('!', '~', '+',
 * widget.h), which is not shown. */
const char *cell_text(const char *s);
/* Columns of a lab table cell as shown. */
size_t cell_columns(const char *s);

/* Columns a table needs in the lab: cell_columns, two spaces between. */
int table_width(const Table *t);
/* Removes the column whose header is `name`; false if there is none. */
bool table_drop_column(Table *t, const char *name);

/* ------------------------------------------------------------------------
 * JSON helpers: integers are written exactly (as raw text), fractions as
 * doubles.
 */
void json_add_u128(cJSON *obj, const char *name, u128 v);
void json_add_q(cJSON *obj, const char *name, Q q);
/* Prints the object on stdout with a newline and frees it; -1 with a
 * run-time error where it cannot be printed (out of memory). */
int json_emit(cJSON *root, Error *e);

#endif
