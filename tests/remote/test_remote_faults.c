/* A remote cache that fails never fails a compile, and costs a bounded time
 * (issue 26): kill -9 of the server mid-run, a restart mid-run, a server that
 * accepts but never answers (the operation timeout), one whose connects hang
 * (the connect timeout: a listening socket on 127.0.0.1 with a full accept
 * queue; no other address is ever contacted), and one that is down. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test_support.h"

static char *g_dir, *g_key;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static char *source(int n)
{
    char *s = malloc(200);
    snprintf(s, 200, "extern \"C\" __global__ void k%d(float *x) { x[threadIdx.x] += %d.0f; }\n", n, n);
    return s;
}

/* What the two-step child reports. */
typedef struct steps {
    asyncrt_status first, second, third;
    asyncrt_program_origin origin_first, origin_second;
    double second_ms, third_ms;
    asyncrt_remote_cache_stats stats;
} steps;

static asyncrt_status compile_one(asyncrt_context *ctx, int n, asyncrt_program_origin *origin, double *ms)
{
    char *src = source(n);
    asyncrt_compile_options opts = {.size = sizeof opts, .arch = "sm_90"};
    asyncrt_program *p = NULL;
    double start = now_ms();
    asyncrt_status s = asyncrt_program_compile(ctx, "k.cu", src, &opts, &p);
    if (ms) *ms = now_ms() - start;
    if (origin && p) *origin = asyncrt_program_origin_of(p);
    asyncrt_program_destroy(p);
    free(src);
    return s;
}

/* A child compiles kernel 1, lets `between` happen to the server, then
 * compiles kernels 2 and 3. */
static steps compile_around(redis_server *server, bool restart)
{
    int ready[2], go[2], out[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(out), 0);
    char *cache = fresh_cache_dir(g_dir);
    pid_t pid = fork();
    if (pid == 0) {
        steps r = {0};
        asyncrt_context *ctx;
        char c = 'r';
        if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) _exit(3);
        asyncrt_context_set_cache_dir(ctx, cache);
        if (asyncrt_context_set_remote_cache(ctx, server->spec, g_key) != ASYNCRT_SUCCESS) _exit(4);
        r.first = compile_one(ctx, 1, &r.origin_first, NULL);
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) _exit(5);
        r.second = compile_one(ctx, 2, &r.origin_second, &r.second_ms);
        r.third = compile_one(ctx, 3, NULL, &r.third_ms);
        r.stats = (asyncrt_remote_cache_stats)ASYNCRT_REMOTE_CACHE_STATS_INIT;
        asyncrt_context_remote_cache_stats(ctx, &r.stats);
        asyncrt_context_destroy(ctx);
        exit(write(out[1], &r, sizeof r) == sizeof r ? 0 : 6); /* exit: LeakSanitizer checks it */
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    if (restart) assert_true(redis_restart(server));
    else redis_kill9(server);
    assert_int_equal(write(go[1], &c, 1), 1);
    steps r = {0};
    assert_int_equal(read(out[0], &r, sizeof r), (ssize_t)sizeof r);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(ready[0]), close(ready[1]), close(go[0]), close(go[1]), close(out[0]), close(out[1]);
    free(cache);
    return r;
}

