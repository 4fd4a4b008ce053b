/* test_minifloat.c - the codecs are bit-exact against reference vectors
 * from an independent implementation (tests/data/vectors), and obey the
 * rounding rules on fresh random inputs. */
#include "testutil.h"

#include "minifloat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two floats are the same value: bitwise equal, or both NaN. */
static bool same(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

/* A reference vector file (tests/data/vectors), read a line at a time. */
typedef struct {
    FILE *f;
    char line[512];             // the current data line
    int count;                  // data lines read so far
} Vectors;

static Vectors vectors(const char *name)
{
    Vectors v = {0};
    char path[1024];
    snprintf(path, sizeof path, "%s/vectors/%s", test_testdata(), name);
    v.f = fopen(path, "r");
    ck_assert_msg(v.f != NULL, "cannot open %s", path);
    return v;
}

/* Moves to the next data line, skipping comments; at the end closes the
 * file and returns false. */
static bool vectors_next(Vectors *v)
{
    while (fgets(v->line, sizeof v->line, v->f))
        if (v->line[0] != '#') {
            v->count++;
            return true;
        }
    fclose(v->f);
    return false;
}

/* Every one of the 256 codes of E4M3FN, E5M2 and E8M0 decodes to the
 * reference value (E4M3FN and E5M2 also by the table), and every finite
 * code encodes back to itself. */
START_TEST(fp8_codes)
{
    Vectors vec = vectors("fp8_codes.csv");
    while (vectors_next(&vec)) {
        int code;
        char a[64], b[64], c[64];
        ck_assert_int_eq(sscanf(vec.line, "%d,%63[^,],%63[^,],%63s", &code, a, b, c), 4);
        float e4 = strtof(a, NULL), e5 = strtof(b, NULL), e8 = strtof(c, NULL);
        ck_assert_msg(same(minifloat_decode(&MF_E4M3, (uint8_t)code), e4), "e4m3 code %d", code);
        ck_assert_msg(same(minifloat_decode(&MF_E5M2, (uint8_t)code), e5), "e5m2 code %d", code);
        ck_assert_msg(same(minifloat_values(&MF_E4M3)[code], e4), "e4m3 table, code %d", code);
        ck_assert_msg(same(minifloat_values(&MF_E5M2)[code], e5), "e5m2 table, code %d", code);
        ck_assert_msg(same(e8m0_decode((uint8_t)code), e8), "e8m0 code %d", code);
        if (!isnan(e4))
            ck_assert_int_eq(minifloat_encode(&MF_E4M3, e4, false), code);
        if (!isnan(e5))
            ck_assert_int_eq(minifloat_encode(&MF_E5M2, e5, false), code);
        if (code < 255)
            ck_assert_int_eq(e8m0_from_exponent(code - 127), code);
    }
    ck_assert_int_eq(vec.count, 256);
}
END_TEST

/* Every one of the 16 codes of E2M1 decodes to the reference value (also
 * by the table) and encodes back to itself. */
START_TEST(fp4_codes)
{
    Vectors vec = vectors("fp4_codes.csv");
    while (vectors_next(&vec)) {
        int code;
        float v;
        ck_assert_int_eq(sscanf(vec.line, "%d,%f", &code, &v), 2);
        ck_assert_msg(same(minifloat_decode(&MF_E2M1, (uint8_t)code), v), "e2m1 code %d", code);
        for (int high = 0; high < 256; high += 16)      // the table ignores the high bits, as decoding does
            ck_assert_msg(same(minifloat_values(&MF_E2M1)[high | code], v), "e2m1 table, code %d", high | code);
        ck_assert_int_eq(minifloat_encode(&MF_E2M1, v, false), code);
    }
    ck_assert_int_eq(vec.count, 16);
}
END_TEST

/* Every float32 input of the reference round trips (non-saturating) to the
 * reference's value in all three formats, bit for bit. */
START_TEST(float_round_trips)
{
    Vectors vec = vectors("float_roundtrip.csv");
    while (vectors_next(&vec)) {
        char bits[16], in[64], a[64], b[64], c[64];
        ck_assert_int_eq(sscanf(vec.line, "%15[^,],%63[^,],%63[^,],%63[^,],%63s", bits, in, a, b, c), 5);
        uint32_t u = (uint32_t)strtoul(bits, NULL, 16);
        float x;
        memcpy(&x, &u, sizeof x);
        ck_assert_msg(same(minifloat_round(&MF_E4M3, x, false), strtof(a, NULL)),
                      "e4m3(%s) = %g, want %s", in, minifloat_round(&MF_E4M3, x, false), a);
        ck_assert_msg(same(minifloat_round(&MF_E5M2, x, false), strtof(b, NULL)),
                      "e5m2(%s) = %g, want %s", in, minifloat_round(&MF_E5M2, x, false), b);
        ck_assert_msg(same(minifloat_round(&MF_E2M1, x, false), strtof(c, NULL)),
                      "e2m1(%s) = %g, want %s", in, minifloat_round(&MF_E2M1, x, false), c);
    }
    ck_assert_int_ge(vec.count, 1000);
}
END_TEST

/* Overflow and specials: E4M3FN 464 -> 448, beyond -> NaN (or 448 when
 * saturating); E5M2 beyond its range -> Inf (or 57344); E2M1 clamps; signed
 * zero and the smallest subnormals survive. */
START_TEST(overflow_and_specials)
{
    ck_assert(minifloat_round(&MF_E4M3, 464.0f, false) == 448.0f);
    ck_assert(isnan(minifloat_round(&MF_E4M3, 464.5f, false)));
    ck_assert(minifloat_round(&MF_E4M3, 1e9f, true) == 448.0f);
    ck_assert(minifloat_round(&MF_E4M3, -INFINITY, true) == -448.0f);
    ck_assert(isnan(minifloat_round(&MF_E4M3, INFINITY, false)));
    ck_assert(isinf(minifloat_round(&MF_E5M2, 61440.0f, false)));
    ck_assert(minifloat_round(&MF_E5M2, 61439.0f, false) == 57344.0f);
    ck_assert(minifloat_round(&MF_E5M2, 1e9f, true) == 57344.0f);
    ck_assert(minifloat_round(&MF_E2M1, 1e9f, false) == 6.0f);
    ck_assert(minifloat_round(&MF_E2M1, -7.0f, false) == -6.0f);
    ck_assert(minifloat_round(&MF_E2M1, NAN, false) == 6.0f);
    float z = minifloat_round(&MF_E4M3, -0.0001f, false);
    ck_assert(z == 0.0f && signbit(z));
    /* seed 001: with a scale of 1.0, 0.001 becomes the smallest subnormal 2^-9. */
    ck_assert(minifloat_round(&MF_E4M3, 0.001f, false) == ldexpf(1, -9));
    ck_assert(minifloat_round(&MF_E4M3, ldexpf(1, -10), false) == 0.0f);    // tie to even: 0
    ck_assert(minifloat_round(&MF_E4M3, ldexpf(1.5f, -10), false) == ldexpf(1, -9));
    ck_assert(minifloat_round(&MF_E5M2, ldexpf(1, -16), false) == ldexpf(1, -16));
    ck_assert(minifloat_round(&MF_E2M1, 0.25f, false) == 0.0f);     // tie to even
    ck_assert(minifloat_round(&MF_E2M1, 0.75f, false) == 1.0f);     // tie to even
    ck_assert(minifloat_round(&MF_E2M1, 2.5f, false) == 2.0f);
    ck_assert(minifloat_round(&MF_E2M1, 5.0f, false) == 4.0f);
    ck_assert(bf16_round(1.00390625f) == 1.0f);                    // tie to even
    ck_assert(bf16_round(1.01171875f) == 1.015625f);
}
END_TEST

/* A positive float with a random 24-bit mantissa, 2^-21 to 2^21. */
static float random_float(Rng *r)
{
    return ldexpf((float)(rng_next(r) >> 40) / (float)(1 << 24) + 0.5f, (int)rng_range(r, 0, 40) - 20);
}

/* A positive float exactly halfway between two neighbouring finite values
 * of f, where rounding to nearest has to break a tie (random floats almost
 * never land there). */
static float random_tie(const Minifloat *f, Rng *r)
{
    uint64_t positive = (uint64_t)1 << (f->exp_bits + f->man_bits);   // codes of one sign
    for (;;) {
        uint8_t c = (uint8_t)rng_range(r, 0, positive - 2);
        float lo = minifloat_decode(f, c), hi = minifloat_decode(f, (uint8_t)(c + 1));
        if (isfinite(hi))
            return (lo + hi) / 2;
    }
}

/* On random floats over the whole range, and on ties between two codes,
 * the codec returns the nearest representable value with ties to even:
 * checked against a brute-force search of every code. */
START_TEST(nearest_random)
{
    const Minifloat *fs[] = {&MF_E4M3, &MF_E5M2, &MF_E2M1};
    Rng r = {test_seed() ^ 0xF10A7};
    for (size_t k = 0; k < 3; k++) {
        const Minifloat *f = fs[k];
        int ncodes = 1 << (1 + f->exp_bits + f->man_bits);
        for (int i = 0; i < 20000; i++) {
            float x = i % 4 ? random_float(&r) : random_tie(f, &r);
            if (rng_next(&r) & 1)
                x = -x;
            if (fabsf(x) > f->max)
                continue;
            /* brute force: the closest code; on a tie, the even mantissa */
            double best = INFINITY;
            int best_code = -1;
            for (int c = 0; c < ncodes; c++) {
                float v = minifloat_decode(f, (uint8_t)c);
                if (isnan(v) || isinf(v) || signbit(v) != signbit(x))
                    continue;
                double d = fabs((double)v - (double)x);
                if (d < best || (d == best && (c & 1) == 0)) {
                    best = d;
                    best_code = c;
                }
            }
            float want = minifloat_decode(f, (uint8_t)best_code);
            ck_assert_seeded(same(minifloat_round(f, x, false), want), "%s(%a) = %a, want %a", f->name, x,
                             minifloat_round(f, x, false), want);
        }
    }
}
END_TEST

/* The fast round equals decode(encode_ref(x)) and the fast encode equals
 * encode_ref, the definition, on random float32 bit patterns of every kind:
 * normals, subnormals, zeros, Inf and NaN. */
START_TEST(fast_round_matches_codec)
{
    const Minifloat *fs[] = {&MF_E4M3, &MF_E5M2, &MF_E2M1};
    Rng r = {test_seed() ^ 0xFA57};
    for (int i = 0; i < 300000; i++) {
        uint32_t u = (uint32_t)rng_next(&r);
        if (i % 3 == 0)     // concentrate on the formats' ranges
            u = (u & 0x80FFFFFFu) | ((uint32_t)rng_range(&r, 100, 150) << 23);
        float x;
        memcpy(&x, &u, sizeof x);
        for (size_t k = 0; k < 3; k++)
            for (int sat = 0; sat < 2; sat++) {
                uint8_t code = minifloat_encode_ref(fs[k], x, sat);
                float want = minifloat_decode(fs[k], code);
                ck_assert_msg(same(minifloat_round(fs[k], x, sat), want), "%s(%a)", fs[k]->name, x);
                ck_assert_msg(minifloat_encode(fs[k], x, sat) == code || (isnan(want) &&
                              isnan(minifloat_decode(fs[k], minifloat_encode(fs[k], x, sat)))),
                              "encode %s(%a)", fs[k]->name, x);
            }
    }
}
END_TEST

Suite *suite_minifloat(void)
{
    Suite *s = suite_create("minifloat");
    TCase *t = tcase_create("codecs");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, fp8_codes);
    tcase_add_test(t, fp4_codes);
    tcase_add_test(t, float_round_trips);
    tcase_add_test(t, overflow_and_specials);
    tcase_add_test(t, nearest_random);
    tcase_add_test(t, fast_round_matches_codec);
    suite_add_tcase(s, t);
    return s;
}
