/* cli.c - see cli.h. */
#include "cli.h"

#include "paths.h"
#include "units.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Options
 */

int opt_next(Args *a, const OptSpec *specs, size_t n, const char **value, Error *e)
{
    *value = NULL;
    if (a->i >= a->argc)
        return OPT_END;
    const char *arg = a->argv[a->i++];
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
        if (arg[0] == '-' && arg[1] != '\0' && strcmp(arg, "--") != 0 && !(arg[1] >= '0' && arg[1] <= '9'))
            return error_set(e, "unknown option '%s' (options start with --; see kvlab %s --help)",
                             arg, a->cmd), OPT_ERROR;
        *value = arg;
        return OPT_POSITIONAL;
    }
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    for (size_t k = 0; k < n; k++) {
        if (strlen(specs[k].name) != len || strncmp(specs[k].name, name, len) != 0)
            continue;
        if (!specs[k].arg) {
            if (eq)
                return error_set(e, "option --%s takes no value", specs[k].name), OPT_ERROR;
            return (int)k;
        }
        if (eq) {
            *value = eq + 1;
        } else if (a->i < a->argc) {
            *value = a->argv[a->i++];
        } else {
            return error_set(e, "option --%s needs a value (%s)", specs[k].name, specs[k].arg),
                   OPT_ERROR;
        }
        return (int)k;
    }
    return error_set(e, "unknown option '--%.*s' (see kvlab %s --help)", (int)len, name, a->cmd),
           OPT_ERROR;
}

int opt_gather(Args *a, const OptSpec *specs, size_t n, int repeat_opt, int max_words, Given *g,
               Error *e)
{
    memset(g, 0, sizeof *g);
    for (;;) {
        const char *v;
        int k = opt_next(a, specs, n, &v, e);
        if (k == OPT_END)
            return 0;
        if (k == OPT_ERROR)
            return -1;
        if (k == OPT_POSITIONAL) {
            if (g->n_words >= max_words || g->n_words >= OPT_WORDS_MAX)
                return error_set(e, "unexpected argument '%s' (see kvlab %s --help)", v, a->cmd);
            g->words[g->n_words++] = v;
            continue;
        }
        if (k == repeat_opt) {
            if (g->n_repeat == OPT_REPEAT_MAX)
                return error_set(e, "--%s: at most %d values", specs[k].name, OPT_REPEAT_MAX);
            g->repeat[g->n_repeat++] = v;
        } else if (g->set[k] && specs[k].arg) {
            /* the last one winning would hide a typo in the first */
            return error_set(e, "--%s is given twice ('%s' and '%s'); give it once", specs[k].name,
                             g->val[k], v);
        }
        g->val[k] = v;
        g->set[k] = true;
    }
}

void opt_usage(FILE *out, const char *synopsis, const OptSpec *specs, size_t n)
{
    fprintf(out, "%s\n\noptions:\n", synopsis);
    for (size_t k = 0; k < n; k++) {
        char left[128];
        snprintf(left, sizeof left, "--%s%s%s", specs[k].name, specs[k].arg ? " " : "",
                 specs[k].arg ? specs[k].arg : "");
        fprintf(out, "  %-24s  %s\n", left, specs[k].help);   // two blanks at least: where the value ends
    }
}

int cli_begin(const CmdSpec *c, int argc, char **argv, Given *g)
{
    Args a = {argc, argv, 0, c->name};
    Error e;
    if (opt_gather(&a, c->opts, c->n_opts, c->repeat_opt, c->max_words, g, &e))
        return cli_error(c->name, &e);
    if (g->set[c->help_opt]) {
        opt_usage(stdout, c->usage, c->opts, c->n_opts);
        if (c->more_help)
            c->more_help(stdout);
        return EXIT_OK;
    }
    int json = -1, csv = -1;                // one output form, where a command offers two
    for (size_t k = 0; k < c->n_opts; k++) {
        if (!strcmp(c->opts[k].name, "json"))
            json = (int)k;
        if (!strcmp(c->opts[k].name, "csv"))
            csv = (int)k;
    }
    if (json >= 0 && csv >= 0 && g->set[json] && g->set[csv]) {
        error_set(&e, "give --json or --csv, not both");
        return cli_fail(c->name, EXIT_USAGE, &e);
    }
    return CLI_GO_ON;
}

/* cli_parse_float, and whether strtof found the number beyond a float's
 * range (ERANGE with an infinity: 1e39, not "inf"). */
