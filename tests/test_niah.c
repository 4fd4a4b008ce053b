/* test_niah.c - needle in a haystack (kernels/niah.h, kvlab niah): the
 * needle and distractors planted as the parameters say, the pairing (every
 * format sees the same haystacks), retrieval end to end through the CPU
 * reference, stopping cleanly, and the command line's output and errors. */
#include "testutil.h"

#include "kvtensors.h"
#include "niah.h"
#include "passkey.h"
#include "stats.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A planted logit, q.k / sqrt(D) summed in double over 128 float products
 * of order 1 after RoPE turned both in float: a few ulps of the largest
 * terms, times the 128 channels. */
#define LOGIT_TOL 2e-3

static NiahGrid small_grid(uint64_t seed, const char *const *ids, size_t n)
{
    NiahGrid g = {0};
    niah_haystack_defaults(&g.hay);
    g.lengths[0] = 256, g.lengths[1] = 1024;
    g.n_lengths = 2;
    g.depths[0] = 0, g.depths[1] = 0.5, g.depths[2] = 1;
    g.n_depths = 3;
    g.trials = 8;
    g.seed = seed;
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(niah_format_parse(ids[i], &g.formats[g.n_formats++], NULL), 0);
    return g;
}

static double logit_at(const NiahTrial *tr, uint32_t b, uint32_t p)
{
    const float *q = tr->q + (size_t)b * tr->D, *k = tr->k_post + ((size_t)b * tr->S + p) * tr->D;
    double s = 0;
    for (uint32_t c = 0; c < tr->D; c++)
        s += (double)q[c] * k[c];
    return s / sqrt((double)tr->D);
}

/* The needle's logit is needle_logit and each distractor's closeness times
 * it, exactly up to rounding, at every depth; the needle's value holds its
 * passkey. */
START_TEST(planted_as_told)
{
    Rng r = {test_seed()};
    static const char *const IDS[] = {"bf16"};
    NiahGrid g = small_grid(rng_next(&r), IDS, 1);
    g.hay.closeness = 0.5f + 0.4f * (float)rng_range(&r, 0, 100) / 100;
    NiahTrial tr;
    Error e;
    ck_assert_msg(niah_trial_make(&g, 1, (unsigned)rng_range(&r, 0, 7), &tr, &e) == 0, "%s", e.msg);
    for (uint32_t b = 0; b < tr.B; b++) {
        uint32_t p = tr.needle[b];
        ck_assert_seeded(fabs(logit_at(&tr, b, p) - g.hay.needle_logit) < LOGIT_TOL, "depth %u: needle logit %g",
                         b, logit_at(&tr, b, p));
        unsigned near = 0;
        for (uint32_t t = g.hay.gen.sinks; t < tr.S; t++)
            near += t != p && fabs(logit_at(&tr, b, t) - g.hay.closeness * g.hay.needle_logit) < LOGIT_TOL;
        ck_assert_seeded(near == g.hay.distractors, "depth %u: %u distractors at the closeness", b, near);
        uint8_t got[PASSKEY_DIGITS_MAX];
        passkey_decode(tr.v + ((size_t)b * tr.S + p) * tr.D, tr.D, g.hay.digits, got);
        ck_assert(!memcmp(got, tr.passkey[b], g.hay.digits));
    }
    ck_assert_uint_eq(tr.needle[0], g.hay.gen.sinks);
    ck_assert_uint_eq(tr.needle[2], tr.S - 1);
    niah_trial_free(&tr);
}
END_TEST

/* Pairing: a format's outcomes do not depend on which other formats run
 * beside it (the haystacks come from the grid's seed, length and trial
 * alone) nor on the threads, and a trial made twice is the same bytes. */
