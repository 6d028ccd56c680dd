/* A bounded set of threads for one job of independent tasks (a batch of
 * builds): nothing persists between jobs, so nothing needs shutting down. */
#ifndef ASYNCRT_THREAD_POOL_H
#define ASYNCRT_THREAD_POOL_H

#include <stddef.h>

typedef void (*asyncrt_pool_task)(void *arg, size_t index);

/* The number of online CPUs (at least 1). */
unsigned asyncrt__pool_default_threads(void);

/* Runs task(arg, i) for every i in [0, count), each exactly once, on up to
 * `threads` threads (0: the CPU count; never more than count), the calling
 * thread being one of them; returns when all are done. A thread that cannot
 * be created is simply not used. thread_exit(arg), if given, runs on each
 * helper thread (not the caller) before it ends. */
void asyncrt__pool_run(unsigned threads, size_t count, asyncrt_pool_task task,
                      void (*thread_exit)(void *arg), void *arg);

#endif
