// merge.cu - the second kernel of every decode step: the splits' partial
// rows merged by log-sum-exp, out = sum_s o_s e^(m_s - M) / sum_s l_s
// e^(m_s - M). On sm_90 it is launched as a programmatic dependent of the
// attention kernel (softmax.cuh, wait_for_primary).
#include "common.cuh"
#include "softmax.cuh"

// One block per query row, one thread per channel. The splits are taken RUN
// at a time, all their loads issued together (they depend on nothing), so a
// run waits for memory once; runs after the first rescale what came before
// to the new maximum. merge_select picks RUN: a run's RUN slots are all
// issued, those past the last split predicated off.
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


// The shortest run that takes every split at once, up to 32.
MergeKernel merge_select(int splits)
{
    static const MergeKernel RUNS[] = {merge_kernel<4>, merge_kernel<8>, merge_kernel<16>, merge_kernel<32>};
    int k = 0;
    while (k < 3 && 4 << k < splits)
        k++;
    return RUNS[k];
}
