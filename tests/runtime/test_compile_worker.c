/* The compile worker asyncrt_build_batch runs for cache misses (issue 23,
 * items 1 and 5): it gets every compile option and answers only for the
 * parent's cache key; its failure is never the batch's answer; it runs only
 * with a usable disk cache, and only from a file and folders nobody else
 * can write (refused once at ASYNCRT_LOG=1, the batch then compiles here);
 * it writes into the directory its parent opened, never reopened by name.
 * ctest names the built worker in ASYNCRT_COMPILE_WORKER. */
#define _GNU_SOURCE /* memmem, chown */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_io.h"
#include "worker_client.h"
#include "worker_process.h"
#include "context.h"
#include "test_support.h"

typedef struct fixture {
    char *root;         /* this test's folder: caches, include dirs, worker copies */
    char *cache;        /* <root>/cache */
    const char *worker; /* the built worker */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->worker = getenv("ASYNCRT_COMPILE_WORKER");
    if (!f->worker || access(f->worker, X_OK) != 0) fail_msg("ASYNCRT_COMPILE_WORKER must name the built worker");
    f->root = test_make_temp_dir("asyncrt-worker");
    f->cache = asyncrt__format("%s/cache", f->root);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    setenv("ASYNCRT_COMPILE_WORKER", f->worker, 1);
    test_remove_tree(f->root);
    free(f->root);
    free(f->cache);
    free(f);
    return 0;
}

static char *write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
    char *path = asyncrt__format("%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
    return path;
}

/* A copy of the built worker at dir/name, with `mode`. */
static char *copy_worker(const fixture *f, const char *dir, mode_t mode)
{
    char *path = asyncrt__format("%s/asyncrt-compile-worker", dir);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", f->worker, path);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

/* The cache directory opened and checked as a batch hands it to its workers. */
static int open_cache(const char *dir)
{
    uint8_t mac_key[32];
    char why[512];
    int fd = asyncrt__dir_open_trusted(dir, false, mac_key, why, sizeof why);
    if (fd < 0) fail_msg("%s", why);
    return fd;
}

static asyncrt_context *new_context(const char *cache, int log_level)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    asyncrt_context_set_log_level(ctx, log_level);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, cache));
    return ctx;
}

/* A batch of `n` distinct kernels (seeded, so each test misses), `head`
 * before each, that must all succeed; returns the log. */
static char *run_batch(asyncrt_context *ctx, const asyncrt_compile_options *o, int seed, int n, const char *head,
                       const char *body)
{
    char *src[8];
    asyncrt_build_request reqs[8];
    for (int i = 0; i < n; i++) {
        src[i] = asyncrt__format("%s\nextern \"C\" __global__ void k%d(int *x) { %s x[1] = %d; }\n", head,
                                 seed + i, body, seed + i);
        reqs[i] = (asyncrt_build_request){.source_name = "w.cu", .source = src[i], .opts = o};
    }
    test_capture_begin();
    asyncrt_status s = asyncrt_build_batch(ctx, reqs, (size_t)n, (unsigned)n, false);
    char *log = test_capture_end();
    if (s != ASYNCRT_SUCCESS) fail_msg("batch: %s\n%s", asyncrt_context_last_error(ctx), log);
    for (int i = 0; i < n; i++) {
        assert_int_equal(reqs[i].status, ASYNCRT_SUCCESS);
        char name[16];
        snprintf(name, sizeof name, "k%d", seed + i);
        size_t size;
        const void *image = asyncrt_program_image(reqs[i].program, &size);
        assert_non_null(memmem(image, size, name, strlen(name))); /* its own kernel */
        free(src[i]);
    }
    asyncrt_build_batch_release(reqs, (size_t)n);
    return log;
}

static void assert_logged(const char *log, const char *needle, int times)
{
    int found = 0;
    for (const char *p = log; (p = strstr(p, needle)); p++) found++;
    if (found != times) fail_msg("\"%s\" is in the log %d times, expected %d:\n%s", needle, found, times, log);
}

/* ---- the request: every field, and the key ------------------------------ */

static const char *k_template =
    "#include <my.h>\n#include <extra.h>\n"
    "template <int N> __global__ void t(int *x) { x[0] = N + MY + EXTRA + FROM_D; }\n";

