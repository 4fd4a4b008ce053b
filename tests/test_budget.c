/* test_budget.c - capacity, paged blocks, tensor parallelism, step floors
 * and the crossover context, on fixed cases and random workloads. */
#include "testutil.h"

#include "units.h"

#include <stdlib.h>
#include <string.h>

static FormatResult compute(const Workload *w, const char *fmt)
{
    FormatResult r;
    Error e;
    ck_assert_msg(budget_compute(w, format_by_id(fmt), &r, &e) == 0, "%s", e.msg);
    return r;
}

/* Llama-3.1-8B's shape, typed in, at context S and batch B. */
static Workload llama8b(uint64_t S, uint64_t B)
{
    Shape s = test_llama8b_shape();
    Workload w;
    workload_init(&w, &s, S, B);
    return w;
}

/* Static slots are floor(pool / per-sequence bytes); paged slots are
 * floor(pool / bytes of the whole blocks a sequence takes), so they never
 * exceed static slots, and equal them when the context is a whole number
 * of blocks. */
START_TEST(slots_static_and_paged)
{
    Workload w = llama8b(8192, 16);
    w.pool = (u128)20 << 30;
    FormatResult r = compute(&w, "bf16");
    ck_assert(r.slots == 20 && r.paged_slots == 20);
    w.context = 8193;                 // one token into a new block of 16
    r = compute(&w, "bf16");
    ck_assert(r.paged_bytes_per_sequence == (u128)8208 * 131072);
    ck_assert(r.slots == (((u128)20 << 30) / ((u128)8193 * 131072)));
    ck_assert(r.paged_slots == (((u128)20 << 30) / ((u128)8208 * 131072)));
    Rng g = {test_seed() ^ 0xB10C};
    for (int i = 0; i < 3000; i++) {
        w.context = rng_range(&g, 1, 200000);
        w.block_tokens = rng_range(&g, 1, 256);
        w.pool = rng_range(&g, 1, (uint64_t)1 << 40);
        const Format *f = format_at((size_t)rng_range(&g, 0, format_count() - 1));
        FormatResult x;
        ck_assert_seeded(budget_compute(&w, f, &x, NULL) == 0, "case %d", i);
        ck_assert_seeded(x.paged_slots <= x.slots, "case %d", i);
        ck_assert_seeded(x.slots * x.fp.bytes_per_sequence <= w.pool, "case %d", i);
        ck_assert_seeded((x.slots + 1) * x.fp.bytes_per_sequence > w.pool, "case %d", i);
        /* a full-attention sequence costs the same bytes for every token */
        u128 blocks = (w.context + w.block_tokens - 1) / w.block_tokens;
        ck_assert_seeded(x.paged_bytes_per_sequence * w.context ==
                             x.fp.bytes_per_sequence * blocks * w.block_tokens,
                         "case %d", i);
        /* as many paged sequences as fit the pool, and not one more */
        ck_assert_seeded(x.paged_slots * x.paged_bytes_per_sequence <= w.pool, "case %d", i);
        ck_assert_seeded((x.paged_slots + 1) * x.paged_bytes_per_sequence > w.pool, "case %d", i);
        if (w.context % w.block_tokens == 0)
            ck_assert_seeded(x.paged_slots == x.slots, "case %d", i);
    }
}
END_TEST

/* The pool a GPU leaves: floor(memory x utilization) - weights / tp -
 * reserve; too little memory is an error, not a wrapped number. */
START_TEST(pool_from_gpu)
{
    Workload w = llama8b(8192, 1);
    w.weights = 16000000000u;
    Error e;
    ck_assert_int_eq(workload_pool_from_gpu(&w, 80000000000u, q_make(1, 1), 6000000000u, &e), 0);
    ck_assert(w.pool == 58000000000u);
    ck_assert_int_eq(workload_pool_from_gpu(&w, 80000000000u, q_make(9, 10), 0, &e), 0);
    ck_assert(w.pool == 56000000000u);
    w.tp = 2;
    ck_assert_int_eq(workload_pool_from_gpu(&w, 80000000000u, q_make(9, 10), 0, &e), 0);
    ck_assert(w.pool == 64000000000u);
    w.weights = 200000000000u;
    w.tp = 1;
    ck_assert_int_eq(workload_pool_from_gpu(&w, 80000000000u, q_make(9, 10), 0, &e), -1);
    ck_assert(strstr(e.msg, "nothing is left") != NULL);
}
END_TEST

