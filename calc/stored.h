/* stored.h - figures measured on a GPU once and shipped with kvlab, so that
 * a learner without a GPU still sees real GPU figures, always shown as that
 * GPU's, with its name and the date they were measured, never as this
 * machine's.
 *
 * One JSON file per GPU run, STOREDDIR/NAME.json (assets/stored/ in the
 * tree, DATADIR/stored installed; paths_storeddir), written by
 * assets/stored_results.sh from what the run wrote:
 *
 *   name, device, measured (YYYY-MM-DD), command, source   the run
 *   sm_count, copy_GBps, fp8_path, shape {q_heads, kv_heads, head_dim,
 *   layers}, batch                                          as kvlab bench
 *   formats: [{format, slope_ms_per_token, points: [{context,
 *             attention_ms, GBps}]}]                        one layer each
 *   niah (optional): {measured, command, source, result}, result
 *             `kvlab niah --backend cuda --json` of the same GPU, on
 *             its own date
 *
 * Every format shares the contexts of the first, rising. */
#ifndef KVLAB_STORED_H
#define KVLAB_STORED_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORED_FORMATS_MAX 8
#define STORED_POINTS_MAX 16

typedef struct {
    uint64_t context;           // tokens per sequence
    double ms;                  // one decode step of one attention layer, median
    double gbps;                // the bytes the step reads over its time
} StoredPoint;

typedef struct {
    char format[16];            // a format id of calc/format.h
    double slope;               // ms per context token, one layer (least squares)
    size_t n;
    StoredPoint points[STORED_POINTS_MAX];
} StoredSeries;

#define NIAH_FIG_FORMATS_MAX 8
#define NIAH_FIG_LENGTHS_MAX 16
#define NIAH_FIG_DEPTHS_MAX 8

/* A needle-in-a-haystack figure, a cell's or a format's over the grid:
 * accuracy and its Wilson 95% interval, the paired bootstrap 95% interval
 * of the difference to bf16 (format - bf16), as kvlab niah --json writes
 * them. */
typedef struct {
    unsigned trials;
    double accuracy, ci_low, ci_high;
    double diff_low, diff_high;
} NiahFigure;

/* A NIAH grid's figures as they are shown: the stored run's, read from
 * kvlab niah --json, and a run of this machine's (the NIAH screen) drawn
 * from the same. cells[f][l][d]; a format's verdict is a Verdict
 * (stats.h), or -1 where no trial ran. */
typedef struct {
    char device[96];
    char measured[16], command[128], source[256];   // where stored: the run
    double tolerance;           // the rule's
    unsigned trials;            // a cell's
    size_t n_formats, n_lengths, n_depths;
    uint64_t lengths[NIAH_FIG_LENGTHS_MAX];
    double depths[NIAH_FIG_DEPTHS_MAX];
    struct {
        char id[32];
        bool simulated;
        NiahFigure all;         // over the grid
        int verdict;
    } formats[NIAH_FIG_FORMATS_MAX];
    NiahFigure cells[NIAH_FIG_FORMATS_MAX][NIAH_FIG_LENGTHS_MAX][NIAH_FIG_DEPTHS_MAX];
} NiahFigures;

typedef struct {
    char name[64];              // file stem: "nvidia-h200"
    char device[96];            // "NVIDIA H200"
    char measured[16];          // the date of the run, "2026-11-29"
    char command[128];          // what measured it
    char source[256];           // the file the run wrote, in the tree
    char fp8_path[8];           // the FP8 kernel timed: "A", "B" or "fp32"
    uint64_t sm_count;
    double copy_gbps;           // device-to-device copy, read + write, same run
    uint64_t q_heads, kv_heads, head_dim, layers;
    uint64_t batch;
    size_t n_formats;
    StoredSeries formats[STORED_FORMATS_MAX];
    bool has_niah;              // a "niah" member: kvlab niah --json
    NiahFigures niah;           // its figures, where has_niah
} StoredRun;

int stored_load(StoredRun *r, const char *path, Error *e);
/* The same from text in memory (len bytes); name stands for the file. */
int stored_parse(StoredRun *r, const char *name, const char *text, size_t len, Error *e);

/* The stored GPU run kvlab shows: the first file of dir by name (where
 * dir is NULL, paths_storeddir()); an error naming the directory where it
 * holds none. */
int stored_gpu_run(StoredRun *r, const char *dir, Error *e);
/* The series of format in r; NULL where the run did not measure it. */
const StoredSeries *stored_series(const StoredRun *r, const char *format);

/* The stored GPU slopes, for a figure shown in place (the lessons' GPU
 * widget): what stored_gpu_run loads, each format's slope in ms per
 * context token for one attention layer (x layers for the model) and its
 * ratio to BF16's (NaN without a BF16 series). */
typedef struct {
    char device[96], measured[16];
    uint64_t batch, layers;
    size_t n;
    struct {
        char format[16];
        double ms_per_token;    // one attention layer
        double ratio_to_bf16;
    } rows[STORED_FORMATS_MAX];
} StoredSlopes;
int stored_gpu_slopes(StoredSlopes *out, Error *e);

/* 0 where r holds NIAH results; else "FILE: no stored NIAH results". */
int stored_niah_check(const StoredRun *r, Error *e);

#endif
