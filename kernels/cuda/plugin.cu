// plugin.cu - the CUDA plugin's functions (kv_cuda.h's KvCudaApi): the
// device cache's life cycle (upload of a host cache, or a random fill on
// the device), one decode step, and the timings kvlab bench and the GPU
// lab report (a decode step, the device-to-device copy, a read of the
// model's weights).
#include "dispatch.cuh"
#include "kv_fill.h"

#include <dlfcn.h>
#include <string.h>

#include <algorithm>
#include <vector>

// ---------------------------------------------------------------------------
// The device cache: made, sized, released

// Device memory left free beyond a cache, for the runtime and the work
// arrays (query, output, partial rows).
#define DEVICE_HEADROOM ((size_t)64 << 20)

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

static int check_options(const KvCudaOptions *o, char *err, size_t n)
{
    if ((unsigned)o->kernels >= KV_CUDA_KERNELS) {
        snprintf(err, n, "no kernel choice %d (KvCudaKernels has %d)", (int)o->kernels, KV_CUDA_KERNELS);
        return -1;
    }
    if (o->fp8_promote < 0) {
        snprintf(err, n, "fp8_promote is a count of k-blocks of 32, 0 or more, not %d", o->fp8_promote);
        return -1;
    }
    if (o->splits < 0) {
        snprintf(err, n, "splits is a count of token slices per sequence, 0 (the plan's) or more, not %d",
                 o->splits);
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
    for (int a = 0; a < KV_ARRAYS; a++)
        need += c->bytes[a];
    size_t freeb = 0, total = 0;
    cudaMemGetInfo(&freeb, &total);
    if (need + DEVICE_HEADROOM > freeb) {
        double per_token = (double)need / c->s.capacity;
        snprintf(err, n, "out of device memory: the cache needs %.2f GiB, %.2f GiB are free; the "
                         "largest context that fits is about %.0f tokens",
                 need / 1073741824.0, freeb / 1073741824.0,
                 per_token > 0 ? (double)(freeb - DEVICE_HEADROOM) / per_token : 0);
        return -1;
    }
    for (int a = 0; a < KV_ARRAYS; a++)
        if (c->bytes[a])
            CUDA_TRY(cudaMalloc(&c->arr[a], c->bytes[a]), err, n);
    return 0;
}

static int alloc_work(GpuCache *c, char *err, size_t n)
{
    size_t rows = (size_t)c->s.batch * c->s.q_heads;
    CUDA_TRY(cudaMalloc(&c->q, rows * c->s.head_dim * sizeof(float)), err, n);
    CUDA_TRY(cudaMalloc(&c->out, rows * c->s.head_dim * sizeof(float)), err, n);
    CUDA_TRY(cudaMalloc(&c->part_o, rows * c->splits * c->s.head_dim * sizeof(float)), err, n);
    CUDA_TRY(cudaMalloc(&c->part_m, rows * c->splits * sizeof(float)), err, n);
    CUDA_TRY(cudaMalloc(&c->part_l, rows * c->splits * sizeof(float)), err, n);
    return 0;
}

static void release(GpuCache *c)
{
    if (!c)
        return;
    for (int a = 0; a < KV_ARRAYS; a++)
        cudaFree(c->arr[a]);
    cudaFree(c->q);
    cudaFree(c->out);
    cudaFree(c->part_o);
    cudaFree(c->part_m);
    cudaFree(c->part_l);
    delete c;
}

// A device cache of this shape, options and length, its splits planned and
// its memory allocated (its arrays' contents undefined); NULL, saying why,
// where the shape, the options or the memory do not allow it.
static GpuCache *new_cache(const KvShape *s, const KvCudaOptions *o, uint32_t len, uint32_t quantized,
                           char *err, size_t n)
{
    const KvCudaOptions defaults = {};
    if (!o)
        o = &defaults;
    if (check_shape(s, err, n) || check_options(o, err, n))
        return NULL;
    GpuCache *c = new GpuCache();
    c->s = *s;
    c->opt = *o;
    c->len = len;
    c->quantized = quantized;
    plan_splits(c);
    if (alloc_arrays(c, err, n) || alloc_work(c, err, n)) {
        release(c);
        return NULL;
    }
    return c;
}

static int upload(const KvCache *h, const KvCudaOptions *o, GpuCache **out, char *err, size_t n)
{
    GpuCache *c = new_cache(&h->s, o, h->len, h->quantized, err, n);
    if (!c)
        return -1;
    for (int a = 0; a < KV_ARRAYS; a++)
        if (c->bytes[a]) {
            const void *src = *kv_array_ptr((KvCache *)h, (KvArray)a);
            cudaError_t e = cudaMemcpy(c->arr[a], src, c->bytes[a], cudaMemcpyHostToDevice);
            if (e != cudaSuccess) {
                release(c);
                return cuda_fail(err, n, "cudaMemcpy (cache upload)", e);
            }
        }
    *out = c;
    return 0;
}

// ---------------------------------------------------------------------------
// The random fill: the bytes kv_fill_random writes on the host (kv_fill.h)

__global__ void fill_kernel(uint8_t *p, size_t n, KvFormat f, KvArray a, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = kv_fill_byte(f, a, seed, i);
}

static int fill(const KvShape *s, const KvCudaOptions *o, uint32_t len, uint64_t seed, GpuCache **out,
                char *err, size_t n)
{
    if (len > s->capacity) {
        snprintf(err, n, "%u tokens do not fit in a cache of %u", len, s->capacity);
        return -1;
    }
    const uint32_t quantized = s->format == KV_INT4 ? kv_kivi_quantized(s->residual, len) : 0;
    GpuCache *c = new_cache(s, o, len, quantized, err, n);
    if (!c)
        return -1;
    for (int a = 0; a < KV_ARRAYS; a++)
        if (c->bytes[a]) {
            fill_kernel<<<4096, 256>>>((uint8_t *)c->arr[a], c->bytes[a], s->format, (KvArray)a, seed);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) {
                release(c);
                return cuda_fail(err, n, "fill kernel", e);
            }
        }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        release(c);
        return cuda_fail(err, n, "cudaDeviceSynchronize (fill)", e);
    }
    *out = c;
    return 0;
}

