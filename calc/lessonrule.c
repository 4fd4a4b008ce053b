/* lessonrule.c - the typed-number rule of lesson.h (lessons/FORMAT.md,
 * "The typed-number rule"): no number typed in a lesson's prose is one
 * that calc computes for the inputs the lesson uses.
 *
 * The figures calc computes: for each set of inputs the lesson uses (its
 * header's scenario, and every figure's query without its --format),
 * every metric of every format, in every unit of the metric's family.
 * That is a few thousand values, computed once per check: each input
 * set's workload is set up once (files read), then every metric of every
 * format is worked out on it.
 *
 * The inputs themselves are kept beside them (the model's shape, the
 * context, batch, pool, weights, the GPU's memory and bandwidth, the
 * formats' own widths and groups ...): a typed number that is one of them,
 * in any unit, states an input, not a figure. */
#include "lesson.h"

#include "format.h"
#include "query.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------------
 * The figures.
 */
typedef struct {
    double value;               // in unit
    Q exact;                    // the same, exact: rounded as calc rounds it
    const QueryUnit *unit;
    short input;                // which input set
    const Metric *metric;       // NULL: an input, not a figure
    const Format *format;
} Computed;

#define INPUTS_MAX 64

typedef struct {
    Computed *c;                // the figures, then the inputs' values
    size_t n, cap;
    size_t n_inputs;
    Query inputs[INPUTS_MAX];   // metric and unit unused: the options alone
    size_t n_formats;
    const Format *formats[QUERY_FORMATS_MAX * 4]; // the formats the queries name
} Figures;

static int rule_add(Figures *f, const Computed *c, Error *e)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 1024;
        Computed *p = realloc(f->c, cap * sizeof *p);
        if (!p)
            return error_runtime(e, "out of memory");
        f->c = p, f->cap = cap;
    }
    f->c[f->n++] = *c;
    return 0;
}

/* A format a query names, once. */
static void rule_format(Figures *f, const char *id)
{
    const Format *fm = format_by_id(id);
    for (size_t i = 0; fm && i < f->n_formats; i++)
        if (f->formats[i] == fm)
            return;
    if (fm && f->n_formats < sizeof f->formats / sizeof f->formats[0])
        f->formats[f->n_formats++] = fm;
}

/* The query's options without --format, once per distinct set. */
static void rule_input(Figures *f, const Query *q)
{
    Query in = {.metric = q->metric, .unit = q->unit, .digits = -1};
    for (size_t i = 0; i < q->n_words; i++) {
        if (strcmp(q->words[i], "--format") == 0) {
            if (i + 1 < q->n_words)
                rule_format(f, q->words[i + 1]);
            i++;
            continue;
        }
        if (strncmp(q->words[i], "--format=", 9) == 0) {
            rule_format(f, q->words[i] + 9);
            continue;
        }
        memcpy(in.words[in.n_words++], q->words[i], sizeof q->words[i]);
    }
    for (size_t i = 0; i < f->n_inputs; i++) {
        const Query *o = &f->inputs[i];
        bool same = o->n_words == in.n_words;
        for (size_t k = 0; same && k < in.n_words; k++)
            same = strcmp(o->words[k], in.words[k]) == 0;
        if (same)
            return;
    }
    if (f->n_inputs < INPUTS_MAX)
        f->inputs[f->n_inputs++] = in;
}

/* Value v (a count "", a size "B", a ratio "x") of input set i, in every
 * unit of its family. */
static int rule_value(Figures *f, size_t i, Q v, const char *unit, Error *e)
{
    const QueryUnit *from = query_unit_by_name(unit);
    Error ignored;
    for (size_t ui = 0; v.num && ui < query_unit_count(); ui++) {
        const QueryUnit *u = query_unit_at(ui);
        Q x;
        if (query_unit_family(u) != query_unit_family(from) || query_convert(v, from, u, &x, &ignored))
            continue;
        Computed c = {q_to_double(x), x, u, (short)i, NULL, NULL};
        if (rule_add(f, &c, e))
            return -1;
    }
    return 0;
}

/* What input set i is worked out on: the numbers of the workload the
 * options make, whether typed in the query or read from the scenario,
 * model and GPU files it names. */
