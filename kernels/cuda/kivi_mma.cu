// kivi_mma.cu - the KIVI code kernel (int4 on tensor cores, D 64 or 128,
// up to 8 query heads per KV head): a tile is one quantized group of 32
// tokens, staged by cp.async as it is stored (keys a 16-byte row of 32
// tokens per channel, their scales and minima per channel; values per
// token, their scales and minima per 32 channels). A 4-bit code q becomes
// an FP16 whose mantissa holds it, 1024 + q or 1024 + 16 q for keys (one
// logic operation: the bits stay where they lie), 16 + q for values (two:
// a shift and one logic operation), and the offset is taken back out of
// the sums:
//  - q.k: x = zero + scale q per channel, so q.x = q.zero - 1024 (q *
//    scale).1 + (q * scale).(1024 + q), the last over 16 where the code
//    sat 16 higher: one MMA per k16 step gives both group terms (rows g:
//    q * scale against -1024, rows g + 8: q against the minima), and the
//    same A fragments against the codes give the rest (rows g). A k16
//    step is channels 16 kk .. 16 kk + 15 in the standard layout. The key
//    rows are B as ldmatrix.trans reads them: the four tokens 4 g .. 4 g
//    + 3 of a channel are one 16-bit element, so one ldmatrix.x4 gives
//    lane (g, tig) channels 2 tig and 2 tig + 1 of four blocks of eight
//    channels (two k16 steps); n-tile n takes token 4 g + n of each:
//    tokens 4 g and 4 g + 1 in bits 0-3 and 4-7 of each half, the other
//    two a byte higher.
//  - scores: column 2 tig + i of n-tile n is token 8 tig + 4 i + n.
//  - p.v, two k16 steps, the values as A as in the code kernel: step s
//    takes value rows r = 8 tig + 2 s + {0, 1, 4, 5}, rows (r0, r2) in a0
//    and a1, (r1, r3) in a2 and a3. One byte permute puts halves of rows
//    r0 and r2 (r1 and r3) side by side, so that each extraction is a pair
//    of tokens; values are zero + scale q, one packed multiply-add, as
//    (16 + q) scale + (zero - 16 scale).
// The residual window (BF16) is the last split, run by the BF16 kernel
// (dispatch.cu, launch_kivi_mma).
#include "common.cuh"
#include "convert.cuh"
#include "mma.cuh"
#include "softmax.cuh"

template <int D>
struct Kivi {
    static constexpr int KC = D * 16;                            // key codes of a group
    static constexpr int KS = D * 2;                             // FP16 key scales (and minima)
    static constexpr int VROW = D / 2, VC = 32 * VROW;           // value codes
    static constexpr int VS = 32 * (D / 32) * 2;                 // FP16 value scales (and minima)
    static constexpr int STAGE = KC + 2 * KS + VC + 2 * VS;
    static constexpr int STAGES = code_stages(STAGE);
    static constexpr int CH = VROW / 16, VB = D / 16;            // value chunks per row; bytes each lane reads
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

// ---------------------------------------------------------------------------
// The kernel, its parts in the order of a group

// The group's A fragments (rows g: q * scale, rows g + 8: q, whose products
// with the codes are not used) from q (qh) and the key steps ks, and with
// them the group's term of each row: -1024 (q * scale).1 (g1024) and
// q.zero (gz), against the B of m1024sel and zsel (column 0 -1024, column
// 1 the minima kz), from the quad's first lane.
template <int D>
__device__ __forceinline__ void kivi_group_q(const __half *ks, const __half *kz, int lane, int tig,
                                             const uint32_t (*qh)[2], uint32_t zsel, uint32_t m1024sel,
                                             uint32_t (*qa)[4], float &g1024, float &gz)
{
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
    g1024 = __shfl_sync(0xFFFFFFFFu, gt[0], lane & ~3), gz = __shfl_sync(0xFFFFFFFFu, gt[3], lane & ~3);
}

// The scores of the group's key codes kc against qa: sc[n], n-tile n,
// column 2 tig + i is token 8 tig + 4 i + n; the codes as FP16 1024 + q (n
// even) or 1024 + 16 q (n odd).
template <int D>
__device__ __forceinline__ void kivi_qk(const uint8_t *kc, int lane, const uint32_t (*qa)[4], float (*sc)[4])
{
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
            for (int n = 0; n < 4; n++)
                mma_16816<true>(sc[n], qa[2 * j + half],
                                and_or(b0[n / 2], n % 2 ? 0x00F000F0u : 0x000F000Fu, 0x64006400u),
                                and_or(b1[n / 2], n % 2 ? 0x00F000F0u : 0x000F000Fu, 0x64006400u));
        }
    }
}

// o += p.v for k16 step st of the group's values vt (scales vs, minima vz):
// value rows r = 8 tig + 2 st + {0, 1, 4, 5}, their probabilities
// s8[4 st .. 4 st + 3] as B.
template <int D>
__device__ __forceinline__ void kivi_pv_step(const uint8_t *vt, const __half *vs, const __half *vz, int g, int tig,
                                             int st, const float *s8, uint32_t minus16, float (*o)[4])
{
    using K = Kivi<D>;
    constexpr int VW = K::VB / 4, CPL = D / 8;
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

template <int D, int G>
__global__ void __launch_bounds__(THREADS, 3) kivi_mma_kernel(RowParams p)
{
    release_dependents();
    using K = Kivi<D>;
    constexpr int CPL = D / 8;
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
    // at batch 1 from 64k, where this kernel keeps four blocks per SM)
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
        uint32_t qa[D / 16][4];
        float g1024, gz;
        kivi_group_q<D>(ks, kz, lane, tig, qh, zsel, m1024sel, qa, g1024, gz);
        float sc[4][4];
        kivi_qk<D>(kc, lane, qa, sc);
        float s8[8];                        // s8[2 n + i]: token 8 tig + 4 i + n
#pragma unroll
        for (int n = 0; n < 4; n++)
#pragma unroll
            for (int i = 0; i < 2; i++)
                s8[2 * n + i] = n % 2 ? (sc[n][i] + g1024) * 0.0625f + gz : sc[n][i] + g1024 + gz;
        const float alpha = softmax_step<8, true>(s8, m, l);
        rescale_cols<D / 16, true>(o, alpha, tig);
#pragma unroll
        for (int st = 0; st < 2; st++)
            kivi_pv_step<D>(vt, vs, vz, g, tig, st, s8, minus16, o);
        __syncwarp();
    }
    finish_block<D, G, true>(p, o, m, l, 1.0f, [g](int j, int r) { return g * CPL + 2 * j + r; });
}

// ---------------------------------------------------------------------------
// Kernel selection

const void *kivi_mma_select(int D, int G)
{
    static const void *const BY_GROUP[2][4] = {
        {(const void *)kivi_mma_kernel<64, 1>, (const void *)kivi_mma_kernel<64, 2>,
         (const void *)kivi_mma_kernel<64, 4>, (const void *)kivi_mma_kernel<64, 8>},
        {(const void *)kivi_mma_kernel<128, 1>, (const void *)kivi_mma_kernel<128, 2>,
         (const void *)kivi_mma_kernel<128, 4>, (const void *)kivi_mma_kernel<128, 8>}};
    return BY_GROUP[D == 128][group_index(G)];
}

size_t kivi_mma_staging(int D)
{
    return (size_t)WARPS * (D == 64 ? Kivi<64>::STAGES * Kivi<64>::STAGE : Kivi<128>::STAGES * Kivi<128>::STAGE);
}
