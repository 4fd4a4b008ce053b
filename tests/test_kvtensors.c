/* test_kvtensors.c - safetensors files of keys and values (kvtensors.h):
 * files the tests write in BF16, F16 and F32 read back exactly, in the
 * file's row-major order, from a file or from memory; every way a file can
 * be wrong is refused with the file and what was wrong. */
#include "testutil.h"

#include "kvgen.h"
#include "kvtensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "kv.safetensors"   // the name messages give a file in memory

/* ------------------------------------------------------------------------
 * Writing files
 */

/* A safetensors file in memory: the header's length, its text, the data. */
typedef struct {
    unsigned char *bytes;
    size_t len;
} File;

static void put_le(unsigned char *p, uint64_t u, size_t n)
{
    for (size_t i = 0; i < n; i++, u >>= 8)
        p[i] = (unsigned char)u;
}

/* data_len bytes of data, copied from data where it is not NULL, else
 * zeros. */
static File file_of(const char *header, size_t header_len, const void *data, size_t data_len)
{
    File f = {malloc(8 + header_len + data_len), 8 + header_len + data_len};
    ck_assert(f.bytes != NULL);
    put_le(f.bytes, header_len, 8);
    memcpy(f.bytes + 8, header, header_len);
    if (data)
        memcpy(f.bytes + 8 + header_len, data, data_len);
    else
        memset(f.bytes + 8 + header_len, 0, data_len);
    return f;
}

/* The file on disk, at a fresh temporary path (to unlink). */
static const char *file_write(const File *f)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/kvlab-kvtensors-XXXXXX");
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    for (size_t done = 0; done < f->len;) {
        ssize_t w = write(fd, f->bytes + done, f->len - done);
        ck_assert(w > 0);
        done += (size_t)w;
    }
    close(fd);
    return path;
}

/* ------------------------------------------------------------------------
 * Elements, decoded here from their definitions, not by minifloat.h
 */

typedef struct {
    const char *name;
    size_t bytes;
    uint32_t exp_mask;          // an exponent of all ones: infinite or NaN
} Dtype;

static const Dtype DTYPES[] = {
    {"BF16", 2, 0x7F80},
    {"F16", 2, 0x7C00},
    {"F32", 4, 0x7F800000},
};

