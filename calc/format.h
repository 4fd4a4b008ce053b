/* format.h - the KV-cache storage formats and their exact byte accounting.
 *
 * One table holds every format (format.c); adding a format is adding a row.
 * Bytes are counted per token-head vector of D elements (one token's key or
 * value for one KV head):
 *
 *   vector bytes = ceil(D x payload_bits / 8)            packed payload
 *                + ceil(D / group) x group_meta_bytes    block scales
 *                + vector_meta_bytes                     per-vector scale
 *
 * which reproduces the table of DESIGN.md's byte accounting for every D
 * that is a multiple of the group size (all the shipped models). Blocks
 * are counted along the head dimension; KIVI groups keys along tokens
 * instead, which gives the same count whenever the token count is a
 * multiple of 32.
 *
 * Per-tensor scales (one FP32 per layer for K and for V) are not part of any
 * vector; they are reported apart as tensor_scale_bytes, counted once per
 * cache, and not charged to a KV pool: engines keep them with the model's
 * parameters (vLLM's k_scale and v_scale).
 */
#ifndef KVLAB_FORMAT_H
#define KVLAB_FORMAT_H

#include "checked.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const char *id;             // "fp8_e4m3": the name on the command line
    const char *name;           // "FP8 E4M3FN": the name in tables
    unsigned payload_bits;      // bits per element
    unsigned group;             // elements sharing block metadata; 0 = none
    unsigned group_meta_bytes;  // bytes of metadata per group
    unsigned vector_meta_bytes; // bytes of metadata per token-head vector
    unsigned tensor_scale_bytes;// bytes per layer per K or V tensor (FP32 = 4)
    const char *metadata;       // the metadata in words, for `kvlab formats`
    const char *note;           // one line on what the format is for
} Format;

size_t format_count(void);
const Format *format_at(size_t i);
/* Case-insensitive; also accepts the aliases in format.c ("fp8", "e4m3"). */
const Format *format_by_id(const char *id);
const Format *format_bf16(void);

/* Bytes of one token-head vector of d elements; exact. */
u128 format_vector_bytes(const Format *f, unsigned d);
/* Only the packed payload of such a vector, without any metadata. */
u128 format_payload_bytes(const Format *f, unsigned d);
/* Bytes per element for head dimension d, metadata included: vector / d. */
Q format_bytes_per_element(const Format *f, unsigned d);
/* 16-bit formats store values as they are: no quantization, no scales. */
bool format_is_full_precision(const Format *f);

/* "bf16, fp16, fp8_e4m3, ..." for error messages. */
const char *format_id_list(char *buf, size_t n);

#endif
