// rows_fp32.cu - the FP32 kernels: every shape the tensor-core kernels do
// not take (head dimensions other than 64 and 128, more than 8 query heads
// per KV head), and every shape where the FP32 kernels are asked for
// (KvCudaOptions), to compare.
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
#include "common.cuh"
#include "convert.cuh"
#include "softmax.cuh"

// ---------------------------------------------------------------------------
// The rows kernel

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

// Two blocks a multiprocessor asked for: a bound the register budget meets
// anyway (at most 255 a thread), which steers ptxas off an 8-byte spill it
// otherwise makes for G = 4 on sm_90a.
template <int G>
__global__ void __launch_bounds__(THREADS, 2) kivi_kernel(KiviParams p)
{
    constexpr int EV = KV_HEAD_DIM_MAX / 32;  // value dimensions per lane at most
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
    __shared__ float sm_m[WARPS][G], sm_l[WARPS][G], sm_o[WARPS][G][KV_HEAD_DIM_MAX];  // across warps
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
// Kernel selection

// E elements per lane: a 16-byte chunk of 8-bit codes or BF16 (FP4: 8
// bytes) where the registers allow (G <= 4), 8 elements for G = 8.
template <int FMT>
static const void *rows_for(int G)
{
    constexpr int E = FMT == KV_BF16 ? 8 : 16;
    static const void *const BY_GROUP[4] = {
        (const void *)rows_kernel<FMT, E, 1>, (const void *)rows_kernel<FMT, E, 2>,
        (const void *)rows_kernel<FMT, E, 4>, (const void *)rows_kernel<FMT, 8, 8>};
    return BY_GROUP[group_index(G)];
}

const void *rows_fp32_select(KvFormat f, int G)
{
    switch (f) {
    case KV_BF16: return rows_for<KV_BF16>(G);
    case KV_FP8: return rows_for<KV_FP8>(G);
    case KV_INT8: return rows_for<KV_INT8>(G);
    case KV_NVFP4: return rows_for<KV_NVFP4>(G);
    default: return rows_for<KV_MXFP4>(G);
    }
}

const void *kivi_fp32_select(int G)
{
    static const void *const BY_GROUP[4] = {(const void *)kivi_kernel<1>, (const void *)kivi_kernel<2>,
                                            (const void *)kivi_kernel<4>, (const void *)kivi_kernel<8>};
    return BY_GROUP[group_index(G)];
}
