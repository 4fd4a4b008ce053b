/* test_exercise.c - answers with units, the mistake models, exercise files
 * checked on load, the progress file and `kvlab exercise`. */
#include "testutil.h"

#include "answer.h"
#include "exercise.h"
#include "progress.h"
#include "units.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A parsed number against the value meant: within this relative error
 * (the parser builds it from decimal digits in double precision). */
#define PARSE_REL_TOL 1e-12

static Answer parsed(const char *text)
{
    Answer a;
    Error e;
    ck_assert_msg(answer_parse(text, &a, &e) == 0, "%s: %s", text, e.msg);
    return a;
}

static void parses_as(const char *text, double value, const char *unit)
{
    Answer a = parsed(text);
    ck_assert_msg(fabs(a.value - value) <= PARSE_REL_TOL * fabs(value), "%s: %.17g, not %.17g", text, a.value,
                  value);
    if (unit)
        ck_assert_msg(a.unit && !strcmp(query_unit_name(a.unit), unit), "%s: unit %s, not %s", text,
                      a.unit ? query_unit_name(a.unit) : "none", unit);
    else
        ck_assert_msg(!a.unit, "%s: a unit where none was written", text);
}

static Query query_of(const char *text)
{
    Query q;
    Error e;
    ck_assert_msg(query_parse(text, &q, &e) == 0, "%s: %s", text, e.msg);
    return q;
}

/* The verdict on answer to query asked in unit; the check must run. */
static AnswerVerdict verdict_of(const char *query, const char *unit, const char *answer)
{
    Query q = query_of(query);
    Answer a = parsed(answer);
    AnswerVerdict v;
    Error e;
    ck_assert_msg(answer_check(&q, query_unit_by_name(unit), ANSWER_TOLERANCE_DEFAULT, &a, &v, &e) == 0, "%s = %s: %s",
                  query, answer, e.msg);
    return v;
}

/* Every spelling the checker promises reads as its number and unit. */
START_TEST(answer_parse_fixed)
{
    parses_as("20 GiB", 20, "GiB");
    parses_as("21.47 GB", 21.47, "GB");
    parses_as("3.55x", 3.55, "x");
    parses_as("3.55 \xc3\x97", 3.55, "x");
    parses_as("71", 71, NULL);
    parses_as("0.5625 B/elem", 0.5625, "B");
    parses_as("320 KiB per token", 320, "KiB");
    parses_as("40,960 B", 40960, "B");
    parses_as("1,048,576", 1048576, NULL);
    parses_as("1.2e3 MB", 1200, "MB");
    parses_as("1.5E-2 s", 0.015, "s");
    parses_as("38%", 38, "%");
    parses_as("  20gib ", 20, "GiB");
    parses_as(".5 ms", 0.5, "ms");
    parses_as("71 slots", 71, "");
    parses_as("8,192 tokens", 8192, "");
    parses_as("42 bytes", 42, "B");
}
END_TEST

/* What is not a number with a unit is refused, the text quoted. */
START_TEST(answer_parse_refused)
{
    static const char *const BAD[] = {"",        "abc",   "20 GiBs", "1,00",  "12,3456", "1,2345,678",
                                      "20 b",    "1e",    "-5",      "20 GiB extra", "GiB", "20 bits",
                                      "0.5 /elem", "3 ms/elem", ",5"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        Answer a;
        Error e;
        ck_assert_msg(answer_parse(BAD[i], &a, &e) == -1, "'%s' accepted", BAD[i]);
        ck_assert_msg(e.msg[0] != '\0', "'%s': no message", BAD[i]);
    }
    Answer a;
    Error e;
    answer_parse("20 bits", &a, &e);
    ck_assert_msg(strstr(e.msg, "is bits; give bytes"), "%s", e.msg);
}
END_TEST

/* An answer is one number and one unit of bytes, nothing after them: an
 * empty answer, a sign, bits (Gb, Mib, bit) and trailing words are refused
 * with a message saying which; all-lower-case gb is bytes, as typed. */
START_TEST(answer_parse_refused_why)
{
    static const struct {
        const char *text, *why;
    } BAD[] = {
        {"", "no answer"},          {"   ", "no answer"},      {"-20", "no sign"},          {"-inf", "no sign"},
        {"+3 GiB", "no sign"},      {"20 Gb", "'Gb' is bits"}, {"20 Mib", "'Mib' is bits"}, {"5 TB", NULL},
        {"1 bit", "'bit' is bits"}, {"20 GiB of KV", "nothing else"}, {"20 GiB per tokens", "nothing else"},
    };
    for (size_t i = 0; i < N_OF(BAD); i++) {
        Answer a;
        Error e;
        if (!BAD[i].why) {
            ck_assert_msg(answer_parse(BAD[i].text, &a, &e) == 0, "'%s': %s", BAD[i].text, e.msg);
            continue;
        }
        ck_assert_msg(answer_parse(BAD[i].text, &a, &e) == -1, "'%s' accepted", BAD[i].text);
        ck_assert_msg(strstr(e.msg, BAD[i].why), "'%s': '%s' lacks '%s'", BAD[i].text, e.msg, BAD[i].why);
    }
    parses_as("20 gb", 20, "GB");
    parses_as("20 kb", 20, "KB");
}
END_TEST

/* A size per element, token or sequence answers only a question about one
 * ("20 GiB per token" is not the whole cache); the message names both. */
START_TEST(answer_check_per)
{
    static const struct {
        const char *query, *answer;
        bool ok;
    } CASES[] = {
        {"gib --model llama-3.1-70b --context 4096 --batch 32", "20 GiB per token", false},
        {"gib --model llama-3.1-70b --context 4096 --batch 32", "20 GiB/seq", false},
        {"bytes_per_token --model llama-3.1-70b", "320 KiB per token", true},
        {"bytes_per_token --model llama-3.1-70b", "320 KiB/elem", false},
        {"bytes_per_element --format int8", "1.0625 B/elem", true},
        {"gib_per_sequence --model llama-3.1-70b --context 4096", "1.25 GiB per sequence", true},
        {"gib_per_sequence --model llama-3.1-70b --context 4096", "1.25 GiB", true},
    };
    for (size_t i = 0; i < N_OF(CASES); i++) {
        Query q = query_of(CASES[i].query);
        Answer a = parsed(CASES[i].answer);
        AnswerVerdict v;
        Error e;
        int rc = answer_check(&q, q.unit, ANSWER_TOLERANCE_DEFAULT, &a, &v, &e);
        ck_assert_msg(rc == (CASES[i].ok ? 0 : -1), "%s = '%s': %d %s", CASES[i].query, CASES[i].answer, rc,
                      rc ? e.msg : "");
        if (rc)
            ck_assert_msg(strstr(e.msg, "per ") && strstr(e.msg, metric_id(q.metric)), "%s", e.msg);
    }
}
END_TEST

/* A unit of another family is refused with the unit as the learner wrote
 * it and its family named (never an empty name), on random numbers and
 * every pair of families. */
START_TEST(answer_family_named)
{
    static const struct {
        const char *query, *spelling;
    } FAMILIES[] = {
        {"slots --scenario pool-20gib", "slots"}, {"gib --scenario pool-20gib", "GiB"},
        {"step_ms --model llama-3.1-8b --gpu h100-sxm", "ms"}, {"compression --format int4", "x"},
        {"read_drop --model llama-3.1-8b --gpu h100-sxm --format int4", "%"},
        {"crossover_context --model llama-3.1-8b", "tokens"},
    };
    Rng r = {test_seed() ^ 0xfa3};
    for (size_t i = 0; i < N_OF(FAMILIES); i++)
        for (size_t j = 0; j < N_OF(FAMILIES); j++) {
            Query q = query_of(FAMILIES[i].query), g = query_of(FAMILIES[j].query);
            if (query_unit_family(q.unit) == query_unit_family(g.unit))
                continue;
            char text[64];
            snprintf(text, sizeof text, "%llu %s", (unsigned long long)rng_range(&r, 0, 100000),
                     FAMILIES[j].spelling);
            Answer a = parsed(text);
            AnswerVerdict v;
            Error e;
            char want[64];
            snprintf(want, sizeof want, "'%s' is a %s", FAMILIES[j].spelling,
                     query_family_name(query_unit_family(g.unit)));
            ck_assert_seeded(answer_check(&q, q.unit, ANSWER_TOLERANCE_DEFAULT, &a, &v, &e) == -1, "%s", text);
            ck_assert_seeded(strstr(e.msg, want) && strstr(e.msg, query_family_name(query_unit_family(q.unit))),
                             "%s for %s: %s", text, FAMILIES[i].query, e.msg);
            ck_assert_seeded(!strstr(e.msg, "  ") && !strstr(e.msg, "''"), "%s: %s", text, e.msg);
        }
}
END_TEST

