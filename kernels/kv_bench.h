/* kv_bench.h - measuring decode attention, backend-neutral.
 *
 * For one format, batch and context: a cache of random but valid codes, one
 * decode step of one attention layer timed (CUDA events, median after a
 * warm-up, rotating over enough copies that the L2 cannot hold them; or the
 * CPU reference by wall clock), the bytes the step must read
 * (calc/footprint.h) and the bandwidth that makes. Used by `kvlab bench`
 * and the lab's GPU screen. */
#ifndef KVLAB_KV_BENCH_H
#define KVLAB_KV_BENCH_H

#include "checked.h"
#include "kv_attn.h"
#include "kv_cuda.h"
#include "model.h"

#include <stdbool.h>
#include <stddef.h>

/* KIVI's residual window, in tokens (a multiple of KV_KIVI_GROUP), where
 * none is given: the paper's R. */
#define BENCH_RESIDUAL_DEFAULT 128
/* The most layers a model's step is measured with (bench_steps). */
#define BENCH_LAYERS_MAX 256

typedef struct {
    KvFormat format;
    uint32_t batch;
    uint64_t context;
    double ms;                  // median, one layer
    u128 kv_bytes;              // bytes one step reads
    double gbps;
    double read_ms;             // GPU, with read_floor: a plain read of kv_bytes, timed as ms
                                // is: what a kernel that does nothing but read them takes; else 0
    double step_ms;             // bench_steps: the model's whole step, a CUDA graph replayed
    double step_launched_ms;    // the same step launched kernel by kernel
    double wall_s;              // seconds measuring the point took, set-up included
} BenchRow;

/* What a slope is fitted to: one attention layer's time, or the model's
 * whole step (bench_steps) replayed from a CUDA graph or launched. */
typedef enum { BENCH_ATTENTION, BENCH_STEP_GRAPH, BENCH_STEP_LAUNCHED } BenchTime;

typedef struct {
    bool cuda;                  // timing the CUDA kernels (else the CPU reference)
    const KvCudaApi *api;
    KvCudaOptions cuda_opts;    // which CUDA kernels (bench_open: the environment's)
    GpuInfo info;
    char why_cpu[ERROR_MSG_MAX];// why not CUDA
    double copy_gbps;           // device-to-device copy, read + write, this run
    double weights_ms;          // reading the model's weights once, alone; 0 = not measured
    Shape shape;                // attention shape; layers for the weight stream
    uint32_t residual;          // int4 (KIVI) window: BENCH_RESIDUAL_DEFAULT unless told
    int iters;
    bool read_floor;            // bench_point also times the plain read of its bytes (read_ms)
} BenchSetup;

/* 0 when backend is "auto", "cuda" or "cpu", else an error saying so. */
int bench_backend_check(const char *backend, Error *e);
/* backend as bench_backend_check takes it; measures the copy bandwidth on
 * a GPU; sets cuda_opts from the environment (gpu_options_from_env). */
int bench_open(BenchSetup *b, const char *backend, Error *e);
/* 0 where bench_steps can measure (a GPU), else an error saying why not. */
int bench_steps_here(const BenchSetup *b, Error *e);
/* Measures each of the n rows' whole decode step of the model (GPU only),
 * as an engine runs it: shape.layers layers, each its share of a weight
 * stream of `weight_bytes` read, then its attention over one of several
 * distinct caches taken in turn (four L2s' worth, at least two, at most
 * one a layer; fewer where memory is short), so that the L2 carries
 * nothing from layer to layer, at the row's format, batch and
 * context; step_ms replayed from a CUDA graph, step_launched_ms launched
 * kernel by kernel. Also weights_ms, the weight stream read alone. Call
 * it after the rows are timed: the attention timed right after a read of
 * the whole weights measured up to a tenth slower (kernels/PERF.md). */
int bench_steps(BenchSetup *b, u128 weight_bytes, BenchRow *rows, size_t n, Error *e);
/* The same for one row, weights_ms left as it is; the time it took added
 * to the row's wall_s. */
int bench_step(BenchSetup *b, u128 weight_bytes, BenchRow *row, Error *e);
/* The FP8 kernel the CUDA plugin runs for the shape ("A", "B" or "fp32":
 * KvCudaApi.fp8_kernel); "" on the CPU reference. */
const char *bench_fp8_kernel(const BenchSetup *b);
int bench_point(BenchSetup *b, KvFormat f, uint32_t batch, uint64_t context, BenchRow *row, Error *e);
/* Seconds that measuring n_left more points, of these contexts, will take,
 * from how long the n measured rows took (wall_s): a point's cost grows
 * with its context, so the least-squares line a + b x context through the
 * measured points, or through the origin while they have one context (or
 * where the line would have a or b below 0). Negative before any point. */
double bench_seconds_left(const BenchRow *rows, size_t n, const uint64_t *contexts, size_t n_left);
/* Least-squares ms per context token over the rows of one format and
 * batch, of the time `what`; NaN with fewer than two. */
double bench_slope(const BenchRow *rows, size_t n, KvFormat f, uint32_t batch, BenchTime what);

#endif
