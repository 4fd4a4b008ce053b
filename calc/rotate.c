/* rotate.c - see rotate.h. */
#include "rotate.h"

#include <math.h>

int rope_apply(float *x, size_t rows, size_t d, size_t first, double theta, Error *e)
{
    if (d % 2)
        return error_set(e, "RoPE needs an even head dimension, not %zu", d);
    if (!(theta > 1))
        return error_set(e, "RoPE theta must be greater than 1");
    size_t half = d / 2;
    /* A channel pair's frequency is the same at every position: pairs
     * outside, rows inside, one pow per pair. */
    for (size_t i = 0; i < half; i++) {
        double freq = pow(theta, -2.0 * (double)i / (double)d);
        for (size_t r = 0; r < rows; r++) {
            float *v = x + r * d;
            double ang = (double)(first + r) * freq;
            double c = cos(ang), s = sin(ang);
            double a = v[i], b = v[i + half];
            v[i] = (float)(a * c - b * s);
            v[i + half] = (float)(a * s + b * c);
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
        for (size_t i = 0; i < d; i++)
            v[i] *= norm;
    }
    return 0;
}
