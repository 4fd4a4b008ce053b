/* report.h - how a workload's figures are printed: the header that says
 * what was computed, the formats table, and the same as JSON. Shared by
 * `kvlab calc` and `kvlab scenario show`. */
#ifndef KVLAB_REPORT_H
#define KVLAB_REPORT_H

#include "budget.h"
#include "error.h"
#include "format.h"
#include "gpu.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#define REPORT_CONTEXTS_MAX 16

typedef struct {
    const char *scenario;       // the scenario it started from, if any
    const char *model;          // display name; NULL for a typed shape
    const Gpu *gpu;             // NULL when none was named
    Workload w;
    size_t n_formats;
    const Format *formats[16];
    size_t n_contexts;          // speedup series, optional
    uint64_t contexts[REPORT_CONTEXTS_MAX];
} Report;

/* Computes every format first, so an error prints nothing. */
int report_text(const Report *r, bool csv, FILE *out, Error *e);
/* The JSON object DESIGN.md specifies for `kvlab calc --json`. */
cJSON *report_json(const Report *r, Error *e);

#endif
