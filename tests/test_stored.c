/* test_stored.c - the results stored from a GPU run (calc/stored.h): the
 * shipped file loads and holds what the run wrote, assets/stored_results.sh
 * writes it again byte for byte from kernels/results/, a damaged file is
 * refused with its file, line and column, and the figures other code asks
 * for are the file's. */
#include "testutil.h"

#include "kv_bench.h"
#include "stats.h"
#include "stored.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHIPPED_DIR "assets/stored"
#define SHIPPED SHIPPED_DIR "/nvidia-h200.json"
#define RESULTS "kernels/results"

/* A whole file, NUL-terminated, on the heap; fails the test where it
 * cannot be read. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert(fseek(f, 0, SEEK_END) == 0);
    long n = ftell(f);
    ck_assert(n >= 0);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    ck_assert(s != NULL);
    ck_assert(fread(s, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    s[n] = '\0';
    if (len)
        *len = (size_t)n;
    return s;
}

/* The shipped file holds what the H200 run wrote (kernels/results/
 * bench.json): its device, the date nvidia-smi gave the run, at batch 1
 * every format's points as measured and its slope as fitted. */
START_TEST(shipped_file_holds_the_run)
{
    StoredRun r;
    Error e;
    ck_assert_msg(stored_load(&r, SHIPPED, &e) == 0, "%s", e.msg);
    ck_assert_str_eq(r.device, "NVIDIA H200");
    ck_assert_str_eq(r.measured, "2026-11-29");
    ck_assert_uint_eq(r.batch, 1);
    ck_assert_uint_eq(r.layers, 32);
    char *text = slurp(RESULTS "/bench.json", NULL);
    cJSON *b = cJSON_Parse(text);
    free(text);
    ck_assert(b != NULL);
    ck_assert_str_eq(cJSON_GetObjectItem(b, "device")->valuestring, r.device);
    ck_assert(cJSON_GetObjectItem(b, "copy_GBps")->valuedouble == r.copy_gbps);
    size_t fits = 0, rows = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItem(b, "fits"))
    {
        if (cJSON_GetObjectItem(o, "batch")->valuedouble != 1)
            continue;
        const StoredSeries *s = stored_series(&r, cJSON_GetObjectItem(o, "format")->valuestring);
        ck_assert(s != NULL);
        ck_assert(s->slope == cJSON_GetObjectItem(o, "slope_ms_per_token")->valuedouble);
        fits++;
    }
    ck_assert_uint_eq(fits, r.n_formats);
    cJSON_ArrayForEach(o, cJSON_GetObjectItem(b, "rows"))
    {
        if (cJSON_GetObjectItem(o, "batch")->valuedouble != 1)
            continue;
        const StoredSeries *s = stored_series(&r, cJSON_GetObjectItem(o, "format")->valuestring);
        ck_assert(s != NULL);
        bool found = false;
        for (size_t k = 0; k < s->n; k++)
            if (s->points[k].context == (uint64_t)cJSON_GetObjectItem(o, "context")->valuedouble) {
                ck_assert(s->points[k].ms == cJSON_GetObjectItem(o, "attention_ms")->valuedouble);
                ck_assert(s->points[k].gbps == cJSON_GetObjectItem(o, "GBps")->valuedouble);
                found = true;
            }
        ck_assert(found);
        rows++;
    }
    cJSON_Delete(b);
    size_t points = 0;
    for (size_t i = 0; i < r.n_formats; i++)
        points += r.formats[i].n;
    ck_assert_uint_eq(rows, points);
}
END_TEST

/* A figure of the stored NIAH run equals the one of kernels/results/
 * niah.json that o holds, exactly (the script copies the numbers). */
static void assert_figure(const NiahFigure *f, const cJSON *o)
{
    ck_assert_uint_eq(f->trials, (unsigned)cJSON_GetObjectItem(o, "trials")->valuedouble);
    ck_assert(f->accuracy == cJSON_GetObjectItem(o, "accuracy")->valuedouble);
    ck_assert(f->ci_low == cJSON_GetObjectItem(o, "ci_low")->valuedouble);
    ck_assert(f->ci_high == cJSON_GetObjectItem(o, "ci_high")->valuedouble);
    ck_assert(f->diff_low == cJSON_GetObjectItem(o, "diff_low")->valuedouble);
    ck_assert(f->diff_high == cJSON_GetObjectItem(o, "diff_high")->valuedouble);
}