static float value_of(const Dtype *dt, uint32_t bits)
{
    float f;
    if (dt->bytes == 4 || dt->exp_mask == 0x7F80) {     // F32, or BF16: F32's upper half
        uint32_t u = dt->bytes == 4 ? bits : bits << 16;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    int e = (int)(bits >> 10 & 31), m = (int)(bits & 1023);   // F16: 1 + 5 + 10 bits, bias 15
    double x = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (float)(bits & 0x8000 ? -x : x);
}

/* A random element of the dtype, finite (any sign, subnormals, zeros):
 * its bits. */
static uint32_t random_finite(Rng *r, const Dtype *dt)
{
    uint32_t b;
    do
        b = (uint32_t)(rng_next(r) >> (64 - 8 * dt->bytes));
    while ((b & dt->exp_mask) == dt->exp_mask);
    return b;
}

/* k and v of the dtype and shape with random finite elements: the file,
 * with v's data before k's, a metadata object, a tensor of another dtype
 * between them and unclaimed bytes at the end; want_k and want_v get the
 * values (tokens x heads x dim floats each, to free). */
static File random_kv(Rng *r, const Dtype *dt, size_t tokens, size_t heads, size_t dim, float **want_k,
                      float **want_v)
{
    size_t n = tokens * heads * dim, bytes = n * dt->bytes, gap = 6, tail = 3;
    unsigned char *data = malloc(2 * bytes + gap + tail);
    ck_assert(data != NULL);
    *want_k = malloc(n * sizeof(float));
    *want_v = malloc(n * sizeof(float));
    ck_assert(*want_k && *want_v);
    for (size_t i = 0; i < n; i++) {
        uint32_t bk = random_finite(r, dt), bv = random_finite(r, dt);
        put_le(data + bytes + gap + i * dt->bytes, bk, dt->bytes);
        put_le(data + i * dt->bytes, bv, dt->bytes);
        (*want_k)[i] = value_of(dt, bk);
        (*want_v)[i] = value_of(dt, bv);
    }
    memset(data + bytes, 0x5A, gap);
    memset(data + 2 * bytes + gap, 0x5A, tail);
    char header[512];
    int len = snprintf(header, sizeof header,
                       "{\"__metadata__\": {\"format\": \"pt\", \"layer\": \"3\"},\n"
                       " \"v\": {\"dtype\": \"%s\", \"shape\": [%zu, %zu, %zu], \"data_offsets\": [0, %zu]},\n"
                       " \"pad\": {\"dtype\": \"U8\", \"shape\": [%zu], \"data_offsets\": [%zu, %zu]},\n"
                       " \"k\": {\"data_offsets\": [%zu, %zu], \"shape\": [%zu, %zu, %zu], \"dtype\": \"%s\"}}   ",
                       dt->name, tokens, heads, dim, bytes, gap, bytes, bytes + gap, bytes + gap, 2 * bytes + gap,
                       tokens, heads, dim, dt->name);
    File f = file_of(header, (size_t)len, data, 2 * bytes + gap + tail);
    free(data);
    return f;
}

/* ------------------------------------------------------------------------
 * Reading back
 */

/* Every element of k and v, read from a file and from memory, is the
 * file's element exactly (bit for bit: signs of zero, subnormals), in the
 * file's row-major [tokens][kv_heads][head_dim] order, whatever the order
 * of the tensors in the data and whatever else the file holds. Seeded
 * random shapes of each dtype, and one shape per dtype whose data spans
 * several of the reader's chunks. */
START_TEST(elements_read_exactly)
{
    Rng r = {test_seed() ^ 0x5AFE7E45};
    for (size_t d = 0; d < N_OF(DTYPES); d++) {
        for (int trial = 0; trial < 5; trial++) {
            bool big = trial == 0;
            size_t tokens = big ? 4099 : (size_t)rng_range(&r, 1, 300);
            size_t heads = big ? 2 : (size_t)rng_range(&r, 1, 8), dim = big ? 128 : (size_t)rng_range(&r, 1, 130);
            float *want_k, *want_v;
            File f = random_kv(&r, &DTYPES[d], tokens, heads, dim, &want_k, &want_v);
            const char *path = file_write(&f);
            for (int from_file = 0; from_file < 2; from_file++) {
                KvTensors t;
                Error e;
                int rc = from_file ? kvtensors_load(path, &t, &e) : kvtensors_parse(NAME, f.bytes, f.len, &t, &e);
                ck_assert_seeded(rc == 0, "%s: %s", DTYPES[d].name, e.msg);
                ck_assert_seeded(t.tokens == tokens && t.kv_heads == heads && t.head_dim == dim,
                                 "%s: %zu x %zu x %zu read as %zu x %zu x %zu", DTYPES[d].name, tokens, heads, dim,
                                 t.tokens, t.kv_heads, t.head_dim);
                ck_assert_str_eq(t.dtype, DTYPES[d].name);
                size_t n = tokens * heads * dim;
                for (size_t i = 0; i < n; i++) {
                    ck_assert_seeded(memcmp(&t.k[i], &want_k[i], sizeof(float)) == 0 &&
                                         memcmp(&t.v[i], &want_v[i], sizeof(float)) == 0,
                                     "%s element %zu: k %a v %a, want %a %a", DTYPES[d].name, i, (double)t.k[i],
                                     (double)t.v[i], (double)want_k[i], (double)want_v[i]);
                }
                kvtensors_free(&t);
                ck_assert(t.k == NULL && t.v == NULL && t.tokens == 0);
            }
            unlink(path);
            free(f.bytes);
            free(want_k);
            free(want_v);
        }
    }
}
END_TEST

/* What the format allows is read: entry fields in any order, whole
 * numbers written as 4.0 or 4e0, zero-length tensors anywhere (they hold
 * no bytes to overlap), holes in the data, other dtypes and ranks
 * elsewhere, a header padded with spaces, no metadata. */
START_TEST(format_variants_read)
{
    static const char HEADER[] =
        "{\"empty\":{\"dtype\":\"I64\",\"shape\":[0,3],\"data_offsets\":[4,4]},"
        "\"k\":{\"shape\":[1,1.0,2e0],\"data_offsets\":[0,4],\"dtype\":\"F16\"},"
        "\"scale\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[8,16]},"
        "\"v\":{\"dtype\":\"F16\",\"shape\":[1,1,2],\"data_offsets\":[20,24]}}        ";
    static const unsigned char DATA[24] = {0x00, 0x3C, 0x00, 0xC0, [20] = 0x01, 0x00, 0xFF, 0x7B};
    File f = file_of(HEADER, sizeof HEADER - 1, DATA, sizeof DATA);
    KvTensors t;
    Error e;
    ck_assert_msg(kvtensors_parse(NAME, f.bytes, f.len, &t, &e) == 0, "%s", e.msg);
    ck_assert(t.tokens == 1 && t.kv_heads == 1 && t.head_dim == 2);
    ck_assert_str_eq(t.dtype, "F16");
    /* 0x3C00 is 1, 0xC000 -2, 0x0001 F16's smallest subnormal 2^-24, 0x7BFF its largest 65504. */
    ck_assert(t.k[0] == 1.0f && t.k[1] == -2.0f && t.v[0] == 0x1p-24f && t.v[1] == 65504.0f);
    kvtensors_free(&t);
    free(f.bytes);
}
END_TEST

/* ------------------------------------------------------------------------
 * Refusals
 */

/* A header with k and v of a dtype and shape, at the offsets given. */
#define KV_HEADER(dtype, shape, k_at, v_at)                                                              \
    "{\"k\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":" k_at "},"                       \
    "\"v\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":" v_at "}}"

