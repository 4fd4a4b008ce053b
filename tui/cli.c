/* cli.c - see cli.h. */
#include "cli.h"

#include "paths.h"

#include <locale.h>
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
            if (g->n_words >= max_words || g->n_words >= 4)
                return error_set(e, "unexpected argument '%s' (see kvlab %s --help)", v, a->cmd);
            g->words[g->n_words++] = v;
            continue;
        }
        if (k == repeat_opt) {
            if (g->n_repeat == OPT_REPEAT_MAX)
                return error_set(e, "--%s: at most %d values", specs[k].name, OPT_REPEAT_MAX);
            g->repeat[g->n_repeat++] = v;
        }
        g->val[k] = v;
        g->set[k] = true;
    }
}

void opt_usage(FILE *out, const char *synopsis, const OptSpec *specs, size_t n)
{
    fprintf(out, "%s\n\noptions:\n", synopsis);
    for (size_t k = 0; k < n; k++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", specs[k].name, specs[k].arg ? " " : "",
                 specs[k].arg ? specs[k].arg : "");
        fprintf(out, "  %-24s %s\n", left, specs[k].help);
    }
}

int cli_begin(const CmdSpec *c, int argc, char **argv, Given *g)
{
    Args a = {argc, argv, 0, c->name};
    Error e;
    if (opt_gather(&a, c->opts, c->n_opts, c->repeat_opt, c->max_words, g, &e))
        return cli_fail(c->name, EXIT_USAGE, &e);
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

bool cli_parse_float(const char *s, float *out)
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
    *out = strtof(buf, &end);
    uselocale(old);
    return end != buf && *end == '\0';
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

typedef struct {
    const char *list;
    float *out;
} FloatList;

static int float_item(const char *tok, size_t i, void *ctx, Error *e)
{
    FloatList *f = ctx;
    return cli_parse_float(tok, &f->out[i]) ? 0 : error_set(e, "'%s' is not a number (in '%s')", tok, f->list);
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
    return u->fn(tok, &u->out[i], e);
}

int cli_parse_u64s(const char *opt, const char *s, uint64_t *out, size_t max, size_t *n,
                   int (*fn)(const char *, uint64_t *, Error *), Error *e)
{
    U64List u = {out, fn};
    return split_list(s, max, n, u64_item, &u, e) ? error_prefix(e, "--%s", opt) : 0;
}

int cli_fail(const char *cmd, int code, const Error *e)
{
    fprintf(stderr, "kvlab%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", e->msg);
    return code;
}

const char *cli_datadir(void)
{
    const char *dir = paths_find(PATH_DATA);
    return dir ? dir : KVLAB_PREFIX "/" KVLAB_DATADIR;     // not there: named in the errors
}

/* ------------------------------------------------------------------------
 * Tables
 */

void table_init(Table *t, size_t cols)
{
    t->cols = cols < TABLE_COLS ? cols : TABLE_COLS;
    t->rows = 0;
    t->col = 0;
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
    if (t->rows < TABLE_ROWS) {
        t->rows++;
        memset(t->cell[t->rows - 1], 0, sizeof t->cell[0]);
    }
    t->col = 0;
}

void table_cell(Table *t, const char *fmt, ...)
{
    if (!t->rows || t->col >= t->cols)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->cell[t->rows - 1][t->col++], TABLE_CELL, fmt, ap);
    va_end(ap);
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
        const char *s = t->cell[r][c];
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
            size_t w = text_columns(t->cell[r][c]);
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r < t->rows; r++) {
        char line[TABLE_COLS * (TABLE_CELL + 2) * 2];
        size_t len = 0;
        for (size_t c = 0; c < t->cols; c++) {
            size_t pad = width[c] - text_columns(t->cell[r][c]);
            const char *sep = c ? "  " : "";
            if (right[c])
                len += (size_t)snprintf(line + len, sizeof line - len, "%s%*s%s", sep, (int)pad, "",
                                        t->cell[r][c]);
            else
                len += (size_t)snprintf(line + len, sizeof line - len, "%s%s%*s", sep,
                                        t->cell[r][c], (int)pad, "");
            if (len >= sizeof line)
                len = sizeof line - 1;
        }
        while (len && line[len - 1] == ' ')     // no trailing blanks
            len--;
        fprintf(out, "%.*s\n", (int)len, line);
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
            if (cell_columns(t->cell[r][c]) > w)
                w = cell_columns(t->cell[r][c]);
        total += (int)w + (c ? 2 : 0);
    }
    return total;
}

bool table_drop_column(Table *t, const char *name)
{
    for (size_t c = 0; c < t->cols; c++)
        if (t->rows && strcmp(t->cell[0][c], name) == 0) {
            for (size_t r = 0; r < t->rows; r++)
                memmove(t->cell[r][c], t->cell[r][c + 1], (t->cols - c - 1) * sizeof t->cell[r][c]);
            t->cols--;
            return true;
        }
    return false;
}

void table_csv(const Table *t, FILE *out)
{
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = t->cell[r][c];
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

int json_emit(cJSON *root)
{
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) {
        fprintf(stderr, "kvlab: out of memory printing JSON\n");
        return EXIT_RUNTIME;
    }
    puts(s);
    cJSON_free(s);
    return EXIT_OK;         // write errors are caught once, in main
}
