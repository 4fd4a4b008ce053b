/* test_format.c - the format table matches DESIGN.md's byte accounting. */
#include "testutil.h"

#include "format.h"

#include <string.h>

/* Bytes per element at D = 128, metadata included, as the table of
 * DESIGN.md's byte accounting: 2, 2, 1, 1, 1 + 2/128, 0.625, 0.375,
 * 0.5625, 0.53125. */
START_TEST(design_table)
{
    static const struct { const char *id; u128 num, den; unsigned tscale; } T[] = {
        {"bf16", 2, 1, 0},       {"fp16", 2, 1, 0},      {"fp8_e4m3", 1, 1, 4},
        {"fp8_e5m2", 1, 1, 4},   {"int8", 130, 128, 0},  {"int4", 5, 8, 0},
        {"int2", 3, 8, 0},       {"nvfp4", 9, 16, 4},    {"mxfp4", 17, 32, 0},
    };
    ck_assert_uint_eq(format_count(), sizeof T / sizeof T[0]);
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        const Format *f = format_by_id(T[i].id);
        ck_assert_msg(f != NULL, "%s missing", T[i].id);
        Q q = format_bytes_per_element(f, 128);
        ck_assert_msg(q_cmp(q, q_make(T[i].num, T[i].den)) == 0, "%s: %s/%s", T[i].id,
                      u128s(q.num), u128s(q.den));
        ck_assert_uint_eq(f->tensor_scale_bytes, T[i].tscale);
    }
}
END_TEST

/* For every D that is a multiple of 32, vector bytes are exactly D times
 * the per-element figure at D = 128 (INT8: D + 2, its FP16 scale being per
 * vector): no rounding hides in the accounting. */
START_TEST(multiples_of_group_exact)
{
    Rng r = {test_seed() ^ 0xF0};
    for (int i = 0; i < 2000; i++) {
        unsigned d = 32 * (unsigned)rng_range(&r, 1, 64);
        for (size_t k = 0; k < format_count(); k++) {
            const Format *f = format_at(k);
            Q per128 = format_bytes_per_element(f, 128);
            u128 v = format_vector_bytes(f, d);
            if (strcmp(f->id, "int8") == 0)
                ck_assert_msg(v == (u128)d + 2, "int8 at D=%u: %s bytes", d, u128s(v));
            else
                ck_assert_msg(v * per128.den == per128.num * d, "%s at D=%u: %s bytes", f->id, d,
                              u128s(v));
        }
    }
}
END_TEST

/* A head dimension that is not a multiple of the group pays for a whole
 * last group: D = 80 in INT4 is 40 payload bytes + 3 groups x 4 bytes. */
START_TEST(partial_groups)
{
    ck_assert(format_vector_bytes(format_by_id("int4"), 80) == 40 + 3 * 4);
    ck_assert(format_vector_bytes(format_by_id("nvfp4"), 80) == 40 + 5);
    ck_assert(format_vector_bytes(format_by_id("int2"), 3) == 1 + 4);
    ck_assert(format_vector_bytes(format_by_id("int8"), 96) == 96 + 2);
}
END_TEST

/* Formats are found by id in any case or by alias; an unknown id is not
 * found, and the list of ids names every format. */
START_TEST(names_and_aliases)
{
    static const char *const ALIASES[][2] = {
        {"FP8", "fp8_e4m3"}, {"e5m2", "fp8_e5m2"}, {"BF16", "bf16"}};
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++) {
        const Format *f = format_by_id(ALIASES[i][0]);
        ck_assert_msg(f && strcmp(f->id, ALIASES[i][1]) == 0, "%s is not %s", ALIASES[i][0],
                      ALIASES[i][1]);
    }
    ck_assert_ptr_eq(format_by_id("BF16"), format_bf16());
    ck_assert_ptr_null(format_by_id("fp7"));
    char list[256];
    format_id_list(list, sizeof list);
    for (size_t k = 0; k < format_count(); k++)
        ck_assert_msg(strstr(list, format_at(k)->id) != NULL, "%s missing from '%s'", format_at(k)->id,
                      list);
}
END_TEST

Suite *suite_format(void)
{
    Suite *s = suite_create("format");
    TCase *t = tcase_create("core");
    tcase_add_test(t, design_table);
    tcase_add_test(t, multiples_of_group_exact);
    tcase_add_test(t, partial_groups);
    tcase_add_test(t, names_and_aliases);
    suite_add_tcase(s, t);
    return s;
}