static const struct {
    const char *header;         // the header's text
    const char *data;           // the data's bytes; NULL: data_len zeros
    size_t data_len;
    const char *why;            // the message, after "kv.safetensors: "
} REFUSED[] = {
    {"{\"k\":", NULL, 0, "header:1:6: malformed JSON: unexpected end of file"},
    {"{\"k\" 1}", NULL, 0, "header:1:6: malformed JSON near '1}'"},
    {"[1, 2]", NULL, 0, "header:1:1: the header must be a JSON object"},
    {"{\"k\":{}}  \n", NULL, 0, "header:1:6: missing field 'dtype' in this object"},
    {"{\"k\":[]}", NULL, 0, "header:1:6: tensor k: expected an object of dtype, shape and data_offsets"},
    {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"offset\":0}}", NULL, 4,
     "header:1:54: unknown field 'offset'; known fields: dtype, shape, data_offsets"},
    {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", NULL, 4,
     "header:1:30: tensor k: shape: expected whole numbers"},
    {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", NULL, 4,
     "header:1:48: tensor k: data_offsets: expected [begin, end], two whole numbers"},
    {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-1,4]}}", NULL, 4,
     "header:1:48: tensor k: data_offsets: expected [begin, end], two whole numbers"},
    {"{\"__metadata__\":{\"layer\":3}}", NULL, 0, "header:1:26: __metadata__: field 'layer': expected a string"},
    {"{\"__metadata__\":[]}", NULL, 0, "header:1:17: __metadata__ must be a JSON object of strings"},
    /* Where the data lies. */
    {KV_HEADER("F32", "[1,1,4]", "[0,16]", "[16,32]"), NULL, 20,
     "header:1:110: tensor v: data_offsets [16, 32] run past the 20 bytes of data"},
    {KV_HEADER("F32", "[1,1,4]", "[16,0]", "[16,32]"), NULL, 32,
     "header:1:52: tensor k: data_offsets [16, 0] end before they begin"},
    {KV_HEADER("F32", "[1,1,4]", "[0,16]", "[8,24]"), NULL, 24,
     "header:1:64: tensors k and v overlap in the data ([0, 16) and [8, 24))"},
    {"{\"w\":{\"dtype\":\"U8\",\"shape\":[100],\"data_offsets\":[0,100]},"
     "\"x\":{\"dtype\":\"U8\",\"shape\":[10],\"data_offsets\":[10,20]},"
     "\"y\":{\"dtype\":\"U8\",\"shape\":[10],\"data_offsets\":[50,60]}}",
     NULL, 100, "header:1:62: tensors w and x overlap in the data ([0, 100) and [10, 20))"},
    /* Checked against the file's size before anything is allocated: 2^24
     * x 8 x 4096 BF16 elements are 1 TiB. */
    {KV_HEADER("BF16", "[16777216,8,4096]", "[0,1099511627776]", "[1099511627776,2199023255552]"), NULL, 64,
     "header:1:63: tensor k: data_offsets [0, 1099511627776] run past the 64 bytes of data"},
    /* Names. */
    {"{\"v\":{\"dtype\":\"F32\",\"shape\":[1,1,1],\"data_offsets\":[0,4]}}", NULL, 4,
     "header:1:1: no tensor k (kvlab reads tensors k and v)"},
    {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1,1,1],\"data_offsets\":[0,4]}}", NULL, 4,
     "header:1:1: no tensor v (kvlab reads tensors k and v)"},
    {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1,1,1],\"data_offsets\":[0,4]},"
     "\"v\":{\"dtype\":\"F32\",\"shape\":[1,1,1],\"data_offsets\":[4,8]},"
     "\"k\":{\"dtype\":\"F32\",\"shape\":[1,1,1],\"data_offsets\":[0,4]}}",
     NULL, 8, "header:1:116: k appears twice in the header"},
    /* Dtypes and shapes. */
    {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1,1,1],\"data_offsets\":[0,4]},"
     "\"v\":{\"dtype\":\"I8\",\"shape\":[1,1,1],\"data_offsets\":[4,5]}}",
     NULL, 5, "header:1:72: tensor v: dtype I8 is not BF16, F16 or F32"},
    {"{\"k\":{\"dtype\":\"BF16\",\"shape\":[1,1,1],\"data_offsets\":[0,2]},"
     "\"v\":{\"dtype\":\"F16\",\"shape\":[1,1,1],\"data_offsets\":[2,4]}}",
     NULL, 4, "header:1:64: tensors k and v differ in dtype: BF16 and F16"},
    {KV_HEADER("BF16", "[4,8]", "[0,64]", "[64,128]"), NULL, 128,
     "header:1:30: tensor k: shape [4, 8] is not [tokens, kv_heads, head_dim]"},
    {KV_HEADER("BF16", "[1,1,1,1]", "[0,2]", "[2,4]"), NULL, 4,
     "header:1:30: tensor k: shape [1, 1, 1, 1] is not [tokens, kv_heads, head_dim]"},
    {KV_HEADER("BF16", "[2,0,4]", "[0,0]", "[0,0]"), NULL, 0,
     "header:1:30: tensor k: shape [2, 0, 4] has a zero-sized dimension"},
    {KV_HEADER("BF16", "[1,1,4097]", "[0,8194]", "[8194,16388]"), NULL, 16388,
     "header:1:30: tensor k: head_dim 4097 is over 4096, the most kvlab takes"},
    {KV_HEADER("BF16", "[16777217,1,1]", "[0,2]", "[2,4]"), NULL, 4,
     "header:1:30: tensor k: 16777217 tokens are over 16777216, the most kvlab takes"},
    {KV_HEADER("BF16", "[2,8,128]", "[0,99]", "[99,4195]"), NULL, 4195,
     "header:1:6: tensor k: data_offsets [0, 99] do not match shape [2, 8, 128] of BF16 (4096 bytes)"},
    {KV_HEADER("F32", "[1,1152921504606846976,4096]", "[0,0]", "[0,0]"), NULL, 0,
     "header:1:6: tensor k: data_offsets [0, 0] do not match shape [1, 1152921504606846976, 4096] of F32 "
     "(18889465931478580854784 bytes)"},
    {"{\"k\":{\"dtype\":\"F32\",\"shape\":[2,1,2],\"data_offsets\":[0,16]},"
     "\"v\":{\"dtype\":\"F32\",\"shape\":[1,1,4],\"data_offsets\":[16,32]}}",
     NULL, 32, "header:1:87: k and v shapes differ: [2, 1, 2] and [1, 1, 4]"},
    /* Values: F16 0x7C00 is infinity, BF16 0xFFC0 NaN, F32 0xFF800000 -infinity. */
    {KV_HEADER("F16", "[1,1,2]", "[0,4]", "[4,8]"), "\0\0\0\0\0\0\0\x7C", 8,
     "tensor v: element [0, 0, 1] is inf; keys and values must be finite"},
    {KV_HEADER("BF16", "[2,1,2]", "[0,8]", "[8,16]"), "\0\0\0\0\0\0\xC0\xFF", 16,
     "tensor k: element [1, 0, 1] is NaN; keys and values must be finite"},
    {KV_HEADER("F32", "[1,2,1]", "[0,8]", "[8,16]"), "\0\0\0\0\0\0\x80\xFF", 16,
     "tensor k: element [0, 1, 0] is -inf; keys and values must be finite"},
};