/* When the weights leave nothing for the KV cache, the message names the
 * fix: the least tensor-parallel degree that leaves room (checked to leave
 * room, with half of it not), or a bigger GPU when no degree does. */
START_TEST(pool_from_gpu_names_the_fix)
{
    Model m = test_model("llama-3.1-70b");
    Workload w;
    workload_init(&w, &m.shape, 8192, 1);
    w.weights = m.weight_bytes;
    Error e;
    const u128 h100 = (u128)81559 << 20;
    ck_assert_int_eq(workload_pool_from_gpu(&w, h100, q_make(9, 10), 0, &e), -1);
    ck_assert_msg(strstr(e.msg, "nothing is left") && strstr(e.msg, "tensor parallelism over 2 GPUs"),
                  "%s", e.msg);
    w.tp = 2;
    ck_assert_int_eq(workload_pool_from_gpu(&w, h100, q_make(9, 10), 0, &e), 0);
    w.tp = 1;
    ck_assert_int_eq(workload_pool_from_gpu(&w, 1000, q_make(1, 1), 0, &e), -1);
    ck_assert_msg(strstr(e.msg, "a GPU with more memory") && !strstr(e.msg, "parallelism"), "%s", e.msg);
    Rng g = {test_seed() ^ 0xF17};
    for (int i = 0; i < 2000; i++) {
        w.weights = rng_range(&g, 1, (uint64_t)1 << 44);
        w.tp = (uint64_t)1 << rng_range(&g, 0, 3);
        u128 mem = rng_range(&g, 1, (uint64_t)1 << 38), reserve = rng_range(&g, 0, 1u << 30);
        if (workload_pool_from_gpu(&w, mem, q_make(1, 1), reserve, &e) == 0)
            continue;
        const char *p = strstr(e.msg, "parallelism over ");
        if (!p)
            continue;
        uint64_t t = strtoull(p + strlen("parallelism over "), NULL, 10), tp = w.tp;
        w.tp = t;
        ck_assert_seeded(workload_pool_from_gpu(&w, mem, q_make(1, 1), reserve, NULL) == 0, "%s", e.msg);
        if (t / 2 >= tp) {
            w.tp = t / 2;
            ck_assert_seeded(workload_pool_from_gpu(&w, mem, q_make(1, 1), reserve, NULL) != 0, "%s", e.msg);
        }
        w.tp = tp;
    }
}
END_TEST

/* A pool larger than one GPU's memory less its share of the weights is
 * flagged with the excess and the least degree at which it fits; a pool
 * that fits is not. Checked against the definition on random workloads. */
START_TEST(gpu_fit)
{
    Workload w = llama8b(8192, 32);
    w.weights = 16000000000u;
    w.pool = 80000000000u;
    GpuFit f;
    const u128 h100 = (u128)81559 << 20;         // 85.52 GB
    budget_gpu_fit(&w, h100, &f);
    ck_assert(f.pool_exceeds && f.room == h100 - 16000000000u);
    ck_assert(f.excess == 80000000000u + 16000000000u - h100);
    ck_assert_int_eq(f.tp_fit, 4);             // 80 + 8 GB is still too much at 2
    w.pool = 500 * GIB;                          // more than the GPU holds: no degree helps
    budget_gpu_fit(&w, h100, &f);
    ck_assert(f.pool_exceeds && f.tp_fit == 0);
    Rng g = {test_seed() ^ 0xF1F};
    for (int i = 0; i < 5000; i++) {
        w.tp = (uint64_t)1 << rng_range(&g, 0, 3);
        w.weights = rng_range(&g, 0, (uint64_t)1 << 40);
        w.pool = rng_range(&g, 1, (uint64_t)1 << 38);
        u128 mem = rng_range(&g, 1, (uint64_t)1 << 38), share = (w.weights + w.tp - 1) / w.tp;
        budget_gpu_fit(&w, mem, &f);
        ck_assert_seeded(f.weights == share, "case %d", i);
        ck_assert_seeded(f.pool_exceeds == (w.pool + share > mem), "case %d", i);
        if (f.pool_exceeds)
            ck_assert_seeded(f.excess == w.pool + share - mem && f.pool == w.pool, "case %d", i);
        if (f.tp_fit)
            ck_assert_seeded(w.pool + (w.weights + f.tp_fit - 1) / f.tp_fit <= mem, "case %d", i);
    }
}
END_TEST

