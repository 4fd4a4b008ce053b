/* format.c - the format table. See format.h for how bytes are counted. */
#include "format.h"

#include "ascii.h"

#include <stdio.h>
#include <string.h>

static const Format FORMATS[] = {
    /* id          name           bits grp gmeta vmeta tscale */
    {"bf16",     "BF16",          16,  0,  0,   0,    0,
     "none", "16-bit brain float: the unquantized baseline"},
    {"fp16",     "FP16",          16,  0,  0,   0,    0,
     "none", "16-bit IEEE half: same size as BF16, narrower range"},
    {"fp8_e4m3", "FP8 E4M3FN",    8,   0,  0,   0,    4,
     "FP32 scale per tensor", "8-bit float, 3 mantissa bits, max 448: the usual FP8 KV format"},
    {"fp8_e5m2", "FP8 E5M2",      8,   0,  0,   0,    4,
     "FP32 scale per tensor", "8-bit float, 2 mantissa bits, wider range, coarser steps"},
    {"int8",     "INT8",          8,   0,  0,   2,    0,
     "FP16 scale per token-head vector", "symmetric 8-bit integers, one scale per vector of D"},
    {"int4",     "INT4",          4,   32, 4,   0,    0,
     "FP16 scale + FP16 zero per 32", "asymmetric 4-bit integers in groups of 32 (KIVI layout)"},
    {"int2",     "INT2",          2,   32, 4,   0,    0,
     "FP16 scale + FP16 zero per 32", "asymmetric 2-bit integers in groups of 32 (KIVI-2)"},
    {"nvfp4",    "NVFP4",         4,   16, 1,   0,    4,
     "E4M3 scale per 16 + FP32 per tensor", "E2M1 values, two-level scales (NVIDIA Blackwell)"},
    {"mxfp4",    "MXFP4",         4,   32, 1,   0,    0,
     "E8M0 scale per 32", "E2M1 values, power-of-two scale per 32 (OCP MX)"},
};

#define N_FORMATS (sizeof FORMATS / sizeof FORMATS[0])

/* Other spellings people use for the same formats. */
static const struct {
    const char *alias, *id;
} ALIASES[] = {
    {"fp8", "fp8_e4m3"}, {"e4m3", "fp8_e4m3"}, {"fp8e4m3", "fp8_e4m3"},
    {"e5m2", "fp8_e5m2"}, {"fp8e5m2", "fp8_e5m2"},
};

size_t format_count(void)
{
    return N_FORMATS;
}

const Format *format_at(size_t i)
{
    return i < N_FORMATS ? &FORMATS[i] : NULL;
}

const Format *format_by_id(const char *id)
{
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (ascii_ieq(ALIASES[i].alias, id))
            id = ALIASES[i].id;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (ascii_ieq(FORMATS[i].id, id))
            return &FORMATS[i];
    return NULL;
}

const Format *format_bf16(void)
{
    return &FORMATS[0];
}

u128 format_payload_bytes(const Format *f, unsigned d)
{
    return ((u128)d * f->payload_bits + 7) / 8;
}

u128 format_vector_bytes(const Format *f, unsigned d)
{
    u128 groups = f->group ? ((u128)d + f->group - 1) / f->group : 0;
    return format_payload_bytes(f, d) + groups * f->group_meta_bytes + f->vector_meta_bytes;
}

Q format_bytes_per_element(const Format *f, unsigned d)
{
    return q_make(format_vector_bytes(f, d), d);
}

bool format_is_full_precision(const Format *f)
{
    return f->payload_bits >= 16;
}

const char *format_id_list(char *buf, size_t n)
{
    buf[0] = '\0';
    for (size_t i = 0; i < N_FORMATS; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", i ? ", " : "", FORMATS[i].id);
    }
    return buf;
}
