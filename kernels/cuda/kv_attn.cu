// kv_attn.cu - decode attention over a quantized KV cache on NVIDIA GPUs.
//
// Built into libkvlab_cuda.so and opened by kvlab with dlopen (kv_cuda.h). The
// device cache is a byte-for-byte copy of the host layout in kv_attn.h.
//
// Where the time goes: one decode step reads every K and V byte once, so
// the floor is (bytes of K, V and scales) / bandwidth. The kernels are
// split-KV (flash decoding): the grid is (splits, KV heads, batch); each
// block walks one slice of one sequence's tokens for one KV head and serves
// every query head of its GQA group from that single read, keeping an
// online softmax; a second kernel merges the slices by log-sum-exp.
//
//   tensor-core kernels (D 64 or 128, G <= 8): q.k and p.v as mma.sync,
//   described where they begin below: the BF16 kernel, the code kernel
//   (fp8, int8, nvfp4, mxfp4: codes staged in shared memory and converted
//   on their way into the MMA fragments) and the KIVI code kernel (int4).
//   They take those shapes; the two FP32 kernels below take the rest, and
//   every shape with KVLAB_CUDA_PATH=fp32.
//
//   rows kernel (bf16, fp8, int8, nvfp4, mxfp4): a token's row is split
//   into 16-byte (or 8-byte) chunks, one per lane; L = D / E lanes share a
//   token, so a warp works on 32 / L tokens at once; the dot product is a
//   shuffle reduction over L lanes. Conversions happen in registers: FP8
//   and E2M1 bits are moved into FP16 position and scaled (exact; E2M1
//   read through kv_e2m1_code), BF16 is a shift.
//
//   KIVI kernel (int4): keys are stored channel-major in groups of 32
//   tokens, so a warp takes one group, one lane per token; every lane reads
//   the same 16 bytes per channel (a broadcast) and the query from shared
//   memory. Values are per token: each lane owns D / 32 dimensions.
//
// FP8 path B (the default) converts codes to FP16 MMA operands; path A
// (KVLAB_CUDA_PATH=fp8a) feeds E4M3 keys to an E4M3 MMA as they are.

#include "kv_cuda.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

// Tuning knobs, set with -D: warps per block; for the rows kernel, the
// least blocks per multiprocessor its register budget must allow (0: no
// bound) and a divisor of the tokens kept in flight per lane; the BF16
// kernel's staged tiles (two, three and four measured in kernels/PERF.md).
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
#define KV_BF16_STAGES 3                    // BF16 tiles staged a warp (one in use, the rest in flight)
#endif
#define WARPS KV_WARPS
#define THREADS (WARPS * 32)
#define MMA_TILE 16                         // tokens a warp's tile (the tensor-core kernels but KIVI's)
#if KV_MIN_BLOCKS
#define ROWS_BOUNDS __launch_bounds__(THREADS, KV_MIN_BLOCKS)
#else
#define ROWS_BOUNDS __launch_bounds__(THREADS)
#endif

// ---------------------------------------------------------------------------
// Errors: every CUDA call is checked; the message names the call.

static int fail(char *err, size_t n, const char *what, cudaError_t e)
{
    snprintf(err, n, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

#define CK(call)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess)                                                                    \
            return fail(err, n, #call, e_);                                                       \
    } while (0)

// ---------------------------------------------------------------------------
// The device cache

struct GpuCache {
    KvShape s;
    uint32_t len, quantized;
    void *arr[KV_ARRAYS];           // device copies of the kv_attn.h arrays
    size_t bytes[KV_ARRAYS];
    float *q, *out;                 // (B, H_q, D)
    float *part_o, *part_m, *part_l;// per split: (B, H_q, splits, D), (B, H_q, splits)
    int splits, chunk;              // token slices per (sequence, KV head) and their length
};

static int sm_count(void)
{
    static int n;
    if (!n) {
        int dev = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
        if (n <= 0)
            n = 100;
    }
    return n;
}

static bool use_mma(const KvShape &s);
static const void *mma_kernel_for(const KvShape &s);
static int mma_prepare(const void *fn, size_t smem);
static size_t mma_smem(int fmt, int D, int G);

// The tensor-core kernels: as many blocks as the SMs hold at once (their
// occupancy, asked of the runtime), so that the step is one wave with no
// tail; but one fewer an SM at a time, down to two, while each warp would
// see fewer than 64 tiles of 16 tokens (8 for the formats bound by their
// instructions, int4, NVFP4 and MXFP4, which gain from more warps an SM;
// batch 1, short contexts at batch 16), and one where BF16, FP8 and INT8
// would see fewer than 16 with two: there fewer, longer blocks pay their
// start and end less often. The formats bound by their instructions keep
// two (kernels/PERF.md; results/experiments/blocks_per_sm/, values_as_a/,
// kivi_values_as_a/warp_tiles/, one_block/, e2m1_warp_tiles/). The FP32
// kernels: at least four blocks per SM (the FP32 KIVI kernel keeps few
// loads in flight and measured slower with fewer). Slices of at least 256
// tokens (KIVI: whole groups of 32, plus one slice for the residual window).
static void plan_splits(GpuCache *c)
{
    long pairs = (long)c->s.batch * c->s.kv_heads;
    long want = (4L * sm_count() + pairs - 1) / pairs;
    long tokens = c->s.format == KV_INT4 ? c->quantized : c->len;
    if (use_mma(c->s)) {
        const int G = (int)(c->s.q_heads / c->s.kv_heads);
        long r = mma_prepare(mma_kernel_for(c->s), mma_smem(c->s.format, (int)c->s.head_dim, G));
        // tiles a warp should see before a third or fourth block an SM pays,
        // and before a second does (0: always two or more), by format
        static const long MORE[KV_FORMATS] = {64, 64, 64, 8, 8, 8}, SECOND[KV_FORMATS] = {16, 16, 16, 0, 0, 0};
        const int f = c->s.format;
        auto tiles = [&](long blocks) { return tokens * pairs / (blocks * sm_count() * WARPS * MMA_TILE); };
        while (r > 2 && tiles(r) < MORE[f])
            r--;
        if (r == 2 && tiles(2) < SECOND[f])
            r = 1;
        if (r > 0)
            want = std::max(1L, r * sm_count() / pairs);
    }
    long max_splits = std::max(1L, (tokens + 255) / 256);
    long splits = std::max(1L, std::min(want, max_splits));
    long chunk = (tokens + splits - 1) / splits;
    if (c->s.format == KV_INT4) {
        chunk = (chunk + KV_KIVI_GROUP - 1) / KV_KIVI_GROUP * KV_KIVI_GROUP;
        splits = chunk ? (tokens + chunk - 1) / chunk : 0;
        splits += 1;                            // the last slice takes the residual window
        if (!chunk)
            chunk = KV_KIVI_GROUP;
    }
    c->splits = (int)splits;
    c->chunk = (int)std::max(1L, chunk);
}

static int alloc_work(GpuCache *c, char *err, size_t n)
{
    size_t rows = (size_t)c->s.batch * c->s.q_heads;
    CK(cudaMalloc(&c->q, rows * c->s.head_dim * sizeof(float)));
    CK(cudaMalloc(&c->out, rows * c->s.head_dim * sizeof(float)));
    CK(cudaMalloc(&c->part_o, rows * c->splits * c->s.head_dim * sizeof(float)));
    CK(cudaMalloc(&c->part_m, rows * c->splits * sizeof(float)));
    CK(cudaMalloc(&c->part_l, rows * c->splits * sizeof(float)));

    return 0;
}

static void release(GpuCache *c)
{
    if (!c)
        return;
    for (int i = 0; i < KV_ARRAYS; i++)
        cudaFree(c->arr[i]);
    cudaFree(c->q);
    cudaFree(c->out);
    cudaFree(c->part_o);
    cudaFree(c->part_m);
    cudaFree(c->part_l);
    delete c;
}

static int check_shape(const KvShape *s, char *err, size_t n)
{
    Error e;
    if (kv_shape_check(s, &e)) {
        snprintf(err, n, "%s", e.msg);
        return -1;
    }
    uint32_t D = s->head_dim, G = s->q_heads / s->kv_heads;
    if ((D & (D - 1)) || D < 32) {
        snprintf(err, n, "the GPU kernels take head dimensions of 32, 64, 128 or 256, not %u", D);
        return -1;
    }
    if (G != 1 && G != 2 && G != 4 && G != 8) {
        snprintf(err, n, "the GPU kernels take 1, 2, 4 or 8 query heads per KV head, not %u", G);
        return -1;
    }
    return 0;
}

// Allocates the arrays, reporting what is needed, what is free, and the
// largest context that would fit when memory runs out.
static int alloc_arrays(GpuCache *c, char *err, size_t n)
{
    kv_array_bytes(&c->s, c->bytes);
    size_t need = 0;
    for (int i = 0; i < KV_ARRAYS; i++)
        need += c->bytes[i];
    size_t freeb = 0, total = 0;
    cudaMemGetInfo(&freeb, &total);
    if (need + (64u << 20) > freeb) {
        double per_token = (double)need / c->s.capacity;
        snprintf(err, n, "out of device memory: the cache needs %.2f GiB, %.2f GiB are free; the "
                         "largest context that fits is about %.0f tokens",
                 need / 1073741824.0, freeb / 1073741824.0,
                 per_token > 0 ? (double)(freeb - (64u << 20)) / per_token : 0);
        return -1;
    }
    for (int i = 0; i < KV_ARRAYS; i++)
        if (c->bytes[i])
            CK(cudaMalloc(&c->arr[i], c->bytes[i]));
    return 0;
}

// ---------------------------------------------------------------------------
// Conversions in registers

__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); }

// E4M3 bits placed in FP16 position: exponent and mantissa line up with a
// bias 8 lower, so the FP16 value times 256 is the E4M3 value, subnormals
// included (the cache never holds the NaN code).
__device__ __forceinline__ float e4m3_f(uint32_t b)
{
    uint16_t h = (uint16_t)(((b & 0x80u) << 8) | ((b & 0x7Fu) << 7));
    return __half2float(__ushort_as_half(h)) * 256.0f;
}

// E2M1 bits in FP16 position: times 2^14 is the E2M1 value (0.5 as a subnormal).
__device__ __forceinline__ float e2m1_f(uint32_t nib)
{
    uint16_t h = (uint16_t)(((nib & 8u) << 12) | ((nib & 7u) << 9));
    return __half2float(__ushort_as_half(h)) * 16384.0f;
}

__device__ __forceinline__ float e8m0_f(uint32_t code)
{
    return code ? __uint_as_float(code << 23) : __uint_as_float(0x00400000u);
}

__device__ __forceinline__ float h2f(uint16_t h) { return __half2float(__ushort_as_half(h)); }

// ---------------------------------------------------------------------------
// The rows kernel

struct RowParams {
    const uint8_t *k, *v;
    const uint16_t *k_scale, *v_scale;
    const uint8_t *k_block, *v_block;
    const float *k_tensor, *v_tensor;
    const float *q;
    float *part_o, *part_m, *part_l;
    int Hkv, Hq, D, cap, len, chunk, splits, head_scales;
    int promote;                    // FP8 path A: k-blocks of 32 per promotion (0: once, at the end)
    const uint16_t *k_zero, *v_zero;// int4 (KIVI): FP16 minima beside k_scale, v_scale
    int split0;                     // the first split a launch writes (KIVI: the residual's)
};

// Lane's E elements of token row vi (elements d0 .. d0 + E - 1), of K
// (which = 0) or V.
template <int FMT, int E>
__device__ __forceinline__ void load_row(const RowParams &p, size_t vi, int d0, int h, int which,
                                         float *x)
{
    const uint8_t *base = which ? p.v : p.k;
    const int D = p.D;
    if (FMT == KV_BF16) {
        const uint4 *src = (const uint4 *)(base + (vi * D + d0) * 2);
#pragma unroll
        for (int i = 0; i < E / 8; i++) {
            uint4 r = __ldg(src + i);
            uint32_t w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
            for (int j = 0; j < 4; j++) {
                x[i * 8 + 2 * j] = bf16_lo(w[j]);
                x[i * 8 + 2 * j + 1] = bf16_hi(w[j]);
            }
        }
    } else if (FMT == KV_FP8 || FMT == KV_INT8) {
        uint32_t w[E / 4];
        if (E == 16) {
            uint4 r = __ldg((const uint4 *)(base + vi * D + d0));
            w[0] = r.x, w[1] = r.y, w[2] = r.z, w[3] = r.w;
        } else {
            uint2 r = __ldg((const uint2 *)(base + vi * D + d0));
            w[0] = r.x, w[1] = r.y;
        }
        if (FMT == KV_FP8) {
            const float *ts = which ? p.v_tensor : p.k_tensor;
            float s = __ldg(ts + (p.head_scales ? h : 0));
#pragma unroll
            for (int i = 0; i < E; i++)
                x[i] = e4m3_f((w[i / 4] >> (8 * (i % 4))) & 0xFFu) * s;
        } else {
            float s = h2f(__ldg((which ? p.v_scale : p.k_scale) + vi));
#pragma unroll
            for (int i = 0; i < E; i++)
                x[i] = (float)(int8_t)((w[i / 4] >> (8 * (i % 4))) & 0xFFu) * s;
        }
    } else {                                            // NVFP4 and MXFP4: E / 2 bytes
        uint32_t w[E / 8];
        if (E == 16) {
            uint2 r = __ldg((const uint2 *)(base + (vi * D + d0) / 2));
            w[0] = r.x, w[1] = r.y;
        } else {
            w[0] = __ldg((const uint32_t *)(base + (vi * D + d0) / 2));
        }
        constexpr int BS = KV_FP4_BLOCK(FMT);
        static_assert(E <= BS, "a lane's elements lie in one block");
        const uint8_t c = __ldg((which ? p.v_block : p.k_block) + vi * (D / BS) + d0 / BS);
        const float sc = FMT == KV_NVFP4 ? e4m3_f(c) * __ldg(which ? p.v_tensor : p.k_tensor) : e8m0_f(c);
#pragma unroll
        for (int i = 0; i < E; i++)
            x[i] = e2m1_f(kv_e2m1_code((KvFormat)FMT, w[i / 8] >> (16 * (i / 4 % 2)), i % 4)) * sc;
    }
}

