// bf16_mma.cu - the BF16 kernel (D 64 or 128, up to 8 query heads per KV
// head): q.k and p.v as mma.sync m16n8k16 with BF16 operands and FP32
// accumulators. The GQA group's query heads are the 16 rows of A (rows past
// G are zero), 16 tokens per tile, each warp its own tiles, staged in
// shared memory by cp.async as they are. The probabilities leave the q.k
// accumulators in exactly the A layout p.v needs (FlashAttention 2's
// register reuse).
#include "common.cuh"
#include "convert.cuh"
#include "mma.cuh"
#include "softmax.cuh"

#define MMA_PAD 8                           // bf16 elements of padding per row

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

// The BF16 kernel: tiles staged by cp.async, KV_BF16_STAGES deep per warp,
// rows padded by 16 bytes so that neither the B-fragment loads nor
// ldmatrix.trans conflict on banks.
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
// Kernel selection

const void *bf16_mma_select(int D, int G)
{
    static const void *const BY_GROUP[2][4] = {
        {(const void *)bf16_kernel<64, 1>, (const void *)bf16_kernel<64, 2>, (const void *)bf16_kernel<64, 4>,
         (const void *)bf16_kernel<64, 8>},
        {(const void *)bf16_kernel<128, 1>, (const void *)bf16_kernel<128, 2>, (const void *)bf16_kernel<128, 4>,
         (const void *)bf16_kernel<128, 8>}};
    return BY_GROUP[D == 128][group_index(G)];
}

size_t bf16_mma_staging(int D)
{
    return (size_t)WARPS * KV_BF16_STAGES * 2 * MMA_TILE * (D + MMA_PAD) * 2;
}