static int rule_workload_inputs(Figures *f, size_t i, const QuerySetup *s, Error *e)
{
    const Workload *w = &s->w;
    const uint64_t counts[] = {w->shape.layers, w->shape.q_heads, w->shape.kv_heads, w->shape.head_dim,
                               w->shape.window, w->context, w->batch, w->tp, w->block_tokens, w->kv.residual};
    const u128 sizes[] = {w->pool, w->weights, w->bandwidth, s->has_gpu ? s->gpu.memory : 0};
    int r = rule_value(f, i, s->utilization, "x", e);
    for (size_t k = 0; !r && k < sizeof counts / sizeof counts[0]; k++)
        r = rule_value(f, i, q_make(counts[k], 1), "", e);
    for (size_t k = 0; !r && k < w->kv.n_bf16_layers; k++)
        r = rule_value(f, i, q_make(w->kv.bf16_layers[k], 1), "", e);
    for (size_t k = 0; !r && k < sizeof sizes / sizeof sizes[0]; k++)
        r = rule_value(f, i, q_make(sizes[k], 1), "B", e);
    return r;
}

/* The definitions calc works with: each unit's size in its family's
 * first unit (1 GiB is 1,073,741,824 B), and what each format the queries
 * name (and BF16, the baseline of every ratio) is defined by: its bits,
 * its group, its metadata's bytes, and its payload's bytes per element. */
static int rule_definitions(Figures *f, Error *e)
{
    int r = 0;
    for (size_t ui = 0; !r && ui < query_unit_count(); ui++) {
        const QueryUnit *u = query_unit_at(ui);
        for (size_t bi = 0; bi < query_unit_count(); bi++) {
            const QueryUnit *base = query_unit_at(bi);
            Q x;
            Error ignored;
            if (query_unit_family(base) == query_unit_family(u)) {
                if (!query_convert(q_make(1, 1), u, base, &x, &ignored))
                    r = rule_value(f, 0, x, query_unit_name(base), e);
                break;
            }
        }
    }
    rule_format(f, format_bf16()->id);
    for (size_t k = 0; !r && k < f->n_formats; k++) {
        const Format *fm = f->formats[k];
        r = rule_value(f, 0, q_make(fm->payload_bits, 1), "", e) || rule_value(f, 0, q_make(fm->group, 1), "", e) ||
            rule_value(f, 0, q_make(fm->payload_bits, 8), "B", e) ||
            rule_value(f, 0, q_make(fm->group_meta_bytes, 1), "B", e) ||
            rule_value(f, 0, q_make(fm->vector_meta_bytes, 1), "B", e) ||
            rule_value(f, 0, q_make(fm->tensor_scale_bytes, 1), "B", e);
    }
    return r ? -1 : 0;
}

/* Every metric of every format on input set i, in every unit of its family. */
static int rule_compute(Figures *f, size_t i, Error *e)
{
    static QuerySetup s;
    const Format *unused;
    Query q = f->inputs[i];
    Error ignored;
    if (query_workload(&q, &s, &unused, &ignored))
        return 0;                       // a scenario query needs no shape of its own; none to compute
    if (rule_workload_inputs(f, i, &s, e))
        return -1;
    for (size_t fi = 0; fi < format_count(); fi++)
        for (size_t mi = 0; mi < metric_count(); mi++) {
            q.metric = metric_at(mi);
            q.unit = query_metric_unit(q.metric);
            QueryValue v;
            if (query_eval_on(&q, &s.w, format_at(fi), &v, &ignored) || v.never)
                continue;               // a metric this workload cannot give (no pool ...)
            for (size_t ui = 0; ui < query_unit_count(); ui++) {
                const QueryUnit *u = query_unit_at(ui);
                Q x;
                if (query_unit_family(u) != v.family || query_convert(v.exact, v.unit, u, &x, &ignored))
                    continue;
                Computed c = {q_to_double(x), x, u, (short)i, q.metric, format_at(fi)};
                if (rule_add(f, &c, e))
                    return -1;
            }
        }
    return 0;
}

static int rule_figures(const Lesson *l, Figures *f, Error *e)
{
    memset(f, 0, sizeof *f);
    Query q;
    Error ignored;
    if (*l->scenario) {
        char text[128];
        snprintf(text, sizeof text, "elements --scenario %s", l->scenario);
        if (!query_parse(text, &q, &ignored))
            rule_input(f, &q);
    }
    for (size_t i = 0; i < l->n_figures; i++)
        if (!query_parse(l->figures[i].query, &q, &ignored))
            rule_input(f, &q);
    for (size_t i = 0; i < f->n_inputs; i++)
        if (rule_compute(f, i, e))
            return -1;
    return f->n_inputs ? rule_definitions(f, e) : 0;
}

/* ------------------------------------------------------------------------
 * The typed numbers of prose.
 *
 * A word is a run of characters other than white space, less the
 * punctuation around it: ( [ " ' before, and , ; : . ! ? ) ] " ' after.
 * It is a number when it is digits with an optional decimal part, the
 * digits grouped by commas in threes or not at all, and optionally % or x
 * after them ("41.94", "128,000", "38%", "3.55x"). Anything else ("70B",
 * "8k", "E4M3", "2^30", "Llama-3") is a name, not a number.
 */
