/* test_query.c - queries: a metric and calc's own options give the figure
 * `kvlab calc` prints for the same command line; units convert within
 * their family; every bad word is named. */
#include "testutil.h"

#include "query.h"
#include "units.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A double from JSON against an exact value: within this relative error
 * (cJSON prints 15 significant digits or more). */
#define JSON_REL_TOL 1e-12

static QueryValue run_ok(const char *text)
{
    QueryValue v;
    Error e;
    ck_assert_msg(query_run(text, &v, &e) == 0, "%s: %s", text, e.msg);
    return v;
}

static void run_refused(const char *text, const char *needle)
{
    QueryValue v;
    Error e;
    ck_assert_msg(query_run(text, &v, &e) == -1, "%s accepted", text);
    ck_assert_msg(strstr(e.msg, needle) != NULL, "%s: message '%s' lacks '%s'", text, e.msg, needle);
}

/* Seed 003's sequence: Llama-3.1-70B at 128,000 tokens is 41.94 GB, and
 * the same bytes in every unit of the size family. */
START_TEST(query_fixed)
{
    ck_assert_str_eq(run_ok("gb_per_sequence:GB:2 --model llama-3.1-70b --context 128000").text, "41.94 GB");
    ck_assert_str_eq(run_ok("bytes_per_sequence:GB:2 --model llama-3.1-70b --context 128000").text, "41.94 GB");
    ck_assert_str_eq(run_ok("bytes_per_sequence --model llama-3.1-70b --context 128000").text,
                     "41,943,040,000 B");
    ck_assert_str_eq(run_ok("bytes_per_sequence:GiB:3 --model llama-3.1-70b --context 128000").text,
                     "39.063 GiB");
    ck_assert_str_eq(run_ok("bytes_per_token:KiB --model llama-3.1-70b").text, "320 KiB");
    ck_assert_str_eq(run_ok("elements_per_token --model llama-3.1-8b").text, "65,536");
    ck_assert_str_eq(run_ok("bytes_per_element --format nvfp4").text, "0.5625 B");
    ck_assert_str_eq(run_ok("slots --scenario pool-20gib --format fp8_e4m3").text, "40");
    ck_assert_str_eq(run_ok("slots:0 --scenario pool-20gib").text, "20");
    ck_assert_str_eq(run_ok("slots::0 --scenario pool-20gib").text, "20");
    ck_assert_str_eq(run_ok("pool_gib --scenario pool-20gib").text, "20 GiB");
    ck_assert_str_eq(run_ok("compression:x:2 --scenario pool-20gib --format nvfp4").text, "3.56x");
    QueryValue v = run_ok("read_drop --model llama-3.1-8b --gpu h100-sxm --context 32k --batch 8 --format fp8_e4m3");
    ck_assert_int_eq(v.family, UNIT_RATIO);
    QueryValue x = run_ok("read_drop:x --model llama-3.1-8b --gpu h100-sxm --context 32k --batch 8 --format fp8_e4m3");
    ck_assert(q_cmp(x.exact, q_make(v.exact.num, v.exact.den * 100)) == 0);
}
END_TEST

/* Every bad part is refused, the word at fault named. */
START_TEST(query_refused)
{
    run_refused("", "empty");
    run_refused("bytez --model llama-3.1-8b", "'bytez'");
    run_refused("bytes:GiBs", "'GiBs'");
    run_refused("bytes:ms", "'ms'");
    run_refused("slots:GB --scenario pool-20gib", "'GB'");
    run_refused("bytes:B:x", "'x'");
    run_refused("bytes:B:2:3", "METRIC[:UNIT[:DIGITS]]");
    run_refused("bytes --modle llama-3.1-8b", "'--modle'");
    run_refused("bytes --json", "'--json'");
    run_refused("bytes --contexts 1k", "'--contexts'");
    run_refused("bytes llama", "'llama'");
    run_refused("bytes --model", "--model needs a value");
    run_refused("bytes --mha=1 --model llama-3.1-8b", "--mha takes no value");
    run_refused("bytes --model nope", "--model");
    run_refused("bytes --format bf16 --format fp8_e4m3", "one format");
    run_refused("bytes --format fp9", "'fp9'");
    run_refused("slots --model llama-3.1-8b", "needs a pool");
    run_refused("bytes --context 8k --context 16k", "--context is given twice");
    run_refused("bytes --scenario pool-20gib --residual 128", "--residual");
}
END_TEST

