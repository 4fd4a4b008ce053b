/* test_gpu.c - the CUDA kernels against the CPU reference and a float64
 * attention, on fresh random caches of every format and several shapes
 * (odd lengths, every GQA group, head dimensions 64 to 256). Without a
 * plugin or a GPU the runner leaves the suite out, saying why once
 * (gpu_usable, test_main.c). */
#include "testutil.h"

#include "kv_cuda.h"
#include "kv_attn.h"
#include "minifloat.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* GPU against the CPU reference: both FP32 with the same inputs; the GPU
 * sums in another order and uses fast exponentials (__expf, 2 ulp; the
 * tensor-core kernels ex2.approx, results below 2^-126 flushed). Both
 * tolerances bound the relative L2 error of each query head's output. */
#define GPU_VS_CPU_TOL 1e-4
/* The tensor-core kernels (every format, int4's groups and its BF16 window
 * included, at D <= 128) round the query and the probabilities to FP16 or
 * BF16 operands (8 to 11 bits of mantissa): a few 1e-3. */
#define GPU_MMA_VS_CPU_TOL 5e-3

/* FP8 path C (p.v on E4M3 MMAs) against the CPU reference with its
 * arithmetic (E4M3 query and probabilities, KvCpuOptions), head by head,
 * heads whose probabilities lie near an E4M3 rounding point left out
 * (P_NEAR_WINDOW): the same codes weight the same values, and what is left
 * is how the sums are kept. The E4M3 MMA of Ada and Hopper keeps 13
 * mantissa bits where it adds (SageAttention2; DeepSeek-V3, 3.5.2): its 32
 * products aligned to the largest and truncated, and its accumulator
 * truncated as it is added. Promoted into FP32 after every block of 32
 * tokens, only the first remains: up to 2^-13 of a block's largest
 * product for each of its 32, which a block's sum of products of both
 * signs can make a few 1e-3 of itself: the tensor-core tolerance, 5e-3.
 * Kept in the MMA's accumulators over the split, up to about 24 MMAs a
 * warp in these caches each truncate the running sum by up to 2^-13 of
 * itself besides: 2e-2. */
#define GPU_FP8C_PROMOTED_TOL GPU_MMA_VS_CPU_TOL
#define GPU_FP8C_TOL 2e-2
/* A probability 256 p within this (relative) of an E4M3 rounding point:
 * its score, summed in another order, may round it apart. */
#define P_NEAR_WINDOW 1e-5

/* The tokens int4 keeps in BF16 in these caches. */
#define KIVI_RESIDUAL 128

