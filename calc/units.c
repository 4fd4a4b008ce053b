/* units.c - see units.h. */
#include "units.h"

#include "ascii.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Unit tables: adding a unit is adding a row.
 */

typedef struct {
    const char *name;
    u128 factor;
} Unit;

static const Unit SIZE_UNITS[] = {
    {"B", 1},
    {"KB", 1000},          {"KiB", KIB},
    {"MB", 1000000},       {"MiB", MIB},
    {"GB", 1000000000},    {"GiB", GIB},
    {"TB", 1000000000000}, {"TiB", TIB},
};

static const Unit CONTEXT_UNITS[] = {
    {"", 1}, {"k", 1024}, {"M", 1048576},
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
 * Decimal numbers: "21.47" -> mantissa 2147, 2 places. No strtod, so no
 * locale and no binary rounding.
 */

typedef struct {
    u128 mantissa;
    unsigned places;     // digits after the point
    const char *rest;    // first character after the number
} Decimal;

static int decimal_parse(const char *s, Decimal *d, const char *what, Error *e)
{
    const char *p = s;
    u128 m = 0;
    unsigned places = 0, digits = 0;
    bool point = false;
    while (*p == ' ')
        p++;
    if (*p == '-')
        return error_set(e, "%s '%s' is negative; expected a positive number", what, s);
    if (*p == '+')
        p++;
    for (;; p++) {
        if (*p >= '0' && *p <= '9') {
            if (!ck_mul(m, 10, &m) || !ck_add(m, (u128)(*p - '0'), &m))
                return error_set(e, "%s '%s' is too large (overflow)", what, s);
            digits++;
            if (point)
                places++;
            if (places > 30)
                return error_set(e, "%s '%s' has too many decimal places", what, s);
        } else if (*p == '.' && !point) {
            point = true;
        } else {
            break;
        }
    }
    if (digits == 0)
        return error_set(e, "%s '%s' is not a number", what, s);
    /* An exponent, as JSON writes numbers: 1e-9, 2.5E3. */
    if ((*p == 'e' || *p == 'E') &&
        ((p[1] >= '0' && p[1] <= '9') || ((p[1] == '-' || p[1] == '+') && p[2] >= '0' && p[2] <= '9'))) {
        bool neg = p[1] == '-';
        p += (p[1] == '-' || p[1] == '+') ? 2 : 1;
        int x = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            if ((x = x * 10 + (*p - '0')) > 60)
                return error_set(e, "%s '%s' has an exponent out of range", what, s);
        if (neg) {
            places += (unsigned)x;
        } else {
            for (; x > 0 && places > 0; x--)
                places--;
            for (; x > 0; x--)
                if (!ck_mul(m, 10, &m))
                    return error_set(e, "%s '%s' is too large (overflow)", what, s);
        }
        if (places > 60)
            return error_set(e, "%s '%s' has too many decimal places", what, s);
    }
    while (*p == ' ')
        p++;
    d->mantissa = m;
    d->places = places;
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

/* mantissa x factor / 10^places, dropping any fraction below 1. */
static int decimal_scale(const Decimal *d, u128 factor, u128 *out,
                         const char *what, const char *s, Error *e)
{
    u128 v;
    if (!ck_mul(d->mantissa, factor, &v))
        return error_set(e, "%s '%s' is too large (overflow)", what, s);
    *out = v / pow10_u128(d->places);
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
            return error_set(e, "rate '%s' needs a unit per second, e.g. 3.35TB/s or 3352GB/s", s);
        while (ul && d.rest[ul - 1] == ' ')
            ul--;
        if (!ul)
            return error_set(e, "rate '%s' needs a unit of bytes, e.g. 3.35TB/s or 3352GB/s", s);
    }
    if (ul >= sizeof unit)
        return error_set(e, "%s '%s' has an unknown unit", what, s);
    memcpy(unit, d.rest, ul);
    unit[ul] = '\0';
    /* Prefixes in any case (kib = KiB), but a lowercase b means bits. */
    if (ul && unit[ul - 1] == 'b') {
        char fix[16];
        snprintf(fix, sizeof fix, "%.*sB", (int)(ul - 1), unit);
        if (fix[0] >= 'a' && fix[0] <= 'z')
            fix[0] = (char)(fix[0] - 'a' + 'A');
        return error_set(e, "%s '%s': '%s' would be bits; kvlab counts bytes (write %s)", what, s,
                         unit, fix);
    }
    const Unit *u = ul ? unit_find(SIZE_UNITS, N_OF(SIZE_UNITS), unit) : &SIZE_UNITS[0];
    if (!u) {
        char list[128];
        unit_list(list, sizeof list, SIZE_UNITS, N_OF(SIZE_UNITS));
        return error_set(e, "%s '%s' has an unknown unit '%s'; expected one of %s%s",
                         what, s, unit, list, rate ? " followed by /s" : "");
    }
    if (u->factor == 1 && d.places && d.mantissa % pow10_u128(d.places) != 0)
        return error_set(e, "%s '%s' is not a whole number of bytes", what, s);
    if (decimal_scale(&d, u->factor, out, what, s, e))
        return -1;
    if (*out == 0)
        return error_set(e, "%s '%s' is %s; expected at least 1 byte", what, s,
                         d.mantissa ? "less than a byte" : "zero");
    return 0;
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
                            "like 8192, 8k or 128K", s, d.rest);
    u128 v, exact;
    if (!ck_mul(d.mantissa, u->factor, &exact))
        return error_set(e, "context '%s' is too large (overflow)", s);
    v = exact / pow10_u128(d.places);
    if (v * pow10_u128(d.places) != exact)
        return error_set(e, "context '%s' is not a whole number of tokens", s);
    if (v == 0)
        return error_set(e, "context '%s' is zero; expected at least 1 token", s);
    if (v > UINT64_MAX)
        return error_set(e, "context '%s' is too large (overflow)", s);
    *tokens = (uint64_t)v;
    return 0;
}

int units_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *v,
                      Error *e)
{
    Decimal d;
    if (decimal_parse(s, &d, "value", e))
        return -1;
    if (d.places || *d.rest)
        return error_set(e, "'%s' is not a whole number", s);
    if (d.mantissa < min || d.mantissa > max)
        return error_set(e, "'%s' is out of range; expected %llu to %llu", s,
                         (unsigned long long)min, (unsigned long long)max);
    *v = (uint64_t)d.mantissa;
    return 0;
}

int units_parse_fraction(const char *s, Q *q, Error *e)
{
    Decimal d;
    if (decimal_parse(s, &d, "fraction", e))
        return -1;
    if (*d.rest)
        return error_set(e, "fraction '%s' is not a number between 0 and 1", s);
    Q r = q_make(d.mantissa, pow10_u128(d.places));
    if (r.num == 0 || r.num > r.den)
        return error_set(e, "fraction '%s' is out of range; expected more than 0 and at most 1", s);
    *q = r;
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
static const Unit DECIMAL[] = {{"B", 1}, {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000},
                               {"TB", 1000000000000}};

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
