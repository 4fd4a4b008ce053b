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

#define KVLAB_CUDA_ABI 6

typedef struct {
    char name[128];
    int sm_count;
    int cc_major, cc_minor;
    size_t memory_total, memory_free;
    size_t l2_bytes;
} GpuInfo;

/* The copies of `bytes` a timing rotates over so that the L2 (l2_bytes)
 * holds none of a run's bytes: as many as make four L2s, at least lo and
 * then at most hi. */
static inline int kv_l2_copies(size_t l2_bytes, size_t bytes, int lo, int hi)
{
    size_t want = bytes ? (4 * l2_bytes + bytes - 1) / bytes : (size_t)hi;
    want = want < (size_t)lo ? (size_t)lo : want;
    return want > (size_t)hi ? hi : (int)want;
}

/* Compute capability (10 major + minor) 8.9 or later: MMAs on E4M3
 * operands (FP8 paths A and C). */
static inline bool cc_has_e4m3_mma(int cc) { return cc >= 89; }
static inline bool gpu_has_e4m3_mma(const GpuInfo *g) { return cc_has_e4m3_mma(g->cc_major * 10 + g->cc_minor); }

typedef struct GpuCache GpuCache;       // a cache in device memory

/* Which kernels decode runs for a cache, chosen when it is made. */
typedef enum {
    /* The tensor-core kernels where they take the shape (head dimension 64
     * or 128, up to 8 query heads per KV head), FP8 as FP16 operands (path
     * B); the FP32 kernels elsewhere. */
    KV_CUDA_TENSOR_CORES,
    /* The same, but FP8 with E4M3 operands for q.k (path A) where the GPU
     * has E4M3 MMAs (cc_has_e4m3_mma); path B elsewhere. */
    KV_CUDA_FP8_PATH_A,
    /* The FP32 kernels for every format and shape (to compare). */
    KV_CUDA_FP32,
    /* FP8 as FlashAttention-3 runs it (path C): q.k as path A, and p.v on
     * E4M3 MMAs too, the probabilities rounded to E4M3 and the tokens the
     * MMA's reduction, summed in the MMA's accumulators over the tokens
     * of a split (promoted to FP32 every fp8_promote blocks of 32 tokens),
     * where the GPU has E4M3 MMAs; path B elsewhere. */
    KV_CUDA_FP8_PATH_C,
    KV_CUDA_KERNELS
} KvCudaKernels;

/* The caller's choices; all zero is the default. */
typedef struct {
    KvCudaKernels kernels;
    /* FP8 paths A and C: add the E4M3 MMAs' sums into FP32 every N
     * k-blocks of 32: path A's q.k, blocks of 32 channels (0: once per
     * score); path C's p.v, blocks of 32 tokens (0: once per split). */
    int fp8_promote;
    /* Token slices per sequence and KV head (split-KV): 0, as many as the
     * plan finds fastest; N > 0, N (at most one per token), so that 1 runs
     * each sequence's whole context through one block, its sums spanning
     * every token (int4: its quantized groups; the BF16 window is a slice
     * of its own either way). */
    int splits;
} KvCudaOptions;

/* The arithmetic of a path's kernels that the CPU reference can repeat
 * (kv_attn.h, KvCpuOptions): the query in E4M3 (paths A and C) and the
 * probabilities in E4M3 (path C). */
static inline KvCpuOptions gpu_cpu_arith(const KvCudaOptions *o)
{
    KvCpuOptions c = {o->kernels == KV_CUDA_FP8_PATH_A || o->kernels == KV_CUDA_FP8_PATH_C,
                      o->kernels == KV_CUDA_FP8_PATH_C};
    return c;
}

/* The plugin's table; every function returns 0, or -1 with a message in
 * err (at most n bytes). Options may be NULL: the defaults. */
typedef struct {
    int abi;
    int (*info)(GpuInfo *out, char *err, size_t n);
    /* Copies a host cache (kv_attn.h layout) to the device. */
    int (*upload)(const KvCache *host, const KvCudaOptions *o, GpuCache **out, char *err, size_t n);
    /* A device cache of `len` random tokens, filled on the device as
     * kv_fill_random fills a host one (kv_fill.h). */
    int (*fill)(const KvShape *s, const KvCudaOptions *o, uint32_t len, uint64_t seed, GpuCache **out,
                char *err, size_t n);
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
     * of that size, its whole 16-byte words), timed as time_decode times a
     * step, over copies read in turn as its caches are: the weight stream
     * of one decode step, and what a kernel that does nothing but read a
     * cache's bytes takes, timed so. */
    int (*time_read)(size_t bytes, double *median_ms, char *err, size_t n);
    /* The FP8 kernel decode runs for this shape (its format aside) with
     * these options: "A" (E4M3 operands for q.k), "C" (E4M3 operands for
     * q.k and p.v), "B" (codes to FP16 tensor-core operands) or "fp32"
     * (the FP32 kernels: asked for, or a shape the tensor-core kernels do
     * not take). */
    const char *(*fp8_kernel)(const KvShape *s, const KvCudaOptions *o);
    /* Median milliseconds of one decode step of a whole model, over
     * `iters` runs after a warm-up, CUDA events: for each of `layers`
     * layers in turn, its share of a weight stream of weight_bytes read
     * once, then its attention over caches[layer mod n_caches] (distinct
     * caches enough that the L2 cannot carry one layer's into the next).
     * graph_ms: the step captured once in a CUDA graph and replayed, as
     * serving engines run it; launched_ms: the same kernels launched one
     * by one from the host, its launch costs counted where the host falls
     * behind the GPU. */
    int (*time_step)(GpuCache **caches, int n_caches, int layers, size_t weight_bytes, int iters,
                     double *graph_ms, double *launched_ms, char *err, size_t n);
} KvCudaApi;

typedef const KvCudaApi *(*KvCudaEntry)(void);
#define KVLAB_CUDA_ENTRY "kvlab_cuda_api"

/* Opens the plugin: $KVLAB_CUDA_PLUGIN where set, else the first of the
 * places paths.h lists (beside the program, under PREFIX, the library
 * path) that loads. */
const KvCudaApi *gpu_open(Error *e);

/* The options the environment asks for, read once by whoever opens the
 * plugin: KVLAB_CUDA_PATH "fp32" (KV_CUDA_FP32), "fp8a"
 * (KV_CUDA_FP8_PATH_A) or "fp8c" (KV_CUDA_FP8_PATH_C), anything else the
 * default; KVLAB_CUDA_FP8_PROMOTE N (fp8_promote, where N > 0);
 * KVLAB_CUDA_SPLITS N (splits, where N > 0). */
KvCudaOptions gpu_options_from_env(void);

#ifdef __cplusplus
}
#endif

#endif
