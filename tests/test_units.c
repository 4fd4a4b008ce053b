/* test_units.c - sizes, rates and contexts parse exactly, refuse nonsense
 * with a message naming the text, and print in both unit systems. */
#include "testutil.h"

#include "units.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static u128 size_of(const char *s)
{
    u128 v = 0;
    Error e;
    ck_assert_msg(units_parse_size(s, &v, &e) == 0, "%s: %s", s, e.msg);
    return v;
}

/* Every accepted spelling gives the exact byte count. */
START_TEST(sizes_fixed)
{
    ck_assert(size_of("20GiB") == (u128)20 << 30);
    ck_assert(size_of("20 GiB") == (u128)20 << 30);
    ck_assert(size_of("20giB") == (u128)20 << 30);       // prefixes in any case
    ck_assert(size_of("1e3") == 1000 && size_of("2.5E3KB") == 2500000);
    ck_assert(size_of("21.47GB") == 21470000000u);
    ck_assert(size_of("512MiB") == (u128)512 << 20);
    ck_assert(size_of("4096") == 4096);
    ck_assert(size_of("4096B") == 4096);
    ck_assert(size_of("1.5TB") == 1500000000000u);
    ck_assert(size_of("2TiB") == (u128)2 << 40);
    ck_assert(size_of("1KB") == 1000 && size_of("1KiB") == 1024);
    ck_assert(size_of("0.5KiB") == 512);
    ck_assert(size_of("0.1GiB") == 107374182u);      // the 0.4 byte is dropped
}
END_TEST

/* Nonsense is refused and the message quotes the text, '' for none. */
START_TEST(sizes_refused)
{
    static const char *const BAD[] = {"", "GiB", "-5GiB", "20XB", "20 GiBs", "1.2.3GB", "0",
                                      "0GiB", "99999999999999999999999999999999999999999TiB",
                                      "20Gb", "20gib", "1.5", "0.0001KB"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        u128 v;
        Error e;
        char quoted[128];
        snprintf(quoted, sizeof quoted, "'%s'", BAD[i]);
        ck_assert_msg(units_parse_size(BAD[i], &v, &e) == -1, "%s accepted", quoted);
        ck_assert_msg(strstr(e.msg, quoted) != NULL, "message '%s' does not quote %s", e.msg, quoted);
    }
    u128 v;
    Error e;
    units_parse_size("99999999999999999999999999999999999999999TiB", &v, &e);
    ck_assert_msg(strstr(e.msg, "overflow") != NULL, "%s", e.msg);
}
END_TEST

/* Each refusal says what is wrong with the number as written: a whole
 * number of 40 digits is out of range (not "not a whole number"), one with
 * a digit past the 38 kept after the point is not whole; a fraction of one
 * digit below 1e-38 is too small to compute with (not "too many digits"),
 * one with 39 decimal places has too many; an exponent any number of
 * digits long is read, and refused only where the number is not 0; a text
 * longer than QUOTE_MAX (48) bytes is quoted by its start. */
START_TEST(refusals_say_why)
{
    static const struct {
        int kind;                   // 0 count (1 to 100), 1 fraction
        const char *text, *why;
    } T[] = {
        {0, "1234567890123456789012345678901234567890", "is out of range; expected 1 to 100"},
        {0, "12345678901234567890123456789012345678901.5", "is out of range"},
        {0, "1.0000000000000000000000000000000000000001", "is not a whole number"},
        {0, "0e99999999999999999999", "'0e99999999999999999999' is out of range"},
        {0, "1e99999999999999999999", "has an exponent out of range"},
        {1, "1e-39", "'1e-39' is below 1e-38, the smallest kvlab computes with"},
        {1, "0.00000000000000000000000000000000000000009", "is below 1e-38"},
        {1, "0.123456789012345678901234567890123456789", "has more than 38 decimal places"},
        {1, "0.12345678901234567890123456789012345678901", "has more than 38 significant digits"},
        {1, "1.5e0", "'1.5e0' is out of range"},
        {0, "1000000000000000000000000000000000000000000000000000000000000",
         "'100000000000000000000000000000000000000000000000...' is out of range"},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        uint64_t v;
        Q q;
        Error e;
        int rc = T[i].kind ? units_parse_fraction(T[i].text, &q, &e) : units_parse_count(T[i].text, 1, 100, &v, &e);
        ck_assert_msg(rc == -1 && strstr(e.msg, T[i].why), "%s: want '%s' in '%s'", T[i].text, T[i].why,
                      rc ? e.msg : "accepted");
    }
    Q q;
    ck_assert_int_eq(units_parse_fraction("1e-38", &q, NULL), 0);
    ck_assert_int_eq(units_parse_fraction("0.12345678901234567890123456789012345678", &q, NULL), 0);
}
END_TEST