/* The shipped file's NIAH run is the H200's of kernels/results/niah.json,
 * dated by kernels/results/niah/date.txt (not the speed run's date): its
 * device, every format's figures and verdict, every cell's figures. */
START_TEST(shipped_niah_holds_the_run)
{
    StoredRun r;
    Error e;
    ck_assert_msg(stored_load(&r, SHIPPED, &e) == 0, "%s", e.msg);
    ck_assert_msg(stored_niah_check(&r, &e) == 0, "%s", e.msg);
    const NiahFigures *n = &r.niah;
    char *date = slurp(RESULTS "/niah/date.txt", NULL);
    date[strcspn(date, "\n")] = '\0';
    ck_assert_str_eq(n->measured, date);
    ck_assert_str_ne(n->measured, r.measured);
    free(date);
    ck_assert_str_eq(n->command, "kvlab niah --backend cuda --json");
    ck_assert_str_eq(n->source, RESULTS "/niah.json");
    char *text = slurp(RESULTS "/niah.json", NULL);
    cJSON *j = cJSON_Parse(text);
    free(text);
    ck_assert(j != NULL);
    ck_assert_str_eq(n->device, cJSON_GetObjectItem(j, "device")->valuestring);
    ck_assert(n->tolerance == cJSON_GetObjectItem(cJSON_GetObjectItem(j, "generator"), "tolerance")->valuedouble);
    size_t i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItem(j, "formats"))
    {
        ck_assert_uint_lt(i, n->n_formats);
        ck_assert_str_eq(n->formats[i].id, cJSON_GetObjectItem(o, "format")->valuestring);
        ck_assert_int_eq(n->formats[i].simulated, cJSON_IsTrue(cJSON_GetObjectItem(o, "simulated")));
        ck_assert_str_eq(verdict_word((Verdict)n->formats[i].verdict), cJSON_GetObjectItem(o, "verdict")->valuestring);
        assert_figure(&n->formats[i].all, o);
        i++;
    }
    ck_assert_uint_eq(i, n->n_formats);
    size_t cells = 0;
    cJSON_ArrayForEach(o, cJSON_GetObjectItem(j, "cells"))
    {
        size_t f = 0, l = 0, d = 0;
        while (f < n->n_formats && strcmp(n->formats[f].id, cJSON_GetObjectItem(o, "format")->valuestring))
            f++;
        while (l < n->n_lengths && n->lengths[l] != (uint64_t)cJSON_GetObjectItem(o, "length")->valuedouble)
            l++;
        while (d < n->n_depths && n->depths[d] != cJSON_GetObjectItem(o, "depth")->valuedouble)
            d++;
        ck_assert(f < n->n_formats && l < n->n_lengths && d < n->n_depths);
        assert_figure(&n->cells[f][l][d], o);
        cells++;
    }
    ck_assert_uint_eq(cells, n->n_formats * n->n_lengths * n->n_depths);
    cJSON_Delete(j);
}
END_TEST

/* Each stored slope is the least-squares line through its stored points,
 * as kvlab bench fits it (bench_slope), within a relative 1e-12 (the fit's
 * rounding, the same sums in the same order). */
START_TEST(stored_slopes_fit_their_points)
{
    static const double REL = 1e-12;
    StoredRun r;
    Error e;
    ck_assert_msg(stored_load(&r, SHIPPED, &e) == 0, "%s", e.msg);
    for (size_t i = 0; i < r.n_formats; i++) {
        BenchRow rows[STORED_POINTS_MAX];
        KvFormat f;
        ck_assert(kv_format_parse(r.formats[i].format, &f, &e) == 0);
        for (size_t k = 0; k < r.formats[i].n; k++)
            rows[k] = (BenchRow){.format = f, .batch = (uint32_t)r.batch,
                                 .context = r.formats[i].points[k].context, .ms = r.formats[i].points[k].ms};
        const double fit = bench_slope(rows, r.formats[i].n, f, (uint32_t)r.batch, BENCH_ATTENTION);
        ck_assert_msg(fabs(fit - r.formats[i].slope) <= REL * r.formats[i].slope, "%s: stored %.17g, fit %.17g",
                      r.formats[i].format, r.formats[i].slope, fit);
    }
}
END_TEST

/* assets/stored_results.sh writes the shipped file again, byte for byte,
 * from kernels/results/: the stored figures cannot drift from the run. */
