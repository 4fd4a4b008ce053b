/* jsonfile.c - see jsonfile.h. */
#include "jsonfile.h"

#include "readfile.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Positions: offset -> line and column.
 */

static void offset_to_line_col(const char *text, size_t len, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    if (off > len)
        off = len;
    for (size_t i = 0; i < off; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\n') {
            l++;
            c = 1;
        } else if ((ch & 0xC0) != 0x80) {   // count characters, not UTF-8 bytes
            c++;
        }
    }
    *line = l;
    *col = c;
}

static int cmp_pos(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const JsonPos *)a)->item, y = (uintptr_t)((const JsonPos *)b)->item;
    return (x > y) - (x < y);
}

/* O(log n): a matrix file looks up the position of every number it reads. */
static const JsonPos *pos_of(const JsonDoc *d, const cJSON *item)
{
    JsonPos key = {.item = item};
    return d->npos ? bsearch(&key, d->pos, d->npos, sizeof *d->pos, cmp_pos) : NULL;
}

__attribute__((format(printf, 4, 0)))
static int error_at(const JsonDoc *d, size_t off, Error *e, const char *fmt, va_list ap)
{
    if (!e)
        return -1;
    int line, col;
    offset_to_line_col(d->text, d->len, off, &line, &col);
    char msg[ERROR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return error_set(e, "%s:%d:%d: %s", d->path, line, col, msg);
}

/* error_at with its arguments here: for faults in the text itself, which
 * no parsed item marks. */
__attribute__((format(printf, 4, 5)))
static int error_at_offset(const JsonDoc *d, size_t off, Error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_at(d, off, e, fmt, ap);
    va_end(ap);
    return -1;
}

int jsondoc_error(const JsonDoc *d, const cJSON *item, Error *e, const char *fmt, ...)
{
    const JsonPos *p = pos_of(d, item);
    va_list ap;
    va_start(ap, fmt);
    error_at(d, p ? p->offset : 0, e, fmt, ap);
    va_end(ap);
    return -1;
}

int jsondoc_error_key(const JsonDoc *d, const cJSON *item, Error *e, const char *fmt, ...)
{
    const JsonPos *p = pos_of(d, item);
    va_list ap;
    va_start(ap, fmt);
    error_at(d, p ? (item->string ? p->key_offset : p->offset) : 0, e, fmt, ap);
    va_end(ap);
    return -1;
}

/* ------------------------------------------------------------------------
 * Checks before cJSON sees the text.
 */

static size_t skip_ws(const char *t, size_t i)
{
    while (t[i] && (unsigned char)t[i] <= 32)   // cJSON's notion of whitespace
        i++;
    return i;
}

static size_t skip_string(const char *t, size_t i)
{
    i++;                                        // opening quote
    while (t[i] && t[i] != '"') {
        if (t[i] == '\\' && t[i + 1])
            i++;
        i++;
    }
    return t[i] ? i + 1 : i;
}

/* Nesting depth outside strings; cJSON would recurse this deep. */
static int check_depth(const JsonDoc *d, Error *e)
{
    int depth = 0;
    for (size_t i = 0; i < d->len;) {
        char c = d->text[i];
        if (c == '"') {
            i = skip_string(d->text, i);
            continue;
        }
        if (c == '{' || c == '[') {
            if (++depth > JSON_DEPTH_MAX)
                return error_at_offset(d, i, e, "nested deeper than %d levels", JSON_DEPTH_MAX);
        } else if (c == '}' || c == ']') {
            depth--;
        }
        i++;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Walking the text in step with the parsed tree to record positions.
 */

static size_t count_items(const cJSON *item)
{
    size_t n = 1;
    for (const cJSON *c = item->child; c; c = c->next)
        n += count_items(c);
    return n;
}

static size_t walk(JsonDoc *d, const cJSON *item, size_t i, size_t key)
{
    const char *t = d->text;
    i = skip_ws(t, i);
    d->pos[d->npos++] = (JsonPos){item, i, key};
    if (t[i] == '{' || t[i] == '[') {
        bool object = t[i] == '{';
        i++;
        for (const cJSON *c = item->child; c; c = c->next) {
            size_t k = skip_ws(t, i);
            if (object) {
                i = skip_string(t, k);
                i = skip_ws(t, i) + 1;          // ':'
            }
            i = skip_ws(t, walk(d, c, i, k));
            if (t[i] == ',')
                i++;
        }
        i = skip_ws(t, i);
        return t[i] ? i + 1 : i;                // closing bracket
    }
    if (t[i] == '"')
        return skip_string(t, i);
    while (t[i] && (unsigned char)t[i] > 32 && t[i] != ',' && t[i] != ']' && t[i] != '}')
        i++;
    return i;
}

/* ------------------------------------------------------------------------
 * Loading
 */

int jsondoc_parse(JsonDoc *d, const char *name, const char *text, size_t len, Error *e)
{
    memset(d, 0, sizeof *d);
    snprintf(d->path, sizeof d->path, "%s", name);
    if (len > JSON_FILE_MAX)
        return error_set(e, "%s: file is %zu bytes; data files are limited to %u bytes",
                         name, len, JSON_FILE_MAX);
    d->text = malloc(len + 1);
    if (!d->text)
        return error_runtime(e, "%s: out of memory", name);
    memcpy(d->text, text, len);
    d->text[len] = '\0';
    d->len = len;

    const char *nul = memchr(d->text, '\0', len);
    if (nul) {
        error_at_offset(d, (size_t)(nul - d->text), e, "NUL byte in a text file");
        goto err;
    }
    if (check_depth(d, e))
        goto err;
    const char *end = NULL;
    d->root = cJSON_ParseWithOpts(d->text, &end, 1);
    if (!d->root) {
        size_t off = end ? (size_t)(end - d->text) : 0;
        /* cJSON can stop one character past the fault; an error never
         * lies in whitespace, so step back to the last real character. */
        while (off > 0 && off < len && (unsigned char)d->text[off] <= 32 &&
               (unsigned char)d->text[off - 1] > 32)
            off--;
        char near[24] = "";
        for (size_t k = 0; k + 1 < sizeof near && off + k < len && d->text[off + k] != '\n'; k++)
            near[k] = d->text[off + k], near[k + 1] = '\0';
        if (off >= len)
            error_at_offset(d, off, e, "malformed JSON: unexpected end of file");
        else
            error_at_offset(d, off, e, "malformed JSON near '%s'", near);
        goto err;
    }
    d->pos = malloc(count_items(d->root) * sizeof *d->pos);
    if (!d->pos) {
        error_runtime(e, "%s: out of memory", name);
        goto err;
    }
    size_t start = (len >= 3 && memcmp(d->text, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
    walk(d, d->root, start, start);
    qsort(d->pos, d->npos, sizeof *d->pos, cmp_pos);
    return 0;
err:
    jsondoc_done(d);
    return -1;
}

int jsondoc_load(JsonDoc *d, const char *path, Error *e)
{
    memset(d, 0, sizeof *d);
    char *buf;
    size_t len;
    if (readfile(path, JSON_FILE_MAX, "data files", &buf, &len, e))
        return -1;
    int rc = jsondoc_parse(d, path, buf, len, e);
    free(buf);
    return rc;
}

int jsondoc_read(void *out, size_t size, JsonFromDoc from, const void *ctx, const char *path, const char *text,
                 size_t len, Error *e)
{
    JsonDoc d;
    memset(out, 0, size);
    if (text ? jsondoc_parse(&d, path, text, len, e) : jsondoc_load(&d, path, e))
        return -1;
    return from(out, &d, ctx, e);
}

void jsondoc_done(JsonDoc *d)
{
    cJSON_Delete(d->root);
    free(d->text);
    free(d->pos);
    memset(d, 0, sizeof *d);
}

int jsondoc_check_name(const JsonDoc *d, const char *name, Error *e)
{
    const char *base = strrchr(d->path, '/');
    base = base ? base + 1 : d->path;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    if (strlen(name) != n || strncmp(name, base, n) != 0)
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(d->root, "name"), e,
                             "field 'name': '%s' does not match the file name '%.*s'", name,
                             (int)n, base);
    return 0;
}

/* ------------------------------------------------------------------------
 * Numbers, read exactly from their text
 *
 * cJSON keeps a number only as a double, which cannot tell 32 from
 * 32.0000000000000001 nor hold 2^53 + 1. So every number kvlab uses is read
 * again from its text in the file, however long, by the parsers of units.h
 * (one reader of decimal numbers for the command line and the files), and
 * their messages quote it as the file writes it.
 */

/* The text of number v, NUL-terminated, on the heap; NULL with an error
 * where v has no position in the file or memory runs out. */
static char *number_token(const JsonDoc *d, const cJSON *v, Error *e)
{
    const JsonPos *p = pos_of(d, v);
    if (!p)
        return error_set(e, "a number the file does not hold"), NULL;
    const char *t = d->text + p->offset;
    size_t n = strspn(t, "-+0123456789.eE");
    char *s = malloc(n + 1);
    if (!s)
        return error_runtime(e, "out of memory reading a number of %zu characters", n), NULL;
    memcpy(s, t, n);
    s[n] = '\0';
    return s;
}

bool json_number_whole(const JsonDoc *d, const cJSON *v, uint64_t min, uint64_t max,
                       uint64_t *out)
{
    char *s = cJSON_IsNumber(v) ? number_token(d, v, NULL) : NULL;
    bool ok = s && units_parse_count(s, min, max, out, NULL) == 0;
    free(s);
    return ok;
}

/* The C locale, since a JSON number's point is '.' whatever the user's
 * locale. */
static locale_t c_locale(void)
{
    static locale_t c;
    if (!c)
        c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    return c;
}

/* Number v's value read from its text as a float (f) or a double (x),
 * rounded once: strtof and strtod read any number of digits; false where
 * it is out of range (the outputs then untouched). */
static bool number_read(const JsonDoc *d, const cJSON *v, float *f, double *x)
{
    const JsonPos *p = cJSON_IsNumber(v) ? pos_of(d, v) : NULL;
    if (!p)
        return false;
    locale_t old = uselocale(c_locale());
    const float ff = f ? strtof(d->text + p->offset, NULL) : 0;
    const double xx = f ? 0 : strtod(d->text + p->offset, NULL);
    uselocale(old);
    if (isinf(ff) || isinf(xx))
        return false;
    if (f)
        *f = ff;
    else
        *x = xx;
    return true;
}

bool json_number_float(const JsonDoc *d, const cJSON *v, float *out)
{
    return number_read(d, v, out, NULL);
}

bool json_number_double(const JsonDoc *d, const cJSON *v, double *out)
{
    return number_read(d, v, NULL, out);
}

/* ------------------------------------------------------------------------
 * Typed fields
 */

int json_object(const JsonDoc *d, const cJSON *v, const char *what, Error *e)
{
    if (!cJSON_IsObject(v))
        return jsondoc_error(d, v, e, "%s must be a JSON object", what);
    return 0;
}

int json_known_fields(const JsonDoc *d, const cJSON *obj, const char *const *allowed, Error *e)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(*a, c->string) == 0;
        if (!ok) {
            char list[256] = "";
            for (const char *const *a = allowed; *a; a++) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", *a);
            }
            return jsondoc_error_key(d, c, e, "unknown field '%s'; known fields: %s", c->string,
                                     list);
        }
        for (const cJSON *o = obj->child; o != c; o = o->next)
            if (strcmp(o->string, c->string) == 0)
                return jsondoc_error_key(d, c, e, "field '%s' appears twice", c->string);
    }
    return 0;
}

/* Finds a member; 1 if absent and optional, -1 if absent and required. */
static int member(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
                  const cJSON **out, Error *e)
{
    *out = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (*out && !cJSON_IsNull(*out))
        return 0;
    if (need == FIELD_OPTIONAL)
        return 1;
    return jsondoc_error(d, obj, e, "missing field '%s' in this object", name);
}

int json_string(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
                char *out, size_t n, Error *e)
{
    const cJSON *v;
    int rc = member(d, obj, name, need, &v, e);
    if (rc)
        return rc;
    if (!cJSON_IsString(v))
        return jsondoc_error(d, v, e, "field '%s': expected a string", name);
    if (strlen(v->valuestring) >= n)
        return jsondoc_error(d, v, e, "field '%s': longer than %zu characters", name, n - 1);
    if (!v->valuestring[0] && need == FIELD_REQUIRED)
        return jsondoc_error(d, v, e, "field '%s': must not be empty", name);
    strcpy(out, v->valuestring);
    return 0;
}

int json_uint(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
              uint64_t min, uint64_t max, uint64_t *out, Error *e)
{
    const cJSON *v;
    int rc = member(d, obj, name, need, &v, e);
    if (rc)
        return rc;
    if (!json_number_whole(d, v, min, max, out))
        return jsondoc_error(d, v, e, "field '%s': expected a whole number from %llu to %llu",
                             name, (unsigned long long)min, (unsigned long long)max);
    return 0;
}

int json_positive(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need, double *out, Error *e)
{
    const cJSON *v;
    int rc = member(d, obj, name, need, &v, e);
    if (rc)
        return rc;
    if (!json_number_double(d, v, out) || !(*out > 0))
        return jsondoc_error(d, v, e, "field '%s': expected a number above 0", name);
    return 0;
}

int json_bool(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
              bool *out, Error *e)
{
    const cJSON *v;
    int rc = member(d, obj, name, need, &v, e);
    if (rc)
        return rc;
    if (!cJSON_IsBool(v))
        return jsondoc_error(d, v, e, "field '%s': expected true or false", name);
    *out = cJSON_IsTrue(v);
    return 0;
}

typedef int (*ParseFn)(const char *s, void *out, Error *e);

static int parse_size_fn(const char *s, void *out, Error *e)
{
    return units_parse_size(s, out, e);
}
static int parse_rate_fn(const char *s, void *out, Error *e)
{
    return units_parse_rate(s, out, e);
}
static int parse_context_fn(const char *s, void *out, Error *e)
{
    return units_parse_context(s, out, e);
}
static int parse_fraction_fn(const char *s, void *out, Error *e)
{
    return units_parse_fraction(s, out, e);
}

/* A string parsed by fn, or a JSON number parsed the same way from its own
 * text, so both forms obey one set of rules. */
static int unit_field(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
                      ParseFn fn, void *out, const char *expect, Error *e)
{
    const cJSON *v;
    int rc = member(d, obj, name, need, &v, e);
    if (rc)
        return rc;
    char *number = NULL;
    Error inner;
    if (cJSON_IsNumber(v) && !(number = number_token(d, v, &inner)))
        return inner.runtime ? error_runtime(e, "%s", inner.msg)
                             : jsondoc_error(d, v, e, "field '%s': %s", name, inner.msg);
    if (!number && !cJSON_IsString(v))
        return jsondoc_error(d, v, e, "field '%s': expected %s", name, expect);
    rc = fn(number ? number : v->valuestring, out, &inner);
    free(number);
    if (rc)
        return jsondoc_error(d, v, e, "field '%s': %s", name, inner.msg);
    return 0;
}

int json_size(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
              u128 *out, Error *e)
{
    return unit_field(d, obj, name, need, parse_size_fn, out,
                      "a size such as \"20GiB\" or a number of bytes", e);
}

int json_rate(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
              u128 *out, Error *e)
{
    return unit_field(d, obj, name, need, parse_rate_fn, out,
                      "a rate such as \"3.35TB/s\"", e);
}

int json_context(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
                 uint64_t *out, Error *e)
{
    return unit_field(d, obj, name, need, parse_context_fn, out,
                      "a context such as \"8k\" or 8192", e);
}

int json_fraction(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
                  Q *out, Error *e)
{
    return unit_field(d, obj, name, need, parse_fraction_fn, out,
                      "a fraction such as \"0.9\"", e);
}

int json_array(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
               const cJSON **out, int *count, Error *e)
{
    const cJSON *v;
    int rc = member(d, obj, name, need, &v, e);
    if (rc)
        return rc;
    if (!cJSON_IsArray(v))
        return jsondoc_error(d, v, e, "field '%s': expected an array", name);
    *out = v;
    *count = cJSON_GetArraySize(v);
    return 0;
}
