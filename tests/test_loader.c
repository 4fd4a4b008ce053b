/* test_loader.c - data files: every shipped file loads and checks clean;
 * every kind of bad file is refused with file, line, column and field;
 * random damage to good files never crashes the loaders. */
#include "testutil.h"

#include "catalog.h"
#include "gpu.h"
#include "jsonfile.h"
#include "scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum { K_MODEL, K_GPU, K_SCENARIO } Kind;

static int load_kind(Kind k, const char *path, Error *e)
{
    static Model m;
    static Gpu g;
    static Scenario sc;
    switch (k) {
    case K_MODEL:
        return model_load(&m, path, e);
    case K_GPU:
        return gpu_load(&g, path, e);
    default:
        return scenario_load(&sc, path, test_datadir(), e);
    }
}

/* ------------------------------------------------------------------------
 * The shipped data
 */

/* Every model, GPU and scenario in scenarios/ loads; every scenario's
 * figures either agree with the seed or carry an explanation that is still
 * needed. */
START_TEST(shipped_files_load)
{
    static const CatalogKind KINDS[] = {CATALOG_MODELS, CATALOG_GPUS, CATALOG_SCENARIOS};
    static const Kind AS[] = {K_MODEL, K_GPU, K_SCENARIO};
    size_t minimum[] = {8, 6, 7};
    for (size_t k = 0; k < 3; k++) {
        CatalogList list;
        Error e;
        ck_assert_int_eq(catalog_list(test_datadir(), KINDS[k], &list, &e), 0);
        ck_assert_uint_ge(list.count, minimum[k]);
        for (size_t i = 0; i < list.count; i++) {
            char path[1024];
            ck_assert_int_eq(catalog_path(test_datadir(), KINDS[k], list.names[i], path,
                                          sizeof path, &e), 0);
            ck_assert_msg(load_kind(AS[k], path, &e) == 0, "%s", e.msg);
        }
    }
    CatalogList list;
    catalog_list(test_datadir(), CATALOG_SCENARIOS, &list, NULL);
    for (size_t i = 0; i < list.count; i++) {
        static Scenario sc;
        char path[1024];
        Error e;
        catalog_path(test_datadir(), CATALOG_SCENARIOS, list.names[i], path, sizeof path, NULL);
        ck_assert_int_eq(scenario_load(&sc, path, test_datadir(), &e), 0);
        ck_assert_str_eq(sc.name, list.names[i]);
        for (size_t f = 0; f < sc.n_figures; f++) {
            FigureResult r;
            ck_assert_int_eq(figure_eval(&sc, &sc.figures[f], &r, &e), 0);
            ck_assert_msg(r.verdict != FIGURE_UNEXPLAINED && r.verdict != FIGURE_STALE,
                          "%s: '%s' calc %s seed %s (%s)", sc.name, sc.figures[f].label, r.text,
                          sc.figures[f].seed, figure_verdict_name(r.verdict));
        }
    }
}
END_TEST

/* Names resolve to files; an unknown name lists the known ones. */
START_TEST(catalog_names)
{
    char path[1024];
    Error e;
    ck_assert_int_eq(catalog_path(test_datadir(), CATALOG_MODELS, "llama-9", path, sizeof path, &e), -1);
    ck_assert_msg(strstr(e.msg, "unknown model 'llama-9'") && strstr(e.msg, "llama-3.1-8b"), "%s", e.msg);
    ck_assert_int_eq(catalog_path(test_datadir(), CATALOG_GPUS, "h200", path, sizeof path, &e), 0);
    ck_assert(strstr(path, "gpus/h200.json") != NULL);
    ck_assert_int_eq(catalog_path(test_datadir(), CATALOG_GPUS, "x/y.json", path, sizeof path, &e), 0);
    ck_assert_str_eq(path, "x/y.json");
}
END_TEST

/* Scenario figures: an unexplained disagreement and a stale explanation
 * are both reported. */
START_TEST(figure_verdicts)
{
    static const struct { const char *file; FigureVerdict v; } T[] = {
        {"scenario_unexplained.json", FIGURE_UNEXPLAINED}, {"scenario_stale.json", FIGURE_STALE}};
    for (size_t i = 0; i < 2; i++) {
        static Scenario sc;
        char path[1024];
        Error e;
        snprintf(path, sizeof path, "%s/%s", test_testdata(), T[i].file);
        ck_assert_msg(scenario_load(&sc, path, test_datadir(), &e) == 0, "%s", e.msg);
        FigureResult r;
        ck_assert_int_eq(figure_eval(&sc, &sc.figures[0], &r, &e), 0);
        ck_assert_int_eq(r.verdict, T[i].v);
        ck_assert_str_eq(r.text, "20");
    }
}
END_TEST

