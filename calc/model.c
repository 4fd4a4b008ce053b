/* model.c - model shapes and the model file loader. */
#include "model.h"

#include "jsonfile.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Shapes
 */

int shape_init(Shape *s, uint64_t layers, uint64_t q_heads, uint64_t kv_heads,
               uint64_t head_dim, Error *e)
{
    memset(s, 0, sizeof *s);
    if (!layers || !q_heads || !kv_heads || !head_dim)
        return error_set(e, "layers, query heads, KV heads and head dimension must all be at least 1");
    if (head_dim > UINT32_MAX)
        return error_set(e, "head dimension %llu is too large (at most %u)",
                         (unsigned long long)head_dim, UINT32_MAX);
    if (q_heads % kv_heads != 0)
        return error_set(e, "query heads (%llu) must be a multiple of KV heads (%llu)",
                         (unsigned long long)q_heads, (unsigned long long)kv_heads);
    s->layers = layers;
    s->q_heads = q_heads;
    s->kv_heads = kv_heads;
    s->head_dim = head_dim;
    s->period = 1;
    s->pattern[0] = ATTN_FULL;
    return 0;
}

AttnKind shape_layer_kind(const Shape *s, uint64_t layer)
{
    return s->pattern[layer % s->period];
}

uint64_t shape_layers_of_kind(const Shape *s, AttnKind kind)
{
    /* Pattern slot j covers layers j, j + p, j + 2p, ... below L. O(period). */
    uint64_t n = 0;
    for (unsigned j = 0; j < s->period; j++)
        if (s->pattern[j] == kind && j < s->layers)
            n += (s->layers - 1 - j) / s->period + 1;
    return n;
}

Shape shape_as_mha(const Shape *s)
{
    Shape m = *s;
    m.kv_heads = s->q_heads;
    return m;
}

