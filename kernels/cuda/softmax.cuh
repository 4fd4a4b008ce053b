// softmax.cuh - what the kernels share around their loops: the split state
// (each block's partial softmax, merged across its warps and written for
// merge.cu), the dependent launch of the merge, the query packed as
// tensor-core operands, and the online softmax of the tensor-core kernels.
#ifndef KVLAB_CUDA_SOFTMAX_CUH
#define KVLAB_CUDA_SOFTMAX_CUH

#include "common.cuh"
#include "convert.cuh"
#include "mma.cuh"

// ---------------------------------------------------------------------------
// The merge as a dependent launch

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

// ---------------------------------------------------------------------------
// Split state: each block's partial softmax (maximum m, sum l, accumulator
// o) per query head, merged across its warps and written per split

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

// Bytes of the split state finish_block lays out in shared memory: per
// warp the maximum and the sum of each head, then its accumulator rows.
__host__ __device__ constexpr size_t split_state_bytes(int G)
{
    return (size_t)2 * WARPS * G * sizeof(float) + (size_t)WARPS * G * KV_HEAD_DIM_MAX * sizeof(float);
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

// ---------------------------------------------------------------------------
// The query as tensor-core A fragments

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

// ---------------------------------------------------------------------------
// Online softmax over the tiles of the tensor-core kernels

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

// log2(e), for e^x as 2^(x log2 e)
#define LOG2E 1.4426950408889634f
// How far a tile's maximum may pass the reference before the lazy softmax
// moves it: 8 ln 2, probabilities then reach at most 2^8.
#define LAZY_HEADROOM 5.5451774f

// e^x on the SFU, results below 2^-126 flushed to zero: x <= 0 here, and a
// probability that small beside the row's largest adds nothing to its sums.
// (__expf keeps them, at three more instructions per call.)
__device__ __forceinline__ float exp_ftz(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x * LOG2E));
    return y;
}

// Online softmax of row g over a tile: s4 holds the lane's N scores
// (-inf past the end), whose row is spread over the four lanes of a
// quad. Updates m and l, leaves the probabilities in s4 and returns the
// factor the accumulator is rescaled by. LAZY: m, the reference the
// probabilities are taken against, moves only when the tile's maximum
// passes it by more than LAZY_HEADROOM, so that probabilities reach up to 256
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
    const float mn = LAZY ? (mx > m + LAZY_HEADROOM ? mx : m) : fmaxf(m, mx);
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

#endif
