/* test_cli.c - DESIGN.md's command-line contract, through ./kvlab:
 * exit codes, one-line errors naming the argument, JSON fields, and exact
 * answers for shapes typed in. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUN(...) run_kvlab((const char *const[]){__VA_ARGS__, NULL}, NULL)

/* Parses stdout as exactly one JSON object (nothing else printed). */
static cJSON *json_of(const RunResult *r)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(r->out, &end, 0);
    ck_assert_msg(j != NULL, "stdout is not JSON: %s", r->out);
    while (*end == '\n' || *end == ' ')
        end++;
    ck_assert_msg(*end == '\0', "stdout has more than one JSON object");
    return j;
}

static const cJSON *format_row(const cJSON *root, const char *id)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(root, "formats"))
        if (strcmp(cJSON_GetObjectItem(f, "format")->valuestring, id) == 0)
            return f;
    ck_abort_msg("no row for %s", id);
    return NULL;
}

static double num(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(o, name);
    ck_assert_msg(cJSON_IsNumber(v), "field %s missing or not a number", name);
    return v->valuedouble;
}

/* A usage error: exit 2, nothing on stdout, one line on stderr that
 * contains every phrase given. */
static void usage_error(RunResult r, const char *a, const char *b)
{
    ck_assert_msg(r.status == 2, "exit %d, stderr: %s", r.status, r.err);
    ck_assert_str_eq(r.out, "");
    char *nl = strchr(r.err, '\n');
    ck_assert_msg(nl && nl[1] == '\0', "stderr is not one line: %s", r.err);
    ck_assert_msg(strstr(r.err, a), "want '%s' in: %s", a, r.err);
    ck_assert_msg(!b || strstr(r.err, b), "want '%s' in: %s", b, r.err);
    run_free(&r);
}

/* Plain `kvlab calc` shows the default scenario's table. */
START_TEST(calc_default)
{
    RunResult r = RUN("calc");
    ck_assert_int_eq(r.status, 0);
    ck_assert(strstr(r.out, "Llama-3.1-8B") && strstr(r.out, "KV pool 20.000 GiB"));
    ck_assert(strstr(r.out, "scenario pool-20gib"));
    /* the NVFP4 row: 0.5625 B/elem, 288 MiB a sequence, 4.5 GiB, 71 slots */
    const char *row = strstr(r.out, "\nnvfp4 ");
    ck_assert_msg(row != NULL, "%s", r.out);
    char line[256];
    sscanf(row + 1, "%255[^\n]", line);
    char fmt[16], bpe[16], ps[16], psu[8], tot[16], totu[8], dec[16], decu[8];
    int scale, slots, paged;
    ck_assert_int_eq(sscanf(line, "%15s %15s %15s %7s %15s %7s %15s %7s %d %d %d", fmt, bpe, ps, psu,
                            tot, totu, dec, decu, &scale, &slots, &paged), 11);
    ck_assert_str_eq(bpe, "0.5625");
    ck_assert_str_eq(ps, "288");
    ck_assert_str_eq(tot, "4.5");
    ck_assert_int_eq(scale, 256);
    ck_assert_int_eq(slots, 71);
    run_free(&r);
}
END_TEST

/* --json carries the fields of DESIGN.md's command-line contract for each
 * of the scenario's formats, with the seed's exact values. */
START_TEST(calc_json_fields)
{
    RunResult r = RUN("calc", "--json");
    ck_assert_int_eq(r.status, 0);
    cJSON *j = json_of(&r);
    ck_assert(num(j, "elements") == 8589934592.0);
    ck_assert(num(j, "context") == 8192 && num(j, "batch") == 16);
    static const char *const FIELDS[] = {"bytes_per_element", "bytes", "tensor_scale_bytes",
                                         "bytes_per_sequence", "gib", "gb", "slots"};
    const cJSON *f, *formats = cJSON_GetObjectItem(j, "formats");
    ck_assert_int_eq(cJSON_GetArraySize(formats), 5);     // the default scenario's formats
    cJSON_ArrayForEach(f, formats)
        for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; i++)
            num(f, FIELDS[i]);
    ck_assert(num(format_row(j, "fp8_e4m3"), "tensor_scale_bytes") == 256);
    ck_assert(num(format_row(j, "int8"), "bytes") == 8724152320.0);
    ck_assert(num(format_row(j, "nvfp4"), "slots") == 71);
    ck_assert(num(format_row(j, "mxfp4"), "gib") == 4.25);
    cJSON_Delete(j);
    run_free(&r);
}
END_TEST

/* Any typed shape is answered exactly: random shapes, formats, contexts
 * and batches against the byte formula computed here. */
START_TEST(calc_typed_shapes_random)
{
    Rng g = {test_seed() ^ 0x7E5};
    for (int i = 0; i < 25; i++) {
        uint64_t L = rng_range(&g, 1, 128), H = rng_range(&g, 1, 16),
                 D = i % 2 ? 32 * rng_range(&g, 1, 8) : rng_range(&g, 1, 300),
                 S = rng_range(&g, 1, 1 << 21), B = rng_range(&g, 1, 256);
        const Format *f = format_at((size_t)rng_range(&g, 0, format_count() - 1));
        char l[24], h[24], q[24], d[24], s[24], b[24];
        snprintf(l, sizeof l, "%llu", (unsigned long long)L);
        snprintf(h, sizeof h, "%llu", (unsigned long long)H);
        snprintf(q, sizeof q, "%llu", (unsigned long long)(H * 4));
        snprintf(d, sizeof d, "%llu", (unsigned long long)D);
        snprintf(s, sizeof s, "%llu", (unsigned long long)S);
        snprintf(b, sizeof b, "%llu", (unsigned long long)B);
        RunResult r = RUN("calc", "--layers", l, "--kv-heads", h, "--q-heads", q, "--head-dim", d,
                          "--context", s, "--batch", b, "--format", f->id, "--json");
        ck_assert_msg(r.status == 0, "%s", r.err);
        cJSON *j = json_of(&r);
        const cJSON *row = format_row(j, f->id);
        /* bytes as raw text, exact: 2 L H S B x vector bytes, the vector
         * written out here from the table of DESIGN.md's byte accounting
         * (payload bits, FP16 scale per vector for INT8, metadata bytes
         * per block) */
        static const struct { const char *id; unsigned bits, group, meta, vmeta; } DESIGN[] = {
            {"bf16", 16, 0, 0, 0}, {"fp16", 16, 0, 0, 0}, {"fp8_e4m3", 8, 0, 0, 0},
            {"fp8_e5m2", 8, 0, 0, 0}, {"int8", 8, 0, 0, 2}, {"int4", 4, 32, 4, 0},
            {"int2", 2, 32, 4, 0}, {"nvfp4", 4, 16, 1, 0}, {"mxfp4", 4, 32, 1, 0}};
        u128 vec = 0;
        for (size_t k = 0; k < sizeof DESIGN / sizeof DESIGN[0]; k++)
            if (strcmp(DESIGN[k].id, f->id) == 0)
                vec = (D * DESIGN[k].bits + 7) / 8 + DESIGN[k].vmeta +
                      (DESIGN[k].group ? (D + DESIGN[k].group - 1) / DESIGN[k].group * DESIGN[k].meta : 0);
        ck_assert(vec > 0);
        u128 want = (u128)2 * L * H * S * B * vec;
        char *raw = cJSON_PrintUnformatted(cJSON_GetObjectItem(row, "bytes"));
        ck_assert_msg(strcmp(raw, u128s(want)) == 0, "%s: want %s got %s", f->id, u128s(want), raw);
        cJSON_free(raw);
        ck_assert(num(j, "elements") == (double)((u128)2 * L * H * D * S * B));
        cJSON_Delete(j);
        run_free(&r);
    }
}
END_TEST

/* Seed 001 on the command line: --gpu with utilization and reserve. */
START_TEST(calc_gpu_budget)
{
    RunResult r = RUN("calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--memory", "80GB",
                      "--context", "128k", "--batch", "3", "--weights", "16GB", "--utilization", "1",
                      "--reserve", "6GB", "--json");
    ck_assert_msg(r.status == 0, "%s", r.err);
    cJSON *j = json_of(&r);
    ck_assert(num(j, "pool") == 58e9);
    ck_assert(num(format_row(j, "bf16"), "slots") == 3);
    ck_assert(num(format_row(j, "fp8_e4m3"), "slots") == 6);
    ck_assert(fabs(num(format_row(j, "fp8_e4m3"), "step_ms") - 12.461) < 0.001);
    cJSON_Delete(j);
    run_free(&r);
}
END_TEST

