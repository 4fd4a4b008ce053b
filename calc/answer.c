/* answer.c - answers with units, checked against queries, and the mistake
 * models that explain wrong ones. */
#include "answer.h"

#include "ascii.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Reading an answer
 */

/* How a unit may be written in an answer (case does not matter), and the
 * unit it is. Bytes are "B" only: a lone "b" reads as bits. */
static const struct {
    const char *spelling;
    const char *unit;
} SPELLINGS[] = {
    {"B", "B"},        {"byte", "B"},   {"bytes", "B"},   {"KB", "KB"},      {"MB", "MB"},
    {"GB", "GB"},      {"TB", "TB"},    {"KiB", "KiB"},   {"MiB", "MiB"},    {"GiB", "GiB"},
    {"TiB", "TiB"},    {"s", "s"},      {"ms", "ms"},     {"us", "us"},      {"\xc2\xb5s", "us"},
    {"x", "x"},        {"\xc3\x97", "x"}, {"%", "%"},     {"tokens", ""},    {"token", ""},
    {"slots", ""},     {"slot", ""},    {"sequences", ""}, {"seqs", ""},     {"elements", ""},
};

/* What may follow a size: "0.5625 B/elem", "320 KiB per token". */
static const char *const PER[] = {"/elem", "/element", "/token", "/tok", "/seq", "/sequence", "per element",
                                  "per token", "per sequence"};

static const QueryUnit *answer_unit(const char *text)
{
    if (!strcmp(text, "b"))
        return NULL;
    for (size_t i = 0; i < sizeof SPELLINGS / sizeof SPELLINGS[0]; i++)
        if (ascii_ieq(SPELLINGS[i].spelling, text))
            return query_unit_by_name(SPELLINGS[i].unit);
    return NULL;
}

/* Digits with commas only between groups of three: "40,960", "1,048,576". */
static int answer_digits(const char **p, char *out, size_t n, size_t *len, Error *e)
{
    const char *s = *p;
    size_t k = 0, run = 0;
    bool grouped = false;
    for (;; s++) {
        if (*s >= '0' && *s <= '9') {
            if (k + 1 >= n)
                return error_set(e, "too many digits");
            out[k++] = *s;
            run++;
        } else if (*s == ',' && s[1] >= '0' && s[1] <= '9') {
            if ((grouped && run != 3) || (!grouped && (run == 0 || run > 3)))
                return error_set(e, "a comma separates groups of three digits");
            grouped = true;
            run = 0;
        } else {
            break;
        }
    }
    if (grouped && run != 3)
        return error_set(e, "a comma separates groups of three digits");
    out[k] = '\0';
    *len = k;
    *p = s;
    return 0;
}