/* Refusal `i`, from memory and from a file: its message, whole, with the
 * name or the path in front; an input error, not the machine's; nothing
 * left allocated. */
static void check_refused(const File *f, const char *why, int i)
{
    const char *path = file_write(f);
    for (int from_file = 0; from_file < 2; from_file++) {
        KvTensors t;
        Error e = {{0}, true};
        int rc = from_file ? kvtensors_load(path, &t, &e) : kvtensors_parse(NAME, f->bytes, f->len, &t, &e);
        char want[ERROR_MSG_MAX];
        snprintf(want, sizeof want, "%s: %s", from_file ? path : NAME, why);
        ck_assert_msg(rc == -1, "case %d read", i);
        ck_assert_msg(strcmp(e.msg, want) == 0, "case %d:\n want '%s'\n  got '%s'", i, want, e.msg);
        ck_assert_msg(!e.runtime, "case %d: an input error reported as the machine's", i);
        ck_assert_msg(t.k == NULL && t.v == NULL && t.tokens == 0, "case %d left memory", i);
    }
    unlink(path);
}

/* Every fault of the header, the data's place or the values is refused
 * with the file's name, the header's line and column where it lies there,
 * and what was wrong. */
START_TEST(faults_refused)
{
    int i = _i;
    size_t len = strlen(REFUSED[i].header);
    File f = file_of(REFUSED[i].header, len, REFUSED[i].data, REFUSED[i].data_len);
    check_refused(&f, REFUSED[i].why, i);
    free(f.bytes);
}
END_TEST