static void test_kill9_mid_run(void **state)
{
    (void)state;
    redis_server server;
    assert_true(redis_start(&server, false));
    steps r = compile_around(&server, false);
    assert_int_equal(r.first, ASYNCRT_SUCCESS);
    assert_int_equal(r.origin_first, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(r.second, ASYNCRT_SUCCESS);
    assert_int_equal(r.origin_second, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(r.third, ASYNCRT_SUCCESS);
    assert_true(r.stats.errors >= 1);
    assert_false(r.stats.enabled); /* the reconnect failed: off for the rest of the process */
    assert_non_null(strstr(r.stats.state, "switched off for this process"));
    assert_true(r.stats.time_ms < 1000);
    redis_stop(&server);
}

static void test_restart_mid_run(void **state)
{
    (void)state;
    redis_server server;
    assert_true(redis_start(&server, false));
    steps r = compile_around(&server, true);
    assert_int_equal(r.second, ASYNCRT_SUCCESS);
    assert_int_equal(r.third, ASYNCRT_SUCCESS);
    assert_int_equal(r.stats.errors, 1); /* the old connection's end */
    assert_true(r.stats.enabled);         /* reconnected to the new server */
    assert_int_equal(r.stats.stores, 3);
    char **keys;
    size_t n = redis_keys(&server, "asyncrt:v:*", &keys);
    assert_int_equal(n, 2); /* kernels 2 and 3, on the restarted (empty) server */
    redis_keys_free(keys, n);
    redis_stop(&server);
}

/* A TCP listener on 127.0.0.1 that never accepts (backlog as given). */
static int listener(int backlog, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, backlog), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &n), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static remote_result compile_against(const char *spec, int n)
{
    char *cache = fresh_cache_dir(g_dir), *src = source(n);
    remote_run run = {.cache_dir = cache, .spec = spec, .key_file = g_key, .source_name = "k.cu", .source = src};
    remote_result r = remote_compile(&run);
    assert_true(r.ran);
    assert_int_equal(r.set_status, ASYNCRT_SUCCESS);
    assert_int_equal(r.status, ASYNCRT_SUCCESS);
    assert_int_equal(r.origin, ASYNCRT_ORIGIN_COMPILED);
    free(cache), free(src);
    return r;
}

/* Connects, then silence: one operation timeout, then off. */
static void test_server_never_answers(void **state)
{
    (void)state;
    int port, fd = listener(64, &port);
    char spec[200];
    snprintf(spec, sizeof spec, "redis://127.0.0.1:%d|connect-timeout=300|operation-timeout=300", port);
    remote_result r = compile_against(spec, 10);
    assert_int_equal(r.stats.errors, 1);
    assert_false(r.stats.enabled);
    assert_non_null(strstr(r.stats.state, "no answer within the operation timeout"));
    print_message("never answers: %.0f ms in the remote (operation timeout 300 ms), compile %.0f ms\n",
                  r.stats.time_ms, r.compile_ms);
    assert_true(r.stats.time_ms >= 250 && r.stats.time_ms < 600);
    close(fd);
}

/* The accept queue full: connects hang, as to an unroutable address. */
static void test_connect_hangs(void **state)
{
    (void)state;
    int port, fd = listener(0, &port);
    int filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = htons(port)};
    assert_int_equal(connect(filler, (struct sockaddr *)&a, sizeof a), 0);
    char spec[200];
    snprintf(spec, sizeof spec, "redis://127.0.0.1:%d|connect-timeout=200", port);
    remote_result r = compile_against(spec, 11);
    assert_int_equal(r.stats.errors, 1);
    assert_false(r.stats.enabled);
    assert_non_null(strstr(r.stats.state, "connect"));
    print_message("connect hangs: %.0f ms in the remote (connect timeout 200 ms), compile %.0f ms\n",
                  r.stats.time_ms, r.compile_ms);
    assert_true(r.stats.time_ms >= 150 && r.stats.time_ms < 500);
    close(filler), close(fd);
}

static void test_server_down(void **state)
{
    (void)state;
    int port, fd = listener(1, &port);
    close(fd); /* nothing listens there now */
    char spec[200];
    snprintf(spec, sizeof spec, "redis://127.0.0.1:%d", port);
    remote_result r = compile_against(spec, 12);
    assert_int_equal(r.stats.errors, 1);
    assert_false(r.stats.enabled);
    assert_true(r.stats.time_ms < 100);
}

int main(void)
{
    if (!redis_server_program()) {
        printf("SKIP: no redis-server (Debian: redis-server; tools/setup.sh installs it)\n");
        return ASYNCRT_TEST_SKIP;
    }
    g_dir = test_make_temp_dir("asyncrt-remote-faults");
    g_key = make_key_file(g_dir, "fleet.key");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9_mid_run),        cmocka_unit_test(test_restart_mid_run),
        cmocka_unit_test(test_server_never_answers), cmocka_unit_test(test_connect_hangs),
        cmocka_unit_test(test_server_down),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    test_remove_tree(g_dir);
    free(g_dir), free(g_key);
    return failed;
}
