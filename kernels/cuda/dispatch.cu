// dispatch.cu - which kernel runs a decode step, over how many splits, with
// how much shared memory, and its launch (with the merge after it).
#include "dispatch.cuh"
#include "softmax.cuh"

#include <algorithm>

// ---------------------------------------------------------------------------
// The device

int sm_count(void)
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

size_t l2_bytes(void)
{
    static int n = -1;
    if (n < 0) {
        int dev = 0;
        cudaGetDevice(&dev);
        if (cudaDeviceGetAttribute(&n, cudaDevAttrL2CacheSize, dev) != cudaSuccess || n < 0)
            n = 0;
    }
    return (size_t)n;
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

// ---------------------------------------------------------------------------
// Which kernel

// The tensor-core kernels take D 64 and 128 with up to 8 query heads per
// KV head, unless the FP32 kernels are asked for.
static bool use_mma(const KvShape &s, const KvCudaOptions &o)
{
    int G = s.q_heads / s.kv_heads;
    return o.kernels != KV_CUDA_FP32 && (s.head_dim == 64 || s.head_dim == 128) && G <= 8;
}

// The FP8 kernel asked for: paths A and C where the GPU has E4M3 MMAs,
// path B elsewhere.
static Fp8Path fp8_path(const KvShape &s, const KvCudaOptions &o)
{
    if (s.format != KV_FP8 || !cc_has_e4m3_mma(compute_capability()))
        return FP8_B;
    return o.kernels == KV_CUDA_FP8_PATH_A ? FP8_A : o.kernels == KV_CUDA_FP8_PATH_C ? FP8_C : FP8_B;
}

// The tensor-core kernel instance for a cache (use_mma holds).
static const void *mma_kernel_for(const KvShape &s, const KvCudaOptions &o)
{
    const int D = (int)s.head_dim, G = (int)(s.q_heads / s.kv_heads);
    switch (s.format) {
    case KV_BF16: return bf16_mma_select(D, G);
    case KV_INT4: return kivi_mma_select(D, G);
    default: return code_mma_select(s.format, D, G, fp8_path(s, o));
    }
}

const char *fp8_kernel_name(const KvShape *s, const KvCudaOptions *o)
{
    static const char *const NAME[] = {"B", "A", "C"};     // by Fp8Path
    KvShape f = *s;
    f.format = KV_FP8;
    return !use_mma(f, *o) ? "fp32" : NAME[fp8_path(f, *o)];
}

// ---------------------------------------------------------------------------
// Shared memory and occupancy of the tensor-core kernels

// The larger of the kernel's staging and its split state (finish_block
// reuses the staging's memory for it).
static size_t mma_smem(KvFormat f, int D, int G)
{
    const size_t tiles = f == KV_BF16 ? bf16_mma_staging(D) : f == KV_INT4 ? kivi_mma_staging(D)
                                                                           : code_mma_staging(f, D);
    const size_t state = split_state_bytes(G);
    return tiles > state ? tiles : state;
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
// The split plan

// The tiles of 16 tokens each warp should see before a third or fourth
// block per SM pays, and before a second does (0: always two or more). The
// formats bound by their instructions (int4, NVFP4, MXFP4) gain from more
// warps per SM and keep two.
#define TILES_FOR_MORE_BLOCKS 64
#define TILES_FOR_MORE_BLOCKS_BOUND 8
#define TILES_FOR_SECOND_BLOCK 16

static bool bound_by_instructions(KvFormat f)
{
    return f == KV_INT4 || f == KV_NVFP4 || f == KV_MXFP4;
}

// The tensor-core kernels: as many blocks as the SMs hold at once (their
// occupancy, asked of the runtime), so that the step is one wave with no
// tail; but one fewer per SM at a time, down to two, while each warp would
// see fewer than TILES_FOR_MORE_BLOCKS tiles (batch 1, short contexts at
// batch 16), and one where BF16, FP8 and INT8 would see fewer than
// TILES_FOR_SECOND_BLOCK with two: there fewer, longer blocks pay their
// start and end less often (kernels/PERF.md). The FP32 kernels: at least
// four blocks per SM (the FP32 KIVI kernel keeps few loads in flight and
// measured slower with fewer). Slices of at least 256 tokens (KIVI: whole
// groups of 32, plus one slice for the residual window). Where the options
// ask for N splits (KvCudaOptions.splits), N, at most one per token.
void plan_splits(GpuCache *c)
{
    long pairs = (long)c->s.batch * c->s.kv_heads;
    long want = (4L * sm_count() + pairs - 1) / pairs;
    long tokens = c->s.format == KV_INT4 ? c->quantized : c->len;
    if (use_mma(c->s, c->opt)) {
        const int G = (int)(c->s.q_heads / c->s.kv_heads);
        long r = mma_prepare(mma_kernel_for(c->s, c->opt), mma_smem(c->s.format, (int)c->s.head_dim, G));
        const bool bound = bound_by_instructions(c->s.format);
        const long more = bound ? TILES_FOR_MORE_BLOCKS_BOUND : TILES_FOR_MORE_BLOCKS;
        const long second = bound ? 0 : TILES_FOR_SECOND_BLOCK;
        auto tiles = [&](long blocks) { return tokens * pairs / (blocks * sm_count() * WARPS * MMA_TILE); };
        while (r > 2 && tiles(r) < more)
            r--;
        if (r == 2 && tiles(2) < second)
            r = 1;
        if (r > 0)
            want = std::max(1L, r * sm_count() / pairs);
    }
    long max_splits = std::max(1L, (tokens + 255) / 256);
    if (c->opt.splits > 0)
        want = c->opt.splits, max_splits = std::max(1L, tokens);
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

// ---------------------------------------------------------------------------
// Launching

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

// A kernel without dynamic shared memory (the FP32 ones).
template <typename Params>
static void launch_fp32(const void *fn, Params p, dim3 grid, cudaStream_t st)
{
    void *args[] = {&p};
    cudaLaunchKernel(fn, grid, dim3(THREADS), args, 0, st);
}

// What RowParams and KiviParams share: the query, the partial rows, the shape.
template <typename Params>
static Params shape_params(const GpuCache *c)
{
    const KvShape &s = c->s;
    Params p = {};
    p.q = c->q, p.part_o = c->part_o, p.part_m = c->part_m, p.part_l = c->part_l;
    p.Hkv = (int)s.kv_heads, p.Hq = (int)s.q_heads, p.D = (int)s.head_dim;
    p.cap = (int)s.capacity, p.len = (int)c->len, p.chunk = c->chunk, p.splits = c->splits;
    return p;
}

static RowParams row_params(const GpuCache *c)
{
    RowParams p = shape_params<RowParams>(c);
    p.k = (const uint8_t *)c->arr[KV_ARR_K], p.v = (const uint8_t *)c->arr[KV_ARR_V];
    p.k_scale = (const uint16_t *)c->arr[KV_ARR_K_SCALE], p.v_scale = (const uint16_t *)c->arr[KV_ARR_V_SCALE];
    p.k_zero = (const uint16_t *)c->arr[KV_ARR_K_ZERO], p.v_zero = (const uint16_t *)c->arr[KV_ARR_V_ZERO];
    p.k_block = (const uint8_t *)c->arr[KV_ARR_K_BLOCK], p.v_block = (const uint8_t *)c->arr[KV_ARR_V_BLOCK];
    p.k_tensor = (const float *)c->arr[KV_ARR_K_TENSOR], p.v_tensor = (const float *)c->arr[KV_ARR_V_TENSOR];
    p.head_scales = (int)c->s.head_scales;
    p.promote = c->opt.fp8_promote;
    p.split0 = 0;
    return p;
}

static KiviParams kivi_params(const GpuCache *c)
{
    KiviParams p = shape_params<KiviParams>(c);
    p.k = (const uint8_t *)c->arr[KV_ARR_K], p.v = (const uint8_t *)c->arr[KV_ARR_V];
    p.k_scale = (const uint16_t *)c->arr[KV_ARR_K_SCALE], p.k_zero = (const uint16_t *)c->arr[KV_ARR_K_ZERO];
    p.v_scale = (const uint16_t *)c->arr[KV_ARR_V_SCALE], p.v_zero = (const uint16_t *)c->arr[KV_ARR_V_ZERO];
    p.k_res = (const uint16_t *)c->arr[KV_ARR_K_RES], p.v_res = (const uint16_t *)c->arr[KV_ARR_V_RES];
    p.quantized = (int)c->quantized, p.res_cap = (int)(c->s.residual + KV_KIVI_GROUP);
    return p;
}

// int4 on the tensor cores: the residual window (BF16) as the last split,
// then the quantized groups over the others, as its programmatic
// dependent: they are placed once every residual block has started and
// wait for them before they write (finish_block), so the merge's wait
// covers both.
static void launch_kivi_mma(const GpuCache *c, RowParams p, cudaStream_t st)
{
    const KvShape &s = c->s;
    const int G = s.q_heads / s.kv_heads;
    RowParams r = p;
    KvShape rs = s;
    rs.format = KV_BF16;
    r.k = (const uint8_t *)c->arr[KV_ARR_K_RES], r.v = (const uint8_t *)c->arr[KV_ARR_V_RES];
    r.cap = (int)(s.residual + KV_KIVI_GROUP), r.len = r.chunk = (int)(c->len - c->quantized);
    r.split0 = c->splits - 1;
    launch_mma(r, dim3(1, s.kv_heads, s.batch), mma_kernel_for(rs, c->opt),
               mma_smem(KV_BF16, (int)s.head_dim, G), st);
    p.len = (int)c->quantized;
    if (c->splits > 1)
        launch_mma(p, dim3(c->splits - 1, s.kv_heads, s.batch), mma_kernel_for(s, c->opt),
                   mma_smem(s.format, (int)s.head_dim, G), st, true);
}

// The merge of the splits, a dependent of the attention kernel on sm_90.
static void launch_merge(const GpuCache *c, cudaStream_t st)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(c->s.batch * c->s.q_heads);
    cfg.blockDim = dim3(c->s.head_dim);             // <= KV_HEAD_DIM_MAX threads
    cfg.stream = st;
    cudaLaunchAttribute attr = {};
    set_dependent(cfg, attr);
    cudaLaunchKernelEx(&cfg, merge_select(c->splits), (const float *)c->part_o, (const float *)c->part_m,
                       (const float *)c->part_l, c->out, c->splits, (int)c->s.head_dim);
}

void launch(const GpuCache *c, cudaStream_t st)
{
    const KvShape &s = c->s;
    const int G = s.q_heads / s.kv_heads;
    const dim3 grid(c->splits, s.kv_heads, s.batch);
    const RowParams p = row_params(c);
    if (use_mma(s, c->opt) && s.format == KV_INT4)
        launch_kivi_mma(c, p, st);
    else if (use_mma(s, c->opt))
        launch_mma(p, grid, mma_kernel_for(s, c->opt), mma_smem(s.format, (int)s.head_dim, G), st);
    else if (s.format == KV_INT4)
        launch_fp32(kivi_fp32_select(G), kivi_params(c), grid, st);
    else
        launch_fp32(rows_fp32_select(s.format, G), p, grid, st);
    launch_merge(c, st);
}
