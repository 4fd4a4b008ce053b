/* stored.c - the stored GPU results' loader (stored.h). */
#include "stored.h"

#include "catalog.h"
#include "format.h"
#include "jsonfile.h"
#include "paths.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * The file
 */

static const char *const RUN_FIELDS[] = {
    "name", "device", "measured", "command", "source", "sm_count", "copy_GBps", "fp8_path", "shape",
    "batch", "formats", "niah", NULL,
};
static const char *const SHAPE_FIELDS[] = {"q_heads", "kv_heads", "head_dim", "layers", NULL};
static const char *const SERIES_FIELDS[] = {"format", "slope_ms_per_token", "points", NULL};
static const char *const POINT_FIELDS[] = {"context", "attention_ms", "GBps", NULL};

/* A date as YYYY-MM-DD, its month and day in range. */
static int stored_date(const JsonDoc *d, const cJSON *obj, char *out, size_t n, Error *e)
{
    if (json_string(d, obj, "measured", FIELD_REQUIRED, out, n, e))
        return -1;
    bool ok = strlen(out) == 10;
    for (size_t i = 0; ok && i < 10; i++)
        ok = i == 4 || i == 7 ? out[i] == '-' : out[i] >= '0' && out[i] <= '9';
    const int m = ok ? atoi(out + 5) : 0, day = ok ? atoi(out + 8) : 0;
    if (m < 1 || m > 12 || day < 1 || day > 31)
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(obj, "measured"), e,
                             "field 'measured': expected a date such as \"2026-11-29\", not \"%s\"", out);
    return 0;
}

static int stored_shape(const JsonDoc *d, const cJSON *r, StoredRun *run, Error *e)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "shape");
    if (!s)
        return jsondoc_error(d, r, e, "missing field 'shape' in this object");
    return json_object(d, s, "field 'shape'", e) || json_known_fields(d, s, SHAPE_FIELDS, e) ||
                   json_uint(d, s, "q_heads", FIELD_REQUIRED, 1, 8192, &run->q_heads, e) ||
                   json_uint(d, s, "kv_heads", FIELD_REQUIRED, 1, 8192, &run->kv_heads, e) ||
                   json_uint(d, s, "head_dim", FIELD_REQUIRED, 1, 8192, &run->head_dim, e) ||
                   json_uint(d, s, "layers", FIELD_REQUIRED, 1, 1000, &run->layers, e)
               ? -1
               : 0;
}

/* One format's points, their contexts rising and, after the first
 * format's, the same as the first's. */
static int stored_points(const JsonDoc *d, const cJSON *obj, const StoredRun *run, StoredSeries *s, Error *e)
{
    const cJSON *arr;
    int count;
    if (json_array(d, obj, "points", FIELD_REQUIRED, &arr, &count, e))
        return -1;
    if (count < 1 || count > STORED_POINTS_MAX)
        return jsondoc_error(d, arr, e, "field 'points': from 1 to %d points, not %d", STORED_POINTS_MAX, count);
    const StoredSeries *first = run->n_formats ? &run->formats[0] : NULL;
    if (first && (size_t)count != first->n)
        return jsondoc_error(d, arr, e, "field 'points': %d points, where %s has %zu (every format is measured "
                                        "at the same contexts)", count, first->format, first->n);
    const cJSON *p;
    cJSON_ArrayForEach(p, arr)
    {
        StoredPoint *pt = &s->points[s->n];
        if (json_object(d, p, "a point", e) || json_known_fields(d, p, POINT_FIELDS, e) ||
            json_context(d, p, "context", FIELD_REQUIRED, &pt->context, e) ||
            json_positive(d, p, "attention_ms", FIELD_REQUIRED, &pt->ms, e) ||
            json_positive(d, p, "GBps", FIELD_REQUIRED, &pt->gbps, e))
            return -1;
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(p, "context");
        if (!pt->context)
            return jsondoc_error(d, c, e, "field 'context': at least 1 token");
        if (s->n && pt->context <= s->points[s->n - 1].context)
            return jsondoc_error(d, c, e, "field 'context': the contexts rise, and %llu follows %llu",
                                 (unsigned long long)pt->context,
                                 (unsigned long long)s->points[s->n - 1].context);
        if (first && pt->context != first->points[s->n].context)
            return jsondoc_error(d, c, e, "field 'context': %llu, where %s has %llu (every format is measured "
                                          "at the same contexts)", (unsigned long long)pt->context,
                                 first->format, (unsigned long long)first->points[s->n].context);
        s->n++;
    }
    return 0;
}