/* The speedup series of seed 002 (1.12x, 1.52x, 1.81x). */
START_TEST(calc_series)
{
    RunResult r = RUN("calc", "--model", "llama-3-8b", "--batch", "32", "--weights", "16GB",
                      "--bandwidth", "3.35TB/s", "--format", "fp8", "--contexts", "1k,8k,32k", "--json");
    ck_assert_msg(r.status == 0, "%s", r.err);
    cJSON *j = json_of(&r);
    const cJSON *s = cJSON_GetObjectItem(format_row(j, "fp8_e4m3"), "series");
    ck_assert_int_eq(cJSON_GetArraySize(s), 3);
    static const double WANT[] = {1.12, 1.52, 1.81};
    for (int i = 0; i < 3; i++)
        ck_assert(fabs(num(cJSON_GetArrayItem(s, i), "speedup") - WANT[i]) < 0.005);
    cJSON_Delete(j);
    run_free(&r);
    r = RUN("calc", "--csv", "--format", "bf16");
    ck_assert(r.status == 0 && strncmp(r.out, "format,", 7) == 0);
    run_free(&r);
}
END_TEST

/* A pool that, with the weights' share on one GPU, exceeds the GPU's
 * memory is computed all the same (a what-if) and said to exceed it: a
 * warning line in the text, pool_exceeds_gpu and the numbers in JSON. One
 * that fits (the GPU's own) is not flagged. Random pools and degrees
 * against the definition. */
START_TEST(calc_pool_exceeds_gpu)
{
    RunResult r = RUN("calc", "--scenario", "speedup-vs-context");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "warning: the KV pool (80.00 GB) and the weights on one GPU "
                                "(16.00 GB) exceed its 85.52 GB by 10.48 GB") &&
                      strstr(r.out, "tensor parallelism over 4 GPUs"),
                  "%s", r.out);
    ck_assert(strstr(r.out, "\nfp16 ") != NULL);       // the figures are still there
    run_free(&r);
    r = RUN("calc", "--model", "llama-3-8b", "--gpu", "h100-sxm");
    ck_assert(r.status == 0 && !strstr(r.out, "warning"));
    run_free(&r);
    const double h200 = 143771.0 * 1048576, weights = 141107412992.0;   // llama-3.1-70b
    Rng g = {test_seed() ^ 0x9001};
    for (int i = 0; i < 12; i++) {
        char pool[32], tp[8];
        snprintf(pool, sizeof pool, "%lluMB", (unsigned long long)rng_range(&g, 1000, 200000));
        snprintf(tp, sizeof tp, "%d", 1 << rng_range(&g, 0, 3));
        r = RUN("calc", "--model", "llama-3.1-70b", "--gpu", "h200", "--pool", pool, "--tp", tp, "--json");
        ck_assert_msg(r.status == 0, "%s", r.err);
        cJSON *j = json_of(&r);
        const cJSON *fit = cJSON_GetObjectItem(j, "gpu_fit");
        double share = ceil(weights / atof(tp)), p = num(j, "pool");
        bool over = p + share > h200;
        ck_assert_seeded(cJSON_IsTrue(cJSON_GetObjectItem(j, "pool_exceeds_gpu")) == over, "%s %s", pool, tp);
        ck_assert_seeded(num(fit, "gpu_memory") == h200 && num(fit, "weights_per_gpu") == share, "%s", tp);
        if (over)
            ck_assert_seeded(num(fit, "excess") == p + share - h200, "%s %s", pool, tp);
        cJSON_Delete(j);
        run_free(&r);
        r = RUN("calc", "--model", "llama-3.1-70b", "--gpu", "h200", "--pool", pool, "--tp", tp);
        ck_assert_seeded((strstr(r.out, "warning: the KV pool") != NULL) == over, "%s %s", pool, tp);
        run_free(&r);
    }
}
END_TEST

/* The notes say what the figures are: the speedups' baseline as the table
 * names it; a context's k form only where it is exact and not a round
 * thousand; weights that leave no pool name the degree that would. */
START_TEST(calc_notes_name_what_they_mean)
{
    static const struct { const char *scenario, *format, *want; } BASE[] = {
        {"speedup-vs-context", NULL, "speedup is over fp16 (as many bytes as BF16)"},
        {"h100-128k", NULL, "speedup is over bf16\n"},
        {"h100-128k", "fp8", "speedup is over BF16 (not in this table)"},
    };
    for (size_t i = 0; i < N_OF(BASE); i++) {
        RunResult r = BASE[i].format ? RUN("calc", "--scenario", BASE[i].scenario, "--format", BASE[i].format)
                                     : RUN("calc", "--scenario", BASE[i].scenario);
        ck_assert_msg(r.status == 0 && strstr(r.out, BASE[i].want), "want '%s' in:\n%s", BASE[i].want, r.out);
        run_free(&r);
    }
    RunResult r = RUN("calc", "--scenario", "llama-70b-128k", "--weights", "16GB", "--bandwidth", "3TB/s",
                      "--contexts", "1k,128000");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "context 128,000 tokens") && !strstr(r.out, "125k"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "speedup at     1k  128,000"), "%s", r.out);
    run_free(&r);
    usage_error(RUN("calc", "--model", "llama-3.1-70b", "--gpu", "h100-sxm"), "nothing is left",
                "tensor parallelism over 2 GPUs");
}
END_TEST

/* Nonsense: exit 2 and one line naming the argument and what was wanted. */
START_TEST(calc_errors)
{
    usage_error(RUN("calc", "--context", "banana"), "--context", "banana");
    usage_error(RUN("calc", "--model", "llama-9"), "unknown model 'llama-9'", "llama-3.1-8b");
    usage_error(RUN("calc", "--format", "fp7"), "unknown format 'fp7'", "nvfp4");
    usage_error(RUN("calc", "--bogus"), "unknown option '--bogus'", NULL);
    usage_error(RUN("calc", "--batch", "0"), "--batch", "out of range");
    usage_error(RUN("calc", "--batch"), "--batch needs a value", NULL);
    usage_error(RUN("calc", "--layers", "32"), "--kv-heads", NULL);
    usage_error(RUN("calc", "--pool", "20 GiBs"), "--pool", "unknown unit");
    usage_error(RUN("calc", "--bandwidth", "3TB"), "--bandwidth", "per second");
    usage_error(RUN("calc", "--gpu", "h100"), "unknown GPU 'h100'", "h100-sxm");
    /* calc's checks of the workload as a whole name the option behind each */
    usage_error(RUN("calc", "--model", "llama-3.1-8b", "--tp", "3"), "--tp: tensor-parallel degree 3", NULL);
    usage_error(RUN("calc", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--q-heads", "32", "--mha",
                    "--tp", "3"), "--tp: tensor-parallel", NULL);
    usage_error(RUN("calc", "--bf16-layers", "0,99"), "--bf16-layers: layer 99", NULL);
    usage_error(RUN("calc", "--bf16-layers", "31,32"), "--bf16-layers: layer 32", NULL);
    usage_error(RUN("calc", "--context", "18446744073709551615"), "--context: overflow", NULL);
    usage_error(RUN("calc", "--layers", "1000000000000", "--kv-heads", "1000000000000",
                    "--head-dim", "4000000000", "--context", "1000000000000", "--batch",
                    "4000000000"), "--context, --batch, --layers, --kv-heads, --head-dim: overflow", NULL);
    usage_error(RUN("calc", "--model", "llama-3.1-405b", "--gpu", "l4"), "--gpu", "KV cache");
    usage_error(RUN("frobnicate"), "unknown command 'frobnicate'", "calc");
    usage_error(RUN("calc", "--bandwidth", "3.35Tb/s"), "bits", NULL);
    usage_error(RUN("calc", "--bandwidth", "3352"), "per second", NULL);
    usage_error(RUN("calc", "--json", "--csv"), "not both", NULL);
    usage_error(RUN("formats", "--json", "--csv"), "not both", NULL);     // one rule, every command
    usage_error(RUN("bench", "--json", "--csv"), "not both", NULL);
    usage_error(RUN("calc", "--memory", "80GB"), "need --gpu", NULL);
    RunResult r = RUN("bench", "--json", "--csv", "--help");      // help first, whatever else is given
    ck_assert_msg(r.status == 0 && !strncmp(r.out, "usage: kvlab bench", 18), "exit %d: out '%.60s', err '%s'",
                  r.status, r.out, r.err);
    run_free(&r);
}
END_TEST

/* kvlab formats lists every format with its bytes per element, and every
 * command's --help shows its usage and exits 0. */
