/* budget.h - everything the calculator shows for one workload and format.
 *
 * A workload is a model shape, a context and batch, KV options, and what is
 * known of the machine: the bytes of the KV pool, the bytes of the weights,
 * the memory bandwidth. From these, per format: the footprint
 * (footprint.h), the static and paged slots the pool holds, the decode-step
 * floor (the time to stream weights plus KV once at peak bandwidth), the
 * speedup over BF16 at the same workload, and the context at which the KV
 * cache outweighs the weights.
 *
 * With tensor parallelism every figure is per GPU: KV heads and weights are
 * divided over tp GPUs, and pool and bandwidth are one GPU's.
 */
#ifndef KVLAB_BUDGET_H
#define KVLAB_BUDGET_H

#include "checked.h"
#include "error.h"
#include "footprint.h"
#include "format.h"
#include "model.h"

#include <stdbool.h>
#include <stdint.h>

#define PAGED_BLOCK_DEFAULT 16  // tokens per block, vLLM's default

typedef struct {
    Shape shape;                // the model as given
    bool mha;                   // the same model with H_kv = H_q
    uint64_t tp;                // tensor-parallel degree; 1 = one GPU
    uint64_t context;           // S, tokens per sequence
    uint64_t batch;             // B, sequences
    KvOptions kv;
    u128 pool;                  // bytes for KV on one GPU; 0 = unknown
    u128 weights;               // bytes of weights, whole model; 0 = unknown
    u128 bandwidth;             // bytes/s of one GPU; 0 = unknown
    uint64_t block_tokens;      // paged-attention block size
} Workload;

typedef struct {
    const Format *format;
    Shape shape;                // per GPU, after MHA and TP
    uint64_t kv_replicas;       // copies of each KV head across GPUs
    u128 weights;               // per GPU
    Footprint fp;               // per GPU
    Q bytes_per_element;        // metadata included
    bool has_slots;             // pool known
    u128 slots;                 // floor(pool / bytes_per_sequence)
    u128 paged_bytes_per_sequence; // whole blocks: ceil(S / block) x block tokens
    u128 paged_slots;           // floor(pool / paged_bytes_per_sequence)
    bool has_step;              // weights and bandwidth known
    u128 bytes_read;            // weights + KV + scales, one decode step
    Q step_ms;                  // bytes_read / bandwidth, in milliseconds
    Q speedup;                  // BF16 step / this step, same workload
    bool has_crossover;         // weights known
    uint64_t crossover_context; // first S where KV bytes >= weights; 0 = never
} FormatResult;

void workload_init(Workload *w, const Shape *s, uint64_t context, uint64_t batch);

/* A workload's inputs by what they are, a bit each. */
typedef enum {
    WL_CACHE = 1 << 0,          // what the cache holds a token as: the shape, MHA,
                                // tensor parallelism, the KV options
    WL_CONTEXT = 1 << 1,
    WL_BATCH = 1 << 2,
    WL_POOL = 1 << 3,
    WL_WEIGHTS = 1 << 4,
    WL_BANDWIDTH = 1 << 5,
    WL_BLOCK = 1 << 6,          // the paged-attention block
} WorkloadInput;

/* The inputs (WorkloadInput bits) in which a and b differ: every field of
 * Workload is compared. */
unsigned workload_changes(const Workload *a, const Workload *b);
/* Whether the cache keeps some of its tokens or layers in BF16 (a KIVI
 * residual, BF16 layers): then one format's size over another's changes
 * with the context. */
bool workload_mixed(const Workload *w);

/* Sets w->pool to what one GPU of `memory` bytes leaves for KV:
 * floor(memory x utilization) - weights / tp - reserve. When nothing is
 * left, the message says so and which tensor-parallel degree would leave
 * room. */
int workload_pool_from_gpu(Workload *w, u128 memory, Q utilization, u128 reserve, Error *e);
/* The utilization where none is given: vLLM's gpu_memory_utilization. */
#define GPU_UTILIZATION_DEFAULT ((Q){9, 10})

#define TP_FIT_MAX 1024         // the largest degree a fix suggests

/* How the weights and the KV pool sit in one GPU's memory (per GPU under
 * tensor parallelism). A fact to show beside the figures, not an error:
 * they are computed all the same, as a what-if. */
typedef struct {
    u128 memory;                // one GPU's memory
    u128 pool;                  // the workload's KV pool (on one GPU)
    u128 weights;               // the weights on one GPU: weights / tp, rounded up
    u128 room;                  // memory - weights: the largest pool beside them; 0 if none
    bool pool_exceeds;          // the pool is larger than room
    u128 excess;                // pool + weights - memory, when the pool exceeds
    uint64_t tp_fit;            // the least degree (tp times a power of two) at which
                                // pool and weights fit one GPU; 0: none up to TP_FIT_MAX
    uint64_t tp_weights;        // where the weights alone fill the GPU (room 0): the least
                                // degree at which they leave room; 0: none, or room > 0
    u128 tp_weights_room;       // the largest pool beside them at that degree
} GpuFit;

void budget_gpu_fit(const Workload *w, u128 memory, GpuFit *f);

int budget_compute(const Workload *w, const Format *f, FormatResult *r, Error *e);

#endif