/* Random values written with digit groups, decimals, exponents and any
 * unit read back as the same number and unit. */
START_TEST(answer_parse_random)
{
    static const char *const UNITS[] = {"", "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "s", "ms",
                                        "us", "x", "%"};
    Rng r = {test_seed() ^ 0xa11};
    for (int it = 0; it < 2000; it++) {
        uint64_t whole = rng_range(&r, 0, 999999999);
        unsigned places = (unsigned)rng_range(&r, 0, 4);
        uint64_t frac = places ? rng_range(&r, 0, 9999) % (uint64_t)pow(10, places) : 0;
        const char *unit = UNITS[rng_range(&r, 0, sizeof UNITS / sizeof UNITS[0] - 1)];
        char w[32], text[96];
        bool grouped = rng_range(&r, 0, 1);
        u128_str(w, sizeof w, whole, grouped);
        int exp10 = (int)rng_range(&r, 0, 6) - 3;
        bool sci = rng_range(&r, 0, 3) == 0;
        if (places)
            snprintf(text, sizeof text, "%s.%0*llu", w, (int)places, (unsigned long long)frac);
        else
            snprintf(text, sizeof text, "%s", w);
        size_t l = strlen(text);
        if (sci)
            l += (size_t)snprintf(text + l, sizeof text - l, "e%d", exp10);
        snprintf(text + l, sizeof text - l, "%s%s", rng_range(&r, 0, 1) ? " " : "", unit);
        double want = ((double)whole + (double)frac / pow(10, places)) * (sci ? pow(10, exp10) : 1);
        Answer a;
        Error e;
        ck_assert_seeded(answer_parse(text, &a, &e) == 0, "'%s': %s", text, e.msg);
        ck_assert_seeded(fabs(a.value - want) <= PARSE_REL_TOL * want, "'%s': %.17g, not %.17g", text, a.value,
                         want);
        ck_assert_seeded(unit[0] ? a.unit && !strcmp(query_unit_name(a.unit), unit) : !a.unit, "'%s'", text);
    }
}
END_TEST

/* The query's own value, written in another unit of its family, is right;
 * within the tolerance too; a whole count is right only exactly. */
START_TEST(answer_check_units)
{
    Query q = query_of("saved_gib --model llama-3.1-70b --context 4096 --batch 32 --format fp8_e4m3");
    const QueryUnit *gib = query_unit_by_name("GiB");
    static const char *const RIGHT[] = {"20 GiB", "20", "20.0 GiB", "21.47 GB", "21474.8 MB", "20480 MiB",
                                        "0.01953 TiB"};
    for (size_t i = 0; i < sizeof RIGHT / sizeof RIGHT[0]; i++) {
        Answer a = parsed(RIGHT[i]);
        AnswerVerdict v;
        Error e;
        ck_assert_msg(answer_check(&q, gib, ANSWER_TOLERANCE_DEFAULT, &a, &v, &e) == 0, "%s", e.msg);
        ck_assert_msg(v.correct, "%s judged wrong", RIGHT[i]);
    }
    Answer a = parsed("20 ms");
    AnswerVerdict v;
    Error e;
    ck_assert(answer_check(&q, gib, ANSWER_TOLERANCE_DEFAULT, &a, &v, &e) == -1);
    ck_assert_msg(strstr(e.msg, "size"), "%s", e.msg);
    Query s = query_of("slots --scenario pool-20gib --format nvfp4");
    const QueryUnit *count = query_unit_by_name("");
    a = parsed("71");
    ck_assert(answer_check(&s, count, ANSWER_TOLERANCE_DEFAULT, &a, &v, &e) == 0 && v.correct);
    a = parsed("71.2");
    ck_assert(answer_check(&s, count, ANSWER_TOLERANCE_DEFAULT, &a, &v, &e) == 0 && !v.correct);
}
END_TEST

/* The tolerance is symmetric and its edges are in: on random decimal
 * values t and tolerances, t (1 - tol) and t (1 + tol), written exactly in
 * decimal, are right, and one unit of the last place beyond either edge is
 * wrong; 19.9 and 20.1 GiB are both right for 20 GiB within half a percent. */
START_TEST(answer_tolerance_edges)
{
    Rng r = {test_seed() ^ 0x70e};
    const QueryUnit *gib = query_unit_by_name("GiB");
    for (int it = 0; it < 2000; it++) {
        uint64_t m = rng_range(&r, 1, 1000000), p = rng_range(&r, 1, 999);  // t = m / 10^k, tol = p / 10^4
        int k = (int)rng_range(&r, 0, 4);
        char truth[64], tol_text[16];
        snprintf(truth, sizeof truth, "%llue-%d", (unsigned long long)m, k);
        snprintf(tol_text, sizeof tol_text, "0.%04llu", (unsigned long long)p);
        double tol = atof(tol_text);
        for (int side = -1; side <= 1; side += 2) {
            uint64_t edge = m * (10000 + (uint64_t)((int64_t)side * (int64_t)p));   // over 10^(k + 4)
            char on[64], beyond[64];
            snprintf(on, sizeof on, "%llue-%d GiB", (unsigned long long)edge, k + 4);
            snprintf(beyond, sizeof beyond, "%llue-%d GiB", (unsigned long long)(edge + (uint64_t)side), k + 4);
            Answer a = parsed(on), b = parsed(beyond);
            ck_assert_seeded(answer_matches(&a, gib, truth, tol), "%s is not within %s of %s", on, tol_text, truth);
            ck_assert_seeded(!answer_matches(&b, gib, truth, tol), "%s is within %s of %s", beyond, tol_text,
                             truth);
        }
    }
    Query q = query_of("gib --model llama-3.1-70b --context 4096 --batch 16");
    static const struct {
        const char *answer;
        bool right;
    } EDGES[] = {{"19.9", true}, {"20.1", true}, {"19.89", false}, {"20.11", false}, {"21.474836 GB", true}};
    for (size_t i = 0; i < N_OF(EDGES); i++) {
        Answer a = parsed(EDGES[i].answer);
        AnswerVerdict v;
        Error e;
        ck_assert(answer_check(&q, gib, ANSWER_TOLERANCE_DEFAULT, &a, &v, &e) == 0);
        ck_assert_msg(v.correct == EDGES[i].right, "%s judged %s", EDGES[i].answer, v.correct ? "right" : "wrong");
    }
}
END_TEST

/* A number is echoed as the learner wrote it, digits grouped ("131,072 B",
 * never 1.31072e+05), and a mistake's figure is given in the learner's
 * unit to the learner's places; on random numbers and fixed cases. */
START_TEST(answer_echoed)
{
    Rng r = {test_seed() ^ 0xec0};
    Query q = query_of("gib --model llama-3.1-70b --context 4096 --batch 16");
    for (int it = 0; it < 500; it++) {
        uint64_t whole = rng_range(&r, 0, UINT64_MAX / 2);
        unsigned places = (unsigned)rng_range(&r, 0, 3);
        char w[48], text[96], want[96];
        u128_str(w, sizeof w, whole, rng_range(&r, 0, 1));
        u128_str(want, sizeof want, whole, true);
        snprintf(text, sizeof text, "%s%s%.*s B", w, places ? "." : "", (int)places, "250");
        size_t l = strlen(want);
        snprintf(want + l, sizeof want - l, "%s%.*s B", places ? "." : "", (int)places, "250");
        Answer a = parsed(text);
        AnswerVerdict v;
        Error e;
        ck_assert(answer_check(&q, query_unit_by_name("GiB"), ANSWER_TOLERANCE_DEFAULT, &a, &v, &e) == 0);
        ck_assert_seeded(!strcmp(v.given_text, want), "'%s' echoed as '%s'", text, v.given_text);
        ck_assert_seeded(v.correct || v.off_text[0], "'%s': no distance", text);
    }
    static const struct {
        const char *query, *unit, *answer, *given, *mistaken;
    } CASES[] = {
        {"read_drop --model llama-3.1-8b --gpu h100-sxm --context 8k --batch 16 --format fp8_e4m3", "%", "0.2584",
         "0.2584%", "0.2584%"},
        {"bytes_per_element:B:7 --format fp8_e4m3", "B", "8 B", "8 B", "8 B"},
        {"gib --model llama-3.1-70b --context 4096 --batch 16", "GiB", "21.47", "21.47 GiB", "21.47 GiB"},
        {"gb --model llama-3.1-70b --context 4096 --batch 16", "GB", "20", "20 GB", "20 GB"},
        {"bytes --model llama-3.1-70b --context 4096 --batch 16", "B", "1073741824e1", "1,073,741,824e1 B",
         "10,737,418,240 B"},
    };
    for (size_t i = 0; i < N_OF(CASES); i++) {
        AnswerVerdict v = verdict_of(CASES[i].query, CASES[i].unit, CASES[i].answer);
        ck_assert_msg(!v.correct && v.n_mistakes, "%s: %s not diagnosed", CASES[i].query, CASES[i].answer);
        ck_assert_msg(!strcmp(v.given_text, CASES[i].given) && !strcmp(v.mistaken_text, CASES[i].mistaken),
                      "%s: '%s' echoed '%s', mistake gives '%s'", CASES[i].query, CASES[i].answer, v.given_text,
                      v.mistaken_text);
    }
}
END_TEST