static bool parse_float(const char *s, float *out, bool *overflow)
{
    char buf[256];
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (!n || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    static locale_t c_locale;
    if (!c_locale)
        c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    locale_t old = uselocale(c_locale);
    char *end;
    errno = 0;
    *out = strtof(buf, &end);
    *overflow = errno == ERANGE && isinf(*out);
    uselocale(old);
    return end != buf && *end == '\0';
}

bool cli_parse_float(const char *s, float *out)
{
    bool overflow;
    return parse_float(s, out, &overflow);
}

/* Splits s at its commas and hands each entry to item (with its index);
 * refuses an empty entry, one too long for a number and more than max. */
static int split_list(const char *s, size_t max, size_t *n,
                      int (*item)(const char *tok, size_t i, void *ctx, Error *e), void *ctx, Error *e)
{
    *n = 0;
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char tok[256];
        if (len == 0)
            return error_set(e, "an empty entry in '%s'", s);
        if (len >= sizeof tok)
            return error_set(e, "'%.*s...' is too long for a number", 20, p);
        if (*n == max) {
            size_t all = 1;
            for (const char *c = s; (c = strchr(c, ',')); c++)
                all++;
            return error_set(e, "at most %zu values, not %zu", max, all);
        }
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (item(tok, (*n)++, ctx, e))
            return -1;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

int cli_parse_finite(const char *s, float *out, Error *e)
{
    bool overflow;
    if (!parse_float(s, out, &overflow))
        return error_set(e, "'%s' is not a number", s);
    if (overflow)           // a number beyond FLT_MAX, which strtof takes to infinity
        return error_set(e, "'%s' is beyond the range of a float (-%g to %g)", s, (double)FLT_MAX,
                         (double)FLT_MAX);
    if (!isfinite(*out))    // nan, inf, infinity
        return error_set(e, "'%s' is not a finite number", s);
    return 0;
}

typedef struct {
    const char *list;
    float *out;
} FloatList;

static int float_item(const char *tok, size_t i, void *ctx, Error *e)
{
    FloatList *f = ctx;
    Error one;
    if (cli_parse_finite(tok, &f->out[i], &one))
        return error_set(e, "%s (in '%s')", one.msg, f->list);
    return 0;
}

int cli_parse_floats(const char *s, float *out, size_t max, size_t *n, Error *e)
{
    FloatList f = {s, out};
    return split_list(s, max, n, float_item, &f, e);
}

typedef struct {
    uint64_t *out;
    int (*fn)(const char *, uint64_t *, Error *);
} U64List;

static int u64_item(const char *tok, size_t i, void *ctx, Error *e)
{
    U64List *u = ctx;
    if (u->fn(tok, &u->out[i], e))
        return -1;
    for (size_t j = 0; j < i; j++)      // a list is a set: a repeat is a slip
        if (u->out[j] == u->out[i])
            return error_set(e, "'%s' repeats %llu, listed already", tok, (unsigned long long)u->out[i]);
    return 0;
}

int cli_parse_u64s(const char *opt, const char *s, uint64_t *out, size_t max, size_t *n,
                   int (*fn)(const char *, uint64_t *, Error *), Error *e)
{
    U64List u = {out, fn};
    return split_list(s, max, n, u64_item, &u, e) ? error_prefix(e, "--%s", opt) : 0;
}

int cli_parse_batch(const char *s, uint64_t *v, Error *e)
{
    return units_parse_count(s, 1, CLI_BATCH_MAX, v, e);
}

int cli_parse_layer(const char *s, uint64_t *v, Error *e)
{
    return units_parse_count(s, 0, UINT32_MAX, v, e);
}

int cli_rules(const Given *g, const OptSpec *specs, const OptRule *rules, size_t n, const void *ctx, Error *e)
{
    for (size_t i = 0; i < n; i++)
        if (g->set[rules[i].opt] && !rules[i].holds(g, ctx))
            return error_set(e, "--%s %s", specs[rules[i].opt].name, rules[i].needs);
    return 0;
}

int cli_count(const Given *g, const OptSpec *specs, int k, uint64_t lo, uint64_t hi, uint64_t *out, Error *e)
{
    if (g->set[k] && units_parse_count(g->val[k], lo, hi, out, e))
        return error_prefix(e, "--%s", specs[k].name);
    return 0;
}

bool cli_shape_given(const Given *g, const ShapeOptions *so)
{
    for (int i = 0; i < SHAPE_FIELDS; i++)
        if (g->set[so->opt[i]])
            return true;
    return false;
}

int cli_shape(const Given *g, const OptSpec *specs, const ShapeOptions *so, Shape *out, Error *e)
{
    static const int NEEDED[] = {SHAPE_LAYERS, SHAPE_KV_HEADS, SHAPE_HEAD_DIM};
    for (size_t i = 0; i < sizeof NEEDED / sizeof NEEDED[0]; i++)
        if (!g->set[so->opt[NEEDED[i]]])
            return error_set(e, "a typed shape needs --%s, --%s and --%s (missing --%s)",
                             specs[so->opt[SHAPE_LAYERS]].name, specs[so->opt[SHAPE_KV_HEADS]].name,
                             specs[so->opt[SHAPE_HEAD_DIM]].name, specs[so->opt[NEEDED[i]]].name);
    uint64_t v[SHAPE_FIELDS];
    for (int i = 0; i < SHAPE_FIELDS; i++) {
        int k = so->opt[i];
        if (i == SHAPE_Q_HEADS)
            v[i] = v[SHAPE_KV_HEADS];           // as many as KV heads where not given
        if (cli_count(g, specs, k, 1, so->max[i], &v[i], e))
            return -1;
    }
    if (shape_init(out, v[SHAPE_LAYERS], v[SHAPE_Q_HEADS], v[SHAPE_KV_HEADS], v[SHAPE_HEAD_DIM], e))
        return error_prefix(e, "--%s", specs[so->opt[SHAPE_Q_HEADS]].name);
    return 0;
}

int cli_fail(const char *cmd, int code, const Error *e)
{
    fprintf(stderr, "kvlab%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    text_put(stderr, e->msg, false);
    fputc('\n', stderr);
    return code;
}

int cli_error(const char *cmd, const Error *e)
{
    return cli_fail(cmd, e->runtime ? EXIT_RUNTIME : EXIT_USAGE, e);
}

const char *cli_datadir(void)
{
    const char *dir = paths_find(PATH_DATA);
    return dir ? dir : paths_installed(PATH_DATA);     // not there: named in the errors
}

/* ------------------------------------------------------------------------
 * Text for a terminal
 */

/* The length of the UTF-8 character at s, or 0 when s does not start one
 * (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF,
 * or a sequence cut short). */
static size_t utf8_length(const unsigned char *s)
{
    static const struct { unsigned char lo, hi, lo2, hi2; size_t len; } LEAD[] = {
        {0xC2, 0xDF, 0x80, 0xBF, 2}, {0xE0, 0xE0, 0xA0, 0xBF, 3}, {0xE1, 0xEC, 0x80, 0xBF, 3},
        {0xED, 0xED, 0x80, 0x9F, 3}, {0xEE, 0xEF, 0x80, 0xBF, 3}, {0xF0, 0xF0, 0x90, 0xBF, 4},
        {0xF1, 0xF3, 0x80, 0xBF, 4}, {0xF4, 0xF4, 0x80, 0x8F, 4},
    };
    if (s[0] < 0x80)
        return 1;
    for (size_t i = 0; i < sizeof LEAD / sizeof LEAD[0]; i++) {
        if (s[0] < LEAD[i].lo || s[0] > LEAD[i].hi)
            continue;
        if (s[1] < LEAD[i].lo2 || s[1] > LEAD[i].hi2)
            return 0;
        for (size_t k = 2; k < LEAD[i].len; k++)
            if ((s[k] & 0xC0) != 0x80)
                return 0;
        return LEAD[i].len;
    }
    return 0;
}

/* The next character of *s as it may be shown: itself, or an escape for a
 * control character (C0, DEL, C1) or a byte that is not UTF-8. Writes it
 * to out (at most 7 bytes and a NUL), advances *s and returns its length. */
static size_t escape_next(const char **s, char out[8], bool keep_newlines)
{
    static const char NAMED[][3] = {['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t", [27] = "\\e"};
    const unsigned char *p = (const unsigned char *)*s;
    size_t len = utf8_length(p);
    if (len == 1 && (p[0] >= 0x20 && p[0] != 0x7F)) {
        out[0] = (char)p[0];
        out[1] = '\0';
    } else if (len == 1 && p[0] == '\n' && keep_newlines) {
        strcpy(out, "\n");
    } else if (len == 1 && p[0] < sizeof NAMED / sizeof NAMED[0] && NAMED[p[0]][0]) {
        strcpy(out, NAMED[p[0]]);
    } else if (len == 2 && p[0] == 0xC2 && p[1] < 0xA0) {        // C1: U+0080 to U+009F
        snprintf(out, 8, "\\u%04x", p[1]);
    } else if (len == 0 || len == 1) {
        snprintf(out, 8, "\\x%02x", p[0]);
        len = 1;
    } else {
        memcpy(out, p, len);
        out[len] = '\0';
    }
    *s += len;
    return strlen(out);
}

char *text_escape(char *dst, size_t n, const char *src, bool keep_newlines)
{
    size_t used = 0;
    char one[8];
    while (*src && n) {
        size_t k = escape_next(&src, one, keep_newlines);
        if (used + k >= n)
            break;
        memcpy(dst + used, one, k);
        used += k;
    }
    if (n)
        dst[used] = '\0';
    return dst;
}

bool text_safe(const char *s)
{
    char one[8];
    while (*s) {
        const char *at = s;
        size_t k = escape_next(&s, one, false);
        if (k != (size_t)(s - at) || memcmp(one, at, k) != 0)
            return false;
    }
    return true;
}

void text_put(FILE *out, const char *s, bool keep_newlines)
{
    char one[8];
    while (*s) {
        escape_next(&s, one, keep_newlines);
        fputs(one, out);
    }
}

/* ------------------------------------------------------------------------
 * Tables
 */

/* Text beyond what a Table holds itself: chunks on the heap, newest first. */
struct TableChunk {
    TableChunk *next;
    size_t size, used;
    char text[];
};

#define TABLE_CHUNK 65536

void table_init(Table *t, size_t cols)
{
    t->cols = cols < TABLE_COLS ? cols : TABLE_COLS;
    t->rows = t->col = t->used = t->more_cap = 0;
    t->lost = false;
    t->more = NULL;
    t->chunks = NULL;
}

void table_free(Table *t)
{
    while (t->chunks) {
        TableChunk *c = t->chunks;
        t->chunks = c->next;
        free(c);
    }
    free(t->more);
    table_init(t, t->cols);
}

int table_check(const Table *t, Error *e)
{
    return t->lost ? error_runtime(e, "out of memory for a table of %zu rows", t->rows) : 0;
}

/* Row r's cells, in the table or past it on the heap. */
static char **row_cells(const Table *t, size_t r)
{
    return r < TABLE_ROWS ? (char **)t->cell[r] : t->more[r - TABLE_ROWS];
}

const char *table_at(const Table *t, size_t r, size_t c)
{
    return row_cells(t, r)[c];
}

void table_header(Table *t, const char *name, ...)
{
    table_init(t, TABLE_COLS);
    table_row(t);
    va_list ap;
    va_start(ap, name);
    for (; name; name = va_arg(ap, const char *))
        table_cell(t, "%s", name);
    va_end(ap);
    t->cols = t->col;
}

void table_row(Table *t)
{
    t->col = 0;
    if (t->rows >= TABLE_ROWS && t->rows - TABLE_ROWS == t->more_cap) {   // twice the rows past, on the heap
        size_t cap = t->more_cap ? 2 * t->more_cap : TABLE_ROWS;
        char *(*more)[TABLE_COLS] = realloc(t->more, cap * sizeof *more);
        if (!more) {
            t->lost = true;
            t->col = t->cols;           // the row's cells go nowhere
            return;
        }
        t->more = more;
        t->more_cap = cap;
    }
    static char empty[] = "";
    char **row = row_cells(t, t->rows++);
    for (size_t c = 0; c < TABLE_COLS; c++)
        row[c] = empty;
}

/* n bytes for a cell's text: in the table while it has room, else in a
 * chunk; NULL when out of memory. */
static char *table_text(Table *t, size_t n)
{
    if (t->used + n <= TABLE_TEXT) {
        t->used += n;
        return t->text + t->used - n;
    }
    TableChunk *c = t->chunks;
    if (!c || c->size - c->used < n) {
        size_t size = n > TABLE_CHUNK ? n : TABLE_CHUNK;
        if (!(c = malloc(sizeof *c + size)))
            return NULL;
        *c = (TableChunk){t->chunks, size, 0};
        t->chunks = c;
    }
    c->used += n;
    return c->text + c->used - n;
}

/* The bytes text_escape writes for s, its NUL included. */
static size_t escaped_size(const char *s)
{
    size_t n = 1;
    char one[8];
    while (*s)
        n += escape_next(&s, one, false);
    return n;
}

void table_cell(Table *t, const char *fmt, ...)
{
    if (!t->rows || t->col >= t->cols)
        return;
    char small[256], *raw = small;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    if (len >= (int)sizeof small && (raw = malloc((size_t)len + 1)))
        vsnprintf(raw, (size_t)len + 1, fmt, again);
    va_end(again);
    va_end(ap);
    size_t n = raw ? escaped_size(raw) : 0;
    char *dst = raw ? table_text(t, n) : NULL;
    if (dst)
        row_cells(t, t->rows - 1)[t->col] = text_escape(dst, n, raw, false);
    else
        t->lost = true;
    t->col++;
    if (raw != small)
        free(raw);
}

size_t text_columns(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

const char *cell_text(const char *s)
{
    return *s == '!' || *s == '~' || *s == '+' ? s + 1 : s;
}

size_t cell_columns(const char *s)
{
    return text_columns(cell_text(s));
}

/* A column of numbers reads best right-aligned, a column of words left. */
static bool numeric_column(const Table *t, size_t c)
{
    for (size_t r = 1; r < t->rows; r++) {
        const char *s = table_at(t, r, c);
        if ((*s == '-' || *s == '+') && s[1] >= '0' && s[1] <= '9')
            s++;
        if (!(*s >= '0' && *s <= '9') && strcmp(s, "-") != 0 && strcmp(s, "never") != 0 && *s)
            return false;
    }
    return true;
}

void table_print(const Table *t, FILE *out)
{
    size_t width[TABLE_COLS] = {0};
    bool right[TABLE_COLS] = {0};
    for (size_t c = 0; c < t->cols; c++)
        right[c] = c > 0 && numeric_column(t, c);
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            size_t w = text_columns(table_at(t, r, c));
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r < t->rows; r++) {
        size_t blanks = 0;                      // written before the next text, so none trail
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = table_at(t, r, c);
            size_t pad = width[c] - text_columns(s);
            blanks += (c ? 2 : 0) + (right[c] ? pad : 0);
            if (*s) {
                fprintf(out, "%*s%s", (int)blanks, "", s);
                blanks = 0;
            }
            blanks += right[c] ? 0 : pad;
        }
        fputc('\n', out);
        if (r == 0) {
            size_t total = 0;
            for (size_t c = 0; c < t->cols; c++)
                total += width[c] + (c ? 2 : 0);
            for (size_t k = 0; k < total; k++)
                fputc('-', out);
            fputc('\n', out);
        }
    }
}

int table_width(const Table *t)
{
    int total = 0;
    for (size_t c = 0; c < t->cols; c++) {
        size_t w = 0;
        for (size_t r = 0; r < t->rows; r++)
            if (cell_columns(table_at(t, r, c)) > w)
                w = cell_columns(table_at(t, r, c));
        total += (int)w + (c ? 2 : 0);
    }
    return total;
}

bool table_drop_column(Table *t, const char *name)
{
    for (size_t c = 0; c < t->cols; c++)
        if (t->rows && strcmp(table_at(t, 0, c), name) == 0) {
            for (size_t r = 0; r < t->rows; r++) {
                char **row = row_cells(t, r);
                memmove(&row[c], &row[c + 1], (t->cols - c - 1) * sizeof row[c]);
            }
            t->cols--;
            return true;
        }
    return false;
}

void table_csv(const Table *t, FILE *out)
{
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = table_at(t, r, c);
            bool quote = strpbrk(s, ",\"\n") != NULL;
            if (quote) {
                fputc('"', out);
                for (; *s; s++) {
                    if (*s == '"')
                        fputc('"', out);
                    fputc(*s, out);
                }
                fputc('"', out);
            } else {
                fputs(s, out);
            }
            fputc(c + 1 < t->cols ? ',' : '\n', out);
        }
}

/* ------------------------------------------------------------------------
 * JSON
 */

void json_add_u128(cJSON *obj, const char *name, u128 v)
{
    char buf[64];
    cJSON_AddItemToObject(obj, name, cJSON_CreateRaw(u128_str(buf, sizeof buf, v, false)));
}

void json_add_q(cJSON *obj, const char *name, Q q)
{
    cJSON_AddNumberToObject(obj, name, q_to_double(q));
}

/* JSON text as cJSON printed it, with what a terminal must not get raw
 * escaped too (cJSON escapes only the C0 controls): DEL and the C1 controls
 * (U+0080 to U+009F) as \u007f ... \u009f, the same characters; a byte that
 * is not UTF-8 as \ufffd, the replacement character, as JSON text must be
 * UTF-8. Outside its strings JSON is ASCII, so every such byte is in one. */
static void json_put(const char *s, FILE *out)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t len = utf8_length(p);
        if (len == 1 && *p == 0x7F)
            fputs("\\u007f", out);
        else if (len == 2 && p[0] == 0xC2 && p[1] < 0xA0)
            fprintf(out, "\\u%04x", p[1]);
        else if (len == 0)
            fputs("\\ufffd", out);
        else
            fwrite(p, 1, len, out);
        p += len ? len : 1;
    }
    fputc('\n', out);
}

int json_emit(cJSON *root, Error *e)
{
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s)
        return error_runtime(e, "out of memory printing JSON");
    json_put(s, stdout);
    cJSON_free(s);
    return 0;               // write errors are caught once, in main
}
