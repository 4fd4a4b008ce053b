/* kvtensors.c - see kvtensors.h. */
#include "kvtensors.h"

#include "checked.h"
#include "jsonfile.h"
#include "kvgen.h"
#include "minifloat.h"
#include "readfile.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LENGTH_BYTES 8          // the header's length before it
#define CHUNK_BYTES (1u << 20)  // data read at a time, then converted

/* The header is parsed as a JSON data file, which has its own limit. */
_Static_assert(KVTENSORS_HEADER_MAX <= JSON_FILE_MAX, "a header kvlab takes is a JSON text jsondoc_parse takes");

/* ------------------------------------------------------------------------
 * Where the bytes come from: a file read in parts, or memory.
 */

typedef struct {
    const char *name;               // the file, for messages
    int fd;                         // the open file, or -1 for mem
    const unsigned char *mem;       // (size) bytes, when fd is -1
    unsigned long long size;        // the file's length in bytes
} Source;

/* n bytes from offset off, which the caller has checked lie in the file. */
static int source_read(const Source *s, unsigned long long off, void *buf, size_t n, Error *e)
{
    if (s->fd < 0) {
        memcpy(buf, s->mem + off, n);
        return 0;
    }
    size_t got = readfile_at(s->fd, off, buf, n);
    if (got != n)
        return error_runtime(e, "%s: short read (%zu of %zu bytes at byte %llu)", s->name, got, n, off);
    return 0;
}

/* ------------------------------------------------------------------------
 * The dtypes kvlab reads, each element little-endian.
 */

typedef struct {
    const char *name;                       // as the header writes it
    size_t bytes;                           // per element
    float (*value)(const unsigned char *p); // one element as a float
} Dtype;

static uint32_t le_bits(const unsigned char *p, size_t n)
{
    uint32_t u = 0;
    for (size_t i = n; i-- > 0;)
        u = u << 8 | p[i];
    return u;
}

static float bf16_at(const unsigned char *p)
{
    return bf16_value((uint16_t)le_bits(p, 2));
}

static float f16_at(const unsigned char *p)
{
    return fp16_value((uint16_t)le_bits(p, 2));
}

static float f32_at(const unsigned char *p)
{
    uint32_t u = le_bits(p, 4);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static const Dtype DTYPES[] = {
    {"BF16", 2, bf16_at},
    {"F16", 2, f16_at},
    {"F32", 4, f32_at},
};
#define N_DTYPES (sizeof DTYPES / sizeof DTYPES[0])

static const Dtype *dtype_by_name(const char *name)
{
    for (size_t i = 0; i < N_DTYPES; i++)
        if (strcmp(DTYPES[i].name, name) == 0)
            return &DTYPES[i];
    return NULL;
}

/* ------------------------------------------------------------------------
 * The header's entries: every tensor's dtype, shape and place in the data.
 */

#define METADATA "__metadata__"
#define DTYPE_MAX 16            // longer than any dtype safetensors has

typedef struct {
    const cJSON *item;          // the member of the header; item->string is the name
    size_t index;               // its place among the members, for messages in file order
    bool metadata;              // the "__metadata__" member, not a tensor
    char dtype[DTYPE_MAX];
    const cJSON *shape;         // array of whole numbers
    unsigned long long begin, end;  // data_offsets: [begin, end) from the data's start
} Entry;

/* "[2, 8, 128]", cut with "..." where it does not fit. */
static const char *shape_str(const JsonDoc *d, const cJSON *shape, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "[");
    const cJSON *x;
    cJSON_ArrayForEach(x, shape) {
        uint64_t v = 0;
        json_number_whole(d, x, 0, UINT64_MAX, &v);
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%llu", x == shape->child ? "" : ", ",
                                (unsigned long long)v);
        if (len + 5 >= n) {
            snprintf(buf + (n - 5), 5, "...]");
            return buf;
        }
    }
    snprintf(buf + len, n - len, "]");
    return buf;
}

/* "__metadata__": an object of strings. */
static int metadata_check(const JsonDoc *d, const cJSON *m, Error *e)
{
    if (!cJSON_IsObject(m))
        return jsondoc_error(d, m, e, METADATA " must be a JSON object of strings");
    const cJSON *x;
    cJSON_ArrayForEach(x, m) {
        if (!cJSON_IsString(x))
            return jsondoc_error(d, x, e, METADATA ": field '%s': expected a string", x->string);
    }
    return 0;
}

