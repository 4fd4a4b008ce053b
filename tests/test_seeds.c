/* test_seeds.c - every worked figure in the seed texts, computed by calc.
 *
 * Where a seed's own arithmetic is wrong the test asserts the right value
 * and says what the seed got wrong; the scenario files carry the same
 * explanations so the lab can show them. */
#include "testutil.h"

#include "units.h"

#include <string.h>

static FormatResult at(const Workload *w, const char *fmt)
{
    FormatResult r;
    Error e;
    ck_assert_msg(budget_compute(w, format_by_id(fmt), &r, &e) == 0, "%s", e.msg);
    return r;
}

/* A workload of a shipped model at context S and batch B, nothing else
 * known. */
static Workload workload_of(const char *model, uint64_t S, uint64_t B)
{
    Model m = test_model(model);
    Workload w;
    workload_init(&w, &m.shape, S, B);
    return w;
}

/* q rounded to `decimals` places, as text. */
static const char *fixed(Q q, int decimals)
{
    static char buf[4][64];
    static int k;
    k = (k + 1) % 4;
    return q_str(buf[k], sizeof buf[k], q, decimals, false);
}

/* ------------------------------------------------------------------------
 * Seed 000: Llama-3.1-8B, B = 16, S = 8192, a 20 GiB pool.
 */

/* The 20 GiB pool: bytes per sequence, slots, totals in GiB and GB and
 * the compression, as the seed works them out; 71 slots are 3.55x BF16's. */
START_TEST(seed000_pool_20gib)
{
    Workload w = workload_of("llama-3.1-8b", 8192, 16);
    w.pool = (u128)20 << 30;
    FormatResult bf = at(&w, "bf16"), f8 = at(&w, "fp8_e4m3"), i8 = at(&w, "int8"),
                 nv = at(&w, "nvfp4"), mx = at(&w, "mxfp4");
    ck_assert(bf.fp.elements == (u128)1 << 33);                     // 8,589,934,592
    ck_assert(bf.fp.bytes_per_sequence == (u128)1 << 30);           // 1.0 GiB per session
    ck_assert(f8.fp.bytes_per_sequence == (u128)1 << 29);           // 0.5 GiB
    ck_assert(nv.fp.bytes_per_sequence == 301989888u);              // 0.28125 GiB
    ck_assert_str_eq(fixed(q_make(nv.fp.bytes_per_sequence, GIB), 5), "0.28125");
    ck_assert(bf.slots == 20 && f8.slots == 40 && nv.slots == 71);
    /* 16.0 / 8.0 / 8.125 / 4.5 / 4.25 GiB and 17.18 / 8.59 / 8.72 / 4.83 / 4.56 GB */
    ck_assert_str_eq(fixed(q_make(bf.fp.bytes, GIB), 3), "16.000");
    ck_assert_str_eq(fixed(q_make(i8.fp.bytes, GIB), 3), "8.125");
    ck_assert_str_eq(fixed(q_make(mx.fp.bytes, GIB), 2), "4.25");
    ck_assert_str_eq(fixed(q_make(bf.fp.bytes, GB), 2), "17.18");
    ck_assert_str_eq(fixed(q_make(f8.fp.bytes, GB), 2), "8.59");
    ck_assert_str_eq(fixed(q_make(i8.fp.bytes, GB), 2), "8.72");
    ck_assert_str_eq(fixed(q_make(nv.fp.bytes, GB), 2), "4.83");
    ck_assert_str_eq(fixed(q_make(mx.fp.bytes, GB), 2), "4.56");
    /* GiB vs GB: 16 GiB is 7.4% more than 16 GB. */
    ck_assert_str_eq(fixed(q_make((GIB - GB) * 100, GB), 1), "7.4");
    /* FP8 per-tensor scales: 2 x 32 x 4 = 256 bytes for the whole cache. */
    ck_assert(f8.fp.tensor_scale_bytes == 256);
    /* Compression 3.56x (NVFP4) and 3.76x (MXFP4). */
    ck_assert_str_eq(fixed(q_make(bf.fp.bytes, nv.fp.bytes), 2), "3.56");
    ck_assert_str_eq(fixed(q_make(bf.fp.bytes, mx.fp.bytes), 2), "3.76");
    /* The seed calls 71 slots "a 3.56x capacity expansion"; 71 / 20 is
     * 3.55x. 3.56x is the byte compression; whole slots round down. */
    ck_assert_str_eq(fixed(q_make(nv.slots, bf.slots), 2), "3.55");
}
END_TEST

/* Exercise 1: Llama-3.1-70B, B = 32, S = 4096: 20 x 2^30 elements,
 * 40.0 GiB in BF16, 20.0 GiB in FP8, 20.0 GiB saved. */
START_TEST(seed000_exercise_70b)
{
    Workload w = workload_of("llama-3.1-70b", 4096, 32);
    FormatResult bf = at(&w, "bf16"), f8 = at(&w, "fp8_e4m3");
    ck_assert(bf.fp.elements == (u128)20 << 30);
    ck_assert(bf.fp.bytes == 42949672960u);
    ck_assert(bf.fp.bytes == (u128)40 << 30 && f8.fp.bytes == (u128)20 << 30);
}
END_TEST