static void load_shipped(Scenario *sc, const char *name)
{
    char path[1024];
    Error e;
    ck_assert_int_eq(catalog_path(test_datadir(), CATALOG_SCENARIOS, name, path, sizeof path, &e), 0);
    ck_assert_msg(scenario_load(sc, path, test_datadir(), &e) == 0, "%s", e.msg);
}

/* Once a scenario's inputs change, a figure whose own workload changed is
 * not compared with the seed (its value is for other inputs) and reads in
 * full; a figure that fixes the changed input itself (its own context) is
 * still compared, and unchanged inputs give figure_eval's verdicts. */
START_TEST(changed_inputs_not_compared)
{
    static Scenario sc;
    load_shipped(&sc, "pool-20gib");
    const Workload original = sc.w;
    FigureResult r, plain;
    Error e;
    for (size_t i = 0; i < sc.n_figures; i++) {
        ck_assert_int_eq(figure_eval_changed(&sc, &original, &sc.figures[i], &r, &e), 0);
        ck_assert_int_eq(figure_eval(&sc, &sc.figures[i], &plain, &e), 0);
        ck_assert(r.verdict == plain.verdict && !strcmp(r.text, plain.text));
    }
    sc.w.context = 1024;
    static const struct { const char *label, *text; } FULL[] = {
        {"BF16 per sequence", "0.125"}, {"FP8 per sequence", "0.0625"}, {"BF16 slots", "160"},
        {"BF16 bytes", "2,147,483,648"}};
    for (size_t k = 0; k < N_OF(FULL); k++)
        for (size_t i = 0; i < sc.n_figures; i++)
            if (!strcmp(sc.figures[i].label, FULL[k].label)) {
                ck_assert_int_eq(figure_eval_changed(&sc, &original, &sc.figures[i], &r, &e), 0);
                ck_assert_int_eq(r.verdict, FIGURE_NOT_APPLICABLE);
                ck_assert_str_eq(r.text, FULL[k].text);
            }
    /* speedup-vs-context: the figures at their own contexts stay compared */
    load_shipped(&sc, "speedup-vs-context");
    const Workload base = sc.w;
    Rng g = {test_seed() ^ 0x5EED};
    for (int round = 0; round < 50; round++) {
        sc.w = base;
        sc.w.context = rng_range(&g, 1, 1u << 17);
        if (rng_range(&g, 0, 1))
            sc.w.batch = rng_range(&g, 1, 64);
        for (size_t i = 0; i < sc.n_figures; i++) {
            const Figure *f = &sc.figures[i];
            ck_assert_int_eq(figure_eval_changed(&sc, &base, f, &r, &e), 0);
            bool own = f->context && sc.w.batch == base.batch;
            ck_assert_seeded((r.verdict == FIGURE_NOT_APPLICABLE) == !own, "'%s' at %llu x %llu",
                             f->label, (unsigned long long)sc.w.context,
                             (unsigned long long)sc.w.batch);
            if (r.verdict == FIGURE_NOT_APPLICABLE && !r.never) {
                /* in full: within a millionth of the value */
                char digits[48];
                size_t k = 0;
                for (const char *p = r.text; *p; p++)
                    if (*p != ',')
                        digits[k++] = *p;
                digits[k] = '\0';
                double v = q_to_double(r.value);
                ck_assert_seeded(fabs(strtod(digits, NULL) - v) <= 1e-6 * v, "%s for %.9g", r.text, v);
            }
        }
    }
}
END_TEST

/* Whole numbers from 1,000 up are grouped in every figure, so a token
 * count of 3,815 reads like 122,071 beside it. */
START_TEST(figures_grouped)
{
    static Scenario sc;
    load_shipped(&sc, "speedup-vs-context");
    FigureResult r;
    Error e;
    const Figure *f = &sc.figures[sc.n_figures - 1];
    ck_assert_str_eq(metric_id(f->metric), "crossover_context");
    ck_assert_int_eq(figure_eval(&sc, f, &r, &e), 0);
    ck_assert_str_eq(r.text, "3,815");
    Rng g = {test_seed() ^ 0x6A0};
    for (int round = 0; round < 200; round++) {
        sc.w.context = rng_range(&g, 1, 1u << 17);
        sc.w.batch = rng_range(&g, 1, 256);
        for (size_t i = 0; i < sc.n_figures; i++) {
            ck_assert_int_eq(figure_eval(&sc, &sc.figures[i], &r, &e), 0);
            if (r.never || strchr(r.text, '.'))
                continue;
            size_t digits = strspn(r.text, "0123456789,");
            ck_assert_seeded(digits == strlen(r.text), "%s", r.text);
            for (size_t k = 0; k < digits; k++)     // a comma before every third digit from the end
                ck_assert_seeded((r.text[k] == ',') == ((digits - k) % 4 == 0), "%s", r.text);
        }
    }
}
END_TEST

