/* fuzz_model.c - the model file loader (model_parse), and the footprint of
 * every model it accepts in every format. */
#include "fuzz.h"

#include "budget.h"
#include "model.h"

/* What a loaded model promises: the bounds the loader enforces, and a
 * footprint in every format that is computed or refused, never wrapped. */
static void check_model(const Model *m)
{
    const Shape *s = &m->shape;
    FUZZ_CHECK(strcmp(m->name, "fuzz") == 0, "name '%s'", m->name);
    FUZZ_CHECK(s->layers >= 1 && s->layers <= 100000 && s->kv_heads >= 1 &&
                   s->q_heads % s->kv_heads == 0 && s->head_dim >= 1 && s->head_dim <= 65536,
               "shape %llu x %llu x %llu x %llu", (unsigned long long)s->layers,
               (unsigned long long)s->q_heads, (unsigned long long)s->kv_heads,
               (unsigned long long)s->head_dim);
    FUZZ_CHECK(s->period >= 1 && s->period <= MODEL_PATTERN_MAX, "period %u", s->period);
    FUZZ_CHECK(!shape_layers_of_kind(s, ATTN_SLIDING) || s->window, "sliding layers, no window");
    FUZZ_CHECK(m->weight_bytes >= m->params && m->weight_bytes <= (u128)m->params * 8,
               "weight bytes");
    u128 params;
    Error e;
    (void)model_param_count(m, &params, &e);

    static const uint64_t CONTEXTS[] = {1, 8192, 1u << 20, UINT64_MAX};
    for (size_t c = 0; c < sizeof CONTEXTS / sizeof CONTEXTS[0]; c++)
        for (size_t i = 0; i < format_count(); i++) {
            Workload w;
            workload_init(&w, s, CONTEXTS[c], 7);
            FormatResult r;
            if (budget_compute(&w, format_at(i), &r, &e))
                continue;
            u128 bytes, all;
            FUZZ_CHECK(u128_mul_ok(r.fp.bytes_per_sequence, 7, &bytes) && bytes == r.fp.bytes,
                       "bytes are not bytes per sequence x batch");
            FUZZ_CHECK(r.fp.payload_bytes <= r.fp.bytes, "payload above bytes");
            Checked k = {false};
            all = checked_mul(&k, checked_mul(&k, 2 * s->layers, s->kv_heads), s->head_dim);
            all = checked_mul(&k, checked_mul(&k, all, CONTEXTS[c]), 7);
            FUZZ_CHECK(k.overflow || r.fp.elements <= all, "more elements than 2 L H D S B");
            FUZZ_CHECK(!format_is_full_precision(format_at(i)) || r.fp.bytes == 2 * r.fp.elements,
                       "16-bit format not 2 bytes per element");
        }
}

FUZZ_TARGET(model)
{
    char *text = fuzz_exact(data, size);
    static Model m, again;
    Error e;
    int rc = model_parse(&m, "fuzz.json", text, size, &e);
    if (rc)
        fuzz_check_file_error(&e, "fuzz.json", text, size);
    else
        check_model(&m);
    FUZZ_CHECK(model_parse(&again, "fuzz.json", text, size, &e) == rc &&
                   (rc || memcmp(&m, &again, sizeof m) == 0),
               "a second read differs");
    free(text);
    return 0;
}