// Merges softmax state b into a: running max m, sum l, accumulator o.
template <int E>
__device__ __forceinline__ void merge_state(float &m, float &l, float *o, float mb, float lb,
                                            const float *ob)
{
    float mx = fmaxf(m, mb);
    if (mx == -INFINITY)
        return;
    float a = __expf(m - mx), b = __expf(mb - mx);
    l = l * a + lb * b;
#pragma unroll
    for (int e = 0; e < E; e++)
        o[e] = o[e] * a + ob[e] * b;
    m = mx;
}

// The block's warps hold partial softmax states (max, sum, accumulator) in
// shared memory: merge them and write this split's row for the final merge.
template <int G>
__device__ void write_split(const float (*sm_m)[G], const float (*sm_l)[G],
                            const float (*sm_o)[G][KV_HEAD_DIM_MAX], int D, int Hq, int b, int h, int split,
                            int splits, float *part_o, float *part_m, float *part_l)
{
    for (int i = threadIdx.x; i < G * D; i += THREADS) {
        int g = i / D, d = i % D;
        float M = -INFINITY;
        for (int w = 0; w < WARPS; w++)
            M = fmaxf(M, sm_m[w][g]);
        float Ls = 0, Os = 0;
        if (M != -INFINITY)
            for (int w = 0; w < WARPS; w++) {
                float f = __expf(sm_m[w][g] - M);
                Ls += sm_l[w][g] * f;
                Os += sm_o[w][g][d] * f;
            }
        size_t row = ((size_t)b * Hq + h * G + g) * splits + split;
        part_o[row * D + d] = Os;
        if (d == 0)
            part_m[row] = M, part_l[row] = Ls;
    }
}

template <int FMT, int E, int G>
__global__ void ROWS_BOUNDS rows_kernel(RowParams p)
{
    const int split = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int L = p.D / E, TPW = 32 / L, sub = lane / L, part = lane % L, d0 = part * E;
    const int start = split * p.chunk, end = min(p.len, start + p.chunk);

    float q[G][E], o[G][E], m[G], l[G];
    const float scale = rsqrtf((float)p.D);
#pragma unroll
    for (int g = 0; g < G; g++) {
        const float *qg = p.q + ((size_t)b * p.Hq + h * G + g) * p.D + d0;
#pragma unroll
        for (int e = 0; e < E; e++)
            q[g][e] = qg[e] * scale, o[g][e] = 0;
        m[g] = -INFINITY, l[g] = 0;
    }
    const size_t row0 = ((size_t)b * p.Hkv + h) * p.cap;
    // U tokens per lane group per pass, all loaded before any is used, so
    // that several loads are in flight per lane; the G x U dot products are
    // reduced together (independent shuffles pipeline); one rescale per
    // pass. Every lane runs the same passes (the shuffles need them all).
    constexpr int U0 = (32 / E > 1 ? 32 / E : 1) / (G >= 8 ? 2 : 1) / KV_U_DIV;
    constexpr int U = U0 > 0 ? U0 : 1;
    for (int base = start + warp * TPW * U; base < end; base += WARPS * TPW * U) {
        float k[U][E], v[U][E];
        bool valid[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int t = base + u * TPW + sub;
            valid[u] = t < end;
            if (valid[u]) {
                load_row<FMT, E>(p, row0 + t, d0, h, 0, k[u]);
                load_row<FMT, E>(p, row0 + t, d0, h, 1, v[u]);
            } else {
#pragma unroll
                for (int e = 0; e < E; e++)
                    k[u][e] = v[u][e] = 0;
            }
        }
        float sc[U][G];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int g = 0; g < G; g++) {
                float acc = 0;
#pragma unroll
                for (int e = 0; e < E; e++)
                    acc = fmaf(q[g][e], k[u][e], acc);
                sc[u][g] = acc;
            }
        for (int off = L / 2; off; off >>= 1)
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int g = 0; g < G; g++)
                    sc[u][g] += __shfl_xor_sync(0xFFFFFFFFu, sc[u][g], off);
#pragma unroll
        for (int g = 0; g < G; g++) {
            float mx = m[g];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (valid[u])
                    mx = fmaxf(mx, sc[u][g]);
            if (mx == -INFINITY)
                continue;
            const float a = __expf(m[g] - mx);
            float pw[U], sum = 0;
#pragma unroll
            for (int u = 0; u < U; u++) {
                pw[u] = valid[u] ? __expf(sc[u][g] - mx) : 0;
                sum += pw[u];
            }
            l[g] = l[g] * a + sum;
#pragma unroll
            for (int e = 0; e < E; e++) {
                float acc = o[g][e] * a;
#pragma unroll
                for (int u = 0; u < U; u++)
                    acc = fmaf(pw[u], v[u][e], acc);
                o[g][e] = acc;
            }
            m[g] = mx;
        }
    }
    // lanes with the same part hold states for the same dimensions: merge them
    for (int off = L; off < 32; off <<= 1)
#pragma unroll
        for (int g = 0; g < G; g++) {
            float mb = __shfl_xor_sync(0xFFFFFFFFu, m[g], off);
            float lb = __shfl_xor_sync(0xFFFFFFFFu, l[g], off);
            float ob[E];
#pragma unroll
            for (int e = 0; e < E; e++)
                ob[e] = __shfl_xor_sync(0xFFFFFFFFu, o[g][e], off);
            merge_state<E>(m[g], l[g], o[g], mb, lb, ob);
        }
    // then across warps, through shared memory
    __shared__ float sm_m[WARPS][G], sm_l[WARPS][G], sm_o[WARPS][G][KV_HEAD_DIM_MAX];
    if (sub == 0)
#pragma unroll
        for (int g = 0; g < G; g++) {
            if (part == 0)
                sm_m[warp][g] = m[g], sm_l[warp][g] = l[g];
#pragma unroll
            for (int e = 0; e < E; e++)
                sm_o[warp][g][d0 + e] = o[g][e];
        }
    __syncthreads();
    write_split<G>(sm_m, sm_l, sm_o, p.D, p.Hq, b, h, split, p.splits, p.part_o, p.part_m, p.part_l);
}

// ---------------------------------------------------------------------------
// The KIVI kernel (int4)

struct KiviParams {
    const uint8_t *k, *v;                   // keys (B,H,C/32,D,16); values (B,H,C,D/2)
    const uint16_t *k_scale, *k_zero;       // (B,H,C/32,D)
    const uint16_t *v_scale, *v_zero;       // (B,H,C,D/32)
    const uint16_t *k_res, *v_res;          // (B,H,R+32,D) BF16
    const float *q;
    float *part_o, *part_m, *part_l;
    int Hkv, Hq, D, cap, len, quantized, res_cap, chunk, splits;
};

template <int G>
__global__ void __launch_bounds__(THREADS) kivi_kernel(KiviParams p)
{
    constexpr int EV = KV_HEAD_DIM_MAX / 32;  // value dimensions a lane at most
    const int split = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int D = p.D, ev = D / 32;         // dimensions each lane owns for values
    const size_t bh = (size_t)b * p.Hkv + h;
    __shared__ float qs[G][KV_HEAD_DIM_MAX];
    const float scale = rsqrtf((float)D);
    for (int i = threadIdx.x; i < G * D; i += THREADS)
        qs[i / D][i % D] = p.q[((size_t)b * p.Hq + h * G + i / D) * D + i % D] * scale;
    __syncthreads();

    float m[G], l[G], o[G][EV];
#pragma unroll
    for (int g = 0; g < G; g++) {
        m[g] = -INFINITY, l[g] = 0;
#pragma unroll
        for (int e = 0; e < EV; e++)
            o[g][e] = 0;
    }
    const bool residual = split == p.splits - 1;
    int t0, t1;
    if (residual)
        t0 = p.quantized, t1 = p.len;
    else
        t0 = split * p.chunk, t1 = min(p.quantized, t0 + p.chunk);
    for (int base = t0 + warp * 32; base < t1; base += WARPS * 32) {
        const int t = base + lane;
        const bool valid = t < t1;
        float s[G];
#pragma unroll
        for (int g = 0; g < G; g++)
            s[g] = 0;
        if (!residual) {                    // channel-major keys, one lane per token
            const size_t grp = bh * (p.cap / 32) + base / 32;
            const uint8_t *kg = p.k + grp * D * 16;
            for (int d = 0; d < D; d++) {
                uint8_t byte = __ldg(kg + d * 16 + lane / 2);
                float z = h2f(__ldg(p.k_zero + grp * D + d)), sc = h2f(__ldg(p.k_scale + grp * D + d));
                float kv = z + sc * (float)((byte >> (4 * (lane & 1))) & 0xF);
#pragma unroll
                for (int g = 0; g < G; g++)
                    s[g] = fmaf(qs[g][d], kv, s[g]);
            }
        } else if (valid) {                 // BF16 residual rows
            const uint16_t *kr = p.k_res + (bh * p.res_cap + (t - p.quantized)) * D;
            for (int d = 0; d < D; d++) {
                float kv = __uint_as_float((uint32_t)__ldg(kr + d) << 16);
#pragma unroll
                for (int g = 0; g < G; g++)
                    s[g] = fmaf(qs[g][d], kv, s[g]);
            }
        }
        float pw[G];
#pragma unroll
        for (int g = 0; g < G; g++) {
            float sv = valid ? s[g] : -INFINITY, mx = sv;
            for (int off = 16; off; off >>= 1)
                mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, off));
            float mn = fmaxf(m[g], mx), a = __expf(m[g] - mn);
            pw[g] = valid ? __expf(sv - mn) : 0;
            float sum = pw[g];
            for (int off = 16; off; off >>= 1)
                sum += __shfl_xor_sync(0xFFFFFFFFu, sum, off);
            l[g] = l[g] * a + sum;
#pragma unroll
            for (int e = 0; e < EV; e++)
                o[g][e] *= a;
            m[g] = mn;
        }
        // values: every lane owns dimensions lane * ev .. + ev - 1
        const int n_tok = min(32, t1 - base);
        for (int j = 0; j < n_tok; j++) {
            float vv[EV];
            const int tj = base + j;
            if (!residual) {
                const size_t vi = bh * p.cap + tj;
                const int d0 = lane * ev;
                const uint8_t *vb = p.v + vi * D / 2 + d0 / 2;
                float z = h2f(__ldg(p.v_zero + vi * (D / 32) + d0 / 32));
                float sc = h2f(__ldg(p.v_scale + vi * (D / 32) + d0 / 32));
#pragma unroll
                for (int e = 0; e < EV; e++)
                    if (e < ev) {
                        uint8_t byte = __ldg(vb + e / 2);
                        vv[e] = z + sc * (float)((byte >> (4 * (e & 1))) & 0xF);
                    }
            } else {
                const uint16_t *vr = p.v_res + (bh * p.res_cap + (tj - p.quantized)) * D + lane * ev;
#pragma unroll
                for (int e = 0; e < EV; e++)
                    if (e < ev)
                        vv[e] = __uint_as_float((uint32_t)__ldg(vr + e) << 16);
            }
#pragma unroll
            for (int g = 0; g < G; g++) {
                float pj = __shfl_sync(0xFFFFFFFFu, pw[g], j);
#pragma unroll
                for (int e = 0; e < EV; e++)
                    if (e < ev)
                        o[g][e] = fmaf(pj, vv[e], o[g][e]);
            }
        }
    }
    // across warps
    __shared__ float sm_m[WARPS][G], sm_l[WARPS][G], sm_o[WARPS][G][KV_HEAD_DIM_MAX];
#pragma unroll
    for (int g = 0; g < G; g++) {
        if (lane == 0)
            sm_m[warp][g] = m[g], sm_l[warp][g] = l[g];
#pragma unroll
        for (int e = 0; e < EV; e++)
            if (e < ev)
                sm_o[warp][g][lane * ev + e] = o[g][e];
    }
    __syncthreads();
    write_split<G>(sm_m, sm_l, sm_o, D, p.Hq, b, h, split, p.splits, p.part_o, p.part_m, p.part_l);
}

// ---------------------------------------------------------------------------
// Merging the slices: out = sum_s o_s e^(m_s - M) / sum_s l_s e^(m_s - M)

