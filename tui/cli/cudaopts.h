/* cudaopts.h - the options that choose among the CUDA plugin's kernels
 * (kernels/kv_cuda.h's KvCudaOptions): --fp8-path, --promote and --splits,
 * as every command that runs the kernels (kvlab bench, kvlab niah) takes
 * them: their help, their parsing and the refusals written once. */
#ifndef KVLAB_CUDAOPTS_H
#define KVLAB_CUDAOPTS_H

#include "cli.h"
#include "kv_cuda.h"

#define CUDA_OPT_FP8_PATH                                                                                       \
    {"fp8-path", "A|B|C", "fp8_e4m3 on CUDA: B (the default), codes converted to FP16 tensor-core operands; A, " \
                          "E4M3 operands for q.k; C, E4M3 operands for q.k and p.v, as FlashAttention-3 (A and "  \
                          "C: compute capability 8.9 or later)"}
#define CUDA_OPT_PROMOTE                                                                                         \
    {"promote", "N", "FP8 paths A and C: add the E4M3 MMA sums into FP32 every N blocks of 32 (A: channels of "  \
                     "q.k, default once per score; C: tokens of p.v, default once per split)"}
#define CUDA_OPT_SPLITS                                                                                          \
    {"splits", "N", "CUDA: token slices per sequence (default: as many as run fastest; 1: each sequence's "      \
                    "whole context in one block)"}

/* Where a command's option table holds the three. */
typedef struct {
    int fp8_path, promote, splits;
} CudaOpts;

/* The plugin's options: the environment's (gpu_options_from_env), changed
 * by --fp8-path, --promote and --splits; fp8 says whether fp8_e4m3 is among
 * the formats the command runs (--fp8-path and --promote refused where it
 * is not). */
int cudaopts_parse(const Given *g, const OptSpec *specs, CudaOpts ix, bool fp8, KvCudaOptions *o, Error *e);
/* The name of the first of the three given ("fp8-path"), else NULL. */
const char *cudaopts_given(const Given *g, const OptSpec *specs, CudaOpts ix);
/* The E4M3 path (A or C) the options ask for, else 0. */
char cudaopts_e4m3_chosen(const KvCudaOptions *o);
/* Where --fp8-path asked for path A or C and the plugin runs another kernel
 * (`kernel`, its fp8_kernel for a head dimension of head_dim with q_per_kv
 * query heads a KV head) on the GPU gi: -1 with e saying why; else 0. */
int cudaopts_kernel_check(const Given *g, CudaOpts ix, const KvCudaOptions *o, const char *kernel,
                          const GpuInfo *gi, unsigned long long head_dim, unsigned long long q_per_kv, Error *e);

#endif
