/* footprint.c - see footprint.h. */
#include "footprint.h"

#include <string.h>

/* Bytes of one layer of one sequence holding t tokens, r of them residual. */
static u128 layer_bytes(Checked *c, const Shape *s, const Format *f, uint64_t t, uint64_t r,
                        bool payload_only)
{
    const Format *full = format_bf16();
    unsigned d = (unsigned)s->head_dim;
    u128 vq = payload_only ? format_payload_bytes(f, d) : format_vector_bytes(f, d);
    u128 vr = payload_only ? format_payload_bytes(full, d) : format_vector_bytes(full, d);
    u128 per_head = checked_add(c, checked_mul(c, t - r, vq), checked_mul(c, r, vr));
    return checked_mul(c, checked_mul(c, 2, s->kv_heads), per_head);
}

int kv_options_check(const Shape *s, const KvOptions *o, Error *e)
{
    for (size_t i = 0; i < o->n_bf16_layers; i++) {
        uint64_t l = o->bf16_layers[i];
        if (l >= s->layers)
            return error_set(e, "layer %llu kept in BF16 does not exist (layers are 0 to %llu)",
                             (unsigned long long)l, (unsigned long long)(s->layers - 1));
        for (size_t j = 0; j < i; j++)
            if (o->bf16_layers[j] == l)
                return error_set(e, "layer %llu is listed twice", (unsigned long long)l);
    }
    return 0;
}

int footprint(const Shape *s, const Format *f, const KvOptions *o, uint64_t context,
              uint64_t batch, Footprint *out, Error *e)
{
    static const KvOptions none;
    if (!o)
        o = &none;
    memset(out, 0, sizeof *out);
    if (!context || !batch)
        return error_set(e, "context and batch must be at least 1");
    if (kv_options_check(s, o, e))
        return -1;

    /* Layers kept in BF16, counted per attention kind. */
    uint64_t kept[2] = {0, 0};
    for (size_t i = 0; i < o->n_bf16_layers; i++)
        kept[shape_layer_kind(s, o->bf16_layers[i])]++;
    if (o->bf16_sliding)
        kept[ATTN_SLIDING] = shape_layers_of_kind(s, ATTN_SLIDING);

    Checked c = {0};
    u128 per_seq = 0, payload = 0, elements = 0;
    uint64_t quantized = 0;
    for (int kind = ATTN_FULL; kind <= ATTN_SLIDING; kind++) {
        uint64_t n = shape_layers_of_kind(s, (AttnKind)kind);
        if (!n)
            continue;
        uint64_t t = (kind == ATTN_SLIDING && s->window < context) ? s->window : context;
        uint64_t r = (o->residual < t) ? o->residual : t;
        if (format_is_full_precision(f))
            r = 0;
        uint64_t nq = n - kept[kind];
        const Format *bf16 = format_bf16();
        per_seq = checked_add(&c, per_seq, checked_mul(&c, nq, layer_bytes(&c, s, f, t, r, false)));
        per_seq = checked_add(&c, per_seq, checked_mul(&c, kept[kind], layer_bytes(&c, s, bf16, t, 0, false)));
        payload = checked_add(&c, payload, checked_mul(&c, nq, layer_bytes(&c, s, f, t, r, true)));
        payload = checked_add(&c, payload, checked_mul(&c, kept[kind], layer_bytes(&c, s, bf16, t, 0, true)));
        u128 per_token = checked_mul(&c, checked_mul(&c, 2 * (u128)n, s->kv_heads), s->head_dim);
        elements = checked_add(&c, elements, checked_mul(&c, per_token, t));
        quantized += nq;
    }
    u128 scale_units = o->head_scales ? s->kv_heads : 1;
    out->tensor_scale_bytes =
        checked_mul(&c, checked_mul(&c, checked_mul(&c, 2, quantized), f->tensor_scale_bytes), scale_units);
    out->bytes_per_sequence = per_seq;
    out->bytes = checked_mul(&c, per_seq, batch);
    out->payload_bytes = checked_mul(&c, payload, batch);
    out->elements = checked_mul(&c, elements, batch);
    out->quantized_layers = format_is_full_precision(f) ? 0 : quantized;
    if (c.overflow)
        return error_set(e, "overflow: the cache size does not fit in 128 bits "
                            "(check layers, heads, head dimension, context and batch)");
    return 0;
}