// On sm_90 and later the merge is launched as a programmatic dependent of
// the attention kernel. The tensor-core kernels release it as each block
// starts (release_dependents, their first statement: a new one must do the
// same): once every attention block runs, the merge's blocks are placed
// where there is room (at batch 1, beside them) and wait here until the
// partial rows are written. After the FP32 kernels, which do not release
// it, it starts as they end.
__device__ __forceinline__ void wait_for_primary()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void release_dependents()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// One block a query row, one thread a channel. The splits are taken RUN at
// a time, all their loads issued together (they depend on nothing), so a
// run waits for memory once; runs after the first rescale what came before
// to the new maximum. The launch picks RUN (MERGE_RUNS): a run's RUN slots
// are all issued, those past the last split predicated off.
template <int RUN>
__global__ void merge_kernel(const float *part_o, const float *part_m, const float *part_l,
                             float *out, int splits, int D)
{
    wait_for_primary();
    const size_t row = blockIdx.x;
    const float *pm = part_m + row * splits, *pl = part_l + row * splits;
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        const float *po = part_o + row * splits * D + d;
        float M = -INFINITY, L = 0, O = 0;
        for (int s0 = 0; s0 < splits; s0 += RUN) {
            float m[RUN], l[RUN], o[RUN];
#pragma unroll
            for (int i = 0; i < RUN; i++) {
                const bool in = s0 + i < splits;
                m[i] = in ? pm[s0 + i] : -INFINITY;
                l[i] = in ? pl[s0 + i] : 0;
                o[i] = in ? po[(size_t)(s0 + i) * D] : 0;
            }
            float mx = M;
#pragma unroll
            for (int i = 0; i < RUN; i++)
                mx = fmaxf(mx, m[i]);
            if (mx == -INFINITY)                // no tokens in these splits yet
                continue;
            const float a = __expf(M - mx);     // 0 while M is -inf
            L *= a, O *= a;
#pragma unroll
            for (int i = 0; i < RUN; i++) {
                const float w = __expf(m[i] - mx);      // 0 for an empty split (its o is 0)
                L += l[i] * w, O += o[i] * w;
            }
            M = mx;
        }
        out[row * D + d] = L > 0 ? O / L : 0;
    }
}


// ---------------------------------------------------------------------------
// The tensor-core kernel (every format but int4, D 64 or 128, up to 8 query
// heads per KV head): q.k and p.v as mma.sync m16n8k16 with FP16 or BF16
// operands (Op) and FP32 accumulators. The GQA group's query heads are the
// 16 rows of A (rows past G are zero), 16 tokens a tile, each warp its own
// tiles, staged in shared memory by cp.async: BF16 tiles as they are (the
// BF16 kernel), the others as codes converted on their way into the MMA
// fragments (the code kernel). The probabilities leave the q.k accumulators
// in exactly the A layout p.v needs (FlashAttention 2's register reuse).

#define MMA_PAD 8                           // bf16 elements of padding per row

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *(uint32_t *)&v;
}

__device__ __forceinline__ uint32_t pack_f16(float lo, float hi)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *(uint32_t *)&v;
}

// FP8 and INT8 codes, and E2M1 times an E4M3 block scale over 256 (2^-18 to
// 10.5, six significant bits at most, so exact even where FP16 is
// subnormal), are exact in FP16, which keeps 10 bits of
// the query and probabilities; MXFP4 uses BF16 for its range (E2M1 times an
// E8M0 scale can be 2^-128 or 2^128).
template <int FMT>
struct Op {
    static constexpr bool F16 = FMT == KV_FP8 || FMT == KV_INT8 || FMT == KV_NVFP4;
};

template <bool F16>
__device__ __forceinline__ uint32_t pack_op(float lo, float hi)
{
    return F16 ? pack_f16(lo, hi) : pack_bf16(lo, hi);
}

template <bool F16>
__device__ __forceinline__ void mma_16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    if (F16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// FP8 path A: m16n8k32 with E4M3 operands and FP32 accumulators (sm_89 and
// later; the host never launches it on older GPUs).
__device__ __forceinline__ void mma_e4m3(float c[4], uint32_t a0, uint32_t a2, uint32_t b0, uint32_t b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
#else
    __trap();
#endif
}

// Four floats as four E4M3 codes (bytes 0-3), rounded to nearest, saturating.
__device__ __forceinline__ uint32_t e4m3x4(float a, float b, float c, float d)
{
    uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3);
    uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(c, d), __NV_SATFINITE, __NV_E4M3);
    return lo | hi << 16;
}

// (x & mask) | y as one LOP3: written as two operations, the compiler
// keeps them two when y is a constant too.
__device__ __forceinline__ uint32_t and_or(uint32_t x, uint32_t mask, uint32_t y)
{
    uint32_t d;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(d) : "r"(x), "r"(mask), "r"(y));
    return d;
}

// Eight E2M1 codes, two stored words (kv_attn.h) as the low and high half
// of w, as four operand pairs (k, k + 4): code k of each word with its sign
// at bit 15 and its three magnitude bits (e1 e0 m) at MAG + 2 .. MAG, where
// they are the operand's two low exponent bits and its first mantissa bit.
// FP16 (MAG 9) then reads 2^-14 times the E2M1 value, BF16 (MAG 6) 2^-126
// times it, with their own bias, subnormals (0 and 0.5) included. A code
// whose sign and magnitude lie the same distance from there takes one
// shift and one mask, nvfp4's code 0 only the mask. One whose sign and
// magnitude both move left, by different distances, is masked alone and
// multiplied by the sum of the two powers of two: the two copies it adds
// share no bit (so nothing carries) and each leaves nothing in the other's
// field, so a mask keeps the magnitude of one and the sign of the other
// (three operations; nvfp4's codes 2 and 3). The rest take a shift each
// and two logic operations.
template <KvFormat F>
__device__ __forceinline__ void e2m1x8(uint32_t w, uint32_t out[4])
{
    constexpr int MAG = F == KV_NVFP4 ? 9 : 6;
    constexpr uint32_t SIGNS = 0x80008000u, MAGS = 0x70007u << MAG;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int s = (int)kv_e2m1_sign_at(F, k), p = (int)kv_e2m1_mag_at(F, k);
        const int d = MAG - p, e = 15 - s;
        const uint32_t code = 0x10001u << s | 0x70007u << p;
        const bool apart = d > 0 && e > 0 && ((code << d) & (code << e)) == 0 &&
                           ((code << d) & SIGNS) == 0 && ((code << e) & MAGS) == 0;
        const uint32_t mag = d >= 0 ? w << d : w >> -d;
        if (d == e)
            out[k] = mag & (SIGNS | MAGS);
        else if (apart)
            out[k] = ((w & code) * ((1u << d) + (1u << e))) & (SIGNS | MAGS);
        else
            out[k] = and_or(e >= 0 ? w << e : w >> -e, SIGNS, mag & MAGS);
    }
}

// Four E4M3 codes (the bytes of w) as FP16 pairs (0, 2) and (1, 3) of a
// 256th of their values: each code moved to the high byte of a half, then
// exponent and mantissa shifted down one bit beside the sign.
__device__ __forceinline__ void e4m3x4_f16(uint32_t w, uint32_t out[2])
{
    const uint32_t lo = w << 8;
    out[0] = (lo & 0x80008000u) | ((lo >> 1) & 0x3F803F80u);
    out[1] = (w & 0x80008000u) | ((w >> 1) & 0x3F803F80u);
}

// Four E4M3 codes as FP16 pairs (0, 1) and (2, 3), the pairs the code
// kernel reads (to_pairs): where the GPU converts E4M3 itself (sm_89 on),
// each half of the word is a pair, converted as it lies, with their values;
// elsewhere the bytes are paired for e4m3x4_f16, a 256th of their values.
// E4M3_UNIT is what an operand holds of its code's value.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define E4M3_UNIT 1.0f
__device__ __forceinline__ void e4m3x4_pairs(uint32_t w, uint32_t out[2])
{
    asm("{\n .reg .b16 lo, hi;\n mov.b32 {lo, hi}, %2;\n"
        " cvt.rn.f16x2.e4m3x2 %0, lo;\n cvt.rn.f16x2.e4m3x2 %1, hi;\n}\n"
        : "=r"(out[0]), "=r"(out[1])
        : "r"(w));
}
#else
#define E4M3_UNIT (1.0f / 256)
__device__ __forceinline__ void e4m3x4_pairs(uint32_t w, uint32_t out[2])
{
    e4m3x4_f16(__byte_perm(w, 0, 0x3120), out);
}
#endif

// Four INT8 codes as FP16 pairs (0, 1) and (2, 3): 1024 + 128 + x, less 1152.
__device__ __forceinline__ void int8x4_f16(uint32_t w, uint32_t out[2])
{
    const uint32_t x = w ^ 0x80808080u;
    const __half2 bias = __floats2half2_rn(1152.0f, 1152.0f);
#pragma unroll
    for (int i = 0; i < 2; i++) {
        uint32_t h = __byte_perm(x, 0x64u, i ? 0x4342 : 0x4140);
        __half2 v = __hsub2(*(__half2 *)&h, bias);
        out[i] = *(uint32_t *)&v;
    }
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *smem)
{
    unsigned addr = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// A shared-memory address as the shared window numbers it. The code and
// KIVI kernels take their ring's once: converted inside the loop, every
// tile read the block's window base again (S2UR) and waited for it. (The
// BF16 kernel so changed measured slower at batch 16; it converts.)
__device__ __forceinline__ unsigned shared_at(const void *smem) { return (unsigned)__cvta_generic_to_shared(smem); }

// 16 bytes from global to shared, or zeros when `bytes` is 0 (rows past the end).
__device__ __forceinline__ void cp_async16(unsigned addr, const void *gmem, int bytes)
{
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(addr), "l"(gmem), "r"(bytes));
}

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int bytes)
{
    cp_async16(shared_at(smem), gmem, bytes);
}

// 4 bytes, of which the first `bytes` are copied and the rest zeroed.
__device__ __forceinline__ void cp_async4(unsigned addr, const void *gmem, int bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(addr), "l"(gmem), "r"(bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// The offset of the stage after the one at `at`, in a ring of `stages`.
__device__ __forceinline__ int next_stage(int at, int stage, int stages)
{
    return at == (stages - 1) * stage ? 0 : at + stage;
}

// Stages one tile (16 tokens from t0, those >= end as zeros) of K and V.
template <int D>
__device__ __forceinline__ void stage_tile(const RowParams &p, size_t row0, int t0, int end,
                                           __nv_bfloat16 *ks, __nv_bfloat16 *vs, int lane)
{
    constexpr int CHUNKS = D / 8;           // 16-byte pieces per row
    for (int i = lane; i < MMA_TILE * CHUNKS; i += 32) {
        int r = i / CHUNKS, c = i % CHUNKS, t = t0 + r;
        int bytes = t < end ? 16 : 0;
        size_t src = ((row0 + (t < end ? t : t0)) * D + c * 8) * 2;
        cp_async16(ks + r * (D + MMA_PAD) + c * 8, p.k + src, bytes);
        cp_async16(vs + r * (D + MMA_PAD) + c * 8, p.v + src, bytes);
    }
}

// q / sqrt(D) as the two A-fragment words of each k16 step (pack_q); rows
// past the group (`row` false) are zero. The pairs of channels each word
// holds, as load_q reads them from head g's row:
//  - Q_NATURAL: 16 kk + 2 tig + {0, 1} and + {8, 9} (the BF16 and KIVI
//    kernels);
//  - Q_BY4: of the lane's D/4 channels from tig D/4, (0, 1) and (2, 3) of
//    the four from 4 kk (the code kernel's FP8 and INT8);
//  - Q_BY8: of the same channels, (k, k + 4) and (k + 1, k + 5) of the
//    eight from 8 (kk / 2), k = 2 (kk % 2) (its E2M1).
enum QOrder { Q_NATURAL, Q_BY4, Q_BY8 };

// The D/4 floats of q the lane (g, tig) of KV head h, sequence b packs,
// r[4 kk] .. r[4 kk + 3] the two pairs of step kk (rows g >= G read head
// 0's and are zeroed by pack_q). Loaded before the first tiles are staged
// and packed after: behind the tiles of every SM, the loads of q took
// longer than the first tile, and at batch 1 that wait was a tenth of the
// kernel.
template <int D, int G, QOrder ORDER>
__device__ __forceinline__ void load_q(const RowParams &p, int b, int h, int g, int tig, float *r)
{
    constexpr int d1 = ORDER == Q_BY8 ? 4 : 1;
    constexpr int d2 = ORDER == Q_NATURAL ? 8 : ORDER == Q_BY4 ? 2 : 1;
    const float *x = p.q + ((size_t)b * p.Hq + h * G + (g < G ? g : 0)) * D;
    x += ORDER == Q_NATURAL ? 0 : tig * (D / 4);
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        const float *y = x + (ORDER == Q_NATURAL ? 16 * kk + 2 * tig : ORDER == Q_BY4 ? 4 * kk
                                                                                       : 8 * (kk / 2) + 2 * (kk % 2));
        r[4 * kk] = y[0], r[4 * kk + 1] = y[d1], r[4 * kk + 2] = y[d2], r[4 * kk + 3] = y[d2 + d1];
    }
}

template <int D, bool F16>
__device__ __forceinline__ void pack_q(const float *r, float scale, bool row, uint32_t (*qa)[2])
{
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        qa[kk][0] = row ? pack_op<F16>(r[4 * kk] * scale, r[4 * kk + 1] * scale) : 0;
        qa[kk][1] = row ? pack_op<F16>(r[4 * kk + 2] * scale, r[4 * kk + 3] * scale) : 0;
    }
}

template <int N>
__device__ __forceinline__ void zero_acc(float (*o)[4])
{
#pragma unroll
    for (int j = 0; j < N; j++)
        o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0;
}

