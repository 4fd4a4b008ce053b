/* gpu.h - what a GPU brings to the KV-cache question: memory, bandwidth,
 * and whether its tensor cores take FP8 operands. Loaded from
 * scenarios/gpus/NAME.json; bandwidth comes from vendors' datasheets,
 * memory from what the driver reports, which is not the datasheet's "80GB"
 * (an H100 has 81,559 MiB = 85.52 GB). */
#ifndef KVLAB_GPU_H
#define KVLAB_GPU_H

#include "checked.h"
#include "error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char name[64];              // file stem: "h100-sxm"
    char display[96];           // "NVIDIA H100 SXM5 80GB"
    char source[512];
    char arch[32];              // "sm_90", "gfx942"
    char compute_capability[8]; // "9.0"; "" for non-NVIDIA parts
    char datasheet_memory[32];  // as the vendor prints it: "80GB"
    u128 memory;                // bytes the driver reports in total
    u128 bandwidth;             // bytes per second, peak
    bool fp8_tensor_cores;      // FP8 operands in matrix units
} Gpu;

int gpu_load(Gpu *g, const char *path, Error *e);
/* The same from text in memory (len bytes, no NUL needed); name stands for
 * the file in messages and in the check of the "name" field. */
int gpu_parse(Gpu *g, const char *name, const char *text, size_t len, Error *e);

#endif
