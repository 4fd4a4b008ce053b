// mma.cuh - the tensor-core primitives: mma.sync wrappers (FP16, BF16, and
// E4M3 for FP8 paths A and C), ldmatrix, and the cp.async staging every
// tensor-core kernel uses (a ring of stages per warp, swizzled tiles).
#ifndef KVLAB_CUDA_MMA_CUH
#define KVLAB_CUDA_MMA_CUH

#include "common.cuh"

// ---------------------------------------------------------------------------
// Tensor-core operations

// c += a b: m16n8k16, FP16 (F16) or BF16 operands, FP32 accumulators.
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

// m16n8k32 with E4M3 operands and FP32 accumulators (sm_89 and later; the
// host never launches it on older GPUs): a0, a2 rows g, k 4 tig .. + 3
// and 16 + 4 tig .. + 3; a1, a3 the same of rows g + 8; b0, b1 column g
// at those k. FP8 path C's p.v takes every row; path A's q.k, whose rows
// are the (at most 8) heads, only rows g (mma_e4m3).
__device__ __forceinline__ void mma_e4m3_16832(float c[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                               uint32_t b0, uint32_t b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    __trap();
#endif
}

__device__ __forceinline__ void mma_e4m3(float c[4], uint32_t a0, uint32_t a2, uint32_t b0, uint32_t b1)
{
    mma_e4m3_16832(c, a0, 0u, a2, 0u, b0, b1);
}

// B fragments of four 8x8 matrices of 16-bit elements, transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *smem)
{
    unsigned addr = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

template <int N>
__device__ __forceinline__ void zero_acc(float (*o)[4])
{
#pragma unroll
    for (int j = 0; j < N; j++)
        o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0;
}

// ---------------------------------------------------------------------------
// Staging by cp.async: a ring of stages per warp in shared memory

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

// Bytes staged per warp by the code and KIVI kernels: 12 KiB of codes, in
// at most eight stages, so that four blocks fit an SM's shared memory (48
// KiB each, INT8's 49 with its scales; the code kernel's registers, 117-128
// per thread at D 128, allow four as well). The KIVI kernel's groups count
// alike: two in flight at D 128, one in use and one loading.
#define STAGED_BYTES (12 << 10)
#define STAGES_MAX 8

// The stages of `stage_bytes` each that fit in STAGED_BYTES.
__host__ __device__ constexpr int code_stages(int stage_bytes)
{
    return STAGED_BYTES / stage_bytes < STAGES_MAX ? STAGED_BYTES / stage_bytes : STAGES_MAX;
}

// The 16-byte chunk c of row r of a tile of CH chunks per row, swizzled
// (XOR) so that the eight lanes of a quarter warp reading one column of
// chunks hit different banks.
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

#endif