START_TEST(formats_and_help)
{
    RunResult r = RUN("formats", "--json");
    ck_assert_int_eq(r.status, 0);
    cJSON *j = json_of(&r);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "formats")), (int)format_count());
    ck_assert(num(format_row(j, "nvfp4"), "bytes_per_element") == 0.5625);
    cJSON_Delete(j);
    run_free(&r);
    static const char *const HELP[][3] = {
        {"--help", NULL, "kvlab COMMAND [options]"}, {"--version", NULL, "kvlab 0."},
        {"calc", "--help", "--kv-heads H"},      {"formats", "--help", "--head-dim D"},
        {"scenario", "--help", "throughput_ratio"}, {"quant", "--help", "--outlier-scale X"},
        {"roundtrip", "--help", "--saturate"}};
    for (size_t i = 0; i < sizeof HELP / sizeof HELP[0]; i++) {
        r = HELP[i][1] ? RUN(HELP[i][0], HELP[i][1]) : RUN(HELP[i][0]);
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strstr(r.out, HELP[i][2]) != NULL, "%s %s: no '%s'", HELP[i][0],
                      HELP[i][1] ? HELP[i][1] : "", HELP[i][2]);
        run_free(&r);
    }
    r = RUN("formats");
    ck_assert(strstr(r.out, "int8") && strstr(r.out, "1.015625") && strstr(r.out, "3.56x"));
    run_free(&r);
    /* -h and help are --help; what follows a word kvlab takes alone is refused */
    for (int i = 0; i < 2; i++) {
        r = i ? RUN("help") : RUN("-h");
        ck_assert_msg(r.status == 0 && strstr(r.out, "kvlab --help | -h | help | --version"), "%s", r.out);
        run_free(&r);
    }
    usage_error(RUN("--version", "--bogus"), "--version takes nothing after it", "'--bogus'");
    usage_error(RUN("--help", "calc"), "--help takes nothing after it", "kvlab COMMAND --help");
    usage_error(RUN("help", "x", "y"), "help takes nothing after it", "'x'");
}
END_TEST

/* scenario: list, show, and check's three answers (0, 1, 2). */
START_TEST(scenario_commands)
{
    RunResult r = RUN("scenario", "list");
    ck_assert_int_eq(r.status, 0);
    ck_assert(strstr(r.out, "pool-20gib") && strstr(r.out, "h100-128k"));
    run_free(&r);
    r = RUN("scenario", "show", "budget-60gb-32k");
    ck_assert_int_eq(r.status, 0);
    ck_assert(strstr(r.out, "seed is wrong") && strstr(r.out, "44"));
    run_free(&r);
    r = RUN("scenario", "check", "pool-20gib");
    ck_assert_int_eq(r.status, 0);
    run_free(&r);
    char path[1024];
    snprintf(path, sizeof path, "%s/scenario_unexplained.json", test_testdata());
    r = RUN("scenario", "check", path);
    ck_assert_int_eq(r.status, 1);
    ck_assert(strstr(r.out, "DISAGREES"));
    run_free(&r);
    snprintf(path, sizeof path, "%s/bad/scenario_metric.json", test_testdata());
    usage_error(RUN("scenario", "check", path), "scenario_metric.json:5:30:", "slotz");
    r = RUN("scenario", "show", "h100-128k", "--json");
    ck_assert_int_eq(r.status, 0);
    cJSON *j = json_of(&r);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
    ck_assert_int_ge(cJSON_GetArraySize(cJSON_GetObjectItem(j, "figures")), 10);
    cJSON_Delete(j);
    run_free(&r);
    usage_error(RUN("scenario", "show"), "NAME", NULL);
    usage_error(RUN("scenario", "dance"), "unknown action 'dance'", NULL);
}
END_TEST

/* Output that cannot be written is a run-time failure (exit 3), not a
 * success; data files that are not regular files are refused, not waited
 * on; the locale never changes what numbers mean. */
START_TEST(io_and_locale)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s' calc >/dev/full 2>/dev/null", test_bin());
    int st = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(st), 3);
    char fifo[] = "/tmp/kvlab-fifo-XXXXXX";
    ck_assert(mkdtemp(fifo) != NULL);
    char path[64];
    snprintf(path, sizeof path, "%s/f.json", fifo);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    usage_error(RUN("scenario", "check", path), "not a regular file", NULL);
    unlink(path);
    rmdir(fifo);
    setenv("LC_ALL", "de_DE.UTF-8", 1);
    RunResult r = RUN("calc", "--pool", "21.47GB", "--weights", "16.5GB", "--bandwidth", "3.35TB/s",
                      "--format", "bf16", "--json");
    unsetenv("LC_ALL");
    ck_assert_int_eq(r.status, 0);
    cJSON *j = json_of(&r);
    ck_assert(num(j, "pool") == 21.47e9 && num(j, "weights") == 16.5e9);
    cJSON_Delete(j);
    run_free(&r);
}
END_TEST

/* `kvlab quant` reproduces seed 001's worked example in JSON, and on a
 * generated cache per-token keys lose far more than per-channel keys. */
START_TEST(quant_command)
{
    static const struct { const char *g; double s[4], max, fro; } T[] = {
        {"token", {0.3, -0.1, -0.8, 0.6}, 1.7, 0.086},
        {"channel", {1.23, 0.90, 0.93, 1.67}, 0.067, 0.006},
    };
    for (size_t i = 0; i < 2; i++) {
        RunResult r = RUN("quant", "--preset", "worked-4x4", "--bits", "2", "--granularity",
                          T[i].g, "--json");
        ck_assert_msg(r.status == 0, "%s", r.err);
        cJSON *j = json_of(&r);
        const cJSON *sc = cJSON_GetObjectItem(j, "scores");
        ck_assert_int_eq(cJSON_GetArraySize(sc), 4);
        for (int k = 0; k < 4; k++)
            ck_assert_msg(fabs(cJSON_GetArrayItem(sc, k)->valuedouble - T[i].s[k]) < 0.005, "%s score %d",
                          T[i].g, k);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "scores_ref")), 4);
        ck_assert(fabs(num(j, "max_score_error") - T[i].max) < 0.0005);
        ck_assert(fabs(num(j, "rel_fro_error") - T[i].fro) < 0.0005);   // a fraction, not percent
        num(j, "output_rel_error");
        cJSON_Delete(j);
        run_free(&r);
    }
    RunResult r = RUN("quant", "--generate", "--json");
    ck_assert_msg(r.status == 0, "%s", r.err);
    cJSON *j = json_of(&r);
    double tok = -1, chan = -1;
    const cJSON *run;
    cJSON_ArrayForEach(run, cJSON_GetObjectItem(j, "runs")) {
        const char *g = cJSON_GetObjectItem(run, "granularity")->valuestring;
        if (strcmp(g, "token") == 0)
            tok = num(run, "rel_fro_error");
        if (strcmp(g, "channel") == 0)
            chan = num(run, "rel_fro_error");
    }
    ck_assert_msg(tok > 3 * chan && chan > 0, "token %g channel %g", tok, chan);
    cJSON_Delete(j);
    run_free(&r);
    r = RUN("quant", "--preset", "worked-4x4", "--granularity", "token", "--bits", "2");
    ck_assert(r.status == 0 && strstr(r.out, "-1.7") && strstr(r.out, "8.587%"));
    run_free(&r);
    usage_error(RUN("quant", "--bits", "9"), "--bits", "out of range");
    usage_error(RUN("quant", "--granularity", "row"), "unknown granularity 'row'", "tgroup:G");
    /* a group size is a count like any other: 1e3 as --tokens reads it */
    r = RUN("quant", "--preset", "worked-4x4", "--granularity", "tgroup:1e3", "--json");
    ck_assert_msg(r.status == 0 && strstr(r.out, "\"tgroup:1000\""), "%s", r.err);
    run_free(&r);
    usage_error(RUN("quant", "--granularity", "group:1.5"), "the group size", "not a whole number");
    usage_error(RUN("quant", "--scheme", "int5"), "unknown scheme 'int5'", NULL);
    usage_error(RUN("quant", "--preset", "worked-4x4", "--query", "1,2"), "--query", "4 values, one per channel, not 2");
    usage_error(RUN("quant", "--preset", "worked-4x4", "--query", "1,2,3,4,5"), "--query", "at most 4 values, not 5");
    usage_error(RUN("quant", "--rotate", "hadamard", "--head-dim", "96"), "power-of-two", NULL);
    usage_error(RUN("quant", "--preset", "nope"), "worked-4x4", NULL);
    usage_error(RUN("quant", "--outlier-scale", "-3"), "--outlier-scale", NULL);
    char path[1024];
    snprintf(path, sizeof path, "%s/bad/model_malformed.json", test_testdata());
    usage_error(RUN("quant", "--matrix", path), "--matrix", "malformed JSON");
}
END_TEST

