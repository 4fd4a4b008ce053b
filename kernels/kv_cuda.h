/* kv_cuda.h - the CUDA backend, loaded at run time.
 *
 * kvlab never links CUDA: libkvlab_cuda.so (built from kernels/cuda/ when
 * nvcc is present) is opened with dlopen and hands back one table of
 * functions. No plugin, no driver, no GPU, or a GPU error: gpu_open says
 * why, and the caller carries on with the CPU reference. */
#ifndef KVLAB_KV_CUDA_H
#define KVLAB_KV_CUDA_H

#include "kv_attn.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KVLAB_CUDA_ABI 2

typedef struct {
    char name[128];
    int sm_count;
    int cc_major, cc_minor;
    size_t memory_total, memory_free;
    size_t l2_bytes;
} GpuInfo;

/* Compute capability (10 major + minor) 8.9 or later: MMAs on E4M3
 * operands (FP8 path A). */
static inline bool cc_has_e4m3_mma(int cc) { return cc >= 89; }
static inline bool gpu_has_e4m3_mma(const GpuInfo *g) { return cc_has_e4m3_mma(g->cc_major * 10 + g->cc_minor); }

typedef struct GpuCache GpuCache;       // a cache in device memory

/* The plugin's table; every function returns 0, or -1 with a message in
 * err (at most n bytes). */
typedef struct {
    int abi;
    int (*info)(GpuInfo *out, char *err, size_t n);
    /* Copies a host cache (kv_attn.h layout) to the device. */
    int (*upload)(const KvCache *host, GpuCache **out, char *err, size_t n);
    /* A device cache of `len` random tokens, filled on the device. */
    int (*fill)(const KvShape *s, uint32_t len, uint64_t seed, GpuCache **out, char *err, size_t n);
    void (*release)(GpuCache *c);
    /* One decode step; q and out are host arrays (B, H_q, D). */
    int (*decode)(GpuCache *c, const float *q, float *out, char *err, size_t n);
    /* Median milliseconds of one decode step over `iters` runs after a
     * warm-up, CUDA events, rotating over the caches given (so that the
     * L2 cannot hold them). */
    int (*time_decode)(GpuCache **caches, int n_caches, int iters, double *median_ms, char *err,
                       size_t n);
    /* Device-to-device copy of `bytes`, read plus written, in GB/s. */
    int (*copy_bandwidth)(size_t bytes, double *gbps, char *err, size_t n);
    /* Median milliseconds to read `bytes` once (a reduction over a buffer
     * of that size): the weight stream of one decode step. */
    int (*time_read)(size_t bytes, double *median_ms, char *err, size_t n);
    /* The FP8 kernel decode runs for this shape (its format aside), with
     * the environment as it is now: "A" (E4M3 operands for q.k), "B"
     * (codes to FP16 tensor-core operands) or "fp32" (the FP32 kernels:
     * asked for, or a shape the tensor-core kernels do not take). */
    const char *(*fp8_kernel)(const KvShape *s);
} KvCudaApi;

typedef const KvCudaApi *(*KvCudaEntry)(void);
#define KVLAB_CUDA_ENTRY "kvlab_cuda_api"

/* Opens the plugin: $KVLAB_CUDA_PLUGIN where set, else the first of the
 * places paths.h lists (beside the program, under PREFIX, the library
 * path) that loads. */
const KvCudaApi *gpu_open(Error *e);

#ifdef __cplusplus
}
#endif

#endif