START_TEST(pairing)
{
    Rng r = {test_seed()};
    uint64_t seed = rng_next(&r);
    static const char *const TWO[] = {"bf16", "int2-k-token"};
    static const char *const FOUR[] = {"bf16", "int4", "int2-k-channel", "int2-k-token"};
    NiahGrid a = small_grid(seed, TWO, 2), b = small_grid(seed, FOUR, 4);
    NiahBackend be = {.threads = 1};
    NiahResult ra, rb;
    Error e;
    ck_assert_msg(niah_run(&a, &be, NULL, NULL, NULL, &ra, &e) == 0, "%s", e.msg);
    ck_assert_msg(niah_run(&b, &be, NULL, NULL, NULL, &rb, &e) == 0, "%s", e.msg);
    size_t per = a.n_lengths * a.n_depths * a.trials;
    ck_assert_seeded(!memcmp(ra.ok, rb.ok, per), "bf16 alike in both grids");
    ck_assert_seeded(!memcmp(ra.ok + per, rb.ok + 3 * per, per), "int2-k-token alike in both grids");
    niah_result_free(&rb);
    be.threads = 3;         // haystacks and pairs on three threads: the same outcomes
    ck_assert_msg(niah_run(&a, &be, NULL, NULL, NULL, &rb, &e) == 0, "%s", e.msg);
    ck_assert_seeded(!memcmp(ra.ok, rb.ok, 2 * per), "one thread or three, the same outcomes");
    niah_result_free(&ra), niah_result_free(&rb);

    NiahTrial t1, t2;
    ck_assert_int_eq(niah_trial_make(&a, 0, 3, &t1, &e), 0);
    ck_assert_int_eq(niah_trial_make(&b, 0, 3, &t2, &e), 0);
    size_t n = (size_t)t1.B * t1.S * t1.D;
    ck_assert(!memcmp(t1.k_post, t2.k_post, n * sizeof(float)) && !memcmp(t1.v, t2.v, n * sizeof(float)));
    niah_trial_free(&t2);
    ck_assert_int_eq(niah_trial_make(&a, 0, 4, &t2, &e), 0);
    ck_assert_msg(memcmp(t1.k_post, t2.k_post, n * sizeof(float)), "another trial, another haystack");
    niah_trial_free(&t1), niah_trial_free(&t2);
}
END_TEST

/* Through the CPU reference at the defaults, BF16 and FP8 retrieve every
 * passkey, and 2-bit keys per token lose more than 2-bit keys per channel
 * (KIVI's observation), on a fixed seed. */
START_TEST(retrieval_story)
{
    static const char *const IDS[] = {"bf16", "fp8_e4m3", "int2-k-token", "int2-k-channel"};
    NiahGrid g = small_grid(NIAH_SEED_DEFAULT, IDS, 4);
    g.trials = 20;
    NiahBackend be = {0};
    NiahResult r;
    Error e;
    ck_assert_msg(niah_run(&g, &be, NULL, NULL, NULL, &r, &e) == 0, "%s", e.msg);
    NiahCell c[4];
    int v[4];
    for (size_t f = 0; f < 4; f++)
        ck_assert_int_eq(niah_format_summary(&r, f, NIAH_TOLERANCE_DEFAULT, &c[f], &v[f], &e), 0);
    ck_assert_msg(c[0].accuracy == 1 && c[1].accuracy == 1, "bf16 %g, fp8 %g", c[0].accuracy, c[1].accuracy);
    ck_assert_int_eq(v[0], VERDICT_BASELINE);
    ck_assert_int_eq(v[1], VERDICT_NOT_REJECTED);
    ck_assert_msg(c[2].accuracy < c[3].accuracy, "per token %g, per channel %g", c[2].accuracy, c[3].accuracy);
    ck_assert_int_eq(v[2], VERDICT_REJECTED);
    ck_assert_uint_eq(c[0].trials, g.n_lengths * g.n_depths * g.trials);
    /* a cell's figures are its own trials' */
    NiahCell cell;
    ck_assert_int_eq(niah_cell(&r, 2, 1, 1, &cell, &e), 0);
    unsigned hits = 0;
    for (unsigned t = 0; t < g.trials; t++)
        hits += r.ok[((2 * g.n_lengths + 1) * g.n_depths + 1) * g.trials + t];
    ck_assert_uint_eq(cell.hits, hits);
    ck_assert(fabs(cell.accuracy - (double)hits / g.trials) < 1e-12);
    ck_assert(cell.diff_low <= cell.diff_high);
    niah_result_free(&r);
}
END_TEST

