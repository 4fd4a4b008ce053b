/* units.c - see units.h. */
#include "units.h"

#include "ascii.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Unit tables: adding a unit is adding a row.
 */

typedef struct {
    const char *name;
    uint64_t factor;
} Unit;

static const Unit SIZE_UNITS[] = {
    {"B", 1},
    {"KB", KB}, {"KiB", KIB},
    {"MB", MB}, {"MiB", MIB},
    {"GB", GB}, {"GiB", GIB},
    {"TB", TB}, {"TiB", TIB},
};

static const Unit CONTEXT_UNITS[] = {
    {"", 1}, {"k", CONTEXT_K}, {"M", CONTEXT_M},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const Unit *unit_find(const Unit *t, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (ascii_ieq(t[i].name, name))
            return &t[i];
    return NULL;
}

/* ------------------------------------------------------------------------
 * Decimal numbers: "21.47" -> 2147 x 10^-2, exactly. No strtod, so no
 * locale and no binary rounding; zeros cost no precision, so
 * "20000000000000000000000000000000e-30" is 20 as surely as "20" is.
 */

typedef struct {
    u128 mantissa;       // the significant digits, trailing zeros moved into exp10
    long exp10;          // value = mantissa x 10^exp10
    bool lost;           // more significant digits than mantissa holds: the
                         // value lies in [mantissa, mantissa + 1) x 10^exp10
    bool lost_fraction;  // the first digit lost (never 0) lies after the point
    const char *rest;    // first character after the number
} Decimal;

/* Beyond any text kvlab reads (data files are at most 1 MiB), so exp10
 * cannot overflow a long. */
#define EXPONENT_MAX 100000L

/* A text as a message quotes it: whole up to QUOTE_MAX bytes, else its
 * start (cut between characters) and "...", since a number may run to a
 * data file's megabyte. The array lives until the end of the call it is an
 * argument of. */
#define QUOTE_MAX 48
typedef struct {
    char text[QUOTE_MAX + 4];
} Quoted;

static Quoted quoted(const char *s)
{
    Quoted q;
    size_t n = strlen(s);
    if (n <= QUOTE_MAX) {
        memcpy(q.text, s, n + 1);
        return q;
    }
    n = QUOTE_MAX;
    while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    snprintf(q.text, sizeof q.text, "%.*s...", (int)n, s);
    return q;
}

static int decimal_parse(const char *s, Decimal *d, const char *what, Error *e)
{
    const char *p = s;
    u128 m = 0;
    long exp10 = 0, zeros = 0;      // zeros: digits 0 not yet multiplied into m
    unsigned digits = 0;
    bool point = false, lost = false, lost_fraction = false;
    while (*p == ' ')
        p++;
    if (*p == '-')
        return error_set(e, "%s '%s' is negative; expected a positive number", what, quoted(s).text);
    if (*p == '+')
        p++;
    for (;; p++) {
        if (*p >= '0' && *p <= '9') {
            digits++;
            if (point)
                exp10--;
            if (lost) {                 // past the digits kept: only its place counts
                exp10++;
                continue;
            }
            if (*p == '0') {
                zeros++;
                continue;
            }
            u128 t = m;
            bool fits = true;
            for (long k = 0; k <= zeros && t && fits; k++)
                fits = u128_mul_ok(t, 10, &t);
            if (fits && u128_add_ok(t, (u128)(*p - '0'), &t)) {
                m = t;
            } else {
                lost = true;            // this digit (not 0) and every one after it
                lost_fraction = point;
                exp10 += zeros + 1;
            }
            zeros = 0;
        } else if (*p == '.' && !point) {
            point = true;
        } else {
            break;
        }
    }
    if (digits == 0)
        return error_set(e, "%s '%s' is not a number", what, quoted(s).text);
    exp10 += zeros;
    /* An exponent, as JSON writes numbers: 1e-9, 2.5E3; any number of its
     * digits is read, and one beyond EXPONENT_MAX is refused unless the
     * number is 0. */
    if ((*p == 'e' || *p == 'E') &&
        ((p[1] >= '0' && p[1] <= '9') || ((p[1] == '-' || p[1] == '+') && p[2] >= '0' && p[2] <= '9'))) {
        bool neg = p[1] == '-', huge = false;
        p += (p[1] == '-' || p[1] == '+') ? 2 : 1;
        long x = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            if (!huge && (x = x * 10 + (*p - '0')) > EXPONENT_MAX)
                huge = true;
        if (huge && m)
            return error_set(e, "%s '%s' has an exponent out of range", what, quoted(s).text);
        exp10 += huge ? 0 : neg ? -x : x;
    }
    while (*p == ' ')
        p++;
    d->mantissa = m;
    d->exp10 = m ? exp10 : 0;
    d->lost = lost;
    d->lost_fraction = lost_fraction;
    d->rest = p;
    return 0;
}

static u128 pow10_u128(unsigned k)
{
    u128 r = 1;
    while (k--) {
        if (r > U128_MAX / 10)
            return U128_MAX;        // far beyond any mantissa: the quotient is 0
        r *= 10;
    }
    return r;
}

/* A 192-bit number, least significant word first: a 128-bit mantissa
 * times a 64-bit unit factor, before the division by a power of ten. */
typedef struct {
    uint64_t w[3];
} Wide;

static Wide wide_mul(u128 a, uint64_t b)
{
    u128 lo = (u128)(uint64_t)a * b, hi = (u128)(uint64_t)(a >> 64) * b;
    u128 mid = (lo >> 64) + (uint64_t)hi;
    return (Wide){{(uint64_t)lo, (uint64_t)mid, (uint64_t)(hi >> 64) + (uint64_t)(mid >> 64)}};
}

/* n /= d; returns the remainder. */
static uint64_t wide_div(Wide *n, uint64_t d)
{
    u128 r = 0;
    for (int i = 2; i >= 0; i--) {
        u128 cur = r << 64 | n->w[i];
        n->w[i] = (uint64_t)(cur / d);
        r = cur % d;
    }
    return (uint64_t)r;
}

/* The value of d times factor, exactly: its whole part in *out and whether
 * a fraction was left (*whole false). -1 when the whole part does not fit
 * in 128 bits; 1 when d kept too few digits to tell (d->lost, and the
 * value fits). */
static int decimal_scale(const Decimal *d, uint64_t factor, u128 *out, bool *whole)
{
    *whole = true;
    if (d->exp10 >= 0) {
        u128 v;
        if (!u128_mul_ok(d->mantissa, factor, &v))
            return -1;
        for (long k = 0; k < d->exp10; k++)
            if (!u128_mul_ok(v, 10, &v))
                return -1;
        *out = v;
        return d->lost;
    }
    Wide n = wide_mul(d->mantissa, factor);
    static const uint64_t P19 = 10000000000000000000u;
    for (long k = -d->exp10; k > 0 && (n.w[0] | n.w[1] | n.w[2]); k -= 19) {
        uint64_t p = k >= 19 ? P19 : (uint64_t)pow10_u128((unsigned)k);
        if (wide_div(&n, p))
            *whole = false;
    }
    if (n.w[2])
        return -1;
    *out = (u128)n.w[1] << 64 | n.w[0];
    return d->lost;
}

/* decimal_scale with the messages every parser gives: too large, or more
 * digits than kvlab keeps. */
static int decimal_value(const Decimal *d, uint64_t factor, u128 *out, bool *whole,
                         const char *what, const char *s, Error *e)
{
    int rc = decimal_scale(d, factor, out, whole);
    if (rc < 0)
        return error_set(e, "%s '%s' is too large (overflow)", what, quoted(s).text);
    if (rc > 0)
        return error_set(e, "%s '%s' has more than 38 significant digits", what, quoted(s).text);
    return 0;
}

/* ------------------------------------------------------------------------
 * Parsers
 */

static void unit_list(char *buf, size_t n, const Unit *t, size_t cnt)
{
    buf[0] = '\0';
    for (size_t i = 0; i < cnt; i++) {
        if (!t[i].name[0])
            continue;
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", l ? ", " : "", t[i].name);
    }
}

static int size_like(const char *s, u128 *out, bool rate, Error *e)
{
    const char *what = rate ? "rate" : "size";
    Decimal d;
    if (decimal_parse(s, &d, what, e))
        return -1;
    char unit[16];
    size_t ul = strlen(d.rest);
    while (ul && d.rest[ul - 1] == ' ')
        ul--;
    if (rate) {
        if (ul >= 2 && d.rest[ul - 2] == '/' && ascii_lower(d.rest[ul - 1]) == 's')
            ul -= 2;
        else
            return error_set(e, "rate '%s' needs a unit per second, e.g. 3.35TB/s or 3352GB/s", quoted(s).text);
        while (ul && d.rest[ul - 1] == ' ')
            ul--;
        if (!ul)
            return error_set(e, "rate '%s' needs a unit of bytes, e.g. 3.35TB/s or 3352GB/s", quoted(s).text);
    }
    if (ul >= sizeof unit)
        return error_set(e, "%s '%s' has an unknown unit", what, quoted(s).text);
    memcpy(unit, d.rest, ul);
    unit[ul] = '\0';
    /* Prefixes in any case (kib = KiB), but a lowercase b means bits. */
    if (ul && unit[ul - 1] == 'b') {
        char fix[16];
        snprintf(fix, sizeof fix, "%.*sB", (int)(ul - 1), unit);
        if (fix[0] >= 'a' && fix[0] <= 'z')
            fix[0] = (char)(fix[0] - 'a' + 'A');
        return error_set(e, "%s '%s': '%s' would be bits; kvlab counts bytes (write %s)", what, quoted(s).text,
                         unit, fix);
    }
    const Unit *u = ul ? unit_find(SIZE_UNITS, N_OF(SIZE_UNITS), unit) : &SIZE_UNITS[0];
    if (!u) {
        char list[128];
        unit_list(list, sizeof list, SIZE_UNITS, N_OF(SIZE_UNITS));
        return error_set(e, "%s '%s' has an unknown unit '%s'; expected one of %s%s",
                         what, quoted(s).text, unit, list, rate ? " followed by /s" : "");
    }
    bool whole;
    if (decimal_value(&d, u->factor, out, &whole, what, s, e))
        return -1;
    if (u->factor == 1 && !whole && *out)
        return error_set(e, "%s '%s' is not a whole number of bytes", what, quoted(s).text);
    if (*out == 0)
        return error_set(e, "%s '%s' is %s; expected at least 1 byte", what, quoted(s).text,
                         d.mantissa ? "less than a byte" : "zero");
    return 0;
}

bool units_size_is_bare(const char *s)
{
    Decimal d;
    return decimal_parse(s, &d, "size", NULL) == 0 && !*d.rest;
}

int units_parse_size(const char *s, u128 *bytes, Error *e)
{
    return size_like(s, bytes, false, e);
}

int units_parse_rate(const char *s, u128 *bytes_per_s, Error *e)
{
    return size_like(s, bytes_per_s, true, e);
}

int units_parse_context(const char *s, uint64_t *tokens, Error *e)
{
    Decimal d;
    if (decimal_parse(s, &d, "context", e))
        return -1;
    char suffix[8];
    size_t sl = strlen(d.rest);
    while (sl && d.rest[sl - 1] == ' ')
        sl--;
    const Unit *u = NULL;
    if (sl < sizeof suffix) {
        memcpy(suffix, d.rest, sl);
        suffix[sl] = '\0';
        u = unit_find(CONTEXT_UNITS, N_OF(CONTEXT_UNITS), suffix);
    }
    if (!u)
        return error_set(e, "context '%s' has an unknown suffix '%s'; expected tokens "
                            "like 8192, 8k or 128K", quoted(s).text, quoted(d.rest).text);
    u128 v;
    bool whole;
    if (decimal_value(&d, u->factor, &v, &whole, "context", s, e))
        return -1;
    if (!whole)
        return error_set(e, "context '%s' is not a whole number of tokens", quoted(s).text);
    if (v == 0)
        return error_set(e, "context '%s' is zero; expected at least 1 token", quoted(s).text);
    if (v > UINT64_MAX)
        return error_set(e, "context '%s' is too large (overflow)", quoted(s).text);
    *tokens = (uint64_t)v;
    return 0;
}

int units_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *v,
                      Error *e)
{
    Decimal d;
    if (decimal_parse(s, &d, "value", e))
        return -1;
    u128 n;
    bool whole;
    /* A digit lost (d.lost, never 0) after the point is a fraction; one
     * before it makes 39 digits or more, beyond any max. */
    int rc = *d.rest ? 0 : decimal_scale(&d, 1, &n, &whole);
    if (*d.rest || (rc == 0 && !whole) || (rc > 0 && d.lost_fraction))
        return error_set(e, "'%s' is not a whole number", quoted(s).text);
    if (rc != 0 || n < min || n > max)
        return error_set(e, "'%s' is out of range; expected %llu to %llu", quoted(s).text,
                         (unsigned long long)min, (unsigned long long)max);
    *v = (uint64_t)n;
    return 0;
}

