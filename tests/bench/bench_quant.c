/* bench_quant.c - throughput of the reference codecs and quantizers on one
 * core, in millions of elements per second (`make bench`). Inputs are a
 * generated head with outlier channels, 4096 tokens x 128 channels. */
#include "kvgen.h"
#include "minifloat.h"
#include "quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile float sink;

typedef struct {
    const char *name;
    QuantSpec spec;
    bool kivi;
} Case;

/* Repeats fn until 0.3 s have passed; returns elements per second. */
static double rate(void (*fn)(const void *, const float *, float *, size_t), const void *arg,
                   const float *x, float *out, size_t n)
{
    fn(arg, x, out, n);                         // warm-up
    size_t reps = 0;
    double t0 = now(), t;
    do {
        fn(arg, x, out, n);
        reps++;
        t = now() - t0;
    } while (t < 0.3);
    sink = out[n / 2];
    return (double)reps * (double)n / t;
}

static void run_codec(const void *arg, const float *x, float *out, size_t n)
{
    const Minifloat *f = arg;
    for (size_t i = 0; i < n; i++)
        out[i] = minifloat_round(f, x[i], true);
}

static void run_encode(const void *arg, const float *x, float *out, size_t n)
{
    const Minifloat *f = arg;
    uint8_t *codes = (uint8_t *)out;
    for (size_t i = 0; i < n; i++)
        codes[i] = minifloat_encode(f, x[i], true);
}

static void run_decode(const void *arg, const float *x, float *out, size_t n)
{
    const Minifloat *f = arg;
    const uint8_t *codes = (const uint8_t *)x;
    for (size_t i = 0; i < n; i++)
        out[i] = minifloat_decode(f, codes[i]);
}

static void run_case(const void *arg, const float *x, float *out, size_t n)
{
    const Case *c = arg;
    static float v_out[4096 * 128];
    if (c->kivi) {
        KiviSpec s = {2, 32, 128};
        kivi_ref(&s, x, x, n / 128, 128, out, v_out, NULL);
    } else {
        quantize_ref(&c->spec, x, n / 128, 128, out, NULL);
    }
}

int main(void)
{
    KvGenParams p;
    kvgen_defaults(&p);
    p.tokens = 4096;
    size_t n = p.tokens * p.head_dim;
    float *k = malloc(n * sizeof *k), *v = malloc(n * sizeof *v), *q = malloc(p.head_dim * 4);
    float *out = malloc(n * sizeof *out);
    if (!k || !v || !q || !out || kvgen(&p, k, v, q, NULL))
        return 1;
    printf("%-34s %10s\n", "one core, 4096 x 128 keys", "M elem/s");
    const Minifloat *codecs[] = {&MF_E4M3, &MF_E5M2, &MF_E2M1};
    for (size_t i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s round trip", codecs[i]->name);
        printf("%-34s %10.0f\n", name, rate(run_codec, codecs[i], k, out, n) / 1e6);
        snprintf(name, sizeof name, "%s encode", codecs[i]->name);
        printf("%-34s %10.0f\n", name, rate(run_encode, codecs[i], k, out, n) / 1e6);
        snprintf(name, sizeof name, "%s decode", codecs[i]->name);
        uint8_t *codes = malloc(n);
        for (size_t j = 0; j < n; j++)
            codes[j] = minifloat_encode(codecs[i], k[j], true);
        printf("%-34s %10.0f\n", name, rate(run_decode, codecs[i], (const float *)codes, out, n) / 1e6);
        free(codes);
    }
    Case cases[] = {
        {"int-min 4-bit per token", {.scheme = SCHEME_INT_MIN, .bits = 4, .gran = {GRAN_TOKEN, 0}}, false},
        {"int-min 2-bit per channel", {.scheme = SCHEME_INT_MIN, .bits = 2, .gran = {GRAN_CHANNEL, 0}}, false},
        {"int-zp 4-bit group:32", {.scheme = SCHEME_INT_ZP, .bits = 4, .gran = {GRAN_GROUP_CHANNELS, 32}}, false},
        {"int-sym 8-bit per token", {.scheme = SCHEME_INT_SYM, .bits = 8, .gran = {GRAN_TOKEN, 0}}, false},
        {"fp8 E4M3 dynamic per token", {.scheme = SCHEME_FP8, .gran = {GRAN_TOKEN, 0}, .fp8 = &MF_E4M3, .saturate = true}, false},
        {"nvfp4", {.scheme = SCHEME_NVFP4}, false},
        {"mxfp4", {.scheme = SCHEME_MXFP4}, false},
        {"KIVI 2-bit, K and V, residual 128", {0}, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double r = rate(run_case, &cases[i], k, out, n);
        if (cases[i].kivi)
            r *= 2;                             // keys and values
        printf("%-34s %10.0f\n", cases[i].name, r / 1e6);
    }
    free(k), free(v), free(q), free(out);
    return 0;
}