static bool stop_after_two(void *ctx, uint64_t done, uint64_t total, double seconds)
{
    (void)done, (void)total, (void)seconds;
    return ++*(int *)ctx < 2;
}

/* A run stopped by its progress callback, or by the stop flag before it
 * starts, keeps what ran, says it is partial, and reports no trial for
 * the cells that did not run. */
START_TEST(stops_cleanly)
{
    static const char *const IDS[] = {"bf16", "int8"};
    NiahGrid g = small_grid(3, IDS, 2);
    NiahBackend be = {0};
    NiahResult r;
    Error e;
    int calls = 0;
    ck_assert_int_eq(niah_run(&g, &be, stop_after_two, &calls, NULL, &r, &e), 0);
    ck_assert(r.partial);
    ck_assert_uint_eq(r.done[0], 2);
    ck_assert_uint_eq(r.done[1], 0);
    NiahCell c;
    ck_assert_int_eq(niah_cell(&r, 1, 1, 0, &c, &e), 0);
    ck_assert_uint_eq(c.trials, 0);
    ck_assert(isnan(c.accuracy));
    ck_assert_int_eq(niah_cell(&r, 1, 0, 0, &c, &e), 0);
    ck_assert_uint_eq(c.trials, 2);
    niah_result_free(&r);
    volatile sig_atomic_t stop = SIGINT;
    ck_assert_int_eq(niah_run(&g, &be, NULL, NULL, &stop, &r, &e), 0);
    ck_assert(r.partial && r.done[0] == 0);
    niah_result_free(&r);
}
END_TEST

/* Every format in the table parses by its id and runs; bad grids are
 * refused naming what is wrong. */
START_TEST(formats_and_checks)
{
    for (size_t i = 0; niah_format_at(i); i++) {
        const NiahFormat *f;
        ck_assert_int_eq(niah_format_parse(niah_format_at(i)->id, &f, NULL), 0);
        ck_assert_ptr_eq(f, niah_format_at(i));
        const char *ids[] = {"bf16", f->id};
        NiahGrid g = small_grid(5, ids, f->kernel == KV_BF16 && !f->simulated ? 1 : 2);
        g.n_lengths = 1, g.trials = 2;
        NiahBackend be = {0};
        NiahResult r;
        Error e;
        ck_assert_msg(niah_run(&g, &be, NULL, NULL, NULL, &r, &e) == 0, "%s: %s", f->id, e.msg);
        niah_result_free(&r);
    }
    Error e;
    const NiahFormat *f;
    ck_assert_int_eq(niah_format_parse("int3", &f, &e), -1);
    ck_assert_ptr_nonnull(strstr(e.msg, "int3"));
    static const char *const IDS[] = {"int8", "bf16"};
    NiahGrid g = small_grid(5, IDS, 2);
    ck_assert_int_eq(niah_grid_check(&g, &e), -1);
    ck_assert_ptr_nonnull(strstr(e.msg, "baseline"));
    g = small_grid(5, IDS + 1, 1);
    g.depths[1] = 1.5;
    ck_assert_int_eq(niah_grid_check(&g, &e), -1);
    ck_assert_ptr_nonnull(strstr(e.msg, "1.5"));
    g = small_grid(5, IDS + 1, 1);
    g.hay.distractors = 300;
    ck_assert_int_eq(niah_grid_check(&g, &e), -1);
    ck_assert_ptr_nonnull(strstr(e.msg, "length 256"));
}
END_TEST

#define RUN(...) run_kvlab((const char *const[]){__VA_ARGS__, NULL}, NULL)

static double field(const cJSON *o, const char *name)
{
    const cJSON *x = cJSON_GetObjectItem(o, name);
    ck_assert_msg(cJSON_IsNumber(x), "no number %s", name);
    return x->valuedouble;
}