/* `kvlab quant --matrix` reads keys, values and a query from JSON. */
START_TEST(quant_matrix_file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/worked-4x4.json", test_testdata());
    RunResult r = RUN("quant", "--matrix", path, "--bits", "2", "--granularity", "channel", "--json");
    ck_assert_msg(r.status == 0, "%s", r.err);
    cJSON *j = json_of(&r);
    ck_assert(fabs(num(j, "max_score_error") - 0.0667) < 0.0005);
    cJSON_Delete(j);
    run_free(&r);
}
END_TEST

/* `kvlab roundtrip`: one value per line, %.9g, nan/inf/-0 spelled out,
 * hex-floats accepted, the C locale whatever LC_ALL says, and a bad line
 * named by its number with exit 2. */
START_TEST(roundtrip_command)
{
    RunResult r = run_kvlab((const char *const[]){"roundtrip", "e4m3", NULL},
                            "0.01\n464\n465\n-0.0001\n0x1.8p3\n0.001\nnan\n-inf\n");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "0.009765625\n448\nnan\n-0\n12\n0.001953125\nnan\nnan\n");
    run_free(&r);
    r = run_kvlab((const char *const[]){"roundtrip", "e4m3", "--saturate", NULL}, "1000\n-inf\n");
    ck_assert_str_eq(r.out, "448\n-448\n");
    run_free(&r);
    r = run_kvlab((const char *const[]){"roundtrip", "e5m2", NULL}, "61440\n3.3\n");
    ck_assert_str_eq(r.out, "inf\n3.5\n");
    run_free(&r);
    r = run_kvlab((const char *const[]){"roundtrip", "e2m1", NULL}, "2.5\n100\n -0.2 \n");
    ck_assert_str_eq(r.out, "2\n6\n-0\n");
    run_free(&r);
    setenv("LC_ALL", "de_DE.UTF-8", 1);
    r = run_kvlab((const char *const[]){"roundtrip", "e5m2", NULL}, "1.25\n");
    unsetenv("LC_ALL");
    ck_assert_str_eq(r.out, "1.25\n");
    run_free(&r);
    r = run_kvlab((const char *const[]){"roundtrip", "e4m3", NULL}, "1\n2\nabc\n4\n");
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.out, "1\n2\n");
    ck_assert(strstr(r.err, "line 3") && strstr(r.err, "abc"));
    run_free(&r);
    usage_error(RUN("roundtrip", "e3m4"), "unknown format 'e3m4'", "e2m1");
    usage_error(RUN("roundtrip"), "FORMAT", NULL);
}
END_TEST

/* kvlab bench on the CPU reference: one row per (format, batch, context),
 * KV bytes of one layer (layers 3, KV heads 2: the bytes must not grow
 * with the layers), a BF16 slope ratio of exactly 1 for each batch, a slope that needs
 * two contexts, and usage errors that name the option (more --format
 * options than there are formats among them). */
START_TEST(bench_command)
{
    RunResult r = RUN("bench", "--backend", "cpu", "--kv-heads", "2", "--q-heads", "4", "--head-dim", "64",
                      "--layers", "3", "--batch", "1,2", "--contexts", "256,512", "--format", "bf16",
                      "--format", "int8", "--iters", "1", "--json");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    cJSON *j = json_of(&r);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "backend")->valuestring, "cpu");
    const cJSON *row;
    int n = 0;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(j, "rows")) {
        const char *f = cJSON_GetObjectItem(row, "format")->valuestring;
        double B = num(row, "batch"), T = num(row, "context");
        /* K and V for each of 2 KV heads, token and sequence: BF16 2 bytes a
         * channel; INT8 1 byte per channel and an FP16 scale per vector */
        ck_assert_double_eq(num(row, "kv_bytes"), 2 * 2 * (!strcmp(f, "bf16") ? 2 * 64 : 64 + 2) * T * B);
        ck_assert(num(row, "attention_ms") > 0);
        n++;
    }
    ck_assert_int_eq(n, 2 * 2 * 2);
    int bf16_fits = 0;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(j, "fits"))
        if (!strcmp(cJSON_GetObjectItem(row, "format")->valuestring, "bf16")) {
            ck_assert_double_eq(num(row, "ratio_to_bf16"), 1);
            bf16_fits++;
        }
    ck_assert_int_eq(bf16_fits, 2);
    cJSON_Delete(j);
    run_free(&r);

    r = RUN("bench", "--backend", "cpu", "--kv-heads", "2", "--q-heads", "4", "--head-dim", "64",
            "--layers", "2", "--batch", "1,2", "--contexts", "256", "--format", "int8", "--format", "bf16",
            "--iters", "1");
    ck_assert_int_eq(r.status, 0);
    const char *once = strstr(r.out, "needs two or more contexts");     // once, not per format and batch
    ck_assert_msg(once && !strstr(once + 1, "needs two or more contexts") && !strstr(r.out, "nan"), "%s", r.out);
    run_free(&r);

    /* every point is a row, in the text and the CSV alike, past the 64 a
     * table once held: 6 formats x 3 batches x 4 contexts */
    for (int csv = 0; csv < 2; csv++) {
        const char *argv[] = {"bench", "--backend", "cpu", "--kv-heads", "1", "--head-dim", "32", "--layers", "1",
                              "--batch", "1,2,3", "--contexts", "64,128,192,256", "--iters", "1", "--csv", NULL};
        if (!csv)
            argv[N_OF(argv) - 2] = NULL;
        r = run_kvlab(argv, NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        static const char *const FMTS[] = {"bf16", "fp8_e4m3", "int8", "int4", "nvfp4", "mxfp4"};
        size_t rows = 0;
        for (size_t f = 0; f < N_OF(FMTS); f++)
            for (int b = 1; b <= 3; b++)
                for (int c = 64; c <= 256; c += 64) {
                    char line[64];
                    int len = csv ? snprintf(line, sizeof line, "\n%s,%d,%d,", FMTS[f], b, c)
                                  : snprintf(line, sizeof line, "\n%-8s  %5d  %7d  ", FMTS[f], b, c);
                    const char *at = strstr(r.out, line);
                    ck_assert_msg(at && !strstr(at + len, line), "no row '%s' (or more than one) in:\n%s", line + 1,
                                  r.out);
                    rows++;
                }
        ck_assert_uint_eq(rows, 72);
        run_free(&r);
    }
    usage_error(RUN("bench", "--backend", "tpu"), "backend", "tpu");
    usage_error(RUN("bench", "--format", "fp7"), "fp7", NULL);
    usage_error(RUN("bench", "--contexts", "1k,x"), "--contexts", NULL);
    // lists: an empty entry and one value too many are refused, not skipped or cut
    usage_error(RUN("bench", "--batch", "1,,16"), "--batch", "empty entry");
    usage_error(RUN("bench", "--contexts", "1k,"), "--contexts", "empty entry");
    usage_error(RUN("bench", "--batch", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"), "--batch", "at most 16 values, not 17");
    usage_error(RUN("calc", "--contexts", "1k,,8k"), "--contexts", "empty entry");
    usage_error(RUN("bench", "--fp8-path", "D"), "--fp8-path", "'D'");
    usage_error(RUN("bench", "--fp8-path", "AC"), "--fp8-path", "'AC'");
    usage_error(RUN("bench", "--promote", "2"), "--promote", "path A or C");
    usage_error(RUN("bench", "--fp8-path", "B", "--promote", "2"), "--promote", "path A or C");
    usage_error(RUN("bench", "--splits", "0"), "--splits", NULL);
    usage_error(RUN("bench", "--backend", "cpu", "--splits", "1"), "--splits", "the CPU reference is timed here");
    // a path set in the environment counts as chosen: --promote goes with it (and is then
    // refused only because the CPU reference has no path to promote in)
    setenv("KVLAB_CUDA_PATH", "fp8a", 1);
    usage_error(RUN("bench", "--backend", "cpu", "--format", "fp8", "--promote", "2"), "--promote",
                "the CPU reference is timed here");
    setenv("KVLAB_CUDA_PATH", "fp8c", 1);
    usage_error(RUN("bench", "--backend", "cpu", "--format", "fp8", "--promote", "2"), "--promote",
                "the CPU reference is timed here");
    unsetenv("KVLAB_CUDA_PATH");
    usage_error(RUN("bench", "--fp8-path", "A", "--promote", "0"), "--promote", "1 to 64");
    // --itl is refused before any point is timed: without a model's weights, and on the CPU
    usage_error(RUN("bench", "--backend", "cpu", "--itl", "--layers", "2", "--kv-heads", "2", "--head-dim", "64",
                    "--q-heads", "4"),
                "--itl", "--model");
    usage_error(RUN("bench", "--backend", "cpu", "--itl"), "--itl", "on the GPU");
    usage_error(RUN("bench", "--format", "bf16", "--format", "fp8", "--format", "int8", "--format", "int4",
                    "--format", "nvfp4", "--format", "mxfp4", "--format", "bf16"),
                "--format", "at most 6");
}
END_TEST

/* A plugin that is found but will not load is named with why (here a file
 * too short to be a library), by bench --backend cuda as by --help's line,
 * not hidden behind the library path's "no such file" that comes after. */
START_TEST(broken_plugin_named)
{
    char dir[] = "/tmp/kvlab-plugin-XXXXXX", cmd[512], out[2048];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "cp '%s' %s/kvlab && echo junk > %s/libkvlab_cuda.so", test_bin(), dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "env -u KVLAB_CUDA_PLUGIN %s/kvlab bench --backend cuda --format bf16 "
                              "--contexts 1k --batch 1 2>&1; echo \"exit $?\"", dir);
    FILE *p = popen(cmd, "r");
    ck_assert(p != NULL);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    pclose(p);
    char want[128];
    snprintf(want, sizeof want, "(%s/libkvlab_cuda.so: file too short)", dir);
    ck_assert_msg(strstr(out, want) && strstr(out, "exit 3"), "want '%s' and exit 3 in: %s", want, out);
    snprintf(cmd, sizeof cmd, "rm -r %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ------------------------------------------------------------------------
 * Bad input
 */

/* Runs kvlab through sh with `redirect` (input from a file, a pipe...),
 * and returns its exit status, stdout and stderr. */
static RunResult run_shell(const char *args, const char *redirect)
{
    char out[] = "/tmp/kvlab-out-XXXXXX", err[] = "/tmp/kvlab-err-XXXXXX", cmd[2400];
    int fo = mkstemp(out), fe = mkstemp(err);
    ck_assert(fo >= 0 && fe >= 0);
    snprintf(cmd, sizeof cmd, "%s '%s' %s > %s 2> %s", redirect, test_bin(), args, out, err);
    int st = system(cmd);
    RunResult r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128, NULL, NULL};
    char *bufs[2] = {NULL, NULL};
    int fds[2] = {fo, fe};
    for (int i = 0; i < 2; i++) {
        off_t n = lseek(fds[i], 0, SEEK_END);
        bufs[i] = calloc((size_t)n + 1, 1);
        ck_assert(pread(fds[i], bufs[i], (size_t)n, 0) == n);
        close(fds[i]);
    }
    unlink(out), unlink(err);
    r.out = bufs[0], r.err = bufs[1];
    return r;
}

/* JSON text as kvlab prints it: whole UTF-8, and no DEL or C1 control raw
 * (in a string they are \u escapes). */
static bool json_safe(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == 0x7F || (*p == 0xC2 && p[1] >= 0x80 && p[1] < 0xA0))
            return false;
        if (*p >= 0x80) {
            int n = *p >= 0xF0 ? 3 : *p >= 0xE0 ? 2 : *p >= 0xC2 ? 1 : -1;
            for (int k = 1; k <= n; k++)
                if ((p[k] & 0xC0) != 0x80)
                    return false;
            if (n < 0)
                return false;
            p += n;
        }
    }
    return true;
}