static int stored_formats(const JsonDoc *d, const cJSON *r, StoredRun *run, Error *e)
{
    const cJSON *arr, *o;
    int count;
    if (json_array(d, r, "formats", FIELD_REQUIRED, &arr, &count, e))
        return -1;
    if (count < 1 || count > STORED_FORMATS_MAX)
        return jsondoc_error(d, arr, e, "field 'formats': from 1 to %d formats, not %d", STORED_FORMATS_MAX,
                             count);
    cJSON_ArrayForEach(o, arr)
    {
        StoredSeries *s = &run->formats[run->n_formats];
        if (json_object(d, o, "a format's results", e) || json_known_fields(d, o, SERIES_FIELDS, e) ||
            json_string(d, o, "format", FIELD_REQUIRED, s->format, sizeof s->format, e) ||
            json_positive(d, o, "slope_ms_per_token", FIELD_REQUIRED, &s->slope, e))
            return -1;
        const Format *f = format_by_id(s->format);
        const cJSON *fv = cJSON_GetObjectItemCaseSensitive(o, "format");
        if (!f || strcmp(f->id, s->format)) {
            char known[256];
            return jsondoc_error(d, fv, e, "field 'format': unknown format '%s' (known: %s)", s->format,
                                 format_id_list(known, sizeof known));
        }
        if (stored_series(run, s->format))
            return jsondoc_error(d, fv, e, "field 'format': %s is listed twice", s->format);
        if (stored_points(d, o, run, s, e))
            return -1;
        run->n_formats++;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * The NIAH run: {measured, command, source, result}, result as kvlab niah
 * --json writes it
 */

static const char *const NIAH_FIELDS[] = {"measured", "command", "source", "result", NULL};
static const char *const NIAH_RESULT_FIELDS[] = {
    "backend", "device", "fp8_path", "partial", "seconds", "generator", "formats", "cells", NULL,
};
static const char *const NIAH_FORMAT_FIELDS[] = {
    "format", "simulated", "kernel", "trials", "accuracy", "ci_low", "ci_high", "diff_low", "diff_high",
    "verdict", NULL,
};
static const char *const NIAH_CELL_FIELDS[] = {
    "format", "simulated", "length", "depth", "trials", "accuracy", "ci_low", "ci_high", "diff_low",
    "diff_high", NULL,
};

/* A number field from lo to hi. */
static int stored_number(const JsonDoc *d, const cJSON *obj, const char *name, double lo, double hi, double *out,
                         Error *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v)
        return jsondoc_error(d, obj, e, "missing field '%s' in this object", name);
    if (!json_number_double(d, v, out) || !(*out >= lo && *out <= hi))
        return jsondoc_error(d, v, e, "field '%s': expected a number from %g to %g", name, lo, hi);
    return 0;
}

/* A figure: trials, the accuracy inside its interval within 0 .. 1, the
 * difference's interval within -1 .. 1, low before high. */
static int stored_figure(const JsonDoc *d, const cJSON *o, NiahFigure *f, Error *e)
{
    uint64_t trials;
    if (json_uint(d, o, "trials", FIELD_REQUIRED, 1, 1000000, &trials, e) ||
        stored_number(d, o, "accuracy", 0, 1, &f->accuracy, e) || stored_number(d, o, "ci_low", 0, 1, &f->ci_low, e) ||
        stored_number(d, o, "ci_high", 0, 1, &f->ci_high, e) ||
        stored_number(d, o, "diff_low", -1, 1, &f->diff_low, e) ||
        stored_number(d, o, "diff_high", -1, 1, &f->diff_high, e))
        return -1;
    f->trials = (unsigned)trials;
    if (!(f->ci_low <= f->accuracy && f->accuracy <= f->ci_high))
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(o, "accuracy"), e,
                             "field 'accuracy': %g lies outside its interval [%g, %g]", f->accuracy, f->ci_low,
                             f->ci_high);
    if (f->diff_low > f->diff_high)
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(o, "diff_low"), e,
                             "field 'diff_low': %g is above diff_high %g", f->diff_low, f->diff_high);
    return 0;
}

