/* test_footprint.c - KV bytes follow N = 2 L H_kv D S B and the options
 * (sliding windows, residual window, BF16 layers, per-head scales). */
#include "testutil.h"

#include "footprint.h"

#include <string.h>

static Footprint fp_of(const Shape *s, const char *fmt, const KvOptions *o, uint64_t S, uint64_t B)
{
    Footprint fp;
    Error e;
    ck_assert_msg(footprint(s, format_by_id(fmt), o, S, B, &fp, &e) == 0, "%s", e.msg);
    return fp;
}

/* DESIGN.md's byte accounting: Llama-3.1-8B at B = 16, S = 8192 holds 2^33
 * elements, and the five byte totals are exact. */
START_TEST(design_totals)
{
    Shape s = test_llama8b_shape();
    ck_assert(fp_of(&s, "bf16", NULL, 8192, 16).elements == (u128)1 << 33);
    ck_assert(fp_of(&s, "bf16", NULL, 8192, 16).bytes == 17179869184u);
    ck_assert(fp_of(&s, "fp8_e4m3", NULL, 8192, 16).bytes == 8589934592u);
    ck_assert(fp_of(&s, "int8", NULL, 8192, 16).bytes == 8724152320u);
    ck_assert(fp_of(&s, "nvfp4", NULL, 8192, 16).bytes == 4831838208u);
    ck_assert(fp_of(&s, "mxfp4", NULL, 8192, 16).bytes == 4563402752u);
    /* Per-tensor scales: 2 x L x 4 bytes, apart from the bytes. */
    ck_assert(fp_of(&s, "fp8_e4m3", NULL, 8192, 16).tensor_scale_bytes == 256);
    ck_assert(fp_of(&s, "nvfp4", NULL, 8192, 16).tensor_scale_bytes == 256);
    ck_assert(fp_of(&s, "bf16", NULL, 8192, 16).tensor_scale_bytes == 0);
    KvOptions o = {.head_scales = true};
    ck_assert(fp_of(&s, "fp8_e4m3", &o, 8192, 16).tensor_scale_bytes == 2 * 32 * 8 * 4);
}
END_TEST

/* On random full-attention shapes bytes = 2 L H D S B x bytes/element,
 * computed here from the definition, and bytes = per-sequence x B. */
START_TEST(formula_random)
{
    Rng r = {test_seed() ^ 0xABC};
    for (int i = 0; i < 5000; i++) {
        uint64_t L = rng_range(&r, 1, 200), H = rng_range(&r, 1, 64),
                 D = 32 * rng_range(&r, 1, 16), S = rng_range(&r, 1, 1 << 20),
                 B = rng_range(&r, 1, 512);
        Shape s;
        ck_assert_int_eq(shape_init(&s, L, H * rng_range(&r, 1, 8), H, D, NULL), 0);
        const Format *f = format_at((size_t)rng_range(&r, 0, format_count() - 1));
        Footprint fp = fp_of(&s, f->id, NULL, S, B);
        u128 n = (u128)2 * L * H * D * S * B;
        Q bpe = format_bytes_per_element(f, (unsigned)D);
        ck_assert(fp.elements == n);
        ck_assert_msg(fp.bytes * bpe.den == n * bpe.num, "%s L=%llu H=%llu D=%llu S=%llu B=%llu",
                      f->id, (unsigned long long)L, (unsigned long long)H, (unsigned long long)D,
                      (unsigned long long)S, (unsigned long long)B);
        ck_assert(fp.bytes == fp.bytes_per_sequence * B);
        ck_assert(fp.payload_bytes <= fp.bytes);
    }
}
END_TEST

/* A sliding-window layer stops growing at its window; a full layer never
 * does. Mistral-7B (all sliding, 4096) is the same at 4k and at 128k. */