int units_parse_fraction(const char *s, Q *q, Error *e)
{
    Decimal d;
    if (decimal_parse(s, &d, "fraction", e))
        return -1;
    if (*d.rest)
        return error_set(e, "fraction '%s' is not a number between 0 and 1", quoted(s).text);
    if (d.lost)
        return error_set(e, "fraction '%s' has more than 38 significant digits", quoted(s).text);
    /* mantissa x 10^exp10 in (0, 1], kept as mantissa / 10^-exp10, whose
     * denominator fits in 128 bits up to 10^38 */
    if (!d.mantissa || d.exp10 > 0 || (d.exp10 == 0 && d.mantissa > 1))
        return error_set(e, "fraction '%s' is out of range; expected more than 0 and at most 1", quoted(s).text);
    if (d.exp10 < -38) {
        unsigned k = (unsigned)(-38 - d.exp10);            // below 1e-38: mantissa < 10^k
        return error_set(e, k >= 39 || d.mantissa < pow10_u128(k)
                                ? "fraction '%s' is below 1e-38, the smallest kvlab computes with"
                                : "fraction '%s' has more than 38 decimal places",
                         quoted(s).text);
    }
    Q r = q_make(d.mantissa, pow10_u128((unsigned)-d.exp10));
    if (r.num > r.den)
        return error_set(e, "fraction '%s' is out of range; expected more than 0 and at most 1", quoted(s).text);
    *q = r;
    return 0;
}