// o *= the factor of its head for the heads-as-columns layout (COLS in
// finish_block): lane (g, tig) holds heads 2 tig and 2 tig + 1, whose
// factors the lanes of quads 2 tig and 2 tig + 1 hold. SKIP: not when no
// head of the warp has a new reference maximum (every factor is exactly
// 1), as is usual after the first tiles and nearly always with LAZY
// (softmax_step).
template <int N, bool SKIP>
__device__ __forceinline__ void rescale_cols(float (*o)[4], float alpha, int tig)
{
    if (SKIP && !__any_sync(0xFFFFFFFFu, alpha != 1.0f))
        return;
    const float a0 = __shfl_sync(0xFFFFFFFFu, alpha, 8 * tig), a1 = __shfl_sync(0xFFFFFFFFu, alpha, 8 * tig + 4);
#pragma unroll
    for (int j = 0; j < N; j++)
        o[j][0] *= a0, o[j][1] *= a1, o[j][2] *= a0, o[j][3] *= a1;
}

// A warp's softmax state after its last tile goes to shared memory (the
// tile buffers, free by then), where write_split merges the warps. Rows
// (the BF16 kernel): lane (g, tig) holds head g, channels col(j, 2 tig)
// and col(j, 2 tig + 1) of n-tile j, where col is the kernel's channel
// order. COLS (the code and KIVI kernels, values as A): heads 2 tig and
// 2 tig + 1 of m-tile j, o[j][2 r + i] head 2 tig + i, channel col(j, r).
template <int D, int G, bool COLS = false, typename Col>
__device__ __forceinline__ void finish_block(const RowParams &p, const float (*o)[4], float m, float l,
                                             float v_scale, Col col)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, tig = lane & 3;
    wait_for_primary();                     // KIVI: the residual window's kernel (no-op elsewhere)
    cp_async_wait<0>();
    __syncthreads();
    float (*sm_m)[G] = (float (*)[G])smem_raw;
    float (*sm_l)[G] = (float (*)[G])(smem_raw + WARPS * G * sizeof(float));
    float (*sm_o)[G][KV_HEAD_DIM_MAX] = (float (*)[G][KV_HEAD_DIM_MAX])(smem_raw + 2 * WARPS * G * sizeof(float));
    if (g < G && tig == 0)
        sm_m[warp][g] = m, sm_l[warp][g] = l;
    if (COLS) {
#pragma unroll
        for (int j = 0; j < D / 16; j++)
#pragma unroll
            for (int i = 0; i < 2; i++)
                if (2 * tig + i < G)
                    sm_o[warp][2 * tig + i][col(j, 0)] = o[j][i] * v_scale,
                    sm_o[warp][2 * tig + i][col(j, 1)] = o[j][2 + i] * v_scale;
    } else if (g < G) {
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            sm_o[warp][g][col(j, tig * 2)] = o[j][0] * v_scale;
            sm_o[warp][g][col(j, tig * 2 + 1)] = o[j][1] * v_scale;
        }
    }
    __syncthreads();
    write_split<G>(sm_m, sm_l, sm_o, D, p.Hq, blockIdx.z, blockIdx.y, blockIdx.x + p.split0, p.splits,
                   p.part_o, p.part_m, p.part_l);
}

// e^x on the SFU, results below 2^-126 flushed to zero: x <= 0 here, and a
// probability that small beside the row's largest adds nothing to its sums.
// (__expf keeps them, at three more instructions a call.)
__device__ __forceinline__ float exp_ftz(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x * 1.4426950408889634f));
    return y;
}

// Online softmax of row g over a tile: s4 holds the lane's N scores
// (-inf past the end), whose row is spread over the four lanes of a
// quad. Updates m and l, leaves the probabilities in s4 and returns the
// factor the accumulator is rescaled by. LAZY: m, the reference the
// probabilities are taken against, moves only when the tile's maximum
// passes it by more than 8 ln 2, so that probabilities reach up to 256
// (exact enough in FP16 and BF16, which hold them to 2^-11 and 2^-8 of
// themselves as they do below 1) and the factor is exactly 1, the
// rescale skipped, on all but a few tiles; for kernels whose value
// operands are bounded (the KIVI kernel's FP16), where 256 times them
// cannot overflow.
template <int N = 4, bool LAZY = false>
__device__ __forceinline__ float softmax_step(float s4[N], float &m, float &l)
{
    float mx = s4[0];
#pragma unroll
    for (int i = 1; i < N; i++)
        mx = fmaxf(mx, s4[i]);
    mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 2));
    const float mn = LAZY ? (mx > m + 5.5451774f ? mx : m) : fmaxf(m, mx);
    float alpha = exp_ftz(m - mn), sum = 0;
#pragma unroll
    for (int i = 0; i < N; i++)
        sum += (s4[i] = exp_ftz(s4[i] - mn));
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1);
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 2);
    l = l * alpha + sum;
    m = mn;
    return alpha;
}

// The BF16 kernel: tiles staged by cp.async, two deep per warp, rows padded
// by 16 bytes so that neither the B-fragment loads nor ldmatrix.trans
// conflict on banks.
template <int D, int G>
__global__ void __launch_bounds__(THREADS) bf16_kernel(RowParams p)
{
    release_dependents();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int split = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, tig = lane & 3;            // fragment row and column pair
    const int start = split * p.chunk, end = min(p.len, start + p.chunk);
    constexpr int ROW = D + MMA_PAD, TILE_ELEMS = MMA_TILE * ROW;
    constexpr int S = KV_BF16_STAGES;
    __nv_bfloat16 *wbuf = (__nv_bfloat16 *)smem_raw + warp * S * 2 * TILE_ELEMS;  // K0 V0 K1 V1 ...
    const size_t row0 = ((size_t)b * p.Hkv + h) * p.cap;
    const int stride = WARPS * MMA_TILE;
    int t0 = start + warp * MMA_TILE;
    float qr[D / 4];
    load_q<D, G, Q_NATURAL>(p, b, h, g, tig, qr);
#pragma unroll
    for (int s = 0; s < S - 1; s++) {
        __nv_bfloat16 *nk = wbuf + s * 2 * TILE_ELEMS;
        if (t0 + s * stride < end)
            stage_tile<D>(p, row0, t0 + s * stride, end, nk, nk + TILE_ELEMS, lane);
        cp_async_commit();
    }

    // q as A fragments, scaled by 1/sqrt(D): rows g < G, zero elsewhere
    uint32_t qa[D / 16][2];
    pack_q<D, false>(qr, rsqrtf((float)D), g < G, qa);
    float o[D / 8][4];
    zero_acc<D / 8>(o);
    float m = -INFINITY, l = 0;

    for (int it = 0; t0 < end; t0 += stride, it++) {
        __nv_bfloat16 *ks = wbuf + it % S * 2 * TILE_ELEMS, *vs = ks + TILE_ELEMS;
        if (t0 + (S - 1) * stride < end) {  // a later tile goes in while this one is used
            __nv_bfloat16 *nk = wbuf + (it + S - 1) % S * 2 * TILE_ELEMS;
            stage_tile<D>(p, row0, t0 + (S - 1) * stride, end, nk, nk + TILE_ELEMS, lane);
        }
        cp_async_commit();
        cp_async_wait<S - 1>();
        __syncwarp();
        // s = q.k for tokens t0 .. t0 + 15: two n-tiles of 8 tokens
        float sc[2][4];
#pragma unroll
        for (int n = 0; n < 2; n++) {
            sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0;
            const __nv_bfloat16 *kr = ks + (n * 8 + g) * ROW + tig * 2;
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++) {
                uint32_t a[4] = {qa[kk][0], 0, qa[kk][1], 0};
                mma_16816<false>(sc[n], a, *(const uint32_t *)(kr + kk * 16), *(const uint32_t *)(kr + kk * 16 + 8));
            }
        }
        float s4[4];
#pragma unroll
        for (int n = 0; n < 2; n++)
#pragma unroll
            for (int i = 0; i < 2; i++)
                s4[n * 2 + i] = t0 + n * 8 + tig * 2 + i < end ? sc[n][i] : -INFINITY;
        const float alpha = softmax_step(s4, m, l);
        uint32_t pa[4] = {pack_bf16(s4[0], s4[1]), 0, pack_bf16(s4[2], s4[3]), 0};
        // o = o * alpha + p.v, V's B fragments by ldmatrix.trans, two n-tiles at a time
#pragma unroll
        for (int j = 0; j < D / 8; j += 2) {
            uint32_t bv[4];
            const int mat = lane >> 3, r = lane & 7;
            ldmatrix_x4_trans(bv, vs + ((mat & 1) * 8 + r) * ROW + j * 8 + (mat >> 1) * 8);
#pragma unroll
            for (int jj = 0; jj < 2; jj++) {
                o[j + jj][0] *= alpha;
                o[j + jj][1] *= alpha;
                mma_16816<false>(o[j + jj], pa, bv[jj * 2], bv[jj * 2 + 1]);
            }
        }
        __syncwarp();
    }
    finish_block<D, G>(p, o, m, l, 1.0f, [](int j, int c) { return j * 8 + c; });
}

// ---------------------------------------------------------------------------
// The code kernel (fp8, int8, nvfp4, mxfp4): the codes are staged as they
// are, by cp.async, several tiles ahead per warp, and each lane turns the
// bytes it reads from shared memory straight into its MMA fragments, so
// nothing converted goes back to memory and many loads are in flight.
//
// The order of channels and of tokens inside a tile is free as long as q,
// the keys, the probabilities and the values agree on it. It is chosen so
// that a lane's fragments come from contiguous bytes:
//  - q.k: lane (g, tig) reads the D/4 channels from tig * D/4 of one key
//    row, in the pairs its conversions produce: FP8 and INT8, each four
//    consecutive channels c0..c3 one k16 step, b0 = (c0, c1) and b1 =
//    (c2, c3); E2M1, each eight two steps, (c0, c4), (c1, c5), then
//    (c2, c6), (c3, c7). q is packed in the same order (pack_q). Path A
//    takes the bytes as they are, 32 channels an m16n8k32 step.
//  - the key row lane g reads for n-tile n is token 4 (g / 2) + 2 (g % 2)
//    + n, so the four scores of lane (g, tig) are tokens 4 tig .. 4 tig + 3:
//    column 2 tig + i of n-tile n is token 4 tig + 2 i + n.
//  - p.v, the values as A and the probabilities as B: lane (g, tig)
//    reads value rows 4 tig .. 4 tig + 3, the D/8 channels from g * D/8;
//    a0 and a1 = tokens (4 tig, 4 tig + 2) and a2 and a3 = (4 tig + 1,
//    4 tig + 3) of its channels 2 j and 2 j + 1 (rows g and g + 8 of
//    m-tile j), which is where those probabilities sit in B (its column g
//    is head g, as the scores of row g lie). Rows 0 and 2 (1 and 3) are
//    interleaved before conversion (Codes::MIX_LO, MIX_HI: byte by byte
//    for FP8 and INT8, by groups of four codes for E2M1), so each pair a
//    conversion makes is two tokens of one channel.
// Tiles are unpadded and their 16-byte chunks XOR-swizzled (chunk_at) so
// that the eight lanes of a quarter warp hit different banks in both reads.

// Tiles in flight a warp: 12 KiB of codes, at most eight tiles, so that
// four blocks fit an SM's shared memory (48 KiB each, INT8's 49 with its
// scales; the code kernel's registers, 117-128 a thread at D 128, allow
// four as well). The KIVI kernel's groups count alike: two in flight at
// D 128, one in use and one loading. INT8's
// per-token scales ride with their tile (CODE_SCALES bytes: K's, then V's,
// each the 4-byte words that cover 16 FP16 scales).
#define CODE_SCALES 96

__host__ __device__ constexpr int code_stages(int stage_bytes)
{
    return 12288 / stage_bytes < 8 ? 12288 / stage_bytes : 8;
}

__host__ __device__ constexpr int code_stage_bytes(int fmt, int D)
{
    return 2 * MMA_TILE * (fmt == KV_NVFP4 || fmt == KV_MXFP4 ? D / 2 : D) +
           (fmt == KV_INT8 ? CODE_SCALES : 0);
}

template <int FMT, int D>
struct Codes {
    static constexpr bool FP4 = FMT == KV_NVFP4 || FMT == KV_MXFP4;
    static constexpr int ROW = FP4 ? D / 2 : D;                  // bytes of a token's codes
    static constexpr int CH = ROW / 16;                          // their 16-byte chunks
    static constexpr int TILE = MMA_TILE * ROW;                  // bytes of K (or V) a tile
    static constexpr int STAGE = code_stage_bytes(FMT, D);
    static constexpr int STAGES = code_stages(2 * TILE);
    static constexpr int KB = ROW / 4, VB = ROW / 8;             // bytes a lane reads of a K, V row
    static constexpr int EPW = FP4 ? 8 : 4;                      // codes a 32-bit word
    static constexpr int BS = KV_FP4_BLOCK(FMT);                 // E2M1 block
    static constexpr int NB = D / BS;                            // E2M1 block scales a row
    // byte permutes that interleave the low (high) halves of two value
    // words, a token's codes in each, so that to_pairs pairs the tokens:
    // byte by byte (FP8, INT8), or by groups of four codes (E2M1)
    static constexpr unsigned MIX_LO = FP4 ? 0x5410 : 0x5140, MIX_HI = FP4 ? 0x7632 : 0x7362;
};

template <int CH>
__device__ __forceinline__ int chunk_at(int r, int c)
{
    return r * CH + (c ^ ((((r >> 1) & 1) | ((r >> 1) & 6)) & (CH - 1)));
}

// N words (1, 2, 4 or 8) of row r of a tile from byte `off`.
template <int CH, int N>
__device__ __forceinline__ void lds(const uint8_t *tile, int r, int off, uint32_t *w)
{
#pragma unroll
    for (int i = 0; i < (N + 3) / 4; i++) {
        const uint8_t *a = tile + chunk_at<CH>(r, off / 16 + i) * 16 + off % 16;
        if (N >= 4) {
            const uint4 u = *(const uint4 *)a;
            w[4 * i] = u.x, w[4 * i + 1] = u.y, w[4 * i + 2] = u.z, w[4 * i + 3] = u.w;
        } else if (N == 2) {
            const uint2 u = *(const uint2 *)a;
            w[0] = u.x, w[1] = u.y;
        } else {
            w[0] = *(const uint32_t *)a;
        }
    }
}