START_TEST(script_writes_the_shipped_file)
{
    char dir[] = "/tmp/kvlab-stored-XXXXXX", cmd[512], out[600];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "assets/stored_results.sh " RESULTS " %s > /dev/null", dir);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    snprintf(out, sizeof out, "%s/nvidia-h200.json", dir);
    size_t n_want, n_got;
    char *want = slurp(SHIPPED, &n_want), *got = slurp(out, &n_got);
    ck_assert_msg(n_want == n_got && !memcmp(want, got, n_want),
                  "%s differs from what assets/stored_results.sh writes (run it: assets/stored_results.sh "
                  RESULTS " " SHIPPED_DIR ")", SHIPPED);
    free(want);
    free(got);
    unlink(out);
    rmdir(dir);
}
END_TEST

/* The figures other code shows in place (stored_gpu_slopes: the lessons'
 * GPU widget) are the file's: its device and date, each format's slope and
 * its ratio to bf16's. */
START_TEST(slopes_for_other_code)
{
    setenv("KVLAB_STORED", SHIPPED_DIR, 1);
    StoredSlopes sl;
    StoredRun r;
    Error e;
    ck_assert_msg(stored_gpu_slopes(&sl, &e) == 0, "%s", e.msg);
    ck_assert_msg(stored_load(&r, SHIPPED, &e) == 0, "%s", e.msg);
    unsetenv("KVLAB_STORED");
    ck_assert_str_eq(sl.device, r.device);
    ck_assert_str_eq(sl.measured, r.measured);
    ck_assert_uint_eq(sl.n, r.n_formats);
    ck_assert_uint_eq(sl.layers, r.layers);
    const StoredSeries *bf16 = stored_series(&r, "bf16");
    for (size_t i = 0; i < sl.n; i++) {
        ck_assert_str_eq(sl.rows[i].format, r.formats[i].format);
        ck_assert(sl.rows[i].ms_per_token == r.formats[i].slope);
        ck_assert(sl.rows[i].ratio_to_bf16 == r.formats[i].slope / bf16->slope);
    }
}
END_TEST

/* Without a "niah" member the run says, as a value, that it has no stored
 * NIAH results; a directory without a stored run says so, naming it. */
START_TEST(absent_results_said_cleanly)
{
    StoredRun r;
    Error e;
    char *text = slurp(SHIPPED, NULL), *cut = strstr(text, ",\n  \"niah\":");
    ck_assert(cut != NULL);
    strcpy(cut, "\n}\n");                 // the run without its niah member
    ck_assert_msg(stored_parse(&r, "nvidia-h200.json", text, strlen(text), &e) == 0, "%s", e.msg);
    free(text);
    ck_assert_int_eq(stored_niah_check(&r, &e), -1);
    ck_assert_msg(strstr(e.msg, "no stored NIAH results") && strstr(e.msg, "NVIDIA H200"), "%s", e.msg);
    char dir[] = "/tmp/kvlab-stored-XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    ck_assert_int_eq(stored_gpu_run(&r, dir, &e), -1);
    ck_assert_msg(strstr(e.msg, dir) && strstr(e.msg, "no stored GPU results"), "%s", e.msg);
    rmdir(dir);
    ck_assert_int_eq(stored_gpu_run(&r, "/nonexistent-kvlab-stored", &e), -1);
    ck_assert_msg(strstr(e.msg, "/nonexistent-kvlab-stored") && strstr(e.msg, "KVLAB_STORED"), "%s", e.msg);
}
END_TEST

/* ------------------------------------------------------------------------
 * Damaged files: the shipped text with one change, refused at the changed
 * value's line and column with a message naming what is wrong.
 */

/* "name:line:col: " of byte offset off in text. */
static void where(const char *name, const char *text, size_t off, char *out, size_t n)
{
    int line = 1, col = 1;
    for (size_t i = 0; i < off; i++)
        if (text[i] == '\n')
            line++, col = 1;
        else
            col++;
    snprintf(out, n, "%s:%d:%d: ", name, line, col);
}

/* The shipped text with the `nth` (0: the first) occurrence of `from`
 * replaced by `to`; *at the offset of the change. */
