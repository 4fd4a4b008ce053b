/* test_loader.c - data files: every shipped file loads and checks clean;
 * every kind of bad file is refused with file, line, column and field;
 * random damage to good files never crashes the loaders. */
#include "testutil.h"

#include "catalog.h"
#include "gpu.h"
#include "jsonfile.h"
#include "kvmatrix.h"
#include "scenario.h"
#include "units.h"

#include <float.h>
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

/* Every shipped model says how many tokens it reads, and a slots figure
 * labelled KIVI counts KIVI's BF16 residual (without it the slots are too
 * many). */
START_TEST(shipped_facts_stated)
{
    CatalogList list;
    Error e;
    ck_assert_int_eq(catalog_list(test_datadir(), CATALOG_MODELS, &list, &e), 0);
    for (size_t i = 0; i < list.count; i++) {
        Model m = test_model(list.names[i]);
        ck_assert_msg(m.max_context > 0, "%s: no max_context", list.names[i]);
    }
    ck_assert_int_eq(catalog_list(test_datadir(), CATALOG_SCENARIOS, &list, &e), 0);
    for (size_t i = 0; i < list.count; i++) {
        static Scenario sc;
        char path[1024];
        ck_assert_int_eq(catalog_path(test_datadir(), CATALOG_SCENARIOS, list.names[i], path, sizeof path, &e), 0);
        ck_assert_int_eq(scenario_load(&sc, path, test_datadir(), &e), 0);
        for (size_t f = 0; f < sc.n_figures; f++)
            ck_assert_msg(!strstr(sc.figures[f].label, "KIVI") || !strstr(metric_id(sc.figures[f].metric), "slots") ||
                              sc.w.kv.residual > 0,
                          "%s: '%s' names KIVI without its residual", sc.name, sc.figures[f].label);
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

/* The figure of `label` in sc; fails when there is none. */
static const Figure *figure_named(const Scenario *sc, const char *label)
{
    for (size_t i = 0; i < sc->n_figures; i++)
        if (!strcmp(sc->figures[i].label, label))
            return &sc->figures[i];
    ck_abort_msg("no figure '%s' in %s", label, sc->name);
    return NULL;
}

/* figure_eval_changed of `label` after sc's workload changed from
 * `original` keeps figure_eval's verdict and text on the scenario's own
 * inputs (the change leaves the figure as it was) or, where `moved`, is not
 * compared and reads `full`. */
static void assert_changed(Scenario *sc, const Workload *original, const char *label, bool moved,
                           const char *full)
{
    const Figure *f = figure_named(sc, label);
    FigureResult r, plain;
    Error e;
    ck_assert_int_eq(figure_eval_changed(sc, original, f, &r, &e), 0);
    Workload now = sc->w;
    sc->w = *original;
    ck_assert_int_eq(figure_eval(sc, f, &plain, &e), 0);
    sc->w = now;
    if (moved) {
        ck_assert_msg(r.verdict == FIGURE_NOT_APPLICABLE, "'%s' compared: %s", label, r.text);
        ck_assert_str_eq(r.text, full);
    } else {
        ck_assert_msg(r.verdict == plain.verdict && !strcmp(r.text, plain.text), "'%s': %s (%s), not %s (%s)",
                      label, r.text, figure_verdict_id(r.verdict), plain.text, figure_verdict_id(plain.verdict));
    }
}

/* Once a scenario's inputs change, a figure that depends on one of them is
 * not compared with the seed (the seed's value, and the file's note on it,
 * are for the scenario's inputs) and reads in full, also where its value
 * happens to come out the same (NVFP4 over BF16 slots at 1k: 568 / 160,
 * where the note speaks of 71 / 20); a figure that depends on none keeps
 * its comparison and note: bytes per element, per-tensor scales and
 * compression at another context, bytes per token with other weights,
 * figures at their own context while the batch stays. Unchanged inputs
 * give figure_eval's verdicts. */
START_TEST(changed_inputs_not_compared)
{
    static Scenario sc;
    load_shipped(&sc, "pool-20gib");
    const Workload original = sc.w;
    for (size_t i = 0; i < sc.n_figures; i++)
        assert_changed(&sc, &original, sc.figures[i].label, false, NULL);
    sc.w.context = 1024;
    static const struct { const char *label, *full; } MOVED[] = {
        {"BF16 per sequence", "0.125"}, {"FP8 per sequence", "0.0625"}, {"BF16 slots", "160"},
        {"BF16 bytes", "2,147,483,648"}, {"NVFP4 slots over BF16 slots", "3.55"}};
    for (size_t k = 0; k < N_OF(MOVED); k++)
        assert_changed(&sc, &original, MOVED[k].label, true, MOVED[k].full);
    static const char *const KEPT[] = {"INT8 bytes per element", "FP8 per-tensor scales", "NVFP4 compression",
                                       "MXFP4 compression"};
    for (size_t k = 0; k < N_OF(KEPT); k++)
        assert_changed(&sc, &original, KEPT[k], false, NULL);
    /* KV sizes do not depend on the weights: their notes stay */
    load_shipped(&sc, "llama-70b-128k");
    const Workload big = sc.w;
    sc.w.weights = 90000000000u;
    assert_changed(&sc, &big, "bytes per token", false, NULL);
    assert_changed(&sc, &big, "one sequence", false, NULL);
    ck_assert(figure_named(&sc, "one sequence")->seed_error[0]);
    /* a compression read from a cache that keeps its last tokens in BF16
     * changes with the context */
    load_shipped(&sc, "pool-20gib");
    sc.w.kv.residual = 128;
    const Workload kivi = sc.w;
    sc.w.context = 1024;
    assert_changed(&sc, &kivi, "NVFP4 compression", true, "2.694737");    // 134,217,728 / (896 x 36,864 + 128 x 131,072)
    Rng g = {test_seed() ^ 0x5EED};
    static const char *const NAMES[] = {"speedup-vs-context", "pool-20gib"};
    for (size_t n = 0; n < N_OF(NAMES); n++) {
        load_shipped(&sc, NAMES[n]);
        const Workload base = sc.w;
        for (int round = 0; round < 100; round++) {
            /* half the rounds the context and batch alone, which speedup-vs-
             * context's figures (at their own context, or not reading it)
             * and pool-20gib's per-element, scale and compression figures
             * follow as said; half every input the lab changes */
            const bool all = round % 2;
            do {
                sc.w = base;
                sc.w.context = rng_range(&g, 0, 1) ? rng_range(&g, 1, 1u << 17) : base.context;
                sc.w.batch = rng_range(&g, 0, 1) ? rng_range(&g, 1, 64) : base.batch;
                if (all && rng_range(&g, 0, 1))
                    sc.w.pool = (u128)rng_range(&g, 1, 200) * GB;
                if (all && rng_range(&g, 0, 1))
                    sc.w.weights = (u128)rng_range(&g, 1, 200) * GB;
                if (all && sc.w.bandwidth && rng_range(&g, 0, 1))
                    sc.w.bandwidth = (u128)rng_range(&g, 1, 8000) * GB;
            } while (!workload_changes(&sc.w, &base));
            const Workload changed = sc.w;
            for (size_t i = 0; i < sc.n_figures; i++) {
                const Figure *f = &sc.figures[i];
                FigureResult r, now, then;
                Error e;
                if (figure_eval(&sc, f, &now, &e)) {    // no figure from these inputs (a pool too small)
                    ck_assert_int_eq(figure_eval_changed(&sc, &base, f, &r, &e), -1);
                    continue;
                }
                ck_assert_int_eq(figure_eval_changed(&sc, &base, f, &r, &e), 0);
                sc.w = base;
                ck_assert_int_eq(figure_eval(&sc, f, &then, &e), 0);
                sc.w = changed;
                /* a figure whose value moved is never compared */
                bool moved = q_cmp(now.value, then.value) != 0 || now.never != then.never;
                ck_assert_seeded(!moved || r.verdict == FIGURE_NOT_APPLICABLE, "'%s' compared at %s, not %s",
                                 f->label, now.text, then.text);
                const char *m = metric_id(f->metric);
                if (!all && n == 0)
                    ck_assert_seeded((r.verdict == FIGURE_NOT_APPLICABLE) == (sc.w.batch != base.batch),
                                     "'%s' at %llu x %llu", f->label, (unsigned long long)sc.w.context,
                                     (unsigned long long)sc.w.batch);
                else if (!all && (!strcmp(m, "bytes_per_element") || !strcmp(m, "tensor_scale_bytes") ||
                                  !strcmp(m, "compression")))
                    ck_assert_seeded(r.verdict != FIGURE_NOT_APPLICABLE, "'%s' at %llu x %llu", f->label,
                                     (unsigned long long)sc.w.context, (unsigned long long)sc.w.batch);
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
                } else if (r.verdict != FIGURE_NOT_APPLICABLE) {
                    ck_assert_seeded(r.verdict == then.verdict && !strcmp(r.text, then.text), "'%s': %s",
                                     f->label, r.text);
                }
            }
        }
    }
}
END_TEST

/* One table of verdicts: every verdict has its own identifier; each one
 * with a word has its meaning for the legend; the legend lists the words
 * of the verdicts given, once each, in the table's order. */
START_TEST(verdict_table)
{
    for (int v = 0; v < FIGURE_VERDICTS; v++) {
        ck_assert(figure_verdict_id(v)[0] && figure_verdict_name(v));
        ck_assert((figure_verdict_name(v)[0] != '\0') == (figure_verdict_meaning(v)[0] != '\0'));
        ck_assert((figure_verdict_kind(v) == VERDICT_SILENT) == (v == FIGURE_NO_SEED || v == FIGURE_NOT_APPLICABLE));
        for (int w = 0; w < v; w++)
            ck_assert_str_ne(figure_verdict_id(v), figure_verdict_id(w));
    }
    ck_assert_str_eq(figure_verdict_id(FIGURE_NO_FIGURE), "no_figure");
    char buf[1024], want[1024];
    const FigureVerdict v[] = {FIGURE_NO_FIGURE, FIGURE_AGREES, FIGURE_NO_SEED, FIGURE_AGREES};
    snprintf(want, sizeof want, "verdict: agrees = %s; no figure = %s.", figure_verdict_meaning(FIGURE_AGREES),
             figure_verdict_meaning(FIGURE_NO_FIGURE));
    ck_assert_str_eq(figure_legend(v, N_OF(v), buf, sizeof buf), want);
    ck_assert_str_eq(figure_legend(v + 2, 1, buf, sizeof buf), "");
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
    {"scenario_fraction.json", K_SCENARIO, ":3:91: ", "fraction '1.5e0' is out of range"},   // as written
    {"scenario_max_context.json", K_SCENARIO, ":3:37: ", "Llama-3-8B reads at most 8192 tokens"},
    {"scenario_figure_context.json", K_SCENARIO, ":5:47: ", "Llama-3-70B reads at most 8192 tokens"},
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

/* ------------------------------------------------------------------------
 * Numbers of any length, read exactly
 */

/* Writes text as DIR/t.json in a fresh directory and loads it as a
 * scenario (its "name" is "t"); the path in *path for messages. */
static int load_scenario_text(const char *text, Scenario *sc, char *path, Error *e)
{
    char dir[] = "/tmp/kvlab-test-XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(path, 64, "%s/t.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fputs(text, f);
    fclose(f);
    int rc = scenario_load(sc, path, test_datadir(), e);
    unlink(path);
    rmdir(dir);
    return rc;
}

/* A valid JSON spelling of sig x 10^x (sig: digits, the first not 0), long
 * at random: zeros after the point, a moved point, zeros before the
 * exponent's digits, 'e' or 'E', an explicit '+'. */
static char *long_spelling(Rng *r, const char *sig, int x)
{
    size_t k = strlen(sig), lead = 0, trail = (size_t)rng_range(r, 0, 600), whole;
    char *digits = malloc(k + trail + 1000);
    if (rng_range(r, 0, 2) == 0) {                  // "0.000sig..."
        lead = (size_t)rng_range(r, 0, 300);
        memset(digits, '0', lead);
        whole = 0;
    } else {
        whole = (size_t)rng_range(r, 1, k + trail);
    }
    memcpy(digits + lead, sig, k);
    memset(digits + lead + k, '0', trail);
    size_t n = lead + k + trail;
    /* value = digits x 10^(exp - fraction digits) = sig x 10^(trail + exp - fraction) */
    long long frac = (long long)(n - whole), exp = x - (long long)trail + frac;
    char *out = malloc(n + 1000), *o = out;
    if (whole == 0)
        *o++ = '0';
    memcpy(o, digits, whole);
    o += whole;
    if (frac) {
        *o++ = '.';
        memcpy(o, digits + whole, (size_t)frac);
        o += frac;
    }
    if (exp != 0 || rng_range(r, 0, 1)) {
        *o++ = rng_range(r, 0, 1) ? 'e' : 'E';
        if (exp < 0 || rng_range(r, 0, 1))
            *o++ = exp < 0 ? '-' : '+';
        size_t zeros = (size_t)rng_range(r, 0, 300);
        memset(o, '0', zeros);
        o += zeros;
        o += sprintf(o, "%lld", exp < 0 ? -exp : exp);
    }
    *o = '\0';
    free(digits);
    return out;
}

/* The numbers of one scenario, each as a significand and a power of ten. */
static const struct {
    const char *field, *sig;
    int x;
} NUMBERS[] = {
    {"context", "8192", 0}, {"batch", "16", 0},    {"pool", "2147483648", 1},
    {"utilization", "9", -1}, {"reserve", "1073741824", 0}, {"tp", "2", 0},
};

static char *scenario_with(const char *const *values)
{
    size_t len = 1024;
    for (size_t i = 0; i < N_OF(NUMBERS); i++)
        len += strlen(values[i]) + 32;
    char *t = malloc(len);
    int o = sprintf(t, "{\"name\": \"t\", \"title\": \"T\", \"source\": \"test\", \"story\": \"S\",\n"
                       "\"model\": \"llama-3.1-8b\", \"gpu\": \"h100-sxm\", \"formats\": [\"bf16\"]");
    for (size_t i = 0; i < N_OF(NUMBERS); i++)
        o += sprintf(t + o, ",\n\"%s\": %s", NUMBERS[i].field, values[i]);
    sprintf(t + o, "}\n");
    return t;
}

static void same_workload(const Scenario *a, const Scenario *b, const char *text)
{
    ck_assert_seeded(a->w.context == b->w.context && a->w.batch == b->w.batch &&
                         a->w.pool == b->w.pool && q_cmp(a->utilization, b->utilization) == 0 &&
                         a->reserve == b->reserve && a->w.tp == b->w.tp,
                     "read differently from the short spelling: %.300s", text);
}

/* A JSON number's value does not depend on how long it is written: leading
 * zeros in the exponent, trailing zeros in the fraction and a moved point
 * give exactly the short spelling's value (fixed cases, then seeded random
 * spellings up to about 1,300 characters). */
START_TEST(long_numbers_read_exactly)
{
    const char *shortest[N_OF(NUMBERS)] = {"8192", "16", "21474836480", "0.9", "1073741824", "2"};
    static Scenario want, got;
    char path[64];
    Error e;
    char *text = scenario_with(shortest);
    ck_assert_msg(load_scenario_text(text, &want, path, &e) == 0, "%s", e.msg);
    free(text);
    ck_assert(want.w.pool == 20 * GIB && want.utilization.num * 10 == want.utilization.den * 9);

    char zeros[1001];
    memset(zeros, '0', 1000);
    zeros[1000] = '\0';
    char fixed[N_OF(NUMBERS)][1100];
    snprintf(fixed[0], sizeof fixed[0], "8192.%s", zeros);
    snprintf(fixed[1], sizeof fixed[1], "1.6e%.80s1", zeros);
    snprintf(fixed[2], sizeof fixed[2], "2147483648.0e%.80s1", zeros);   // the 20 GiB pool
    snprintf(fixed[3], sizeof fixed[3], "0.9%s", zeros);
    snprintf(fixed[4], sizeof fixed[4], "1073741824%.500se-500", zeros);
    snprintf(fixed[5], sizeof fixed[5], "0.%.900s2E+%.99s901", zeros, zeros);
    const char *values[N_OF(NUMBERS)];
    for (size_t i = 0; i < N_OF(NUMBERS); i++)
        values[i] = fixed[i];
    text = scenario_with(values);
    ck_assert_msg(load_scenario_text(text, &got, path, &e) == 0, "%s", e.msg);
    same_workload(&want, &got, text);
    free(text);

    Rng r = {test_seed() ^ 0x10C6};
    for (int t = 0; t < 40; t++) {
        char *spelt[N_OF(NUMBERS)];
        for (size_t i = 0; i < N_OF(NUMBERS); i++)
            values[i] = spelt[i] = long_spelling(&r, NUMBERS[i].sig, NUMBERS[i].x);
        text = scenario_with(values);
        ck_assert_seeded(load_scenario_text(text, &got, path, &e) == 0, "%s", e.msg);
        same_workload(&want, &got, text);
        free(text);
        for (size_t i = 0; i < N_OF(NUMBERS); i++)
            free(spelt[i]);
    }
}
END_TEST

/* A number that cannot be read exactly, or whose exact value is not what
 * the field takes, is refused with its position and the reason; so is a
 * whole number past 2^53, which a double would have rounded. */
START_TEST(long_numbers_refused)
{
    char zeros[1001];
    memset(zeros, '0', 1000);
    zeros[1000] = '\0';
    static const struct {
        size_t field;               // index in NUMBERS
        const char *head;           // the value: head, `zeros` zeros, tail
        int zeros;
        const char *tail, *why;     // why: the message after the position; NULL: accepted
    } T[] = {
        {1, "16.", 1000, "1", "field 'batch': expected a whole number"},
        {2, "21474836480.", 1000, "1",
         "field 'pool': size '21474836480.000000000000000000000000000000000000...' has more than 38 significant digits"},
        {2, "1e", 0, "1000000000000", "field 'pool': size '1e1000000000000' has an exponent out of range"},
        {2, "1", 1000, "", "field 'pool': size '100000000000000000000000000000000000000000000000...' is too large"},
        {0, "8192.", 1000, "5", "field 'context': context '8192.0000000000000000000000000000000000000000000...' has "
                                "more than 38 significant digits"},
        {2, "0e", 0, "1000000000000", "field 'pool': size '0e1000000000000' is zero"},   // whatever its exponent

        {5, "2.", 1000, "1e1000", "field 'tp': expected a whole number"},
        {3, "0.1234567890123456789012345678901234567", 0, "", NULL},     // 37 digits: exact
    };
    for (size_t i = 0; i < N_OF(T); i++) {
        const char *values[N_OF(NUMBERS)] = {"8192", "16", "21474836480", "0.9", "1073741824", "2"};
        char v[1100];
        snprintf(v, sizeof v, "%s%.*s%s", T[i].head, T[i].zeros, zeros, T[i].tail);
        values[T[i].field] = v;
        char *text = scenario_with(values), path[64], want[256];
        static Scenario sc;
        Error e;
        int rc = load_scenario_text(text, &sc, path, &e);
        free(text);
        if (!T[i].why) {
            ck_assert_msg(rc == 0, "%s", e.msg);
            continue;
        }
        ck_assert_msg(rc == -1, "%.40s... was accepted", v);
        snprintf(want, sizeof want, "%s:%zu:%zu: %s", path, 3 + T[i].field,
                 strlen(NUMBERS[T[i].field].field) + 5, T[i].why);
        ck_assert_msg(strncmp(e.msg, want, strlen(want)) == 0, "want '%s', got '%s'", want, e.msg);
    }

    /* Layer numbers too: 3.1e1 is layer 31; 31 and a 1 after 1000 zeros is
     * no layer, though a double reads it as 31. */
    for (int whole = 1; whole >= 0; whole--) {
        char *text = malloc(2048), path[64];
        snprintf(text, 2048,
                 "{\"name\": \"t\", \"title\": \"T\", \"source\": \"test\", \"story\": \"S\",\n"
                 "\"model\": \"llama-3.1-8b\", \"context\": 8192, \"batch\": 1,\n"
                 "\"bf16_layers\": [%s%s%s]}\n", whole ? "3.1e1" : "31.", whole ? "" : zeros,
                 whole ? "" : "1");
        static Scenario sc;
        Error e;
        int rc = load_scenario_text(text, &sc, path, &e);
        free(text);
        if (whole) {
            ck_assert_msg(rc == 0, "%s", e.msg);
            ck_assert(sc.w.kv.n_bf16_layers == 1 && sc.w.kv.bf16_layers[0] == 31);
        } else {
            ck_assert_int_eq(rc, -1);
            ck_assert_msg(strstr(e.msg, "t.json:3:17: field 'bf16_layers': expected layer numbers"),
                          "%s", e.msg);
        }
    }

    /* 2^53 + 1: a double holds only 2^53; the model keeps every digit. */
    static const char MODEL[] =
        "{\"name\": \"t\", \"display\": \"T\", \"source\": \"test\", \"layers\": 32, \"q_heads\": 32,\n"
        "\"kv_heads\": 8, \"head_dim\": 128, \"hidden\": 4096, \"intermediate\": 14336,\n"
        "\"vocab\": 128256, \"tied_embeddings\": false, \"params\": 9007199254740993}\n";
    char dir[] = "/tmp/kvlab-test-XXXXXX", path[64];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/t.json", dir);
    FILE *f = fopen(path, "w");
    fputs(MODEL, f);
    fclose(f);
    Model m;
    Error e;
    int rc = model_load(&m, path, &e);
    unlink(path);
    rmdir(dir);
    ck_assert_msg(rc == 0, "%s", e.msg);
    ck_assert_uint_eq(m.params, 9007199254740993ull);
}
END_TEST

/* A matrix file's numbers are the floats nearest their exact values, rounded
 * once: 1 + 2^-24 + 10^-32 lies just above the midpoint between 1 and the
 * next float, which a double rounds to the midpoint itself and then to 1.
 * Seeded random floats written out exactly, with trailing zeros, read back
 * bit for bit; a number beyond float range is refused with its position. */
START_TEST(matrix_numbers_exact)
{
    static const char OK[] = "{\"keys\": [[1.00000005960464477539062500000001, -0.5]],\n"
                             " \"query\": [1e-50, 3.4028235e38]}";
    KvMatrix m;
    Error e;
    ck_assert_msg(kvmatrix_parse(&m, "m.json", OK, strlen(OK), &e) == 0, "%s", e.msg);
    ck_assert(m.tokens == 1 && m.d == 2 && !m.has_values && m.has_query);
    ck_assert(m.k[0] == nextafterf(1.0f, 2.0f) && m.k[1] == -0.5f && m.v[0] == m.k[0]);
    ck_assert(m.q[0] == 0.0f && m.q[1] == FLT_MAX);
    kvmatrix_free(&m);

    Rng r = {test_seed() ^ 0xF10A7};
    char text[4096];
    for (int t = 0; t < 200; t++) {
        uint32_t bits;
        float want;
        do {
            bits = (uint32_t)rng_next(&r);
            memcpy(&want, &bits, sizeof want);
        } while (!isfinite(want));
        int n = snprintf(text, sizeof text, "[[%.160e", (double)want);   // exact: a float has < 160 digits
        char *exp = strchr(text, 'e');
        size_t zeros = (size_t)rng_range(&r, 0, 2000);
        memmove(exp + zeros, exp, (size_t)(text + n - exp) + 1);
        memset(exp, '0', zeros);
        strcat(text, "]]");
        ck_assert_seeded(kvmatrix_parse(&m, "m.json", text, strlen(text), &e) == 0, "%s", e.msg);
        ck_assert_seeded(memcmp(&m.k[0], &want, sizeof want) == 0, "%a read as %a from %.60s...",
                         (double)want, (double)m.k[0], text);
        kvmatrix_free(&m);
    }

    static const struct {
        const char *text, *why;
    } REFUSED[] = {
        {"[[1, 2],\n [3, 1e39]]", "m.json:2:6: keys: 1e+39 is beyond the range of a float"},
        {"{\"keys\": [[1]], \"values\": [[-1e39]]}", "m.json:1:29: values: -1e+39 is beyond the range"},
        {"{\"keys\": [[1]], \"query\": [1e300]}", "m.json:1:27: query: 1e+300 is beyond the range"},
        {"{\"keys\": [[1]], \"query\": [1, 2]}", "m.json:1:30: query: expected 1 numbers"},
    };
    for (size_t i = 0; i < N_OF(REFUSED); i++) {
        ck_assert_int_eq(kvmatrix_parse(&m, "m.json", REFUSED[i].text, strlen(REFUSED[i].text), &e), -1);
        ck_assert_msg(strncmp(e.msg, REFUSED[i].why, strlen(REFUSED[i].why)) == 0, "want '%s', got '%s'",
                      REFUSED[i].why, e.msg);
    }
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
                Error e = {0};
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
    tcase_add_test(t, shipped_facts_stated);
    tcase_add_test(t, catalog_names);
    tcase_add_test(t, figure_verdicts);
    tcase_add_test(t, verdict_table);
    tcase_add_test(t, changed_inputs_not_compared);
    tcase_add_test(t, figures_grouped);
    tcase_add_loop_test(t, bad_files_refused, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(t, limits_refused);
    tcase_add_test(t, long_numbers_read_exactly);
    tcase_add_test(t, long_numbers_refused);
    tcase_add_test(t, matrix_numbers_exact);
    tcase_add_test(t, damaged_files_never_crash);
    suite_add_tcase(s, t);
    return s;
}