/* The formats, bf16 first, each with its verdict: the one the rule gives
 * its difference's interval at the run's tolerance. */
static int stored_niah_formats(const JsonDoc *d, const cJSON *res, NiahFigures *n, Error *e)
{
    const cJSON *arr, *o;
    int count;
    if (json_array(d, res, "formats", FIELD_REQUIRED, &arr, &count, e))
        return -1;
    if (count < 1 || count > NIAH_FIG_FORMATS_MAX)
        return jsondoc_error(d, arr, e, "field 'formats': from 1 to %d formats, not %d", NIAH_FIG_FORMATS_MAX,
                             count);
    cJSON_ArrayForEach(o, arr)
    {
        const size_t i = n->n_formats;
        char word[32];
        if (json_object(d, o, "a format's NIAH results", e) || json_known_fields(d, o, NIAH_FORMAT_FIELDS, e) ||
            json_string(d, o, "format", FIELD_REQUIRED, n->formats[i].id, sizeof n->formats[i].id, e) ||
            json_bool(d, o, "simulated", FIELD_REQUIRED, &n->formats[i].simulated, e) ||
            stored_figure(d, o, &n->formats[i].all, e) ||
            json_string(d, o, "verdict", FIELD_REQUIRED, word, sizeof word, e))
            return -1;
        const cJSON *fv = cJSON_GetObjectItemCaseSensitive(o, "format");
        if (i == 0 && strcmp(n->formats[i].id, format_bf16()->id))
            return jsondoc_error(d, fv, e, "field 'format': the first format is bf16, the baseline, not '%s'",
                                 n->formats[i].id);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(n->formats[j].id, n->formats[i].id))
                return jsondoc_error(d, fv, e, "field 'format': %s is listed twice", n->formats[i].id);
        const Verdict want = i ? stats_verdict(n->formats[i].all.diff_high, n->tolerance) : VERDICT_BASELINE;
        if (strcmp(word, verdict_word(want)))
            return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(o, "verdict"), e,
                                 "field 'verdict': \"%s\", where the rule at tolerance %g gives \"%s\"", word,
                                 n->tolerance, verdict_word(want));
        n->formats[i].verdict = (int)want;
        n->n_formats++;
    }
    return 0;
}

/* Where v is in the list (of *n), else appended to it while there is
 * room; the index, or -1 where the list is full. */
static int stored_axis(double v, double *list, size_t *n, size_t max)
{
    for (size_t i = 0; i < *n; i++)
        if (list[i] == v)
            return (int)i;
    if (*n == max)
        return -1;
    list[*n] = v;
    return (int)(*n)++;
}

/* The cells, one for every format, length and depth: the lengths and
 * depths in the order they first appear. */
