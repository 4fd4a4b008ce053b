/* fuzz_units.c - the unit parsers of calc/units.h (sizes, rates, contexts,
 * counts, fractions) on one argument, and their printers on every value
 * they accept: what one prints, the other reads back. */
#include "fuzz.h"

#include "units.h"

static bool reparse_size(const char *s, bool rate, u128 *v, Error *e)
{
    return (rate ? units_parse_rate(s, v, e) : units_parse_size(s, v, e)) == 0;
}

/* A size or rate: read back exactly when printed in bytes or in a unit that
 * divides it, and within the printer's rounding in the units it chooses
 * (half its last decimal, and the fraction of a byte the parser drops),
 * unless that rounding took the printed value past the largest size. */
static void check_size(u128 v, bool rate)
{
    static const u128 UNITS[] = {KIB, MIB, GIB, TIB, 1000, 1000000, GB, (u128)1000 * GB};
    static const char *const NAMES[] = {"KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB"};
    const char *per = rate ? "/s" : "";
    char buf[128], num[64];
    u128 back;
    Error e;
    snprintf(buf, sizeof buf, "%sB%s", u128_str(num, sizeof num, v, false), per);
    FUZZ_CHECK(reparse_size(buf, rate, &back, &e) && back == v, "'%s': %s", buf, e.msg);
    for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++)
        if (v % UNITS[i] == 0) {
            snprintf(buf, sizeof buf, "%s %s%s", u128_str(num, sizeof num, v / UNITS[i], false),
                     NAMES[i], per);
            FUZZ_CHECK(reparse_size(buf, rate, &back, &e) && back == v, "'%s': %s", buf, e.msg);
        }
    char dec[128];
    const char *shown[] = {rate ? units_rate(buf, sizeof buf, v) : units_size(buf, sizeof buf, v),
                           rate ? NULL : units_size_decimal(dec, sizeof dec, v)};
    for (size_t i = 0; i < 2 && shown[i]; i++) {
        const char *u = strchr(shown[i], ' ');
        FUZZ_CHECK(u != NULL, "'%s' has no unit", shown[i]);
        u128 unit = 1;
        for (size_t k = 0; k < sizeof UNITS / sizeof UNITS[0]; k++)
            if (strncmp(u + 1, NAMES[k], strlen(NAMES[k])) == 0)
                unit = UNITS[k];
        if (!reparse_size(shown[i], rate, &back, &e)) {
            FUZZ_CHECK(U128_MAX - v <= unit / 2000 + 1, "'%s' printed but not read back: %s",
                       shown[i], e.msg);
            continue;
        }
        u128 diff = back > v ? back - v : v - back;
        FUZZ_CHECK(diff <= unit / 2000 + 1, "'%s' reads back %s bytes away", shown[i],
                   u128_str(num, sizeof num, diff, false));
    }
}

static void check_context(uint64_t t)
{
    char buf[64];
    uint64_t back;
    Error e;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)t);
    FUZZ_CHECK(units_parse_context(buf, &back, &e) == 0 && back == t, "'%s'", buf);
    if (t % 1024 == 0) {
        snprintf(buf, sizeof buf, "%lluk", (unsigned long long)(t / 1024));
        FUZZ_CHECK(units_parse_context(buf, &back, &e) == 0 && back == t, "'%s'", buf);
    }
    FUZZ_CHECK(units_context(buf, sizeof buf, t)[0] != '\0', "empty");
}

FUZZ_TARGET(units)
{
    char *s = fuzz_string(data, size);
    u128 v;
    uint64_t t;
    Q q;
    Error e;
    if (units_parse_size(s, &v, &e) == 0) {
        FUZZ_CHECK(v >= 1, "size 0 from '%s'", s);
        check_size(v, false);
    }
    if (units_parse_rate(s, &v, &e) == 0) {
        FUZZ_CHECK(v >= 1, "rate 0 from '%s'", s);
        check_size(v, true);
    }
    if (units_parse_context(s, &t, &e) == 0) {
        FUZZ_CHECK(t >= 1, "context 0 from '%s'", s);
        check_context(t);
    }
    if (units_parse_count(s, 0, UINT64_MAX, &t, &e) == 0) {
        char buf[32];
        uint64_t back;
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)t);
        FUZZ_CHECK(units_parse_count(buf, 0, UINT64_MAX, &back, &e) == 0 && back == t, "'%s'", buf);
        FUZZ_CHECK(units_parse_count(s, t, t, &back, &e) == 0 && back == t, "range [t, t]");
    }
    if (units_parse_fraction(s, &q, &e) == 0)
        FUZZ_CHECK(q.den > 0 && q.num > 0 && q.num <= q.den, "fraction out of (0, 1] from '%s'", s);
    free(s);
    return 0;
}