/* What a terminal may be shown: no control character but a newline where
 * lines are allowed, no DEL, no C1 (U+0080 to U+009F), only whole UTF-8. */
static bool terminal_safe(const char *s, bool lines)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (*p < 0x80) {
            if ((*p < 0x20 && !(lines && *p == '\n')) || *p == 0x7F)
                return false;
            p++;
            continue;
        }
        int n = *p >= 0xF0 ? 3 : *p >= 0xE0 ? 2 : *p >= 0xC2 ? 1 : -1;
        if (n < 0 || *p > 0xF4 || (p[0] == 0xC2 && p[1] < 0xA0))
            return false;
        for (int k = 1; k <= n; k++)
            if ((p[k] & 0xC0) != 0x80)
                return false;
        p += n + 1;
    }
    return true;
}

/* A run-time failure is exit 3, whatever the command: out of memory (the
 * address space held to 2 GB, a generated head of 16 GiB) is not bad usage,
 * and its message says what ran out. (AddressSanitizer reserves more
 * address space than that limit allows, so this is for the plain build.) */
START_TEST(out_of_memory_is_runtime)
{
#ifndef __SANITIZE_ADDRESS__
    static const char *const RUNS[] = {
        "quant --tokens 1048576 --head-dim 4096 --granularity token",
        "quant --tokens 1048576 --head-dim 4096 --json",
    };
    for (size_t i = 0; i < sizeof RUNS / sizeof RUNS[0]; i++) {
        RunResult r = run_shell(RUNS[i], "ulimit -v 2000000;");
        ck_assert_msg(r.status == 3 && strstr(r.err, "out of memory") && !*r.out, "kvlab %s: exit %d, %s",
                      RUNS[i], r.status, r.err);
        run_free(&r);
    }
#endif
}
END_TEST

/* Floats kvlab computes with are finite and within a float's range: nan,
 * inf and 1e39 in --query, in a --matrix file (named by line and column)
 * and in every float option are refused with exit 2, and inputs a float
 * holds but arithmetic would overflow (a generated head, a rotation) are
 * refused too; random finite inputs never give NaN without --no-saturate,
 * and only --no-saturate is ever blamed for one. */
START_TEST(quant_refuses_non_finite)
{
    static const char *const BAD[][2] = {{"nan", "finite"}, {"inf", "finite"}, {"-inf", "finite"},
                                         {"1e39", "range of a float"}, {"-1e300", "range of a float"}};
    for (size_t i = 0; i < N_OF(BAD); i++) {
        char q[64];
        snprintf(q, sizeof q, "1,2,3,%s", BAD[i][0]);
        usage_error(RUN("quant", "--preset", "worked-4x4", "--query", q), "--query", BAD[i][1]);
        static const char *const OPTS[] = {"--outlier-scale", "--query-outlier-weight", "--sink-strength",
                                           "--value-outlier-scale"};
        usage_error(RUN("quant", OPTS[i % 4], BAD[i][0]), OPTS[i % 4], BAD[i][1]);
        usage_error(RUN("quant", "--scheme", "fp8", "--scale", BAD[i][0]), "--scale", BAD[i][1]);
        usage_error(RUN("quant", "--rope", "pre", "--rope-theta", BAD[i][0]), "--rope-theta", BAD[i][1]);
    }
    static const struct { const char *json, *where; } FILES[] = {
        {"{\"keys\": [[1, 2], [3, 1e39]], \"query\": [1, 1]}", ":1:23:"},
        {"{\"keys\": [[1, 2], [3, 4]],\n \"values\": [[1, -1e300], [3, 4]], \"query\": [1, 1]}", ":2:17:"},
        {"{\"keys\": [[1, 2], [3, 4]], \"query\": [1, 3.5e38]}", ":1:41:"},
    };
    char path[] = "/tmp/kvlab-matrix-XXXXXX";
    for (size_t i = 0; i < N_OF(FILES); i++) {
        int fd = mkstemp(path);
        ck_assert(fd >= 0 && write(fd, FILES[i].json, strlen(FILES[i].json)) > 0);
        close(fd);
        usage_error(RUN("quant", "--matrix", path), FILES[i].where, "beyond the range of a float");
        unlink(path);
        strcpy(path, "/tmp/kvlab-matrix-XXXXXX");
    }
    usage_error(RUN("quant", "--outlier-scale", "3e38"), "outlier scale", "past a float's range");
    usage_error(RUN("quant", "--query-outlier-weight", "3e38"), "query outlier weight", NULL);
    usage_error(RUN("quant", "--head-dim", "64", "--outlier-channels", "8", "--outlier-scale", "1e38", "--rotate",
                    "hadamard"), "Hadamard", "overflows a float");
    /* int-zp's zero point widens [-5.23e37, 3.4e38] by almost half a step: 3 steps of 1.31e38 */
    int fd = mkstemp(path);
    static const char ZP[] = "{\"keys\": [[-5.23e37, 3.4e38], [0, 1]], \"query\": [1, 1]}";
    ck_assert(fd >= 0 && write(fd, ZP, sizeof ZP - 1) > 0);
    close(fd);
    usage_error(RUN("quant", "--matrix", path, "--scheme", "int-zp", "--bits", "2", "--granularity", "token"),
                "quantized keys", "pass a float's range");
    unlink(path);
    strcpy(path, "/tmp/kvlab-matrix-XXXXXX");
    /* random finite heads of every magnitude a float holds: finite figures, or (near FLT_MAX) the
       refusal above; never NaN, never the hint */
    Rng g = {test_seed() ^ 0xF1E};
    static const char *const SCHEMES[] = {"int-min", "int-zp", "int-sym", "fp8", "nvfp4", "mxfp4"};
    for (int i = 0; i < 12; i++) {
        fd = mkstemp(path);
        ck_assert(fd >= 0);
        FILE *f = fdopen(fd, "w");
        fprintf(f, "{\"keys\": [");
        int mag = (int)rng_range(&g, 0, 76) - 38;
        for (int r = 0; r < 6; r++) {
            fprintf(f, "%s[", r ? ", " : "");
            for (int c = 0; c < 4; c++)
                fprintf(f, "%s%.9g", c ? ", " : "", rng_uniform(&g, 3.4f) * pow(10, mag));
            fprintf(f, "]");
        }
        fprintf(f, "], \"query\": [%.9g, 1, -1, %.9g]}", rng_uniform(&g, 3.4f) * pow(10, mag),
                rng_uniform(&g, 1));
        fclose(f);
        const char *scheme = SCHEMES[rng_range(&g, 0, N_OF(SCHEMES) - 1)];
        RunResult r = RUN("quant", "--matrix", path, "--scheme", scheme, "--json");
        bool refused = r.status == 2 && strstr(r.err, "pass a float's range");    // int-zp near FLT_MAX
        ck_assert_seeded(refused || (r.status == 0 && !strstr(r.out, "null")), "%s, 10^%d: exit %d %s", scheme,
                         mag, r.status, r.err);
        run_free(&r);
        r = RUN("quant", "--matrix", path, "--scheme", scheme);
        ck_assert_seeded(refused || (r.status == 0 && !strstr(r.out, "NaN") && !strstr(r.out, "saturate")), "%s: %s",
                         scheme, r.out);
        run_free(&r);
        unlink(path);
        strcpy(path, "/tmp/kvlab-matrix-XXXXXX");
    }
    /* NaN comes only from --no-saturate, and says so */
    RunResult r = RUN("quant", "--preset", "worked-4x4", "--scheme", "fp8", "--scale", "0.001", "--no-saturate");
    ck_assert_msg(r.status == 0 && strstr(r.out, "NaN") && strstr(r.out, "--no-saturate"), "%s", r.out);
    run_free(&r);
}
END_TEST

