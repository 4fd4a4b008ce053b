/* niah.h - needle in a haystack through the decode kernels, backend-neutral.
 *
 * A trial: a haystack of S tokens of one KV head from the seeded generator
 * (calc/kvgen.h: outlier key channels, attention sinks, value outliers),
 * keys rotated by RoPE at their positions as a cache stores them; a needle
 * at depth d, whose key leans toward the query on the ordinary channels
 * (never the outlier channels) so that its logit stands `needle_logit`
 * above the haystack's mean, and whose value carries a passkey
 * (calc/passkey.h); `distractors` near-duplicates at random positions
 * whose keys lean the same way by `closeness` of the needle's logit and
 * whose values carry other passkeys. The closer they come, the less
 * quantization error in the keys it takes for one of them to win. One
 * decode step through the kernel (the CPU reference, or the CUDA plugin
 * on a cache written by quantize-on-write and uploaded); the trial
 * succeeds when every digit reads back right from the output.
 *
 * The grid: lengths x depths x formats, `trials` seeded trials a cell;
 * every format sees the same haystacks, needles and distractors (paired),
 * so its difference to BF16 is measured trial by trial. Each format at
 * each depth is a cache of its own (its tensor scales calibrated on its
 * own sequence), and these pairs run side by side on the host's cores.
 *
 * With a file of real keys and values (calc/kvtensors.h) the haystack is
 * its first S tokens of one KV head, each head in turn (trial t reads head
 * t mod kv_heads), the needle and distractors planted in it the same way;
 * the query is drawn as the generator draws one.
 *
 * Formats the kernels store run on them; the others are simulated:
 * quantized and dequantized on the host (calc/quant.h), then decoded by
 * the BF16 kernel, and labelled "simulated" wherever shown.
 */
#ifndef KVLAB_NIAH_H
#define KVLAB_NIAH_H

#include "error.h"
#include "kv_attn.h"
#include "kv_cuda.h"
#include "kvgen.h"
#include "kvtensors.h"
#include "passkey.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NIAH_LENGTHS_MAX 16
#define NIAH_DEPTHS_MAX 16
#define NIAH_FORMATS_MAX 24
#define NIAH_TRIALS_MAX 10000
#define NIAH_HEAD_DIM 128               // Llama's; every format's blocks divide it
#define NIAH_LENGTH_MIN 64
#define NIAH_WORKERS_MAX 64             // threads running a trial's formats and depths

/* The defaults, each written once: kvlab niah --help quotes them. */
#define NIAH_LENGTHS_CPU_DEFAULT "1k,4k,16k,32k"
#define NIAH_LENGTHS_GPU_DEFAULT "4k,16k,32k,64k,128k"
#define NIAH_DEPTHS_DEFAULT "0,0.25,0.5,0.75,1"
#define NIAH_TRIALS_DEFAULT 20
#define NIAH_SEED_DEFAULT 1
#define NIAH_NEEDLE_LOGIT_DEFAULT 16
#define NIAH_DISTRACTORS_DEFAULT 4
#define NIAH_CLOSENESS_DEFAULT 0.85
#define NIAH_TOLERANCE_DEFAULT 0.05
#define NIAH_RESIDUAL_DEFAULT 128       // KIVI's R, the int4 kernel's BF16 window
/* The formats of the default grid: BF16, FP8, KIVI's int4, and 2-bit keys
 * per token against per channel (KIVI's comparison). */
#define NIAH_FORMATS_DEFAULT "bf16,fp8_e4m3,int4,int2-k-token,int2-k-channel"

/* How a simulated variant quantizes keys or values: not at all, an
 * integer scheme at a granularity (quant.h's int-min, as KIVI), or
 * KVQuant's non-uniform 4-bit grid per channel, with a fraction of each
 * channel's values, the farthest from its median, kept exact (its
 * dense-and-sparse split). */
typedef enum { SIM_NONE, SIM_INT, SIM_NUQ } SimKind;

typedef struct {
    SimKind kind;
    unsigned bits;
    bool per_channel;           // groups of 32 tokens of a channel; else 32 channels of a token
    float sparse;               // SIM_NUQ: fraction kept exact
} SimQuant;

typedef struct {
    const char *id;             // "bf16", "int2-k-token"
    const char *what;           // one line, for --help and the lab
    bool simulated;
    KvFormat kernel;            // the format the kernel stores (simulated: bf16)
    SimQuant k, v;
    bool pre_rope;              // keys quantized before RoPE (KVQuant)
    bool hadamard;              // keys and query turned by a Hadamard rotation first
} NiahFormat;

/* The table of formats, kernels' first; NULL past the end. */
const NiahFormat *niah_format_at(size_t i);
int niah_format_parse(const char *id, const NiahFormat **out, Error *e);

