/* footprint.h - how many bytes a KV cache holds.
 *
 * Elements: N = 2 x L x H_kv x D x S x B (K and V, layers, KV heads, head
 * dimension, tokens, sequences), with two refinements a real engine makes:
 * a sliding-window layer keeps only min(S, window) tokens, and a KIVI-style
 * residual window keeps the most recent R tokens of every layer in 16-bit.
 * Layers can also be kept in BF16 by choice (sensitive first layers) or by
 * kind (all sliding-window layers), as vLLM's --kv-cache-dtype-skip-layers
 * does.
 *
 * bytes = sum over layers of 2 x H_kv x (quantized tokens x vector bytes
 *         + residual tokens x 16-bit vector bytes), per sequence, x B;
 * vector bytes come from format.h. Everything is exact and checked.
 */
#ifndef KVLAB_FOOTPRINT_H
#define KVLAB_FOOTPRINT_H

#include "checked.h"
#include "error.h"
#include "format.h"
#include "model.h"

#include <stddef.h>
#include <stdint.h>

#define KV_OVERRIDES_MAX 256

typedef struct {
    uint64_t residual;          // most recent tokens kept in 16-bit (KIVI); 0 = none
    bool head_scales;           // tensor scales per KV head instead of per layer
    bool bf16_sliding;          // sliding-window layers stay in BF16
    size_t n_bf16_layers;
    uint64_t bf16_layers[KV_OVERRIDES_MAX];  // layer indices kept in BF16
} KvOptions;

typedef struct {
    u128 elements;              // K and V elements stored, all sequences
    u128 bytes_per_sequence;    // payload + block/vector metadata, one sequence
    u128 bytes;                 // bytes_per_sequence x batch
    u128 payload_bytes;         // bytes without any metadata, all sequences
    u128 tensor_scale_bytes;    // per-tensor (or per-head) scales, once per cache
    uint64_t quantized_layers;  // layers stored in the format, not in BF16
} Footprint;

/* Checks o against shape s: every layer kept in BF16 exists, and none is
 * listed twice. */
int kv_options_check(const Shape *s, const KvOptions *o, Error *e);

/* Fills out for format f at context S and batch B; -1 on a bad option
 * (kv_options_check) or an overflow. */
int footprint(const Shape *s, const Format *f, const KvOptions *o, uint64_t context,
              uint64_t batch, Footprint *out, Error *e);

#endif
