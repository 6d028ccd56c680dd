#include "thread_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* Beyond this, threads only add memory: NVRTC is CPU-bound. */
#define POOL_MAX_THREADS 256

typedef struct pool_job {
    atomic_size_t next;
    size_t count;
    asyncrt_pool_task task;
    void (*thread_exit)(void *arg);
    void *arg;
} pool_job;

unsigned asyncrt__pool_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (unsigned)n;
}

/* Tasks are handed out one at a time, so a slow compile never holds back
 * work queued behind it on the same thread. */
static void work(pool_job *job)
{
    for (size_t i; (i = atomic_fetch_add(&job->next, 1)) < job->count;) job->task(job->arg, i);
}

static void *helper(void *arg)
{
    pool_job *job = arg;
    work(job);
    if (job->thread_exit) job->thread_exit(job->arg);
    return NULL;
}

void asyncrt__pool_run(unsigned threads, size_t count, asyncrt_pool_task task,
                      void (*thread_exit)(void *arg), void *arg)
{
    if (!count) return;
    if (!threads) threads = asyncrt__pool_default_threads();
    if (threads > POOL_MAX_THREADS) threads = POOL_MAX_THREADS;
    if (threads > count) threads = (unsigned)count;
    pool_job job = {.count = count, .task = task, .thread_exit = thread_exit, .arg = arg};
    atomic_init(&job.next, 0);
    pthread_t *ids = threads > 1 ? malloc((threads - 1) * sizeof *ids) : NULL;
    unsigned started = 0;
    while (ids && started + 1 < threads && pthread_create(&ids[started], NULL, helper, &job) == 0)
        started++;
    work(&job);
    for (unsigned i = 0; i < started; i++) pthread_join(ids[i], NULL);
    free(ids);
}