// A lane's share of staging tiles: chunk lane % CH of rows lane / CH + R j
// (R = 32 / CH) of K and of V, which lie 512 j bytes on from k and v in
// global memory; a stride of tiles at a time. INT8's scale words come
// from row0 (see stage_codes); the E2M1 block scales a lane needs are read
// a tile ahead (TileScales) from kb (its two key rows, token 4 (g / 2) +
// 2 (g % 2) + n, at their blocks of its D/4 channels) and vb (its four
// value rows, 4 tig + i, at the block of its D/8 channels), NB bytes a row.
struct CodeCopy {
    const uint8_t *k, *v, *kb, *vb;
};

template <int FMT, int D>
__device__ __forceinline__ CodeCopy code_copy(const RowParams &p, size_t row0, int t0, int lane)
{
    using C = Codes<FMT, D>;
    const int g = lane >> 2, tig = lane & 3;
    const size_t at = (row0 + t0 + lane / C::CH) * C::ROW + 16 * (lane % C::CH);
    CodeCopy cp = {p.k + at, p.v + at, nullptr, nullptr};
    if (C::FP4) {
        cp.kb = p.k_block + (row0 + t0 + 4 * (g >> 1) + 2 * (g & 1)) * C::NB + tig * (D / 4) / C::BS;
        cp.vb = p.v_block + (row0 + t0 + 4 * tig) * C::NB + g * (D / 8) / C::BS;
    }
    return cp;
}

// Stages the tile at cp (16 tokens from t0, those >= end as zeros) and
// moves cp a stride on.
template <int FMT, int D>
__device__ __forceinline__ void stage_codes(const RowParams &p, size_t row0, int t0, int end, CodeCopy &cp,
                                            unsigned buf, int lane)
{
    using C = Codes<FMT, D>;
    constexpr int R = 32 / C::CH, J = MMA_TILE / R;             // rows apart; chunks a lane of K (and of V)
    const int lr = lane / C::CH, c = lane % C::CH;
    // a whole tile without the end checks: written as one loop with `in`
    // constant, the compiler merged the two paths' addressing and the code
    // kernels came out 8 to 40 instructions longer
    if (end - t0 >= MMA_TILE) {
#pragma unroll
        for (int j = 0; j < J; j++) {
            const int at = chunk_at<C::CH>(lr + R * j, c) * 16;
            cp_async16(buf + at, cp.k + 512 * j, 16);
            cp_async16(buf + C::TILE + at, cp.v + 512 * j, 16);
        }
    } else {
#pragma unroll
        for (int j = 0; j < J; j++) {
            const int at = chunk_at<C::CH>(lr + R * j, c) * 16;
            const bool in = lr + R * j < end - t0;
            const size_t back = in ? 0 : (size_t)(lr + R * j) * C::ROW;   // past the end: a row in range, no bytes read
            cp_async16(buf + at, cp.k + 512 * j - back, in ? 16 : 0);
            cp_async16(buf + C::TILE + at, cp.v + 512 * j - back, in ? 16 : 0);
        }
    }
    if (FMT == KV_INT8 && lane < 18) {      // nine words of scales each, zero from `end`
        const int which = lane / 9;
        const size_t first = (row0 + t0) * 2, last = (row0 + end) * 2,
                     at = (first & ~(size_t)3) + 4 * (lane % 9);
        const int bytes = at >= last ? 0 : last - at < 4 ? (int)(last - at) : 4;
        cp_async4(buf + 2 * C::TILE + which * (CODE_SCALES / 2) + 4 * (lane % 9),
                  (const uint8_t *)(which ? p.v_scale : p.k_scale) + (bytes ? at : first & ~(size_t)3),
                  bytes);
    }
    cp.k += WARPS * MMA_TILE * C::ROW, cp.v += WARPS * MMA_TILE * C::ROW;
}

// The E2M1 block scales of one tile a lane needs, loaded a tile ahead (zero
// past the end): the bytes of its two key rows (k[n]: the blocks of its D/4
// channels) and of its four value rows (v, byte i).
struct TileScales {
    uint32_t k[2], v;
};

// Loads the scales of the tile at cp (rows from t0) and moves cp a stride on.
template <int FMT, int D>
__device__ __forceinline__ void load_scales(int t0, int end, int g, int tig, CodeCopy &cp, TileScales &s)
{
    using C = Codes<FMT, D>;
    s.k[0] = s.k[1] = s.v = 0;
    if (C::FP4) {
        constexpr int KBL = (D / 4 + C::BS - 1) / C::BS;        // blocks of a lane's D/4 channels
        const int rem = end - t0, rk = 4 * (g >> 1) + 2 * (g & 1);
#pragma unroll
        for (int n = 0; n < 2; n++)
            if (rk + n < rem)
                s.k[n] = KBL == 2 ? __ldg((const uint16_t *)(cp.kb + n * C::NB)) : __ldg(cp.kb + n * C::NB);
#pragma unroll
        for (int i = 0; i < 4; i++)
            if (4 * tig + i < rem)
                s.v |= (uint32_t)__ldg(cp.vb + i * C::NB) << (8 * i);
        cp.kb += WARPS * MMA_TILE * C::NB, cp.vb += WARPS * MMA_TILE * C::NB;
    }
}

// MXFP4's block scales for one tile. An E8M0 code c is 2^(c - 127); with
// the 2^126 that e2m1x8 leaves out for BF16 it is 2^(c - 1), which BF16
// holds only for c <= 128. So a tile's operands carry 2^(c - 1 - x), where
// x = max(0, cmax - 128) for the largest code cmax among the tile's key and
// value scales (0 unless some block's scale exceeds 2), and its scores and
// probabilities are multiplied by 2^x in FP32 instead; the factors'
// exponent fields, c + 126 - x, then lie in 0 .. 254 (0, a factor of zero,
// only for a block of 2^-127 in a tile that also holds one of 2^127).
// The factors are exact; a block more than 2^133 below the tile's largest
// becomes a BF16 subnormal operand, and zero below about 2^137, far under
// what FP32 sums of the larger ones keep. The cache never holds code 255
// (e8m0_from_exponent stops at 254), which would let x reach 127.
// Returns x; the bytes past the end are zeros and change nothing.
__device__ __forceinline__ int e8m0_tile_shift(const TileScales &s)
{
    uint32_t c = max(max(s.v & 0xFFu, s.v >> 8 & 0xFFu), max(s.v >> 16 & 0xFFu, s.v >> 24));
    c = max(c, max(s.k[0], s.k[1]));                // one byte each (a lane's D/4 channels <= a block)
    return max((int)__reduce_max_sync(0xFFFFFFFFu, c) - 128, 0);
}

// E8M0 block scale codes c as BF16 factors 2^(c - 1 - x), whose exponent
// field c + 126 - x stays below 255, so that no field carries into the
// next. e8m0_factor2: one code's factor in both halves; e8m0_fields: the
// fields of the codes in every byte of w, each to be moved to the low byte
// of a half and shifted up 7.
__device__ __forceinline__ uint32_t e8m0_factor2(uint32_t c, int x)
{
    return (c + 126 - x) * 0x10001u << 7;
}

__device__ __forceinline__ uint32_t e8m0_fields(uint32_t w, int x)
{
    return w + (126 - x) * 0x01010101u;
}

template <bool F16>
__device__ __forceinline__ uint32_t mul2(uint32_t a, uint32_t b)
{
    if (F16) {
        __half2 y = __hmul2(*(__half2 *)&a, *(__half2 *)&b);
        return *(uint32_t *)&y;
    }
    __nv_bfloat162 y = __hmul2(*(__nv_bfloat162 *)&a, *(__nv_bfloat162 *)&b);
    return *(uint32_t *)&y;
}

// A word of codes as operand pairs of elements (0, 1) and (2, 3) (FP8,
// INT8) or (k, k + 4) (E2M1, times the block scale pair s2).
template <int FMT>
__device__ __forceinline__ void to_pairs(uint32_t w, uint32_t s2, uint32_t *out)
{
    if (FMT == KV_FP8) {
        e4m3x4_pairs(w, out);
    } else if (FMT == KV_INT8) {
        int8x4_f16(w, out);
    } else {
        e2m1x8<(KvFormat)FMT>(w, out);
#pragma unroll
        for (int i = 0; i < 4; i++)
            out[i] = mul2<Op<FMT>::F16>(out[i], s2);
    }
}

template <int FMT, int D, int G, bool FA = false>
__global__ void __launch_bounds__(THREADS) code_kernel(RowParams p)
{
    release_dependents();
    using C = Codes<FMT, D>;
    constexpr bool F16 = Op<FMT>::F16;
    // The rescale skipped by a warp vote where no head's maximum moved: E2M1,
    // bound by its arithmetic (FP8 and INT8 measured slower with it). Not
    // the lazy softmax (the KIVI kernel's): its probabilities, up to 256,
    // times MXFP4's 2^x could overflow BF16 and, times the value scales,
    // NVFP4's FP32 output near FLT_MAX, as INT8's would overflow FP16.
    constexpr bool SKIP = C::FP4;
    constexpr int KW = C::KB / 4, VW = C::VB / 4, NP = C::EPW / 2, CPL = D / 8;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int split = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, tig = lane & 3;
    const int start = split * p.chunk, end = min(p.len, start + p.chunk);
    uint8_t *wbuf = smem_raw + warp * C::STAGES * C::STAGE;
    const size_t row0 = ((size_t)b * p.Hkv + h) * p.cap;
    const int stride = WARPS * MMA_TILE;
    int t0 = start + warp * MMA_TILE;
    // the lane's D/4 channels of q, in the keys' channel order
    float qr[D / 4];
    load_q<D, G, C::FP4 ? Q_BY8 : Q_BY4>(p, b, h, g, tig, qr);
    CodeCopy cp = code_copy<FMT, D>(p, row0, t0, lane);
    const unsigned sbuf = shared_at(wbuf);
#pragma unroll
    for (int s = 0; s < C::STAGES - 1; s++) {
        if (t0 + s * stride < end)
            stage_codes<FMT, D>(p, row0, t0 + s * stride, end, cp, sbuf + s * C::STAGE, lane);
        cp_async_commit();
    }
    TileScales cur;
    load_scales<FMT, D>(t0, end, g, tig, cp, cur);
    int read = 0, write = (C::STAGES - 1) * C::STAGE;     // the stages used and filled next

    const int ts = FMT == KV_FP8 && p.head_scales ? h : 0;     // NVFP4 has one per tensor
    // what an FP8 or NVFP4 operand holds of its value (E4M3_UNIT; E2M1 a
    // 256th, its block scale's bits moved) is made up in the scales
    const float code_scale = FMT == KV_FP8 ? 1.0f / E4M3_UNIT : FMT == KV_NVFP4 ? 256.0f : 1.0f;
    const float k_tensor = (FMT == KV_FP8 || FMT == KV_NVFP4) ? __ldg(p.k_tensor + ts) : 1.0f;
    const float v_tensor = ((FMT == KV_FP8 || FMT == KV_NVFP4) ? __ldg(p.v_tensor + ts) : 1.0f) * code_scale;
    const float scale = rsqrtf((float)D);
    float score_scale = k_tensor * code_scale;           // applied to q.k after the MMA
    // q scaled by 1/sqrt(D) as A fragments (rows g < G, zero elsewhere) in
    // the channel order of the key reads. Path A: in E4M3 with a scale per
    // head that maps its largest |q| to 448.
    uint32_t qa[D / 16][2];
    if (FA) {
        float amax = 0;
#pragma unroll
        for (int d = 0; d < D / 4; d++)
            amax = fmaxf(amax, fabsf(qr[d] * scale));
        amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
        amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 2));
        const float qs = amax > 0 ? 448.0f / amax : 1.0f, f = scale * qs;
        score_scale = k_tensor / qs;
#pragma unroll
        for (int kb = 0; kb < D / 32; kb++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const float *x = qr + kb * 8 + half * 4;    // channels 4 (2 kb + half) + 0 .. 3
                qa[kb][half] = g < G ? e4m3x4(x[0] * f, x[1] * f, x[2] * f, x[3] * f) : 0;
            }
    } else {
        pack_q<D, F16>(qr, scale, g < G, qa);
    }
    uint32_t q4[D / 32][4];                 // steps 2j (rows g) and 2j + 1 (rows g + 8)