/* kvlab bench refuses what its options get wrong before timing anything:
 * exit 2 naming the option, for shapes (zero, out of range, query heads
 * that are not a multiple, a head dimension the kernels do not take), a
 * partial shape as calc refuses it, and contexts the cache cannot count. */
START_TEST(bench_refuses_at_parsing)
{
    usage_error(RUN("bench", "--layers", "32", "--kv-heads", "8", "--head-dim", "0"), "--head-dim", "out of range");
    usage_error(RUN("bench", "--layers", "1001", "--kv-heads", "8", "--head-dim", "128"), "--layers",
                "1 to 1000");
    usage_error(RUN("bench", "--layers", "1", "--kv-heads", "8", "--q-heads", "12", "--head-dim", "128"),
                "--q-heads", "multiple");
    usage_error(RUN("bench", "--layers", "1", "--kv-heads", "8", "--head-dim", "100"), "--head-dim",
                "multiple of 32");
    usage_error(RUN("bench", "--layers", "32"), "a typed shape needs", "missing --kv-heads");
    usage_error(RUN("calc", "--layers", "32"), "a typed shape needs", "missing --kv-heads");
    usage_error(RUN("bench", "--contexts", "999999999999k"), "--contexts", "at most");
    usage_error(RUN("bench", "--contexts", "1k,1024"), "--contexts", "listed already");
    usage_error(RUN("bench", "--format", "int4", "--format", "int4"), "--format", "twice");
}
END_TEST

/* Control characters in arguments and data files reach the terminal
 * escaped, in every message and text output: a scenario whose title holds
 * an OSC sequence and a newline (show, check), an option value in an
 * error, a --matrix path, and random bytes in arguments, whose one-line
 * error is always terminal-safe; JSON keeps the text (escaped as JSON). */
START_TEST(control_characters_escaped)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenario_control.json", test_testdata());
    static const char *const VERBS[] = {"show", "check"};
    for (int i = 0; i < 2; i++) {
        RunResult r = RUN("scenario", VERBS[i], path);
        ck_assert_msg(terminal_safe(r.out, true) && terminal_safe(r.err, true), "%s: %s", VERBS[i], r.out);
        ck_assert_msg(strstr(r.out, "\\e]0;retitled\\x07A title\\nwith a second line\n"), "%s", r.out);
        ck_assert(strstr(r.out, "BF16\\e[31m slots"));
        if (i == 0)
            ck_assert(strstr(r.out, "tests \\u009b2J\n") && strstr(r.out, "a\\rb"));
        run_free(&r);
    }
    /* JSON escapes what cJSON leaves raw, DEL, the C1 controls and bytes
     * that are not UTF-8, and reads back the same (the last as U+FFFD) */
    RunResult r = RUN("scenario", "show", path, "--json");
    ck_assert_msg(json_safe(r.out), "%s", r.out);
    cJSON *j = json_of(&r);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "title")->valuestring, "\x1b]0;retitled\aA title\nwith a second line");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "source")->valuestring, "tests \xc2\x9b" "2J");
    cJSON_Delete(j);
    run_free(&r);
    char dir[] = "/tmp/kvlab-esc-XXXXXX", file[1200], cmd[2600];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(file, sizeof file, "%s/m\x7f\xff\xc2\x85.json", dir);
    snprintf(cmd, sizeof cmd, "cp '%s/worked-4x4.json' '%s'", test_testdata(), file);
    ck_assert_int_eq(system(cmd), 0);
    r = RUN("quant", "--matrix", file, "--granularity", "token", "--json");
    ck_assert_msg(r.status == 0 && json_safe(r.out), "%s", r.out);
    j = json_of(&r);
    ck_assert_msg(strstr(cJSON_GetObjectItem(j, "input")->valuestring, "/m\x7f\xef\xbf\xbd\xc2\x85.json"), "%s", r.out);
    cJSON_Delete(j);
    run_free(&r);
    unlink(file);
    usage_error(RUN("calc", "--context", "\x1b]0;x\a8k\n"), "'\\e]0;x\\x078k\\n'", NULL);
    usage_error(RUN("calc", "--model", "\x9b" "2J\xc2\x9b"), "'\\x9b2J\\u009b'", NULL);
    snprintf(file, sizeof file, "%s/m\x1b[2J.json", dir);
    snprintf(cmd, sizeof cmd, "cp '%s/worked-4x4.json' '%s'", test_testdata(), file);
    ck_assert_int_eq(system(cmd), 0);
    r = RUN("quant", "--matrix", file, "--granularity", "token");
    ck_assert_msg(r.status == 0 && terminal_safe(r.out, true) && strstr(r.out, "/m\\e[2J.json"), "%s", r.out);
    run_free(&r);
    unlink(file);
    rmdir(dir);
    Rng g = {test_seed() ^ 0xE5C};
    for (int i = 0; i < 200; i++) {
        char arg[24] = "x";                     // never a command, an option or a size
        size_t n = rng_range(&g, 2, sizeof arg - 1);
        for (size_t k = 1; k < n; k++)
            arg[k] = (char)rng_range(&g, 1, 255);
        arg[n] = '\0';
        r = i % 2 ? RUN("calc", "--pool", arg) : RUN(arg);
        ck_assert_seeded(r.status == 2 && terminal_safe(r.err, true) && strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
                         "exit %d, stderr: %s", r.status, r.err);
        run_free(&r);
    }
}
END_TEST

/* kvlab roundtrip refuses a line it cannot read whole: a NUL byte, a
 * carriage return inside a line, stdin that is a directory or closed; each
 * exit 2 with the line named, after the lines before it. A CRLF line end
 * is a line end. */
