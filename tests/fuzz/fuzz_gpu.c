/* fuzz_gpu.c - the GPU file loader (gpu_parse). */
#include "fuzz.h"

#include "gpu.h"

FUZZ_TARGET(gpu)
{
    char *text = fuzz_exact(data, size);
    static Gpu g, again;
    Error e;
    int rc = gpu_parse(&g, "fuzz.json", text, size, &e);
    if (rc) {
        fuzz_check_file_error(&e, "fuzz.json", text, size);
    } else {
        FUZZ_CHECK(strcmp(g.name, "fuzz") == 0, "name '%s'", g.name);
        FUZZ_CHECK(g.memory >= 1 && g.bandwidth >= 1, "no memory or no bandwidth");
        FUZZ_CHECK(g.display[0] && g.arch[0] && g.datasheet_memory[0], "a required field empty");
    }
    FUZZ_CHECK(gpu_parse(&again, "fuzz.json", text, size, &e) == rc &&
                   (rc || memcmp(&g, &again, sizeof g) == 0),
               "a second read differs");
    free(text);
    return 0;
}
