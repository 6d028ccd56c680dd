#define _GNU_SOURCE /* realpath */
/* NVRTC is found at run time: the search order, the choice between majors,
 * and (one process per case, ASYNCRT_NVRTC_CASE) what a compile says when the
 * override names a missing file, a library lacking symbols, or the real one. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "target.h"
#include "nvrtc_facts.h"
#include "nvrtc_loader.h"
#include "test_support.h"

static void touch(const char *dir, const char *sub, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

static int find(const asyncrt_nvrtc_candidate *c, size_t n, const char *suffix)
{
    for (size_t i = 0; i < n; i++) {
        size_t a = strlen(c[i].path), b = strlen(suffix);
        if (a >= b && strcmp(c[i].path + a - b, suffix) == 0) return (int)i;
    }
    return -1;
}

static void search_order_is_documented_one(void **state)
{
    (void)state;
    char *root = test_make_temp_dir("nvrtc-search");
    char cuda_path[4096], cuda_home[4096], build[4096];
    snprintf(cuda_path, sizeof cuda_path, "%s/cp", root);
    snprintf(cuda_home, sizeof cuda_home, "%s/ch", root);
    snprintf(build, sizeof build, "%s/build/lib64", root);
    touch(cuda_path, "lib", "libnvrtc.so.13");
    touch(cuda_home, "lib64", "libnvrtc.so.12");
    touch(root, "build/lib64", "libnvrtc.so.13");
    asyncrt_nvrtc_search s = {NULL, cuda_path, cuda_home, build};
    asyncrt_nvrtc_candidate c[ASYNCRT_NVRTC_MAX_CANDIDATES];
    size_t n = asyncrt__nvrtc_candidates(&s, c, ASYNCRT_NVRTC_MAX_CANDIDATES);
    /* CUDA_PATH lib64 (13, 12), lib (13, 12), CUDA_HOME x4, build x2, sonames x2 */
    assert_int_equal(n, 12);
    assert_true(find(c, n, "cp/lib64/libnvrtc.so.13") == 0);
    assert_true(find(c, n, "cp/lib/libnvrtc.so.13") == 2);
    assert_true(find(c, n, "ch/lib64/libnvrtc.so.12") == 5);
    assert_true(find(c, n, "build/lib64/libnvrtc.so.13") == 8);
    assert_string_equal(c[10].path, "libnvrtc.so.13");
    assert_string_equal(c[11].path, "libnvrtc.so.12");
    assert_false(c[0].exists);
    assert_true(c[2].exists && c[5].exists && c[8].exists);
    assert_int_equal(c[2].major, 13);
    assert_int_equal(c[5].major, 12);

    char why[512];
    /* No driver: the first file found. */
    assert_int_equal(asyncrt__nvrtc_choose(c, n, 0, why, sizeof why), 2);
    assert_non_null(strstr(why, "$CUDA_PATH"));
    /* A CUDA 13 driver loads NVRTC 13's output: still the first. */
    assert_int_equal(asyncrt__nvrtc_choose(c, n, 13000, why, sizeof why), 2);
    /* A CUDA 12.8 driver cannot: the NVRTC 12 under CUDA_HOME wins, and why says so. */
    assert_int_equal(asyncrt__nvrtc_choose(c, n, 12080, why, sizeof why), 5);
    assert_non_null(strstr(why, "newer than the driver"));
    /* A CUDA 11 driver loads neither: the first, said plainly. */
    assert_int_equal(asyncrt__nvrtc_choose(c, n, 11080, why, sizeof why), 2);
    assert_non_null(strstr(why, "no NVRTC older than the driver"));

    /* The override is the only candidate, even when it is missing. */
    s.override_path = "/nonexistent/libnvrtc.so.13";
    n = asyncrt__nvrtc_candidates(&s, c, ASYNCRT_NVRTC_MAX_CANDIDATES);
    assert_int_equal(n, 1);
    assert_false(c[0].exists);
    assert_int_equal(asyncrt__nvrtc_choose(c, n, 0, why, sizeof why), -1);

    /* Nothing anywhere: only the sonames, tried through the dynamic loader. */
    asyncrt_nvrtc_search empty = {NULL, NULL, NULL, NULL};
    n = asyncrt__nvrtc_candidates(&empty, c, ASYNCRT_NVRTC_MAX_CANDIDATES);
    assert_int_equal(n, 2);
    assert_int_equal(asyncrt__nvrtc_choose(c, n, 0, why, sizeof why), 0);
    assert_non_null(strstr(why, "dynamic loader"));
    test_remove_tree(root);
    free(root);
}