/* ------------------------------------------------------------------------
 * Bad files: each refused with the file, the position and what was wrong.
 */

static const struct {
    const char *file;
    Kind kind;
    const char *where;          // "line:col: " expected right after the path
    const char *what;           // a phrase the message must contain
} BAD[] = {
    {"model_malformed.json", K_MODEL, ":3:16: ", "malformed JSON"},
    {"model_missing.json", K_MODEL, ":1:1: ", "missing field 'kv_heads'"},
    {"model_mistyped.json", K_MODEL, ":3:13: ", "field 'layers': expected a whole number"},
    {"model_negative.json", K_MODEL, ":4:15: ", "field 'head_dim'"},
    {"model_zero.json", K_MODEL, ":3:44: ", "field 'kv_heads'"},
    {"model_fraction.json", K_MODEL, ":3:13: ", "field 'layers'"},
    {"model_unknown.json", K_MODEL, ":3:32: ", "unknown field 'kv_head'"},
    {"model_twice.json", K_MODEL, ":5:16: ", "field 'layers' appears twice"},
    {"model_heads.json", K_MODEL, ":1:1: ", "multiple of KV heads"},
    {"model_pattern.json", K_MODEL, ":5:66: ", "expected \"full\" or \"sliding\""},
    {"model_trailing.json", K_MODEL, ":1:15: ", "malformed JSON"},
    {"model_empty.json", K_MODEL, ":1:1: ", "unexpected end of file"},
    {"model_array.json", K_MODEL, ":1:1: ", "must be a JSON object"},
    {"model_truncated.json", K_MODEL, ":4:1: ", "unexpected end of file"},
    {"gpu_unit.json", K_GPU, ":3:13: ", "unknown unit 'XB'"},
    {"gpu_rate.json", K_GPU, ":3:34: ", "per second"},
    {"gpu_bool.json", K_GPU, ":3:63: ", "expected true or false"},
    {"scenario_format.json", K_SCENARIO, ":4:23: ", "unknown format"},
    {"scenario_model.json", K_SCENARIO, ":3:12: ", "unknown model 'llama-9'"},
    {"scenario_metric.json", K_SCENARIO, ":5:30: ", "unknown metric 'slotz'"},
    {"scenario_needs_pool.json", K_SCENARIO, ":5:5: ", "needs a pool"},
    {"scenario_context.json", K_SCENARIO, ":3:39: ", "negative"},
    {"scenario_layer.json", K_SCENARIO, ":3:76: ", "from 0 to 31"},
    {"scenario_gpu_full.json", K_SCENARIO, ":1:1: ", "nothing is left for the KV cache"},
    {"scenario_name.json", K_SCENARIO, ":2:11: ", "does not match the file name 'scenario_name'"},
    {"scenario_path.json", K_SCENARIO, ":3:12: ", "not a path"},
    {"scenario_tp.json", K_SCENARIO, ":3:63: ", "field 'tp': tensor-parallel degree 3"},
    {"scenario_twice.json", K_SCENARIO, ":3:76: ", "layer 0 is listed twice"},
    {"scenario_fraction.json", K_SCENARIO, ":3:91: ", "fraction '1.5e0' is out of range"},
};

/* Each file of tests/data/bad is refused with a message that starts with
 * its path, line and column and says what was wrong. */
START_TEST(bad_files_refused)
{
    char path[1024], want[1200];
    Error e;
    snprintf(path, sizeof path, "%s/bad/%s", test_testdata(), BAD[_i].file);
    ck_assert_msg(load_kind(BAD[_i].kind, path, &e) == -1, "%s was accepted", path);
    snprintf(want, sizeof want, "%s%s", path, BAD[_i].where);
    ck_assert_msg(strncmp(e.msg, want, strlen(want)) == 0, "want prefix '%s', got '%s'", want,
                  e.msg);
    ck_assert_msg(strstr(e.msg, BAD[_i].what) != NULL, "want '%s' in '%s'", BAD[_i].what, e.msg);
}
END_TEST

/* Writes text to a fresh temporary file; returns its path. */
static const char *temp_file(const void *text, size_t len)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/kvlab-test-XXXXXX");
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    ck_assert(write(fd, text, len) == (ssize_t)len);
    close(fd);
    return path;
}

/* Files over 1 MiB, with a NUL byte, or nested beyond the cap are refused
 * before cJSON parses them. */
