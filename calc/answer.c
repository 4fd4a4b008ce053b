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

/* What may follow a size: "0.5625 B/elem", "320 KiB per token"; and the
 * suffix of the metrics that are per that ("bytes_per_token"). */
static const struct {
    const char *spelling;
    AnswerPer per;
} PER[] = {
    {"/elem", PER_ELEMENT}, {"/element", PER_ELEMENT}, {"per element", PER_ELEMENT},
    {"/token", PER_TOKEN},  {"/tok", PER_TOKEN},       {"per token", PER_TOKEN},
    {"/seq", PER_SEQUENCE}, {"/sequence", PER_SEQUENCE}, {"per sequence", PER_SEQUENCE},
};
static const char *const PER_METRIC_SUFFIX[] = {
    [PER_NONE] = NULL, [PER_ELEMENT] = "_per_element", [PER_TOKEN] = "_per_token", [PER_SEQUENCE] = "_per_sequence"};
static const char *const PER_NAME[] = {
    [PER_NONE] = "", [PER_ELEMENT] = "element", [PER_TOKEN] = "token", [PER_SEQUENCE] = "sequence"};

/* A b after an upper-case letter is a bit, as in Gb, Mb, Gib: bytes are B
 * (or every letter in lower case, gb, as people type). */
static bool bits_spelling(const char *text)
{
    size_t n = strlen(text);
    if (!n || text[n - 1] != 'b')
        return false;
    for (size_t i = 0; i + 1 < n; i++)
        if (text[i] >= 'A' && text[i] <= 'Z')
            return true;
    return false;
}

static const QueryUnit *answer_unit(const char *text)
{
    if (!strcmp(text, "b") || bits_spelling(text))
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
    if (!*p)
        return error_set(e, "no answer was given (write e.g. 20 GiB, 3.55x, 71)");
    if (*p == '-' || *p == '+')
        return error_set(e, "'%s': an answer has no sign (the figures asked for are never negative)", text);
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
    /* The number as written, for echoing it: the digits grouped, the
     * places as typed. */
    char grouped[96];
    size_t g = 0, lead = strspn(whole, "0");
    const char *w = whole[lead] ? whole + lead : "0";
    for (size_t i = 0, len = strlen(w); i < len && g + 2 < sizeof grouped; i++) {
        if (i && (len - i) % 3 == 0)
            grouped[g++] = ',';
        grouped[g++] = w[i];
    }
    grouped[g] = '\0';
    snprintf(a->number, sizeof a->number, "%s%s%s", grouped, nf ? "." : "", frac);
    if (exp10) {
        size_t l = strlen(a->number);
        snprintf(a->number + l, sizeof a->number - l, "e%ld", exp10);
    }
    long places = (long)nf - exp10;
    a->decimals = places < 0 ? 0 : places > 9 ? 9 : (int)places;
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
        size_t lu = strlen(unit), lp = strlen(PER[i].spelling);
        if (lu > lp && ascii_ieq(unit + lu - lp, PER[i].spelling)) {
            unit[lu - lp] = '\0';
            for (size_t k = strlen(unit); k && ascii_isspace((unsigned char)unit[k - 1]); k--)
                unit[k - 1] = '\0';
            if (!unit[0] || !answer_unit(unit) || query_unit_family(answer_unit(unit)) != UNIT_SIZE)
                return error_set(e, "'%s': '%s' follows a size (0.5625 B/elem)", text, PER[i].spelling);
            a->per = PER[i].per;
            break;
        }
    }
    if (!unit[0])
        return 0;
    snprintf(a->unit_text, sizeof a->unit_text, "%s", unit);
    a->unit = answer_unit(unit);
    if (!a->unit) {
        bool bits = !strcmp(unit, "b") || bits_spelling(unit) || ascii_ieq(unit, "bits") || ascii_ieq(unit, "bit");
        if (bits)
            return error_set(e, "'%s': '%s' is bits; give bytes (B, GB, GiB ...)", text, unit);
        return error_set(e, "'%s': '%s' is not a unit the answer can be in: after the number comes one unit (B, KB, "
                            "MB, GB, TB, KiB, MiB, GiB, TiB, s, ms, us, x, %%) and nothing else",
                         text, unit);
    }
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
    const Metric *metric;       // what was worked out: the query's, or another
    Workload w;
    Format f;
    Q factor;
    bool invert;                // the ratio upside down
    size_t variant;             // which of the model's variants (another format: which format)
} Mistaken;

