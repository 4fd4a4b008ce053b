/* rotate.h - the two rotations applied to keys around quantization.
 *
 * RoPE (rotary position embedding) rotates channel pairs (i, i + D/2) of the
 * vector at position m by the angle m x theta^(-2i/D), the "rotate half"
 * layout of Llama. Quantizing keys before it (pre-RoPE, as KVQuant does)
 * keeps outlier channels in fixed columns; after it, the rotation spreads
 * each outlier over its pair.
 *
 * The Hadamard rotation (QuaRot, RotateKV) multiplies each head vector by
 * the orthonormal Walsh-Hadamard matrix H / sqrt(D), which spreads an
 * outlier's energy over all channels; applied twice it is the identity, and
 * it keeps dot products, so q.k = (Hq).(Hk). D must be a power of two.
 */
#ifndef KVLAB_ROTATE_H
#define KVLAB_ROTATE_H

#include "error.h"

#include <stddef.h>

#define ROPE_THETA_LLAMA3 500000.0

/* Rotates rows of x (rows, d) in place; row r sits at position first + r.
 * d must be even. */
int rope_apply(float *x, size_t rows, size_t d, size_t first, double theta, Error *e);

/* Fast Walsh-Hadamard transform of each row of x (rows, d) in place,
 * normalized; d a power of two. O(rows x d log d). */
int hadamard_rows(float *x, size_t rows, size_t d, Error *e);

#endif