int shape_split_tp(const Shape *s, uint64_t tp, Shape *per_gpu, uint64_t *replicas, Error *e)
{
    if (tp == 0)
        return error_set(e, "tensor-parallel degree must be at least 1");
    if (s->q_heads % tp != 0)
        return error_set(e, "tensor-parallel degree %llu does not divide the %llu query heads",
                         (unsigned long long)tp, (unsigned long long)s->q_heads);
    *per_gpu = *s;
    per_gpu->q_heads = s->q_heads / tp;
    if (s->kv_heads % tp == 0) {
        per_gpu->kv_heads = s->kv_heads / tp;
        *replicas = 1;
    } else if (tp % s->kv_heads == 0) {
        per_gpu->kv_heads = 1;
        *replicas = tp / s->kv_heads;
    } else {
        return error_set(e, "tensor-parallel degree %llu and %llu KV heads: one must divide "
                            "the other", (unsigned long long)tp, (unsigned long long)s->kv_heads);
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Parameter count
 */

int model_param_count(const Model *m, u128 *params, Error *e)
{
    const Shape *s = &m->shape;
    u128 h = m->hidden, q = s->q_heads * (u128)s->head_dim, kv = s->kv_heads * (u128)s->head_dim;
    /* per layer: Wq (h x q), Wk and Wv (h x kv each), Wo (q x h),
     * gate, up and down (3 x h x intermediate), norms (h each) */
    u128 per_layer = h * q + 2 * h * kv + q * h + 3 * h * m->intermediate
                   + m->norms_per_layer * h;
    u128 embed = (u128)m->vocab * h * (m->tied_embeddings ? 1 : 2);
    u128 total;
    if (!u128_mul_ok(per_layer, s->layers, &total) || !u128_add_ok(total, embed + h, &total))
        return error_set(e, "parameter count overflows");
    *params = total;       // + h: the final norm
    return 0;
}

/* ------------------------------------------------------------------------
 * Loader
 */

static const char *const MODEL_FIELDS[] = {
    "name", "display", "source", "note", "layers", "q_heads", "kv_heads", "head_dim",
    "hidden", "intermediate", "vocab", "tied_embeddings", "norms_per_layer", "params",
    "weight_bytes_per_param", "sliding_window", "layer_pattern", "max_context", NULL,
};

static int load_pattern(const JsonDoc *d, const cJSON *root, Model *m, Error *e)
{
    const cJSON *arr;
    int n;
    int rc = json_array(d, root, "layer_pattern", FIELD_OPTIONAL, &arr, &n, e);
    if (rc < 0)
        return -1;
    if (rc == 1)
        return 0;
    if (n < 1 || n > MODEL_PATTERN_MAX)
        return jsondoc_error(d, arr, e, "field 'layer_pattern': expected 1 to %d entries",
                             MODEL_PATTERN_MAX);
    unsigned i = 0;
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        if (cJSON_IsString(c) && strcmp(c->valuestring, "full") == 0)
            m->shape.pattern[i] = ATTN_FULL;
        else if (cJSON_IsString(c) && strcmp(c->valuestring, "sliding") == 0)
            m->shape.pattern[i] = ATTN_SLIDING;
        else
            return jsondoc_error(d, c, e, "field 'layer_pattern': expected \"full\" or \"sliding\"");
    }
    m->shape.period = i;
    if (shape_layers_of_kind(&m->shape, ATTN_SLIDING) && !m->shape.window)
        return jsondoc_error(d, arr, e, "sliding layers need a 'sliding_window' size");
    return 0;
}

/* Reads m from d, then frees d. */
static int from_doc(void *out, JsonDoc *d, const void *ctx, Error *e)
{
    Model *m = out;
    (void)ctx;
    const cJSON *r = d->root;
    uint64_t L, hq, hkv, hd, wbytes = 2, window = 0;
    char name[sizeof m->name];
    m->norms_per_layer = 2;     // input and post-attention RMSNorm (Llama)
    if (json_object(d, r, "a model file", e) || json_known_fields(d, r, MODEL_FIELDS, e) ||
        json_string(d, r, "name", FIELD_REQUIRED, name, sizeof name, e) ||
        json_string(d, r, "display", FIELD_REQUIRED, m->display, sizeof m->display, e) ||
        json_string(d, r, "source", FIELD_REQUIRED, m->source, sizeof m->source, e) ||
        json_uint(d, r, "layers", FIELD_REQUIRED, 1, MODEL_LAYERS_MAX, &L, e) ||
        json_uint(d, r, "q_heads", FIELD_REQUIRED, 1, MODEL_HEADS_MAX, &hq, e) ||
        json_uint(d, r, "kv_heads", FIELD_REQUIRED, 1, MODEL_HEADS_MAX, &hkv, e) ||
        json_uint(d, r, "head_dim", FIELD_REQUIRED, 1, MODEL_HEAD_DIM_MAX, &hd, e) ||
        json_uint(d, r, "hidden", FIELD_REQUIRED, 1, 1u << 24, &m->hidden, e) ||
        json_uint(d, r, "intermediate", FIELD_REQUIRED, 1, 1u << 26, &m->intermediate, e) ||
        json_uint(d, r, "vocab", FIELD_REQUIRED, 1, 1u << 26, &m->vocab, e) ||
        json_bool(d, r, "tied_embeddings", FIELD_REQUIRED, &m->tied_embeddings, e) ||
        json_uint(d, r, "params", FIELD_REQUIRED, 1, UINT64_MAX, &m->params, e) ||
        json_uint(d, r, "weight_bytes_per_param", FIELD_OPTIONAL, 1, 8, &wbytes, e) < 0 ||
        json_uint(d, r, "norms_per_layer", FIELD_OPTIONAL, 0, 16, &m->norms_per_layer, e) < 0 ||
        json_uint(d, r, "sliding_window", FIELD_OPTIONAL, 1, UINT32_MAX, &window, e) < 0 ||
        json_uint(d, r, "max_context", FIELD_OPTIONAL, 1, UINT32_MAX, &m->max_context, e) < 0)
        goto err;
    Error inner;
    if (shape_init(&m->shape, L, hq, hkv, hd, &inner)) {
        jsondoc_error(d, r, e, "%s", inner.msg);
        goto err;
    }
    m->shape.window = window;
    if (load_pattern(d, r, m, e))
        goto err;
    if (jsondoc_check_name(d, name, e))
        goto err;
    snprintf(m->name, sizeof m->name, "%s", name);
    m->weight_bytes = (u128)m->params * wbytes;
    jsondoc_done(d);
    return 0;
err:
    jsondoc_done(d);
    return -1;
}

int model_load(Model *m, const char *path, Error *e)
{
    return jsondoc_read(m, sizeof *m, from_doc, NULL, path, NULL, 0, e);
}

int model_parse(Model *m, const char *name, const char *text, size_t len, Error *e)
{
    return jsondoc_read(m, sizeof *m, from_doc, NULL, name, text, len, e);
}