/* ------------------------------------------------------------------------
 * Floats
 */

/* units_parse_float, and whether strtof found the number beyond a float's
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

bool units_parse_float(const char *s, float *out)
{
    bool overflow;
    return parse_float(s, out, &overflow);
}

int units_parse_finite(const char *s, float *out, Error *e)
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

/* ------------------------------------------------------------------------
 * Printers
 */

const char *units_gib(char *buf, size_t n, u128 bytes, int decimals)
{
    char num[64];
    snprintf(buf, n, "%s GiB", q_str(num, sizeof num, q_make(bytes, GIB), decimals, false));
    return buf;
}

const char *units_gb(char *buf, size_t n, u128 bytes, int decimals)
{
    char num[64];
    snprintf(buf, n, "%s GB", q_str(num, sizeof num, q_make(bytes, GB), decimals, false));
    return buf;
}

/* value / unit for the largest unit of t[] not above value, 3 decimals at
 * most, with a suffix ("/s" for rates). */
static const char *scaled(char *buf, size_t n, u128 v, const Unit *t, size_t cnt, const char *suffix)
{
    size_t i = cnt - 1;
    while (i > 0 && v < t[i].factor)
        i--;
    char num[64];
    snprintf(buf, n, "%s %s%s", q_str(num, sizeof num, q_make(v, t[i].factor), 3, true), t[i].name,
             suffix);
    return buf;
}

