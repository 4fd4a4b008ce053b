/* quant.c - see quant.h.
 *
 * A granularity becomes a list of groups, each a strided run of elements
 * (offset, length, stride); a scheme is a function that quantizes one such
 * run. Cost: two passes over each group (range, then quantize), O(N).
 */
#include "quant.h"

#include "quotient.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Names
 */

static const struct {
    const char *name;
    GranKind kind;
    bool sized;
} GRANS[] = {
    {"tensor", GRAN_TENSOR, false},          {"token", GRAN_TOKEN, false},
    {"channel", GRAN_CHANNEL, false},        {"group", GRAN_GROUP_CHANNELS, true},
    {"tgroup", GRAN_GROUP_TOKENS, true},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

int granularity_parse(const char *s, Granularity *g, Error *e)
{
    const char *colon = strchr(s, ':');
    size_t len = colon ? (size_t)(colon - s) : strlen(s);
    for (size_t i = 0; i < N_OF(GRANS); i++) {
        if (strlen(GRANS[i].name) != len || strncmp(GRANS[i].name, s, len) != 0)
            continue;
        g->kind = GRANS[i].kind;
        g->size = 0;
        if (GRANS[i].sized != (colon != NULL))
            break;
        uint64_t v;
        if (colon && units_parse_count(colon + 1, 1, 1u << 20, &v, e))   // as --tokens reads 1e3
            return error_prefix(e, "granularity '%s': the group size", s);
        if (colon)
            g->size = v;
        return 0;
    }
    return error_set(e, "unknown granularity '%s'; expected tensor, token, channel, group:G "
                        "(G channels of a token) or tgroup:G (G tokens of a channel)", s);
}

const char *granularity_str(const Granularity *g, char *buf, size_t n)
{
    for (size_t i = 0; i < N_OF(GRANS); i++)
        if (GRANS[i].kind == g->kind) {
            if (GRANS[i].sized)
                snprintf(buf, n, "%s:%zu", GRANS[i].name, g->size);
            else
                snprintf(buf, n, "%s", GRANS[i].name);
        }
    return buf;
}

static const char *const SCHEMES[] = {
    [SCHEME_INT_SYM] = "int-sym", [SCHEME_INT_MIN] = "int-min", [SCHEME_INT_ZP] = "int-zp",
    [SCHEME_FP8] = "fp8",         [SCHEME_NVFP4] = "nvfp4",     [SCHEME_MXFP4] = "mxfp4",
};

int scheme_parse(const char *s, Scheme *out, Error *e)
{
    for (size_t i = 0; i < N_OF(SCHEMES); i++)
        if (strcmp(SCHEMES[i], s) == 0) {
            *out = (Scheme)i;
            return 0;
        }
    return error_set(e, "unknown scheme '%s'; expected int-sym, int-min, int-zp, fp8, nvfp4 "
                        "or mxfp4", s);
}

const char *scheme_str(Scheme s)
{
    return SCHEMES[s];
}

void quant_spec_init(QuantSpec *q)
{
    memset(q, 0, sizeof *q);
    q->scheme = SCHEME_INT_MIN;
    q->bits = QUANT_BITS_DEFAULT;
    q->gran.kind = GRAN_TOKEN;
    q->fp8 = &MF_E4M3;
    q->saturate = true;
}

int quant_spec_check(const QuantSpec *q, Error *e)
{
    bool integer = q->scheme <= SCHEME_INT_ZP;
    if (integer && (q->bits < QUANT_BITS_MIN || q->bits > QUANT_BITS_MAX))
        return error_set(e, "integer quantization takes %d to %d bits, not %u", QUANT_BITS_MIN,
                         QUANT_BITS_MAX, q->bits);
    if ((q->gran.kind == GRAN_GROUP_CHANNELS || q->gran.kind == GRAN_GROUP_TOKENS) && !q->gran.size)
        return error_set(e, "a group granularity needs a size");
    if (q->scheme == SCHEME_FP8 && !(q->static_scale >= 0 && isfinite(q->static_scale)))
        return error_set(e, "the static FP8 scale must be a positive number");
    return 0;
}

/* ------------------------------------------------------------------------
 * One group: n elements x[0], x[stride], ... written to out likewise.
 */

static double clamp(double v, double lo, double hi)
{
    return v > hi ? hi : (v < lo ? lo : v);
}

static void range_of(const float *x, size_t n, size_t stride, float *lo, float *hi)
{
    float a = x[0], b = x[0];
    for (size_t i = 1; i < n; i++) {
        float v = x[i * stride];
        a = v < a ? v : a;
        b = v > b ? v : b;
    }
    *lo = a;
    *hi = b;
}

static float amax_of(const float *x, size_t n, size_t stride)
{
    float m = 0;
    for (size_t i = 0; i < n; i++) {
        float v = fabsf(x[i * stride]);
        m = v > m ? v : m;
    }
    return m;
}

/* An integer scheme's grid over one group, as quant.h writes it: a value's
 * code is clamp(rint(quotient) + z, lo, hi), the quotient rounded exactly
 * (quotient.h), and it reads back as base + (code - z) s, computed in double
 * and rounded once to float. No scale is too small (a subnormal range
 * quantizes like any other) nor a range too wide (max - min up to
 * 2 FLT_MAX). */
typedef struct {
    Quotient q;                 // x / s (int-sym, int-zp) or (x - min) / s (int-min)
    double z;                   // int-zp's zero point; 0 for the others
    double lo, hi;              // the codes
    double base, s;             // what code z reads back as, and the step
    bool flat;                  // every value the same (int-min) or 0: s = 0, all read back as base
} IntGrid;

static IntGrid grid_int_sym(unsigned bits, const float *x, size_t n, size_t stride)
{
    const unsigned qmax = (1u << (bits - 1)) - 1;
    const float amax = amax_of(x, n, stride);
    return (IntGrid){quotient_of(qmax, 0, amax, 0), 0, -(double)qmax, qmax, 0, (double)amax / qmax,
                     amax == 0};
}

static IntGrid grid_int_min(unsigned bits, const float *x, size_t n, size_t stride)
{
    const unsigned top = (1u << bits) - 1;
    float lo, hi;
    range_of(x, n, stride, &lo, &hi);
    return (IntGrid){quotient_of(top, lo, hi, lo), 0, 0, top, lo, ((double)hi - lo) / top, lo == hi};
}

static IntGrid grid_int_zp(unsigned bits, const float *x, size_t n, size_t stride)
{
    const unsigned top = (1u << bits) - 1;
    float lo, hi;
    range_of(x, n, stride, &lo, &hi);
    lo = lo < 0 ? lo : 0;               // widen to hold zero exactly
    hi = hi > 0 ? hi : 0;
    IntGrid g = {quotient_of(top, 0, hi, lo), 0, 0, top, 0, ((double)hi - lo) / top, lo == hi};
    if (!g.flat) {
        Quotient zero = quotient_of(top, lo, hi, lo);    // z = rint(-min / s)
        g.z = clamp(quotient_rint(&zero, 0), 0, top);
    }
    return g;
}

typedef IntGrid (*GridFn)(unsigned bits, const float *x, size_t n, size_t stride);

static const GridFn INT_GRIDS[] = {
    [SCHEME_INT_SYM] = grid_int_sym,
    [SCHEME_INT_MIN] = grid_int_min,
    [SCHEME_INT_ZP] = grid_int_zp,
};

static void group_int(const QuantSpec *q, const float *x, size_t n, size_t stride, float *out)
{
    const IntGrid g = INT_GRIDS[q->scheme](q->bits, x, n, stride);
    if (g.flat) {
        for (size_t i = 0; i < n; i++)
            out[i * stride] = (float)g.base;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double v = quotient_estimate(&g.q, x[i * stride]), k = round_half_even(v);
        if (quotient_near_half(v, k))   // rare: within the estimate's error of a half
            k = quotient_decide(&g.q, x[i * stride], v);
        out[i * stride] = (float)(g.base + (clamp(k + g.z, g.lo, g.hi) - g.z) * g.s);
    }
}

static void group_fp8(const QuantSpec *q, const float *x, size_t n, size_t stride, float *out)
{
    float s = q->static_scale ? q->static_scale : amax_of(x, n, stride) / q->fp8->max;
    if (s == 0) {
        for (size_t i = 0; i < n; i++)
            out[i * stride] = 0;
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i * stride] = minifloat_round(q->fp8, x[i * stride] / s, q->saturate) * s;
}

typedef void (*GroupFn)(const QuantSpec *, const float *, size_t, size_t, float *);

static const GroupFn GROUP_FNS[] = {
    [SCHEME_INT_SYM] = group_int,
    [SCHEME_INT_MIN] = group_int,
    [SCHEME_INT_ZP] = group_int,
    [SCHEME_FP8] = group_fp8,
};

/* ------------------------------------------------------------------------
 * Microscaled FP4: blocks along the channels of each token.
 */

#define NVFP4_BLOCK 16
#define MXFP4_BLOCK 32

static void nvfp4_ref(const float *x, size_t rows, size_t cols, float *out)
{
    /* Per-tensor scale so that the largest block scale lands on E4M3's 448:
     * s_t = amax / (448 x 6). */
    float amax = amax_of(x, rows * cols, 1);
    float st = amax > 0 ? amax / (MF_E4M3.max * MF_E2M1.max) : 1.0f;
    for (size_t r = 0; r < rows; r++)
        for (size_t c0 = 0; c0 < cols; c0 += NVFP4_BLOCK) {
            size_t n = cols - c0 < NVFP4_BLOCK ? cols - c0 : NVFP4_BLOCK;
            const float *xb = x + r * cols + c0;
            float *ob = out + r * cols + c0;
            float sb = minifloat_round(&MF_E4M3, amax_of(xb, n, 1) / MF_E2M1.max / st, true);
            float s = sb * st;
            for (size_t i = 0; i < n; i++)
                ob[i] = s > 0 ? minifloat_round(&MF_E2M1, xb[i] / s, true) * s : 0;
        }
}

static void mxfp4_ref(const float *x, size_t rows, size_t cols, float *out)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c0 = 0; c0 < cols; c0 += MXFP4_BLOCK) {
            size_t n = cols - c0 < MXFP4_BLOCK ? cols - c0 : MXFP4_BLOCK;
            const float *xb = x + r * cols + c0;
            float *ob = out + r * cols + c0;
            float amax = amax_of(xb, n, 1);
            /* Shared exponent: floor(log2 amax) - emax of E2M1 (2). */
            int e = amax > 0 ? ilogbf(amax) - ilogbf(MF_E2M1.max) : -E8M0_BIAS;
            float s = e8m0_decode(e8m0_from_exponent(e));
            for (size_t i = 0; i < n; i++)
                ob[i] = minifloat_round(&MF_E2M1, xb[i] / s, true) * s;
        }
}