/* Every asyncrt_compile_options field set; the worker computes the same
 * key, so its entry is the one this process then finds. */
static void a_worker_gets_every_option_and_the_same_key(void **state)
{
    fixture *f = *state;
    char *inc = asyncrt__format("%s/inc", f->root);
    assert_int_equal(mkdir(inc, 0700), 0);
    free(write_file(inc, "extra.h", "#define EXTRA 5\n", 0600));
    const asyncrt_header headers[] = {{"my.h", "#define MY 3\n"}};
    const char *includes[] = {inc}, *defines[] = {"FROM_D=7"}, *options[] = {"-lineinfo"}, *names[] = {"t<2>"};
    asyncrt_compile_options o = {.size = sizeof o,
                                 .arch = "sm_80", .std = "c++20", .headers = headers, .header_count = 1,
                                 .include_dirs = includes, .include_dir_count = 1,
                                 .defines = defines, .define_count = 1, .options = options, .option_count = 1,
                                 .name_expressions = names, .name_expression_count = 1,
                                 .no_std_headers = true, .no_default_device = true};
    asyncrt_context *ctx = new_context(f->cache, 0);
    asyncrt_program *p = NULL;
    uint8_t key[32];
    assert_int_equal(asyncrt__program_lookup(ctx, "t.cu", k_template, &o, &p, key, NULL), ASYNCRT_ERROR_NOT_FOUND);

    /* One field differs from what the key was computed with: the worker
     * says so and compiles nothing. */
    asyncrt_compile_options changed[4] = {o, o, o, o};
    changed[0].no_std_headers = false;
    changed[1].no_default_device = false;
    changed[2].std = NULL;
    changed[3].name_expression_count = 0;
    int fd = open_cache(f->cache);
    for (int i = 0; i < 4; i++) {
        char *message = NULL;
        assert_int_equal(asyncrt__compile_in_worker(f->worker, fd, false, f->cache, "t.cu", k_template, &changed[i],
                                                   "sm_80", key, &message),
                         ASYNCRT_ERROR_IO);
        if (!strstr(message, "computed the cache key")) fail_msg("field %d: %s", i, message);
        free(message);
    }
    assert_int_equal(asyncrt__program_lookup(ctx, "t.cu", k_template, &o, &p, key, NULL), ASYNCRT_ERROR_NOT_FOUND);

    char *message = NULL;
    asyncrt_status s = asyncrt__compile_in_worker(f->worker, fd, false, f->cache, "t.cu", k_template, &o, "sm_80", key,
                                                 &message);
    close(fd);
    if (s != ASYNCRT_SUCCESS) fail_msg("worker: %s: %s", asyncrt_status_string(s), message ? message : "");
    /* What the worker stored is what this process looks up. */
    uint8_t again[32];
    assert_ok(ctx, asyncrt__program_lookup(ctx, "t.cu", k_template, &o, &p, again, NULL));
    assert_memory_equal(key, again, 32);
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_DISK_CACHE);
    assert_non_null(asyncrt_program_lowered_name(p, "t<2>"));
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    free(inc);
}