static const char *const MODELS[] = {"llama-3.1-8b", "llama-3.1-70b", "mistral-7b-v0.1", "gemma-2-9b",
                                     "llama-2-7b"};
static const char *const GPUS[] = {"h100-sxm", "a100-80gb", "h200", "l4"};

/* A figure of the JSON object calc prints for the format. */
static const cJSON *json_format(const cJSON *root, const char *id)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(root, "formats"))
        if (strcmp(cJSON_GetObjectItem(f, "format")->valuestring, id) == 0)
            return f;
    return NULL;
}

static void same_as_json(const char *metric, const char *key, const cJSON *f, const char *opts)
{
    char text[QUERY_TEXT_MAX];
    snprintf(text, sizeof text, "%s %s", metric, opts);
    QueryValue v = run_ok(text);
    const cJSON *j = cJSON_GetObjectItem(f, key);
    ck_assert_seeded(j && cJSON_IsNumber(j), "%s: no %s in calc's JSON", text, key);
    double want = j->valuedouble;
    ck_assert_seeded(fabs(v.value - want) <= JSON_REL_TOL * fabs(want), "%s: %.17g, calc --json %.17g", text,
                     v.value, want);
}

/* On random workloads, a query gives what `kvlab calc --json` prints for
 * the same options: the query's options are calc's command line. */
START_TEST(query_matches_calc)
{
    Rng r = {test_seed() ^ 0x9e11};
    for (int it = 0; it < 6; it++) {
        const char *model = MODELS[rng_range(&r, 0, sizeof MODELS / sizeof MODELS[0] - 1)];
        const char *gpu = GPUS[rng_range(&r, 0, sizeof GPUS / sizeof GPUS[0] - 1)];
        const Format *fmt = format_at(rng_range(&r, 0, format_count() - 1));
        char context[16], batch[16];
        snprintf(context, sizeof context, "%llu", (unsigned long long)rng_range(&r, 1, 64 * 1024));
        snprintf(batch, sizeof batch, "%llu", (unsigned long long)rng_range(&r, 1, 64));
        char opts[256];
        snprintf(opts, sizeof opts, "--model %s --gpu %s --context %s --batch %s --format %s", model, gpu, context,
                 batch, fmt->id);
        RunResult run = run_kvlab((const char *const[]){"calc", "--model", model, "--gpu", gpu, "--context",
                                                        context, "--batch", batch, "--format", fmt->id, "--json",
                                                        NULL},
                                  NULL);
        if (run.status != 0) {          // the weights alone may not fit this GPU: then the query fails too
            QueryValue v;
            Error e;
            char text[QUERY_TEXT_MAX];
            snprintf(text, sizeof text, "bytes %s", opts);
            ck_assert_seeded(query_run(text, &v, &e) == -1, "%s: calc failed (%s) but the query did not", text,
                             run.err);
            run_free(&run);
            continue;
        }
        cJSON *root = cJSON_Parse(run.out);
        ck_assert_seeded(root != NULL, "calc --json: %s", run.out);
        const cJSON *f = json_format(root, fmt->id);
        ck_assert(f != NULL);
        static const char *const SAME[][2] = {
            {"bytes", "bytes"}, {"bytes_per_sequence", "bytes_per_sequence"}, {"gib", "gib"}, {"gb", "gb"},
            {"tensor_scale_bytes", "tensor_scale_bytes"}, {"bytes_per_element", "bytes_per_element"},
            {"slots", "slots"}, {"paged_slots", "paged_slots"}, {"step_ms", "step_ms"}, {"speedup", "speedup"},
        };
        for (size_t k = 0; k < sizeof SAME / sizeof SAME[0]; k++)
            same_as_json(SAME[k][0], SAME[k][1], f, opts);
        same_as_json("elements", "elements", root, opts);
        same_as_json("pool_gib:B", "pool", root, opts);
        same_as_json("weights_gib:B", "weights", root, opts);
        cJSON_Delete(root);
        run_free(&run);
    }
}
END_TEST