// ---------------------------------------------------------------------------
// One decode step, and its timing

static int decode(GpuCache *c, const float *q, float *out, char *err, size_t n)
{
    size_t bytes = (size_t)c->s.batch * c->s.q_heads * c->s.head_dim * sizeof(float);
    CUDA_TRY(cudaMemcpy(c->q, q, bytes, cudaMemcpyHostToDevice), err, n);
    CUDA_TRY(cudaMemset(c->out, 0xFF, bytes), err, n);                   // poison: NaN unless written
    launch(c, 0);
    CUDA_TRY(cudaGetLastError(), err, n);
    CUDA_TRY(cudaDeviceSynchronize(), err, n);
    CUDA_TRY(cudaMemcpy(out, c->out, bytes, cudaMemcpyDeviceToHost), err, n);
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

// The median of `runs` timings of work(i) (i from warmup on), after
// `warmup` untimed ones (i from 0), each timed one queued behind a spin of
// about 100 us, so that the events time the GPU's work from its first
// kernel's start to its last one's end, not the host's launch calls.
template <typename Work>
static cudaError_t median_spun_ms(int warmup, int runs, Work work, float *median)
{
    if (runs < 1)
        return cudaErrorInvalidValue;
    for (int i = 0; i < warmup; i++)
        work(i);
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaGetLastError();
    std::vector<float> ms(runs);
    cudaEvent_t a = NULL, b = NULL;
    if (e == cudaSuccess)
        e = cudaEventCreate(&a);
    if (e == cudaSuccess)
        e = cudaEventCreate(&b);
    for (int i = 0; i < runs && e == cudaSuccess; i++) {
        spin_kernel<<<1, 1>>>(200000);
        cudaEventRecord(a);
        work(warmup + i);
        cudaEventRecord(b);
        e = cudaEventSynchronize(b);
        if (e == cudaSuccess)
            e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaEventElapsedTime(&ms[i], a, b);
    }
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    *median = ms[runs / 2];
    return e;
}

// Random queries for each cache's timed steps, on stream st.
static cudaError_t fill_queries(GpuCache **caches, int n_caches, cudaStream_t st)
{
    for (int i = 0; i < n_caches; i++) {
        size_t nq = (size_t)caches[i]->s.batch * caches[i]->s.q_heads * caches[i]->s.head_dim;
        fill_q_kernel<<<256, 256, 0, st>>>(caches[i]->q, nq, 12345 + (uint64_t)i);
    }
    return cudaGetLastError();
}

// Times one step per cache in turn, so that a step's cache is not in the
// L2 from the step before.
static int time_decode(GpuCache **caches, int n_caches, int iters, double *median_ms, char *err,
                       size_t n)
{
    CUDA_TRY(fill_queries(caches, n_caches, 0), err, n);
    float ms = 0;
    cudaError_t e = median_spun_ms(3 * n_caches, iters, [&](int i) { launch(caches[i % n_caches], 0); }, &ms);
    if (e != cudaSuccess)
        return cuda_fail(err, n, "decode step (timed)", e);
    *median_ms = ms;
    return 0;
}

static int copy_bandwidth(size_t bytes, double *gbps, char *err, size_t n)
{
    void *x = NULL, *y = NULL;
    CUDA_TRY(cudaMalloc(&x, bytes), err, n);
    cudaError_t e = cudaMalloc(&y, bytes);
    if (e != cudaSuccess) {
        cudaFree(x);
        return cuda_fail(err, n, "cudaMalloc (copy)", e);
    }
    cudaMemset(x, 1, bytes);
    float ms = 0;
    e = median_spun_ms(3, 20, [&](int) { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); }, &ms);
    cudaFree(x);
    cudaFree(y);
    if (e != cudaSuccess)
        return cuda_fail(err, n, "device copy", e);
    *gbps = 2.0 * bytes / (ms * 1e-3) / 1e9;
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

// A buffer of `*words` 16-byte words for a weight stream, or, where that
// many do not fit, of the largest share of them halved down that does
// (and at last of exactly `least`); *words says how many it holds. Any
// failure but memory's is returned as it is.
static cudaError_t weight_buffer(size_t *words, size_t least, uint4 **out)
{
    size_t w = *words;
    for (;;) {
        cudaError_t e = cudaMalloc(out, w * 16);
        if (e == cudaSuccess) {
            *words = w;
            return e;
        }
        if (e != cudaErrorMemoryAllocation || w <= least)
            return e;
        cudaGetLastError();                     // out of memory: not sticky
        w = w / 2 > least ? w / 2 : least;
    }
}

// Reads `bytes` (whole 16-byte words of them) once, timed as a decode step
// is (median_spun_ms): from one of as many copies of them as make four
// times the L2, at most eight as kvlab bench rotates its caches (one read,
// then the next copy), so that the L2 holds none of a read's bytes from
// half the L2 up; or, where even one copy does not fit, over the share that
// does, again and again until as many bytes are read (from memory all the
// same: the L2 holds a small part).
static int time_read(size_t bytes, double *median_ms, char *err, size_t n)
{
    const size_t total = bytes / 16;
    if (!total) {
        *median_ms = 0;
        return 0;
    }
    size_t words = (size_t)kv_l2_copies(l2_bytes(), bytes, 1, 8) * total;
    uint4 *buf = NULL;
    unsigned *sink = NULL;
    cudaError_t e = weight_buffer(&words, 1, &buf);
    if (e != cudaSuccess) {
        cudaGetLastError();                     // not left for the next call to find
        return cuda_fail(err, n, "cudaMalloc (read)", e);
    }
    const size_t held = std::max<size_t>(1, words / total);     // whole copies in the buffer
    e = cudaMalloc(&sink, sizeof *sink);
    if (e == cudaSuccess)
        e = cudaMemset(buf, 7, words * 16);
    float ms = 0;
    if (e == cudaSuccess)
        e = median_spun_ms(3, 21, [&](int i) {
                if (words >= total)
                    read_kernel<<<sm_count() * 8, 256>>>(buf + (size_t)i % held * total, total, sink);
                else
                    for (size_t done = 0; done < total; done += words)
                        read_kernel<<<sm_count() * 8, 256>>>(buf, std::min(words, total - done), sink);
            }, &ms);
    cudaFree(buf);
    cudaFree(sink);
    if (e != cudaSuccess)
        return cuda_fail(err, n, "read", e);
    *median_ms = ms;
    return 0;
}

// ---------------------------------------------------------------------------
// A whole model's decode step

// One decode step of a model on stream st, layer by layer: the layer's
// share of the weights read (per_words 16-byte words from where layer l's
// slice falls in the buffer of w_words), then its attention.
static void enqueue_step(GpuCache **caches, int n_caches, int layers, const uint4 *w, size_t w_words,
                         size_t per_words, unsigned *sink, cudaStream_t st)
{
    for (int l = 0; l < layers; l++) {
        if (per_words)
            read_kernel<<<sm_count() * 8, 256, 0, st>>>(w + (size_t)l * per_words % (w_words - per_words + 1),
                                                        per_words, sink);
        launch(caches[l % n_caches], st);
    }
}

// Medians of the step launched kernel by kernel and replayed from a CUDA
// graph, timed alternately (launched, then graph) so that both see the
// same state of the GPU; each behind a spin of about 100 us, so that a
// replay's one launch call is not timed, while the launched form's calls
// are wherever the host falls behind the GPU, as in an engine that
// launches each kernel. The weight buffer is the model's bytes where they
// fit, else the largest power-of-two share of them that does (a layer's
// slice read from it as from the whole: either way from memory, the L2
// holding a small part).
static int time_step(GpuCache **caches, int n_caches, int layers, size_t weight_bytes, int iters,
                     double *graph_ms, double *launched_ms, char *err, size_t n)
{
    if (layers < 1 || n_caches < 1 || iters < 1) {
        snprintf(err, n, "a step needs a layer, a cache and a timed run (%d, %d, %d given)", layers, n_caches, iters);
        return -1;
    }
    const size_t per_words = weight_bytes / 16 / (size_t)layers;
    size_t w_words = per_words ? weight_bytes / 16 : 0;  // no layer's slice a word: no weights read
    uint4 *w = NULL;
    unsigned *sink = NULL;
    cudaStream_t st = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    cudaEvent_t a = NULL, b = NULL;
    std::vector<float> tg(iters), tl(iters);
    cudaError_t e = w_words ? weight_buffer(&w_words, per_words ? per_words : 1, &w) : cudaSuccess;
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        snprintf(err, n, "no room on the GPU for a layer's %zu bytes of weights", per_words * 16);
        return -1;
    }
    if (e != cudaSuccess)
        return cuda_fail(err, n, "cudaMalloc (weights)", e);
    e = cudaMalloc(&sink, sizeof *sink);
    const char *what = "cudaMalloc (step)";
    auto check = [&](cudaError_t r, const char *call) {
        if (e == cudaSuccess && r != cudaSuccess)
            e = r, what = call;
    };
    check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate (step)");
    if (e == cudaSuccess && w_words)
        check(cudaMemsetAsync(w, 7, w_words * 16, st), "cudaMemset (weights)");
    if (e == cudaSuccess)
        check(fill_queries(caches, n_caches, st), "queries (step)");
    for (int i = 0; e == cudaSuccess && i < 2; i++)     // warm-up, and every kernel's attributes set
        enqueue_step(caches, n_caches, layers, w, w_words, per_words, sink, st);
    if (e == cudaSuccess) {
        check(cudaGetLastError(), "step (launched)");
        check(cudaStreamSynchronize(st), "step (launched)");
    }
    if (e == cudaSuccess) {
        check(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
        if (e == cudaSuccess) {
            enqueue_step(caches, n_caches, layers, w, w_words, per_words, sink, st);
            check(cudaStreamEndCapture(st, &g), "cudaStreamEndCapture");
        }
        if (e == cudaSuccess)
            check(cudaGraphInstantiate(&ge, g, 0), "cudaGraphInstantiate");
        if (e == cudaSuccess)
            check(cudaGraphLaunch(ge, st), "cudaGraphLaunch (warm-up)");
    }
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");
    for (int i = 0; e == cudaSuccess && i < 2 * iters; i++) {
        const bool replay = i % 2;
        spin_kernel<<<1, 1, 0, st>>>(200000);
        check(cudaEventRecord(a, st), "cudaEventRecord");
        if (replay)
            check(cudaGraphLaunch(ge, st), "cudaGraphLaunch");
        else
            enqueue_step(caches, n_caches, layers, w, w_words, per_words, sink, st);
        check(cudaEventRecord(b, st), "cudaEventRecord");
        check(cudaEventSynchronize(b), replay ? "step (graph)" : "step (launched)");
        check(cudaGetLastError(), replay ? "step (graph)" : "step (launched)");
        if (e == cudaSuccess)
            check(cudaEventElapsedTime(replay ? &tg[i / 2] : &tl[i / 2], a, b), "cudaEventElapsedTime");
    }
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    if (ge)
        cudaGraphExecDestroy(ge);
    if (g)
        cudaGraphDestroy(g);
    if (st)
        cudaStreamDestroy(st);
    cudaFree(w);
    cudaFree(sink);
    if (e != cudaSuccess)
        return cuda_fail(err, n, what, e);
    std::sort(tg.begin(), tg.end());
    std::sort(tl.begin(), tl.end());
    *graph_ms = tg[iters / 2];
    *launched_ms = tl[iters / 2];
    return 0;
}

// ---------------------------------------------------------------------------
// The device, and the API table

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
        return cuda_fail(err, n, "cudaGetDeviceCount", e);
    cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, 0), err, n);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    out->sm_count = prop.multiProcessorCount;
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->l2_bytes = (size_t)prop.l2CacheSize;
    CUDA_TRY(cudaMemGetInfo(&out->memory_free, &out->memory_total), err, n);
    return 0;
}

static const char *fp8_kernel(const KvShape *s, const KvCudaOptions *o)
{
    const KvCudaOptions defaults = {};
    return fp8_kernel_name(s, o ? o : &defaults);
}

static const KvCudaApi API = {KVLAB_CUDA_ABI, info,      upload,     fill,       release,  decode, time_decode,
                              copy_bandwidth, time_read, fp8_kernel, time_step};

extern "C" __attribute__((visibility("default"))) const KvCudaApi *kvlab_cuda_api(void)
{
    return &API;
}