START_TEST(limits_refused)
{
    Error e;
    size_t big = JSON_FILE_MAX + 1;
    char *text = malloc(big);
    memset(text, ' ', big);
    text[0] = '{';
    text[big - 1] = '}';
    const char *p = temp_file(text, big);
    ck_assert_int_eq(load_kind(K_MODEL, p, &e), -1);
    ck_assert_msg(strstr(e.msg, "limited to") != NULL, "%s", e.msg);
    unlink(p);
    free(text);

    p = temp_file("{\"name\": \"a\0b\"}", 15);
    ck_assert_int_eq(load_kind(K_MODEL, p, &e), -1);
    ck_assert_msg(strstr(e.msg, ":1:12: NUL byte") != NULL, "%s", e.msg);
    unlink(p);

    char deep[2 * (JSON_DEPTH_MAX + 10) + 1];
    for (int i = 0; i < JSON_DEPTH_MAX + 10; i++)
        deep[i] = '[', deep[2 * (JSON_DEPTH_MAX + 10) - 1 - i] = ']';
    deep[2 * (JSON_DEPTH_MAX + 10)] = '\0';
    p = temp_file(deep, strlen(deep));
    ck_assert_int_eq(load_kind(K_MODEL, p, &e), -1);
    ck_assert_msg(strstr(e.msg, "nested deeper") != NULL, "%s", e.msg);
    unlink(p);

    ck_assert_int_eq(load_kind(K_MODEL, "/nonexistent/x.json", &e), -1);
    ck_assert(strstr(e.msg, "/nonexistent/x.json: cannot open") != NULL);
    ck_assert_int_eq(load_kind(K_MODEL, "/tmp", &e), -1);
    ck_assert(strstr(e.msg, "not a regular file") != NULL);
}
END_TEST

/* Random damage (flipped, deleted, inserted and repeated bytes) to every
 * shipped file: the loaders return 0 or -1 with a message that starts with
 * the file's path, and never crash (Check runs each test in a child, so a
 * crash fails it). */
START_TEST(damaged_files_never_crash)
{
    static const CatalogKind KINDS[] = {CATALOG_MODELS, CATALOG_GPUS, CATALOG_SCENARIOS};
    static const Kind AS[] = {K_MODEL, K_GPU, K_SCENARIO};
    static const char NOISE[] = "{}[]\",:0123456789.-eE truefalsnul\\\n";
    Rng r = {test_seed() ^ 0xDA3A6E};
    for (size_t k = 0; k < 3; k++) {
        CatalogList list;
        ck_assert_int_eq(catalog_list(test_datadir(), KINDS[k], &list, NULL), 0);
        ck_assert_uint_ge(list.count, 1);
        for (size_t i = 0; i < list.count; i++) {
            char path[1024];
            catalog_path(test_datadir(), KINDS[k], list.names[i], path, sizeof path, NULL);
            FILE *f = fopen(path, "rb");
            ck_assert(f != NULL);
            static char orig[65536], buf[65536 * 2];
            size_t n = fread(orig, 1, sizeof orig, f);
            fclose(f);
            for (int t = 0; t < 60; t++) {
                memcpy(buf, orig, n);
                size_t len = n;
                int edits = (int)rng_range(&r, 1, 4);
                for (int x = 0; x < edits && len > 2; x++) {
                    size_t at = (size_t)rng_range(&r, 0, len - 1);
                    switch (rng_range(&r, 0, 3)) {
                    case 0:
                        buf[at] = NOISE[rng_range(&r, 0, sizeof NOISE - 2)];
                        break;
                    case 1: {
                        size_t cut = (size_t)rng_range(&r, 1, len - at);
                        memmove(buf + at, buf + at + cut, len - at - cut);
                        len -= cut;
                        break;
                    }
                    case 2:
                        memmove(buf + at + 1, buf + at, len - at);
                        buf[at] = NOISE[rng_range(&r, 0, sizeof NOISE - 2)];
                        len++;
                        break;
                    default: {
                        size_t rep = (size_t)rng_range(&r, 1, len - at);
                        if (len + rep < sizeof buf) {
                            memmove(buf + at + rep, buf + at, len - at);
                            len += rep;
                        }
                    }
                    }
                }
                const char *p = temp_file(buf, len);
                Error e = {{0}};
                if (load_kind(AS[k], p, &e) != 0)
                    ck_assert_seeded(strncmp(e.msg, p, strlen(p)) == 0, "message does not name the file: %s",
                                     e.msg);
                unlink(p);
            }
        }
    }
}
END_TEST

Suite *suite_loader(void)
{
    Suite *s = suite_create("loader");
    TCase *t = tcase_create("files");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, shipped_files_load);
    tcase_add_test(t, catalog_names);
    tcase_add_test(t, figure_verdicts);
    tcase_add_test(t, changed_inputs_not_compared);
    tcase_add_test(t, figures_grouped);
    tcase_add_loop_test(t, bad_files_refused, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(t, limits_refused);
    tcase_add_test(t, damaged_files_never_crash);
    suite_add_tcase(s, t);
    return s;
}