int answer_parse(const char *text, Answer *a, Error *e)
{
    memset(a, 0, sizeof *a);
    const char *p = text;
    while (ascii_isspace((unsigned char)*p))
        p++;
    char whole[64], frac[64] = "";
    size_t nw = 0, nf = 0;
    if (answer_digits(&p, whole, sizeof whole, &nw, e))
        return error_prefix(e, "'%s'", text);
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9' && nf + 1 < sizeof frac)
            frac[nf++] = *p++;
        frac[nf] = '\0';
    }
    if (!nw && !nf)
        return error_set(e, "'%s' is not a number with a unit (write e.g. 20 GiB, 3.55x, 71)", text);
    long exp10 = 0;
    if ((*p == 'e' || *p == 'E') && (p[1] == '-' || p[1] == '+' || (p[1] >= '0' && p[1] <= '9'))) {
        int sign = 1;
        p++;
        if (*p == '-' || *p == '+')
            sign = *p++ == '-' ? -1 : 1;
        if (!(*p >= '0' && *p <= '9'))
            return error_set(e, "'%s': the exponent has no digits", text);
        long x = 0;
        while (*p >= '0' && *p <= '9' && x < 1000)
            x = x * 10 + (*p++ - '0');
        exp10 = sign * x;
    }
    /* The digits as one decimal number, exactly as far as a double goes. */
    char num[160];
    snprintf(num, sizeof num, "%s%s", whole[0] ? whole : "0", frac);
    double v = 0;
    for (const char *d = num; *d; d++)
        v = v * 10 + (*d - '0');
    v *= pow(10, (double)(exp10 - (long)nf));
    if (!isfinite(v))
        return error_set(e, "'%s' is too large", text);
    a->value = v;
    while (ascii_isspace((unsigned char)*p))
        p++;
    char unit[64];
    size_t n = strlen(p);
    while (n && ascii_isspace((unsigned char)p[n - 1]))
        n--;
    if (n >= sizeof unit)
        return error_set(e, "'%s': unknown unit", text);
    snprintf(unit, sizeof unit, "%.*s", (int)n, p);
    for (size_t i = 0; i < sizeof PER / sizeof PER[0]; i++) {
        size_t lu = strlen(unit), lp = strlen(PER[i]);
        if (lu > lp && ascii_ieq(unit + lu - lp, PER[i])) {
            unit[lu - lp] = '\0';
            for (size_t k = strlen(unit); k && ascii_isspace((unsigned char)unit[k - 1]); k--)
                unit[k - 1] = '\0';
            if (!unit[0] || !answer_unit(unit) || query_unit_family(answer_unit(unit)) != UNIT_SIZE)
                return error_set(e, "'%s': '%s' follows a size (0.5625 B/elem)", text, PER[i]);
            break;
        }
    }
    if (!unit[0])
        return 0;
    a->unit = answer_unit(unit);
    if (!a->unit)
        return error_set(e, "'%s': unknown unit '%s' (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, s, ms, us, x, %%)%s",
                         text, unit, !strcmp(unit, "b") || ascii_ieq(unit, "bits") ? "; give bytes, not bits" : "");
    return 0;
}

/* ------------------------------------------------------------------------
 * Mistake models
 *
 * Each changes what the query is worked out on: its workload, a copy of
 * its format, a factor on the value. A model returns false where it does
 * not apply to the query (nothing to get wrong).
 */
typedef struct {
    const Query *q;
    Workload w;
    Format f;
    Q factor;
} Mistaken;

struct MistakeModel {
    const char *id;
    const char *name;
    const char *why;
    bool (*apply)(Mistaken *m);
};

static bool sized(const Mistaken *m)
{
    return query_unit_family(query_metric_unit(m->q->metric)) == UNIT_SIZE;
}

static bool is_slots(const Mistaken *m)
{
    return m->q->metric == metric_by_id("slots") || m->q->metric == metric_by_id("paged_slots");
}

static bool scale(Mistaken *m, u128 num, u128 den)
{
    m->factor = q_make(m->factor.num * num, m->factor.den * den);
    return true;
}

static bool gb_as_gib(Mistaken *m)
{
    return sized(m) && scale(m, GIB, GB);
}

static bool gib_as_gb(Mistaken *m)
{
    return sized(m) && scale(m, GB, GIB);
}

/* Half the layers hold exactly what K alone (or V alone) takes in all of
 * them, scales included, where the layer pattern splits evenly. */
static bool k_or_v_only(Mistaken *m)
{
    Shape *s = &m->w.shape;
    if (s->layers % 2 || (s->period > 1 && (s->layers / 2) % s->period))
        return false;
    s->layers /= 2;
    return true;
}

static bool q_heads_as_kv(Mistaken *m)
{
    if (m->w.mha || m->w.shape.q_heads == m->w.shape.kv_heads)
        return false;
    m->w.mha = true;
    return true;
}

static bool metadata_left_out(Mistaken *m)
{
    if (!m->f.group_meta_bytes && !m->f.vector_meta_bytes && !m->f.tensor_scale_bytes)
        return false;
    m->f.group_meta_bytes = m->f.vector_meta_bytes = m->f.tensor_scale_bytes = 0;
    return true;
}

/* The figure for all sequences given for one: worked out at batch 1. */
static bool one_sequence_for_all(Mistaken *m)
{
    if (m->w.batch <= 1 || !(metric_reads(m->q->metric) & WL_BATCH))
        return false;
    m->w.batch = 1;
    return true;
}