typedef struct {
    KvGenParams gen;            // the haystack (tokens and seed are set per trial)
    double rope_theta;          // RoPE on keys and query; 0 = none
    float needle_logit;         // the needle's logit above the haystack's mean
    unsigned distractors;
    float closeness;            // a distractor's lean over the needle's, 0 .. 1
    unsigned digits;            // the passkey's
    float amplitude;            // a passkey slot's value
    uint32_t residual;          // int4 (KIVI) kernel: newest tokens kept in BF16
} NiahHaystack;

void niah_haystack_defaults(NiahHaystack *h);
int niah_haystack_check(const NiahHaystack *h, Error *e);

typedef struct {
    NiahHaystack hay;
    uint32_t lengths[NIAH_LENGTHS_MAX];
    size_t n_lengths;
    double depths[NIAH_DEPTHS_MAX];     // 0 (the first token after the sinks) .. 1 (the last)
    size_t n_depths;
    const NiahFormat *formats[NIAH_FORMATS_MAX];    // bf16 first: the baseline
    size_t n_formats;
    unsigned trials;
    uint64_t seed;
    const KvTensors *kv;        // the haystack from a file (calc/kvtensors.h); NULL: generated
} NiahGrid;

/* The head dimension of the grid's haystacks: the file's, or the
 * generator's. */
size_t niah_head_dim(const NiahGrid *g);
/* Checks the grid: lengths that hold the sinks, value outliers,
 * distractors and needle; depths in 0 .. 1; bf16 first among the formats. */
int niah_grid_check(const NiahGrid *g, Error *e);

/* Where the decode steps run. */
typedef struct {
    bool cuda;
    const KvCudaApi *api;
    KvCudaOptions opts;         // the CUDA kernels (FP8 path, promotion)
    int threads;                // threads in all, 0 = every core (a trial's
                                // formats and depths run side by side)
} NiahBackend;

/* Outcomes: ok[((f * n_lengths + l) * n_depths + d) * trials + t] is 1
 * where format f retrieved the passkey in trial t of that cell;
 * done[l] trials of length l have run (all formats and depths). */
typedef struct {
    NiahGrid g;
    uint8_t *ok;
    unsigned *done;
    bool partial;               // stopped before every trial ran
    double seconds;             // wall clock of the run
} NiahResult;

/* Called after each trial with the work run and all the grid's work (in
 * haystack tokens: a trial's cost grows with its length) and the seconds
 * so far; returns false to stop. */
typedef bool (*NiahProgress)(void *ctx, uint64_t work_done, uint64_t work_total, double seconds);

/* Runs the grid; stops cleanly, keeping what ran, when progress says so or
 * *stop becomes nonzero (a signal handler's flag; may be NULL). */
int niah_run(const NiahGrid *g, const NiahBackend *b, NiahProgress progress, void *ctx,
             volatile sig_atomic_t *stop, NiahResult *r, Error *e);
void niah_result_free(NiahResult *r);

/* One cell's figures: accuracy and its Wilson 95% interval; the paired
 * bootstrap 95% interval of the difference to BF16 (format - bf16; 0, 0
 * for bf16 itself); NaN where no trial ran. */
typedef struct {
    unsigned trials, hits;
    double accuracy, ci_low, ci_high;
    double diff_low, diff_high;
} NiahCell;

int niah_cell(const NiahResult *r, size_t f, size_t l, size_t d, NiahCell *c, Error *e);
/* A format over the whole grid: the cells as strata of one paired
 * bootstrap; its verdict by the rule at `tolerance`. */
int niah_format_summary(const NiahResult *r, size_t f, double tolerance, NiahCell *c, int *verdict,
                        Error *e);

/* The seed of the bootstrap of cell (l, d) or, with l = n_lengths, of a
 * format's summary: derived from the grid's seed. */
uint64_t niah_bootstrap_seed(const NiahGrid *g, size_t l, size_t d);

/* The haystack, needle and distractors of one trial, as every format sees
 * them: for tests of the pairing and for display. k_post (depths, S, D)
 * the keys after RoPE, k_pre before (where a format of the grid quantizes
 * keys before RoPE, k_pre_all; else only the haystack's, (S, D), without
 * needle or distractors), v (depths, S, D), q (depths, D) the query after
 * RoPE, needle[d] its position, passkey (depths, digits). */
typedef struct {
    uint32_t S, D, B;
    bool k_pre_all;
    float amplitude;            // the passkey's, in the haystack's units
    float *k_post, *k_pre, *v, *q;
    uint32_t needle[NIAH_DEPTHS_MAX];
    uint8_t passkey[NIAH_DEPTHS_MAX][PASSKEY_DIGITS_MAX];
} NiahTrial;

int niah_trial_make(const NiahGrid *g, size_t l, unsigned t, NiahTrial *tr, Error *e);
void niah_trial_free(NiahTrial *tr);

#endif