/* Faults of the file as a whole: too short for the header's length, a
 * length past the end or over the limit, a NUL in the header; and what is
 * not a regular file, or not there. */
START_TEST(file_faults_refused)
{
    File f = file_of("{}", 2, NULL, 0);
    f.len = 7;
    check_refused(&f, "file is 7 bytes, too short for a safetensors header's 8-byte length", 0);
    put_le(f.bytes, 9000000000000000000ull, 8);
    f.len = 10;
    check_refused(&f, "header length 9000000000000000000 is larger than the file (10 bytes)", 1);
    put_le(f.bytes, 3, 8);
    check_refused(&f, "header length 3 is larger than the file (10 bytes)", 2);
    free(f.bytes);

    size_t big = KVTENSORS_HEADER_MAX + 1;
    char *header = malloc(big);
    memset(header, ' ', big);
    header[0] = '{', header[1] = '}';
    f = file_of(header, big, NULL, 0);
    check_refused(&f, "header length 1048577 is over the 1048576 bytes kvlab reads", 3);
    free(f.bytes);
    /* At the limit it is read, and finds no tensors. */
    f = file_of(header, big - 1, NULL, 0);
    check_refused(&f, "header:1:1: no tensor k (kvlab reads tensors k and v)", 4);
    free(f.bytes);
    free(header);

    f = file_of("{\"k\0\":1}", 8, NULL, 0);
    check_refused(&f, "header:1:4: NUL byte in a text file", 5);
    free(f.bytes);

    KvTensors t;
    Error e;
    ck_assert_int_eq(kvtensors_load("/tmp", &t, &e), -1);
    ck_assert_str_eq(e.msg, "/tmp: not a regular file");
    ck_assert_int_eq(kvtensors_load("/nonexistent/kv.safetensors", &t, &e), -1);
    ck_assert_str_eq(e.msg, "/nonexistent/kv.safetensors: cannot open: No such file or directory");
    ck_assert(t.k == NULL && t.v == NULL);
}
END_TEST