static char *changed(const char *text, const char *from, int nth, const char *to, size_t *at)
{
    const char *p = strstr(text, from);
    for (int i = 0; p && i < nth; i++)
        p = strstr(p + 1, from);
    ck_assert_msg(p != NULL, "no '%s' number %d in the shipped file", from, nth);
    size_t off = (size_t)(p - text), lf = strlen(from), lt = strlen(to), n = strlen(text);
    char *s = malloc(n - lf + lt + 1);
    ck_assert(s != NULL);
    memcpy(s, text, off);
    memcpy(s + off, to, lt);
    memcpy(s + off + lt, p + lf, n - off - lf + 1);
    *at = off;
    return s;
}

/* Parses the shipped text changed so (the change's value starts `skip`
 * bytes into `to`) and checks the refusal's place and words. */
static void assert_refused(const char *from, int nth, const char *to, size_t skip, const char *what)
{
    static const char *const NAME = "stored/nvidia-h200.json";
    char *text = slurp(SHIPPED, NULL), want[256];
    size_t at;
    char *bad = changed(text, from, nth, to, &at);
    where(NAME, bad, at + skip, want, sizeof want);
    StoredRun r;
    Error e;
    ck_assert_msg(stored_parse(&r, NAME, bad, strlen(bad), &e) == -1, "'%s' for '%s' was accepted", to, from);
    ck_assert_msg(!strncmp(e.msg, want, strlen(want)), "want prefix '%s', got '%s'", want, e.msg);
    ck_assert_msg(strstr(e.msg, what), "want '%s' in '%s'", what, e.msg);
    free(bad);
    free(text);
}

static const struct {
    const char *from, *to;
    size_t skip;                // where the refused value starts in `to`
    const char *what;
} BAD[] = {
    {"\"measured\": \"2026-11-29\"", "\"measured\": \"2026-13-29\"", 12, "expected a date such as"},
    {"\"measured\": \"2026-11-29\"", "\"measured\": \"29.11.2026\"", 12, "expected a date such as"},
    {"\"measured\": \"2026-11-29\"", "\"measured\": \" 026-11-29\"", 12, "expected a date such as"},
    {"\"name\": \"nvidia-h200\"", "\"name\": \"nvidia-h100\"", 8, "does not match the file name"},
    {"\"device\"", "\"devise\"", 0, "unknown field 'devise'"},
    {"\"format\": \"int8\"", "\"format\": \"int9\"", 10, "unknown format 'int9'"},
    {"\"format\": \"int8\"", "\"format\": \"bf16\"", 10, "bf16 is listed twice"},
    {"\"format\": \"int8\"", "\"format\": \"fp8\"", 10, "unknown format 'fp8'"},   // an alias, not the id
    {"\"slope_ms_per_token\": 9", "\"slope_ms_per_token\": -9", 22, "expected a number above 0"},
    {"\"copy_GBps\": 4", "\"copy_GBps\": -4", 13, "expected a number above 0"},
    {"\"batch\": 1,", "\"batch\": 0,", 9, "from 1 to"},
    {"\"layers\": 32", "\"layers\": 32.5", 10, "expected a whole number"},
};

/* The niah member's damages: the change is made at occurrence nth. */
static const struct {
    const char *from;
    int nth;
    const char *to;
    size_t skip;
    const char *what;
} NIAH_BAD[] = {
    {"\"measured\": \"2026-12-02\"", 0, "\"measured\": \"2026-12-32\"", 12, "expected a date such as"},
    {"\"backend\": \"cuda\"", 0, "\"backend\": \"cpu\"", 11, "not a GPU's run"},
    {"\"partial\": false", 0, "\"partial\": true", 11, "a stopped run is not stored"},
    {"\"verdict\": \"rejected\"", 0, "\"verdict\": \"not rejected\"", 11, "where the rule at tolerance"},
    {"\"verdict\": \"baseline\"", 0, "\"verdict\": \"not rejected\"", 11, "where the rule at tolerance"},
    {"\"accuracy\": 0.63", 0, "\"accuracy\": 0.7", 12, "lies outside its interval"},
    {"\"diff_high\": 0", 0, "\"diff_high\": 2", 13, "expected a number from -1 to 1"},
    {"\"trials\": 20,", 1, "\"trials\": 0,", 10, "from 1 to"},          // 0: the generator's
    {"\"format\": \"int2-k-channel\"", 1, "\"format\": \"int2-k-chanel\"", 10,
     "is not among the run's formats"},                                      // 0: in the formats
    {"\"format\": \"int2-k-channel\"", 0, "\"format\": \"int2-k-token\"", 10, "int2-k-token is listed twice"},
    {"\"command\": \"kvlab niah --backend cuda --json\"", 0, "\"command\": 7", 11, "field 'command'"},
    {"\"tolerance\": 0.05", 0, "\"tolerance\": 1.5", 13, "expected a number from 0 to 1"},
};