/* A wrong answer says how far it is: a whole count by how many more or
 * less (it is right only exactly, its answer 0 too), a close figure by how
 * many percent against the tolerance, a far one as a multiple; on random
 * slot counts and offsets. */
START_TEST(answer_distance)
{
    Rng r = {test_seed() ^ 0xd15};
    const QueryUnit *count = query_unit_by_name("");
    for (int it = 0; it < 30; it++) {
        char text[160], ans[48];
        snprintf(text, sizeof text, "slots --model llama-3.1-8b --context %llu --pool %lluGiB",
                 (unsigned long long)rng_range(&r, 256, 4096), (unsigned long long)rng_range(&r, 100, 4000));
        Query q = query_of(text);
        QueryValue t;
        Error e;
        ck_assert(query_eval(&q, &t, &e) == 0);
        uint64_t truth = (uint64_t)(t.exact.num / t.exact.den), d = rng_range(&r, 1, 3);
        bool more = rng_range(&r, 0, 1) || truth < d;
        snprintf(ans, sizeof ans, "%llu", (unsigned long long)(more ? truth + d : truth - d));
        Answer a = parsed(ans);
        AnswerVerdict v;
        ck_assert(answer_check(&q, count, ANSWER_TOLERANCE_DEFAULT, &a, &v, &e) == 0 && !v.correct);
        char want[64];
        snprintf(want, sizeof want, "is %llu %s than the answer", (unsigned long long)d, more ? "more" : "less");
        ck_assert_seeded(strstr(v.off_text, want) && strstr(v.off_text, "only exactly"), "%s = %s: '%s'", text, ans,
                         v.off_text);
    }
    static const struct {
        const char *query, *unit, *answer, *off;
    } CASES[] = {
        {"slots --model llama-3.1-70b --context 128000 --pool 1GiB", "", "1", "is 1 more than the answer"},
        {"gib --model llama-3.1-70b --context 4096 --batch 16", "GiB", "20.105", "is 0.53% above the answer; within 0.5% is right"},
        {"gib --model llama-3.1-70b --context 4096 --batch 16", "GiB", "19.8999", "is 0.5005% below"},
        {"gib --model llama-3.1-70b --context 4096 --batch 16", "GiB", "80", "is 4 times the answer"},
    };
    for (size_t i = 0; i < N_OF(CASES); i++) {
        AnswerVerdict v = verdict_of(CASES[i].query, CASES[i].unit, CASES[i].answer);
        ck_assert_msg(!v.correct && strstr(v.off_text, CASES[i].off), "%s = %s: '%s'", CASES[i].query,
                      CASES[i].answer, v.off_text);
    }
}
END_TEST

static const char *const MODELS[] = {"llama-3.1-8b", "llama-3.1-70b", "mistral-7b-v0.1", "llama-2-7b",
                                     "gemma-2-9b", "llama-3.1-405b"};
static const char *const METRICS_TRIED[] = {"bytes", "gib", "gb_per_sequence", "bytes_per_sequence", "slots",
                                            "paged_slots", "bytes_per_element", "step_ms", "saved_gib",
                                            "gib_per_sequence", "bytes_per_token", "gqa_saved_gib", "speedup",
                                            "compression", "capacity_ratio", "read_drop"};
static const char *const UNITS_ASKED[] = {"GiB", "GB", "B", "MiB"};

/* A random query over the models, metrics and formats tried; false where
 * calc has no such figure (e.g. the weights outgrow the GPU). */
static bool random_query(Rng *r, char *text, size_t n, Query *q)
{
    const Format *f = format_at(rng_range(r, 0, format_count() - 1));
    const char *metric = METRICS_TRIED[rng_range(r, 0, N_OF(METRICS_TRIED) - 1)];
    snprintf(text, n, "%s --model %s --gpu h100-sxm --pool %lluGiB --context %llu --batch %llu --format %s", metric,
             MODELS[rng_range(r, 0, N_OF(MODELS) - 1)], (unsigned long long)rng_range(r, 1, 60),
             (unsigned long long)rng_range(r, 100, 40000), (unsigned long long)rng_range(r, 2, 48), f->id);
    QueryValue t;
    Error e;
    return !query_parse(text, q, &e) && !query_eval(q, &t, &e);
}

/* The answer mistake m (in its variant) gives to q, in `asked`, checked:
 * 0 where the mistake does not apply, else 1 with *x, num and v. */
static int mistaken_answer(const Query *q, const MistakeModel *m, size_t variant, const QueryUnit *asked, Q *x,
                           char *num, size_t n, AnswerVerdict *v)
{
    Error e;
    int rc = mistake_value(q, &m, &variant, 1, asked, x, &e);
    ck_assert_msg(rc >= 0, "%s (seed %llu)", e.msg, (unsigned long long)test_seed());
    if (!rc)
        return 0;
    snprintf(num, n, "%.15g", q_to_double(*x));
    Answer a = parsed(num);
    ck_assert(answer_check(q, asked, ANSWER_TOLERANCE_DEFAULT, &a, v, &e) == 0);
    return 1;
}

/* Whether every mistake model has been named alone at least once. */
static bool all_named(const size_t *named)
{
    for (size_t m = 0; m < mistake_count(); m++)
        if (!named[m])
            return false;
    return true;
}

/* On random workloads, an answer worked out under any one mistake model is
 * judged wrong and diagnosed as that mistake, or as one that gives the same
 * value; every model is met and named alone on some workload. A workload
 * can make two models give one value (then both are named), so workloads
 * are drawn, at least 40, until every model has been named alone, up to
 * 400. */
START_TEST(mistakes_diagnosed)
{
    Rng r = {test_seed() ^ 0x3157};
    size_t met[64] = {0}, named[64] = {0};
    ck_assert(mistake_count() <= 64);
    for (int it = 0; it < 400 && (it < 40 || !all_named(named)); it++) {
        char text[QUERY_TEXT_MAX];
        Query q;
        Error e;
        if (!random_query(&r, text, sizeof text, &q))
            continue;
        const QueryUnit *asked = q.unit;
        if (query_unit_family(asked) == UNIT_SIZE)
            asked = query_unit_by_name(UNITS_ASKED[rng_range(&r, 0, 3)]);
        for (size_t m = 0; m < mistake_count(); m++) {
            const MistakeModel *mm = mistake_at(m);
            Q x;
            char num[64];
            AnswerVerdict v;
            if (!mistaken_answer(&q, mm, 0, asked, &x, num, sizeof num, &v))
                continue;
            if (v.correct)
                continue;           // the mistake makes no difference within the tolerance here
            met[m]++;
            ck_assert_seeded(v.n_mistakes > 0, "%s: %s (%s) not diagnosed", text, mistake_id(mm), num);
            Q y;
            ck_assert(mistake_value(&q, v.mistakes, v.variants, v.n_mistakes, asked, &y, &e) == 1);
            ck_assert_seeded(fabs(q_to_double(y) - q_to_double(x)) <= ANSWER_TOLERANCE_DEFAULT * q_to_double(x),
                             "%s: %s diagnosed as %s", text, mistake_id(mm), mistake_id(v.mistakes[0]));
            named[m] += v.n_mistakes == 1 && v.mistakes[0] == mm;
        }
    }
    for (size_t m = 0; m < mistake_count(); m++) {
        ck_assert_seeded(met[m] > 0, "mistake %s never applied", mistake_id(mistake_at(m)));
        ck_assert_seeded(named[m] > 0, "mistake %s never named", mistake_id(mistake_at(m)));
    }
}
END_TEST