START_TEST(roundtrip_bad_input)
{
    RunResult r = run_shell("roundtrip e4m3", "printf '1\\n2\\0003\\n4\\n' |");
    ck_assert_msg(r.status == 2 && !strcmp(r.out, "1\n") && strstr(r.err, "line 2") && strstr(r.err, "NUL"),
                  "exit %d, out '%s', err '%s'", r.status, r.out, r.err);
    run_free(&r);
    r = run_shell("roundtrip e4m3", "printf '1\\r2\\n' |");
    ck_assert_msg(r.status == 2 && strstr(r.err, "line 1") && strstr(r.err, "'1\\r2'"), "%s", r.err);
    run_free(&r);
    r = run_shell("roundtrip e4m3", "printf '1\\r\\n2\\r\\n' |");
    ck_assert_msg(r.status == 0 && !strcmp(r.out, "1\n2\n"), "%s", r.err);
    run_free(&r);
    static const char *const UNREADABLE[] = {"< /", "<&-"};
    for (size_t i = 0; i < N_OF(UNREADABLE); i++) {
        char redirect[64];
        snprintf(redirect, sizeof redirect, "exec %s;", UNREADABLE[i]);
        r = run_shell("roundtrip e4m3", redirect);
        ck_assert_msg(r.status == 2 && strstr(r.err, "cannot read line 1"), "%s: exit %d, %s", UNREADABLE[i],
                      r.status, r.err);
        run_free(&r);
    }
}
END_TEST

/* An option that would change nothing is refused, saying what it needs,
 * in every command; a single-valued option given twice is refused in
 * every command that takes one, and a word too many in those that take
 * words; --bits takes what its help says, no more, no less. */
START_TEST(options_that_do_nothing)
{
    static const struct { const char *argv[14], *want; } NOTHING[] = {
        {{"quant", "--fp8", "e4m3"}, "--scheme fp8"},
        {{"quant", "--no-saturate"}, "--scheme fp8"},
        {{"quant", "--scale", "0.5"}, "--scheme fp8"},
        {{"quant", "--matrices"}, "--json"},
        {{"quant", "--matrices", "--json"}, "--granularity"},
        {{"quant", "--kivi", "--scheme", "int-zp"}, "--kivi"},
        {{"quant", "--kivi", "--granularity", "token"}, "--kivi"},
        {{"quant", "--kivi", "--values", "token"}, "exact"},
        {{"quant", "--preset", "worked-4x4", "--seed", "1"}, "generated head"},
        {{"quant", "--scheme", "nvfp4", "--granularity", "token"}, "group:16"},
        {{"quant", "--scheme", "fp8", "--scale", "0.5", "--values", "token"}, "tensor"},
        {{"quant", "--rope-theta", "10000"}, "--rope"},
        {{"calc", "--residual", "128", "--format", "bf16"}, "16-bit"},
        {{"calc", "--bf16-sliding"}, "sliding-window"},
        {{"calc", "--head-scales", "--format", "int4"}, "per-tensor scales"},
        {{"calc", "--layers", "2", "--kv-heads", "1", "--head-dim", "64", "--block", "16"}, "pool"},
        {{"calc", "--model", "llama-2-7b", "--mha"}, "KV head per query head"},
        {{"calc", "--gpu", "h100-sxm", "--pool", "20GiB", "--reserve", "1GiB"}, "given"},
        {{"bench", "--residual", "64", "--format", "bf16"}, "int4 (KIVI)"},
        {{"bench", "--fp8-path", "A", "--format", "bf16"}, "fp8_e4m3"},
        {{"bench", "--fp8-path", "B", "--backend", "cpu"}, "CPU reference"},
        {{"bench", "--fp8-path", "C", "--format", "int8"}, "fp8_e4m3"},
    };
    for (size_t i = 0; i < N_OF(NOTHING); i++)
        usage_error(run_kvlab(NOTHING[i].argv, NULL), NOTHING[i].want, NULL);
    /* every command that takes a valued option refuses one given twice; the
     * others (roundtrip, scenario) take words, and refuse a word too many */
    static const char *const TWICE[][3] = {{"calc", "--context", "8k"}, {"formats", "--head-dim", "64"},
                                           {"quant", "--seed", "2"}, {"bench", "--batch", "1"}};
    for (size_t i = 0; i < N_OF(TWICE); i++)
        usage_error(RUN(TWICE[i][0], TWICE[i][1], TWICE[i][2], TWICE[i][1], TWICE[i][2]), TWICE[i][1],
                    "given twice");
    usage_error(RUN("roundtrip", "e4m3", "e5m2"), "unexpected argument 'e5m2'", NULL);
    usage_error(RUN("scenario", "list", "list"), "list takes no argument", NULL);
    usage_error(RUN("scenario", "show", "pool-20gib", "budget-60gb-32k"), "unexpected argument 'budget-60gb-32k'",
                NULL);
    /* --bits: every width the help names is taken, and none beside them */
    RunResult r = RUN("quant", "--help");
    const char *h = strstr(r.out, "--bits N");
    unsigned lo, hi;
    ck_assert_msg(h && sscanf(strstr(h, "integer bits: "), "integer bits: %u to %u", &lo, &hi) == 2, "%s", r.out);
    run_free(&r);
    for (unsigned b = lo - 1; b <= hi + 1; b++) {
        char bits[8];
        snprintf(bits, sizeof bits, "%u", b);
        r = RUN("quant", "--preset", "worked-4x4", "--granularity", "token", "--bits", bits, "--json");
        ck_assert_msg((r.status == 0) == (b >= lo && b <= hi), "--bits %u: exit %d", b, r.status);
        run_free(&r);
    }
}
END_TEST

/* kvlab calc: a typed shape without --q-heads says its query heads are
 * not given (not MHA), in text and JSON; a size written without a unit
 * and so small that a unit was surely meant gets a note (the figures are
 * still those of the bytes given); a value whose digits overflow on the
 * way but not in the end is computed exactly. */
START_TEST(calc_smaller)
{
    RunResult r = RUN("calc", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--format", "bf16");
    ck_assert_msg(r.status == 0 && strstr(r.out, "query heads not given") && !strstr(r.out, "MHA)"), "%s", r.out);
    run_free(&r);
    r = RUN("calc", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--format", "bf16", "--json");
    cJSON *j = json_of(&r);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "shape"), "q_heads")));
    cJSON_Delete(j);
    run_free(&r);
    r = RUN("calc", "--layers", "32", "--kv-heads", "8", "--q-heads", "8", "--head-dim", "128", "--format", "bf16");
    ck_assert_msg(r.status == 0 && strstr(r.out, "8 query heads") && strstr(r.out, "(MHA)"), "%s", r.out);
    run_free(&r);
    static const char *const BARE[][3] = {{"--pool", "20", "20GiB"}, {"--weights", "16", "16GiB"},
                                          {"--pool", "1000000", "1000000GiB"}};
    for (size_t i = 0; i < N_OF(BARE); i++) {
        r = RUN("calc", "--model", "llama-3-8b", BARE[i][0], BARE[i][1], "--bandwidth", "3TB/s", "--json");
        ck_assert_msg(r.status == 0 && strstr(r.err, "a unit was probably meant") && strstr(r.err, BARE[i][2]),
                      "%s %s: %s", BARE[i][0], BARE[i][1], r.err);
        cJSON_Delete(json_of(&r));         // the note went to stderr: stdout is the JSON alone
        run_free(&r);
    }
    static const char *const MEANT[][2] = {{"--pool", "20GiB"}, {"--pool", "21474836480"}, {"--weights", "16e9"}};
    for (size_t i = 0; i < N_OF(MEANT); i++) {
        r = RUN("calc", "--model", "llama-3-8b", MEANT[i][0], MEANT[i][1], "--format", "bf16");
        ck_assert_msg(r.status == 0 && !*r.err, "%s %s: %s", MEANT[i][0], MEANT[i][1], r.err);
        run_free(&r);
    }
    r = RUN("calc", "--pool", "20000000000000000000000000000000e-30GiB", "--format", "bf16", "--json");
    j = json_of(&r);
    ck_assert(num(j, "pool") == 20.0 * (1 << 30));
    cJSON_Delete(j);
    run_free(&r);
}
END_TEST

/* kvlab models and kvlab gpus list every file of the data directory's
 * models/ and gpus/ by name, with its display name (and with --json its
 * source); a file that does not load is named on stderr, exit 2, and the
 * others are still listed. */
