/* testutil.h - what the Check suites share: the suite list, fixtures for
 * the shipped data, a seeded random source and a way to run ./kvlab. */
#ifndef KVLAB_TESTUTIL_H
#define KVLAB_TESTUTIL_H

#include "budget.h"
#include "checked.h"
#include "kv_attn.h"
#include "model.h"
#include "quant.h"

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

Suite *suite_checked(void);
Suite *suite_units(void);
Suite *suite_format(void);
Suite *suite_footprint(void);
Suite *suite_budget(void);
Suite *suite_seeds(void);
Suite *suite_loader(void);
Suite *suite_cli(void);
Suite *suite_minifloat(void);
Suite *suite_quant(void);
Suite *suite_tui(void);
Suite *suite_plotmath(void);
Suite *suite_kernels(void);
Suite *suite_gpu(void);
Suite *suite_paths(void);
Suite *suite_build(void);
Suite *suite_query(void);
Suite *suite_exercise(void);
Suite *suite_lesson(void);
Suite *suite_stored(void);
Suite *suite_kvtensors(void);
Suite *suite_stats(void);
Suite *suite_niah(void);

/* Whether CK_RUN_SUITE (unset: every suite) selects the suite `name`. */
bool test_suite_selected(const char *name);
/* Whether the CUDA plugin loads and sees a GPU; why gets the reason when
 * not. Asked in a child process, so that CUDA is never initialized in the
 * runner before it forks the tests. */
bool gpu_usable(char *why, size_t n);

/* Directories given by the Makefile (KVLAB_DATA, KVLAB_TESTDATA) and the
 * program under test (KVLAB_BIN). */
const char *test_datadir(void);
const char *test_testdata(void);
const char *test_bin(void);

/* A model from scenarios/models; fails the test if it does not load. */
Model test_model(const char *name);
/* Llama-3.1-8B's attention shape typed in: 32 x 32 x 8 x 128. */
Shape test_llama8b_shape(void);

/* splitmix64: fresh seeded data for every randomized test; the seed is
 * printed when a test fails so a run can be repeated. */
typedef struct {
    uint64_t s;
} Rng;
uint64_t rng_next(Rng *r);
uint64_t rng_range(Rng *r, uint64_t lo, uint64_t hi);   // inclusive
float rng_uniform(Rng *r, float spread);                // uniform in [-spread, spread)
/* 2^-j, j in 0..12 spread over groups by a hash: magnitudes from 1 down
 * to 2^-12, so that one tensor's block scales span subnormals and normals. */
float group_magnitude(size_t group);
uint64_t test_seed(void);                               // KVLAB_SEED or time
/* ck_assert_msg with the run's seed after the message, for checks on
 * random data. */
#define ck_assert_seeded(cond, fmt, ...)                                                              \
    ck_assert_msg(cond, fmt " (seed %llu)", ##__VA_ARGS__, (unsigned long long)test_seed())

/* Runs KVLAB_BIN with argv (NULL-terminated, without the program name),
 * feeding stdin_text; captures stdout and stderr (NUL-terminated, heap). */
typedef struct {
    int status;                 // exit code; 128 + signal if killed
    char *out, *err;
} RunResult;
RunResult run_kvlab(const char *const *argv, const char *stdin_text);
void run_free(RunResult *r);

/* The largest relative L2 error of x against ref over `heads` outputs of
 * d values each (NaN in x, or an error where ref is all zeros: infinity),
 * so that one head's error does not hide behind another's larger outputs. */
double worst_head(const float *x, const double *ref, size_t heads, size_t d);

/* FP8 path C's arithmetic (KvCpuOptions.fp8_p) in float64 on a cache and
 * a query already rounded (kv_e4m3_query): per query head m2 = ceil(max score
 * x log2 e), p = 2^(s log2 e - m2), out = sum(E4M3(256 p) / 256 v) /
 * sum(p). near[head] (B x H_q): some 256 p lies within `window` (relative)
 * of a point where its E4M3 rounding changes, so that another summation
 * order of its score may round it apart. */
void attn_fp8_p_f64(const KvCache *c, const float *q, double *out, bool *near, double window);

/* The groups a granularity makes over (rows, cols): returns the group
 * count and fills id[r * cols + c] with each element's group. */
size_t group_ids(const Granularity *g, size_t rows, size_t cols, size_t *id);

/* Where build_ties puts a group: its step s = m 2^e with m odd, at most
 * m_max, e from e_lo to e_hi, and (int-min) its minimum within base_max
 * steps of s / (2m) of zero. Every value is an integer below
 * base_max + 2 (2^bits - 1) m_max times s / (2m). */
typedef struct {
    int e_lo, e_hi, m_max, base_max;
} TieRange;
extern const TieRange TIES_NORMAL;      // e -20 to 4, m up to 15: exact in float
extern const TieRange TIES_SUBNORMAL;   // e -144 to -130: whole groups of subnormals

/* Fills x (rows, cols) for q's integer scheme, bits and granularity so
 * that every group has an exact range and values whose quotients are
 * exact halves j + 0.5, and want with what quant.h's formulas make of
 * them: each half rounded to the even code. A group of one element is 0. */
void build_ties(Rng *r, const QuantSpec *q, size_t rows, size_t cols, const TieRange *range, float *x,
                float *want);

/* Decimal text of a u128 for messages. */
const char *u128s(u128 v);

#endif