static int stored_niah_cells(const JsonDoc *d, const cJSON *res, NiahFigures *n, Error *e)
{
    const cJSON *arr, *o;
    int count;
    if (json_array(d, res, "cells", FIELD_REQUIRED, &arr, &count, e))
        return -1;
    double lengths[NIAH_FIG_LENGTHS_MAX];
    bool seen[NIAH_FIG_FORMATS_MAX][NIAH_FIG_LENGTHS_MAX][NIAH_FIG_DEPTHS_MAX] = {{{false}}};
    cJSON_ArrayForEach(o, arr)
    {
        char id[32];
        uint64_t length;
        double depth;
        NiahFigure fig;
        if (json_object(d, o, "a NIAH cell", e) || json_known_fields(d, o, NIAH_CELL_FIELDS, e) ||
            json_string(d, o, "format", FIELD_REQUIRED, id, sizeof id, e) ||
            json_uint(d, o, "length", FIELD_REQUIRED, 1, UINT32_MAX, &length, e) ||
            stored_number(d, o, "depth", 0, 1, &depth, e) || stored_figure(d, o, &fig, e))
            return -1;
        size_t f = 0;
        while (f < n->n_formats && strcmp(n->formats[f].id, id))
            f++;
        if (f == n->n_formats)
            return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(o, "format"), e,
                                 "field 'format': %s is not among the run's formats", id);
        const int l = stored_axis((double)length, lengths, &n->n_lengths, NIAH_FIG_LENGTHS_MAX);
        const int dp = stored_axis(depth, n->depths, &n->n_depths, NIAH_FIG_DEPTHS_MAX);
        if (l < 0 || dp < 0)
            return jsondoc_error(d, o, e, "at most %d lengths and %d depths", NIAH_FIG_LENGTHS_MAX,
                                 NIAH_FIG_DEPTHS_MAX);
        if (seen[f][l][dp])
            return jsondoc_error(d, o, e, "the cell of %s at length %llu, depth %g is listed twice", id,
                                 (unsigned long long)length, depth);
        seen[f][l][dp] = true;
        n->lengths[l] = length;
        n->cells[f][l][dp] = fig;
    }
    if ((size_t)count != n->n_formats * n->n_lengths * n->n_depths)
        return jsondoc_error(d, arr, e, "field 'cells': %d cells, where %zu formats x %zu lengths x %zu depths "
                                        "need %zu", count, n->n_formats, n->n_lengths, n->n_depths,
                             n->n_formats * n->n_lengths * n->n_depths);
    n->trials = n->cells[0][0][0].trials;
    return 0;
}

/* The member "niah": its run's date, command and file, and the figures of
 * a complete run on a GPU. */
static int stored_niah(const JsonDoc *d, const cJSON *v, NiahFigures *n, Error *e)
{
    const cJSON *res, *gen;
    char backend[16];
    bool partial;
    if (json_object(d, v, "field 'niah'", e) || json_known_fields(d, v, NIAH_FIELDS, e) ||
        stored_date(d, v, n->measured, sizeof n->measured, e) ||
        json_string(d, v, "command", FIELD_REQUIRED, n->command, sizeof n->command, e) ||
        json_string(d, v, "source", FIELD_REQUIRED, n->source, sizeof n->source, e))
        return -1;
    if (!(res = cJSON_GetObjectItemCaseSensitive(v, "result")))
        return jsondoc_error(d, v, e, "missing field 'result' in this object");
    if (json_object(d, res, "field 'result' (kvlab niah --json)", e) ||
        json_known_fields(d, res, NIAH_RESULT_FIELDS, e) ||
        json_string(d, res, "backend", FIELD_REQUIRED, backend, sizeof backend, e) ||
        json_string(d, res, "device", FIELD_REQUIRED, n->device, sizeof n->device, e) ||
        json_bool(d, res, "partial", FIELD_REQUIRED, &partial, e))
        return -1;
    if (strcmp(backend, "cuda"))
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(res, "backend"), e,
                             "field 'backend': '%s', not a GPU's run (cuda)", backend);
    if (partial)
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(res, "partial"), e,
                             "field 'partial': a stopped run is not stored");
    if (!(gen = cJSON_GetObjectItemCaseSensitive(res, "generator")))
        return jsondoc_error(d, res, e, "missing field 'generator' in this object");
    return json_object(d, gen, "field 'generator'", e) || stored_number(d, gen, "tolerance", 0, 1, &n->tolerance, e) ||
                   stored_niah_formats(d, res, n, e) || stored_niah_cells(d, res, n, e)
               ? -1
               : 0;
}