/* Another format's figure, for every format, is named as one mistake (a
 * single explanation before any pair) with the format it is of, or as
 * another single model that gives the same value; on random workloads. */
START_TEST(mistakes_other_format)
{
    Rng r = {test_seed() ^ 0x0f0};
    const MistakeModel *of = mistake_by_id("other_format");
    ck_assert(of && mistake_variants(of) == format_count());
    size_t named = 0;
    for (int it = 0; it < 25; it++) {
        char text[QUERY_TEXT_MAX];
        Query q;
        if (!random_query(&r, text, sizeof text, &q))
            continue;
        for (size_t k = 0; k < format_count(); k++) {
            Q x;
            char num[64];
            AnswerVerdict v;
            if (!mistaken_answer(&q, of, k, q.unit, &x, num, sizeof num, &v))
                continue;
            if (v.correct)
                continue;
            ck_assert_seeded(v.n_mistakes == 1, "%s: %s's figure %s explained by %zu mistakes", text,
                             format_at(k)->id, num, v.n_mistakes);
            if (v.mistakes[0] == of) {
                char label[128];
                mistake_label(of, v.variants[0], label, sizeof label);
                ck_assert_seeded(strstr(label, format_at(v.variants[0])->name), "%s", label);
                named++;
            }
        }
    }
    ck_assert_seeded(named > 0, "another format's figure never named");
}
END_TEST

