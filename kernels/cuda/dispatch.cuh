// dispatch.cuh - what dispatch.cu gives plugin.cu: the device cache, the
// plan of its splits, and the launch of one decode step.
#ifndef KVLAB_CUDA_DISPATCH_CUH
#define KVLAB_CUDA_DISPATCH_CUH

#include "common.cuh"

struct GpuCache {
    KvShape s;
    KvCudaOptions opt;              // which kernels (kv_cuda.h)
    uint32_t len, quantized;
    void *arr[KV_ARRAYS];           // device copies of the kv_attn.h arrays, by KvArray
    size_t bytes[KV_ARRAYS];
    float *q, *out;                 // (B, H_q, D)
    float *part_o, *part_m, *part_l;// per split: (B, H_q, splits, D), (B, H_q, splits)
    int splits, chunk;              // token slices per (sequence, KV head) and their length
};

// The device's multiprocessors and L2 bytes (asked once).
int sm_count(void);
size_t l2_bytes(void);
// Sets c->splits and c->chunk for its shape, length and kernels.
void plan_splits(GpuCache *c);
// Queues one decode step of c on stream st: c->q to c->out.
void launch(const GpuCache *c, cudaStream_t st);
// KvCudaApi.fp8_kernel.
const char *fp8_kernel_name(const KvShape *s, const KvCudaOptions *o);

#endif
