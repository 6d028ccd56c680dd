/* The remote cache across a fleet (issue 26): two shards share the keys and
 * serve them all; 16 processes that miss one key at once compile it once
 * (the lease), the others take the result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test_support.h"

static char *g_dir, *g_key;

static remote_result compile(const char *spec, const char *cache, const char *src)
{
    remote_run run = {.cache_dir = cache, .spec = spec, .key_file = g_key, .source_name = "k.cu", .source = src};
    remote_result r = remote_compile(&run);
    assert_true(r.ran);
    assert_int_equal(r.status, ASYNCRT_SUCCESS);
    return r;
}

static void test_two_shards(void **state)
{
    (void)state;
    redis_server a, b;
    assert_true(redis_start(&a, true));
    assert_true(redis_start(&b, true));
    char spec[200];
    snprintf(spec, sizeof spec, "redis://127.0.0.1:*|shards=%d,%d", a.port, b.port);
    enum { KERNELS = 16 }; /* all on one shard by chance: 2 in 65536 */
    char src[KERNELS][160];
    for (int i = 0; i < KERNELS; i++) {
        snprintf(src[i], sizeof src[i], "extern \"C\" __global__ void s%d(int *x) { x[0] = %d; }\n", i, i);
        char *cache = fresh_cache_dir(g_dir);
        assert_int_equal(compile(spec, cache, src[i]).origin, ASYNCRT_ORIGIN_COMPILED);
        free(cache);
    }
    char **keys;
    size_t on_a = redis_keys(&a, "asyncrt:v:*", &keys);
    redis_keys_free(keys, on_a);
    size_t on_b = redis_keys(&b, "asyncrt:v:*", &keys);
    redis_keys_free(keys, on_b);
    print_message("two shards: %zu and %zu of %d values\n", on_a, on_b, KERNELS);
    assert_int_equal(on_a + on_b, KERNELS);
    assert_true(on_a > 0 && on_b > 0);
    char *cache = fresh_cache_dir(g_dir); /* one more machine, empty: every kernel from its shard */
    for (int i = 0; i < KERNELS; i++)
        assert_int_equal(compile(spec, cache, src[i]).origin, ASYNCRT_ORIGIN_REMOTE_CACHE);
    free(cache);
    redis_stop(&a);
    redis_stop(&b);
}

/* Heavy enough (~385 headers) that the 16 overlap. */
static const char *herd_source = "#include <cuda/barrier>\n"
                                 "extern \"C\" __global__ void herd(float *x) {\n"
                                 "  __shared__ cuda::barrier<cuda::thread_scope_block> bar;\n"
                                 "  if (threadIdx.x == 0) init(&bar, blockDim.x);\n"
                                 "  __syncthreads();\n"
                                 "  bar.arrive_and_wait();\n"
                                 "  x[threadIdx.x] *= 2.0f;\n"
                                 "}\n";

static void test_thundering_herd(void **state)
{
    (void)state;
    redis_server server;
    assert_true(redis_start(&server, false));
    char spec[500];
    snprintf(spec, sizeof spec, "%s|lease-wait=120000", server.spec);
    enum { N = 16 };
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t pids[N];
    int fds[N];
    char *caches[N];
    for (int i = 0; i < N; i++) {
        caches[i] = fresh_cache_dir(g_dir);
        remote_run run = {.cache_dir = caches[i], .spec = spec, .key_file = g_key, .source_name = "herd.cu",
                          .source = herd_source};
        pids[i] = remote_child_start(&run, go[0], &fds[i]);
    }
    char start[N] = {0}; /* all go at once: a byte each (every child holds the write end too) */
    assert_int_equal(write(go[1], start, N), N);
    close(go[1]);
    int compiled = 0, remote = 0, waited = 0;
    double slowest = 0;
    for (int i = 0; i < N; i++) {
        remote_result r = remote_child_finish(pids[i], fds[i], 240);
        assert_true(r.ran);
        assert_int_equal(r.status, ASYNCRT_SUCCESS);
        compiled += r.origin == ASYNCRT_ORIGIN_COMPILED;
        remote += r.origin == ASYNCRT_ORIGIN_REMOTE_CACHE;
        waited += r.stats.lease_waits > 0;
        slowest = r.compile_ms > slowest ? r.compile_ms : slowest;
        free(caches[i]);
    }
    close(go[0]);
    print_message("herd: %d compiled, %d from the remote (%d waited for the lease), slowest %.0f ms\n", compiled,
                  remote, waited, slowest);
    assert_int_equal(compiled, 1);
    assert_int_equal(remote, N - 1);
    char **keys;
    size_t leases = redis_keys(&server, "asyncrt:l:*", &keys);
    redis_keys_free(keys, leases);
    assert_int_equal(leases, 0); /* given back */
    redis_stop(&server);
}

int main(void)
{
    if (!redis_server_program()) {
        printf("SKIP: no redis-server (Debian: redis-server; tools/setup.sh installs it)\n");
        return ASYNCRT_TEST_SKIP;
    }
    g_dir = test_make_temp_dir("asyncrt-remote-fleet");
    g_key = make_key_file(g_dir, "fleet.key");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_shards),
        cmocka_unit_test(test_thundering_herd),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    test_remove_tree(g_dir);
    free(g_dir), free(g_key);
    return failed;
}
