/* random.h - the seeded random source of calc/: splitmix64, uniform and
 * normal draws (Box-Muller), written out here so that a seed means the
 * same data on every machine and with every C library. */
#ifndef KVLAB_RANDOM_H
#define KVLAB_RANDOM_H

#include <math.h>
#include <stdint.h>

typedef struct {
    uint64_t s;
} Rand;

#define RAND_GAMMA 0x9E3779B97F4A7C15ull  // splitmix64's step: each draw adds it to the state

static inline uint64_t rand_u64(Rand *r)
{
    uint64_t z = (r->s += RAND_GAMMA);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The state n draws on: the same as drawing n times, in one step. */
static inline void rand_skip(Rand *r, uint64_t n)
{
    r->s += n * RAND_GAMMA;
}

/* Uniform in (0, 1), 53 bits: a double's precision. */
static inline double rand_unit(Rand *r)
{
    return ((double)(rand_u64(r) >> 11) + 0.5) * 0x1p-53;
}

/* Uniform in 0 .. n - 1 (n >= 1); the bias of the modulus is below 2^-40
 * for every n the callers use (at most 2^24). */
static inline uint64_t rand_below(Rand *r, uint64_t n)
{
    return rand_u64(r) % n;
}

static inline float rand_normal(Rand *r)
{
    double u = rand_unit(r), v = rand_unit(r);
    return (float)(sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v));
}

/* A seed of its own for item `i` of a stream seeded `seed`: independent
 * streams for the trials, lengths and formats of one run. */
static inline uint64_t rand_seed_of(uint64_t seed, uint64_t i)
{
    Rand r = {seed ^ (i * 0xD1B54A32D192ED03ull)};
    return rand_u64(&r);
}

#endif