#pragma unroll
    for (int j = 0; j < D / 32; j++)
        q4[j][0] = qa[2 * j][0], q4[j][1] = qa[2 * j + 1][0], q4[j][2] = qa[2 * j][1], q4[j][3] = qa[2 * j + 1][1];
    const int every = p.promote > 0 ? p.promote : D / 32;
    float o[D / 16][4];                     // m-tiles of 16 channels (values as A), heads as columns
    zero_acc<D / 16>(o);
    float m = -INFINITY, l = 0;

    for (; t0 < end; t0 += stride) {
        const int ahead = t0 + (C::STAGES - 1) * stride;
        if (ahead < end)                    // into the stage the last tile used
            stage_codes<FMT, D>(p, row0, ahead, end, cp, sbuf + write, lane);
        cp_async_commit();
        TileScales next;
        load_scales<FMT, D>(t0 + stride, end, g, tig, cp, next);
        cp_async_wait<C::STAGES - 1>();
        __syncwarp();
        const uint8_t *kt = wbuf + read, *vt = kt + C::TILE;
        read = next_stage(read, C::STAGE, C::STAGES), write = next_stage(write, C::STAGE, C::STAGES);

        // E2M1 block scales as operand pairs, both halves one block: keys
        // ks2[n][b] (block b of row n's channels), values vbs (the lane's
        // tokens 0 and 2, 1 and 3). NVFP4's E4M3 as FP16 (e4m3x4_pairs)
        // times 64 / E4M3_UNIT: a 256th of their values times the 2^14
        // e2m1x8 leaves out. MXFP4's as e8m0_factor2 over the tile's shift
        // (one block a row).
        uint32_t ks2[2][2], vbs[2] = {};
        float tile_scale = 1;
        if (FMT == KV_NVFP4) {
            const uint32_t unit = E4M3_UNIT == 1.0f ? 0x54005400u : 0x74007400u;   // 2^6 or 2^14
            uint32_t k[2][2], v[2];
            e4m3x4_pairs(cur.k[0], k[0]);
            e4m3x4_pairs(cur.k[1], k[1]);
            e4m3x4_pairs(cur.v, v);
#pragma unroll
            for (int n = 0; n < 2; n++) {
                const uint32_t both = mul2<true>(k[n][0], unit);   // blocks 0 and 1 in its halves
                ks2[n][0] = __byte_perm(both, 0, 0x1010), ks2[n][1] = __byte_perm(both, 0, 0x3232);
            }
            vbs[0] = mul2<true>(__byte_perm(v[0], v[1], 0x5410), unit);
            vbs[1] = mul2<true>(__byte_perm(v[0], v[1], 0x7632), unit);
        } else if (FMT == KV_MXFP4) {
            const int x = e8m0_tile_shift(cur);
            tile_scale = __int_as_float((127 + x) << 23);
            const uint32_t v = e8m0_fields(cur.v, x);
#pragma unroll
            for (int n = 0; n < 2; n++)
                ks2[n][0] = ks2[n][1] = e8m0_factor2(cur.k[n], x);
            vbs[0] = __byte_perm(v, 0, 0x4240) << 7, vbs[1] = __byte_perm(v, 0, 0x4341) << 7;
        }
        // s = q.k: n-tile n, column 2 tig + i is token 4 tig + 2 i + n. The
        // A fragments of k16 steps 2j and 2j + 1 share four registers (rows
        // g and g + 8), so even steps sum in the rows g of sc, odd ones in
        // the rows g + 8 of so, and what each adds to its other rows is not used.
        float sc[2][4], so[2][4];
#pragma unroll
        for (int n = 0; n < 2; n++) {
            sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0;
            so[n][0] = so[n][1] = so[n][2] = so[n][3] = 0;
            uint32_t kw[KW];
            lds<C::CH, KW>(kt, 4 * (g >> 1) + 2 * (g & 1) + n, tig * C::KB, kw);
            if constexpr (FA) {     // E4M3 MMAs, their FP32 sums added to sc every `every` blocks
                float part[4] = {0, 0, 0, 0};
#pragma unroll
                for (int kb = 0; kb < D / 32; kb++) {
                    mma_e4m3(part, qa[kb][0], qa[kb][1], kw[kb * 2], kw[kb * 2 + 1]);
                    if ((kb + 1) % every == 0 || kb == D / 32 - 1)
#pragma unroll
                        for (int i = 0; i < 4; i++)
                            sc[n][i] += part[i], part[i] = 0;
                }
            } else {
#pragma unroll
            for (int w = 0; w < KW; w++) {
                uint32_t s2 = 0, pr[NP];
                if (C::FP4)                 // the block of the lane's channels 8 w ..
                    s2 = ks2[n][w * 8 / C::BS];
                to_pairs<FMT>(kw[w], s2, pr);
#pragma unroll
                for (int hf = 0; hf < NP / 2; hf++) {
                    const int kk = w * (NP / 2) + hf;
                    mma_16816<F16>(kk % 2 ? so[n] : sc[n], q4[kk / 2], pr[2 * hf], pr[2 * hf + 1]);
                }
            }
            }
        }
        // the lane's tokens 4 tig + j: scores (INT8 times the key scale), probabilities
        float s4[4], vsc[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int t = t0 + 4 * tig + j;
            float kscale = score_scale * tile_scale;
            vsc[j] = tile_scale;
            if (FMT == KV_INT8) {           // from the words staged with the tile
                const uint8_t *sw = kt + 2 * C::TILE + ((row0 + t0) * 2 & 3) + 2 * (4 * tig + j);
                kscale *= h2f(*(const uint16_t *)sw);
                vsc[j] = h2f(*(const uint16_t *)(sw + CODE_SCALES / 2));
            }
            s4[j] = t < end ? (sc[j % 2][j / 2] + so[j % 2][j / 2 + 2]) * kscale : -INFINITY;
        }
        const float alpha = softmax_step(s4, m, l);
        // o += p.v with the values as A and the probabilities as B: B's k =
        // 2 tig + i (+ 8) is token 4 tig + 2 i (+ 1), its column g head g,
        // just where the scores of row g lie; o's columns are heads, so a
        // lane rescales by the factors of heads 2 tig and 2 tig + 1
        const uint32_t pb0 = pack_op<F16>(s4[0] * vsc[0], s4[2] * vsc[2]),
                       pb1 = pack_op<F16>(s4[1] * vsc[1], s4[3] * vsc[3]);
        rescale_cols<D / 16, SKIP>(o, alpha, tig);
        // the lane's four value rows, rows 0 and 2 (1 and 3) interleaved
        // first, so that each converted pair is two tokens of one channel
        // (bytes for FP8 and INT8, groups of four codes for E2M1): channels
        // c and c + 1 (c even) of the lane's D/8 are rows g and g + 8 of
        // m-tile c / 2
        uint32_t vw[4][VW];
#pragma unroll
        for (int i = 0; i < 4; i++)
            lds<C::CH, VW>(vt, 4 * tig + i, g * C::VB, vw[i]);
#pragma unroll
        for (int w = 0; w < VW; w++)
#pragma unroll
            for (int hi = 0; hi < 2; hi++) {
                uint32_t x[2][NP];
#pragma unroll
                for (int e = 0; e < 2; e++)
                    to_pairs<FMT>(__byte_perm(vw[e][w], vw[e + 2][w], hi ? C::MIX_HI : C::MIX_LO), vbs[e], x[e]);
#pragma unroll
                for (int k = 0; k < NP; k += 2) {   // channels w EPW + hi NP + k, + 1
                    const uint32_t a[4] = {x[0][k], x[0][k + 1], x[1][k], x[1][k + 1]};
                    mma_16816<F16>(o[(w * C::EPW + hi * NP + k) / 2], a, pb0, pb1);
                }
            }
        cur = next;
        __syncwarp();
    }
    finish_block<D, G, true>(p, o, m, l, v_tensor, [g](int j, int r) { return g * CPL + 2 * j + r; });
}

// ---------------------------------------------------------------------------
// The KIVI code kernel (int4 on tensor cores): a tile is one quantized
// group of 32 tokens, staged by cp.async as it is stored (keys a 16-byte
// row of 32 tokens per channel, their scales and minima per channel;
// values per token, their scales and minima per 32 channels). A 4-bit code
// q becomes an FP16 whose mantissa holds it, 1024 + q or 1024 + 16 q for
// keys (one logic operation: the bits stay where they lie), 16 + q for
// values (two: a shift and one logic operation), and the offset is taken
// back out of the sums:
//  - q.k: x = zero + scale q per channel, so q.x = q.zero - 1024 (q *
//    scale).1 + (q * scale).(1024 + q), the last over 16 where the code
//    sat 16 higher: one MMA a k16 step gives both group terms (rows g:
//    q * scale against -1024, rows g + 8: q against the minima), and the
//    same A fragments against the codes give the rest (rows g). A k16 step is channels
//    16 kk .. 16 kk + 15 in the standard layout. The key rows are B as
//    ldmatrix.trans reads them: the four tokens 4 g .. 4 g + 3 of a
//    channel are one 16-bit element, so one ldmatrix.x4 gives lane
//    (g, tig) channels 2 tig and 2 tig + 1 of four blocks of eight
//    channels (two k16 steps); n-tile n takes token 4 g + n of each:
//    tokens 4 g and 4 g + 1 in bits 0-3 and 4-7 of each half, the other
//    two a byte higher.
//  - scores: column 2 tig + i of n-tile n is token 8 tig + 4 i + n.
//  - p.v, two k16 steps, the values as A as in the code kernel: step s
//    takes value rows r = 8 tig + 2 s + {0, 1, 4, 5}, rows (r0, r2) in
//    a0 and a1, (r1, r3) in a2 and a3. One
//    byte permute puts halves of rows r0 and r2 (r1 and r3) side by side,
//    so that each extraction is a pair of tokens; values are zero +
//    scale q, one packed multiply-add, as (16 + q) scale + (zero - 16 scale).
// The residual window (BF16) is the last split, run by the BF16 kernel.

template <int D>
struct Kivi {
    static constexpr int KC = D * 16;                            // key codes of a group
    static constexpr int KS = D * 2;                             // FP16 key scales (and minima)
    static constexpr int VROW = D / 2, VC = 32 * VROW;           // value codes
    static constexpr int VS = 32 * (D / 32) * 2;                 // FP16 value scales (and minima)
    static constexpr int STAGE = KC + 2 * KS + VC + 2 * VS;
    static constexpr int STAGES = code_stages(STAGE);
    static constexpr int CH = VROW / 16, VB = D / 16;            // value chunks a row; bytes a lane reads
};

// A lane's share of staging a group: where its chunks of the next group
// start (each array's further chunks are 512 bytes on, in global and in
// shared memory alike), advanced a stride of groups at a time. Lanes below
// NS = KS / 16 copy scales, the next NS minima (ks, vs).
struct KiviCopy {
    const uint8_t *k, *ks, *v, *vs;
    int v_at;                               // its first value chunk in a stage's values (swizzled)
};

template <int D>
__device__ __forceinline__ KiviCopy kivi_copy(const RowParams &p, size_t bh, int t0, int lane)
{
    using K = Kivi<D>;
    constexpr int NS = K::KS / 16;
    const size_t grp = bh * (p.cap / 32) + t0 / 32, row = bh * p.cap + t0 + lane / K::CH;
    const int c = lane % K::CH, half = lane / NS ? 1 : 0;
    KiviCopy cp;
    cp.k = p.k + grp * K::KC + 16 * lane;
    cp.ks = (const uint8_t *)(half ? p.k_zero : p.k_scale) + grp * K::KS + 16 * (lane % NS);
    cp.v = p.v + row * K::VROW + 16 * c;
    cp.vs = (const uint8_t *)(half ? p.v_zero : p.v_scale) + (bh * p.cap + t0) * (D / 32) * 2 + 16 * (lane % NS);
    cp.v_at = chunk_at<K::CH>(lane / K::CH, c) * 16;
    return cp;
}

template <int D>
__device__ __forceinline__ void stage_group(KiviCopy &cp, unsigned buf, int lane)
{
    using K = Kivi<D>;
#pragma unroll
    for (int i = 0; i < D / 32; i++)
        cp_async16(buf + 16 * lane + 512 * i, cp.k + 512 * i, 16);
#pragma unroll
    for (int i = 0; i < K::CH; i++)
        cp_async16(buf + K::KC + 2 * K::KS + cp.v_at + 512 * i, cp.v + 512 * i, 16);
    if (lane < K::KS / 8) {
        cp_async16(buf + K::KC + 16 * lane, cp.ks, 16);
        cp_async16(buf + K::KC + 2 * K::KS + K::VC + 16 * lane, cp.vs, 16);
    }
    cp.k += WARPS * K::KC, cp.ks += WARPS * K::KS;
    cp.v += WARPS * 32 * K::VROW, cp.vs += WARPS * K::VS;
}

// Two 4-bit codes q (bits 4k to 4k + 3 and 16 above them of w) as the FP16
// pair 16 + q.
__device__ __forceinline__ uint32_t u4x2_f16(uint32_t w, int k)
{
    return and_or(4 * k <= 6 ? w << (6 - 4 * k) : w >> (4 * k - 6), 0x03C003C0u, 0x4C004C00u);
}

__device__ __forceinline__ uint32_t h2_bits(__half2 h) { return *(uint32_t *)&h; }