/* Reads run from d, then frees d. */
static int stored_from_doc(void *out, JsonDoc *d, const void *ctx, Error *e)
{
    StoredRun *run = out;
    (void)ctx;
    const cJSON *r = d->root, *niah = NULL;
    int rc = json_object(d, r, "a stored GPU run", e) || json_known_fields(d, r, RUN_FIELDS, e) ||
             json_string(d, r, "name", FIELD_REQUIRED, run->name, sizeof run->name, e) ||
             jsondoc_check_name(d, run->name, e) ||
             json_string(d, r, "device", FIELD_REQUIRED, run->device, sizeof run->device, e) ||
             stored_date(d, r, run->measured, sizeof run->measured, e) ||
             json_string(d, r, "command", FIELD_REQUIRED, run->command, sizeof run->command, e) ||
             json_string(d, r, "source", FIELD_REQUIRED, run->source, sizeof run->source, e) ||
             json_uint(d, r, "sm_count", FIELD_REQUIRED, 1, 100000, &run->sm_count, e) ||
             json_positive(d, r, "copy_GBps", FIELD_REQUIRED, &run->copy_gbps, e) ||
             json_string(d, r, "fp8_path", FIELD_REQUIRED, run->fp8_path, sizeof run->fp8_path, e) ||
             stored_shape(d, r, run, e) || json_uint(d, r, "batch", FIELD_REQUIRED, 1, 1u << 20, &run->batch, e) ||
             stored_formats(d, r, run, e);
    if (!rc && (niah = cJSON_GetObjectItemCaseSensitive(r, "niah")) && !cJSON_IsNull(niah)) {
        rc = stored_niah(d, niah, &run->niah, e);
        run->has_niah = !rc;
    }
    jsondoc_done(d);
    return rc ? -1 : 0;
}

int stored_load(StoredRun *r, const char *path, Error *e)
{
    return jsondoc_read(r, sizeof *r, stored_from_doc, NULL, path, NULL, 0, e);
}

int stored_parse(StoredRun *r, const char *name, const char *text, size_t len, Error *e)
{
    return jsondoc_read(r, sizeof *r, stored_from_doc, NULL, name, text, len, e);
}

/* ------------------------------------------------------------------------
 * What the screens ask for
 */

int stored_gpu_run(StoredRun *r, const char *dir, Error *e)
{
    if (!dir)
        dir = paths_storeddir();
    /* the directory's NAME.json files, as the catalog lists a data
     * directory's scenarios */
    CatalogList list;
    if (catalog_list(dir, CATALOG_SCENARIOS, &list, e))
        return error_set(e, "%s: cannot read the stored results' directory (set KVLAB_STORED to another)", dir);
    if (!list.count)
        return error_set(e, "%s: no stored GPU results (assets/stored_results.sh writes them)", dir);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.json", dir, list.names[0]);
    return stored_load(r, path, e);
}

const StoredSeries *stored_series(const StoredRun *r, const char *format)
{
    for (size_t i = 0; i < r->n_formats; i++)
        if (!strcmp(r->formats[i].format, format))
            return &r->formats[i];
    return NULL;
}

int stored_gpu_slopes(StoredSlopes *out, Error *e)
{
    StoredRun r;
    memset(out, 0, sizeof *out);
    if (stored_gpu_run(&r, NULL, e))
        return -1;
    snprintf(out->device, sizeof out->device, "%s", r.device);
    snprintf(out->measured, sizeof out->measured, "%s", r.measured);
    out->batch = r.batch;
    out->layers = r.layers;
    const StoredSeries *base = stored_series(&r, format_bf16()->id);
    for (size_t i = 0; i < r.n_formats; i++) {
        snprintf(out->rows[i].format, sizeof out->rows[i].format, "%s", r.formats[i].format);
        out->rows[i].ms_per_token = r.formats[i].slope;
        out->rows[i].ratio_to_bf16 = base ? r.formats[i].slope / base->slope : NAN;
    }
    out->n = r.n_formats;
    return 0;
}

int stored_niah_check(const StoredRun *r, Error *e)
{
    return r->has_niah ? 0 : error_set(e, "%s: no stored NIAH results (measured on %s, %s)", r->name,
                                       r->device, r->measured);
}
