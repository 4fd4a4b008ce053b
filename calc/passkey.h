/* passkey.h - a passkey written into a value vector and read back from an
 * attention output: the needle's payload in kvlab niah.
 *
 * The head's D channels are cut into one block per digit (D / n channels,
 * the rest unused); a block holds ten slots of equal width, one per digit
 * value, and the digit's slot is set to +amplitude, every other channel 0.
 * Reading a block takes the slot with the largest sum. An attention output
 * is a weighted mean of values, so the needle's passkey comes back when the
 * needle's weight lifts its slot above what the other tokens' values add:
 * the digits survive noise up to half the amplitude per channel, and a
 * distractor that wins the attention reads back as its own passkey. */
#ifndef KVLAB_PASSKEY_H
#define KVLAB_PASSKEY_H

#include "error.h"

#include <stddef.h>
#include <stdint.h>

#define PASSKEY_DIGITS_MAX 16
#define PASSKEY_DIGITS_DEFAULT 4
#define PASSKEY_AMPLITUDE_DEFAULT 4  // in units of the haystack values' spread (1)

/* 0 when n digits fit in D channels (ten slots of at least one channel a
 * digit), else an error saying how many channels they need. */
int passkey_check(unsigned n, size_t head_dim, Error *e);
/* v (head_dim) = the passkey's digits (each 0..9). */
void passkey_encode(const uint8_t *digits, unsigned n, float amplitude, float *v, size_t head_dim);
/* The digits v holds. */
void passkey_decode(const float *v, size_t head_dim, unsigned n, uint8_t *digits);

#endif
