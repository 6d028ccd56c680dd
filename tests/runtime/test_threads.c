/* One context, many threads: compiles, cache lookups and per-thread last
 * errors (run under ThreadSanitizer by the CI's TSan job). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

enum { THREADS = 8, ROUNDS = 3 };

static const char *k_shared = "extern \"C\" __global__ void shared_k(int *x) { x[threadIdx.x] += 1; }\n";

typedef struct worker {
    asyncrt_context *ctx;
    int id;
    int compiled_shared;   /* how often this thread's shared compile ran NVRTC */
    char failure[256];     /* empty when every check passed */
} worker;

#define CHECK(w, cond, ...)                                                        \
    do {                                                                           \
        if (!(cond) && !(w)->failure[0]) snprintf((w)->failure, sizeof (w)->failure, __VA_ARGS__); \
    } while (0)

static void *work(void *arg)
{
    worker *w = arg;
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    for (int round = 0; round < ROUNDS; round++) {
        /* Everyone's: NVRTC should run once in the whole process. */
        asyncrt_program *p = NULL;
        asyncrt_status s = asyncrt_program_compile(w->ctx, "shared.cu", k_shared, &o, &p);
        CHECK(w, s == ASYNCRT_SUCCESS, "shared compile: %s", asyncrt_context_last_error(w->ctx));
        if (p && asyncrt_program_origin_of(p) == ASYNCRT_ORIGIN_COMPILED) w->compiled_shared++;
        asyncrt_program_destroy(p);

        /* This thread's own kernel: its image names it. */
        char src[256], name[32];
        snprintf(name, sizeof name, "own_%d", w->id);
        snprintf(src, sizeof src, "extern \"C\" __global__ void %s(int *x) { x[0] = %d; }\n", name, w->id);
        asyncrt_compile_options ptx = {.size = sizeof ptx, .arch = "compute_80"};
        s = asyncrt_program_compile(w->ctx, "own.cu", src, &ptx, &p);
        CHECK(w, s == ASYNCRT_SUCCESS, "own compile: %s", asyncrt_context_last_error(w->ctx));
        size_t size = 0;
        CHECK(w, p && strstr(asyncrt_program_image(p, &size), name), "thread %d got another's image", w->id);
        asyncrt_program_destroy(p);

        /* A failure whose message names this thread only. */
        char bad[256], missing[32];
        snprintf(missing, sizeof missing, "missing_%d_%d", w->id, round);
        snprintf(bad, sizeof bad, "extern \"C\" __global__ void b(int *x) { x[0] = %s; }\n", missing);
        s = asyncrt_program_compile(w->ctx, "bad.cu", bad, &o, &p);
        CHECK(w, s == ASYNCRT_ERROR_COMPILE && !p, "bad compile returned %s", asyncrt_status_string(s));
        const char *msg = asyncrt_context_last_error(w->ctx);
        CHECK(w, strstr(msg, missing) != NULL, "thread %d's last error is not its own: %.120s", w->id, msg);
    }
    return NULL;
}

static void threads_compile_on_one_context(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("asyncrt-threads");
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    worker w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.ctx = ctx, .id = i};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    int compiled = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        if (w[i].failure[0]) fail_msg("thread %d: %s", i, w[i].failure);
        compiled += w[i].compiled_shared;
    }
    assert_int_equal(compiled, 1);
    /* This thread never failed: the others' messages are not its own. */
    assert_string_equal(asyncrt_context_last_error(ctx), "");
    asyncrt_context_destroy(ctx);
    test_remove_tree(dir);
    free(dir);
}

/* Two threads fail in turn; each still reads its own message afterwards. */
typedef struct turn {
    asyncrt_context *ctx;
    const char *arch;
    pthread_barrier_t *both_failed;
    char seen[128];
} turn;

static void *fail_then_read(void *arg)
{
    turn *t = arg;
    asyncrt_compile_options o = {.size = sizeof o, .arch = t->arch};
    asyncrt_program *p = NULL;
    asyncrt_program_compile(t->ctx, "k.cu", "", &o, &p);
    pthread_barrier_wait(t->both_failed);
    snprintf(t->seen, sizeof t->seen, "%s", asyncrt_context_last_error(t->ctx));
    return NULL;
}

static void last_error_is_per_thread(void **state)
{
    (void)state;
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    turn a = {ctx, "volta", &barrier, ""}, b = {ctx, "sm_91", &barrier, ""};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, fail_then_read, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, fail_then_read, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&barrier);
    assert_non_null(strstr(a.seen, "'volta' is malformed"));
    assert_non_null(strstr(b.seen, "sm_91 is not supported"));
    assert_string_equal(asyncrt_context_last_error(ctx), "");
    asyncrt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_compile_on_one_context),
        cmocka_unit_test(last_error_is_per_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
