/* parallel.h - items run side by side on the host's cores: each thread
 * takes the next item not yet taken, so that unequal items even out. Used
 * by the CPU reference (its sequences and KV heads) and the NIAH grid (a
 * trial's rows, its formats and depths). */
#ifndef KVLAB_PARALLEL_H
#define KVLAB_PARALLEL_H

#include "error.h"

#include <stddef.h>

#define PARALLEL_THREADS_MAX 256

/* fn(ctx, i, worker, e) for every i in 0 .. n - 1 on up to `threads`
 * threads (0 or less: one a core; never more than n), `worker` the
 * thread's number from 0 (for what a thread keeps of its own); a thread
 * that cannot start leaves its share to the others. After the first
 * failure no new item starts; that failure's error is returned (-1). */
typedef int (*ParallelFn)(void *ctx, size_t i, int worker, Error *e);
int parallel_each(size_t n, int threads, ParallelFn fn, void *ctx, Error *e);

/* The threads parallel_each would run n items on. */
int parallel_threads(size_t n, int threads);

#endif
