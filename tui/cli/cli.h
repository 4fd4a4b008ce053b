/* cli.h - what every command-line subcommand shares: exit codes, option
 * parsing and messages; and, from the front ends' common room, the output
 * they print: aligned tables, escaped text and exact JSON numbers. */
#ifndef KVLAB_CLI_H
#define KVLAB_CLI_H

#include "checked.h"
#include "error.h"
#include "model.h"
#include "tui/jsonout.h"
#include "tui/table.h"
#include "tui/text.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit codes, as DESIGN.md's command-line contract fixes them. */
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
    bool words_only;    // past "--": every argument is a word
} Args;

enum { OPT_END = -1, OPT_ERROR = -2, OPT_POSITIONAL = -3 };

/* Returns the index of the next option in specs and its value (NULL for a
 * flag), OPT_POSITIONAL with the word in *value, OPT_END, or OPT_ERROR with
 * a message naming the argument. Accepts --name value and --name=value;
 * after "--" every argument is a word ("-20" too). */
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

/* " (default X)", X a constant's value, for a help text that quotes a
 * default: "generator seed" CLI_DEFAULT(KVGEN_SEED_DEFAULT). */
#define CLI_DEFAULT(x) " (default " TEXT_OF(x) ")"

enum { CLI_GO_ON = -1 };

/* What every subcommand does first: gathers its options into g and answers
 * --help. Returns CLI_GO_ON, or the exit code to return at once: EXIT_USAGE
 * after printing the error, EXIT_OK after printing the help. */
int cli_begin(const CmdSpec *c, int argc, char **argv, Given *g);

/* A comma-separated list of finite floats (units_parse_finite), at most max;
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

#endif