bool gpu_usable(char *why, size_t n)
{
    /* In a child: CUDA, once initialized, does not survive the fork of
     * each test that follows. */
    int fd[2];
    if (pipe(fd) != 0)
        return snprintf(why, n, "cannot ask: pipe: %s", strerror(errno)), false;
    pid_t pid = fork();
    if (pid == 0) {
        Error e;
        bool ok = gpu_open(&e) != NULL;
        if (!ok && write(fd[1], e.msg, strlen(e.msg)) < 0)
            _exit(2);
        _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = pid > 0 ? read(fd[0], why, n - 1) : -1;
    why[got > 0 ? got : 0] = '\0';
    close(fd[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return snprintf(why, n, "cannot ask: fork: %s", strerror(errno)), false;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return true;
    if (!*why)
        snprintf(why, n, "the plugin's check ended with status %d", status);
    return false;
}

/* The suite runs only where gpu_usable said yes (test_main.c). */
static const KvCudaApi *gpu(void)
{
    Error e;
    const KvCudaApi *api = gpu_open(&e);
    ck_assert_msg(api != NULL, "%s", e.msg);
    return api;
}

/* The plugin and what it says of the GPU. */
static const KvCudaApi *gpu_info(GpuInfo *info)
{
    const KvCudaApi *api = gpu();
    char err[512];
    ck_assert_msg(api->info(info, err, sizeof err) == 0, "%s", err);
    return api;
}

/* The exponent of value row `row` of cache `it` in the `wide` caches. */
static int wide_exp(int it, size_t row)
{
    static const int BASE[] = {-100, -20, 60, 110};
    const uint32_t hash = (uint32_t)row * 0x85EBCA77u >> 16;
    if (it % 5 == 4)
        return (int)(hash % 121) - 60;
    if (BASE[it % 5] == 110 && row % 997 == 996)
        return 124;
    return BASE[it % 5] + (int)(hash % 17) - 8;
}

/* One cache of this shape through the GPU and the CPU, compared head by
 * head. `it` picks the kind of rows (every third spread, `wide` values)
 * and FP8's per-head scales (it % 7 == 1). */
typedef struct {
    KvFormat f;
    uint32_t B, H, G, D, T;
    int it;
} Case;

static void check_case(const KvCudaApi *api, const KvCudaOptions *o, Rng *r, Case cs, uint64_t salt, bool wide)
{
    const uint32_t B = cs.B, H = cs.H, G = cs.G, D = cs.D, T = cs.T;
    const int it = cs.it;
    KvShape s = {cs.f, B, H, H * G, D, 3072, cs.f == KV_INT4 ? KIVI_RESIDUAL : 0, it % 7 == 1};
    KvCache c;
    ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
    size_t n = (size_t)B * H * T * D, nq = (size_t)B * s.q_heads * D;
    float *k = malloc(n * 4), *v = malloc(n * 4), *q = malloc(nq * 4);
    float *cpu = malloc(nq * 4), *dev = malloc(nq * 4);
    /* every third cache: rows of magnitudes from 1 down to 2^-12, so
     * that block scales of one tensor span subnormals and normals */
    const bool spread = it % 3 == 2;
    for (size_t i = 0; i < n; i++) {
        float m = spread ? group_magnitude(i / D) : 1.0f;
        float mv = wide ? ldexpf(1.0f, wide_exp(it, i / D)) : m;
        k[i] = rng_uniform(r, 2) * m;
        v[i] = rng_uniform(r, 2) * mv;
    }
    for (size_t i = 0; i < nq; i++)
        q[i] = rng_uniform(r, 1);
    ck_assert_int_eq(kv_append(&c, k, v, T, NULL), 0);
    /* the arithmetic of path A (the E4M3 query) where it runs */
    const KvCpuOptions none = {false, false}, arith = cs.f == KV_FP8 && D <= 128 ? gpu_cpu_arith(o) : none;
    ck_assert_int_eq(kv_decode_cpu_with(&c, q, cpu, 0, &arith, NULL), 0);
    GpuCache *g;
    char err[512];
    ck_assert_msg(api->upload(&c, o, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(api->decode(g, q, dev, err, sizeof err) == 0, "%s", err);
    double *ref = malloc(nq * sizeof *ref);
    for (size_t i = 0; i < nq; i++)
        ref[i] = cpu[i];
    double e = worst_head(dev, ref, (size_t)B * s.q_heads, D);
    free(ref);
    bool mma = D <= 128 && o->kernels != KV_CUDA_FP32;
    ck_assert_seeded(e < (mma ? GPU_MMA_VS_CPU_TOL : GPU_VS_CPU_TOL),
                     "%s B=%u H=%u G=%u D=%u T=%u: GPU vs CPU %g (salt %#llx, cache %d)",
                     kv_format_id(cs.f), B, H, G, D, T, e, (unsigned long long)salt, it);
    api->release(g);
    free(k), free(v), free(q), free(cpu), free(dev);
    kv_cache_done(&c);
}

/* The head dimensions and query heads a KV head that the GPU tests draw from. */
static const uint32_t DIMS[] = {64, 128, 256}, GROUPS[] = {1, 2, 4, 8};

/* Runs `count` random caches of the formats given (NULL: all) through the
 * GPU and the CPU and compares. An int4 cache at it % 4 == 3 (every fourth
 * when only int4 runs, every second among all formats) is shorter than its
 * BF16 window plus one group, so that it has no quantized part. `wide`:
 * value rows of magnitudes far beyond what FP16 or one BF16 factor can
 * hold, keys as usual: cache `it` takes rows within 2^8 of 2^-100, 2^-20,
 * 2^60 or 2^110, the last with a row of 2^124 every 997 (and at least 997
 * rows), or from 2^-60 to 2^60 (wide_exp). */
static void gpu_vs_cpu(const KvCudaOptions *o, const KvFormat *only, int n_only, int count, uint64_t salt,
                       bool wide)
{
    const KvCudaApi *api = gpu();
    Rng r = {test_seed() ^ salt};
    for (int it = 0; it < count; it++) {
        Case cs = {only ? only[it % n_only] : (KvFormat)(it % KV_FORMATS), 0, 0, 0, 0, 0, it};
        cs.D = DIMS[rng_range(&r, 0, N_OF(DIMS) - 1)], cs.G = GROUPS[rng_range(&r, 0, N_OF(GROUPS) - 1)];
        cs.B = (uint32_t)rng_range(&r, 1, 3), cs.H = (uint32_t)rng_range(&r, 1, 4);
        bool no_groups = cs.f == KV_INT4 && it % 4 == 3;
        uint32_t longest = no_groups ? KIVI_RESIDUAL + KV_KIVI_GROUP - 1 : 3000;
        cs.T = (uint32_t)rng_range(&r, wide && it % 5 == 3 ? 997 : 1, longest) | 1;
        check_case(api, o, &r, cs, salt, wide);
    }
}

/* The plugin's defaults: the tensor-core kernels, FP8 path B. */
static const KvCudaOptions DEFAULTS = {KV_CUDA_TENSOR_CORES, 0, 0};
/* Path C, its MMA sums kept over each split, and promoted after every block. */
static const KvCudaOptions PATH_C = {KV_CUDA_FP8_PATH_C, 0, 0}, PATH_C_PROMOTED = {KV_CUDA_FP8_PATH_C, 1, 0};

/* Every format at every head dimension and group size the kernels take
 * (D 64 and 128 on the tensor cores, 256 on the FP32 kernels; 1 to 8
 * query heads a KV head, which decide where each lane's outputs go), on
 * random odd lengths of a few hundred tokens, past int4's BF16 window
 * and one group: none left to chance. */
START_TEST(gpu_every_shape)
{
    const KvCudaApi *api = gpu();
    Rng r = {test_seed() ^ 0x5A4E};
    int it = 0;
    for (int f = 0; f < KV_FORMATS; f++)
        for (size_t d = 0; d < N_OF(DIMS); d++)
            for (size_t gi = 0; gi < N_OF(GROUPS); gi++, it++) {
                Case cs = {(KvFormat)f, 2, 2, GROUPS[gi], DIMS[d],
                           (uint32_t)rng_range(&r, KIVI_RESIDUAL + KV_KIVI_GROUP + 1, 700) | 1, it};
                check_case(api, &DEFAULTS, &r, cs, 0x5A4E, false);
            }
}
END_TEST

/* Every format on random shapes and contexts: the GPU's output is the CPU
 * reference's, within the tolerance of the kernel that ran. */
START_TEST(gpu_matches_cpu)
{
    gpu_vs_cpu(&DEFAULTS, NULL, 0, 36, 0x6B0, false);
}
END_TEST

/* MXFP4's E8M0 block scales from 2^-110 to 2^122 (codes 17 to 249), and
 * up to 2^120 apart within a tile: the kernel moves each tile's operands by
 * its largest scale (e8m0_tile_shift) and must still match the reference
 * head by head. */
START_TEST(gpu_mxfp4_wide_scales)
{
    static const KvFormat MX[] = {KV_MXFP4};
    gpu_vs_cpu(&DEFAULTS, MX, 1, 10, 0xE8, true);
}
END_TEST

/* KIVI's two parts, quantized groups on the tensor cores and the BF16
 * residual window as the last split, over contexts from under one group
 * (no quantized part) to thousands of tokens. */
START_TEST(gpu_int4_kivi)
{
    static const KvFormat INT4[] = {KV_INT4};
    gpu_vs_cpu(&DEFAULTS, INT4, 1, 16, 0x1A4, false);
}
END_TEST

/* The FP32 kernels, which the tensor-core ones replace where they can:
 * still correct (KV_CUDA_FP32 selects them). */
START_TEST(gpu_fp32_path)
{
    const KvCudaOptions fp32 = {KV_CUDA_FP32, 0, 0};
    gpu_vs_cpu(&fp32, NULL, 0, 18, 0xF32, false);
}
END_TEST

/* FP8 path A (E4M3 operands for q.k): the CPU reference on the same
 * E4M3-rounded query, within the tensor-core tolerance, with the MMA sums
 * promoted to FP32 once per score and after every block of 32 channels. */
START_TEST(gpu_fp8_path_a)
{
    static const KvFormat FP8[] = {KV_FP8};
    GpuInfo info;
    gpu_info(&info);
    if (!gpu_has_e4m3_mma(&info)) {      // the kernels keep to path B there
        printf("gpu_fp8_path_a skipped: %s is %d.%d, path A needs 8.9 or later\n", info.name,
               info.cc_major, info.cc_minor);
        return;
    }
    const KvCudaOptions path_a = {KV_CUDA_FP8_PATH_A, 0, 0}, promote1 = {KV_CUDA_FP8_PATH_A, 1, 0};
    gpu_vs_cpu(&path_a, FP8, 1, 10, 0xF8A, false);
    gpu_vs_cpu(&promote1, FP8, 1, 10, 0xF8A1, false);
}
END_TEST

/* Whether this GPU runs the E4M3 paths (A and C); says so where not. */
static bool e4m3_here(const char *test)
{
    GpuInfo info;
    gpu_info(&info);
    if (!gpu_has_e4m3_mma(&info))       // the kernels keep to path B there
        printf("%s skipped: %s is %d.%d, paths A and C need 8.9 or later\n", test, info.name, info.cc_major,
               info.cc_minor);
    return gpu_has_e4m3_mma(&info);
}

/* One FP8 cache through path C (options o) and the CPU reference with its
 * arithmetic. Each token's key has one channel, so that its score is one
 * exact E4M3 product on the GPU, whatever the MMA's adding keeps; query
 * entries up to 12 give scores within 3 of 0 and probabilities from e^-6
 * to 1, whose E4M3 codes (256 p from 0.6) are normal numbers, so that
 * the kernel's block references, powers of two below the reference's,
 * change no code. Heads with a
 * probability near an E4M3 rounding point are left out (P_NEAR_WINDOW);
 * returns the heads compared. */
static int check_fp8c(const KvCudaApi *api, const KvCudaOptions *o, Rng *r, Case cs, uint64_t salt, double tol)
{
    const uint32_t B = cs.B, H = cs.H, G = cs.G, D = cs.D, T = cs.T;
    KvShape s = {KV_FP8, B, H, H * G, D, 3072, 0, cs.it % 3 == 1};
    KvCache c;
    ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
    const size_t n = (size_t)B * H * T * D, nq = (size_t)B * s.q_heads * D, heads = (size_t)B * s.q_heads;
    float *k = calloc(n, 4), *v = malloc(n * 4), *q = malloc(nq * 4), *qr = malloc(nq * 4);
    float *cpu = malloc(nq * 4), *dev = malloc(nq * 4);
    double *ref = malloc(nq * sizeof *ref);
    bool *near = malloc(heads * sizeof *near);
    for (size_t row = 0; row < n / D; row++)
        k[row * D + (size_t)rng_range(r, 0, D - 1)] = rng_uniform(r, 2);
    for (size_t i = 0; i < n; i++)
        v[i] = rng_uniform(r, 2);
    for (size_t i = 0; i < nq; i++)
        q[i] = rng_uniform(r, 12);
    ck_assert_int_eq(kv_append(&c, k, v, T, NULL), 0);
    const KvCpuOptions arith = gpu_cpu_arith(o);
    ck_assert_int_eq(kv_decode_cpu_with(&c, q, cpu, 0, &arith, NULL), 0);
    memcpy(qr, q, nq * 4);
    kv_e4m3_query(qr, heads, D);
    attn_fp8_p_f64(&c, qr, ref, near, P_NEAR_WINDOW);
    GpuCache *g;
    char err[512];
    ck_assert_msg(api->upload(&c, o, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(api->decode(g, q, dev, err, sizeof err) == 0, "%s", err);
    int compared = 0;
    for (size_t h = 0; h < heads; h++) {
        if (near[h])
            continue;
        compared++;
        for (uint32_t d = 0; d < D; d++)
            ref[h * D + d] = cpu[h * D + d];
        const double e = worst_head(dev + h * D, ref + h * D, 1, D);
        ck_assert_seeded(e < tol, "path C, promote %d, splits %d: B=%u H=%u G=%u D=%u T=%u head %zu: GPU vs CPU %g "
                         "(salt %#llx, cache %d)", o->fp8_promote, o->splits, B, H, G, D, T, h, e,
                         (unsigned long long)salt, cs.it);
    }
    api->release(g);
    free(k), free(v), free(q), free(qr), free(cpu), free(dev), free(ref), free(near);
    kv_cache_done(&c);
    return compared;
}

/* `count` random path C caches (lengths to `longest`) with options o. */
static void fp8c_vs_cpu(const KvCudaOptions *o, int count, uint32_t longest, uint64_t salt, double tol)
{
    const KvCudaApi *api = gpu();
    Rng r = {test_seed() ^ salt};
    int compared = 0;
    for (int it = 0; it < count; it++) {
        Case cs = {KV_FP8, (uint32_t)rng_range(&r, 1, 2), (uint32_t)rng_range(&r, 1, 3),
                   GROUPS[rng_range(&r, 0, N_OF(GROUPS) - 1)], DIMS[rng_range(&r, 0, 1)],
                   (uint32_t)rng_range(&r, 1, longest) | 1, it};
        compared += check_fp8c(api, o, &r, cs, salt, tol);
    }
    ck_assert_msg(compared > 0, "every head had a probability near an E4M3 rounding point");
}

/* FP8 path C (q.k and p.v on E4M3 MMAs, as FlashAttention-3): the CPU
 * reference with the same arithmetic, within GPU_FP8C_TOL with the MMA's
 * sums kept over each split, and within the tighter GPU_FP8C_PROMOTED_TOL
 * promoted after every block of 32 tokens; each with the plan's splits and
 * with one split per sequence. */
START_TEST(gpu_fp8_path_c)
{
    if (!e4m3_here("gpu_fp8_path_c"))
        return;
    const KvCudaOptions one = {KV_CUDA_FP8_PATH_C, 0, 1}, one_promoted = {KV_CUDA_FP8_PATH_C, 1, 1},
                        every4 = {KV_CUDA_FP8_PATH_C, 4, 0};
    fp8c_vs_cpu(&PATH_C, 10, 3000, 0xFC0, GPU_FP8C_TOL);
    fp8c_vs_cpu(&PATH_C_PROMOTED, 10, 3000, 0xFC1, GPU_FP8C_PROMOTED_TOL);
    fp8c_vs_cpu(&one, 6, 3000, 0xFC2, GPU_FP8C_TOL);
    fp8c_vs_cpu(&one_promoted, 6, 3000, 0xFC3, GPU_FP8C_PROMOTED_TOL);
    fp8c_vs_cpu(&every4, 6, 3000, 0xFC4, GPU_FP8C_TOL);
}
END_TEST

/* One split per sequence (KvCudaOptions.splits 1: each sequence's whole
 * context through one block) and three give what the plan's splits give:
 * the CPU reference, within each kernel's tolerance, for every format on
 * the tensor-core kernels (path B), on the FP32 kernels, and FP8 path A
 * (path C: gpu_fp8_path_c). */
START_TEST(gpu_one_split)
{
    const KvCudaOptions one = {KV_CUDA_TENSOR_CORES, 0, 1}, three = {KV_CUDA_TENSOR_CORES, 0, 3},
                        fp32 = {KV_CUDA_FP32, 0, 1}, path_a = {KV_CUDA_FP8_PATH_A, 0, 1};
    static const KvFormat FP8[] = {KV_FP8};
    gpu_vs_cpu(&one, NULL, 0, 18, 0x5B1, false);
    gpu_vs_cpu(&three, NULL, 0, 12, 0x5B3, false);
    gpu_vs_cpu(&fp32, NULL, 0, 12, 0x5B32, false);
    if (e4m3_here("gpu_one_split (path A)"))
        gpu_vs_cpu(&path_a, FP8, 1, 6, 0x5BA, false);
}
END_TEST

/* Path C over a long context in one split, every score zero (q = 0) so
 * that every probability is exactly 1 and the output is the values' mean
 * (about 1 in every channel): promoted after every block of 32 tokens, the
 * float64 mean within GPU_FP8C_PROMOTED_TOL. Kept in the MMA's accumulators
 * over the whole split, the error is what the hardware's adding keeps and
 * is printed, not bounded: it is the effect FlashAttention-3 reports. */
#define LONG_TOKENS 131072
START_TEST(gpu_fp8_path_c_long)
{
    if (!e4m3_here("gpu_fp8_path_c_long"))
        return;
    const KvCudaApi *api = gpu();
    Rng r = {test_seed() ^ 0x10C};
    const uint32_t D = 128, T = LONG_TOKENS;
    KvShape s = {KV_FP8, 1, 1, 1, D, T, 0, false};
    KvCache c;
    ck_assert_int_eq(kv_cache_init(&c, &s, NULL), 0);
    const size_t n = (size_t)T * D;
    float *k = malloc(n * 4), *v = malloc(n * 4), q[128] = {0}, dev[128];
    double ref[128];
    bool near;
    for (size_t i = 0; i < n; i++)
        k[i] = rng_uniform(&r, 2), v[i] = 1 + rng_uniform(&r, 1);
    ck_assert_int_eq(kv_append(&c, k, v, T, NULL), 0);
    attn_fp8_p_f64(&c, q, ref, &near, 0);
    static const struct {
        int promote, splits;
    } RUNS[] = {{0, 1}, {1, 1}, {8, 1}, {0, 0}, {1, 0}};
    for (size_t i = 0; i < N_OF(RUNS); i++) {
        const KvCudaOptions o = {KV_CUDA_FP8_PATH_C, RUNS[i].promote, RUNS[i].splits};
        GpuCache *g;
        char err[512];
        ck_assert_msg(api->upload(&c, &o, &g, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(api->decode(g, q, dev, err, sizeof err) == 0, "%s", err);
        api->release(g);
        const double e = worst_head(dev, ref, 1, D);
        printf("path C, %d tokens, %s, promoted %s%.0d: error %.3g of the mean's L2\n", T,
               RUNS[i].splits ? "one split" : "the plan's splits", RUNS[i].promote ? "every " : "never",
               RUNS[i].promote, e);
        if (RUNS[i].promote == 1)
            ck_assert_seeded(e < GPU_FP8C_PROMOTED_TOL, "promoted every block, splits %d: %g", RUNS[i].splits, e);
        ck_assert_seeded(isfinite(e), "promote %d, splits %d: not finite", RUNS[i].promote, RUNS[i].splits);
    }
    free(k), free(v);
    kv_cache_done(&c);
}
END_TEST

/* The plugin names the FP8 kernel it runs for a shape (what kvlab bench
 * reports): path B by default (options NULL or zero), A or C when asked for
 * on a GPU with E4M3 MMAs, the FP32 kernels when asked for or where no
 * tensor-core kernel takes the shape (head dim 256; 16 query heads per KV
 * head), whatever was asked. */
START_TEST(gpu_fp8_kernel_named)
{
    GpuInfo info;
    const KvCudaApi *api = gpu_info(&info);
    KvShape mma = {KV_FP8, 1, 8, 32, 128, 64, 0, false}, small = mma, wide = mma, deep = mma;
    small.head_dim = 64;
    wide.head_dim = 256;
    deep.kv_heads = 2;
    const KvCudaOptions path_a = {KV_CUDA_FP8_PATH_A, 0, 0}, fp32 = {KV_CUDA_FP32, 0, 0};
    const bool e4m3 = gpu_has_e4m3_mma(&info);
    ck_assert_str_eq(api->fp8_kernel(&mma, NULL), "B");
    ck_assert_str_eq(api->fp8_kernel(&mma, &PATH_C), e4m3 ? "C" : "B");
    ck_assert_str_eq(api->fp8_kernel(&small, &PATH_C_PROMOTED), e4m3 ? "C" : "B");
    ck_assert_str_eq(api->fp8_kernel(&wide, &PATH_C), "fp32");
    ck_assert_str_eq(api->fp8_kernel(&deep, &PATH_C), "fp32");
    ck_assert_str_eq(api->fp8_kernel(&mma, &DEFAULTS), "B");
    ck_assert_str_eq(api->fp8_kernel(&small, &DEFAULTS), "B");
    ck_assert_str_eq(api->fp8_kernel(&wide, &DEFAULTS), "fp32");
    ck_assert_str_eq(api->fp8_kernel(&deep, &DEFAULTS), "fp32");
    ck_assert_str_eq(api->fp8_kernel(&mma, &path_a), gpu_has_e4m3_mma(&info) ? "A" : "B");
    ck_assert_str_eq(api->fp8_kernel(&small, &path_a), gpu_has_e4m3_mma(&info) ? "A" : "B");
    ck_assert_str_eq(api->fp8_kernel(&wide, &path_a), "fp32");
    ck_assert_str_eq(api->fp8_kernel(&deep, &path_a), "fp32");
    ck_assert_str_eq(api->fp8_kernel(&mma, &fp32), "fp32");
}
END_TEST

/* The device fill and the host's kv_fill_random are one definition
 * (kv_fill.h): a cache filled on the device and the same seed's host cache
 * uploaded give the same output bit for bit, for every format, on the
 * tensor-core kernels and the FP32 ones, with random seeds and lengths
 * (int4 with and without quantized groups). */
START_TEST(gpu_fill_matches_host)
{
    const KvCudaApi *api = gpu();
    Rng r = {test_seed() ^ 0xF111};
    const KvCudaOptions fp32 = {KV_CUDA_FP32, 0, 0};
    for (int it = 0; it < 2 * KV_FORMATS; it++) {
        const KvCudaOptions *o = it < KV_FORMATS ? &DEFAULTS : &fp32;
        KvShape s = {(KvFormat)(it % KV_FORMATS), 2, 2, 8, it % 2 ? 64 : 128, 1024,
                     it % KV_FORMATS == KV_INT4 ? KIVI_RESIDUAL : 0, it % 3 == 1};
        const uint32_t len = (uint32_t)rng_range(&r, 1, s.capacity);
        const uint64_t seed = rng_next(&r);
        KvCache host;
        ck_assert_int_eq(kv_cache_init(&host, &s, NULL), 0);
        ck_assert_int_eq(kv_fill_random(&host, len, seed, NULL), 0);
        GpuCache *up, *dev;
        char err[512];
        ck_assert_msg(api->upload(&host, o, &up, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(api->fill(&s, o, len, seed, &dev, err, sizeof err) == 0, "%s", err);
        const size_t nq = (size_t)s.batch * s.q_heads * s.head_dim;
        float *q = malloc(nq * 4), *a = malloc(nq * 4), *b = malloc(nq * 4);
        for (size_t i = 0; i < nq; i++)
            q[i] = rng_uniform(&r, 1);
        ck_assert_msg(api->decode(up, q, a, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(api->decode(dev, q, b, err, sizeof err) == 0, "%s", err);
        for (size_t i = 0; i < nq; i++)
            ck_assert_seeded(memcmp(&a[i], &b[i], 4) == 0, "%s len %u: element %zu %a (host fill) vs %a (device)",
                             kv_format_id(s.format), len, i, a[i], b[i]);
        api->release(up);
        api->release(dev);
        free(q), free(a), free(b);
        kv_cache_done(&host);
    }
}
END_TEST

/* A model's whole step (time_step): both forms measured, finite and
 * positive; eight layers take at least three times as long as one (each
 * layer its own attention and weight slice; the factor leaves room for a
 * step's fixed costs), in both forms; weights larger than the device
 * still measure, their layers' slices read from the share that fits (each
 * byte read: no faster than 1.25 times the copy rate), and so does their
 * read alone (time_read); a step without a layer, a cache
 * or a timed run is refused. */
START_TEST(gpu_model_step)
{
    GpuInfo info;
    const KvCudaApi *api = gpu_info(&info);
    KvShape s = {KV_BF16, 1, 8, 32, 128, 8192, 0, false};
    GpuCache *c[8];
    char err[512];
    for (int i = 0; i < 8; i++)
        ck_assert_msg(api->fill(&s, NULL, 8192, 70 + (uint64_t)i, &c[i], err, sizeof err) == 0, "%s", err);
    double one[2], eight[2], huge[2];
    const size_t weights = (size_t)256 << 20;
    ck_assert_msg(api->time_step(c, 1, 1, weights / 8, 9, &one[0], &one[1], err, sizeof err) == 0, "%s", err);
    ck_assert_msg(api->time_step(c, 8, 8, weights, 9, &eight[0], &eight[1], err, sizeof err) == 0, "%s", err);
    for (int k = 0; k < 2; k++) {
        ck_assert_msg(isfinite(one[k]) && one[k] > 0 && isfinite(eight[k]) && eight[k] > 0, "%g %g", one[k],
                      eight[k]);
        ck_assert_msg(eight[k] >= 3 * one[k], "%s: 8 layers %g ms, 1 layer %g ms", k ? "launched" : "graph",
                      eight[k], one[k]);
    }
    ck_assert_msg(api->time_step(c, 8, 64, 2 * info.memory_total, 3, &huge[0], &huge[1], err, sizeof err) == 0,
                  "%s", err);
    /* every byte of those weights is read, in the step and alone: no faster
     * than 1.25 times the copy rate (a kernel that only reads passes it) */
    double read_ms = 0, copy = 0;
    ck_assert_msg(api->copy_bandwidth((size_t)1 << 30, &copy, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(api->time_read(2 * info.memory_total, &read_ms, err, sizeof err) == 0, "%s", err);
    const double least = 2.0 * info.memory_total / (1.25 * copy * 1e9) * 1e3;
    ck_assert_msg(isfinite(read_ms) && read_ms >= least, "weights read in %g ms, at least %g", read_ms, least);
    ck_assert_msg(huge[0] >= least && huge[1] >= least, "a step of those weights in %g / %g ms, at least %g",
                  huge[0], huge[1], least);
    ck_assert_int_eq(api->time_step(c, 8, 0, weights, 9, &one[0], &one[1], err, sizeof err), -1);
    ck_assert_msg(strstr(err, "a step needs a layer"), "%s", err);
    ck_assert_int_eq(api->time_step(c, 0, 8, weights, 9, &one[0], &one[1], err, sizeof err), -1);
    ck_assert_int_eq(api->time_step(c, 8, 8, weights, 0, &one[0], &one[1], err, sizeof err), -1);
    for (int i = 0; i < 8; i++)
        api->release(c[i]);
}
END_TEST

/* A plain read timed as a step (time_read, the floor kvlab bench sets
 * beside each point) reads from memory, not the L2: for random sizes from
 * half the L2 to the whole of it, which the L2 could hold, the rate over
 * what a read of one word takes (the fixed cost of a timed kernel) stays
 * under 1.25 times the copy rate (read plus written: a kernel that only
 * reads passes 100%, the L2 serves at twice that and more); four times the
 * bytes take at least twice as long; and nothing read takes nothing. */
START_TEST(gpu_read_floor)
{
    GpuInfo info;
    const KvCudaApi *api = gpu_info(&info);
    char err[512];
    double copy = 0, fixed = 0, none = -1;
    ck_assert_msg(api->copy_bandwidth((size_t)1 << 30, &copy, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(api->time_read(16, &fixed, err, sizeof err) == 0, "%s", err);
    Rng r = {test_seed() ^ 0x4EAD};
    for (int k = 0; k < 3; k++) {
        const size_t bytes = (size_t)rng_range(&r, info.l2_bytes / 2, info.l2_bytes) / 16 * 16;
        double ms = 0, four = 0;
        ck_assert_msg(api->time_read(bytes, &ms, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(api->time_read(4 * bytes, &four, err, sizeof err) == 0, "%s", err);
        const double gbps = bytes / ((ms - fixed) * 1e-3) / 1e9;
        ck_assert_seeded(ms > fixed && gbps < 1.25 * copy,
                         "%zu bytes in %g ms, one word in %g: %.0f GB/s beyond the fixed cost, copy %.0f", bytes, ms,
                         fixed, gbps, copy);
        ck_assert_seeded(four >= 2 * ms, "%zu bytes %g ms, four times as many %g ms", bytes, ms, four);
    }
    ck_assert_msg(api->time_read(0, &none, err, sizeof err) == 0 && none == 0, "%g", none);
}
END_TEST

/* Options the plugin does not know are refused, naming what is wrong. */
START_TEST(gpu_bad_options_refused)
{
    const KvCudaApi *api = gpu();
    KvShape s = {KV_FP8, 1, 1, 1, 128, 64, 0, false};
    const KvCudaOptions kernels = {KV_CUDA_KERNELS, 0, 0}, promote = {KV_CUDA_FP8_PATH_A, -1, 0},
                        splits = {KV_CUDA_FP8_PATH_C, 0, -1};
    GpuCache *g = NULL;
    char err[512];
    ck_assert_int_eq(api->fill(&s, &kernels, 32, 1, &g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "kernel choice"), "%s", err);
    ck_assert_int_eq(api->fill(&s, &promote, 32, 1, &g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "fp8_promote"), "%s", err);
    ck_assert_int_eq(api->fill(&s, &splits, 32, 1, &g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "splits"), "%s", err);
}
END_TEST

/* A cache too large for the device is refused with the size needed, the
 * size free and the largest context that fits; nothing crashes. */
START_TEST(gpu_out_of_memory)
{
    const KvCudaApi *api = gpu();
    KvShape s = {KV_BF16, 4096, 8, 32, 128, 1u << 20, 0, false};    // 16 TiB
    GpuCache *g = NULL;
    char err[512];
    ck_assert_int_eq(api->fill(&s, NULL, 1024, 1, &g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "out of device memory") && strstr(err, "largest context"), "%s", err);
}
END_TEST

Suite *suite_gpu(void)
{
    Suite *s = suite_create("gpu");
    TCase *t = tcase_create("cuda");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, gpu_matches_cpu);
    tcase_add_test(t, gpu_every_shape);
    tcase_add_test(t, gpu_mxfp4_wide_scales);
    tcase_add_test(t, gpu_int4_kivi);
    tcase_add_test(t, gpu_fp32_path);
    tcase_add_test(t, gpu_fp8_path_a);
    tcase_add_test(t, gpu_fp8_path_c);
    tcase_add_test(t, gpu_fp8_path_c_long);
    tcase_add_test(t, gpu_one_split);
    tcase_add_test(t, gpu_fp8_kernel_named);
    tcase_add_test(t, gpu_out_of_memory);
    tcase_add_test(t, gpu_fill_matches_host);
    tcase_add_test(t, gpu_bad_options_refused);
    tcase_add_test(t, gpu_model_step);
    tcase_add_test(t, gpu_read_floor);
    suite_add_tcase(s, t);
    return s;
}