/* Writes k and v, (T, H, D) floats, as a safetensors file of F32 tensors. */
static void write_kv(const char *path, const float *k, const float *v, size_t T, size_t H, size_t D)
{
    size_t bytes = T * H * D * sizeof(float);
    char header[256];
    int n = snprintf(header, sizeof header,
                     "{\"k\":{\"dtype\":\"F32\",\"shape\":[%zu,%zu,%zu],\"data_offsets\":[0,%zu]},"
                     "\"v\":{\"dtype\":\"F32\",\"shape\":[%zu,%zu,%zu],\"data_offsets\":[%zu,%zu]}}",
                     T, H, D, bytes, T, H, D, bytes, 2 * bytes);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    uint64_t len = (uint64_t)n;             // little-endian on every machine kvlab builds for
    fwrite(&len, 8, 1, f);
    fwrite(header, 1, (size_t)n, f);
    fwrite(k, 1, bytes, f);
    fwrite(v, 1, bytes, f);
    fclose(f);
}

/* A file of T tokens, H heads: head h's keys and values are a generated
 * head's, scaled by h + 1 (so that each head is told apart). */
static void write_generated_kv(const char *path, size_t T, size_t H, uint64_t seed)
{
    const size_t D = NIAH_HEAD_DIM;
    float *k = malloc(T * H * D * sizeof *k), *v = malloc(T * H * D * sizeof *v);
    float *hk = malloc(T * D * sizeof *hk), *hv = malloc(T * D * sizeof *hv), q[NIAH_HEAD_DIM];
    KvGenParams p;
    kvgen_defaults(&p);
    p.tokens = T, p.head_dim = D, p.seed = seed;
    ck_assert_int_eq(kvgen(&p, hk, hv, q, NULL), 0);
    for (size_t t = 0; t < T; t++)
        for (size_t h = 0; h < H; h++)
            for (size_t c = 0; c < D; c++) {
                k[(t * H + h) * D + c] = hk[t * D + c] * (float)(h + 1);
                v[(t * H + h) * D + c] = hv[t * D + c] * (float)(h + 1);
            }
    write_kv(path, k, v, T, H, D);
    free(k), free(v), free(hk), free(hv);
}

/* A haystack from a file is its first S tokens of head t mod H, the
 * needle and distractors planted at the logits asked for, the passkey at
 * the amplitude times the head's value RMS. */
