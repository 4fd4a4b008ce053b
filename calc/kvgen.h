/* kvgen.h - a seeded synthetic KV cache for one attention head.
 *
 * Real caches have structure that decides which quantization works, and the
 * generator reproduces the published observations, each with a parameter:
 *
 *   outlier key channels   a few channels per head (1 to 2 is typical) hold
 *                          keys up to ~20x larger than the rest, with the
 *                          same sign at every position (KIVI, KVQuant), in
 *                          the low-frequency RoPE dimensions (the last
 *                          quarter of each half), where RoPE turns them
 *                          slowly
 *   query                  looks mostly at the ordinary channels: its
 *                          weight on outlier channels is small
 *   attention sinks        the first tokens draw attention whatever the
 *                          query (StreamingLLM): their keys lean toward
 *                          the query, raising their logit by a few units
 *                          (a third of the attention with the defaults),
 *                          and their values are small
 *   value outliers         a few tokens (delimiters, line breaks) carry
 *                          values with large norms across all channels
 *
 * Keys are generated before RoPE; experiments apply RoPE themselves
 * (rotate.h). Every parameter is visible in `kvlab quant --help`.
 */
#ifndef KVLAB_KVGEN_H
#define KVLAB_KVGEN_H

#define KVGEN_MAX_DIM 4096
#define KVGEN_TOKENS_MAX (1u << 24)
/* The head generated unless told otherwise (kvgen_defaults), by `kvlab
 * quant` and the lab alike, so that their figures agree. */
#define KVGEN_SEED_DEFAULT 1
#define KVGEN_TOKENS_DEFAULT 256
#define KVGEN_HEAD_DIM_DEFAULT 128
#define KVGEN_OUTLIER_CHANNELS_DEFAULT 2
#define KVGEN_OUTLIER_SCALE_DEFAULT 20
#define KVGEN_QUERY_OUTLIER_WEIGHT_DEFAULT 0.05
#define KVGEN_SINKS_DEFAULT 1
#define KVGEN_SINK_STRENGTH_DEFAULT 5
#define KVGEN_VALUE_OUTLIERS_DEFAULT 2
#define KVGEN_VALUE_OUTLIER_SCALE_DEFAULT 8

#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t seed;
    size_t tokens;              // T
    size_t head_dim;            // D
    unsigned outlier_channels;  // per head
    float outlier_scale;        // outlier magnitude over ordinary keys
    float query_outlier_weight; // query weight on outlier channels
    unsigned sinks;             // attention-sink tokens at the start
    float sink_strength;        // logits a sink's score stands above the rest
    unsigned value_outliers;    // tokens with large values
    float value_outlier_scale;  // their norm over ordinary values
    double rope_theta;          // when RoPE will rotate keys at 0..T-1 and the query
                                // at T, sinks lean toward the query as rotated; 0 = none
} KvGenParams;

void kvgen_defaults(KvGenParams *p);
int kvgen_check(const KvGenParams *p, Error *e);

/* k, v: (tokens, head_dim); q: (head_dim). Same parameters, same output. */
int kvgen(const KvGenParams *p, float *k, float *v, float *q, Error *e);

/* kvgen in three steps, for callers that write the rows on several
 * threads: the plan (the parameters checked, the outlier channels and
 * signs, the query into q), the rows t0 .. t1 - 1 of k and v (each row
 * from its own place in the seeded stream: rows written in pieces, in any
 * order, are kvgen's), then the sinks and value outliers once every row
 * is written. */
typedef struct {
    KvGenParams p;
    bool is_out[KVGEN_MAX_DIM];
    float sign[KVGEN_MAX_DIM];
    double qn;                  // |q|
    uint64_t row0;              // the stream's state where row 0 starts
} KvGenPlan;

int kvgen_plan(const KvGenParams *p, KvGenPlan *plan, float *q, Error *e);
void kvgen_rows(const KvGenPlan *plan, size_t t0, size_t t1, float *k, float *v);
int kvgen_finish(const KvGenPlan *plan, float *k, float *v, const float *q, Error *e);

/* The channels chosen as outliers (at most `max`), for display. */
size_t kvgen_outlier_channels(const KvGenParams *p, size_t *out, size_t max);

/* Seed 001's worked example: 4 tokens x 4 channels of keys (channel index
 * 2 is the outlier) and its query. */
extern const float KV_WORKED_K[16];
extern const float KV_WORKED_Q[4];

#endif