/* A non-finite element anywhere, in any dtype, in k or v, in any chunk the
 * reader takes, is refused naming the tensor and its [token, head,
 * channel]. Seeded random places in shapes larger than a chunk. */
START_TEST(non_finite_named)
{
    Rng r = {test_seed() ^ 0x1F1A17E};
    for (size_t d = 0; d < N_OF(DTYPES); d++) {
        for (int trial = 0; trial < 4; trial++) {
            const Dtype *dt = &DTYPES[d];
            size_t tokens = (size_t)rng_range(&r, 1000, 3000), heads = 3, dim = 128, n = tokens * heads * dim;
            float *want_k, *want_v;
            File f = random_kv(&r, dt, tokens, heads, dim, &want_k, &want_v);
            bool in_v = rng_range(&r, 0, 1);
            size_t at = (size_t)rng_range(&r, 0, n - 1);
            static const char *const WHAT[] = {"inf", "-inf", "NaN"};
            int what = (int)rng_range(&r, 0, 2);
            uint32_t sign = dt->bytes == 4 ? 0x80000000u : 0x8000u, quiet = dt->exp_mask == 0x7C00 ? 0x200 : 0x40;
            if (dt->bytes == 4)
                quiet <<= 16;
            uint32_t bits = dt->exp_mask | (what == 1 ? sign : 0) | (what == 2 ? quiet : 0);
            /* random_kv puts v's data first, then 6 bytes, then k's. */
            size_t data = f.len - (n * dt->bytes * 2 + 9), offset = in_v ? 0 : n * dt->bytes + 6;
            put_le(f.bytes + data + offset + at * dt->bytes, bits, dt->bytes);
            char why[256];
            snprintf(why, sizeof why, "tensor %s: element [%zu, %zu, %zu] is %s; keys and values must be finite",
                     in_v ? "v" : "k", at / (heads * dim), at / dim % heads, at % dim, WHAT[what]);
            KvTensors t;
            Error e;
            ck_assert_int_eq(kvtensors_parse(NAME, f.bytes, f.len, &t, &e), -1);
            ck_assert_seeded(strcmp(e.msg + strlen(NAME ": "), why) == 0, "%s: want '%s', got '%s'", dt->name, why,
                             e.msg);
            free(f.bytes);
            free(want_k);
            free(want_v);
        }
    }
}
END_TEST

/* A name given twice is found among thousands of entries, wherever it
 * is (the header's check is not limited to neighbours). */
START_TEST(twice_among_many)
{
    Rng r = {test_seed() ^ 0x7D1CE};
    size_t n = 5000, twice = (size_t)rng_range(&r, 0, n - 1), cap = 80 * (n + 4);
    char *h = malloc(cap);
    static const char KV[] = KV_HEADER("F32", "[1,1,1]", "[0,4]", "[4,8]");
    size_t len = (size_t)snprintf(h, cap, "%.*s", (int)sizeof KV - 2, KV);     // without its closing brace
    for (size_t i = 0; i <= n; i++)
        len += (size_t)snprintf(h + len, cap - len, ",\"t%zu\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[8,8]}",
                                i == n ? twice : i);
    len += (size_t)snprintf(h + len, cap - len, "}");
    File f = file_of(h, len, NULL, 8);
    KvTensors t;
    Error e;
    ck_assert_int_eq(kvtensors_parse(NAME, f.bytes, f.len, &t, &e), -1);
    char want[64];
    snprintf(want, sizeof want, ": t%zu appears twice in the header", twice);
    ck_assert_seeded(strstr(e.msg, want) != NULL, "%s", e.msg);
    free(h);
    free(f.bytes);
}
END_TEST

Suite *suite_kvtensors(void)
{
    Suite *s = suite_create("kvtensors");
    TCase *t = tcase_create("files");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, elements_read_exactly);
    tcase_add_test(t, format_variants_read);
    tcase_add_loop_test(t, faults_refused, 0, (int)N_OF(REFUSED));
    tcase_add_test(t, file_faults_refused);
    tcase_add_test(t, non_finite_named);
    tcase_add_test(t, twice_among_many);
    suite_add_tcase(s, t);
    return s;
}
