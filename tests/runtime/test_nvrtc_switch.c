/* Switching NVRTC (issue 32): one cache directory, compiles by two NVRTCs in
 * turn, each in its own process (a process chooses its NVRTC once):
 *   A (the toolkit's) compiles, then hits;
 *   B compiles once (its key is another), then hits;
 *   A hits again (B's entry took nothing of A's).
 * B is the set-up's wheel (.pip/, NVRTC 13.1) where it is installed, else a
 * copy of A's library at another path and mtime: the same code under
 * another identity, which is what the key follows (path, size, mtime).
 * The PCH key (pch.h: the directory a compile's precompiled headers live in)
 * differs as well, so a PCH made by one NVRTC is never offered to another.
 * Within a process that could not happen anyway (one NVRTC per process, and
 * NVRTC deletes its PCH files at exit); the key makes it hold by
 * construction too. */
#define _GNU_SOURCE /* asprintf, setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile_job.h"
#include "nvrtc_loader.h"
#include "test_support.h"

static const char *k_kernel = "extern \"C\" __global__ void k(int *x) { x[0] = 7; }\n";

static void hex(const uint8_t *bytes, char *out)
{
    for (int i = 0; i < 32; i++) sprintf(out + 2 * i, "%02x", bytes[i]);
}

/* The child: "<origin> <key> <pch key> <NVRTC version> <path>" on stdout
 * (origin: compiled / memory_cache / disk_cache / ...). */
static int child(void)
{
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt__arch arch;
    asyncrt__arch_parse("sm_90", &arch);
    const asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    asyncrt_compile_job job;
    asyncrt__job_init(&job, ctx, "k.cu", k_kernel, &o, &arch);
    if (asyncrt__job_headers(&job) != ASYNCRT_SUCCESS || asyncrt__job_key(&job) != ASYNCRT_SUCCESS) return 1;
    char key[65], pch[65];
    hex(job.key, key);
    hex(job.pch_key, pch);
    asyncrt__job_free(&job);
    asyncrt_program *p = NULL;
    if (asyncrt_program_compile(ctx, "k.cu", k_kernel, &o, &p) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "%s\n", asyncrt_context_last_error(ctx));
        return 1;
    }
    asyncrt_nvrtc_identity id;
    asyncrt__nvrtc_identity_get(&id);
    char origin[32];
    snprintf(origin, sizeof origin, "%s", asyncrt_program_origin_string(asyncrt_program_origin_of(p)));
    for (char *c = origin; *c; c++)
        if (*c == ' ') *c = '_';
    printf("%s %s %s %d %s\n", origin, key, pch, asyncrt_nvrtc_version(), id.path);
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    return 0;
}

typedef struct outcome {
    char origin[32], key[65], pch[65], path[4096];
    int version;
} outcome;

static outcome run_with(const char *self, const char *nvrtc, const char *cache)
{
    char *cmd = NULL;
    assert_true(asprintf(&cmd, "ASYNCRT_NVRTC='%s' ASYNCRT_CACHE_DIR='%s' ASYNCRT_COMPILE_WORKER=0 '%s' --child",
                         nvrtc, cache, self) > 0);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    outcome o = {0};
    int n = fscanf(f, "%31s %64s %64s %d %4095s", o.origin, o.key, o.pch, &o.version, o.path);
    assert_int_equal(pclose(f), 0);
    if (n != 5) fail_msg("%s: unexpected output", cmd);
    free(cmd);
    print_message("%-12s %s key %.12s pch %.12s NVRTC %d\n", o.origin, o.path, o.key, o.pch, o.version);
    return o;
}

static void copy(const char *from, const char *to)
{
    char *cmd = NULL;
    assert_true(asprintf(&cmd, "cp %s '%s'", from, to) > 0);
    assert_int_equal(system(cmd), 0);
    free(cmd);
}

/* Two NVRTCs in turn, A then B then A, on one cache. */
static void a_then_b_then_a(const char *self, const char *a, const char *b)
{
    char *cache = test_make_temp_dir("nvrtc-switch-cache");
    outcome a1 = run_with(self, a, cache), a2 = run_with(self, a, cache);
    outcome b1 = run_with(self, b, cache), b2 = run_with(self, b, cache);
    outcome a3 = run_with(self, a, cache);
    assert_string_equal(a1.origin, "compiled");
    assert_string_equal(a2.origin, "disk_cache");
    assert_string_equal(b1.origin, "compiled"); /* another NVRTC: a miss, once */
    assert_string_equal(b2.origin, "disk_cache");
    assert_string_equal(a3.origin, "disk_cache");
    assert_string_equal(a1.key, a2.key);
    assert_string_equal(b1.key, b2.key);
    assert_string_not_equal(a1.key, b1.key);
    assert_string_not_equal(a1.pch, b1.pch); /* no PCH directory is shared between them */
    assert_string_equal(a1.pch, a3.pch);
    assert_string_not_equal(a1.path, b1.path);
    test_remove_tree(cache);
    free(cache);
}

/* B: a copy of A's library (and the builtins beside it) at another path and
 * mtime, the same code and version: only the identity tells them apart. */
static void another_identity_of_the_same_nvrtc(void **state)
{
    (void)state;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(len > 0);
    self[len] = '\0';
    const char *a = ASYNCRT_TEST_REAL_NVRTC;
    char *copies = test_make_temp_dir("nvrtc-switch-copy"), *b = NULL, *dir = strdup(a);
    assert_true(asprintf(&b, "%s/libnvrtc.so.13", copies) > 0);
    copy(a, b);
    *strrchr(dir, '/') = '\0';
    char *builtins = NULL;
    assert_true(asprintf(&builtins, "%s/libnvrtc-builtins.so.1[0-9].[0-9]*", dir) > 0);
    copy(builtins, copies); /* through the shell: the glob names NVRTC's own version */
    a_then_b_then_a(self, a, b);
    test_remove_tree(copies);
    free(copies);
    free(b);
    free(builtins);
    free(dir);
}

/* B: the set-up's wheel (tools/setup-nvrtc.sh), another version. */
static void the_wheel_after_the_toolkit(void **state)
{
    (void)state;
    struct stat st;
    if (stat(ASYNCRT_TEST_WHEEL_NVRTC, &st) != 0) {
        print_message("no wheel at %s (tools/setup-nvrtc.sh installs it): not run\n", ASYNCRT_TEST_WHEEL_NVRTC);
        skip();
    }
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(len > 0);
    self[len] = '\0';
    a_then_b_then_a(self, ASYNCRT_TEST_REAL_NVRTC, ASYNCRT_TEST_WHEEL_NVRTC);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--child") == 0) return child();
    const struct CMUnitTest tests[] = {cmocka_unit_test(another_identity_of_the_same_nvrtc),
                                       cmocka_unit_test(the_wheel_after_the_toolkit)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