START_TEST(sliding_windows)
{
    Model mistral = test_model("mistral-7b-v0.1");
    Footprint a = fp_of(&mistral.shape, "bf16", NULL, 4096, 1);
    Footprint b = fp_of(&mistral.shape, "bf16", NULL, 131072, 1);
    ck_assert(a.bytes == b.bytes);
    ck_assert(a.bytes == (u128)2 * 32 * 8 * 128 * 4096 * 2);
    /* Gemma-2-9B: 21 sliding and 21 full layers of 8 x 256. */
    Model gemma = test_model("gemma-2-9b");
    ck_assert_uint_eq(shape_layers_of_kind(&gemma.shape, ATTN_SLIDING), 21);
    ck_assert_uint_eq(shape_layer_kind(&gemma.shape, 0), ATTN_SLIDING);
    Footprint g = fp_of(&gemma.shape, "bf16", NULL, 32768, 1);
    ck_assert(g.bytes == (u128)2 * 8 * 256 * 2 * (21 * 4096 + 21 * 32768));
    /* Keeping the sliding layers in BF16 changes only those layers. */
    KvOptions o = {.bf16_sliding = true};
    Footprint q = fp_of(&gemma.shape, "fp8_e4m3", &o, 32768, 1);
    ck_assert(q.bytes == (u128)2 * 8 * 256 * (21 * 4096 * 2 + 21 * 32768 * 1));
    ck_assert(q.tensor_scale_bytes == 2 * 21 * 4);
}
END_TEST

/* KIVI residual: the most recent R tokens cost 16-bit bytes, the rest the
 * format's; a context shorter than R is all 16-bit. */
START_TEST(residual_window)
{
    Shape s = test_llama8b_shape();
    KvOptions o = {.residual = 128};
    u128 tok16 = 2 * 32 * 8 * 256, tok4 = 2 * 32 * 8 * 80;   // bytes per token
    ck_assert(fp_of(&s, "int4", &o, 8192, 1).bytes == 128 * tok16 + 8064 * tok4);
    ck_assert(fp_of(&s, "int4", &o, 100, 1).bytes == 100 * tok16);
    ck_assert(fp_of(&s, "bf16", &o, 8192, 1).bytes == 8192 * tok16);
    /* 128 residual tokens are 16 MiB in BF16 (seed 001). */
    ck_assert(fp_of(&s, "bf16", NULL, 128, 1).bytes == (u128)16 << 20);
}
END_TEST

/* Chosen BF16 layers: each costs BF16 bytes and carries no tensor scale;
 * an index outside the model or a repeat is an error. */
START_TEST(bf16_layers)
{
    Shape s = test_llama8b_shape();
    KvOptions o = {.n_bf16_layers = 2, .bf16_layers = {0, 31}};
    Footprint f = fp_of(&s, "fp8_e4m3", &o, 1000, 2);
    ck_assert(f.bytes == (u128)2 * 8 * 128 * 1000 * 2 * (30 * 1 + 2 * 2));
    ck_assert(f.tensor_scale_bytes == 2 * 30 * 4);
    ck_assert_uint_eq(f.quantized_layers, 30);
    Footprint bad;
    Error e;
    KvOptions out = {.n_bf16_layers = 1, .bf16_layers = {32}};
    ck_assert_int_eq(footprint(&s, format_bf16(), &out, 10, 1, &bad, &e), -1);
    ck_assert(strstr(e.msg, "32") != NULL);
    KvOptions twice = {.n_bf16_layers = 2, .bf16_layers = {3, 3}};
    ck_assert_int_eq(footprint(&s, format_bf16(), &twice, 10, 1, &bad, &e), -1);
}
END_TEST

/* A cache whose size cannot be represented is refused as an overflow. */
START_TEST(overflow_refused)
{
    Shape s;
    ck_assert_int_eq(shape_init(&s, UINT64_MAX, UINT64_MAX, UINT64_MAX, 1u << 31, NULL), 0);
    Footprint fp;
    Error e;
    ck_assert_int_eq(footprint(&s, format_bf16(), NULL, UINT64_MAX, UINT64_MAX, &fp, &e), -1);
    ck_assert_msg(strstr(e.msg, "overflow") != NULL, "%s", e.msg);
    Error e2;
    ck_assert_int_eq(shape_init(&s, 32, 30, 8, 128, &e2), -1);     // 30 % 8 != 0
    ck_assert_int_eq(shape_init(&s, 0, 32, 8, 128, &e2), -1);
}
END_TEST

Suite *suite_footprint(void)
{
    Suite *s = suite_create("footprint");
    TCase *t = tcase_create("core");
    tcase_add_test(t, design_totals);
    tcase_add_test(t, formula_random);
    tcase_add_test(t, sliding_windows);
    tcase_add_test(t, residual_window);
    tcase_add_test(t, bf16_layers);
    tcase_add_test(t, overflow_refused);
    suite_add_tcase(s, t);
    return s;
}
