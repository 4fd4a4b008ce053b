/* kv_cuda_loader.c - finds and opens libkvlab_cuda.so; see kv_cuda.h. */
#include "kv_cuda.h"

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
    char paths[3][4096 + 32];
    int n = 0;
    const char *env = getenv("KVLAB_CUDA_PLUGIN");
    if (env && *env)
        snprintf(paths[n++], sizeof paths[0], "%s", env);
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(paths[n++], sizeof paths[0], "%s/libkvlab_cuda.so", exe);
        }
    }
    snprintf(paths[n++], sizeof paths[0], "libkvlab_cuda.so");
    void *h = NULL;
    const char *last = "not found";
    for (int i = 0; i < n && !h; i++) {
        if (strchr(paths[i], '/') && access(paths[i], R_OK) != 0)
            continue;
        h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (!h)
            last = dlerror();
    }
    if (!h) {
        snprintf(why, sizeof why, "no GPU backend: libkvlab_cuda.so could not be loaded (%s); "
                                  "build it with nvcc (make) or set KVLAB_CUDA_PLUGIN", last);
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
