/* kvmatrix.h - one attention head's keys, values and query from a JSON file
 * (`kvlab quant --matrix FILE`).
 *
 *   [[k00, k01, ...], [k10, k11, ...], ...]                  keys only: V = K
 *   {"keys": [[...], ...], "values": [[...], ...], "query": [...]}
 *
 * Rows are tokens and columns channels; every row has as many numbers as the
 * first, values have the keys' shape and the query one number a channel.
 * Each number is read as the float nearest to its exact value, and one
 * beyond float range is refused, like every other fault, with the file,
 * line and column (jsonfile.h).
 */
#ifndef KVLAB_KVMATRIX_H
#define KVLAB_KVMATRIX_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    size_t tokens, d;
    float *k;                   // (tokens, d)
    float *v;                   // (tokens, d): the file's values, or a copy of k
    float *q;                   // (d): the file's query, or zeros
    bool has_values;            // the file gave values
    bool has_query;             // the file gave a query
} KvMatrix;

/* Each returns 0, or -1 with nothing left allocated. */
int kvmatrix_load(KvMatrix *m, const char *path, Error *e);
/* The same from text in memory (len bytes, no NUL needed); name is used in
 * messages. */
int kvmatrix_parse(KvMatrix *m, const char *name, const char *text, size_t len, Error *e);
void kvmatrix_free(KvMatrix *m);

#endif