/* The entries and manifests in dir. */
static int files_in(const char *dir)
{
    char *cmd = asyncrt__format("find '%s' -maxdepth 1 -type f '(' -name '*.bin' -o -name '*.mf' ')' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    assert_int_equal(fscanf(p, "%d", &n), 1);
    pclose(p);
    free(cmd);
    return n;
}

/* The worker compiles into the directory the parent opened, not whatever
 * has its name by then (issue 33): here the directory is moved after the
 * parent opened it, and another, as trusted, made at its name. The worker
 * once reopened the name: its entry went to the newcomer, and the parent's
 * directory, which it then looks in, missed. A directory the worker's own
 * check refuses is refused there too, said. */
static void a_worker_uses_the_parents_descriptor_not_the_name(void **state)
{
    fixture *f = *state;
    const char *src = "extern \"C\" __global__ void d(int *x) { x[0] = 33; }\n";
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_80"};
    int fd = open_cache(f->cache);
    char *moved = asyncrt__format("%s/moved", f->root);
    assert_int_equal(rename(f->cache, moved), 0);
    assert_int_equal(mkdir(f->cache, 0700), 0);
    asyncrt_context *ctx = new_context(moved, 0);
    asyncrt_program *p = NULL;
    uint8_t key[32];
    assert_int_equal(asyncrt__program_lookup(ctx, "d.cu", src, &o, &p, key, NULL), ASYNCRT_ERROR_NOT_FOUND);
    char *message = NULL;
    asyncrt_status s = asyncrt__compile_in_worker(f->worker, fd, false, f->cache, "d.cu", src, &o, "sm_80", key,
                                                 &message);
    if (s != ASYNCRT_SUCCESS) fail_msg("worker: %s: %s", asyncrt_status_string(s), message ? message : "");
    assert_int_equal(files_in(f->cache), 0);
    assert_int_equal(files_in(moved), 2); /* the entry and its manifest */
    assert_ok(ctx, asyncrt__program_lookup(ctx, "d.cu", src, &o, &p, key, NULL));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_DISK_CACHE);
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);

    assert_int_equal(fchmod(fd, 0777), 0); /* now one the worker must refuse */
    s = asyncrt__compile_in_worker(f->worker, fd, false, f->cache, "d.cu", src, &o, "sm_80", key, &message);
    assert_int_equal(s, ASYNCRT_ERROR_IO);
    assert_non_null(strstr(message, "the cache directory handed over: "));
    assert_non_null(strstr(message, "has mode 0777: writable by others"));
    free(message);
    close(fd);
    free(moved);
}

/* Issue 23's case: no_std_headers and the user's own <cstdint> through an
 * NVRTC -I option. The worker once compiled it with the built-in <cstdint>. */
static void no_std_headers_and_a_user_cstdint_compile_in_workers(void **state)
{
    fixture *f = *state;
    char *inc = asyncrt__format("%s/std", f->root);
    assert_int_equal(mkdir(inc, 0700), 0);
    free(write_file(inc, "cstdint", "#pragma once\ntypedef int my_marker_t;\n", 0600));
    char *option = asyncrt__format("-I%s", inc);
    const char *options[] = {option};
    asyncrt_compile_options o = {.size = sizeof o,
                                 .arch = "sm_80", .options = options, .option_count = 1, .no_std_headers = true};
    asyncrt_context *ctx = new_context(f->cache, 2);
    char *log = run_batch(ctx, &o, 300, 3, "#include <cstdint>", "my_marker_t m = 1; x[0] = m;");
    assert_logged(log, "3 cache misses go to worker processes", 1);
    assert_logged(log, "compile worker", 0); /* no worker failed */
    free(log);
    asyncrt_context_destroy(ctx);
    free(option);
    free(inc);
}

/* A worker's failure is not the answer: this process compiles it again. */
static void a_failing_worker_is_not_the_answer(void **state)
{
    fixture *f = *state;
    char *status = asyncrt__format("#!/bin/sh\ncat >/dev/null\nprintf 'status %d\\nfrom the fake worker'\n",
                                   (int)ASYNCRT_ERROR_COMPILE);
    char *fake = write_file(f->root, "fake-worker", status, 0755);
    setenv("ASYNCRT_COMPILE_WORKER", fake, 1);
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_80"};
    asyncrt_context *ctx = new_context(f->cache, 2);
    char *log = run_batch(ctx, &o, 400, 3, "", "");
    assert_logged(log, "from the fake worker; compiling it in this process", 3);
    free(log);
    asyncrt_context_destroy(ctx);
    free(fake);
    free(status);
}

/* A worker that cannot start: one warning at level 1 for the context, not one
 * per miss or per batch; the batch compiles here. */
static void a_worker_that_cannot_start_is_reported_once(void **state)
{
    fixture *f = *state;
    char *broken = write_file(f->root, "broken-worker", "#!/nonexistent/interpreter\n", 0755);
    setenv("ASYNCRT_COMPILE_WORKER", broken, 1);
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_80"};
    asyncrt_context *ctx = new_context(f->cache, 1);
    char *first = run_batch(ctx, &o, 450, 3, "", ""), *second = run_batch(ctx, &o, 453, 2, "", "");
    assert_logged(first, "warning: compile worker", 1);
    assert_logged(first, "could not be started", 1);
    assert_logged(second, "compile worker", 0);
    free(first);
    free(second);
    asyncrt_context_destroy(ctx);
    free(broken);
}

/* ---- which worker runs -------------------------------------------------- */