START_TEST(file_haystack)
{
    Rng r = {test_seed()};
    char path[] = "/tmp/kvlab-niah-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_generated_kv(path, 512, 3, rng_next(&r));
    KvTensors kv;
    Error e;
    ck_assert_msg(kvtensors_load(path, &kv, &e) == 0, "%s", e.msg);
    static const char *const IDS[] = {"bf16"};
    NiahGrid g = small_grid(rng_next(&r), IDS, 1);
    g.kv = &kv;
    g.lengths[1] = 512;
    ck_assert_msg(niah_grid_check(&g, &e) == 0, "%s", e.msg);
    unsigned t = (unsigned)rng_range(&r, 0, 7);
    NiahTrial tr;
    ck_assert_msg(niah_trial_make(&g, 1, t, &tr, &e) == 0, "%s", e.msg);
    size_t h = t % 3, same = 0;
    for (uint32_t i = 0; i < tr.S; i++)
        same += !memcmp(tr.k_post + (size_t)i * tr.D, kv.k + (i * 3 + h) * tr.D, tr.D * sizeof(float));
    ck_assert_seeded(same == tr.S - 1 - g.hay.distractors, "%zu of %u tokens are the file's", same, tr.S);
    ck_assert_seeded(fabs(logit_at(&tr, 0, tr.needle[0]) - g.hay.needle_logit) < LOGIT_TOL, "needle logit %g",
                     logit_at(&tr, 0, tr.needle[0]));
    ck_assert_uint_eq(tr.needle[0], 0);                 // a file's own first tokens are its sinks
    niah_trial_free(&tr);
    g.lengths[1] = 513;
    ck_assert_int_eq(niah_grid_check(&g, &e), -1);
    ck_assert_ptr_nonnull(strstr(e.msg, "512 tokens"));
    kvtensors_free(&kv);

    RunResult rr = RUN("niah", "--backend", "cpu", "--kv", path, "--depths", "0.5", "--trials", "3", "--json");
    ck_assert_msg(rr.status == 0, "%s", rr.err);
    cJSON *j = cJSON_Parse(rr.out);
    const cJSON *f = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "generator"), "kv_file");
    ck_assert_int_eq((int)field(f, "tokens"), 512);
    ck_assert_int_eq((int)field(f, "kv_heads"), 3);
    ck_assert_int_eq((int)field(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cells"), 0), "length"), 512);
    cJSON_Delete(j);
    run_free(&rr);
    rr = RUN("niah", "--backend", "cpu", "--kv", path, "--sinks", "2");
    ck_assert_int_eq(rr.status, 2);
    ck_assert_ptr_nonnull(strstr(rr.err, "--sinks"));
    run_free(&rr);
    rr = RUN("niah", "--backend", "cpu", "--kv", path, "--lengths", "1k");
    ck_assert_int_eq(rr.status, 2);
    ck_assert_ptr_nonnull(strstr(rr.err, "512 tokens"));
    run_free(&rr);
    /* a malformed file: refused, naming it */
    FILE *bad = fopen(path, "wb");
    static const char BAD[] = "\x10\0\0\0\0\0\0\0{not json}      ";
    fwrite(BAD, 1, sizeof BAD - 1, bad);
    fclose(bad);
    rr = RUN("niah", "--backend", "cpu", "--kv", path);
    ck_assert_int_eq(rr.status, 2);
    ck_assert_msg(strstr(rr.err, "--kv") && strstr(rr.err, path), "%s", rr.err);
    run_free(&rr);
    unlink(path);
}
END_TEST


/* kvlab niah --json carries every cell with its figures and each format's
 * verdict, the same figures the CSV prints. */
START_TEST(cli_json_and_csv)
{
    RunResult r = RUN("niah", "--backend", "cpu", "--lengths", "256", "--depths", "0,1", "--trials", "4",
                      "--format", "int2-k-token", "--json");
    ck_assert_msg(r.status == 0, "%s", r.err);
    cJSON *j = cJSON_Parse(r.out);
    ck_assert_ptr_nonnull(j);
    const cJSON *cells = cJSON_GetObjectItem(j, "cells"), *c;
    ck_assert_int_eq(cJSON_GetArraySize(cells), 4);
    cJSON_ArrayForEach(c, cells) {
        ck_assert(cJSON_IsString(cJSON_GetObjectItem(c, "format")));
        ck_assert_int_eq((int)field(c, "length"), 256);
        ck_assert_int_eq((int)field(c, "trials"), 4);
        ck_assert(field(c, "ci_low") <= field(c, "accuracy") && field(c, "accuracy") <= field(c, "ci_high"));
        ck_assert(field(c, "diff_low") <= field(c, "diff_high"));
        (void)field(c, "depth");
    }
    const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "formats"), 1);
    ck_assert_str_eq(cJSON_GetObjectItem(f, "format")->valuestring, "int2-k-token");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(f, "simulated")));
    ck_assert(cJSON_IsString(cJSON_GetObjectItem(f, "verdict")));
    /* accepted: never for the baseline; not on 8 trials, under 3/tolerance */
    ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "formats"), 0), "accepted"));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(f, "accepted")));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "partial")));
    ck_assert_int_eq((int)field(cJSON_GetObjectItem(j, "generator"), "outlier_channels"),
                     KVGEN_OUTLIER_CHANNELS_DEFAULT);
    double acc = field(cJSON_GetArrayItem(cells, 3), "accuracy");
    cJSON_Delete(j);
    run_free(&r);
    r = RUN("niah", "--backend", "cpu", "--lengths", "256", "--depths", "0,1", "--trials", "4", "--format",
            "int2-k-token", "--csv");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "format,simulated,length,depth,trials,accuracy,ci_low,ci_high,diff_low,"
                                        "diff_high\n"));
    const char *last = strstr(r.out, "int2-k-token,yes,256,1,4,");
    ck_assert_ptr_nonnull(last);
    ck_assert(fabs(strtod(last + strlen("int2-k-token,yes,256,1,4,"), NULL) - acc) < 1e-4);
    run_free(&r);
    /* FP8 loses no passkey of 80 (at 256 tokens), more than 3/tolerance:
     * not rejected, and accepted */
    r = RUN("niah", "--backend", "cpu", "--lengths", "256", "--depths", "0,1", "--trials", "40", "--format",
            "fp8_e4m3", "--json");
    ck_assert_msg(r.status == 0, "%s", r.err);
    j = cJSON_Parse(r.out);
    ck_assert_ptr_nonnull(j);
    f = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "formats"), 1);
    ck_assert_str_eq(cJSON_GetObjectItem(f, "verdict")->valuestring, "not rejected");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(f, "accepted")));
    cJSON_Delete(j);
    run_free(&r);
}
END_TEST

