/* rotate.c - see rotate.h. */
#include "rotate.h"

#include <float.h>
#include <math.h>

int rope_apply(float *x, size_t rows, size_t d, size_t first, double theta, Error *e)
{
    if (d % 2)
        return error_set(e, "RoPE needs an even head dimension, not %zu", d);
    if (!(theta > 1))
        return error_set(e, "RoPE theta must be greater than 1");
    size_t half = d / 2;
    /* A channel pair's frequency is the same at every position: one pow
     * per pair, for a block of pairs at a time, then every row over that
     * block (no heap buffer; each row read in runs of the block). */
    enum { BLOCK = 64 };
    for (size_t i0 = 0; i0 < half; i0 += BLOCK) {
        size_t n = half - i0 < BLOCK ? half - i0 : BLOCK;
        double freq[BLOCK];
        for (size_t k = 0; k < n; k++)
            freq[k] = pow(theta, -2.0 * (double)(i0 + k) / (double)d);
        for (size_t r = 0; r < rows; r++) {
            float *v = x + r * d + i0;
            double pos = (double)(first + r);
            for (size_t k = 0; k < n; k++) {
                double ang = pos * freq[k];
                double c = cos(ang), s = sin(ang);
                double a = v[k], b = v[k + half];
                v[k] = (float)(a * c - b * s);
                v[k + half] = (float)(a * s + b * c);
                if (!isfinite(v[k]) || !isfinite(v[k + half]))
                    return error_set(e, "RoPE takes the row at position %zu past a float's range (%g, %g)",
                                     first + r, a, b);
            }
        }
    }
    return 0;
}

int hadamard_rows(float *x, size_t rows, size_t d, Error *e)
{
    if (d == 0 || (d & (d - 1)))
        return error_set(e, "the Hadamard rotation needs a power-of-two head dimension, not %zu", d);
    float norm = (float)(1.0 / sqrt((double)d));
    for (size_t r = 0; r < rows; r++) {
        float *v = x + r * d;
        for (size_t h = 1; h < d; h *= 2)
            for (size_t i = 0; i < d; i += 2 * h)
                for (size_t j = i; j < i + h; j++) {
                    float a = v[j], b = v[j + h];
                    v[j] = a + b;
                    v[j + h] = a - b;
                }
        for (size_t i = 0; i < d; i++) {
            v[i] *= norm;
            if (!isfinite(v[i]))        // a sum of d values past FLT_MAX
                return error_set(e, "the Hadamard rotation of row %zu overflows a float: its sums of "
                                    "%zu values reach past %g", r, d, (double)FLT_MAX);
        }
    }
    return 0;
}