/* ------------------------------------------------------------------------
 * Matrices
 */

int quantize_ref(const QuantSpec *q, const float *x, size_t rows, size_t cols, float *out,
                 Error *e)
{
    if (quant_spec_check(q, e))
        return -1;
    if (!rows || !cols)
        return 0;
    if (q->scheme == SCHEME_NVFP4) {
        nvfp4_ref(x, rows, cols, out);
        return 0;
    }
    if (q->scheme == SCHEME_MXFP4) {
        mxfp4_ref(x, rows, cols, out);
        return 0;
    }
    GroupFn fn = GROUP_FNS[q->scheme];
    Granularity g = q->gran;
    if (q->scheme == SCHEME_FP8 && q->static_scale)
        g.kind = GRAN_TENSOR;               // a static scale is one per tensor
    switch (g.kind) {
    case GRAN_TENSOR:
        fn(q, x, rows * cols, 1, out);
        break;
    case GRAN_TOKEN:
        for (size_t r = 0; r < rows; r++)
            fn(q, x + r * cols, cols, 1, out + r * cols);
        break;
    case GRAN_CHANNEL:
        for (size_t c = 0; c < cols; c++)
            fn(q, x + c, rows, cols, out + c);
        break;
    case GRAN_GROUP_CHANNELS:
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c += g.size) {
                size_t n = cols - c < g.size ? cols - c : g.size;
                fn(q, x + r * cols + c, n, 1, out + r * cols + c);
            }
        break;
    case GRAN_GROUP_TOKENS:
        for (size_t c = 0; c < cols; c++)
            for (size_t r = 0; r < rows; r += g.size) {
                size_t n = rows - r < g.size ? rows - r : g.size;
                fn(q, x + r * cols + c, n, cols, out + r * cols + c);
            }
        break;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * KIVI
 */

static void bf16_rows(const float *x, size_t from, size_t to, size_t cols, float *out)
{
    for (size_t i = from * cols; i < to * cols; i++)
        out[i] = bf16_round(x[i]);
}

int kivi_ref(const KiviSpec *s, const float *k, const float *v, size_t tokens, size_t head_dim,
             float *k_out, float *v_out, Error *e)
{
    if (s->bits < QUANT_BITS_MIN || s->bits > QUANT_BITS_MAX || !s->group)
        return error_set(e, "KIVI takes %d to %d bits and a group size of at least 1", QUANT_BITS_MIN,
                         QUANT_BITS_MAX);
    size_t old = tokens > s->residual ? tokens - s->residual : 0;   // tokens outside the window
    size_t k_q = old / s->group * s->group;     // keys: whole groups of tokens only
    QuantSpec q;
    quant_spec_init(&q);
    q.scheme = SCHEME_INT_MIN;
    q.bits = s->bits;
    q.gran = (Granularity){GRAN_GROUP_TOKENS, s->group};
    if (quantize_ref(&q, k, k_q, head_dim, k_out, e))
        return -1;
    bf16_rows(k, k_q, tokens, head_dim, k_out);
    q.gran = (Granularity){GRAN_GROUP_CHANNELS, s->group};
    if (quantize_ref(&q, v, old, head_dim, v_out, e))
        return -1;
    bf16_rows(v, old, tokens, head_dim, v_out);
    return 0;
}