/* Bad options exit 2 with one line naming the option. */
START_TEST(cli_errors)
{
    static const struct {
        const char *opt, *val, *says;
    } CASES[] = {
        {"--depths", "0,1.5", "--depths"},    {"--format", "int3", "--format"},
        {"--lengths", "10", "--lengths"},     {"--closeness", "1.2", "--closeness"},
        {"--promote", "2", "fp8_e4m3"},       {"--backend", "tpu", "--backend"},
        {"--digits", "20", "--digits"},       {"--residual", "64", "int4"},
        {"--tolerance", "-1", "--tolerance"}, {"--trials", "0", "--trials"},
    };
    for (size_t i = 0; i < N_OF(CASES); i++) {
        RunResult r = RUN("niah", "--backend", "cpu", "--format", "int8", CASES[i].opt, CASES[i].val);
        if (!strcmp(CASES[i].opt, "--backend")) {
            run_free(&r);
            r = RUN("niah", CASES[i].opt, CASES[i].val);
        }
        ck_assert_msg(r.status == 2, "%s %s: exit %d", CASES[i].opt, CASES[i].val, r.status);
        ck_assert_msg(strstr(r.err, CASES[i].says) != NULL, "%s %s: %s", CASES[i].opt, CASES[i].val, r.err);
        ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "one line: %s", r.err + 0);
        run_free(&r);
    }
}
END_TEST

/* The CUDA kernel options are kvlab bench's (tui/cli/cudaopts.h): a path
 * other than A, B or C, --promote without path A or C or out of 1 to 64,
 * --splits 0, and any of them where the CPU reference runs exit 2 naming
 * the option. */
START_TEST(cli_kernel_options)
{
    static const struct {
        const char *args[4], *opt, *says;
    } CASES[] = {
        {{"--fp8-path", "D"}, "--fp8-path", "'D'"},
        {{"--promote", "2"}, "--promote", "path A or C"},
        {{"--fp8-path", "B", "--promote", "2"}, "--promote", "path A or C"},
        {{"--fp8-path", "C", "--promote", "0"}, "--promote", "1 to 64"},
        {{"--splits", "0"}, "--splits", NULL},
        {{"--backend", "cpu", "--splits", "1"}, "--splits", "the CPU reference runs here"},
        {{"--backend", "cpu", "--fp8-path", "C"}, "--fp8-path", "the CPU reference runs here"},
    };
    for (size_t i = 0; i < N_OF(CASES); i++) {
        const char *const *a = CASES[i].args;
        RunResult r = RUN("niah", "--format", "fp8_e4m3", "--lengths", "1k", a[0], a[1], a[2], a[3]);
        ck_assert_msg(r.status == 2, "%s %s: exit %d", a[0], a[1], r.status);
        ck_assert_msg(strstr(r.err, CASES[i].opt) != NULL, "%s %s: %s", a[0], a[1], r.err);
        ck_assert_msg(!CASES[i].says || strstr(r.err, CASES[i].says) != NULL, "%s %s: %s", a[0], a[1], r.err);
        run_free(&r);
    }
}
END_TEST

Suite *suite_niah(void)
{
    Suite *s = suite_create("niah");
    TCase *t = tcase_create("niah");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, planted_as_told);
    tcase_add_test(t, pairing);
    tcase_add_test(t, retrieval_story);
    tcase_add_test(t, stops_cleanly);
    tcase_add_test(t, formats_and_checks);
    tcase_add_test(t, cli_json_and_csv);
    tcase_add_test(t, cli_errors);
    tcase_add_test(t, cli_kernel_options);
    tcase_add_test(t, file_haystack);
    suite_add_tcase(s, t);
    return s;
}