static const Unit BINARY[] = {{"B", 1}, {"KiB", KIB}, {"MiB", MIB}, {"GiB", GIB}, {"TiB", TIB}};
static const Unit DECIMAL[] = {{"B", 1}, {"KB", KB}, {"MB", MB}, {"GB", GB}, {"TB", TB}};

const char *units_size(char *buf, size_t n, u128 bytes)
{
    return scaled(buf, n, bytes, BINARY, N_OF(BINARY), "");
}

const char *units_size_decimal(char *buf, size_t n, u128 bytes)
{
    return scaled(buf, n, bytes, DECIMAL, N_OF(DECIMAL), "");
}

const char *units_rate(char *buf, size_t n, u128 bytes_per_s)
{
    return scaled(buf, n, bytes_per_s, DECIMAL, N_OF(DECIMAL), "/s");
}

/* Printed from integers, so that no locale's decimal point gets in. */
const char *units_rate_measured(char *buf, size_t n, double v)
{
    if (!(v > 0)) {
        snprintf(buf, n, "%s B/s", v == 0 ? "0" : "?");
        return buf;
    }
    size_t i = 0;
    while (i + 1 < N_OF(DECIMAL) && v >= (double)DECIMAL[i + 1].factor)
        i++;
    double x = v / (double)DECIMAL[i].factor;
    int whole = x >= 100 ? 3 : x >= 10 ? 2 : 1;             // digits before the point
    long long m = llround(x * pow(10, 3 - whole));          // the three digits
    if (m >= 1000 && whole < 3)                             // 9.996 -> 10.0
        m = llround(x * pow(10, 3 - ++whole));
    if (m >= 1000 && i + 1 < N_OF(DECIMAL))                 // 999.6 MB/s -> 1.00 GB/s
        x /= 1000, i++, whole = 1, m = llround(x * 100);
    if (whole >= 3 || m >= 1000)
        snprintf(buf, n, "%lld %s/s", m >= 1000 ? llround(x) : m, DECIMAL[i].name);
    else if (whole == 2)
        snprintf(buf, n, "%lld.%lld %s/s", m / 10, m % 10, DECIMAL[i].name);
    else
        snprintf(buf, n, "%lld.%02lld %s/s", m / 100, m % 100, DECIMAL[i].name);
    return buf;
}