typedef struct {
    char digits[32];            // without commas: "128000", "41.94"
    int decimals;
    int exponent;               // "4.194e10": 10
    bool has_exponent;
    char suffix;                // '%', 'x' or 0
    char unit[8];               // a unit written onto the number ("41.94GB", "41.94-GB"); "" none
} Number;

/* The query unit named by the n bytes at w, into out->unit; a unit
 * written onto the number ("41.94GB", "41.94-GB") has two letters or
 * more, for "70B" is a model's name, not 70 bytes. */
static bool rule_unit(const char *w, size_t n, bool glued, Number *out)
{
    if (glued && n && *w == '-')
        w++, n--;
    if (!n || (glued && n < 2) || n >= sizeof out->unit)
        return false;
    for (size_t i = 0; i < query_unit_count(); i++) {
        const char *name = query_unit_name(query_unit_at(i));
        if (strlen(name) == n && (glued ? strncasecmp(name, w, n) : strncmp(name, w, n)) == 0) {
            snprintf(out->unit, sizeof out->unit, "%s", name);
            return true;
        }
    }
    return false;
}

static bool rule_number(const char *w, size_t n, Number *out)
{
    size_t i = 0, len = 0, group = 0;
    bool commas = false;
    *out = (Number){.decimals = 0};
    if (n && (w[n - 1] == '%' || w[n - 1] == 'x'))
        out->suffix = w[--n];
    while (i < n && (isdigit((unsigned char)w[i]) || w[i] == ',')) {
        if (w[i] == ',') {
            if (!len || (commas && group != 3) || (!commas && group > 3))
                return false;
            commas = true;
            group = 0;
        } else {
            if (len + 1 >= sizeof out->digits)
                return false;
            out->digits[len++] = w[i];
            group++;
        }
        i++;
    }
    if (!len || (commas && group != 3))
        return false;
    if (i < n && w[i] == '.') {
        out->digits[len++] = w[i++];
        while (i < n && isdigit((unsigned char)w[i]) && len + 1 < sizeof out->digits)
            out->digits[len++] = w[i++], out->decimals++;
        if (!out->decimals)
            return false;
    }
    out->digits[len] = '\0';
    /* An exponent: "4.194e10", "4e-3". */
    if (i + 1 < n && (w[i] == 'e' || w[i] == 'E') && !commas) {
        size_t k = i + 1 + (w[i + 1] == '-' || w[i + 1] == '+');
        if (k < n && isdigit((unsigned char)w[k])) {
            out->exponent = atoi(w + i + 1);
            out->has_exponent = true;
            i = k;
            while (i < n && isdigit((unsigned char)w[i]))
                i++;
        }
    }
    if (i < n && !out->suffix && rule_unit(w + i, n - i, true, out))
        return true;
    return i == n;
}

/* The words that make a number before them an input (a parameter named
 * with its unit), not a figure: "128,000 tokens", "80 layers", "8 KV
 * heads", "4 bits". */
static const char *const INPUT_AFTER[] = {
    "token", "tokens", "layer", "layers", "head", "heads", "bit", "bits", NULL,
};
/* Words between the number and those that still leave it an input. */
static const char *const INPUT_BETWEEN[] = {"KV", "query", "attention", NULL};
/* The words that make a number after them an input or a name: "groups of
 * 32", "head dimension 128", "seed 003", "lesson 2", "section 4". */
static const char *const INPUT_BEFORE[] = {
    "of", "dimension", "seed", "Seed", "lesson", "Lesson", "section", "Section", NULL,
};

static bool rule_in(const char *const *list, const char *w, size_t n)
{
    for (; *list; list++)
        if (strlen(*list) == n && strncmp(*list, w, n) == 0)
            return true;
    return false;
}

/* The word after (or before) position at in text, less punctuation. */
static const char *rule_word(const char *text, size_t len, size_t at, bool after, size_t *n)
{
    size_t i = at;
    if (after) {
        while (i < len && text[i] == ' ')
            i++;
        size_t a = i;
        while (i < len && !isspace((unsigned char)text[i]) && !strchr(",;:.!?)]\"'", text[i]))
            i++;
        *n = i - a;
        return text + a;
    }
    while (i > 0 && text[i - 1] == ' ')
        i--;
    size_t b = i;
    while (i > 0 && !isspace((unsigned char)text[i - 1]))
        i--;
    *n = b - i;
    return text + i;
}