/* Fixed cases: the named mistakes of the issue give the named diagnosis. */
START_TEST(mistakes_fixed)
{
    static const struct {
        const char *query, *unit, *answer, *mistake;
    } CASES[] = {
        {"saved_gib --model llama-3.1-70b --context 4096 --batch 32 --format fp8_e4m3", "GiB", "21.47", "gb_as_gib"},
        {"saved_gib --model llama-3.1-70b --context 4096 --batch 32 --format fp8_e4m3", "GiB", "10 GiB",
         "k_or_v_only"},
        {"gb_per_sequence --model llama-3.1-70b --context 128000", "GB", "335.5 GB", "q_heads_as_kv"},
        {"slots --scenario pool-20gib --format nvfp4", "", "72", "slots_rounded_up"},
        {"slots --scenario pool-20gib --format nvfp4", "", "80", "metadata_left_out"},
        {"gib --scenario pool-20gib", "GiB", "1", "one_sequence_for_all"},
        {"gib_per_sequence --scenario pool-20gib", "GiB", "16", "all_for_one_sequence"},
        {"gib --scenario pool-20gib --format fp8_e4m3", "GiB", "64", "bits_for_bytes"},
        {"gib --scenario pool-20gib --format fp8_e4m3", "GiB", "7.45", "gib_as_gb"},
        {"gib --scenario pool-20gib --format int4", "GiB", "8", "elements_for_bytes"},
        {"compression --scenario pool-20gib --format nvfp4", "x", "0.28", "ratio_inverted"},
        {"read_drop --model llama-3.1-8b --gpu h100-sxm --context 8k --batch 16 --format fp8_e4m3", "%", "0.2584",
         "fraction_for_percent"},
        {"speedup --model llama-3.1-8b --gpu h100-sxm --context 32k --batch 16 --format fp8_e4m3", "x", "168.1",
         "percent_for_fraction"},
        {"saved_gib --model llama-3.1-70b --context 4096 --batch 32 --format fp8_e4m3", "GiB", "40",
         "whole_for_saving"},
        {"slots --scenario pool-20gib --format nvfp4", "", "20", "other_format"},
        {"slots --scenario pool-20gib --format nvfp4", "", "75", "other_format"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        AnswerVerdict v = verdict_of(CASES[i].query, CASES[i].unit, CASES[i].answer);
        ck_assert_msg(!v.correct && v.n_mistakes == 1 && !strcmp(mistake_id(v.mistakes[0]), CASES[i].mistake),
                      "%s = %s: %s, not %s", CASES[i].query, CASES[i].answer,
                      v.n_mistakes ? mistake_id(v.mistakes[0]) : "none", CASES[i].mistake);
    }
}
END_TEST

/* ------------------------------------------------------------------------
 * Exercise files
 */

#define NUMBER_EX(extra)                                                                                        \
    "{\"exercises\": [{\"id\": \"x-1\", \"lesson\": \"l\", \"kind\": \"number\", \"level\": \"compute\",\n"   \
    "  \"question\": \"q\", \"hint\": \"h\", \"answer\": \"gib --scenario pool-20gib\", \"unit\": \"GiB\",\n" \
    "  \"solution\": \"s\"" extra "}]}"

/* A file that is wrong in any way is refused with file:line:column and a
 * message naming what is wrong; nothing of it is kept. */
START_TEST(exercise_files_refused)
{
    static const struct {
        const char *text, *where, *what;
    } BAD[] = {
        {NUMBER_EX(", \"colour\": 1"), "x.json:3:20", "colour"},
        {"{\"exercises\": [{\"id\": \"x-1\"}]}", "x.json:1:", "kind"},
        {NUMBER_EX(", \"tolerance\": 2"), "x.json:3:", "tolerance"},
        {"{\"exercises\": [{\"id\": \"x-1\", \"lesson\": \"l\", \"kind\": \"number\", \"level\": \"compute\",\n"
         "  \"question\": \"q\", \"hint\": \"h\",\n  \"answer\": \"gibs --scenario pool-20gib\", \"solution\": \"s\"}]}",
         "x.json:3:13", "gibs"},
        {"{\"exercises\": [{\"id\": \"x-1\", \"lesson\": \"l\", \"kind\": \"number\", \"level\": \"compute\",\n"
         "  \"question\": \"q\", \"hint\": \"h\", \"answer\": \"gib --scenario pool-20gib\", \"unit\": \"ms\",\n"
         "  \"solution\": \"s\"}]}",
         "x.json:2:", "'ms'"},
        {"{\"exercises\": [{\"id\": \"x-1\", \"lesson\": \"l\", \"kind\": \"number\", \"level\": \"compute\",\n"
         "  \"question\": \"a `=slots --model llama-3.1-8b` b\", \"hint\": \"h\", \"answer\": \"gib\",\n"
         "  \"solution\": \"s\"}]}",
         "x.json:2:15", "needs a pool"},
        {"{\"exercises\": [{\"id\": \"x-1\", \"lesson\": \"l\", \"kind\": \"choice\", \"level\": \"recall\",\n"
         "  \"question\": \"q\", \"hint\": \"h\", \"choices\": [\n"
         "   {\"text\": \"a\", \"correct\": true, \"why\": \"w\"},\n"
         "   {\"text\": \"b\", \"correct\": true, \"why\": \"w\"}]}]}",
         "x.json:2:", "exactly one"},
        {"{\"exercises\": [{\"id\": \"x-1\", \"lesson\": \"l\", \"kind\": \"choice\", \"level\": \"recall\",\n"
         "  \"question\": \"q\", \"hint\": \"h\", \"choices\": [\n"
         "   {\"text\": \"a\", \"correct\": true, \"why\": \"w\"},\n"
         "   {\"text\": \"b\", \"correct\": false}]}]}",
         "x.json:4:", "why"},
        {"{\"exercises\": [{\"id\": \"x-1\", \"lesson\": \"l\", \"kind\": \"choice\", \"level\": \"recall\",\n"
         "  \"question\": \"q\", \"hint\": \"h\", \"answer\": \"gib\", \"choices\": [\n"
         "   {\"text\": \"a\", \"correct\": true, \"why\": \"w\"},\n"
         "   {\"text\": \"b\", \"correct\": false, \"why\": \"w\"}]}]}",
         "x.json:2:", "'answer' is not one a choice exercise takes"},
        {NUMBER_EX(", \"seed_answer\": \"14 GiB\""), "x.json:3:", "seed_error"},
        {NUMBER_EX(", \"seed_answer\": \"16 GiB\", \"seed_error\": \"no\""), "x.json:3:", "right"},
        {"{\"exercises\": [{\"id\": \"X 1\", \"lesson\": \"l\", \"kind\": \"task\", \"level\": \"recall\"}]}",
         "x.json:1:", "slug"},
        {"{\"exercises\": [{\"id\": \"t\", \"lesson\": \"l\", \"kind\": \"task\", \"level\": \"recall\",\n"
         "  \"question\": \"q\", \"hint\": \"h\", \"screen\": \"kitchen\", \"steps\": [\"a\"]}]}",
         "x.json:2:", "kitchen"},
        {"{\"exercises\": [{\"id\": \"t\", \"lesson\": \"l\", \"kind\": \"task\", \"level\": \"recall\",\n"
         "  \"question\": \"q\", \"hint\": \"h\", \"screen\": \"calc\", \"steps\": []}]}",
         "x.json:2:", "steps"},
        {"{\"exercises\": [", "x.json:1:", ""},
        {"{\"exercises\": [{\"id\": \"x-1\", \"lesson\": \"l\", \"kind\": \"sum\", \"level\": \"recall\"}]}",
         "x.json:1:", "'sum'"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        ExerciseSet set = {0};
        Error e;
        ck_assert_msg(exercise_load_file(&set, "x.json", BAD[i].text, strlen(BAD[i].text), &e) == -1,
                      "case %zu accepted", i);
        ck_assert_msg(strstr(e.msg, BAD[i].where) == e.msg, "case %zu: '%s' does not begin %s", i, e.msg,
                      BAD[i].where);
        ck_assert_msg(strstr(e.msg, BAD[i].what), "case %zu: '%s' lacks '%s'", i, e.msg, BAD[i].what);
        ck_assert_int_eq(set.n, 0);
        exercise_set_free(&set);
    }
    /* the same id in two files */
    ExerciseSet set = {0};
    Error e;
    const char *ok = NUMBER_EX("");
    ck_assert(exercise_load_file(&set, "a.json", ok, strlen(ok), &e) == 0);
    ck_assert(exercise_load_file(&set, "b.json", ok, strlen(ok), &e) == -1);
    ck_assert_msg(strstr(e.msg, "b.json:1:") && strstr(e.msg, "a.json"), "%s", e.msg);
    ck_assert_int_eq(set.n, 1);
    exercise_set_free(&set);
}
END_TEST

static ExerciseSet shipped(void)
{
    ExerciseSet set = {0};
    char dir[4200];
    Error e;
    ck_assert_msg(exercise_load_dir(&set, exercise_dir(dir, sizeof dir), &e) == 0, "%s", e.msg);
    return set;
}

/* Every shipped exercise loads; a number exercise's answer, as calc prints
 * it, checks as right against its own query; a choice's one correct choice
 * is right and the others wrong. */
START_TEST(exercises_shipped)
{
    ExerciseSet set = shipped();
    ck_assert(set.n >= 5);
    for (size_t i = 0; i < set.n; i++) {
        const Exercise *x = &set.ex[i];
        Error e;
        if (x->has_query) {
            QueryValue v;
            Q in;
            char text[64];
            ck_assert(query_eval(&x->query, &v, &e) == 0);
            ck_assert(query_convert(v.exact, x->query.unit, x->unit, &in, &e) == 0);
            query_value_text(in, false, x->unit, -1, text, sizeof text);
            Answer a = parsed(text);
            AnswerVerdict verdict;
            ck_assert(answer_check(&x->query, x->unit, x->tolerance, &a, &verdict, &e) == 0);
            ck_assert_msg(verdict.correct, "%s: its own answer %s is judged wrong", x->id, text);
        }
        for (size_t c = 0; c < x->n_choices; c++) {
            char letter[2] = {(char)('a' + c), 0};
            ck_assert_int_eq(exercise_choice_index(x, letter), (int)c);
        }
    }
    exercise_set_free(&set);
}
END_TEST

#define RUN(...) run_kvlab((const char *const[]){__VA_ARGS__, NULL}, NULL)

static char progress_home[64];

static void progress_dir_setup(void)
{
    snprintf(progress_home, sizeof progress_home, "/tmp/kvlab-progress-XXXXXX");
    ck_assert(mkdtemp(progress_home) != NULL);
    setenv("XDG_DATA_HOME", progress_home, 1);
}

static void progress_dir_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", progress_home);
    ck_assert(system(cmd) == 0);
}

/* The seeds' own answers get the seeds' verdicts: seed 000 is right about
 * try-1 (20.0 GiB) and try-5 (71), and about the explanations of try-2 ..
 * try-4; exit 0 right, 1 wrong with the diagnosis, 2 unreadable or unknown. */
START_TEST(exercise_check_command)
{
    progress_dir_setup();
    static const struct {
        const char *id, *answer;
        int status;
        const char *out;
    } CASES[] = {
        {"try-1", "20.0 GiB", 0, "right"},
        {"try-5", "71", 0, "right"},
        {"try-2", "b", 0, "right"},
        {"try-3", "c", 0, "right"},
        {"try-4", "a", 0, "right"},
        {"try-1", "21.47 GiB", 1, "GB read as GiB"},
        {"try-5", "72", 1, "slots rounded up"},
        {"try-2", "1", 1, "not right"},
        {"try-1", "lots", 2, ""},
        {"try-1", "20 ms", 2, ""},
        {"try-9", "20", 2, ""},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        RunResult r = RUN("exercise", "check", CASES[i].id, CASES[i].answer);
        ck_assert_msg(r.status == CASES[i].status, "%s %s: exit %d, not %d (%s%s)", CASES[i].id, CASES[i].answer,
                      r.status, CASES[i].status, r.out, r.err);
        ck_assert_msg(strstr(r.out, CASES[i].out), "%s %s: %s", CASES[i].id, CASES[i].answer, r.out);
        if (r.status == 2)
            ck_assert_msg(r.err[0], "%s %s: no message", CASES[i].id, CASES[i].answer);
        run_free(&r);
    }
    /* the attempts were counted: try-1 three times, done */
    char path[PROGRESS_PATH_MAX];
    Error e;
    static Progress p;
    ck_assert(progress_path(path, sizeof path, &e) == 0);
    ck_assert(progress_load(&p, path, PROGRESS_UPDATE, &e) == 0);
    const ProgressItem *it = progress_find_exercise(&p, "try-1");
    ck_assert(it && it->done && it->attempts == 2);
    it = progress_find_exercise(&p, "try-2");
    ck_assert(it && it->done && it->attempts == 2);
    /* reset asks; without a terminal it needs --yes */
    RunResult r = RUN("exercise", "reset");
    ck_assert_int_eq(r.status, 2);
    ck_assert(access(path, F_OK) == 0);
    run_free(&r);
    r = RUN("exercise", "reset", "--yes");
    ck_assert_int_eq(r.status, 0);
    ck_assert(access(path, F_OK) != 0);
    run_free(&r);
    r = RUN("exercise", "show", "try-1", "--solution");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "saved_gib --model llama-3.1-70b") && strstr(r.out, "kvlab calc --model"), "%s",
                  r.out);
    run_free(&r);
    r = RUN("exercise", "list", "--json");
    ck_assert_int_eq(r.status, 0);
    ck_assert(strstr(r.out, "\"try-5\""));
    run_free(&r);
    progress_dir_teardown();
}
END_TEST

/* After "--" every argument is a word, so an answer with a sign is read
 * (and refused as an answer, not as an option); a missing answer is named
 * as missing. */
START_TEST(exercise_check_words)
{
    progress_dir_setup();
    static const struct {
        const char *const argv[6];
        int status;
        const char *err;
    } CASES[] = {
        {{"exercise", "check", "try-5", "--", "71"}, 0, ""},
        {{"exercise", "--", "check", "try-5", "71"}, 0, ""},
        {{"exercise", "check", "try-1", "--", "-20"}, 2, "no sign"},
        {{"exercise", "check", "try-1", "--", "-inf"}, 2, "no sign"},
        {{"exercise", "check", "try-1", "-inf"}, 2, "after --"},
        {{"exercise", "check", "try-1", ""}, 2, "no answer"},
        {{"exercise", "check", "try-1", "20 Gb"}, 2, "bits"},
        {{"exercise", "check", "try-1", "20 GiB per token"}, 2, "per token"},
    };
    for (size_t i = 0; i < N_OF(CASES); i++) {
        RunResult r = run_kvlab(CASES[i].argv, NULL);
        ck_assert_msg(r.status == CASES[i].status && strstr(r.err, CASES[i].err), "case %zu: exit %d (%s%s)", i,
                      r.status, r.out, r.err);
        run_free(&r);
    }
    progress_dir_teardown();
}
END_TEST

/* The "answer with" line of every shipped number exercise shows an answer
 * as the checker reads it: NUMBER and the unit joined as an answer is
 * written ("NUMBERx", "NUMBER", 'NUMBER GiB'), no stray blank or quote. */