START_TEST(models_and_gpus)
{
    static const char *const KINDS[] = {"models", "gpus"};
    for (size_t k = 0; k < N_OF(KINDS); k++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", test_datadir(), KINDS[k]);
        size_t files = 0;
        DIR *d = opendir(dir);
        ck_assert_msg(d != NULL, "%s", dir);
        for (struct dirent *de; (de = readdir(d));)
            files += strlen(de->d_name) > 5 && !strcmp(de->d_name + strlen(de->d_name) - 5, ".json");
        closedir(d);
        RunResult r = RUN(KINDS[k], "--json");
        ck_assert_msg(r.status == 0, "%s", r.err);
        cJSON *j = json_of(&r);
        const cJSON *e;
        size_t n = 0;
        RunResult text = RUN(KINDS[k]);
        ck_assert_int_eq(text.status, 0);
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, KINDS[k])) {
            const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
            const char *display = cJSON_GetObjectItem(e, "display")->valuestring;
            char path[1200], line[256];
            struct stat st;
            snprintf(path, sizeof path, "%s/%s.json", dir, name);
            ck_assert_msg(stat(path, &st) == 0, "%s lists %s: no %s", KINDS[k], name, path);
            ck_assert(*display && *cJSON_GetObjectItem(e, "source")->valuestring);
            snprintf(line, sizeof line, "\n%s ", name);
            ck_assert_msg(strstr(text.out, line) && strstr(text.out, display), "%s", text.out);
            n++;
        }
        ck_assert_uint_eq(n, files);
        cJSON_Delete(j);
        run_free(&r);
        run_free(&text);
    }
    /* a data directory with a broken model beside a good one, picked at random */
    static const char *const GOOD[] = {"llama-3.1-8b", "mistral-7b-v0.1", "gemma-2-9b"};
    Rng rng = {test_seed()};
    const char *good = GOOD[rng_range(&rng, 0, N_OF(GOOD) - 1)];
    char tmp[] = "/tmp/kvlab-models-XXXXXX", cmd[1024], saved[1024];
    ck_assert(mkdtemp(tmp) != NULL);
    snprintf(cmd, sizeof cmd, "mkdir %s/models && cp %s/models/%s.json %s/models/ && "
             "printf '{\"name\": ' > %s/models/broken.json", tmp, test_datadir(), good, tmp, tmp);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(saved, sizeof saved, "%s", test_datadir());
    setenv("KVLAB_DATA", tmp, 1);
    RunResult r = RUN("models");
    setenv("KVLAB_DATA", saved, 1);
    ck_assert_msg(r.status == 2, "exit %d", r.status);
    ck_assert_msg(strstr(r.err, "broken.json") && strstr(r.out, good), "out: %s\nerr: %s", r.out, r.err);
    run_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Runs kvlab with KVLAB_DATA at dir. */
static RunResult run_with_data(const char *dir, const char *const *argv)
{
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", test_datadir());
    setenv("KVLAB_DATA", dir, 1);
    RunResult r = run_kvlab(argv, NULL);
    setenv("KVLAB_DATA", saved, 1);
    return r;
}

/* Writes n model files m0 ... into dir/models, each llama-3.1-8b under
 * another name. */
static void write_models(const char *dir, int from, int to)
{
    char src[1200], text[4096];
    snprintf(src, sizeof src, "%s/models/llama-3.1-8b.json", test_datadir());
    FILE *f = fopen(src, "r");
    ck_assert(f != NULL);
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    const char *rest = strstr(text, "\"display\"");
    ck_assert(rest != NULL);
    for (int i = from; i < to; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/models/m%03d.json", dir, i);
        ck_assert((f = fopen(path, "w")) != NULL);
        fprintf(f, "{\"name\": \"m%03d\", %s", i, rest);
        fclose(f);
    }
}

/* Tables hold every row and whole cells: 128 models are 128 rows (once 64
 * were shown, the last written over), a scenario title of 127 bytes with
 * control characters (escaped, four times as long) is shown whole; a data
 * directory with more files than kvlab lists, or a name longer than it
 * takes, is refused, naming the directory or file, not listed in part. */
START_TEST(tables_hold_every_row)
{
    char tmp[] = "/tmp/kvlab-rows-XXXXXX", cmd[2048];
    ck_assert(mkdtemp(tmp) != NULL);
    snprintf(cmd, sizeof cmd, "cp -r %s/models %s/gpus %s/pool-20gib.json %s/", test_datadir(), test_datadir(),
             test_datadir(), tmp);
    ck_assert_int_eq(system(cmd), 0);
    DIR *d = opendir(strcat(strcpy(cmd, tmp), "/models"));
    int shipped = 0;
    for (struct dirent *de; (de = readdir(d));)
        shipped += de->d_name[0] != '.';
    closedir(d);
    const int full = 128 - shipped;          // kvlab lists at most 128
    write_models(tmp, 0, full);
    size_t files = 128;
    RunResult r = run_with_data(tmp, (const char *const[]){"models", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    size_t rows = 0;
    for (const char *p = r.out; (p = strchr(p, '\n')); p++)
        rows++;
    ck_assert_msg(rows == files + 2, "%zu files, %zu lines (a heading and a rule):\n%s", files, rows, r.out);
    for (int i = 0; i < full; i++) {
        char name[16];
        snprintf(name, sizeof name, "\nm%03d ", i);
        ck_assert_msg(strstr(r.out, name), "no row %s in:\n%s", name + 1, r.out);
    }
    run_free(&r);

    /* a title of 127 bytes, control characters and all */
    char title[128], path[1200];
    for (int i = 0; i < 127; i++)
        title[i] = i % 9 == 8 ? '\x07' : (char)('a' + i % 26);
    title[127] = '\0';
    snprintf(path, sizeof path, "%s/pool-20gib.json", tmp);
    FILE *f = fopen(path, "r+");
    ck_assert(f != NULL);
    char text[8192];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    char *t0 = strstr(text, "\"title\": \""), *t1 = t0 ? strchr(t0 + 10, '"') : NULL;
    ck_assert(t1 != NULL);
    ck_assert(freopen(path, "w", f) != NULL);
    fprintf(f, "%.*s", (int)(t0 + 10 - text), text);
    char shown[1024];                   // as kvlab shows it: BEL escaped as \x07
    size_t at = 0;
    for (int i = 0; i < 127; i++) {
        fputs(title[i] == '\x07' ? "\\u0007" : (char[]){title[i], 0}, f);
        at += (size_t)sprintf(shown + at, title[i] == '\x07' ? "\\x07" : "%c", title[i]);
    }
    fputs(t1, f);
    fclose(f);
    r = run_with_data(tmp, (const char *const[]){"scenario", "list", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, shown), "the title is not whole in:\n%s", r.out);
    run_free(&r);

    /* one file more than kvlab lists, then a name too long */
    write_models(tmp, full, full + 1);
    r = run_with_data(tmp, (const char *const[]){"models", NULL});
    ck_assert_msg(r.status == 2 && strstr(r.err, "/models: more than 128 model files"), "exit %d: %s", r.status,
                  r.err);
    run_free(&r);
    snprintf(cmd, sizeof cmd, "rm %s/models/m*.json && cp %s/models/llama-3-8b.json %s/models/%0100d.json", tmp,
             test_datadir(), tmp, 0);
    ck_assert_int_eq(system(cmd), 0);
    r = run_with_data(tmp, (const char *const[]){"models", NULL});
    ck_assert_msg(r.status == 2 && strstr(r.err, "a model name of 100 bytes"), "exit %d: %s", r.status, r.err);
    run_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *suite_cli(void)
{
    Suite *s = suite_create("cli");
    TCase *t = tcase_create("kvlab");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, calc_default);
    tcase_add_test(t, bench_command);
    tcase_add_test(t, broken_plugin_named);
    tcase_add_test(t, out_of_memory_is_runtime);
    tcase_add_test(t, calc_json_fields);
    tcase_add_test(t, calc_typed_shapes_random);
    tcase_add_test(t, calc_gpu_budget);
    tcase_add_test(t, calc_series);
    tcase_add_test(t, calc_pool_exceeds_gpu);
    tcase_add_test(t, calc_notes_name_what_they_mean);
    tcase_add_test(t, calc_errors);
    tcase_add_test(t, formats_and_help);
    tcase_add_test(t, scenario_commands);
    tcase_add_test(t, io_and_locale);
    tcase_add_test(t, quant_command);
    tcase_add_test(t, quant_matrix_file);
    tcase_add_test(t, roundtrip_command);
    tcase_add_test(t, quant_refuses_non_finite);
    tcase_add_test(t, bench_refuses_at_parsing);
    tcase_add_test(t, control_characters_escaped);
    tcase_add_test(t, roundtrip_bad_input);
    tcase_add_test(t, options_that_do_nothing);
    tcase_add_test(t, calc_smaller);
    tcase_add_test(t, models_and_gpus);
    tcase_add_test(t, tables_hold_every_row);
    suite_add_tcase(s, t);
    return s;
}