static bool rule_exempt(const char *text, size_t len, size_t start, size_t end, const Number *num)
{
    size_t n;
    const char *w = rule_word(text, len, end, true, &n);
    if (num->suffix == 0 && rule_in(INPUT_BETWEEN, w, n))
        w = rule_word(text, len, (size_t)(w - text) + n, true, &n);
    if (num->suffix == 0 && rule_in(INPUT_AFTER, w, n))
        return true;
    w = rule_word(text, len, start, false, &n);
    if (rule_in(INPUT_BEFORE, w, n))
        return true;
    /* The value of one of calc's options: "--batch 64". */
    char option[QUERY_WORD_MAX];
    if (n > 2 && n < sizeof option && !strncmp(w, "--", 2)) {
        snprintf(option, sizeof option, "%.*s", (int)(n - 2), w + 2);
        if (query_option_by_name(option) >= 0)
            return true;
    }
    /* A year: four digits from 1900 to 2099, no comma, no decimals. */
    long v = strtol(num->digits, NULL, 10);
    return !num->decimals && !num->suffix && strlen(num->digits) == 4 && v >= 1900 && v <= 2099 &&
           end - start == 4;
}

/* Whether c, at the number's printed precision, is the number. */
static bool rule_equal(const Computed *c, const Number *num)
{
    if (num->suffix == '%' && strcmp(query_unit_name(c->unit), "%") != 0)
        return false;
    if (num->suffix == 'x' && strcmp(query_unit_name(c->unit), "x") != 0)
        return false;
    if (num->unit[0] && strcmp(query_unit_name(c->unit), num->unit) != 0)
        return false;
    char shown[64], typed[64];
    if (num->has_exponent) {
        /* At the mantissa's precision: 4.194e10 is a value that prints so. */
        char text[64];
        snprintf(text, sizeof text, "%se%d", num->digits, num->exponent);
        snprintf(typed, sizeof typed, "%.*e", num->decimals, strtod(text, NULL));
        snprintf(shown, sizeof shown, "%.*e", num->decimals, c->value);
        return strcmp(shown, typed) == 0;
    }
    /* Rounded half up, exactly, as calc prints it: 10895.625 MiB is
     * "10895.63", where printf's binary rounding gives "10895.62". */
    q_str(shown, sizeof shown, c->exact, num->decimals, false);
    return strcmp(shown, num->digits) == 0;
}

/* Whether the number is one of the inputs, in the unit it is written in
 * (any unit when none): "60 GB" of a --pool 60GB, "16" of 16 KV heads.
 * An input is exempt even where a figure has the same value, for a
 * reader cannot tell the two apart either, and the input is the one the
 * text states. */
static bool rule_is_input(const Figures *f, const Number *num)
{
    for (size_t k = 0; k < f->n; k++)
        if (!f->c[k].metric && rule_equal(&f->c[k], num))
            return true;
    return false;
}

/* The number's significant digits, as typed: "41.94" 4, "128,000" 6,
 * "0.05" 1, "2" 1, "3.55x" 3. A number of one is not compared with the
 * figures: it stands for a range at least a tenth of its value wide (2 for
 * 1.5 to 2.5), and the thousands of figures of a lesson's inputs, in every
 * unit, fill every such range many times over, so a match would not say
 * which figure, if any, it is (lessons/FORMAT.md, "Precision"). */
static int rule_significant(const Number *num)
{
    int n = 0;
    for (const char *d = num->digits; *d; d++)
        if (isdigit((unsigned char)*d) && (n || *d != '0'))
            n++;
    return n;
}

typedef struct {
    const Lesson *l;
    const Figures *f;
    TypedNumber *out;
    size_t max;
    int count;
} Found;

static void rule_report(Found *fd, const Number *num, const char *typed, size_t n, const Computed *c, LessonPos pos)
{
    if ((size_t)fd->count < fd->max) {
        TypedNumber *t = &fd->out[fd->count];
        t->where[0] = '\0';
        snprintf(t->number, sizeof t->number, "%.*s", (int)n, typed);
        Query q = fd->f->inputs[c->input];
        q.metric = c->metric;
        q.unit = c->unit;
        q.digits = num->decimals;
        char buf[QUERY_TEXT_MAX];
        query_format(&q, buf, sizeof buf);
        snprintf(t->figure, sizeof t->figure, "%s --format %s", buf, c->format->id);
        t->pos = pos;
    }
    fd->count++;
}

/* The source offset of the n bytes at w, looked for from `from` on (a
 * run's text has its soft breaks as spaces, so it is found, not counted). */