static int entry_of(const JsonDoc *d, const cJSON *item, unsigned long long data_len, Entry *out, Error *e)
{
    static const char *const FIELDS[] = {"dtype", "shape", "data_offsets", NULL};
    const char *name = item->string;
    if (!cJSON_IsObject(item))
        return jsondoc_error(d, item, e, "tensor %s: expected an object of dtype, shape and data_offsets", name);
    if (json_known_fields(d, item, FIELDS, e) ||
        json_string(d, item, "dtype", FIELD_REQUIRED, out->dtype, sizeof out->dtype, e) ||
        json_array(d, item, "shape", FIELD_REQUIRED, &out->shape, &(int){0}, e))
        return -1;
    const cJSON *x;
    cJSON_ArrayForEach(x, out->shape) {
        if (!json_number_whole(d, x, 0, UINT64_MAX, &(uint64_t){0}))
            return jsondoc_error(d, x, e, "tensor %s: shape: expected whole numbers", name);
    }
    const cJSON *offsets;
    int count;
    if (json_array(d, item, "data_offsets", FIELD_REQUIRED, &offsets, &count, e))
        return -1;
    uint64_t at[2];
    if (count != 2 || !json_number_whole(d, offsets->child, 0, UINT64_MAX, &at[0]) ||
        !json_number_whole(d, offsets->child->next, 0, UINT64_MAX, &at[1]))
        return jsondoc_error(d, offsets, e, "tensor %s: data_offsets: expected [begin, end], two whole numbers",
                             name);
    if (at[0] > at[1])
        return jsondoc_error(d, offsets, e, "tensor %s: data_offsets [%llu, %llu] end before they begin", name,
                             (unsigned long long)at[0], (unsigned long long)at[1]);
    if (at[1] > data_len)
        return jsondoc_error(d, offsets, e, "tensor %s: data_offsets [%llu, %llu] run past the %llu bytes of data",
                             name, (unsigned long long)at[0], (unsigned long long)at[1], data_len);
    out->begin = at[0];
    out->end = at[1];
    return 0;
}