/* GQA vs MHA (section 2.4): 16 / 8 / 4.5 GiB with 8 KV heads, 64 / 32 /
 * 18 GiB with 32; FP8 frees 32 GiB on MHA but 8 GiB on GQA. */
START_TEST(seed000_gqa_vs_mha)
{
    Workload w = workload_of("llama-3.1-8b", 8192, 16);
    ck_assert(at(&w, "nvfp4").fp.bytes * 2 == (u128)9 << 30);
    w.mha = true;
    ck_assert(at(&w, "bf16").fp.bytes == (u128)64 << 30);
    ck_assert(at(&w, "fp8_e4m3").fp.bytes == (u128)32 << 30);
    ck_assert(at(&w, "nvfp4").fp.bytes == (u128)18 << 30);
    /* Llama-2-7B is such an MHA model: the same 64 GiB. */
    Workload w2 = workload_of("llama-2-7b", 8192, 16);
    ck_assert(at(&w2, "bf16").fp.bytes == (u128)64 << 30);
}
END_TEST

/* ------------------------------------------------------------------------
 * Seed 001: the 8B teaching model at 128K on an 80 GB H100, 16 GB of BF16
 * weights, 6 GB kept for the runtime, 3,352 GB/s.
 */

/* The H100 at 128K: slots, bytes read and step floors as the seed gives
 * them, with its two rounding slips corrected. */
START_TEST(seed001_h100_128k)
{
    Workload w = workload_of("llama-3.1-8b", 131072, 3);
    w.weights = 16000000000u;
    w.bandwidth = 3352000000000u;
    Error e;
    ck_assert_int_eq(workload_pool_from_gpu(&w, 80000000000u, q_make(1, 1), 6000000000u, &e), 0);
    FormatResult bf = at(&w, "bf16"), f8 = at(&w, "fp8_e4m3");
    ck_assert(bf.fp.bytes_per_sequence == (u128)16 << 30);   // 16 GiB of BF16 KV
    ck_assert_str_eq(fixed(q_make(w.weights, GIB), 1), "14.9");  // "about 14.9 GiB"
    ck_assert(bf.slots == 3 && f8.slots == 6);
    /* With the same 3 sequences, FP8 KV reads 38% fewer bytes per step. */
    ck_assert_str_eq(fixed(q_make((bf.bytes_read - f8.bytes_read) * 100, bf.bytes_read), 0), "38");
    /* Floors: the seed says 20.2 ms for BF16 weights and KV. (16 + 3 x
     * 17.18) GB / 3,352 GB/s is 20.149 ms, 20.1 at one decimal; the seed
     * rounded twice (20.149, 20.15, 20.2). */
    ck_assert_str_eq(fixed(bf.step_ms, 3), "20.149");
    ck_assert_str_eq(fixed(bf.step_ms, 1), "20.1");
    /* KV in FP8, weights in BF16: 12.5 ms, as the seed says. */
    ck_assert_str_eq(fixed(f8.step_ms, 1), "12.5");
    /* Weights in FP8 (8 GB), KV in BF16: the seed says 17.9 ms, but
     * (8 + 51.54) GB / 3,352 GB/s is 17.76 ms, i.e. 17.8. */
    Workload wq = w;
    wq.weights = 8000000000u;
    ck_assert_str_eq(fixed(at(&wq, "bf16").step_ms, 2), "17.76");
    /* KIVI int4 and int2 (one extra bit per value for scale and zero). */
    ck_assert(at(&w, "int4").slots == 10 && at(&w, "int2").slots == 18);
    /* A 128-token BF16 residual is 16 MiB; one sequence at 2K is 0.27 GB. */
    Workload small = w;
    small.context = 128;
    small.batch = 1;
    ck_assert(at(&small, "bf16").fp.bytes == (u128)16 << 20);
    small.context = 2048;
    ck_assert_str_eq(fixed(q_make(at(&small, "bf16").fp.bytes, GB), 2), "0.27");
}
END_TEST

/* ------------------------------------------------------------------------
 * Seed 002: Llama-3-8B, 32k context, a 60 GB budget, 16 GB weights,
 * 3.35 TB/s (the H100's datasheet figure).
 */

/* The 60 GB budget at 32K: bytes and slots per format, INT4 with its
 * scales and zeros, and the steps and throughput at full capacity. */