template <int D, int G>
__global__ void __launch_bounds__(THREADS, 3) kivi_mma_kernel(RowParams p)
{
    release_dependents();
    using K = Kivi<D>;
    constexpr int VW = K::VB / 4, CPL = D / 8;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int split = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, tig = lane & 3;
    const int start = split * p.chunk, end = min(p.len, start + p.chunk);
    uint8_t *wbuf = smem_raw + warp * K::STAGES * K::STAGE;
    const size_t bh = (size_t)b * p.Hkv + h;
    const int stride = WARPS * 32;
    int t0 = start + warp * 32;
    KiviCopy cp = kivi_copy<D>(p, bh, t0, lane);
    const unsigned sbuf = shared_at(wbuf);
#pragma unroll
    for (int s = 0; s < K::STAGES - 1; s++) {
        if (t0 + s * stride < end)
            stage_group<D>(cp, sbuf + s * K::STAGE, lane);
        cp_async_commit();
    }
    int read = 0, write = (K::STAGES - 1) * K::STAGE;     // the stages used and filled next
    // q after the first groups (unlike the other kernels: measured faster
    // at batch 1 from 64k, where this kernel keeps four blocks an SM)
    float qr[D / 4];
    load_q<D, G, Q_NATURAL>(p, b, h, g, tig, qr);
    uint32_t qh[D / 16][2];                 // q / sqrt(D), the standard A layout
    pack_q<D, true>(qr, rsqrtf((float)D), g < G, qh);
    const uint32_t minus16 = pack_f16(-16.0f, -16.0f);
    // the group term's B: column 0 (lanes g = 0) -1024, column 1 (g = 1) the minima
    const uint32_t m1024sel = g == 0 ? pack_f16(-1024.0f, -1024.0f) : 0, zsel = g == 1 ? ~0u : 0;
    float o[D / 16][4];                     // values as A, heads as columns (the code kernel's layout)
    zero_acc<D / 16>(o);
    float m = -INFINITY, l = 0;

    for (; t0 < end; t0 += stride) {
        if (t0 + (K::STAGES - 1) * stride < end)
            stage_group<D>(cp, sbuf + write, lane);
        cp_async_commit();
        cp_async_wait<K::STAGES - 1>();
        __syncwarp();
        const uint8_t *kc = wbuf + read, *vt = kc + K::KC + 2 * K::KS;
        read = next_stage(read, K::STAGE, K::STAGES), write = next_stage(write, K::STAGE, K::STAGES);
        const __half *ks = (const __half *)(kc + K::KC), *kz = ks + D;
        const __half *vs = (const __half *)(vt + K::VC), *vz = vs + 32 * (D / 32);

        // A fragments: rows g q * scale, rows g + 8 q (whose products with
        // the codes are not used); with them, the group's term of each row
        uint32_t qa[D / 16][4];
        float gt[4] = {0, 0, 0, 0};
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            const int c = 16 * kk + 2 * tig;
            const uint32_t s0 = *(const uint32_t *)(ks + c), s1 = *(const uint32_t *)(ks + c + 8);
            const uint32_t z0 = *(const uint32_t *)(kz + c), z1 = *(const uint32_t *)(kz + c + 8);
            qa[kk][0] = mul2<true>(qh[kk][0], s0), qa[kk][1] = qh[kk][0];
            qa[kk][2] = mul2<true>(qh[kk][1], s1), qa[kk][3] = qh[kk][1];
            mma_16816<true>(gt, qa[kk], and_or(z0, zsel, m1024sel), and_or(z1, zsel, m1024sel));
        }
        // -1024 (q * scale).1 and q.zero, from the quad's first lane
        const float g1024 = __shfl_sync(0xFFFFFFFFu, gt[0], lane & ~3), gz = __shfl_sync(0xFFFFFFFFu, gt[3], lane & ~3);
        float sc[4][4];
#pragma unroll
        for (int n = 0; n < 4; n++)
            sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0;
#pragma unroll
        for (int j = 0; j < D / 32; j++) {
            uint32_t x[4];                  // channels 32 j + 8 i + 2 tig, + 1: tokens 4 g .. 4 g + 3
            ldmatrix_x4_trans(x, kc + 16 * (32 * j + lane));
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const uint32_t b0[2] = {x[2 * half], x[2 * half] >> 8}, b1[2] = {x[2 * half + 1], x[2 * half + 1] >> 8};
#pragma unroll
                for (int n = 0; n < 4; n++)     // 1024 + q (n even) or 1024 + 16 q (n odd)
                    mma_16816<true>(sc[n], qa[2 * j + half],
                                    and_or(b0[n / 2], n % 2 ? 0x00F000F0u : 0x000F000Fu, 0x64006400u),
                                    and_or(b1[n / 2], n % 2 ? 0x00F000F0u : 0x000F000Fu, 0x64006400u));
            }
        }
        float s8[8];                        // s8[2 n + i]: token 8 tig + 4 i + n
#pragma unroll
        for (int n = 0; n < 4; n++)
#pragma unroll
            for (int i = 0; i < 2; i++)
                s8[2 * n + i] = n % 2 ? (sc[n][i] + g1024) * 0.0625f + gz : sc[n][i] + g1024 + gz;
        const float alpha = softmax_step<8, true>(s8, m, l);
        rescale_cols<D / 16, true>(o, alpha, tig);
#pragma unroll
        for (int st = 0; st < 2; st++) {
            const uint32_t pb0 = pack_f16(s8[4 * st], s8[4 * st + 1]), pb1 = pack_f16(s8[4 * st + 2], s8[4 * st + 3]);
            uint32_t vw[4][VW];
            __half sv[4], zv[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int r = 8 * tig + 2 * st + (i & 1) + 4 * (i >> 1);
                lds<K::CH, VW>(vt, r, g * K::VB, vw[i]);
                const int si = r * (D / 32) + g * CPL / 32;
                sv[i] = vs[si], zv[i] = vz[si];
            }
            // b0 holds rows (r0, r2), b1 (r1, r3): their scales paired alike, and
            // zero - 16 scale (one rounding, the fused multiply-add's)
            __half2 s2[2], z2[2];
#pragma unroll
            for (int e = 0; e < 2; e++) {
                s2[e] = __halves2half2(sv[e], sv[e + 2]);
                z2[e] = __hfma2(s2[e], *(const __half2 *)&minus16, __halves2half2(zv[e], zv[e + 2]));
            }
#pragma unroll
            for (int w = 0; w < VW; w++)
#pragma unroll
                for (int hi = 0; hi < 2; hi++) {
                    const uint32_t y[2] = {__byte_perm(vw[0][w], vw[2][w], hi ? 0x7632 : 0x5410),
                                           __byte_perm(vw[1][w], vw[3][w], hi ? 0x7632 : 0x5410)};
                    uint32_t bv[4][2];
#pragma unroll
                    for (int k = 0; k < 4; k++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const uint32_t u = u4x2_f16(y[e], k);
                            bv[k][e] = h2_bits(__hfma2(*(const __half2 *)&u, s2[e], z2[e]));
                        }
#pragma unroll
                    for (int k = 0; k < 4; k += 2) {    // channels 8 w + 4 hi + k, + 1
                        const uint32_t a[4] = {bv[k][0], bv[k + 1][0], bv[k][1], bv[k + 1][1]};
                        mma_16816<true>(o[(w * 8 + hi * 4 + k) / 2], a, pb0, pb1);
                    }
                }
        }
        __syncwarp();
    }
    finish_block<D, G, true>(p, o, m, l, 1.0f, [g](int j, int r) { return g * CPL + 2 * j + r; });
}

static size_t mma_smem(int fmt, int D, int G)
{
    const bool fp4 = fmt == KV_NVFP4 || fmt == KV_MXFP4;
    const size_t codes = (size_t)2 * MMA_TILE * (fp4 ? D / 2 : D);
    const size_t tiles = fmt == KV_BF16 ? (size_t)WARPS * KV_BF16_STAGES * 2 * MMA_TILE * (D + MMA_PAD) * 2
                       : fmt == KV_INT4 ? (size_t)WARPS * (D == 64 ? Kivi<64>::STAGES * Kivi<64>::STAGE
                                                                   : Kivi<128>::STAGES * Kivi<128>::STAGE)
                                        : (size_t)WARPS * code_stages((int)codes) * code_stage_bytes(fmt, D);
    size_t merge = (size_t)2 * WARPS * G * sizeof(float) + (size_t)WARPS * G * KV_HEAD_DIM_MAX * sizeof(float);
    return tiles > merge ? tiles : merge;
}


// KVLAB_CUDA_PATH picks among the kernels, read at every launch: unset, the
// tensor-core kernels with FP16/BF16 operands where the shape allows (FP8
// path B); "fp32", the FP32 kernels (to compare); "fp8a", FP8 path A
// (E4M3 operands for q.k) on GPUs that have it, with
// KVLAB_CUDA_FP8_PROMOTE=N adding the MMA sums into FP32 every N blocks of
// 32 channels (default: once per score).
static bool path_is(const char *name)
{
    const char *e = getenv("KVLAB_CUDA_PATH");
    return e && !strcmp(e, name);
}

static bool use_mma(const KvShape &s)
{
    int G = s.q_heads / s.kv_heads;
    return !path_is("fp32") && (s.head_dim == 64 || s.head_dim == 128) && G <= 8;
}

static int compute_capability(void)
{
    static int cc;
    if (!cc) {
        int dev = 0, major = 0, minor = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
        cc = major * 10 + minor;
    }
    return cc;
}

static bool fp8_path_a(const KvShape &s)
{
    return s.format == KV_FP8 && path_is("fp8a") && cc_has_e4m3_mma(compute_capability());
}

static int fp8_promote(void)
{
    const char *e = getenv("KVLAB_CUDA_FP8_PROMOTE");
    int n = e ? atoi(e) : 0;
    return n > 0 ? n : 0;
}

// The tensor-core kernel instance for a format, head dimension and group size.
template <int FMT, int D, int G, bool FA>
static const void *mma_at()
{
    if constexpr (FMT == KV_BF16)
        return (const void *)bf16_kernel<D, G>;
    else if constexpr (FMT == KV_INT4)
        return (const void *)kivi_mma_kernel<D, G>;
    else
        return (const void *)code_kernel<FMT, D, G, FA>;
}

template <int FMT, bool FA = false>
static const void *mma_fn(int D, int G)
{
    if (D == 64)
        return G == 1 ? mma_at<FMT, 64, 1, FA>() : G == 2 ? mma_at<FMT, 64, 2, FA>()
             : G == 4 ? mma_at<FMT, 64, 4, FA>() : mma_at<FMT, 64, 8, FA>();
    return G == 1 ? mma_at<FMT, 128, 1, FA>() : G == 2 ? mma_at<FMT, 128, 2, FA>()
         : G == 4 ? mma_at<FMT, 128, 4, FA>() : mma_at<FMT, 128, 8, FA>();
}

// The one launch() runs for this cache (use_mma(s) holds).
static const void *mma_kernel_for(const KvShape &s)
{
    const int D = (int)s.head_dim, G = (int)(s.q_heads / s.kv_heads);
    switch (s.format) {
    case KV_BF16: return mma_fn<KV_BF16>(D, G);
    case KV_FP8: return fp8_path_a(s) ? mma_fn<KV_FP8, true>(D, G) : mma_fn<KV_FP8>(D, G);
    case KV_INT8: return mma_fn<KV_INT8>(D, G);
    case KV_INT4: return mma_fn<KV_INT4>(D, G);
    case KV_NVFP4: return mma_fn<KV_NVFP4>(D, G);
    default: return mma_fn<KV_MXFP4>(D, G);
    }
}

// Raises a kernel's dynamic shared memory limit (once) and says how many of
// its blocks one SM holds.
static int mma_prepare(const void *fn, size_t smem)
{
    static const void *seen[64];
    static int resident[64], n;
    for (int i = 0; i < n; i++)
        if (seen[i] == fn)
            return resident[i];
    int r = 0;
    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, fn, THREADS, smem);
    if (n < 64)
        seen[n] = fn, resident[n++] = r;
    return r;
}

// ---------------------------------------------------------------------------
// Launching

template <int FMT, int G>
static void launch_rows(const RowParams &p, dim3 grid, cudaStream_t st)
{
    // 16-byte chunks where the registers allow (G <= 4), 8-byte ones for G = 8
    constexpr int E16 = FMT == KV_BF16 ? 8 : 16;
    constexpr int E = G <= 4 ? E16 : 8;
    rows_kernel<FMT, E, G><<<grid, THREADS, 0, st>>>(p);
}

template <int FMT>
static void launch_rows_g(const RowParams &p, dim3 grid, int G, cudaStream_t st)
{
    switch (G) {
    case 1: launch_rows<FMT, 1>(p, grid, st); break;
    case 2: launch_rows<FMT, 2>(p, grid, st); break;
    case 4: launch_rows<FMT, 4>(p, grid, st); break;
    default: launch_rows<FMT, 8>(p, grid, st); break;
    }
}

// Programmatic stream serialization (sm_90): the launch may start while
// the kernel before it ends; it waits for that kernel where it calls
// wait_for_primary.
static void set_dependent(cudaLaunchConfig_t &cfg, cudaLaunchAttribute &attr)
{
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = compute_capability() >= 90 ? 1 : 0;
}

static void launch_mma(RowParams p, dim3 grid, const void *fn, size_t smem, cudaStream_t st,
                       bool dependent = false)
{
    mma_prepare(fn, smem);
    void *args[] = {&p};
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr = {};
    cfg.gridDim = grid, cfg.blockDim = dim3(THREADS), cfg.dynamicSmemBytes = smem, cfg.stream = st;
    if (dependent)
        set_dependent(cfg, attr);
    cudaLaunchKernelExC(&cfg, fn, args);
}

