/* stored.c - the stored GPU results' loader (stored.h). */
#include "stored.h"

#include "catalog.h"
#include "format.h"
#include "jsonfile.h"
#include "paths.h"

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
        /* kvlab niah --json's object, read where it is shown */
        rc = json_object(d, niah, "field 'niah' (kvlab niah --json)", e);
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
