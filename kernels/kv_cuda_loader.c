/* kv_cuda_loader.c - finds and opens libkvlab_cuda.so, and reads the
 * options the environment asks of it; see kv_cuda.h. */
#include "kv_cuda.h"

#include "paths.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const KvCudaApi *gpu_open(Error *e)
{
    static const KvCudaApi *api;
    static char why[ERROR_MSG_MAX];
    static bool tried;
    if (tried) {
        if (!api)
            error_set(e, "%s", why);
        return api;
    }
    tried = true;
    PathList paths;                     // the order paths.h gives
    paths_candidates(PATH_PLUGIN, &paths);
    void *h = NULL;
    /* Why the first plugin that was there would not load: what a user must
     * fix, where a later place (the library path's bare name) would only
     * add "no such file". */
    char first[ERROR_MSG_MAX / 2] = "";
    for (size_t i = 0; i < paths.n && !h; i++) {
        if (strchr(paths.path[i], '/') && access(paths.path[i], R_OK) != 0)
            continue;
        h = dlopen(paths.path[i], RTLD_NOW | RTLD_LOCAL);
        const char *err = h ? NULL : dlerror();
        if (err && !first[0])
            snprintf(first, sizeof first, "%s", err);
    }
    if (!h) {
        snprintf(why, sizeof why, "no GPU backend: libkvlab_cuda.so could not be loaded (%s); "
                                  "build it with nvcc (make) or set KVLAB_CUDA_PLUGIN", first);
        goto fail;
    }
    KvCudaEntry entry = (KvCudaEntry)dlsym(h, KVLAB_CUDA_ENTRY);
    const KvCudaApi *a = entry ? entry() : NULL;
    if (!a || a->abi != KVLAB_CUDA_ABI) {
        snprintf(why, sizeof why, "libkvlab_cuda.so is from another kvlab version (ABI %d, want %d)",
                 a ? a->abi : -1, KVLAB_CUDA_ABI);
        goto fail;
    }
    GpuInfo info;
    char err[ERROR_MSG_MAX];
    if (a->info(&info, err, sizeof err)) {
        snprintf(why, sizeof why, "no usable GPU: %.480s", err);
        goto fail;
    }
    api = a;
    return api;
fail:
    error_set(e, "%s", why);            // kept in `why` for later calls
    return NULL;
}

KvCudaOptions gpu_options_from_env(void)
{
    /* KVLAB_CUDA_PATH's words and the kernels each asks for */
    static const struct {
        const char *word;
        KvCudaKernels kernels;
    } PATHS[] = {{"fp32", KV_CUDA_FP32}, {"fp8a", KV_CUDA_FP8_PATH_A}, {"fp8c", KV_CUDA_FP8_PATH_C}};
    KvCudaOptions o = {KV_CUDA_TENSOR_CORES, 0, 0};
    const char *path = getenv("KVLAB_CUDA_PATH"), *promote = getenv("KVLAB_CUDA_FP8_PROMOTE"),
               *splits = getenv("KVLAB_CUDA_SPLITS");
    for (size_t i = 0; path && i < sizeof PATHS / sizeof *PATHS; i++)
        if (!strcmp(path, PATHS[i].word))
            o.kernels = PATHS[i].kernels;
    if (promote && atoi(promote) > 0)
        o.fp8_promote = atoi(promote);
    if (splits && atoi(splits) > 0)
        o.splits = atoi(splits);
    return o;
}
