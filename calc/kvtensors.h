/* kvtensors.h - one layer's real keys and values from a safetensors file
 * (`kvlab niah --kv FILE`), as a model caches them.
 *
 * The file is Hugging Face's safetensors format: an 8-byte little-endian
 * length N, N bytes of JSON header, then the data. The header maps each
 * tensor's name to {"dtype": "BF16", "shape": [...], "data_offsets":
 * [begin, end]}, offsets in bytes from the start of the data, row-major and
 * little-endian; an optional "__metadata__" object holds strings. kvlab
 * reads the tensors named "k" and "v", each [tokens, kv_heads, head_dim] in
 * BF16, F16 or F32 (the same for both), into floats; other tensors may be
 * there and are checked only for their place in the data.
 *
 * A file is refused, naming it and what was wrong, when it is shorter than
 * its header says, its header is over KVTENSORS_HEADER_MAX bytes, not JSON
 * (or holds a NUL), not an object, or an entry is mistyped; when a tensor's
 * data lies outside the data or overlaps another's, or its byte count is
 * not its shape's; when k or v is missing, is not three-dimensional, has a
 * zero-sized dimension, a head_dim over KVGEN_MAX_DIM or more tokens than
 * KVGEN_TOKENS_MAX, another dtype, or a shape or dtype the other does not
 * share; and when a value is infinite or NaN (the tensor and the index
 * named), which no attention step can use. Header faults carry the line
 * and column within the header: "kv.safetensors: header:1:40: ...".
 *
 * The data is read tensor by tensor, a chunk at a time, straight into the
 * floats: memory is the two float tensors and a chunk, never the file. The
 * file's size is checked against every offset before anything is
 * allocated.
 */
#ifndef KVLAB_KVTENSORS_H
#define KVLAB_KVTENSORS_H

#include "error.h"

#include <stddef.h>

/* 1 MiB: a k and v file's header is a few hundred bytes and one of a
 * whole model's tensors some tens of kilobytes (safetensors' own reader
 * stops at 100 MB). */
#define KVTENSORS_HEADER_MAX (1u << 20)

typedef struct {
    size_t tokens, kv_heads, head_dim;
    float *k, *v;       // [tokens][kv_heads][head_dim], row-major, owned, converted to f32
    char dtype[8];      // the file's dtype: "BF16", "F16" or "F32" (both tensors share it)
} KvTensors;

/* Loads tensors "k" and "v" of a safetensors file. 0, or -1 with e naming the file and what
 * was wrong (a bad file is an input error; out of memory or a short read error_runtime). */
int kvtensors_load(const char *path, KvTensors *t, Error *e);
/* The same from a file's len bytes already in memory (tests, fuzzing);
 * name is used in messages. */
int kvtensors_parse(const char *name, const void *bytes, size_t len, KvTensors *t, Error *e);
void kvtensors_free(KvTensors *t);

#endif
