/* parallel.c - see parallel.h. */
#include "parallel.h"

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

typedef struct {
    ParallelFn fn;
    void *ctx;
    size_t n, next;
    pthread_mutex_t lock;
    bool failed;
    Error e;                    // the first failure's
} Job;

typedef struct {
    Job *job;
    int worker;
} Thread;

static void *parallel_worker(void *arg)
{
    Thread *t = arg;
    Job *j = t->job;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        size_t i = j->failed ? j->n : j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->n)
            return NULL;
        Error e;
        if (j->fn(j->ctx, i, t->worker, &e)) {
            pthread_mutex_lock(&j->lock);
            if (!j->failed)
                j->failed = true, j->e = e;
            pthread_mutex_unlock(&j->lock);
        }
    }
}

int parallel_threads(size_t n, int threads)
{
    if (threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores < 1 ? 1 : cores > PARALLEL_THREADS_MAX ? PARALLEL_THREADS_MAX : (int)cores;
    }
    if (threads > PARALLEL_THREADS_MAX)
        threads = PARALLEL_THREADS_MAX;
    if ((size_t)threads > n)
        threads = n ? (int)n : 1;
    return threads;
}

int parallel_each(size_t n, int threads, ParallelFn fn, void *ctx, Error *e)
{
    Job j = {fn, ctx, n, 0, PTHREAD_MUTEX_INITIALIZER, false, {{0}, false}};
    Thread t[PARALLEL_THREADS_MAX];
    pthread_t tid[PARALLEL_THREADS_MAX];
    const int m = parallel_threads(n, threads);
    int started = 0;
    for (int i = 0; i < m; i++)
        t[i] = (Thread){&j, i};
    for (; started < m - 1; started++)          // this thread is worker 0
        if (pthread_create(&tid[started], NULL, parallel_worker, &t[started + 1]) != 0)
            break;
    parallel_worker(&t[0]);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    pthread_mutex_destroy(&j.lock);
    if (j.failed && e)
        *e = j.e;
    return j.failed ? -1 : 0;
}