struct MistakeModel {
    const char *id;
    const char *name;
    const char *why;
    bool (*apply)(Mistaken *m);
    size_t (*variants)(void);   // how many variants the model has; NULL: one
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

/* The element count taken for the byte count: one byte per element, no
 * metadata (BF16's 2 bytes per element left out). */
static bool elements_for_bytes(Mistaken *m)
{
    if (!sized(m) && !is_slots(m))
        return false;
    m->f.payload_bits = 8;
    m->f.group_meta_bytes = m->f.vector_meta_bytes = m->f.tensor_scale_bytes = 0;
    return true;
}

static bool bytes_for_bits(Mistaken *m)
{
    return sized(m) && scale(m, 1, 8);
}

static bool ratio(const Mistaken *m)
{
    return query_unit_family(query_metric_unit(m->q->metric)) == UNIT_RATIO;
}

static bool ratio_inverted(Mistaken *m)
{
    if (!ratio(m))
        return false;
    m->invert = !m->invert;
    return true;
}

/* 38% written as 0.38 (or 0.38x as 38): a factor of 100 lost or gained. */
static bool fraction_for_percent(Mistaken *m)
{
    return ratio(m) && scale(m, 1, 100);
}

static bool percent_for_fraction(Mistaken *m)
{
    return ratio(m) && scale(m, 100, 1);
}

/* A saving answered with the larger of the two sizes it is the difference
 * of: the BF16 cache for saved_gib, the MHA cache for gqa_saved_gib. */
static bool whole_for_saving(Mistaken *m)
{
    static const struct {
        const char *saving;
        bool mha;               // the whole is the model as MHA; else BF16
    } WHOLES[] = {{"saved_gib", false}, {"gqa_saved_gib", true}};
    for (size_t i = 0; i < sizeof WHOLES / sizeof WHOLES[0]; i++)
        if (m->metric == metric_by_id(WHOLES[i].saving)) {
            m->metric = metric_by_id("gib");
            if (WHOLES[i].mha)
                m->w.mha = true;
            else
                m->f = *format_bf16();
            return true;
        }
    return false;
}

/* The figure of another format: the same query worked out for the format
 * named by the variant. */
static bool other_format(Mistaken *m)
{
    const Format *f = format_at(m->variant);
    if (!f || !strcmp(f->id, m->f.id))
        return false;
    m->f = *f;
    return true;
}

static const MistakeModel MISTAKES[] = {
    {"gb_as_gib", "GB read as GiB", "the figure in GB (10^9 bytes) was written as GiB (2^30 bytes), 7% too large",
     gb_as_gib, NULL},
    {"gib_as_gb", "GiB read as GB", "the figure in GiB (2^30 bytes) was written as GB (10^9 bytes), 7% too small",
     gib_as_gb, NULL},
    {"k_or_v_only", "only K or only V counted",
     "the cache holds a key and a value vector per token, head and layer: the factor 2 was left out", k_or_v_only, NULL},
    {"q_heads_as_kv", "query heads used for KV heads",
     "with grouped-query attention several query heads share one KV head; the cache stores only the KV heads",
     q_heads_as_kv, NULL},
    {"metadata_left_out", "metadata left out",
     "the format's scales (per group, per vector or per tensor) take bytes too", metadata_left_out, NULL},
    {"one_sequence_for_all", "one sequence given for all",
     "the question is about the whole batch; this is one sequence's figure", one_sequence_for_all, NULL},
    {"all_for_one_sequence", "all sequences given for one",
     "the question is about one sequence; this is the whole batch's figure", all_for_one_sequence, NULL},
    {"slots_rounded_up", "slots rounded up",
     "a sequence that does not fit whole cannot be served: slots are rounded down", slots_rounded_up, NULL},
    {"bits_for_bytes", "bits used as bytes", "the bits per element were counted as bytes, eight times too many",
     bits_for_bytes, NULL},
    {"elements_for_bytes", "elements counted as bytes",
     "the count of elements was taken for bytes: each element takes the format's bytes (2 in BF16)",
     elements_for_bytes, NULL},
    {"bytes_for_bits", "bytes divided by 8 again", "bytes were divided by 8 as if they were bits",
     bytes_for_bits, NULL},
    {"ratio_inverted", "the ratio upside down", "the ratio was taken the other way round: this format over BF16",
     ratio_inverted, NULL},
    {"fraction_for_percent", "a fraction given for a percentage",
     "the figure is a percentage (38% is written 38, not 0.38)", fraction_for_percent, NULL},
    {"percent_for_fraction", "a percentage given for a ratio", "the figure is a ratio (0.38x is written 0.38, not 38)",
     percent_for_fraction, NULL},
    {"whole_for_saving", "the whole given for the saving",
     "the question asks for the difference between two sizes; this is the larger of them", whole_for_saving, NULL},
    {"other_format", "another format's figure",
     "the figure was worked out for another storage format (its bits and metadata) than the one asked", other_format,
     format_count},
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

size_t mistake_variants(const MistakeModel *m)
{
    return m->variants ? m->variants() : 1;
}

const char *mistake_label(const MistakeModel *m, size_t variant, char *buf, size_t n)
{
    if (m->apply == other_format && format_at(variant))
        snprintf(buf, n, "%s: %s's", m->name, format_at(variant)->name);
    else
        snprintf(buf, n, "%s", m->name);
    return buf;
}

int mistake_value(const Query *q, const MistakeModel *const *ms, const size_t *variants, size_t n,
                  const QueryUnit *in, Q *out, Error *e)
{
    static QuerySetup s;
    const Format *f;
    if (query_workload(q, &s, &f, e))
        return -1;
    Mistaken m = {q, q->metric, s.w, *f, q_make(1, 1), false, 0};
    for (size_t i = 0; i < n; i++) {
        m.variant = variants ? variants[i] : 0;
        if (!ms[i]->apply(&m))
            return 0;
    }
    static Query mq;
    mq = *q;
    mq.metric = m.metric;
    QueryValue v;
    Error ignored;
    if (query_eval_on(&mq, &m.w, &m.f, &v, &ignored) || v.never || (m.invert && !v.exact.num))
        return 0;               // the mistaken workload has no such figure
    Checked c = {0};
    Q x = {checked_mul(&c, v.exact.num, m.factor.num), checked_mul(&c, v.exact.den, m.factor.den)};
    if (m.invert) {            // x is in the query's unit; 1/x is taken in x (1x = 100%)
        const QueryUnit *ux = query_unit_by_name("x");
        Q in_x, inv;
        if (c.overflow || query_convert(x, q->unit, ux, &in_x, &ignored) ||
            query_convert(q_make(in_x.den, in_x.num), ux, q->unit, &inv, &ignored))
            return 0;
        x = inv;
    }
    if (c.overflow || query_convert(x, q->unit, in, out, &ignored))
        return 0;
    return 1;
}

/* ------------------------------------------------------------------------
 * Checking
 */

/* Relative: what a double's rounding of a decimal answer and of its
 * unit's conversion may move it, so that an answer on the tolerance's edge
 * (19.9 and 20.1 for 20 within half a percent) is in, on both sides. */
#define ANSWER_ROUNDING 1e-12

/* A wrong answer within this many tolerances of the right one is "close":
 * told by how much, not as a multiple. */
#define ANSWER_CLOSE 10

/* |given - want| <= tol |want|; a tolerance of 0 (a whole count) is exact. */
static bool within(double given, double want, double tol)
{
    if (tol == 0 || want == 0)
        return given == want;
    return fabs(given - want) <= (tol + ANSWER_ROUNDING) * fabs(want);
}

const char *answer_join(const char *number, const QueryUnit *u, char *buf, size_t n)
{
    const char *name = u ? query_unit_name(u) : "";
    snprintf(buf, n, "%s%s%s", number, !name[0] || query_unit_family(u) == UNIT_RATIO ? "" : " ", name);
    return buf;
}

/* A relative distance as a percentage with the fewest significant digits
 * (2 to 6) that tell it from the tolerance: "0.5%" and "0.50003%". */
static const char *percent_text(double rel, double tol, char *buf, size_t n)
{
    char t[32];
    snprintf(t, sizeof t, "%.6g", 100 * tol);
    for (int sig = 2; sig <= 6; sig++) {
        snprintf(buf, n, "%.*g", sig, 100 * rel);
        if (strcmp(buf, t) || sig == 6)
            break;
    }
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, "%%");
    return buf;
}

/* How far a wrong answer is, in words: a multiple where it is far; where
 * it is close, by how much and what is close enough; a whole count by how
 * many, since it is right only exactly. */
static void off_words(AnswerVerdict *v, double truth, double tol, bool exact_count)
{
    double diff = v->given - truth;
    const char *side = diff > 0 ? "above" : "below";
    bool close = fabs(v->off - 1) < ANSWER_CLOSE * tol;
    if (exact_count && (truth == 0 || close)) {
        char num[48];
        if (fabs(diff) == floor(fabs(diff)) && fabs(diff) < 1e30)
            u128_str(num, sizeof num, (u128)fabs(diff), true);
        else
            snprintf(num, sizeof num, "%.6g", fabs(diff));
        snprintf(v->off_text, sizeof v->off_text, "is %s %s than the answer: a count is right only exactly", num,
                 diff > 0 ? "more" : "less");
    } else if (truth == 0) {
        snprintf(v->off_text, sizeof v->off_text, "is %s the answer", side);
    } else if (!close) {
        snprintf(v->off_text, sizeof v->off_text, "is %.3g times the answer", v->off);
    } else {
        char p[32], t[32];
        percent_text(fabs(diff / truth), tol, p, sizeof p);
        snprintf(t, sizeof t, "%.6g%%", 100 * tol);
        snprintf(v->off_text, sizeof v->off_text, "is %s %s the answer; within %s is right", p, side, t);
    }
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
        return error_set(e, "the answer is a %s (%s%s), but '%s' is a %s", query_family_name(query_unit_family(asked)),
                         query_unit_name(asked)[0] ? "in " : "a plain number", query_unit_name(asked), a->unit_text,
                         query_family_name(query_unit_family(a->unit)));
    *out = a->value * q_to_double(one);
    return 0;
}

int answer_check(const Query *q, const QueryUnit *asked, double tol, const Answer *a, AnswerVerdict *v,
                 Error *e)
{
    memset(v, 0, sizeof *v);
    /* "20 GiB per token" is not the whole cache, nor "320 KiB" per element. */
    const char *suffix = PER_METRIC_SUFFIX[a->per], *id = metric_id(q->metric);
    if (suffix && (strlen(id) < strlen(suffix) || strcmp(id + strlen(id) - strlen(suffix), suffix)))
        return error_set(e, "the question asks for %s (%s), but a figure per %s was given", metric_id(q->metric),
                         metric_help(q->metric), PER_NAME[a->per]);
    QueryValue t;
    if (query_eval(q, &t, e) || query_convert(t.exact, q->unit, asked, &v->truth, e) ||
        answer_in(a, asked, &v->given, e))
        return -1;
    double truth = q_to_double(v->truth);
    query_value_text(v->truth, t.never, asked, q->digits, v->truth_text, sizeof v->truth_text);
    const QueryUnit *shown = a->unit ? a->unit : asked;
    answer_join(a->number, shown, v->given_text, sizeof v->given_text);
    v->off = truth ? v->given / truth : 0;
    /* A whole count (slots, tokens) is answered exactly: 71.2 slots is not 71. */
    bool exact_count = query_unit_family(asked) == UNIT_COUNT && v->truth.num % v->truth.den == 0;
    double asked_tol = tol;
    if (exact_count)
        tol = 0;
    v->correct = !t.never && within(v->given, truth, tol);
    if (v->correct)
        return 0;
    off_words(v, truth, asked_tol, exact_count);
    /* Every model with each of its variants; one mistake, then two (of two
     * models) at once; the first that matches is named, so a single
     * explanation is preferred over a pair. */
    static struct {
        const MistakeModel *m;
        size_t variant;
    } cand[N_MISTAKES + 64];
    size_t nc = 0;
    for (size_t i = 0; i < N_MISTAKES; i++)
        for (size_t k = 0; k < mistake_variants(&MISTAKES[i]) && nc < sizeof cand / sizeof cand[0]; k++) {
            cand[nc].m = &MISTAKES[i];
            cand[nc++].variant = k;
        }
    for (size_t n = 1; n <= VERDICT_MISTAKES_MAX && !v->n_mistakes; n++)
        for (size_t i = 0; i < nc && !v->n_mistakes; i++)
            for (size_t j = n == 1 ? i : i + 1; j < (n == 1 ? i + 1 : nc) && !v->n_mistakes; j++) {
                if (n > 1 && cand[i].m == cand[j].m)
                    continue;
                const MistakeModel *ms[2] = {cand[i].m, cand[j].m};
                size_t vs[2] = {cand[i].variant, cand[j].variant};
                Q x;
                int rc = mistake_value(q, ms, vs, n, asked, &x, e);
                if (rc < 0)
                    return -1;
                double mv = rc ? q_to_double(x) : 0;
                if (rc && !within(mv, truth, tol) && within(v->given, mv, tol)) {
                    v->n_mistakes = n;
                    v->mistakes[0] = ms[0];
                    v->mistakes[1] = n > 1 ? ms[1] : NULL;
                    v->variants[0] = vs[0];
                    v->variants[1] = n > 1 ? vs[1] : 0;
                    /* in the learner's unit, to the places the learner gave */
                    Q shown_x;
                    char num[64];
                    if (query_convert(x, asked, shown, &shown_x, e))
                        return -1;
                    metric_value_text(shown_x, false, a->decimals, false, num, sizeof num);
                    answer_join(num, shown, v->mistaken_text, sizeof v->mistaken_text);
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
