/* The asynchronous device open, speculative "auto" targets and module loads
 * from many threads, against fake_device_libcuda (no GPU needed): the device
 * open is held at a gate, so "still opening" is a fact, not a race. */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "context.h"
#include "context_internal.h"
#include "test_support.h"

static void (*gate_hold)(void);
static void (*gate_release)(void);
static int (*module_loads)(void);

static const char *k_source = "extern \"C\" __global__ void spec(float *x) { x[threadIdx.x] = 3.0f; }\n";

/* The hint is a side file of the cache (cache.h): read and written here
 * through the cache's own helpers, as the library does. */
static char *hint_name(void)
{
    char host[64] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/') *c = '_';
    return asyncrt__format("target-%s-device-0", host);
}

static void write_hint(const char *dir, const char *text)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    char *name = hint_name();
    assert_true(asyncrt__cache_write_side(ctx->cache, name, text));
    free(name);
    asyncrt_context_destroy(ctx);
}

static char *read_hint(const char *dir)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    char *name = hint_name(), *text = asyncrt__cache_read_side(ctx->cache, name);
    free(name);
    asyncrt_context_destroy(ctx);
    return text ? text : calloc(1, 1);
}

static int cache_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".bin") && !strstr(e->d_name, ".tmp");
    if (d) closedir(d);
    return n;
}

/* Releases the gate once `want` entries exist (the speculative compile has
 * stored its result while the device was still held), or after `patience_ms`. */
typedef struct releaser {
    const char *dir;
    int want, patience_ms;
    int saw_entries; /* what it found when it let the device open */
} releaser;

static void *release_when_compiled(void *arg)
{
    releaser *r = arg;
    for (int waited = 0; waited < r->patience_ms; waited += 5) {
        if (cache_entries(r->dir) >= r->want) break;
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    r->saw_entries = cache_entries(r->dir);
    gate_release();
    return NULL;
}

typedef test_cache_fixture fixture;

/* Opens the device asynchronously behind the gate and compiles for auto. */
static asyncrt_program *compile_source_while_opening(fixture *f, const char *source, int want_entries,
                                                    int patience_ms, releaser *r)
{
    *r = (releaser){.dir = f->dir, .want = want_entries, .patience_ms = patience_ms};
    gate_hold();
    assert_ok(f->ctx, asyncrt_context_open_device_async(f->ctx, 0));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, release_when_compiled, r), 0);
    asyncrt_program *p = NULL;
    assert_ok(f->ctx, asyncrt_program_compile(f->ctx, "spec.cu", source, NULL, &p));
    pthread_join(t, NULL);
    assert_ok(f->ctx, asyncrt_context_wait_device(f->ctx));
    return p;
}

static asyncrt_program *compile_while_opening(fixture *f, int want_entries, int patience_ms, releaser *r)
{
    return compile_source_while_opening(f, k_source, want_entries, patience_ms, r);
}

static void right_guess_compiles_while_the_device_opens(void **state)
{
    fixture *f = *state;
    write_hint(f->dir, "sm_90\n");
    releaser r;
    asyncrt_program *p = compile_while_opening(f, 1, 60000, &r);
    assert_int_equal(r.saw_entries, 1); /* compiled before the device was open */
    assert_string_equal(asyncrt_program_arch(p), "sm_90");
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_program_destroy(p);
    assert_int_equal(cache_entries(f->dir), 1);
}

/* A right guess is still "auto": a kernel that needs sm_90a (setmaxnreg)
 * gets the retry an auto compile gets, not ptxas's error for sm_90. */
static void right_guess_keeps_the_auto_retry(void **state)
{
    fixture *f = *state;
    write_hint(f->dir, "sm_90\n");
    releaser r;
    asyncrt_program *p = compile_source_while_opening(
        f, "extern \"C\" __global__ void k() { asm volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\"); }\n", 0, 300,
        &r);
    assert_string_equal(asyncrt_program_arch(p), "sm_90a");
    asyncrt_program_destroy(p);
}

static void wrong_guess_recompiles_for_the_real_target(void **state)
{
    fixture *f = *state;
    write_hint(f->dir, "sm_80\n"); /* the fake device is compute capability 9.0 */
    releaser r;
    asyncrt_program *p = compile_while_opening(f, 1, 60000, &r);
    assert_int_equal(r.saw_entries, 1);                  /* the sm_80 guess was compiled... */
    assert_string_equal(asyncrt_program_arch(p), "sm_90"); /* ...and not returned */
    size_t size;
    assert_memory_equal(asyncrt_program_image(p, &size), "\177ELF", 4);
    asyncrt_program_destroy(p);
    assert_int_equal(cache_entries(f->dir), 2);
    char *hint = read_hint(f->dir);
    assert_string_equal(hint, "sm_90\n"); /* the next start guesses right */
    free(hint);
}

