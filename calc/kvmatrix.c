/* kvmatrix.c - see kvmatrix.h. */
#include "kvmatrix.h"

#include "jsonfile.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* A JSON number as the float nearest it; refused, with its position,
 * when it is not a number or lies beyond a float's range. */
static int float_at(const JsonDoc *d, const cJSON *x, const char *what, float *out, Error *e)
{
    if (!cJSON_IsNumber(x))
        return jsondoc_error(d, x, e, "%s: expected a number", what);
    if (!json_number_float(d, x, out))
        return jsondoc_error(d, x, e, "%s: %g is beyond the range of a float (-%g to %g)", what,
                             x->valuedouble, (double)FLT_MAX, (double)FLT_MAX);
    return 0;
}

/* An array of equal rows of numbers; rows and cols, when already set (by
 * the keys), are the shape it must have. */
static int rows_of(const JsonDoc *d, const cJSON *arr, const char *what, size_t *rows, size_t *cols,
                   float **out, Error *e)
{
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
        return jsondoc_error(d, arr, e, "%s: expected an array of rows", what);
    size_t r = (size_t)cJSON_GetArraySize(arr), c = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, arr) {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) < 1)
            return jsondoc_error(d, row, e, "%s: each row must be an array of numbers", what);
        size_t n = (size_t)cJSON_GetArraySize(row);
        if (c && n != c)
            return jsondoc_error(d, row, e, "%s: this row has %zu numbers, the first has %zu",
                                 what, n, c);
        c = n;
    }
    if (*rows && (r != *rows || c != *cols))
        return jsondoc_error(d, arr, e, "%s: expected %zu x %zu like the keys", what, *rows, *cols);
    float *m = malloc(r * c * sizeof *m);
    if (!m)
        return error_runtime(e, "out of memory");
    size_t i = 0;
    cJSON_ArrayForEach(row, arr) {
        const cJSON *x;
        cJSON_ArrayForEach(x, row) {
            if (float_at(d, x, what, &m[i++], e)) {
                free(m);
                return -1;
            }
        }
    }
    *rows = r;
    *cols = c;
    *out = m;
    return 0;
}

static int query_of(const JsonDoc *d, const cJSON *query, KvMatrix *m, Error *e)
{
    size_t i = 0;
    const cJSON *x;
    if (!cJSON_IsArray(query))
        return jsondoc_error(d, query, e, "query: expected an array of %zu numbers", m->d);
    cJSON_ArrayForEach(x, query) {
        if (i >= m->d)
            return jsondoc_error(d, x, e, "query: expected %zu numbers", m->d);
        if (float_at(d, x, "query", &m->q[i], e))
            return -1;
        i++;
    }
    if (i != m->d)
        return jsondoc_error(d, query, e, "query: expected %zu numbers, got %zu", m->d, i);
    m->has_query = true;
    return 0;
}

static int read_doc(KvMatrix *m, const JsonDoc *d, Error *e)
{
    const cJSON *keys = d->root, *values = NULL, *query = NULL;
    static const char *const FIELDS[] = {"keys", "values", "query", NULL};
    if (cJSON_IsObject(d->root)) {
        if (json_known_fields(d, d->root, FIELDS, e))
            return -1;
        keys = cJSON_GetObjectItemCaseSensitive(d->root, "keys");
        values = cJSON_GetObjectItemCaseSensitive(d->root, "values");
        query = cJSON_GetObjectItemCaseSensitive(d->root, "query");
        if (!keys)
            return jsondoc_error(d, d->root, e, "missing field 'keys'");
    }
    size_t r = 0, c = 0;
    if (rows_of(d, keys, "keys", &r, &c, &m->k, e))
        return -1;
    m->tokens = r;
    m->d = c;
    if (values) {
        if (rows_of(d, values, "values", &r, &c, &m->v, e))
            return -1;
        m->has_values = true;
    } else if (!(m->v = malloc(r * c * sizeof *m->v))) {
        return error_runtime(e, "out of memory");
    } else {
        memcpy(m->v, m->k, r * c * sizeof *m->v);
    }
    if (!(m->q = calloc(c, sizeof *m->q)))
        return error_runtime(e, "out of memory");
    return query ? query_of(d, query, m, e) : 0;
}

/* Reads m from d, then frees d (and m on failure). */
static int from_doc(void *out, JsonDoc *d, const void *ctx, Error *e)
{
    KvMatrix *m = out;
    (void)ctx;
    int rc = read_doc(m, d, e);
    jsondoc_done(d);
    if (rc)
        kvmatrix_free(m);
    return rc;
}

int kvmatrix_load(KvMatrix *m, const char *path, Error *e)
{
    return jsondoc_read(m, sizeof *m, from_doc, NULL, path, NULL, 0, e);
}

int kvmatrix_parse(KvMatrix *m, const char *name, const char *text, size_t len, Error *e)
{
    return jsondoc_read(m, sizeof *m, from_doc, NULL, name, text, len, e);
}

void kvmatrix_free(KvMatrix *m)
{
    free(m->k);
    free(m->v);
    free(m->q);
    memset(m, 0, sizeof *m);
}