START_TEST(seed002_budget_60gb)
{
    Workload w = workload_of("llama-3-8b", 32768, 1);
    w.pool = 60000000000u;
    w.weights = 16000000000u;
    w.bandwidth = 3350000000000u;
    FormatResult h = at(&w, "fp16"), f8 = at(&w, "fp8_e4m3"), i4 = at(&w, "int4");
    ck_assert_str_eq(fixed(q_make(h.fp.bytes_per_sequence, GB), 2), "4.29");
    ck_assert_str_eq(fixed(q_make(f8.fp.bytes_per_sequence, GB), 2), "2.15");
    ck_assert(h.slots == 13 && f8.slots == 27);
    /* The seed's INT4 row (1.07 GB, 55 sequences, 4.2x) counts only the
     * 4-bit payload; with an FP16 scale and zero per 32 values it is
     * 1.34 GB per sequence, 44 sequences, 3.4x. */
    ck_assert_str_eq(fixed(q_make(i4.fp.bytes_per_sequence, GB), 2), "1.34");
    ck_assert(i4.slots == 44);
    ck_assert(w.pool / (i4.fp.payload_bytes) == 55);     // where the seed's 55 comes from
    ck_assert_str_eq(fixed(q_make(i4.slots, h.slots), 1), "3.4");
    /* Steps at full capacity: 21.4 ms at 13 sequences, 22.1 ms at 27. */
    Workload w13 = w, w27 = w;
    w13.batch = 13;
    w27.batch = 27;
    FormatResult s13 = at(&w13, "fp16"), s27 = at(&w27, "fp8_e4m3");
    ck_assert_str_eq(fixed(q_make(s13.fp.bytes, GB), 1), "55.8");
    ck_assert_str_eq(fixed(q_make(s27.fp.bytes, GB), 1), "58.0");
    ck_assert_str_eq(fixed(s13.step_ms, 1), "21.4");
    ck_assert_str_eq(fixed(s27.step_ms, 1), "22.1");
    /* "27 sequences at about the same step time = 2.05x throughput": the
     * seed rounds; (27 / 22.08 ms) / (13 / 21.44 ms) is 2.02x. */
    Q tput = q_make((u128)27 * s13.bytes_read, (u128)13 * s27.bytes_read);
    ck_assert_str_eq(fixed(tput, 2), "2.02");
}
END_TEST

/* Speedup of FP8 over FP16 KV at batch 32, 16 GB weights: 1.12x at 1k,
 * 1.52x at 8k; at 32k the seed says 1.80x from KV sizes rounded to 137
 * and 69 GB, but (16 + 137.44) / (16 + 68.72) is 1.81x. */
START_TEST(seed002_speedup_series)
{
    Workload w = workload_of("llama-3-8b", 1024, 32);
    w.weights = 16000000000u;
    w.bandwidth = 3350000000000u;
    static const struct { uint64_t s; const char *x; } T[] = {
        {1024, "1.12"}, {8192, "1.52"}, {32768, "1.81"}};
    for (size_t i = 0; i < 3; i++) {
        w.context = T[i].s;
        ck_assert_str_eq(fixed(at(&w, "fp8_e4m3").speedup, 2), T[i].x);
    }
}
END_TEST

/* ------------------------------------------------------------------------
 * Seed 003: Llama-3-70B at 128,000 tokens. 327,680 bytes per token in
 * 16-bit; the seed's 10.48 GB per sequence is a quarter of the true
 * 41.94 GB (and its 167 GB for 16 sequences is really 671 GB).
 */

START_TEST(seed003_llama70b_128k)
{
    Workload w = workload_of("llama-3-70b", 1, 1);
    ck_assert(at(&w, "bf16").fp.bytes == 327680);
    w.context = 128000;
    ck_assert_str_eq(fixed(q_make(at(&w, "bf16").fp.bytes, GB), 2), "41.94");
    w.batch = 16;
    ck_assert_str_eq(fixed(q_make(at(&w, "bf16").fp.bytes, GB), 0), "671");
}
END_TEST

/* Published parameter counts follow from each shipped model's shape, and
 * the BF16 weights of the 8B models are the seeds' "16 GB". */
START_TEST(model_parameters)
{
    static const char *const NAMES[] = {"llama-3.1-8b", "llama-3-8b", "llama-3.1-70b",
                                        "llama-3-70b", "llama-3.1-405b", "llama-2-7b",
                                        "mistral-7b-v0.1", "gemma-2-9b"};
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
        Model m = test_model(NAMES[i]);
        u128 p;
        ck_assert_int_eq(model_param_count(&m, &p, NULL), 0);
        ck_assert_msg(p == m.params, "%s: shape gives %s, file says %llu", NAMES[i], u128s(p),
                      (unsigned long long)m.params);
    }
    ck_assert_str_eq(fixed(q_make(test_model("llama-3.1-8b").weight_bytes, GB), 0), "16");
}
END_TEST

Suite *suite_seeds(void)
{
    Suite *s = suite_create("seeds");
    TCase *t = tcase_create("figures");
    tcase_add_test(t, seed000_pool_20gib);
    tcase_add_test(t, seed000_exercise_70b);
    tcase_add_test(t, seed000_gqa_vs_mha);
    tcase_add_test(t, seed001_h100_128k);
    tcase_add_test(t, seed002_budget_60gb);
    tcase_add_test(t, seed002_speedup_series);
    tcase_add_test(t, seed003_llama70b_128k);
    tcase_add_test(t, model_parameters);
    suite_add_tcase(s, t);
    return s;
}