static void launch(GpuCache *c, cudaStream_t st)
{
    const KvShape &s = c->s;
    const int G = s.q_heads / s.kv_heads;
    dim3 grid(c->splits, s.kv_heads, s.batch);
    RowParams p = {(const uint8_t *)c->arr[0], (const uint8_t *)c->arr[1],
                   (const uint16_t *)c->arr[2], (const uint16_t *)c->arr[3],
                   (const uint8_t *)c->arr[6], (const uint8_t *)c->arr[7],
                   (const float *)c->arr[8], (const float *)c->arr[9], c->q, c->part_o,
                   c->part_m, c->part_l, (int)s.kv_heads, (int)s.q_heads, (int)s.head_dim,
                   (int)s.capacity, (int)c->len, c->chunk, c->splits, (int)s.head_scales,
                   fp8_promote(), (const uint16_t *)c->arr[4], (const uint16_t *)c->arr[5], 0};
    if (s.format == KV_INT4 && use_mma(s)) {
        // the residual window (BF16) as the last split, then the quantized
        // groups over the others, as its programmatic dependent: they are
        // placed once every residual block has started and wait for them
        // before they write (finish_block), so the merge's wait covers both
        RowParams r = p;
        KvShape rs = s;
        rs.format = KV_BF16;
        r.k = (const uint8_t *)c->arr[10], r.v = (const uint8_t *)c->arr[11];
        r.cap = (int)(s.residual + KV_KIVI_GROUP), r.len = r.chunk = (int)(c->len - c->quantized);
        r.split0 = c->splits - 1;
        launch_mma(r, dim3(1, s.kv_heads, s.batch), mma_kernel_for(rs), mma_smem(KV_BF16, (int)s.head_dim, G),
                   st);
        p.len = (int)c->quantized;
        if (c->splits > 1)
            launch_mma(p, dim3(c->splits - 1, s.kv_heads, s.batch), mma_kernel_for(s),
                       mma_smem(s.format, (int)s.head_dim, G), st, true);
    } else if (s.format == KV_INT4) {
        KiviParams p = {(const uint8_t *)c->arr[0], (const uint8_t *)c->arr[1],
                        (const uint16_t *)c->arr[2], (const uint16_t *)c->arr[4],
                        (const uint16_t *)c->arr[3], (const uint16_t *)c->arr[5],
                        (const uint16_t *)c->arr[10], (const uint16_t *)c->arr[11], c->q,
                        c->part_o, c->part_m, c->part_l, (int)s.kv_heads, (int)s.q_heads,
                        (int)s.head_dim, (int)s.capacity, (int)c->len, (int)c->quantized,
                        (int)(s.residual + KV_KIVI_GROUP), c->chunk, c->splits};
        switch (G) {
        case 1: kivi_kernel<1><<<grid, THREADS, 0, st>>>(p); break;
        case 2: kivi_kernel<2><<<grid, THREADS, 0, st>>>(p); break;
        case 4: kivi_kernel<4><<<grid, THREADS, 0, st>>>(p); break;
        default: kivi_kernel<8><<<grid, THREADS, 0, st>>>(p); break;
        }
    } else {
        if (use_mma(s))
            launch_mma(p, grid, mma_kernel_for(s), mma_smem(s.format, (int)s.head_dim, G), st);
        else switch (s.format) {
        case KV_BF16: launch_rows_g<KV_BF16>(p, grid, G, st); break;
        case KV_FP8: launch_rows_g<KV_FP8>(p, grid, G, st); break;
        case KV_INT8: launch_rows_g<KV_INT8>(p, grid, G, st); break;
        case KV_NVFP4: launch_rows_g<KV_NVFP4>(p, grid, G, st); break;
        default: launch_rows_g<KV_MXFP4>(p, grid, G, st); break;
        }
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(s.batch * s.q_heads);
    cfg.blockDim = dim3(s.head_dim);               // <= KV_HEAD_DIM_MAX threads
    cfg.stream = st;
    cudaLaunchAttribute attr = {};
    set_dependent(cfg, attr);
    // the shortest run that takes every split at once, up to 32
    typedef void (*Merge)(const float *, const float *, const float *, float *, int, int);
    static const Merge MERGE_RUNS[] = {merge_kernel<4>, merge_kernel<8>, merge_kernel<16>, merge_kernel<32>};
    int k = 0;
    while (k < 3 && 4 << k < c->splits)
        k++;
    cudaLaunchKernelEx(&cfg, MERGE_RUNS[k], (const float *)c->part_o, (const float *)c->part_m,
                       (const float *)c->part_l, c->out, c->splits, (int)s.head_dim);
}

// ---------------------------------------------------------------------------
// The plugin's functions

static int info(GpuInfo *out, char *err, size_t n)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaErrorInsufficientDriver && !dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) &&
        !dlopen("libcuda.so.1", RTLD_NOW)) {
        snprintf(err, n, "no NVIDIA driver on this machine (libcuda.so.1 is missing)");
        return -1;
    }
    if (e == cudaErrorNoDevice || (e == cudaSuccess && count < 1)) {
        snprintf(err, n, "no CUDA GPU on this machine");
        return -1;
    }
    if (e != cudaSuccess)
        return fail(err, n, "cudaGetDeviceCount", e);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    out->sm_count = prop.multiProcessorCount;
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->l2_bytes = (size_t)prop.l2CacheSize;
    CK(cudaMemGetInfo(&out->memory_free, &out->memory_total));
    return 0;
}

static int upload(const KvCache *h, GpuCache **out, char *err, size_t n)
{
    if (check_shape(&h->s, err, n))
        return -1;
    GpuCache *c = new GpuCache();
    c->s = h->s;
    c->len = h->len;
    c->quantized = h->quantized;
    plan_splits(c);
    if (alloc_arrays(c, err, n) || alloc_work(c, err, n)) {
        release(c);
        return -1;
    }
    for (int i = 0; i < KV_ARRAYS; i++)
        if (c->bytes[i]) {
            const void *src = *kv_array_ptr((KvCache *)h, i);
            cudaError_t e = cudaMemcpy(c->arr[i], src, c->bytes[i], cudaMemcpyHostToDevice);
            if (e != cudaSuccess) {
                release(c);
                return fail(err, n, "cudaMemcpy (cache upload)", e);
            }
        }
    *out = c;
    return 0;
}

// Random bytes, then the same fix-ups as kv_fill_random: finite codes and
// sensible scales.
__global__ void fill_kernel(uint8_t *p, size_t n, uint64_t seed, uint32_t and2, uint32_t or2)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = seed + i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        uint8_t andm = (uint8_t)(i & 1 ? and2 >> 8 : and2), orm = (uint8_t)(i & 1 ? or2 >> 8 : or2);
        p[i] = (uint8_t)(((uint8_t)z & andm) | orm);
    }
}

__global__ void fill_u16_kernel(uint16_t *p, size_t n, uint16_t v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

static int fill(const KvShape *s, uint32_t len, uint64_t seed, GpuCache **out, char *err, size_t n)
{
    if (check_shape(s, err, n))
        return -1;
    if (len > s->capacity) {
        snprintf(err, n, "%u tokens do not fit in a cache of %u", len, s->capacity);
        return -1;
    }
    GpuCache *c = new GpuCache();
    c->s = *s;
    c->len = len;
    c->quantized = s->format == KV_INT4 ? kv_kivi_quantized(s->residual, len) : 0;
    plan_splits(c);
    if (alloc_arrays(c, err, n) || alloc_work(c, err, n)) {
        release(c);
        return -1;
    }
    // per array: byte masks for even and odd bytes (and, or), or a u16 constant
    struct { uint32_t andm, orm; int u16; uint16_t value; } how[KV_ARRAYS];
    for (int i = 0; i < KV_ARRAYS; i++)
        how[i] = {0xFFFF, 0, 0, 0};
    float one_over[2] = {1.0f / 64, 1.0f / 32};
    switch (s->format) {
    case KV_BF16: how[0] = how[1] = {0x807F, 0x3F00, 0, 0}; break;     // |x| in [0.5, 1)
    case KV_FP8: how[0] = how[1] = {0xF7F7, 0, 0, 0}; break;            // no NaN codes
    case KV_INT8: how[2] = how[3] = {0, 0, 1, 0x2008}; break;           // scale 1/127
    case KV_INT4:
        how[2] = how[3] = {0, 0, 1, 0x3044};                              // step 2/15
        how[4] = how[5] = {0, 0, 1, 0xBC00};                              // minimum -1
        how[10] = how[11] = {0x807F, 0x3F00, 0, 0};
        break;
    case KV_NVFP4: how[6] = how[7] = {0x3F3F, 0x3030, 0, 0}; break;     // E4M3 scales 0.5 .. 1.9
    case KV_MXFP4: how[6] = how[7] = {0x0101, 0x7A7A, 0, 0}; break;     // 2^-5 or 2^-4
    default: break;
    }
    for (int i = 0; i < KV_ARRAYS; i++) {
        if (!c->bytes[i] || i == 8 || i == 9)
            continue;
        if (how[i].u16)
            fill_u16_kernel<<<1024, 256>>>((uint16_t *)c->arr[i], c->bytes[i] / 2, how[i].value);
        else
            fill_kernel<<<4096, 256>>>((uint8_t *)c->arr[i], c->bytes[i], seed + (uint64_t)i * 7919,
                                       how[i].andm, how[i].orm);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) {
            release(c);
            return fail(err, n, "fill kernel", e);
        }
    }
    if (c->bytes[8]) {                                  // tensor scales
        std::vector<float> t(c->bytes[8] / sizeof(float), one_over[s->format == KV_NVFP4]);
        cudaMemcpy(c->arr[8], t.data(), c->bytes[8], cudaMemcpyHostToDevice);
        cudaMemcpy(c->arr[9], t.data(), c->bytes[9], cudaMemcpyHostToDevice);
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        release(c);
        return fail(err, n, "cudaDeviceSynchronize (fill)", e);
    }
    *out = c;
    return 0;
}

static int decode(GpuCache *c, const float *q, float *out, char *err, size_t n)
{
    size_t bytes = (size_t)c->s.batch * c->s.q_heads * c->s.head_dim * sizeof(float);
    CK(cudaMemcpy(c->q, q, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(c->out, 0xFF, bytes));                   // poison: NaN unless written
    launch(c, 0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(out, c->out, bytes, cudaMemcpyDeviceToHost));
    return 0;
}

__global__ void fill_q_kernel(float *q, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = seed + i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 29)) * 0xBF58476D1CE4E5B9ull;
        q[i] = (float)((z >> 40) & 0xFFFF) / 32768.0f - 1.0f;
    }
}

// Holds the GPU for about `cycles` clocks.
__global__ void spin_kernel(long long cycles)
{
    const long long t = clock64();
    while (clock64() - t < cycles)
        ;
}

// Times one step per cache in turn (so that a step's cache is not in L2
// from the step before). Each timed step is queued behind a spin of about
// 100 us, so the events time the GPU's work from the first kernel's start
// to the merge's end, not the host's launch calls.
static int time_decode(GpuCache **caches, int n_caches, int iters, double *median_ms, char *err,
                       size_t n)
{
    for (int i = 0; i < n_caches; i++) {
        size_t nq = (size_t)caches[i]->s.batch * caches[i]->s.q_heads * caches[i]->s.head_dim;
        fill_q_kernel<<<256, 256>>>(caches[i]->q, nq, 12345 + (uint64_t)i);
        CK(cudaGetLastError());
    }
    for (int i = 0; i < 3 * n_caches; i++)              // warm-up
        launch(caches[i % n_caches], 0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> ms(iters);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < iters; i++) {
        spin_kernel<<<1, 1>>>(200000);
        CK(cudaEventRecord(a));
        launch(caches[i % n_caches], 0);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaGetLastError());
        CK(cudaEventElapsedTime(&ms[i], a, b));
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    *median_ms = ms[iters / 2];
    return 0;
}

static int copy_bandwidth(size_t bytes, double *gbps, char *err, size_t n)
{
    void *x = NULL, *y = NULL;
    CK(cudaMalloc(&x, bytes));
    cudaError_t e = cudaMalloc(&y, bytes);
    if (e != cudaSuccess) {
        cudaFree(x);
        return fail(err, n, "cudaMalloc (copy)", e);
    }
    cudaMemset(x, 1, bytes);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> ms(20);
    for (int i = 0; i < 23; i++) {
        cudaEventRecord(a);
        cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        if (i >= 3)
            cudaEventElapsedTime(&ms[i - 3], a, b);
    }
    e = cudaGetLastError();
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaFree(x);
    cudaFree(y);
    if (e != cudaSuccess)
        return fail(err, n, "device copy", e);
    std::sort(ms.begin(), ms.end());
    *gbps = 2.0 * bytes / (ms[10] * 1e-3) / 1e9;
    return 0;
}

// Reads every 16-byte word once and folds it into one value per thread, so
// the compiler cannot drop the loads.
__global__ void read_kernel(const uint4 *p, size_t n, unsigned *sink)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldg(p + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u)
        *sink = acc;
}

static int time_read(size_t bytes, double *median_ms, char *err, size_t n)
{
    void *buf = NULL;
    unsigned *sink = NULL;
    CK(cudaMalloc(&buf, bytes));
    cudaError_t e = cudaMalloc(&sink, sizeof *sink);
    if (e == cudaSuccess)
        e = cudaMemset(buf, 7, bytes);
    std::vector<float> ms(11);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < 14 && e == cudaSuccess; i++) {
        cudaEventRecord(a);
        read_kernel<<<sm_count() * 8, 256>>>((const uint4 *)buf, bytes / 16, sink);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        e = cudaGetLastError();
        if (i >= 3)
            cudaEventElapsedTime(&ms[i - 3], a, b);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaFree(buf);
    cudaFree(sink);
    if (e != cudaSuccess)
        return fail(err, n, "weight read", e);
    std::sort(ms.begin(), ms.end());
    *median_ms = ms[5];
    return 0;
}

static const char *fp8_kernel(const KvShape *s)
{
    KvShape f = *s;
    f.format = KV_FP8;
    return !use_mma(f) ? "fp32" : fp8_path_a(f) ? "A" : "B";
}

static const KvCudaApi API = {KVLAB_CUDA_ABI, info,        upload,         fill,      release,  decode,
                              time_decode,    copy_bandwidth, time_read, fp8_kernel};

extern "C" __attribute__((visibility("default"))) const KvCudaApi *kvlab_cuda_api(void)
{
    return &API;
}