START_TEST(exercise_answer_form)
{
    ExerciseSet set = shipped();
    for (size_t i = 0; i < set.n; i++) {
        const Exercise *x = &set.ex[i];
        if (!x->has_query)
            continue;
        RunResult r = RUN("exercise", "show", x->id);
        const char *line = strstr(r.out, "answer with: kvlab exercise check ");
        ck_assert_msg(line, "%s: %s", x->id, r.out);
        char form[64], want[64];
        line += strlen("answer with: kvlab exercise check ") + strlen(x->id) + 1;
        snprintf(form, sizeof form, "%.*s", (int)strcspn(line, "\n"), line);
        answer_join("NUMBER", x->unit, want, sizeof want);
        bool quoted = strchr(want, ' ') != NULL;
        ck_assert_msg(quoted ? form[0] == '\'' && !strncmp(form + 1, want, strlen(want)) && !strcmp(form + 1 + strlen(want), "'")
                             : !strcmp(form, want),
                      "%s: '%s', not '%s'", x->id, form, want);
        run_free(&r);
    }
    exercise_set_free(&set);
}
END_TEST

/* The solution, as text and as JSON, tells the source's own answer and,
 * where it is wrong, what the source got wrong; without --solution
 * neither is shown (a right one is the answer). */
START_TEST(exercise_show_seed)
{
    progress_dir_setup();
    ExerciseSet set = shipped();
    size_t seen = 0;
    for (size_t i = 0; i < set.n; i++) {
        const Exercise *x = &set.ex[i];
        if (!x->seed_answer[0])
            continue;
        seen++;
        RunResult r = RUN("exercise", "show", x->id, "--solution", "--json");
        cJSON *j = cJSON_Parse(r.out);
        ck_assert_msg(j != NULL, "%s: %s", x->id, r.out);
        const cJSON *sa = cJSON_GetObjectItem(j, "seed_answer"), *se = cJSON_GetObjectItem(j, "seed_error");
        ck_assert_msg(cJSON_IsString(sa) && !strcmp(sa->valuestring, x->seed_answer), "%s: %s", x->id, r.out);
        ck_assert_msg(x->seed_error[0] ? cJSON_IsString(se) && se->valuestring[0] : !se, "%s: %s", x->id, r.out);
        cJSON_Delete(j);
        run_free(&r);
        r = RUN("exercise", "show", x->id, "--solution");
        char want[128];
        snprintf(want, sizeof want, "the source's answer: %s, %s", x->seed_answer, x->seed_error[0] ? "wrong" : "right");
        ck_assert_msg(strstr(r.out, want), "%s: %s", x->id, r.out);
        run_free(&r);
        r = RUN("exercise", "show", x->id, "--json");
        ck_assert_msg(!strstr(r.out, "seed_answer") && !strstr(r.out, "seed_error"), "%s: %s", x->id, r.out);
        run_free(&r);
    }
    ck_assert(seen > 0);
    exercise_set_free(&set);
    progress_dir_teardown();
}
END_TEST

/* ------------------------------------------------------------------------
 * Progress
 */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fputs(text, f);
    ck_assert(fclose(f) == 0);
}

/* A teacher's file given with --file adds its exercises: a task opens its
 * screen with its steps (figures worked out), its report is checked like a
 * number, and a task with nothing to report cannot be checked (exit 2). */
START_TEST(exercise_file_option)
{
    progress_dir_setup();
    char path[128];
    snprintf(path, sizeof path, "%s/mine.json", progress_home);
    write_file(path, "{\"exercises\": [\n"
                     " {\"id\": \"task-a\", \"lesson\": \"capacity\", \"kind\": \"task\", \"level\": \"compute\",\n"
                     "  \"question\": \"Open the calculator.\", \"hint\": \"The slots column.\",\n"
                     "  \"screen\": \"calc\", \"settings\": \"--scenario pool-20gib\",\n"
                     "  \"steps\": [\"Read FP8's slots: `=slots --scenario pool-20gib --format fp8_e4m3`.\"],\n"
                     "  \"report\": \"slots --scenario pool-20gib --format fp8_e4m3\"},\n"
                     " {\"id\": \"task-b\", \"lesson\": \"capacity\", \"kind\": \"task\", \"level\": \"recall\",\n"
                     "  \"question\": \"Look.\", \"hint\": \"h\", \"screen\": \"quant\", \"steps\": [\"Look.\"]},\n"
                     " {\"id\": \"seq-70b\", \"lesson\": \"why-kv-grows\", \"kind\": \"number\", \"level\": \"diagnose\",\n"
                     "  \"question\": \"One sequence?\", \"hint\": \"Count K and V.\", \"unit\": \"GB\",\n"
                     "  \"answer\": \"gb_per_sequence --model llama-3.1-70b --context 128000\", \"solution\": \"s\",\n"
                     "  \"seed_answer\": \"10.48 GB\", \"seed_error\": \"a quarter of the true value\"}]}\n");
    RunResult r = RUN("exercise", "show", "task-a", "--file", path);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "Read FP8's slots: 40.") && strstr(r.out, "calc screen"), "%s", r.out);
    run_free(&r);
    r = RUN("exercise", "check", "task-a", "40", "--file", path);
    ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
    run_free(&r);
    r = RUN("exercise", "check", "task-a", "41", "--file", path);
    ck_assert_int_eq(r.status, 1);
    run_free(&r);
    r = RUN("exercise", "check", "task-b", "1", "--file", path);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "nothing to report"), "%s", r.err);
    run_free(&r);
    r = RUN("exercise", "show", "task-a");
    ck_assert_int_eq(r.status, 2);
    run_free(&r);
    /* a source's wrong answer is wrong, and the source's error is told */
    r = RUN("exercise", "check", "seq-70b", "10.48 GB", "--file", path, "--json");
    ck_assert_int_eq(r.status, 1);
    cJSON *j = cJSON_Parse(r.out);
    ck_assert_msg(j != NULL, "%s", r.out);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "correct")));
    ck_assert_str_eq(cJSON_GetObjectItem(j, "seed_error")->valuestring, "a quarter of the true value");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "expected_text")->valuestring, "41.94 GB");
    cJSON_Delete(j);
    run_free(&r);
    /* seed 003's 10.48 GB: a quarter, K and V both left out and elements
     * counted as bytes */
    r = RUN("exercise", "check", "seq-70b", "10.48 GB", "--file", path, "--json");
    j = cJSON_Parse(r.out);
    ck_assert_msg(j != NULL, "%s", r.out);
    const cJSON *ms = cJSON_GetObjectItem(j, "mistakes");
    ck_assert_msg(cJSON_GetArraySize(ms) == 2 &&
                      !strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(ms, 0), "id")->valuestring, "k_or_v_only") &&
                      !strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(ms, 1), "id")->valuestring,
                              "elements_for_bytes"),
                  "%s", r.out);
    cJSON_Delete(j);
    run_free(&r);
    progress_dir_teardown();
}
END_TEST

/* A check whose attempt cannot be saved still gives its verdict, then says
 * "progress not saved" and why, and exits 3 (a run-time failure), right
 * answer or wrong. */
START_TEST(exercise_check_unsaved)
{
    progress_dir_setup();
    char home[128];
    snprintf(home, sizeof home, "%s/plain-file", progress_home);
    write_file(home, "not a directory\n");
    setenv("XDG_DATA_HOME", home, 1);
    static const char *const ANSWERS[] = {"71", "72"};
    for (size_t i = 0; i < N_OF(ANSWERS); i++) {
        RunResult r = RUN("exercise", "check", "try-5", ANSWERS[i]);
        ck_assert_msg(r.status == 3, "try-5 %s: exit %d (%s%s)", ANSWERS[i], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.out, "try-5:"), "%s", r.out);
        ck_assert_msg(strstr(r.err, "progress not saved: ") && strstr(r.err, "Not a directory"), "%s", r.err);
        run_free(&r);
    }
    progress_dir_teardown();
}
END_TEST

