/* cli.c - see cli.h. */
#include "cli.h"

#include "units.h"

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
    if (!a->words_only && !strcmp(arg, "--")) {
        a->words_only = true;
        return opt_next(a, specs, n, value, e);
    }
    if (a->words_only || strncmp(arg, "--", 2) != 0) {
        if (!a->words_only && arg[0] == '-' && arg[1] != '\0' && !(arg[1] >= '0' && arg[1] <= '9'))
            return error_set(e, "unknown option '%s' (options start with --; a word that begins with - goes "
                                "after --; see kvlab %s --help)",
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
    Args a = {argc, argv, 0, c->name, false};
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

typedef struct {
    const char *list;
    float *out;
} FloatList;

static int cli_float_item(const char *tok, size_t i, void *ctx, Error *e)
{
    FloatList *f = ctx;
    Error one;
    if (units_parse_finite(tok, &f->out[i], &one))
        return error_set(e, "%s (in '%s')", one.msg, f->list);
    return 0;
}

int cli_parse_floats(const char *s, float *out, size_t max, size_t *n, Error *e)
{
    FloatList f = {s, out};
    return units_split_list(s, max, n, cli_float_item, &f, e);
}

int cli_parse_u64s(const char *opt, const char *s, uint64_t *out, size_t max, size_t *n,
                   int (*fn)(const char *, uint64_t *, Error *), Error *e)
{
    return units_parse_u64s(s, out, max, n, fn, e) ? error_prefix(e, "--%s", opt) : 0;
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