/* Whether a context has a "k" form to show: a whole number of k (1024
 * tokens) that is not also a round thousand, where "Nk" would read as
 * N,000 tokens. */
static bool has_k_form(uint64_t tokens)
{
    return tokens >= 1024 && tokens % 1024 == 0 && tokens % 1000 != 0;
}

const char *units_context(char *buf, size_t n, uint64_t tokens)
{
    char num[64];
    u128_str(num, sizeof num, tokens, true);
    if (has_k_form(tokens))
        snprintf(buf, n, "%s (%lluk)", num, (unsigned long long)(tokens / 1024));
    else
        snprintf(buf, n, "%s", num);
    return buf;
}

const char *units_context_short(char *buf, size_t n, uint64_t tokens)
{
    if (has_k_form(tokens))
        snprintf(buf, n, "%lluk", (unsigned long long)(tokens / 1024));
    else
        u128_str(buf, n, tokens, true);
    return buf;
}

int units_split_list(const char *s, size_t max, size_t *n,
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
    uint64_t *out;
    int (*fn)(const char *, uint64_t *, Error *);
} U64List;

static int units_u64_item(const char *tok, size_t i, void *ctx, Error *e)
{
    U64List *u = ctx;
    if (u->fn(tok, &u->out[i], e))
        return -1;
    for (size_t j = 0; j < i; j++)      // a list is a set: a repeat is a slip
        if (u->out[j] == u->out[i])
            return error_set(e, "'%s' repeats %llu, listed already", tok, (unsigned long long)u->out[i]);
    return 0;
}

int units_parse_u64s(const char *s, uint64_t *out, size_t max, size_t *n,
                     int (*fn)(const char *, uint64_t *, Error *), Error *e)
{
    U64List u = {out, fn};
    return units_split_list(s, max, n, units_u64_item, &u, e);
}