static void malformed_guess_is_ignored(void **state)
{
    fixture *f = *state;
    write_hint(f->dir, "../../sm_90; rm -rf\n");
    releaser r;
    asyncrt_program *p = compile_while_opening(f, 1, 300, &r);
    assert_int_equal(r.saw_entries, 0); /* nothing compiled before the device was known */
    assert_string_equal(asyncrt_program_arch(p), "sm_90");
    asyncrt_program_destroy(p);
    char *hint = read_hint(f->dir);
    assert_string_equal(hint, "sm_90\n");
    free(hint);
}

static void no_guess_waits_for_the_device(void **state)
{
    fixture *f = *state;
    releaser r;
    asyncrt_program *p = compile_while_opening(f, 1, 300, &r);
    assert_int_equal(r.saw_entries, 0);
    assert_string_equal(asyncrt_program_arch(p), "sm_90");
    asyncrt_program_destroy(p);
}

/* A failed asynchronous open is the answer of every call that needs the
 * device, with the open's own message; a later open_device tries again. */
static void failed_async_open_is_reported_then_retried(void **state)
{
    fixture *f = *state;
    asyncrt_context *ctx = f->ctx;
    gate_hold();
    assert_ok(ctx, asyncrt_context_open_device_async(ctx, 5)); /* the fake driver has one device */
    asyncrt_program *p = NULL;
    gate_release();
    assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_program_compile(ctx, "spec.cu", k_source, NULL, &p));
    assert_null(p);
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "device 5 does not exist"));
    assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_context_wait_device(ctx));
    asyncrt_build_request req = {.source_name = "spec.cu", .source = k_source,
                                 .opts = &(asyncrt_compile_options){.size = sizeof(asyncrt_compile_options),
                                                                    .arch = "sm_90"}};
    assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_build_batch(ctx, &req, 1, 1, true));
    assert_non_null(strstr(req.message, "device 5 does not exist"));
    asyncrt_build_batch_release(&req, 1);
    assert_null(asyncrt_context_device(ctx));
    assert_ok(ctx, asyncrt_context_open_device(ctx, 0));
    assert_non_null(asyncrt_context_device(ctx));
    const asyncrt_driver *drv = NULL; /* the table tools call the driver through (context_internal.h) */
    assert_ok(ctx, asyncrt__context_driver(ctx, &drv));
    assert_ptr_equal(drv, ctx->drv);
    assert_ok(ctx, asyncrt_program_compile(ctx, "spec.cu", k_source, NULL, &p));
    assert_string_equal(asyncrt_program_arch(p), "sm_90");
    asyncrt_program_destroy(p);
}

/* Loads from many threads at once: each thread makes the context current. */
static void batch_loads_from_many_threads(void **state)
{
    fixture *f = *state;
    assert_ok(f->ctx, asyncrt_context_open_device_async(f->ctx, 0)); /* the gate is open */
    enum { N = 8 };
    char src[N][160];
    asyncrt_build_request reqs[N + 2];
    for (int i = 0; i < N; i++) {
        snprintf(src[i], sizeof src[i], "extern \"C\" __global__ void m%d(int *x) { x[0] = %d; }\n", i, i);
        reqs[i] = (asyncrt_build_request){.source_name = "m.cu", .source = src[i]};
    }
    reqs[N] = reqs[0]; /* duplicates: compiled once, loaded twice */
    reqs[N + 1] = reqs[1];
    int before = module_loads();
    assert_ok(f->ctx, asyncrt_build_batch(f->ctx, reqs, N + 2, 4, true));
    assert_int_equal(module_loads() - before, N + 2);
    for (int i = 0; i < N + 2; i++) {
        assert_non_null(reqs[i].module);
        assert_string_equal(asyncrt_program_arch(reqs[i].program), "sm_90");
        asyncrt_kernel *k;
        char name[8];
        snprintf(name, sizeof name, "m%d", i < N ? i : i - N);
        assert_ok(f->ctx, asyncrt_module_get_kernel(reqs[i].module, name, &k));
        asyncrt_module_destroy(reqs[i].module);
    }
    assert_ptr_not_equal(reqs[0].module, reqs[N].module);
    asyncrt_build_batch_release(reqs, N + 2);
}

int main(void)
{
    const char *lib = getenv("ASYNCRT_LIBCUDA");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        fprintf(stderr, "test_threads_device: set ASYNCRT_LIBCUDA to fake_device_libcuda\n");
        return 1;
    }
    *(void **)&gate_hold = dlsym(h, "fake_gate_hold");
    *(void **)&gate_release = dlsym(h, "fake_gate_release");
    *(void **)&module_loads = dlsym(h, "fake_module_loads");
    if (!gate_hold || !gate_release || !module_loads) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(right_guess_compiles_while_the_device_opens, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(right_guess_keeps_the_auto_retry, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(wrong_guess_recompiles_for_the_real_target, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(malformed_guess_is_ignored, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(no_guess_waits_for_the_device, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(failed_async_open_is_reported_then_retried, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(batch_loads_from_many_threads, test_setup_cache_context, test_teardown_cache_context),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    dlclose(h);
    return rc;
}
