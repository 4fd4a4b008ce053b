/* passkey.c - see passkey.h. */
#include "passkey.h"

#include <string.h>

#define DIGIT_VALUES 10

static size_t slot_width(unsigned n, size_t head_dim)
{
    return head_dim / n / DIGIT_VALUES;
}

int passkey_check(unsigned n, size_t head_dim, Error *e)
{
    if (n < 1 || n > PASSKEY_DIGITS_MAX)
        return error_set(e, "a passkey has 1 to %d digits, not %u", PASSKEY_DIGITS_MAX, n);
    if (slot_width(n, head_dim) < 1)
        return error_set(e, "%u digits need %u channels (ten slots a digit); the head has %zu", n,
                         n * DIGIT_VALUES, head_dim);
    return 0;
}

void passkey_encode(const uint8_t *digits, unsigned n, float amplitude, float *v, size_t head_dim)
{
    size_t block = head_dim / n, w = slot_width(n, head_dim);
    memset(v, 0, head_dim * sizeof *v);
    for (unsigned i = 0; i < n; i++)
        for (size_t c = 0; c < w; c++)
            v[i * block + digits[i] * w + c] = amplitude;
}

void passkey_decode(const float *v, size_t head_dim, unsigned n, uint8_t *digits)
{
    size_t block = head_dim / n, w = slot_width(n, head_dim);
    for (unsigned i = 0; i < n; i++) {
        double best = 0;
        for (unsigned d = 0; d < DIGIT_VALUES; d++) {
            double sum = 0;
            for (size_t c = 0; c < w; c++)
                sum += v[i * block + d * w + c];
            if (d == 0 || sum > best)
                best = sum, digits[i] = (uint8_t)d;
        }
    }
}
