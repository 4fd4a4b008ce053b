/* model.h - the shape of a transformer as far as the KV cache cares.
 *
 * A model is its attention shape (layers, query heads, KV heads, head
 * dimension), which layers attend to a sliding window instead of the whole
 * context, and the bytes of its weights. Models come from JSON files in
 * scenarios/models/ or from numbers typed on the command line.
 */
#ifndef KVLAB_MODEL_H
#define KVLAB_MODEL_H

#include "checked.h"
#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODEL_PATTERN_MAX 16    // longest repeating pattern of layer kinds
/* The model kvlab bench and the lab start from: the seeds' worked example. */
#define MODEL_DEFAULT "llama-3.1-8b"
/* The largest shape a model may have: far past any real one. */
#define MODEL_LAYERS_MAX 100000
#define MODEL_HEADS_MAX 100000  // query or KV heads
#define MODEL_HEAD_DIM_MAX 65536

typedef enum { ATTN_FULL = 0, ATTN_SLIDING = 1 } AttnKind;

typedef struct {
    uint64_t layers;            // L
    uint64_t q_heads;           // H_q
    uint64_t kv_heads;          // H_kv (= H_q for multi-head attention)
    uint64_t head_dim;          // D
    uint64_t window;            // tokens a sliding-window layer keeps; 0 if none
    unsigned period;            // layer i has kind pattern[i % period]
    AttnKind pattern[MODEL_PATTERN_MAX];
} Shape;

typedef struct {
    char name[64];              // file stem: "llama-3.1-8b"
    char display[96];           // "Llama-3.1-8B"
    char source[512];           // where the figures come from
    Shape shape;
    uint64_t hidden;            // d_model
    uint64_t intermediate;      // MLP width
    uint64_t vocab;
    bool tied_embeddings;       // input embedding shared with the output head
    uint64_t norms_per_layer;   // RMSNorm weight vectors per layer
    uint64_t params;            // published parameter count
    uint64_t max_context;       // tokens it was trained to read (max_position_embeddings
                                // with its RoPE scaling); 0 = not given
    u128 weight_bytes;          // bytes of the weights as served (BF16: 2 x params)
} Model;

/* A full-attention shape; checks every number is at least 1. */
int shape_init(Shape *s, uint64_t layers, uint64_t q_heads, uint64_t kv_heads,
               uint64_t head_dim, Error *e);
/* Number of layers of the given kind among the first `layers`. */
uint64_t shape_layers_of_kind(const Shape *s, AttnKind kind);
AttnKind shape_layer_kind(const Shape *s, uint64_t layer);
/* The same model with one KV head per query head (multi-head attention). */
Shape shape_as_mha(const Shape *s);

/* The share of one GPU when KV heads are split over a tensor-parallel
 * degree tp: heads divide evenly, or (tp > H_kv) each GPU holds one KV head
 * and heads are replicated tp / H_kv times, as vLLM does. */
int shape_split_tp(const Shape *s, uint64_t tp, Shape *per_gpu, uint64_t *replicas, Error *e);

/* Parameters implied by the architecture (embeddings, attention and MLP
 * projections, norms); the model files' `params` is checked against it. */
int model_param_count(const Model *m, u128 *params, Error *e);

/* Loads scenarios/models/NAME.json (or a path ending in .json). */
int model_load(Model *m, const char *path, Error *e);
/* The same from text in memory (len bytes, no NUL needed); name stands for
 * the file in messages and in the check of the "name" field. */
int model_parse(Model *m, const char *name, const char *text, size_t len, Error *e);

#endif
