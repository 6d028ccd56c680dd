/* Threads sharing one context and its remote cache (issue 26): lookups,
 * leases, stores and the counters from several threads at once (the
 * ThreadSanitizer job runs this, label tsan). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_fixture.h"
#include "test_support.h"

enum { THREADS = 4, PER_THREAD = 3 };

typedef struct job {
    asyncrt_context *ctx;
    int first;
    int compiled, remote, failed;
} job;

static void *compile_some(void *arg)
{
    job *j = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        char src[160];
        snprintf(src, sizeof src, "extern \"C\" __global__ void t%d(int *x) { x[0] = %d; }\n", j->first + i,
                 j->first + i);
        asyncrt_compile_options opts = {.size = sizeof opts, .arch = "sm_90"};
        asyncrt_program *p = NULL;
        if (asyncrt_program_compile(j->ctx, "t.cu", src, &opts, &p) != ASYNCRT_SUCCESS) j->failed++;
        else if (asyncrt_program_origin_of(p) == ASYNCRT_ORIGIN_COMPILED) j->compiled++;
        else if (asyncrt_program_origin_of(p) == ASYNCRT_ORIGIN_REMOTE_CACHE) j->remote++;
        asyncrt_program_destroy(p);
        asyncrt_remote_cache_stats st = ASYNCRT_REMOTE_CACHE_STATS_INIT;
        asyncrt_context_remote_cache_stats(j->ctx, &st); /* read while others count */
    }
    return NULL;
}

/* Each thread its own kernels, THREADS threads on one context; returns totals. */
static job run_threads(const char *spec, const char *key, const char *cache)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, cache));
    assert_ok(ctx, asyncrt_context_set_remote_cache(ctx, spec, key));
    job jobs[THREADS], total = {0};
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (job){.ctx = ctx, .first = i * PER_THREAD};
        assert_int_equal(pthread_create(&t[i], NULL, compile_some, &jobs[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        total.compiled += jobs[i].compiled, total.remote += jobs[i].remote, total.failed += jobs[i].failed;
    }
    asyncrt_context_destroy(ctx);
    return total;
}

static void test_threads_share_a_remote(void **state)
{
    (void)state;
    redis_server server;
    assert_true(redis_start(&server, false));
    char *dir = test_make_temp_dir("asyncrt-remote-threads");
    char *key = make_key_file(dir, "fleet.key");
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    job first = run_threads(server.spec, key, a);
    assert_int_equal(first.failed, 0);
    assert_int_equal(first.compiled, THREADS * PER_THREAD);
    job second = run_threads(server.spec, key, b); /* another machine: all from the remote */
    assert_int_equal(second.failed, 0);
    assert_int_equal(second.remote, THREADS * PER_THREAD);
    redis_stop(&server);
    test_remove_tree(dir);
    free(dir), free(key);
}

int main(void)
{
    if (!redis_server_program()) {
        printf("SKIP: no redis-server (Debian: redis-server; tools/setup.sh installs it)\n");
        return ASYNCRT_TEST_SKIP;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_threads_share_a_remote)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