/* A per-sequence size given for the whole batch. */
static bool all_for_one_sequence(Mistaken *m)
{
    unsigned r = metric_reads(m->q->metric);
    if (m->w.batch <= 1 || !sized(m) || (r & WL_BATCH) || !(r & WL_CONTEXT))
        return false;
    return scale(m, m->w.batch, 1);
}

/* Slots rounded up: the pool grows by a sequence less a byte, so the floor
 * becomes the ceiling. */
static bool slots_rounded_up(Mistaken *m)
{
    FormatResult r;
    Error e;
    if (!is_slots(m) || budget_compute(&m->w, &m->f, &r, &e) || !r.has_slots)
        return false;
    u128 seq = m->q->metric == metric_by_id("slots") ? r.fp.bytes_per_sequence : r.paged_bytes_per_sequence;
    if (!seq || m->w.pool % seq == 0)
        return false;
    m->w.pool += seq - 1;
    return true;
}

static bool bits_for_bytes(Mistaken *m)
{
    if (!sized(m) && !is_slots(m))
        return false;
    m->f.payload_bits *= 8;
    m->f.group_meta_bytes *= 8;
    m->f.vector_meta_bytes *= 8;
    m->f.tensor_scale_bytes *= 8;
    return true;
}

static bool bytes_for_bits(Mistaken *m)
{
    return sized(m) && scale(m, 1, 8);
}

static const MistakeModel MISTAKES[] = {
    {"gb_as_gib", "GB read as GiB", "the figure in GB (10^9 bytes) was written as GiB (2^30 bytes), 7% too large",
     gb_as_gib},
    {"gib_as_gb", "GiB read as GB", "the figure in GiB (2^30 bytes) was written as GB (10^9 bytes), 7% too small",
     gib_as_gb},
    {"k_or_v_only", "only K or only V counted",
     "the cache holds a key and a value vector per token, head and layer: the factor 2 was left out", k_or_v_only},
    {"q_heads_as_kv", "query heads used for KV heads",
     "with grouped-query attention several query heads share one KV head; the cache stores only the KV heads",
     q_heads_as_kv},
    {"metadata_left_out", "metadata left out",
     "the format's scales (per group, per vector or per tensor) take bytes too", metadata_left_out},
    {"one_sequence_for_all", "one sequence given for all",
     "the question is about the whole batch; this is one sequence's figure", one_sequence_for_all},
    {"all_for_one_sequence", "all sequences given for one",
     "the question is about one sequence; this is the whole batch's figure", all_for_one_sequence},
    {"slots_rounded_up", "slots rounded up",
     "a sequence that does not fit whole cannot be served: slots are rounded down", slots_rounded_up},
    {"bits_for_bytes", "bits used as bytes", "the bits per element were counted as bytes, eight times too many",
     bits_for_bytes},
    {"bytes_for_bits", "bytes divided by 8 again", "bytes were divided by 8 as if they were bits",
     bytes_for_bits},
};

#define N_MISTAKES (sizeof MISTAKES / sizeof MISTAKES[0])

size_t mistake_count(void)
{
    return N_MISTAKES;
}

const MistakeModel *mistake_at(size_t i)
{
    return i < N_MISTAKES ? &MISTAKES[i] : NULL;
}

const MistakeModel *mistake_by_id(const char *id)
{
    for (size_t i = 0; i < N_MISTAKES; i++)
        if (!strcmp(MISTAKES[i].id, id))
            return &MISTAKES[i];
    return NULL;
}

const char *mistake_id(const MistakeModel *m)
{
    return m->id;
}

const char *mistake_name(const MistakeModel *m)
{
    return m->name;
}

const char *mistake_why(const MistakeModel *m)
{
    return m->why;
}

