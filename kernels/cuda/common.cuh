// common.cuh - what every file of the CUDA plugin shares: the tuning
// constants, the checked CUDA call, the kernels' parameters, and what each
// kernel family's file exports for dispatch.cu to choose from.
//
// The plugin (libkvlab_cuda.so, opened by kvlab with dlopen: kv_cuda.h)
// runs one decode step over a device cache that is a byte-for-byte copy of
// the host layout in kv_attn.h. One step reads every K and V byte once, so
// the floor is (bytes of K, V and scales) / bandwidth. The kernels are
// split-KV (flash decoding): the grid is (splits, KV heads, batch); each
// block walks one slice of one sequence's tokens for one KV head and serves
// every query head of its GQA group from that single read, keeping an
// online softmax; a second kernel (merge.cu) merges the slices by
// log-sum-exp.
//
//   primitives:   convert.cuh (register conversions of every format),
//                 mma.cuh (tensor-core MMAs, cp.async staging),
//                 softmax.cuh (online softmax, split state, the query)
//   tensor cores: bf16_mma.cu, code_mma.cu (fp8, int8, nvfp4, mxfp4),
//                 kivi_mma.cu (int4): D 64 or 128, up to 8 query heads
//                 per KV head
//   FP32:         rows_fp32.cu (every other shape, and every shape where
//                 the FP32 kernels are asked for: KvCudaOptions)
//   merge:        merge.cu
//   host:         dispatch.cu (split plan, shared memory, which kernel,
//                 launch), plugin.cu (cache life cycle, fill, timing, the
//                 API table)
//
// Every kernel family's file exports functions that pick its kernel
// instance for a shape (declared below), so that no file needs another's
// device code: each .cu is compiled on its own, without relocatable device
// code.
#ifndef KVLAB_CUDA_COMMON_CUH
#define KVLAB_CUDA_COMMON_CUH

#include "kv_cuda.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>

// Tuning knobs, set with -D: warps per block; for the rows kernel, the
// least blocks per multiprocessor its register budget must allow (0: no
// bound) and a divisor of the tokens kept in flight per lane; the BF16
// kernel's staged tiles (kernels/PERF.md has the measurements).
#ifndef KV_WARPS
#define KV_WARPS 4
#endif
#ifndef KV_MIN_BLOCKS
#define KV_MIN_BLOCKS 0
#endif
#ifndef KV_U_DIV
#define KV_U_DIV 1
#endif
#ifndef KV_BF16_STAGES
#define KV_BF16_STAGES 3                    // BF16 tiles staged per warp (one in use, the rest in flight)
#endif
#define WARPS KV_WARPS
#define THREADS (WARPS * 32)
#define MMA_TILE 16                         // tokens per warp's tile (the tensor-core kernels but KIVI's)
#if KV_MIN_BLOCKS
#define ROWS_BOUNDS __launch_bounds__(THREADS, KV_MIN_BLOCKS)
#else
#define ROWS_BOUNDS __launch_bounds__(THREADS)
#endif

// ---------------------------------------------------------------------------
// Errors: every CUDA call is checked; the message names the call.

static inline int cuda_fail(char *err, size_t n, const char *what, cudaError_t e)
{
    snprintf(err, n, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

// Runs `call`; where it fails, writes the call and CUDA's reason to err (n
// bytes) and returns -1 from the enclosing function.
#define CUDA_TRY(call, err, n)                                                                    \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess)                                                                    \
            return cuda_fail(err, n, #call, e_);                                                  \
    } while (0)

// ---------------------------------------------------------------------------
// The kernels' parameters

// Every kernel but the FP32 KIVI one: the arrays of kv_attn.h (KvArray),
// the query, the partial results per split, and the shape.
struct RowParams {
    const uint8_t *k, *v;
    const uint16_t *k_scale, *v_scale;
    const uint8_t *k_block, *v_block;
    const float *k_tensor, *v_tensor;
    const float *q;
    float *part_o, *part_m, *part_l;
    int Hkv, Hq, D, cap, len, chunk, splits, head_scales;
    int promote;                    // FP8 paths A, C: k-blocks of 32 per promotion (0: once, at the end)
    const uint16_t *k_zero, *v_zero;// int4 (KIVI): FP16 minima beside k_scale, v_scale
    int split0;                     // the first split a launch writes (KIVI: the residual's)
};

// The FP32 KIVI kernel (int4).
struct KiviParams {
    const uint8_t *k, *v;                   // keys (B,H,C/32,D,16); values (B,H,C,D/2)
    const uint16_t *k_scale, *k_zero;       // (B,H,C/32,D)
    const uint16_t *v_scale, *v_zero;       // (B,H,C,D/32)
    const uint16_t *k_res, *v_res;          // (B,H,R+32,D) BF16
    const float *q;
    float *part_o, *part_m, *part_l;
    int Hkv, Hq, D, cap, len, quantized, res_cap, chunk, splits;
};

// ---------------------------------------------------------------------------
// What each kernel family exports: its kernel instance for a shape (the
// dispatcher launches it with THREADS threads), and the dynamic shared
// memory its staging needs (the tensor-core kernels).

// Where group size G (1, 2, 4 or 8 query heads per KV head) sits in a
// family's table of kernel instances.
static inline int group_index(int G)
{
    return G == 1 ? 0 : G == 2 ? 1 : G == 4 ? 2 : 3;
}

// rows_fp32.cu: every format but int4, any head dimension and group size
const void *rows_fp32_select(KvFormat f, int G);
// rows_fp32.cu: int4, any head dimension and group size
const void *kivi_fp32_select(int G);
// bf16_mma.cu
const void *bf16_mma_select(int D, int G);
size_t bf16_mma_staging(int D);
// code_mma.cu: fp8 (path A: E4M3 operands for q.k; path C: for q.k and
// p.v), int8, nvfp4, mxfp4
enum Fp8Path { FP8_B, FP8_A, FP8_C };
const void *code_mma_select(KvFormat f, int D, int G, Fp8Path fp8);
size_t code_mma_staging(KvFormat f, int D);
// kivi_mma.cu: int4's quantized groups
const void *kivi_mma_select(int D, int G);
size_t kivi_mma_staging(int D);
// merge.cu: the merge of `splits` partial rows
typedef void (*MergeKernel)(const float *, const float *, const float *, float *, int, int);
MergeKernel merge_select(int splits);

#endif