/* Rates need a unit of bytes per second, contexts are a whole positive
 * number of tokens (k = 1024, M = 1024^2), counts a whole number in range
 * and fractions at most 1; what breaks a rule is refused. */
START_TEST(rates_and_contexts)
{
    u128 r;
    Error e;
    ck_assert(units_parse_rate("3.35TB/s", &r, &e) == 0 && r == 3350000000000u);
    ck_assert(units_parse_rate("3352GB/s", &r, &e) == 0 && r == 3352000000000u);
    ck_assert(units_parse_rate("900 GiB/s", &r, &e) == 0 && r == (u128)900 << 30);
    ck_assert(units_parse_rate("3.35TB", &r, &e) == -1 && strstr(e.msg, "per second"));
    ck_assert(units_parse_rate("3352", &r, &e) == -1 && strstr(e.msg, "per second"));
    ck_assert(units_parse_rate("3.35Tb/s", &r, &e) == -1 && strstr(e.msg, "bits"));
    uint64_t t;
    ck_assert(units_parse_context("8192", &t, &e) == 0 && t == 8192);
    ck_assert(units_parse_context("8k", &t, &e) == 0 && t == 8192);
    ck_assert(units_parse_context("128K", &t, &e) == 0 && t == 131072);
    ck_assert(units_parse_context("1M", &t, &e) == 0 && t == 1048576);
    ck_assert(units_parse_context("1.5k", &t, &e) == 0 && t == 1536);
    ck_assert(units_parse_context("0.3k", &t, &e) == -1 && strstr(e.msg, "whole"));
    ck_assert(units_parse_context("0", &t, &e) == -1);
    ck_assert(units_parse_context("8q", &t, &e) == -1 && strstr(e.msg, "8q"));
    ck_assert(units_parse_context("99999999999999999999999", &t, &e) == -1);
    uint64_t c;
    ck_assert(units_parse_count("16", 1, 100, &c, &e) == 0 && c == 16);
    ck_assert(units_parse_count("0", 1, 100, &c, &e) == -1 && strstr(e.msg, "range"));
    ck_assert(units_parse_count("1.5", 1, 100, &c, &e) == -1);
    Q q;
    ck_assert(units_parse_fraction("0.9", &q, &e) == 0 && q.num * 10 == q.den * 9);
    ck_assert(units_parse_fraction("1.5", &q, &e) == -1);
}
END_TEST

/* Random sizes printed as plain bytes, as a whole number of any unit, and
 * as a decimal of GB all parse back to the exact value. */
START_TEST(sizes_round_trip_random)
{
    static const struct { const char *u; u128 f; } U[] = {
        {"B", 1}, {"KiB", KIB}, {"MiB", MIB}, {"GiB", GIB}, {"TiB", TIB},
        {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000}, {"TB", 1000000000000}};
    Rng r = {test_seed() ^ 0x77};
    for (int i = 0; i < 20000; i++) {
        char buf[96];
        uint64_t n = rng_range(&r, 1, (uint64_t)1 << (rng_range(&r, 1, 50)));
        size_t k = (size_t)rng_range(&r, 0, 8);
        snprintf(buf, sizeof buf, "%llu%s%s", (unsigned long long)n, i % 2 ? " " : "", U[k].u);
        ck_assert_msg(size_of(buf) == (u128)n * U[k].f, "%s", buf);
        /* n bytes as GB with 9 decimals is exact. */
        char gb[64];
        q_str(gb, sizeof gb, q_make(n, 1000000000), 9, false);
        snprintf(buf, sizeof buf, "%sGB", gb);
        ck_assert_msg(size_of(buf) == n, "%s", buf);
    }
}
END_TEST

/* A number means its exact decimal value however it is written: zeros
 * before or after its digits and an exponent that cancels them cost no
 * precision, so only a value that does not fit (or, for plain bytes, is not
 * whole) is refused, never one whose intermediate product overflows. */