START_TEST(bad_niah_refused)
{
    assert_refused(NIAH_BAD[_i].from, NIAH_BAD[_i].nth, NIAH_BAD[_i].to, NIAH_BAD[_i].skip, NIAH_BAD[_i].what);
}
END_TEST

/* A random NIAH figure (a format's or a cell's accuracy or interval bound)
 * beyond 1 is refused where it stands. */
START_TEST(random_niah_figures_refused)
{
    static const char *const FIELDS[] = {"\"accuracy\": ", "\"ci_low\": ", "\"ci_high\": "};
    StoredRun r;
    Error e;
    ck_assert_msg(stored_load(&r, SHIPPED, &e) == 0, "%s", e.msg);
    const size_t figures = r.niah.n_formats * (1 + r.niah.n_lengths * r.niah.n_depths);
    Rng g = {test_seed()};
    for (int round = 0; round < 8; round++) {
        const char *field = FIELDS[rng_range(&g, 0, 2)];
        char to[32];
        snprintf(to, sizeof to, "%s2", field);      // 0.63 becomes 20.63: above 1
        assert_refused(field, (int)rng_range(&g, 0, figures - 1), to, strlen(field), "expected a number from 0 to 1");
    }
}
END_TEST

START_TEST(bad_files_refused)
{
    assert_refused(BAD[_i].from, 0, BAD[_i].to, BAD[_i].skip, BAD[_i].what);
}
END_TEST

/* A point of a random format other than the first refused where its
 * context differs from the first format's, or does not rise; a random
 * point's time or rate refused where it is not above 0. */
START_TEST(random_points_refused)
{
    StoredRun r;
    Error e;
    ck_assert_msg(stored_load(&r, SHIPPED, &e) == 0, "%s", e.msg);
    Rng g = {test_seed()};
    for (int round = 0; round < 8; round++) {
        const size_t i = rng_range(&g, 1, r.n_formats - 1), k = rng_range(&g, 1, r.formats[i].n - 1);
        char from[64], to[64];
        snprintf(from, sizeof from, "\"context\": %llu", (unsigned long long)r.formats[i].points[k].context);
        /* the same context as the point before: not rising */
        snprintf(to, sizeof to, "\"context\": %llu", (unsigned long long)r.formats[i].points[k - 1].context);
        const int occurrence = (int)i;                  // each format before it has this context once
        assert_refused(from, occurrence, to, 11, "the contexts rise");
        /* one more token: not the first format's context */
        snprintf(to, sizeof to, "\"context\": %llu", (unsigned long long)r.formats[i].points[k].context + 1);
        assert_refused(from, occurrence, to, 11, "every format is measured at the same contexts");
        /* a time or a rate of 0 or below */
        const char *field = rng_range(&g, 0, 1) ? "\"attention_ms\": " : "\"GBps\": ";
        const size_t any = rng_range(&g, 0, r.n_formats * r.formats[0].n - 1);
        snprintf(to, sizeof to, "%s-%llu", field, (unsigned long long)rng_range(&g, 0, 1000));
        assert_refused(field, (int)any, to, strlen(field), "expected a number above 0");
    }
}
END_TEST

Suite *suite_stored(void)
{
    Suite *s = suite_create("stored");
    TCase *t = tcase_create("stored");
    tcase_add_test(t, shipped_file_holds_the_run);
    tcase_add_test(t, shipped_niah_holds_the_run);
    tcase_add_test(t, stored_slopes_fit_their_points);
    tcase_add_test(t, script_writes_the_shipped_file);
    tcase_add_test(t, slopes_for_other_code);
    tcase_add_test(t, absent_results_said_cleanly);
    tcase_add_loop_test(t, bad_files_refused, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(t, random_points_refused);
    tcase_add_loop_test(t, bad_niah_refused, 0, (int)(sizeof NIAH_BAD / sizeof NIAH_BAD[0]));
    tcase_add_test(t, random_niah_figures_refused);
    suite_add_tcase(s, t);
    return s;
}