/* Refused: nothing runs, one warning at level 1 for the context, and the
 * batch compiles here. */
static void assert_refused(const fixture *f, const char *worker, const char *why)
{
    setenv("ASYNCRT_COMPILE_WORKER", worker, 1);
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_80"};
    asyncrt_context *ctx = new_context(f->cache, 1);
    static int seed = 500;
    char *first = run_batch(ctx, &o, seed, 2, "", ""), *second = run_batch(ctx, &o, seed + 2, 2, "", "");
    seed += 4;
    assert_logged(first, "refused", 1);
    assert_logged(first, why, 1);
    assert_logged(second, "refused", 0); /* once */
    free(first);
    free(second);
    asyncrt_context_destroy(ctx);
    /* At level 2, that no worker ran shows. */
    ctx = new_context(f->cache, 2);
    char *log = run_batch(ctx, &o, seed, 2, "", "");
    seed += 2;
    assert_logged(log, "go to worker processes", 0);
    free(log);
    asyncrt_context_destroy(ctx);
}

static void a_worker_others_can_write_is_refused(void **state)
{
    fixture *f = *state;
    char *own = asyncrt__format("%s/own", f->root), *open_dir = asyncrt__format("%s/open", f->root);
    assert_int_equal(mkdir(own, 0755), 0);
    assert_int_equal(mkdir(open_dir, 0700), 0);
    assert_int_equal(chmod(open_dir, 01777), 0); /* sticky does not save the worker's own folder */
    char *good = copy_worker(f, own, 0755), *in_open = copy_worker(f, open_dir, 0755);

    /* The same file is fine when nothing about it is writable by others (the
     * folders above it include /tmp: world-writable, sticky, accepted). */
    setenv("ASYNCRT_COMPILE_WORKER", good, 1);
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_80"};
    asyncrt_context *ctx = new_context(f->cache, 2);
    char *log = run_batch(ctx, &o, 600, 2, "", "");
    assert_logged(log, "2 cache misses go to worker processes", 1);
    assert_logged(log, "compile worker", 0);
    free(log);
    asyncrt_context_destroy(ctx);

    assert_int_equal(chmod(good, 0775), 0);
    assert_refused(f, good, "writable by its group");
    assert_int_equal(chmod(good, 0755), 0);
    assert_int_equal(chmod(own, 0757), 0);
    assert_refused(f, good, "writable by others");
    assert_int_equal(chmod(own, 0755), 0);
    assert_refused(f, in_open, "writable by others");
    if (geteuid() == 0) { /* another owner, where the test can make one */
        assert_int_equal(chown(good, 4242, 0), 0);
        assert_refused(f, good, "owned by uid 4242");
    }
    char *missing = asyncrt__format("%s/nothing-here", f->root);
    assert_refused(f, missing, "No such file");
    char *not_executable = write_file(f->root, "plain", "#!/bin/sh\n", 0644);
    assert_refused(f, not_executable, "not executable");
    free(not_executable);
    free(missing);
    free(good);
    free(in_open);
    free(own);
    free(open_dir);
}

/* No workers without a usable cache: they hand results over through it, so
 * each miss would be compiled twice. */
static void no_workers_without_a_usable_cache(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdir(f->cache, 0700), 0);
    assert_int_equal(chmod(f->cache, 0777), 0);
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_80"};
    asyncrt_context *ctx = new_context(f->cache, 2);
    char *log = run_batch(ctx, &o, 700, 3, "", "");
    assert_logged(log, "no disk cache", 1);
    assert_logged(log, "go to worker processes", 0);
    assert_logged(log, "NVRTC compiled", 3); /* each once, here */
    free(log);
    asyncrt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_worker_gets_every_option_and_the_same_key, setup, teardown),
        cmocka_unit_test_setup_teardown(a_worker_uses_the_parents_descriptor_not_the_name, setup, teardown),
        cmocka_unit_test_setup_teardown(no_std_headers_and_a_user_cstdint_compile_in_workers, setup, teardown),
        cmocka_unit_test_setup_teardown(a_failing_worker_is_not_the_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(a_worker_that_cannot_start_is_reported_once, setup, teardown),
        cmocka_unit_test_setup_teardown(a_worker_others_can_write_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(no_workers_without_a_usable_cache, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