/* memo_write then memo_read (two processes, one cache directory): once a
 * process has compiled, the next resolves archs and serves the same compile
 * from the disk cache without opening NVRTC. */
static void memo_case(const char *which)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_non_null(asyncrt_context_cache_dir(ctx));
    asyncrt_nvrtc_identity id;
    assert_true(asyncrt__nvrtc_identity_get(&id));
    asyncrt_nvrtc_facts facts;
    char msg[2048];
    assert_int_equal(asyncrt__nvrtc_facts_get(ctx, &facts, msg, sizeof msg),
                     ASYNCRT_SUCCESS);
    assert_true(facts.version >= 12000 && facts.arch_count > 0);
    asyncrt_compile_options o = {.arch = "sm_90"};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "memo.cu", "extern \"C\" __global__ void memo() {}", &o, &p));
    if (strcmp(which, "memo_write") == 0) {
        assert_false(facts.from_memo);
        asyncrt_program_destroy(p);
    } else {
        /* A disk-cache hit: served without NVRTC (checked below). */
        assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_DISK_CACHE);
        asyncrt_program_destroy(p);
        assert_true(facts.from_memo);
        asyncrt_arch a;
        assert_ok(ctx, asyncrt__arch_resolve(ctx, "sm_90", &a));
        assert_status(ctx, ASYNCRT_ERROR_UNSUPPORTED_ARCH, asyncrt__arch_resolve(ctx, "sm_12", &a));
#ifndef ASYNCRT_SANITIZE_LINKS_NVRTC /* sanitizer builds link NVRTC, see CMakeLists.txt */
        if (dlopen(id.path, RTLD_LAZY | RTLD_NOLOAD)) fail_msg("%s was opened for a cache hit", id.path);
#endif
    }
    asyncrt_context_destroy(ctx);
}

/* The case ctest chose through the environment; without one, the real NVRTC. */
static void override_case(void **state)
{
    (void)state;
    const char *which = getenv("ASYNCRT_NVRTC_CASE");
    const char *path = getenv("ASYNCRT_NVRTC");
    if (which && strncmp(which, "memo_", 5) == 0) {
        memo_case(which);
        return;
    }
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    asyncrt_context_set_cache_dir(ctx, NULL);
    asyncrt_compile_options o = {.arch = "sm_90"};
    asyncrt_program *p = NULL;
    asyncrt_status s = asyncrt_program_compile(ctx, "k.cu", "extern \"C\" __global__ void k() {}", &o, &p);
    const char *msg = asyncrt_context_last_error(ctx);
    asyncrt_nvrtc_identity id;
    bool found = asyncrt__nvrtc_identity_get(&id);
    if (which && strcmp(which, "ok") != 0) {
        assert_status(ctx, ASYNCRT_ERROR_NO_NVRTC, s);
        assert_null(p);
        if (!strstr(msg, path)) fail_msg("'%s' does not name %s", msg, path);
        if (strcmp(which, "missing") == 0) {
            assert_non_null(strstr(msg, "$ASYNCRT_NVRTC"));
            assert_false(found);
        } else {
            if (!strstr(msg, "lacks nvrtcGetErrorString")) fail_msg("'%s' names no missing symbol", msg);
            assert_true(found); /* the file is there; it is just not NVRTC */
        }
        assert_int_equal(asyncrt_nvrtc_version(), 0);
    } else {
        assert_ok(ctx, s);
        assert_true(asyncrt_nvrtc_version() >= 12000);
        if (path && *path) {
            char real[4096];
            assert_non_null(realpath(path, real));
            assert_true(found);
            assert_string_equal(id.path, real);
            assert_true(id.size > 1000000);
        }
        asyncrt_program_destroy(p);
    }
    asyncrt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(search_order_is_documented_one),
                                       cmocka_unit_test(override_case)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
