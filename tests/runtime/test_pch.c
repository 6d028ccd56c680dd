/* Precompiled headers within a process (pch.h): a PCH never serves a header
 * that changed, on disk or in memory; the cache manifest of a compile that
 * used a PCH still names the headers the PCH held; auto mode makes no PCH
 * for a process's first compile nor for light kernels. CPU only (PTX for
 * compute_90): NVRTC runs here, no device is needed. */
#define _DEFAULT_SOURCE /* usleep */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context.h"
#include "pch.h"
#include "test_support.h"

typedef struct fixture {
    char *dir;     /* cache, include directory and TMPDIR */
    char *inc;     /* holds pch_dep.h */
    char *tmpdir;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_make_temp_dir("asyncrt-pch");
    f->inc = malloc(strlen(f->dir) + 8);
    sprintf(f->inc, "%s/inc", f->dir);
    assert_int_equal(mkdir(f->inc, 0700), 0);
    /* the PCH directories go under TMPDIR: a private one, to see them go */
    f->tmpdir = strdup("/tmp/asyncrt-pch-tmp-XXXXXX");
    assert_non_null(mkdtemp(f->tmpdir));
    setenv("TMPDIR", f->tmpdir, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unsetenv("TMPDIR");
    unsetenv("ASYNCRT_PCH");
    test_remove_tree(f->tmpdir);
    test_remove_tree(f->dir);
    free(f->tmpdir);
    free(f->inc);
    free(f->dir);
    free(f);
    return 0;
}

static void write_dep(const fixture *f, long value)
{
    char path[512];
    snprintf(path, sizeof path, "%s/pch_dep.h", f->inc);
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fprintf(file, "#pragma once\n#define DISK_VALUE %ld\n", value);
    fclose(file);
    usleep(50 * 1000); /* a file written within the compile's clock tick is never recorded */
}

static asyncrt_context *new_context(const fixture *f, const char *pch_mode)
{
    if (pch_mode) setenv("ASYNCRT_PCH", pch_mode, 1);
    else unsetenv("ASYNCRT_PCH");
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, f->dir));
    return ctx;
}

/* Compiles a kernel that stores DISK_VALUE + MEM_VALUE + `slot` (its
 * leading #includes: <cuda/ptx> (heavy), pch_dep.h from disk, mem.h from
 * memory), and asserts the PTX holds `expect`. Returns where it came from. */
static asyncrt_program_origin compile_expect(asyncrt_context *ctx, const fixture *f, int slot, const char *mem,
                                             long expect)
{
    char source[512];
    snprintf(source, sizeof source,
             "#include <cuda/ptx>\n#include <pch_dep.h>\n#include \"mem.h\"\n"
             "extern \"C\" __global__ void k%d(long *p) { p[%d] = DISK_VALUE + MEM_VALUE + %d; }\n",
             slot, slot, slot);
    const char *dirs[] = {f->inc};
    asyncrt_header header = {"mem.h", mem};
    asyncrt_compile_options o = {.arch = "compute_90", .include_dirs = dirs, .include_dir_count = 1,
                                 .headers = &header, .header_count = 1};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "pch_test.cu", source, &o, &p));
    size_t size = 0;
    const char *ptx = asyncrt_program_image(p, &size);
    char want[64];
    snprintf(want, sizeof want, "%ld;", expect);
    if (!strstr(ptx, want)) fail_msg("slot %d: the PTX lacks %s (a stale header?)", slot, want);
    asyncrt_program_origin origin = asyncrt_program_origin_of(p);
    asyncrt_program_destroy(p);
    return origin;
}

#define MEM_A "#define MEM_VALUE 1000\n"
#define MEM_B "#define MEM_VALUE 5000\n"

/* Two compiles share a PCH; a disk header in it is edited; both compile
 * again in the same process and must see the edit. */