int mistake_value(const Query *q, const MistakeModel *const *ms, size_t n, const QueryUnit *in, Q *out,
                  Error *e)
{
    static QuerySetup s;
    const Format *f;
    if (query_workload(q, &s, &f, e))
        return -1;
    Mistaken m = {q, s.w, *f, q_make(1, 1)};
    for (size_t i = 0; i < n; i++)
        if (!ms[i]->apply(&m))
            return 0;
    QueryValue v;
    Error ignored;
    if (query_eval_on(q, &m.w, &m.f, &v, &ignored) || v.never)
        return 0;               // the mistaken workload has no such figure
    Checked c = {0};
    Q x = {checked_mul(&c, v.exact.num, m.factor.num), checked_mul(&c, v.exact.den, m.factor.den)};
    if (c.overflow || query_convert(x, q->unit, in, out, &ignored))
        return 0;
    return 1;
}

/* ------------------------------------------------------------------------
 * Checking
 */

static bool within(double given, double want, double tol)
{
    return want == 0 ? given == 0 : fabs(given - want) <= tol * fabs(want);
}

/* The answer in unit `asked`; -1 where its unit is of another family. */
static int answer_in(const Answer *a, const QueryUnit *asked, double *out, Error *e)
{
    if (!a->unit) {
        *out = a->value;
        return 0;
    }
    Q one;
    if (query_convert(q_make(1, 1), a->unit, asked, &one, e))
        return error_set(e, "the answer is a %s (%s%s), but %s was given", query_family_name(query_unit_family(asked)),
                         query_unit_name(asked)[0] ? "in " : "a plain number", query_unit_name(asked),
                         query_unit_name(a->unit));
    *out = a->value * q_to_double(one);
    return 0;
}

int answer_check(const Query *q, const QueryUnit *asked, double tol, const Answer *a, AnswerVerdict *v,
                 Error *e)
{
    memset(v, 0, sizeof *v);
    QueryValue t;
    if (query_eval(q, &t, e) || query_convert(t.exact, q->unit, asked, &v->truth, e) ||
        answer_in(a, asked, &v->given, e))
        return -1;
    double truth = q_to_double(v->truth);
    query_value_text(v->truth, t.never, asked, q->digits, v->truth_text, sizeof v->truth_text);
    const QueryUnit *shown = a->unit ? a->unit : asked;
    char num[48];
    snprintf(num, sizeof num, "%.10g", a->value);
    snprintf(v->given_text, sizeof v->given_text, "%s%s%s", num,
             query_unit_family(shown) == UNIT_RATIO || !query_unit_name(shown)[0] ? "" : " ",
             query_unit_name(shown));
    v->off = truth ? v->given / truth : 0;
    /* A whole count (slots, tokens) is answered exactly: 71.2 slots is not 71. */
    if (query_unit_family(asked) == UNIT_COUNT && v->truth.num % v->truth.den == 0)
        tol = 0;
    v->correct = !t.never && within(v->given, truth, tol);
    if (v->correct)
        return 0;
    /* One mistake, then two at once; the first that matches is named. */
    for (size_t n = 1; n <= VERDICT_MISTAKES_MAX && !v->n_mistakes; n++)
        for (size_t i = 0; i < N_MISTAKES && !v->n_mistakes; i++)
            for (size_t j = n == 1 ? i : i + 1; j < (n == 1 ? i + 1 : N_MISTAKES) && !v->n_mistakes; j++) {
                const MistakeModel *ms[2] = {&MISTAKES[i], &MISTAKES[j]};
                Q x;
                int rc = mistake_value(q, ms, n, asked, &x, e);
                if (rc < 0)
                    return -1;
                double mv = rc ? q_to_double(x) : 0;
                if (rc && !within(mv, truth, tol) && within(v->given, mv, tol)) {
                    v->n_mistakes = n;
                    v->mistakes[0] = ms[0];
                    v->mistakes[1] = n > 1 ? ms[1] : NULL;
                    query_value_text(x, false, asked, q->digits, v->mistaken_text, sizeof v->mistaken_text);
                }
            }
    return 0;
}

bool answer_matches(const Answer *a, const QueryUnit *asked, const char *value, double tol)
{
    Answer s;
    Error e;
    double x, y;
    return !answer_parse(value, &s, &e) && !answer_in(a, asked, &x, &e) && !answer_in(&s, asked, &y, &e) &&
           within(x, y, tol);
}
