/* quant.h - reference quantizers for keys and values.
 *
 * Every quantizer here takes a matrix X of shape (tokens, channels), row
 * major, and writes what a kernel would read back after storing it: the
 * dequantized matrix. These `_ref` functions are the definition that the
 * CPU and GPU kernels are tested against.
 *
 * Schemes (b bits, QUANT_BITS_MIN to QUANT_BITS_MAX for the integer ones):
 *   int-sym    q = clamp(rint(x / s), -Q, Q), s = amax / Q, Q = 2^(b-1) - 1
 *   int-min    x^ = min + s clamp(rint((x - min) / s), 0, 2^b - 1),
 *              s = (max - min) / (2^b - 1): a real-valued offset, as KIVI
 *              and seed 001's worked example use
 *   int-zp     q = clamp(rint(x / s) + z, 0, 2^b - 1), x^ = (q - z) s,
 *              z = rint(-min / s): an integer zero point, the range widened
 *              to hold 0, so zero is stored exactly
 *              A code is the true quotient (x - min) / s = (x - min)
 *              (2^b - 1) / (max - min) (or x / s) rounded once, an exact
 *              half to the even code, whatever the step (quotient.h); s is
 *              computed in double for the dequantization. s = 0 only where
 *              every value is the same (int-min) or 0 (the others), and
 *              then every code is 0 and the group comes back exactly.
 *   fp8        x^ = s fp8(x / s): s = amax / 448 (E4M3) per group when
 *              dynamic, or one calibrated s for the tensor when static
 *   nvfp4      E2M1 values in blocks of 16 channels; each block's scale is
 *              E4M3 and a per-tensor FP32 scale sits above them
 *   mxfp4      E2M1 values in blocks of 32 channels; each block's scale is
 *              E8M0, 2^(floor(log2 amax) - 2) (the OCP MX rule)
 *
 * Granularity says which elements share a scale: the whole tensor, a token
 * (row), a channel (column), a group of G channels within a token, or a
 * group of G tokens within a channel. A last group may be shorter.
 */
#ifndef KVLAB_QUANT_H
#define KVLAB_QUANT_H

#include "error.h"
#include "minifloat.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    GRAN_TENSOR,
    GRAN_TOKEN,
    GRAN_CHANNEL,
    GRAN_GROUP_CHANNELS,        // G consecutive channels of one token
    GRAN_GROUP_TOKENS,          // G consecutive tokens of one channel
} GranKind;

typedef struct {
    GranKind kind;
    size_t size;                // G for the group kinds
} Granularity;

/* "tensor", "token", "channel", "group:G" (channels), "tgroup:G" (tokens). */
int granularity_parse(const char *s, Granularity *g, Error *e);
const char *granularity_str(const Granularity *g, char *buf, size_t n);

typedef enum {
    SCHEME_INT_SYM,
    SCHEME_INT_MIN,
    SCHEME_INT_ZP,
    SCHEME_FP8,
    SCHEME_NVFP4,
    SCHEME_MXFP4,
} Scheme;

/* "int-sym", "int-min", "int-zp", "fp8", "nvfp4", "mxfp4". */
int scheme_parse(const char *s, Scheme *out, Error *e);
const char *scheme_str(Scheme s);

/* The integer schemes' bits (and KIVI's): every width in between works. */
#define QUANT_BITS_MIN 2
#define QUANT_BITS_MAX 8
#define QUANT_BITS_DEFAULT 4

typedef struct {
    Scheme scheme;
    unsigned bits;              // integer schemes: QUANT_BITS_MIN to QUANT_BITS_MAX
    Granularity gran;           // ignored by nvfp4 and mxfp4 (fixed blocks)
    const Minifloat *fp8;       // fp8: &MF_E4M3 or &MF_E5M2
    float static_scale;         // fp8: one scale for the tensor; 0 = dynamic
    bool saturate;              // fp8: clamp instead of NaN / Inf
} QuantSpec;

/* A spec with defaults: int-min, 4 bits, per token, E4M3, saturating. */
void quant_spec_init(QuantSpec *q);
/* Checks bits, group sizes and the static scale. */
int quant_spec_check(const QuantSpec *q, Error *e);

/* out = dequant(quant(x)); x and out are (rows, cols), may be the same. */
int quantize_ref(const QuantSpec *q, const float *x, size_t rows, size_t cols, float *out,
                 Error *e);

/* ------------------------------------------------------------------------
 * KIVI: keys per channel in groups of G tokens, values per token in groups
 * of G channels, both int-min with `bits`; the most recent `residual`
 * tokens, and for keys the tokens that do not fill a whole group of G,
 * stay in 16-bit (BF16). K and V are (tokens, head_dim).
 */
typedef struct {
    unsigned bits;              // 2 or 4 in the paper
    size_t group;               // 32
    size_t residual;            // R, e.g. 128
} KiviSpec;
/* The paper's KIVI-2: 2 bits in groups of 32. */
#define KIVI_BITS_DEFAULT 2
#define KIVI_GROUP_DEFAULT 32

int kivi_ref(const KiviSpec *s, const float *k, const float *v, size_t tokens, size_t head_dim,
             float *k_out, float *v_out, Error *e);

#endif
