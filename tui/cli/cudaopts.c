/* cudaopts.c - see cudaopts.h. */
#include "cudaopts.h"

#include <ctype.h>
#include <string.h>

/* --fp8-path's letters and the kernels each asks for. */
static const struct {
    char letter;
    KvCudaKernels kernels;
} FP8_PATHS[] = {{'A', KV_CUDA_FP8_PATH_A}, {'B', KV_CUDA_TENSOR_CORES}, {'C', KV_CUDA_FP8_PATH_C}};

#define N_FP8_PATHS (sizeof FP8_PATHS / sizeof *FP8_PATHS)

char cudaopts_e4m3_chosen(const KvCudaOptions *o)
{
    return o->kernels == KV_CUDA_FP8_PATH_A ? 'A' : o->kernels == KV_CUDA_FP8_PATH_C ? 'C' : 0;
}

const char *cudaopts_given(const Given *g, const OptSpec *specs, CudaOpts ix)
{
    const int order[] = {ix.fp8_path, ix.promote, ix.splits};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        if (g->set[order[i]])
            return specs[order[i]].name;
    return NULL;
}

int cudaopts_parse(const Given *g, const OptSpec *specs, CudaOpts ix, bool fp8, KvCudaOptions *o, Error *e)
{
    *o = gpu_options_from_env();
    if ((g->set[ix.fp8_path] || g->set[ix.promote]) && !fp8)
        return error_set(e, "--%s applies to fp8_e4m3, which no --format asks for",
                         specs[g->set[ix.fp8_path] ? ix.fp8_path : ix.promote].name);
    if (g->set[ix.fp8_path]) {
        const char *v = g->val[ix.fp8_path];
        size_t i = 0;
        while (i < N_FP8_PATHS && (strlen(v) != 1 || toupper((unsigned char)*v) != FP8_PATHS[i].letter))
            i++;
        if (i == N_FP8_PATHS)
            return error_set(e, "--fp8-path: expected A, B or C, not '%s'", v);
        /* B is the default: it leaves an environment's FP32 choice alone */
        if (FP8_PATHS[i].kernels != KV_CUDA_TENSOR_CORES || cudaopts_e4m3_chosen(o))
            o->kernels = FP8_PATHS[i].kernels;
    }
    if (g->set[ix.promote]) {
        uint64_t n;
        if (cli_count(g, specs, ix.promote, 1, 64, &n, e))
            return -1;
        if (!cudaopts_e4m3_chosen(o))
            return error_set(e, "--promote applies to --fp8-path A or C");
        o->fp8_promote = (int)n;
    }
    uint64_t splits = 0;
    if (cli_count(g, specs, ix.splits, 1, 1u << 16, &splits, e))
        return -1;
    if (g->set[ix.splits])
        o->splits = (int)splits;
    return 0;
}

int cudaopts_kernel_check(const Given *g, CudaOpts ix, const KvCudaOptions *o, const char *kernel,
                          const GpuInfo *gi, unsigned long long head_dim, unsigned long long q_per_kv, Error *e)
{
    const char chosen = cudaopts_e4m3_chosen(o);
    if (!g->set[ix.fp8_path] || !chosen || kernel[0] == chosen)
        return 0;
    if (!gpu_has_e4m3_mma(gi))
        return error_set(e, "--fp8-path %c needs an E4M3 tensor-core MMA (compute capability 8.9 or later); "
                            "%s is %d.%d", chosen, gi->name, gi->cc_major, gi->cc_minor);
    return error_set(e, "--fp8-path %c: for head dim %llu with %llu query head%s a KV head the plugin runs "
                        "FP8 %s, not path %c", chosen, head_dim, q_per_kv, q_per_kv == 1 ? "" : "s",
                     strcmp(kernel, "fp32") ? "path B" : "on its FP32 kernels", chosen);
}
