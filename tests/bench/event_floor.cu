// event_floor.cu - what a step timed as `kvlab bench` times it costs when
// it does nothing, and what plain reads of 4-256 MiB cost timed the same
// way: each timed step queued behind a spin of about 100 us, CUDA events
// around it, the median of 50 after 10 warm-up steps. The floor under
// every row of kernels/PERF.md (results/profiles/event_floor.txt).
//
//   nvcc -O3 -arch=sm_90a -o event_floor tests/bench/event_floor.cu && ./event_floor
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

__global__ void spin(long long cycles)
{
    const long long t = clock64();
    while (clock64() - t < cycles)
        ;
}

__global__ void empty(float *o)
{
    if (o && threadIdx.x == 1000)
        o[0] = 1;
}

// as the merge starts: waiting for the kernel it depends on
__global__ void empty_waiting(float *o)
{
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    if (o && threadIdx.x == 1000)
        o[0] = 1;
}

__global__ void read(const uint4 *p, size_t n, unsigned *sink)
{
    unsigned x = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = __ldcs(p + i);
        x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (x == 0x12345678)
        sink[0] = x;
}

int main()
{
    float *o;
    cudaMalloc(&o, 4);
    const size_t big = 512ull << 20;        // four buffers of 512 MiB, taken in turn
    uint4 *buf;
    cudaMalloc(&buf, big * 4);
    cudaMemset(buf, 1, big * 4);
    unsigned *sink;
    cudaMalloc(&sink, 4);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    auto timeit = [&](const char *name, auto step) {
        std::vector<float> ms;
        for (int i = 0; i < 60; i++) {
            spin<<<1, 1>>>(200000);
            cudaEventRecord(a);
            step(i);
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float t;
            cudaEventElapsedTime(&t, a, b);
            if (i >= 10)
                ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        printf("%-40s %.4f ms (min %.4f)\n", name, ms[ms.size() / 2], ms[0]);
    };
    timeit("nothing", [&](int) {});
    timeit("empty 128x128", [&](int) { empty<<<128, 128>>>(o); });
    timeit("empty 128x128 + empty 32x128", [&](int) {
        empty<<<128, 128>>>(o);
        empty<<<32, 128>>>(o);
    });
    timeit("empty 128x128 + PDL waiting 32x128", [&](int) {
        empty<<<128, 128>>>(o);
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute at = {};
        at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at.val.programmaticStreamSerializationAllowed = 1;
        cfg.gridDim = 32, cfg.blockDim = 128, cfg.attrs = &at, cfg.numAttrs = 1;
        cudaLaunchKernelEx(&cfg, empty_waiting, o);
    });
    for (size_t mb : {4, 16, 32, 64, 128, 256}) {
        const size_t n = (mb << 20) / 16;
        char name[64];
        snprintf(name, sizeof name, "read %zu MiB, 528x512 (rotating)", mb);
        timeit(name, [&](int i) { read<<<132 * 4, 512>>>(buf + (i % 4) * (big / 16), n, sink); });
    }
    printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