static LessonPos rule_pos(const Lesson *l, size_t *from, const char *w, size_t n, LessonPos fallback)
{
    for (size_t i = *from; i + n <= l->source_len; i++)
        if (memcmp(l->source + i, w, n) == 0) {
            *from = i + n;              // the next number of the run is after this one
            LessonPos p = {1, 1};
            for (size_t k = 0; k < i; k++)
                l->source[k] == '\n' ? (p.line++, p.col = 1) : p.col++;
            return p;
        }
    return fallback;
}

static void rule_text(Found *fd, const char *text, size_t from, LessonPos pos)
{
    size_t len = strlen(text);
    for (size_t i = 0; i < len;) {
        while (i < len && isspace((unsigned char)text[i]))
            i++;
        size_t a = i;
        while (i < len && !isspace((unsigned char)text[i]))
            i++;
        size_t s = a, e = i;
        while (s < e && strchr("([\"'~<>*_", text[s]))
            s++;
        while (e > s && strchr(",;:.!?)]\"'*_", text[e - 1]))
            e--;
        Number num;
        if (e == s || !rule_number(text + s, e - s, &num) || rule_exempt(text, len, a, i, &num))
            continue;
        /* A unit in the next word says which figures it can be. */
        size_t un;
        const char *u = rule_word(text, len, i, true, &un);
        if (!num.unit[0] && !num.suffix && !rule_unit(u, un, false, &num) && un > 2 && !strncmp(u + un - 2, "/s", 2))
            rule_unit(u, un - 2, false, &num);  // a rate, "3,352 GB/s": the size of a second
        if (rule_is_input(fd->f, &num) || rule_significant(&num) < 2)
            continue;
        for (size_t k = 0; k < fd->f->n; k++)
            if (fd->f->c[k].metric && rule_equal(&fd->f->c[k], &num)) {
                rule_report(fd, &num, text + s, e - s, &fd->f->c[k],
                            rule_pos(fd->l, &from, text + s, e - s, pos));
                break;
            }
    }
}

int lesson_typed_numbers(const Lesson *l, TypedNumber *out, size_t max, Error *e)
{
    static Figures f;
    if (rule_figures(l, &f, e)) {
        free(f.c);
        return -1;
    }
    Found fd = {l, &f, out, max, 0};
    LessonPos top = {1, 1};
    rule_text(&fd, l->title, 0, top);
    rule_text(&fd, l->question, 0, top);
    for (size_t i = 0; i < l->n_runs; i++)
        if (l->runs[i].kind == RUN_TEXT)
            rule_text(&fd, l->runs[i].text, l->runs[i].offset, l->runs[i].pos);
    for (size_t i = 0; i < l->n_predicts; i++) {
        const LessonPredict *p = &l->predicts[i];
        size_t at = 0;
        rule_text(&fd, p->question, at, p->pos);
        for (size_t k = 0; k < p->n_choices; k++)
            rule_text(&fd, p->choices[k], at, p->pos);
    }
    free(f.c);
    return fd.count;
}

int text_typed_numbers(const RuleText *texts, size_t n_texts, const char *const *queries, size_t n_queries,
                       TypedNumber *out, size_t max, Error *e)
{
    /* One paragraph a line per text, then the queries as figures, read
     * as a lesson's text: a number's line says which text it is in. */
    size_t cap = 64, len = 0;
    for (size_t i = 0; i < n_texts; i++)
        cap += strlen(texts[i].text) + 2;
    for (size_t i = 0; i < n_queries; i++)
        cap += strlen(queries[i]) + 5;
    char *doc = malloc(cap);
    if (!doc)
        return error_runtime(e, "out of memory");
    for (size_t i = 0; i < n_texts; i++) {
        for (const char *c = texts[i].text; *c; c++)
            doc[len++] = *c == '\n' ? ' ' : *c;
        doc[len++] = '\n', doc[len++] = '\n';
    }
    for (size_t i = 0; i < n_queries; i++)
        len += (size_t)snprintf(doc + len, cap - len, "`=%s`\n\n", queries[i]);
    Lesson l;
    int n = lesson_parse_text(&l, "text", doc, len, NULL, e) ? -1 : lesson_eval(&l, e) ? -2 : 0;
    if (!n)
        n = lesson_typed_numbers(&l, out, max, e);
    if (n != -1)
        lesson_free(&l);
    free(doc);
    for (int i = 0; i < n && (size_t)i < max; i++) {
        size_t t = (size_t)(out[i].pos.line - 1) / 2;
        snprintf(out[i].where, sizeof out[i].where, "%s", t < n_texts ? texts[t].name : "");
        out[i].pos.line = 1;
    }
    return n < 0 ? -1 : n;
}