/* What is saved loads back the same, on random progress. */
START_TEST(progress_round_trip)
{
    progress_dir_setup();
    Rng r = {test_seed() ^ 0x9a};
    char path[PROGRESS_PATH_MAX];
    Error e;
    ck_assert(progress_path(path, sizeof path, &e) == 0);
    static Progress p, q;
    memset(&p, 0, sizeof p);
    size_t n = rng_range(&r, 1, 200);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "ex-%llu", (unsigned long long)rng_range(&r, 0, 1000));
        ProgressItem *it = progress_exercise(&p, id);
        it->done = rng_range(&r, 0, 1);
        it->attempts = rng_range(&r, 0, 99);
        progress_lesson(&p, id + 3)->read = rng_range(&r, 0, 1);
    }
    ck_assert_msg(progress_save(&p, path, &e) == 0, "%s", e.msg);
    ck_assert_msg(progress_load(&q, path, PROGRESS_UPDATE, &e) == 0, "%s", e.msg);
    ck_assert(!q.notice[0]);
    ck_assert_int_eq(q.n_exercises, p.n_exercises);
    ck_assert_int_eq(q.n_lessons, p.n_lessons);
    for (size_t i = 0; i < p.n_exercises; i++) {
        const ProgressItem *a = &p.exercises[i], *b = progress_find_exercise(&q, a->id);
        ck_assert_seeded(b && b->done == a->done && b->attempts == a->attempts, "%s", a->id);
    }
    progress_dir_teardown();
}
END_TEST

/* Attempts and lessons read, recorded at once by several processes (the lab
 * and the command line) are all kept: on random ids and counts, the file
 * ends with every attempt and every lesson read of every process. */