START_TEST(decimals_exact)
{
    ck_assert(size_of("20000000000000000000000000000000e-30GiB") == (u128)20 << 30);
    ck_assert(size_of("0.00000000000000000000000000000000000000000000000002e50") == 2);
    ck_assert(size_of("340282366920938463463374607431768211455") == U128_MAX);
    ck_assert(size_of("1.5e0KiB") == 1536 && size_of("15e-1KiB") == 1536);
    uint64_t t;
    Error e;
    ck_assert(units_parse_context("128000e-3k", &t, &e) == 0 && t == 131072);
    ck_assert(units_parse_count("16.000", 1, 100, &t, &e) == 0 && t == 16);
    Q q;
    ck_assert(units_parse_fraction("0.90000000000000000000000000000000000000000000000", &q, &e) == 0 &&
              q.num * 10 == q.den * 9);
    u128 v;
    ck_assert(units_parse_size("1.00000000000000000000000000000000000000001GiB", &v, &e) == -1 &&
              strstr(e.msg, "38 significant digits"));
    ck_assert(units_parse_size("3402823669209384634633746074317682114560", &v, &e) == -1 &&
              strstr(e.msg, "overflow"));
    ck_assert(units_parse_size("1e-100000GiB", &v, &e) == -1 && strstr(e.msg, "less than a byte"));
    ck_assert(units_parse_size("20.5e-1", &v, &e) == -1 && strstr(e.msg, "whole number of bytes"));
    /* random bytes n x unit written with z zeros and an exponent of -z, and
     * as 0.000n with the exponent that puts the point back */
    static const struct { const char *u; u128 f; } U[] = {
        {"B", 1}, {"KiB", KIB}, {"GiB", GIB}, {"TiB", TIB}, {"GB", 1000000000}, {"TB", 1000000000000}};
    Rng r = {test_seed() ^ 0xDEC};
    for (int i = 0; i < 2000; i++) {
        uint64_t n = rng_range(&r, 1, (uint64_t)1 << rng_range(&r, 1, 63));
        size_t k = (size_t)rng_range(&r, 0, N_OF(U) - 1);
        int z = (int)rng_range(&r, 0, 80);
        char digits[32], buf[256];
        int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
        snprintf(buf, sizeof buf, "%s%0*de-%d%s", digits, z, 0, z, U[k].u);
        if (!z)
            snprintf(buf, sizeof buf, "%s%s", digits, U[k].u);
        ck_assert_seeded(size_of(buf) == (u128)n * U[k].f, "%s", buf);
        snprintf(buf, sizeof buf, "0.%0*d%se%d%s", z, 0, digits, z + len, U[k].u);
        if (!z)
            snprintf(buf, sizeof buf, "0.%se%d%s", digits, len, U[k].u);
        ck_assert_seeded(size_of(buf) == (u128)n * U[k].f, "%s", buf);
    }
}
END_TEST

/* Parsing and printing ignore LC_NUMERIC: under de_DE.UTF-8, whose
 * decimal point is ',' (make test compiles it into build/locale), "21.47GB"
 * still means 21,470,000,000 bytes and fractions print with '.'. */
START_TEST(locale_independent)
{
    const char *got = setlocale(LC_ALL, "de_DE.UTF-8");
    ck_assert_msg(got != NULL, "locale de_DE.UTF-8 is missing: run the tests with make test, "
                               "which builds it with localedef");
    ck_assert_str_eq(localeconv()->decimal_point, ",");
    ck_assert(size_of("21.47GB") == 21470000000u);
    char b[64];
    ck_assert_str_eq(units_gib(b, sizeof b, (u128)3 << 29, 2), "1.50 GiB");
    setlocale(LC_ALL, "C");
}
END_TEST

/* Sizes, rates and contexts print in the unit and form the lab shows. */
START_TEST(printing)
{
    char b[64];
    ck_assert_str_eq(units_gib(b, sizeof b, (u128)16 << 30, 1), "16.0 GiB");
    ck_assert_str_eq(units_gb(b, sizeof b, (u128)16 << 30, 2), "17.18 GB");
    ck_assert_str_eq(units_size(b, sizeof b, (u128)512 << 20), "512 MiB");
    ck_assert_str_eq(units_size(b, sizeof b, (u128)3 << 29), "1.5 GiB");
    ck_assert_str_eq(units_rate(b, sizeof b, 3352000000000u), "3.352 TB/s");
    ck_assert_str_eq(units_rate(b, sizeof b, 300000000000u), "300 GB/s");
    ck_assert_str_eq(units_context(b, sizeof b, 131072), "131,072 (128k)");
    ck_assert_str_eq(units_context(b, sizeof b, 1000), "1,000");
}
END_TEST