/* A unit converts exactly within its family: bytes in GiB then back in B
 * are the same bytes, GB is 10^9 of them. */
START_TEST(query_units_convert)
{
    Rng r = {test_seed() ^ 0x7a5};
    for (int it = 0; it < 200; it++) {
        u128 bytes = rng_range(&r, 1, UINT64_MAX >> 8);
        Q v = q_make(bytes, 1), gib, back, gb;
        Error e;
        ck_assert(query_convert(v, query_unit_by_name("B"), query_unit_by_name("GiB"), &gib, &e) == 0);
        ck_assert(query_convert(gib, query_unit_by_name("GiB"), query_unit_by_name("B"), &back, &e) == 0);
        ck_assert_seeded(q_cmp(back, v) == 0, "%s B", u128s(bytes));
        ck_assert(query_convert(v, query_unit_by_name("B"), query_unit_by_name("GB"), &gb, &e) == 0);
        ck_assert_seeded(q_cmp(gb, q_make(bytes, GB)) == 0, "%s B in GB", u128s(bytes));
    }
    Q out;
    Error e;
    ck_assert(query_convert(q_make(1, 1), query_unit_by_name("ms"), query_unit_by_name("s"), &out, &e) == 0);
    ck_assert(q_cmp(out, q_make(1, 1000)) == 0);
    ck_assert(query_convert(q_make(38, 1), query_unit_by_name("%"), query_unit_by_name("x"), &out, &e) == 0);
    ck_assert(q_cmp(out, q_make(38, 100)) == 0);
    ck_assert(query_convert(q_make(1, 1), query_unit_by_name("B"), query_unit_by_name("ms"), &out, &e) == -1);
}
END_TEST

/* query_format writes a query that parses back to the same query. */
START_TEST(query_format_round_trip)
{
    static const char *const TEXTS[] = {
        "gb_per_sequence:GB:2 --model llama-3.1-70b --context 128000",
        "slots --scenario pool-20gib --format fp8_e4m3",
        "slots::0 --scenario pool-20gib",
        "step_ms:us --model llama-3.1-8b --gpu h100-sxm --batch 4",
    };
    for (size_t i = 0; i < sizeof TEXTS / sizeof TEXTS[0]; i++) {
        Query a, b;
        Error e;
        char buf[QUERY_TEXT_MAX];
        ck_assert_msg(query_parse(TEXTS[i], &a, &e) == 0, "%s", e.msg);
        query_format(&a, buf, sizeof buf);
        ck_assert_msg(query_parse(buf, &b, &e) == 0, "%s: %s", buf, e.msg);
        ck_assert(a.metric == b.metric && a.unit == b.unit && a.digits == b.digits && a.n_words == b.n_words);
        QueryValue va, vb;
        ck_assert(query_eval(&a, &va, &e) == 0 && query_eval(&b, &vb, &e) == 0);
        ck_assert_str_eq(va.text, vb.text);
    }
    Query q;
    Error e;
    char buf[QUERY_TEXT_MAX];
    ck_assert(query_parse("slots --scenario pool-20gib", &q, &e) == 0);
    ck_assert_str_eq(query_command(&q, buf, sizeof buf), "kvlab calc --scenario pool-20gib");
}
END_TEST

Suite *suite_query(void)
{
    Suite *s = suite_create("query");
    TCase *t = tcase_create("query");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, query_fixed);
    tcase_add_test(t, query_refused);
    tcase_add_test(t, query_matches_calc);
    tcase_add_test(t, query_units_convert);
    tcase_add_test(t, query_format_round_trip);
    suite_add_tcase(s, t);
    return s;
}