/* Tensor parallelism splits KV heads evenly, or replicates them when there
 * are more GPUs than KV heads; other degrees are refused. */
START_TEST(tensor_parallel)
{
    Shape s = test_llama8b_shape(), p;
    uint64_t rep;
    ck_assert_int_eq(shape_split_tp(&s, 2, &p, &rep, NULL), 0);
    ck_assert(p.kv_heads == 4 && p.q_heads == 16 && rep == 1);
    ck_assert_int_eq(shape_split_tp(&s, 16, &p, &rep, NULL), 0);
    ck_assert(p.kv_heads == 1 && p.q_heads == 2 && rep == 2);
    Error e;
    ck_assert_int_eq(shape_split_tp(&s, 3, &p, &rep, &e), -1);
    Workload w = llama8b(8192, 16);
    w.tp = 4;
    ck_assert(compute(&w, "bf16").fp.bytes == (u128)4 << 30);   // a quarter of 16 GiB
}
END_TEST

/* The step floor is (weights + KV + scales) / bandwidth, the speedup the
 * BF16 floor over the format's, and MHA multiplies KV by H_q / H_kv. */
START_TEST(step_floor)
{
    Workload w = llama8b(8192, 16);
    w.weights = 16000000000u;
    w.bandwidth = 2000000000000u;
    FormatResult b = compute(&w, "bf16"), f = compute(&w, "fp8_e4m3");
    ck_assert(b.bytes_read == 16000000000u + 17179869184u);
    ck_assert(f.bytes_read == 16000000000u + 8589934592u + 256);
    ck_assert(q_cmp(b.step_ms, q_make(b.bytes_read * 1000, 2000000000000u)) == 0);
    ck_assert(q_cmp(f.speedup, q_make(b.bytes_read, f.bytes_read)) == 0);
    ck_assert(q_cmp(b.speedup, q_make(1, 1)) == 0);
    w.mha = true;
    ck_assert(compute(&w, "bf16").fp.bytes == (u128)64 << 30);
}
END_TEST

/* The crossover is the first context whose KV bytes reach the weights:
 * checked against its definition on random workloads. */
START_TEST(crossover_random)
{
    Rng g = {test_seed() ^ 0xC055};
    for (int i = 0; i < 500; i++) {
        Shape s;
        uint64_t h = rng_range(&g, 1, 16);
        ck_assert_int_eq(shape_init(&s, rng_range(&g, 1, 100), h * 4, h,
                                    32 * rng_range(&g, 1, 8), NULL), 0);
        Workload w;
        workload_init(&w, &s, 1, rng_range(&g, 1, 64));
        w.weights = rng_range(&g, 1, (uint64_t)1 << 42);
        const Format *f = format_at((size_t)rng_range(&g, 0, format_count() - 1));
        FormatResult r;
        ck_assert_int_eq(budget_compute(&w, f, &r, NULL), 0);
        uint64_t x = r.crossover_context;
        ck_assert(x >= 1);
        Footprint at, before;
        ck_assert_int_eq(footprint(&s, f, NULL, x, w.batch, &at, NULL), 0);
        ck_assert(at.bytes >= w.weights);
        if (x > 1) {
            ck_assert_int_eq(footprint(&s, f, NULL, x - 1, w.batch, &before, NULL), 0);
            ck_assert(before.bytes < w.weights);
        }
    }
    /* Mistral's cache is capped by its window: it may never outweigh the
     * weights. */
    Model m = test_model("mistral-7b-v0.1");
    Workload w;
    workload_init(&w, &m.shape, 1, 1);
    w.weights = m.weight_bytes;
    ck_assert(compute(&w, "bf16").crossover_context == 0);
}
END_TEST

Suite *suite_budget(void)
{
    Suite *s = suite_create("budget");
    TCase *t = tcase_create("core");
    tcase_add_test(t, slots_static_and_paged);
    tcase_add_test(t, pool_from_gpu);
    tcase_add_test(t, pool_from_gpu_names_the_fix);
    tcase_add_test(t, gpu_fit);
    tcase_add_test(t, tensor_parallel);
    tcase_add_test(t, step_floor);
    tcase_add_test(t, crossover_random);
    suite_add_tcase(s, t);
    return s;
}
