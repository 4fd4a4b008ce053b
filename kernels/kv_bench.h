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

typedef struct {
    KvFormat format;
    uint32_t batch;
    uint64_t context;
    double ms;                  // median, one layer
    u128 kv_bytes;              // bytes one step reads
    double gbps;
    double step_ms;             // with a weight stream: layers x ms + weights_ms
    double wall_s;              // seconds measuring the point took, set-up included
} BenchRow;

typedef struct {
    bool cuda;                  // timing the CUDA kernels (else the CPU reference)
    const KvCudaApi *api;
    KvCudaOptions cuda_opts;    // which CUDA kernels (bench_open: the environment's)
    GpuInfo info;
    char why_cpu[ERROR_MSG_MAX];// why not CUDA
    double copy_gbps;           // device-to-device copy, read + write, this run
    double weights_ms;          // reading the model's weights once; 0 = not measured
    Shape shape;                // attention shape; layers for the weight stream
    uint32_t residual;          // int4 (KIVI) window: BENCH_RESIDUAL_DEFAULT unless told
    int iters;
} BenchSetup;

/* 0 when backend is "auto", "cuda" or "cpu", else an error saying so. */
int bench_backend_check(const char *backend, Error *e);
/* backend as bench_backend_check takes it; measures the copy bandwidth on
 * a GPU; sets cuda_opts from the environment (gpu_options_from_env). */
int bench_open(BenchSetup *b, const char *backend, Error *e);
/* 0 where bench_weights can measure (a GPU), else an error saying why not. */
int bench_weights_here(const BenchSetup *b, Error *e);
/* Measures the weight stream of `weight_bytes` (GPU only) and sets the
 * step_ms of the n rows. Call it after the rows are timed: the attention
 * timed right after a read of the whole weights measured up to a tenth
 * slower (kernels/PERF.md). */
int bench_weights(BenchSetup *b, u128 weight_bytes, BenchRow *rows, size_t n, Error *e);
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
 * batch (step_ms with the weight stream); NaN with fewer than two. */
double bench_slope(const BenchRow *rows, size_t n, KvFormat f, uint32_t batch, bool step);

#endif
