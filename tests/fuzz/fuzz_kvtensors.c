/* fuzz_kvtensors.c - the `kvlab niah --kv` reader of safetensors files
 * (kvtensors_parse). */
#include "fuzz.h"

#include "kvgen.h"
#include "kvtensors.h"

#include <math.h>

#define NAME "fuzz.safetensors"
#define HEADER NAME ": header"     // the name of the header's faults

FUZZ_TARGET(kvtensors)
{
    char *bytes = fuzz_exact(data, size);
    KvTensors t;
    Error e;
    if (kvtensors_parse(NAME, bytes, size, &t, &e)) {
        /* A fault in the header names a line and column inside it. */
        uint64_t n = 0;
        for (size_t i = 0; i < 8 && i < size; i++)
            n |= (uint64_t)data[i] << (8 * i);
        if (strncmp(e.msg, HEADER ":", strlen(HEADER ":")) == 0 && size >= 8 && n <= size - 8)
            fuzz_check_file_error(&e, HEADER, bytes + 8, (size_t)n);
        else
            fuzz_check_file_error(&e, NAME, bytes, size);
        FUZZ_CHECK(!e.runtime, "an input error reported as the machine's: %s", e.msg);
        FUZZ_CHECK(!t.k && !t.v && !t.tokens, "a failed read left memory allocated");
    } else {
        FUZZ_CHECK(t.tokens >= 1 && t.tokens <= KVGEN_TOKENS_MAX && t.kv_heads >= 1 && t.head_dim >= 1 &&
                       t.head_dim <= KVGEN_MAX_DIM,
                   "%zu x %zu x %zu", t.tokens, t.kv_heads, t.head_dim);
        size_t bytes_per = !strcmp(t.dtype, "F32") ? 4 : !strcmp(t.dtype, "BF16") || !strcmp(t.dtype, "F16") ? 2 : 0;
        FUZZ_CHECK(bytes_per, "dtype '%s'", t.dtype);
        size_t n = t.tokens * t.kv_heads * t.head_dim;
        FUZZ_CHECK(n * bytes_per * 2 <= size - 8, "k and v of %zu elements each in %zu bytes", n, size);
        /* Every element is read, so ASan sees a short array. */
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(isfinite(t.k[i]) && isfinite(t.v[i]), "element %zu not finite", i);
        kvtensors_free(&t);
    }
    free(bytes);
    return 0;
}