static void test_changed_disk_header_is_never_served_from_a_pch(void **state)
{
    fixture *f = *state;
    write_dep(f, 300000);
    asyncrt_context *ctx = new_context(f, "1");
    assert_int_equal(compile_expect(ctx, f, 1, MEM_A, 301001), ASYNCRT_ORIGIN_COMPILED);
    assert_true(asyncrt__pch_file_count(ctx->pch) >= 1); /* the first compile made one */
    assert_int_equal(compile_expect(ctx, f, 2, MEM_A, 301002), ASYNCRT_ORIGIN_COMPILED);
    write_dep(f, 700000); /* same size, new content */
    assert_int_equal(compile_expect(ctx, f, 1, MEM_A, 701001), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_expect(ctx, f, 2, MEM_A, 701002), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_context_destroy(ctx);
}

/* The second compile took <cuda/ptx> and pch_dep.h from the PCH, so its trace
 * lists neither; its cache entry must still depend on them: another process
 * (context) without PCH, after the edit, misses and sees the new value. */
static void test_manifest_of_a_pch_compile_names_what_the_pch_held(void **state)
{
    fixture *f = *state;
    write_dep(f, 400000);
    asyncrt_context *ctx = new_context(f, "1");
    compile_expect(ctx, f, 1, MEM_A, 401001);
    compile_expect(ctx, f, 2, MEM_A, 401002); /* through the PCH */
    asyncrt_context_destroy(ctx);
    asyncrt_context *other = new_context(f, "0");
    assert_int_equal(compile_expect(other, f, 2, MEM_A, 401002), ASYNCRT_ORIGIN_DISK_CACHE);
    write_dep(f, 800000);
    assert_int_equal(compile_expect(other, f, 2, MEM_A, 801002), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_context_destroy(other);
}

/* An in-memory header's new content (which NVRTC's PCH alone would serve
 * stale) gets a PCH of its own. */
static void test_changed_memory_header_is_never_served_from_a_pch(void **state)
{
    fixture *f = *state;
    write_dep(f, 500000);
    asyncrt_context *ctx = new_context(f, "1");
    compile_expect(ctx, f, 1, MEM_A, 501001);
    compile_expect(ctx, f, 2, MEM_A, 501002);
    compile_expect(ctx, f, 3, MEM_B, 505003);
    compile_expect(ctx, f, 4, MEM_A, 501004);
    asyncrt_context_destroy(ctx);
}

/* Auto: nothing for a process's first compile; a PCH from the second compile
 * of a key whose first read many headers; never for a light kernel; off with
 * ASYNCRT_PCH=0. The context's directories go with it. */
static void test_auto_mode_and_cleanup(void **state)
{
    fixture *f = *state;
    write_dep(f, 600000);
    asyncrt_context *ctx = new_context(f, NULL);
    compile_expect(ctx, f, 1, MEM_A, 601001);
    assert_int_equal(asyncrt__pch_file_count(ctx->pch), 0);
    compile_expect(ctx, f, 2, MEM_A, 601002);
    assert_true(asyncrt__pch_file_count(ctx->pch) >= 1);
    for (int i = 0; i < 3; i++) { /* light: no includes */
        char source[128];
        snprintf(source, sizeof source, "extern \"C\" __global__ void light(int *p) { p[0] = %d; }\n", i);
        asyncrt_compile_options o = {.arch = "compute_90"};
        asyncrt_program *p = NULL;
        assert_ok(ctx, asyncrt_program_compile(ctx, "light.cu", source, &o, &p));
        asyncrt_program_destroy(p);
    }
    assert_int_equal(asyncrt__pch_file_count(ctx->pch), 1);
    asyncrt_context_destroy(ctx);
    char listing[600];
    snprintf(listing, sizeof listing, "test -z \"$(ls -A %s)\"", f->tmpdir);
    assert_int_equal(system(listing), 0); /* no directory left behind */

    ctx = new_context(f, "0");
    compile_expect(ctx, f, 3, MEM_A, 601003);
    compile_expect(ctx, f, 4, MEM_A, 601004);
    assert_int_equal(asyncrt__pch_file_count(ctx->pch), 0);
    asyncrt_context_destroy(ctx);
}

typedef struct thread_job {
    asyncrt_context *ctx;
    const fixture *f;
    int slot;
} thread_job;

static void *compile_two(void *arg)
{
    thread_job *j = arg;
    compile_expect(j->ctx, j->f, j->slot, MEM_A, 901000 + j->slot);
    compile_expect(j->ctx, j->f, j->slot + 10, MEM_A, 901010 + j->slot);
    return NULL;
}

/* Threads compiling through one context's PCH at once (ThreadSanitizer runs
 * this: label tsan), then an edit seen by all. */
static void test_threads_share_the_pch(void **state)
{
    fixture *f = *state;
    write_dep(f, 900000);
    asyncrt_context *ctx = new_context(f, "1");
    pthread_t threads[4];
    thread_job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (thread_job){ctx, f, i + 1};
        assert_int_equal(pthread_create(&threads[i], NULL, compile_two, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
    write_dep(f, 950000);
    compile_expect(ctx, f, 1, MEM_A, 951001);
    asyncrt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_changed_disk_header_is_never_served_from_a_pch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest_of_a_pch_compile_names_what_the_pch_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_memory_header_is_never_served_from_a_pch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auto_mode_and_cleanup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_share_the_pch, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
