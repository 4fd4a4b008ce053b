/* gpu.c - the GPU file loader. */
#include "gpu.h"

#include "jsonfile.h"

#include <string.h>

static const char *const GPU_FIELDS[] = {
    "name", "display", "source", "note", "arch", "compute_capability", "datasheet_memory", "memory",
    "bandwidth", "fp8_tensor_cores", NULL,
};

/* Reads g from d, then frees d. */
static int from_doc(void *out, JsonDoc *d, const void *ctx, Error *e)
{
    Gpu *g = out;
    (void)ctx;
    const cJSON *r = d->root;
    int rc = json_object(d, r, "a GPU file", e) || json_known_fields(d, r, GPU_FIELDS, e) ||
             json_string(d, r, "name", FIELD_REQUIRED, g->name, sizeof g->name, e) ||
             json_string(d, r, "display", FIELD_REQUIRED, g->display, sizeof g->display, e) ||
             json_string(d, r, "source", FIELD_REQUIRED, g->source, sizeof g->source, e) ||
             json_string(d, r, "arch", FIELD_REQUIRED, g->arch, sizeof g->arch, e) ||
             json_string(d, r, "compute_capability", FIELD_OPTIONAL, g->compute_capability,
                         sizeof g->compute_capability, e) < 0 ||
             json_string(d, r, "datasheet_memory", FIELD_REQUIRED, g->datasheet_memory,
                         sizeof g->datasheet_memory, e) ||
             json_size(d, r, "memory", FIELD_REQUIRED, &g->memory, e) ||
             json_rate(d, r, "bandwidth", FIELD_REQUIRED, &g->bandwidth, e) ||
             json_bool(d, r, "fp8_tensor_cores", FIELD_REQUIRED, &g->fp8_tensor_cores, e);
    if (!rc)
        rc = jsondoc_check_name(d, g->name, e);
    jsondoc_done(d);
    return rc ? -1 : 0;
}

int gpu_load(Gpu *g, const char *path, Error *e)
{
    return jsondoc_read(g, sizeof *g, from_doc, NULL, path, NULL, 0, e);
}

int gpu_parse(Gpu *g, const char *name, const char *text, size_t len, Error *e)
{
    return jsondoc_read(g, sizeof *g, from_doc, NULL, name, text, len, e);
}