/* A measured rate prints with three significant digits in the decimal unit
 * that puts it in [1, 1000), and reads back to within half a unit of its
 * last digit (a relative 0.5%); fixed cases and random rates from 1 B/s to
 * 10 TB/s. */
START_TEST(measured_rates)
{
    static const struct { double v; const char *s; } FIXED[] = {
        {27e6, "27.0 MB/s"},      {433.2e6, "433 MB/s"},    {1.234e12, "1.23 TB/s"},
        {999.4e6, "999 MB/s"},    {999.6e6, "1.00 GB/s"},   {9.996e9, "10.0 GB/s"},
        {5, "5.00 B/s"},          {0, "0 B/s"},             {-1, "? B/s"},
        {NAN, "? B/s"},           {4.5e15, "4500 TB/s"},
    };
    char b[64];
    for (size_t i = 0; i < N_OF(FIXED); i++)
        ck_assert_str_eq(units_rate_measured(b, sizeof b, FIXED[i].v), FIXED[i].s);
    Rng r = {test_seed() ^ 0x8A7E};
    for (int i = 0; i < 20000; i++) {
        double v = pow(10, (double)rng_range(&r, 0, 13000) / 1000);
        units_rate_measured(b, sizeof b, v);
        int digits = 0;
        for (const char *p = b; *p != ' '; p++)
            digits += *p >= '0' && *p <= '9';
        ck_assert_seeded(digits == 3 && atof(b) >= 1 && atof(b) < 1000, "%g B/s printed as %s", v, b);
        char unit[64];          // "1 MB/s": what the unit is worth
        u128 factor;
        Error e;
        snprintf(unit, sizeof unit, "1%s", strchr(b, ' '));
        ck_assert_seeded(units_parse_rate(unit, &factor, &e) == 0, "%s: %s", b, e.msg);
        ck_assert_seeded(fabs(atof(b) * (double)factor - v) <= 0.005 * v, "%g B/s printed as %s", v, b);
    }
}
END_TEST

/* A context shows its "k" form only where that form is exact and cannot
 * be read as a round thousand: 128,000 tokens is not "125k". The form
 * shown parses back to the same count, and the short form is the k form
 * or the grouped number. */
START_TEST(context_k_form)
{
    char b[64], k[64];
    ck_assert_str_eq(units_context(b, sizeof b, 128000), "128,000");
    ck_assert_str_eq(units_context(b, sizeof b, 8192), "8,192 (8k)");
    ck_assert_str_eq(units_context(b, sizeof b, 1024000), "1,024,000");
    ck_assert_str_eq(units_context(b, sizeof b, 8193), "8,193");
    ck_assert_str_eq(units_context_short(b, sizeof b, 131072), "128k");
    ck_assert_str_eq(units_context_short(b, sizeof b, 128000), "128,000");
    ck_assert_str_eq(units_context_short(b, sizeof b, 3815), "3,815");
    Rng g = {test_seed() ^ 0xC0DE};
    for (int i = 0; i < 20000; i++) {
        uint64_t t = i % 2 ? rng_range(&g, 1, 1u << 24) : 1024 * rng_range(&g, 1, 1u << 14);
        units_context(b, sizeof b, t);
        const char *open = strchr(b, '(');
        bool shown = open != NULL;
        ck_assert_seeded(shown == (t % 1024 == 0 && t % 1000 != 0), "%llu: %s", (unsigned long long)t, b);
        units_context_short(k, sizeof k, t);
        if (shown) {
            uint64_t back;
            ck_assert_seeded(units_parse_context(k, &back, NULL) == 0 && back == t, "%s", k);
            ck_assert_seeded(strncmp(open + 1, k, strlen(k)) == 0, "%s beside %s", k, b);
        } else {
            ck_assert_seeded(strcmp(k, b) == 0, "%s against %s", k, b);
        }
    }
}
END_TEST

Suite *suite_units(void)
{
    Suite *s = suite_create("units");
    TCase *t = tcase_create("core");
    tcase_add_test(t, sizes_fixed);
    tcase_add_test(t, sizes_refused);
    tcase_add_test(t, refusals_say_why);
    tcase_add_test(t, rates_and_contexts);
    tcase_add_test(t, sizes_round_trip_random);
    tcase_add_test(t, decimals_exact);
    tcase_add_test(t, locale_independent);
    tcase_add_test(t, printing);
    tcase_add_test(t, measured_rates);
    tcase_add_test(t, context_k_form);
    suite_add_tcase(s, t);
    return s;
}