static int cmp_by_name(const void *a, const void *b)
{
    const Entry *x = a, *y = b;
    int c = strcmp(x->item->string, y->item->string);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int cmp_by_begin(const void *a, const void *b)
{
    const Entry *x = a, *y = b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

/* A name given twice, and tensors whose bytes overlap; O(n log n), as a
 * whole model's header has thousands of entries. Sorts the entries. */
static int entries_check(const JsonDoc *d, Entry *en, size_t n, Error *e)
{
    qsort(en, n, sizeof *en, cmp_by_name);
    for (size_t i = 1; i < n; i++)
        if (strcmp(en[i].item->string, en[i - 1].item->string) == 0)
            return jsondoc_error_key(d, en[i].item, e, "%s appears twice in the header", en[i].item->string);
    /* In order of their starts, tensors that each start where the one
     * before ends or later are apart, so neighbours are all to compare. */
    qsort(en, n, sizeof *en, cmp_by_begin);
    const Entry *last = NULL;
    for (size_t i = 0; i < n; i++) {
        if (en[i].metadata || en[i].begin == en[i].end)
            continue;               // no bytes to overlap
        if (last && en[i].begin < last->end)
            return jsondoc_error(d, en[i].item, e, "tensors %s and %s overlap in the data ([%llu, %llu) and [%llu, %llu))",
                                 last->item->string, en[i].item->string, last->begin, last->end, en[i].begin,
                                 en[i].end);
        last = &en[i];
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Tensors k and v
 */

typedef struct {
    const Entry *entry;
    const Dtype *dtype;
    uint64_t dims[3];           // tokens, kv_heads, head_dim
} KvEntry;

static int kv_entry(const JsonDoc *d, const Entry *en, size_t n, const char *name, KvEntry *out, Error *e)
{
    const Entry *x = NULL;
    for (size_t i = 0; i < n && !x; i++)
        if (!en[i].metadata && strcmp(en[i].item->string, name) == 0)
            x = &en[i];
    if (!x)
        return jsondoc_error(d, d->root, e, "no tensor %s (kvlab reads tensors k and v)", name);
    char shape[96];
    out->entry = x;
    if (!(out->dtype = dtype_by_name(x->dtype)))
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(x->item, "dtype"), e,
                             "tensor %s: dtype %s is not BF16, F16 or F32", name, x->dtype);
    if (cJSON_GetArraySize(x->shape) != 3)
        return jsondoc_error(d, x->shape, e, "tensor %s: shape %s is not [tokens, kv_heads, head_dim]", name,
                             shape_str(d, x->shape, shape, sizeof shape));
    const cJSON *dim = x->shape->child;
    for (size_t i = 0; i < 3; i++, dim = dim->next)
        json_number_whole(d, dim, 0, UINT64_MAX, &out->dims[i]);
    shape_str(d, x->shape, shape, sizeof shape);
    if (!out->dims[0] || !out->dims[1] || !out->dims[2])
        return jsondoc_error(d, x->shape, e, "tensor %s: shape %s has a zero-sized dimension", name, shape);
    if (out->dims[2] > KVGEN_MAX_DIM)
        return jsondoc_error(d, x->shape, e, "tensor %s: head_dim %llu is over %d, the most kvlab takes", name,
                             (unsigned long long)out->dims[2], KVGEN_MAX_DIM);
    if (out->dims[0] > KVGEN_TOKENS_MAX)
        return jsondoc_error(d, x->shape, e, "tensor %s: %llu tokens are over %u, the most kvlab takes", name,
                             (unsigned long long)out->dims[0], KVGEN_TOKENS_MAX);
    /* At most 2^24 x 2^64 x 2^12 x 4: no overflow in 128 bits. */
    u128 bytes = (u128)out->dims[0] * out->dims[1] * out->dims[2] * out->dtype->bytes;
    if (bytes != x->end - x->begin) {
        char b[48];
        return jsondoc_error(d, x->item, e, "tensor %s: data_offsets [%llu, %llu] do not match shape %s of %s (%s bytes)",
                             name, x->begin, x->end, shape, x->dtype, u128_str(b, sizeof b, bytes, false));
    }
    return 0;
}

/* Tensor `kv`'s elements into out, a chunk at a time through buf. */
static int tensor_read(const Source *s, unsigned long long data_start, const KvEntry *kv, float *out,
                       unsigned char *buf, Error *e)
{
    size_t bytes = kv->dtype->bytes, per = CHUNK_BYTES / bytes;
    size_t n = (size_t)(kv->entry->end - kv->entry->begin) / bytes;
    for (size_t i = 0; i < n; i += per) {
        size_t m = n - i < per ? n - i : per;
        if (source_read(s, data_start + kv->entry->begin + i * bytes, buf, m * bytes, e))
            return -1;
        for (size_t j = 0; j < m; j++) {
            float x = kv->dtype->value(buf + j * bytes);
            if (!isfinite(x)) {
                size_t at = i + j, heads = (size_t)kv->dims[1], dim = (size_t)kv->dims[2];
                return error_set(e, "%s: tensor %s: element [%zu, %zu, %zu] is %s; keys and values must be finite",
                                 s->name, kv->entry->item->string, at / (heads * dim), at / dim % heads, at % dim,
                                 isnan(x) ? "NaN" : x > 0 ? "inf" : "-inf");
            }
            out[i + j] = x;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Loading
 */

/* The header's k and v, checked against each other and the data. */
static int header_read(const JsonDoc *d, unsigned long long data_len, Entry **entries, KvEntry kv[2], Error *e)
{
    if (json_object(d, d->root, "the header", e))
        return -1;
    size_t n = (size_t)cJSON_GetArraySize(d->root), i = 0;
    Entry *en = *entries = calloc(n ? n : 1, sizeof *en);
    if (!en)
        return error_runtime(e, "%s: out of memory", d->path);
    for (const cJSON *c = d->root->child; c; c = c->next, i++) {
        en[i] = (Entry){.item = c, .index = i, .metadata = strcmp(c->string, METADATA) == 0};
        if (en[i].metadata ? metadata_check(d, c, e) : entry_of(d, c, data_len, &en[i], e))
            return -1;
    }
    if (entries_check(d, en, n, e) || kv_entry(d, en, n, "k", &kv[0], e) || kv_entry(d, en, n, "v", &kv[1], e))
        return -1;
    char a[96], b[96];
    if (kv[0].dtype != kv[1].dtype)
        return jsondoc_error(d, kv[1].entry->item, e, "tensors k and v differ in dtype: %s and %s",
                             kv[0].dtype->name, kv[1].dtype->name);
    if (memcmp(kv[0].dims, kv[1].dims, sizeof kv[0].dims) != 0)
        return jsondoc_error(d, kv[1].entry->shape, e, "k and v shapes differ: %s and %s",
                             shape_str(d, kv[0].entry->shape, a, sizeof a),
                             shape_str(d, kv[1].entry->shape, b, sizeof b));
    return 0;
}

static int load(const Source *s, KvTensors *t, Error *e)
{
    memset(t, 0, sizeof *t);
    unsigned char len_le[LENGTH_BYTES];
    if (s->size < LENGTH_BYTES)
        return error_set(e, "%s: file is %llu bytes, too short for a safetensors header's %d-byte length",
                         s->name, s->size, LENGTH_BYTES);
    if (source_read(s, 0, len_le, sizeof len_le, e))
        return -1;
    unsigned long long n = (unsigned long long)le_bits(len_le + 4, 4) << 32 | le_bits(len_le, 4);
    if (n > s->size - LENGTH_BYTES)
        return error_set(e, "%s: header length %llu is larger than the file (%llu bytes)", s->name, n, s->size);
    if (n > KVTENSORS_HEADER_MAX)
        return error_set(e, "%s: header length %llu is over the %u bytes kvlab reads", s->name, n,
                         KVTENSORS_HEADER_MAX);
    char *text = malloc(n ? n : 1), where[ERROR_MSG_MAX];
    if (!text)
        return error_runtime(e, "%s: out of memory", s->name);
    snprintf(where, sizeof where, "%s: header", s->name);
    JsonDoc d;
    int rc = source_read(s, LENGTH_BYTES, text, n, e) || jsondoc_parse(&d, where, text, n, e) ? -1 : 0;
    free(text);
    if (rc)
        return -1;

    unsigned long long data_start = LENGTH_BYTES + n;
    Entry *entries = NULL;
    KvEntry kv[2];
    unsigned char *buf = NULL;
    if (header_read(&d, s->size - data_start, &entries, kv, e))
        goto err;
    t->tokens = (size_t)kv[0].dims[0];
    t->kv_heads = (size_t)kv[0].dims[1];
    t->head_dim = (size_t)kv[0].dims[2];
    snprintf(t->dtype, sizeof t->dtype, "%s", kv[0].dtype->name);
    /* Fits: the elements lie in the file at 2 bytes or more each, so
     * their floats take at most twice its size. */
    size_t floats = t->tokens * t->kv_heads * t->head_dim * sizeof(float);
    if (!(buf = malloc(CHUNK_BYTES)) || !(t->k = malloc(floats)) || !(t->v = malloc(floats))) {
        error_runtime(e, "%s: out of memory for k and v (%zu bytes each)", s->name, floats);
        goto err;
    }
    if (tensor_read(s, data_start, &kv[0], t->k, buf, e) || tensor_read(s, data_start, &kv[1], t->v, buf, e))
        goto err;
    free(buf);
    free(entries);
    jsondoc_done(&d);
    return 0;
err:
    free(buf);
    free(entries);
    jsondoc_done(&d);
    kvtensors_free(t);
    return -1;
}

int kvtensors_load(const char *path, KvTensors *t, Error *e)
{
    Source s = {.name = path, .fd = -1};
    memset(t, 0, sizeof *t);
    if (readfile_open(path, &s.fd, &s.size, e))
        return -1;
    int rc = load(&s, t, e);
    close(s.fd);
    return rc;
}

int kvtensors_parse(const char *name, const void *bytes, size_t len, KvTensors *t, Error *e)
{
    Source s = {.name = name, .fd = -1, .mem = bytes, .size = len};
    return load(&s, t, e);
}

void kvtensors_free(KvTensors *t)
{
    free(t->k);
    free(t->v);
    memset(t, 0, sizeof *t);
}