START_TEST(progress_concurrent)
{
    progress_dir_setup();
    char path[PROGRESS_PATH_MAX];
    Error e;
    ck_assert(progress_path(path, sizeof path, &e) == 0);
    enum { PROCS = 6, EACH = 40, IDS = 5 };
    uint64_t seed = test_seed() ^ 0xf10c;
    unsigned long want[IDS] = {0};
    pid_t pids[PROCS];
    for (int k = 0; k < PROCS; k++) {
        Rng r = {seed + (uint64_t)k};
        for (int i = 0; i < EACH; i++)
            want[rng_range(&r, 0, IDS - 1)]++;
        pids[k] = fork();
        ck_assert(pids[k] >= 0);
        if (pids[k] == 0) {
            static Progress p;
            Rng c = {seed + (uint64_t)k};
            for (int i = 0; i < EACH; i++) {
                char id[16];
                snprintf(id, sizeof id, "ex-%llu", (unsigned long long)rng_range(&c, 0, IDS - 1));
                if (progress_record(&p, path, id, false, &e))
                    _exit(1);
                char lesson[16];
                snprintf(lesson, sizeof lesson, "lesson-%d", k);
                if (i == EACH / 2 && progress_record_read(&p, path, lesson, &e))
                    _exit(1);
            }
            _exit(0);
        }
    }
    for (int k = 0; k < PROCS; k++) {
        int status;
        ck_assert(waitpid(pids[k], &status, 0) == pids[k] && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    static Progress q;
    ck_assert(progress_load(&q, path, PROGRESS_READ, &e) == 0 && !q.notice[0]);
    for (int i = 0; i < IDS; i++) {
        char id[16];
        snprintf(id, sizeof id, "ex-%d", i);
        const ProgressItem *it = progress_find_exercise(&q, id);
        ck_assert_seeded((it ? it->attempts : 0) == want[i], "%s: %lu attempts kept of %lu", id,
                         it ? it->attempts : 0, want[i]);
    }
    for (int k = 0; k < PROCS; k++) {
        char lesson[16];
        snprintf(lesson, sizeof lesson, "lesson-%d", k);
        const ProgressItem *it = progress_find_lesson(&q, lesson);
        ck_assert_seeded(it && it->read, "%s: read mark lost", lesson);
    }
    progress_dir_teardown();
}
END_TEST

/* A crash after the new text is written and before the rename leaves the
 * old file whole. */
START_TEST(progress_crash_before_rename)
{
    progress_dir_setup();
    char path[PROGRESS_PATH_MAX];
    Error e;
    ck_assert(progress_path(path, sizeof path, &e) == 0);
    static Progress p, q;
    memset(&p, 0, sizeof p);
    progress_exercise(&p, "old")->attempts = 7;
    ck_assert(progress_save(&p, path, &e) == 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        static Progress n;
        progress_exercise(&n, "new")->attempts = 1;
        char tmp[PROGRESS_PATH_MAX + 16];
        if (progress_write_temp(&n, path, tmp, sizeof tmp, &e))
            _exit(1);
        _exit(0);                   // the crash: no rename
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert(progress_load(&q, path, PROGRESS_UPDATE, &e) == 0);
    ck_assert(!q.notice[0]);
    ck_assert(progress_find_exercise(&q, "old") && progress_find_exercise(&q, "old")->attempts == 7);
    ck_assert(!progress_find_exercise(&q, "new"));
    progress_dir_teardown();
}
END_TEST

/* A corrupt file is kept aside under a new name, the user is told where,
 * and progress starts afresh; a missing file is empty progress. */
START_TEST(progress_corrupt_kept)
{
    progress_dir_setup();
    char path[PROGRESS_PATH_MAX];
    Error e;
    ck_assert(progress_path(path, sizeof path, &e) == 0);
    static Progress p;
    ck_assert(progress_load(&p, path, PROGRESS_UPDATE, &e) == 0 && p.n_exercises == 0 && !p.notice[0]);
    static const char *const CORRUPT[] = {"{\"version\": 1, \"exercises\": {\"a\": {\"done\": tru", "[]",
                                          "{\"version\": 0}", "{\"version\": 1, \"exercises\": {\"a\": {\"x\": 1}}}"};
    for (size_t i = 0; i < sizeof CORRUPT / sizeof CORRUPT[0]; i++) {
        char dir[PROGRESS_PATH_MAX];
        snprintf(dir, sizeof dir, "%s/kvlab", progress_home);
        mkdir(dir, 0700);
        write_file(path, CORRUPT[i]);
        ck_assert_msg(progress_load(&p, path, PROGRESS_UPDATE, &e) == 0, "%s", e.msg);
        ck_assert(p.n_exercises == 0);
        ck_assert_msg(strstr(p.notice, "progress.json.corrupt-"), "case %zu: notice '%s'", i, p.notice);
        ck_assert(access(path, F_OK) != 0);
        const char *aside = strstr(p.notice, "kept as ");
        ck_assert(aside != NULL);
        aside += strlen("kept as ");
        char kept[PROGRESS_PATH_MAX + 64];
        snprintf(kept, sizeof kept, "%.*s", (int)strcspn(aside, " "), aside);
        FILE *f = fopen(kept, "r");
        ck_assert_msg(f != NULL, "%s not kept", kept);
        char buf[256] = "";
        ck_assert(fgets(buf, sizeof buf, f) != NULL);
        fclose(f);
        ck_assert_str_eq(buf, CORRUPT[i]);
        unlink(kept);
    }
    /* the command line tells the user and carries on */
    write_file(path, "{oops");
    RunResult r = RUN("exercise", "check", "try-5", "71");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.err, "corrupt-"), "%s", r.err);
    run_free(&r);
    progress_dir_teardown();
}
END_TEST

static char *slurp(const char *path)
{
    static char buf[512];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static size_t entries(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *f = popen(cmd, "r");
    ck_assert(f != NULL);
    unsigned long n = 0;
    ck_assert(fscanf(f, "%lu", &n) == 1);
    pclose(f);
    return n;
}

/* A fresh progress home: the progress file's path and its directory's. */
static void progress_files(char *path, char *dir)
{
    Error e;
    progress_dir_setup();
    ck_assert(progress_path(path, PROGRESS_PATH_MAX, &e) == 0);
    snprintf(dir, PROGRESS_PATH_MAX, "%s/kvlab", progress_home);
}

/* Nothing is renamed by a command that only shows progress; a file that
 * cannot be read (not a regular file; no permission) is not corrupt, and
 * a file of a newer version is not ours: both are left as they are, with
 * a message naming why, and a check then exits 3 with its verdict. */
START_TEST(progress_left_alone)
{
    char path[PROGRESS_PATH_MAX], dir[PROGRESS_PATH_MAX];
    progress_files(path, dir);
    mkdir(dir, 0700);
    static const struct {
        const char *text;           // NULL: a directory where the file should be
        bool as_root;               // whether the case holds for root too
        mode_t mode;
        const char *list_says, *check_says;
        int check_status;
    } CASES[] = {
        {"{\"version\": 2, \"exercises\": {}, \"badges\": []}", true, 0600, "newer kvlab", "newer kvlab", 3},
        {"{\"version\": 7}", true, 0600, "version 7", "version 7", 3},
        {"{oops", true, 0600, "left as it is", "corrupt-", 0},
        {NULL, true, 0700, "not a regular file", "not a regular file", 3},
        {"{\"version\": 1}", false, 0000, "Permission denied", "Permission denied", 3},
    };
    for (size_t i = 0; i < N_OF(CASES); i++) {
        if (!CASES[i].as_root && geteuid() == 0)
            continue;               // root reads any file
        if (CASES[i].text)
            write_file(path, CASES[i].text);
        else
            ck_assert(mkdir(path, 0700) == 0);
        ck_assert(chmod(path, CASES[i].mode) == 0);
        RunResult r = RUN("exercise", "list");
        ck_assert_msg(r.status == 0 && strstr(r.err, CASES[i].list_says), "case %zu: list exit %d: %s", i, r.status,
                      r.err);
        run_free(&r);
        ck_assert_msg(entries(dir) == 1, "case %zu: list renamed or wrote a file", i);
        if (CASES[i].text && CASES[i].mode) {
            char *now = slurp(path);
            ck_assert_msg(now && !strcmp(now, CASES[i].text), "case %zu: the file changed", i);
        }
        r = RUN("exercise", "check", "try-5", "71");
        ck_assert_msg(r.status == CASES[i].check_status && strstr(r.out, "try-5: right") &&
                          strstr(r.err, CASES[i].check_says),
                      "case %zu: check exit %d: %s%s", i, r.status, r.out, r.err);
        run_free(&r);
        if (CASES[i].check_status) {
            ck_assert_msg(entries(dir) == 1, "case %zu: check renamed or wrote a file", i);
            ck_assert(chmod(path, 0700) == 0);
            if (CASES[i].text)
                ck_assert_msg(!strcmp(slurp(path), CASES[i].text), "case %zu: the file changed", i);
        }
        char cmd[PROGRESS_PATH_MAX + 32];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", dir);
        ck_assert(system(cmd) == 0);
    }
    progress_dir_teardown();
}
END_TEST

/* Whether some process waits on /proc/locks for a flock another holds. */
static bool flock_waited_on(void)
{
    FILE *f = fopen("/proc/locks", "r");
    char line[256];
    bool waits = false;
    while (f && !waits && fgets(line, sizeof line, f))
        waits = strstr(line, "->") && strstr(line, "FLOCK");
    if (f)
        fclose(f);
    return waits;
}

/* `kvlab exercise reset` takes the lock a check records its attempt under:
 * while a check holds it, the reset waits and deletes nothing; the check
 * saves, and the reset then deletes what it saved, so the deleted progress
 * does not come back. */
START_TEST(progress_reset_under_lock)
{
    char path[PROGRESS_PATH_MAX], dir[PROGRESS_PATH_MAX];
    Error e;
    progress_files(path, dir);
    static Progress p;
    memset(&p, 0, sizeof p);
    progress_exercise(&p, "old")->attempts = 1;
    ck_assert(progress_save(&p, path, &e) == 0);
    int locked[2], go[2];
    ck_assert(pipe(locked) == 0 && pipe(go) == 0);
    pid_t check = fork();
    ck_assert(check >= 0);
    if (check == 0) {               // a check: the lock held from its load to its save
        int fd = open(dir, O_RDONLY | O_DIRECTORY);
        char c = 0;
        if (fd < 0 || flock(fd, LOCK_EX) || write(locked[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(1);
        static Progress n;
        progress_exercise(&n, "old")->attempts = 2;
        progress_exercise(&n, "new")->attempts = 1;
        _exit(progress_save(&n, path, &e) ? 1 : 0);
    }
    char c;
    ck_assert(read(locked[0], &c, 1) == 1);
    pid_t reset = fork();
    ck_assert(reset >= 0);
    if (reset == 0) {
        RunResult r = RUN("exercise", "reset", "--yes");
        _exit(r.status == 0 && strstr(r.out, "progress deleted") ? 0 : 1);
    }
    /* Until the reset is seen waiting on the lock (or a while has passed,
     * for a reset that takes no lock). */
    for (int i = 0; i < 500 && !flock_waited_on(); i++)
        usleep(10000);
    ck_assert_msg(access(path, F_OK) == 0, "the reset deleted the file while a check held the lock");
    ck_assert(write(go[1], &c, 1) == 1);
    int status;
    ck_assert(waitpid(check, &status, 0) == check && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert(waitpid(reset, &status, 0) == reset && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_msg(access(path, F_OK) != 0, "the check's save brought the progress back after the reset");
    close(locked[0]), close(locked[1]), close(go[0]), close(go[1]);
    /* A reset with nothing to reset says so. */
    RunResult r = RUN("exercise", "reset", "--yes");
    ck_assert_msg(r.status == 0 && strstr(r.out, "no progress to reset"), "%d %s", r.status, r.out);
    run_free(&r);
    progress_dir_teardown();
}
END_TEST

/* A load opens the progress file once, whatever it finds there (progress,
 * or a corrupt file then kept aside): what is judged is what was read. */
START_TEST(progress_read_once)
{
    progress_dir_setup();
    char path[PROGRESS_PATH_MAX];
    Error e;
    ck_assert(progress_path(path, sizeof path, &e) == 0);
    static Progress p;
    memset(&p, 0, sizeof p);
    progress_exercise(&p, "a")->attempts = 3;
    static const struct {
        const char *text;           // NULL: p saved
        ProgressMode mode;
    } CASES[] = {{NULL, PROGRESS_READ}, {NULL, PROGRESS_UPDATE}, {"{oops", PROGRESS_READ}, {"{oops", PROGRESS_UPDATE}};
    for (size_t i = 0; i < N_OF(CASES); i++) {
        if (CASES[i].text)
            write_file(path, CASES[i].text);
        else
            ck_assert(progress_save(&p, path, &e) == 0);
        int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        ck_assert(in >= 0 && inotify_add_watch(in, path, IN_OPEN | IN_CLOSE) >= 0);
        static Progress q;
        ck_assert_msg(progress_load(&q, path, CASES[i].mode, &e) == 0, "%s", e.msg);
        /* Closes are watched too: inotify folds an event into the one
         * before it when they are the same, and two opens in a row are. */
        int opens = 0;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        for (ssize_t n; (n = read(in, buf, sizeof buf)) > 0;)
            for (char *ev = buf; ev < buf + n; ev += sizeof(struct inotify_event) + ((struct inotify_event *)ev)->len)
                opens += (((struct inotify_event *)ev)->mask & IN_OPEN) != 0;
        close(in);
        ck_assert_msg(opens == 1, "case %zu: the file was opened %d times", i, opens);
        char cmd[PROGRESS_PATH_MAX + 32];
        snprintf(cmd, sizeof cmd, "rm -f '%s'*", path);
        ck_assert(system(cmd) == 0);
    }
    progress_dir_teardown();
}
END_TEST

Suite *suite_exercise(void)
{
    Suite *s = suite_create("exercise");
    TCase *t = tcase_create("exercise");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, answer_parse_fixed);
    tcase_add_test(t, answer_parse_refused);
    tcase_add_test(t, answer_parse_random);
    tcase_add_test(t, answer_parse_refused_why);
    tcase_add_test(t, answer_check_per);
    tcase_add_test(t, answer_family_named);
    tcase_add_test(t, answer_check_units);
    tcase_add_test(t, answer_tolerance_edges);
    tcase_add_test(t, answer_echoed);
    tcase_add_test(t, answer_distance);
    tcase_add_test(t, mistakes_diagnosed);
    tcase_add_test(t, mistakes_fixed);
    tcase_add_test(t, mistakes_other_format);
    tcase_add_test(t, exercise_files_refused);
    tcase_add_test(t, exercises_shipped);
    tcase_add_test(t, exercise_check_command);
    tcase_add_test(t, exercise_file_option);
    tcase_add_test(t, exercise_check_unsaved);
    tcase_add_test(t, exercise_check_words);
    tcase_add_test(t, exercise_answer_form);
    tcase_add_test(t, exercise_show_seed);
    tcase_add_test(t, progress_round_trip);
    tcase_add_test(t, progress_concurrent);
    tcase_add_test(t, progress_crash_before_rename);
    tcase_add_test(t, progress_corrupt_kept);
    tcase_add_test(t, progress_left_alone);
    tcase_add_test(t, progress_reset_under_lock);
    tcase_add_test(t, progress_read_once);
    suite_add_tcase(s, t);
    return s;
}
