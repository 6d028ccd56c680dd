/* asyncrt-cache explain (issue 36): a hit, and each cause of a miss named,
 * in text and in JSON: a header the compile read (path, digest), an option,
 * the arch, NVRTC's identity, compact images' assembler, the working folder,
 * the bundle, an in-memory header (library call); two keys compared; the remote asked (a redis-server
 * of the test's own; skipped without one); asyncrt-run -v's line and the
 * ASYNCRT_LOG=1 miss line. Entries are made on the CPU (explicit targets). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asyncrt/cache.h"
#include "redis_fixture.h"
#include "test_support.h"

typedef struct fixture {
    char root[512], cache[600], src[600];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char *root = test_make_temp_dir("asyncrt-explain");
    snprintf(f->root, sizeof f->root, "%s", root);
    free(root);
    snprintf(f->cache, sizeof f->cache, "%s/cache", f->root);
    snprintf(f->src, sizeof f->src, "%s/src", f->root);
    mkdir(f->src, 0700);
    mkdir(f->cache, 0700);
    char path[700];
    snprintf(path, sizeof path, "%s/k.cu", f->src);
    test_write_text(path, "#include \"k.h\"\nextern \"C\" __global__ void k(float *x) { x[threadIdx.x] += N; }\n");
    snprintf(path, sizeof path, "%s/k.h", f->src);
    test_write_text(path, "#define N 1.0f\n");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    test_remove_tree(f->root);
    free(f);
    return 0;
}

/* The baseline entry: src/k.cu for sm_80, as asyncrt-run would compile it. */
static void warm(const fixture *f, const char *env, const char *args)
{
    char out[16384];
    int rc = test_shell_in(f->root, out, sizeof out, "%s '%s' --dir '%s' warm --arch sm_80 %s src/k.cu", env, ASYNCRT_CACHE_TOOL, f->cache, args);
    if (rc != 0) fail_msg("warm: %d\n%s", rc, out);
}

/* explain ARGS in text and in JSON: each must hold its expected strings
 * (NULL-terminated lists; text first, then "--" and the JSON's). */
static void explain(const fixture *f, const char *env, const char *args, ...)
{
    char text[16384], json[16384];
    int rc = test_shell_in(f->root, text, sizeof text, "%s '%s' --dir '%s' explain %s", env, ASYNCRT_CACHE_TOOL, f->cache, args);
    if (rc != 0) fail_msg("explain %s: %d\n%s", args, rc, text);
    rc = test_shell_in(f->root, json, sizeof json, "%s '%s' --dir '%s' explain --json %s", env, ASYNCRT_CACHE_TOOL, f->cache, args);
    if (rc != 0) fail_msg("explain --json %s: %d\n%s", args, rc, json);
    va_list ap;
    va_start(ap, args);
    const char *in = text;
    for (const char *s; (s = va_arg(ap, const char *));) {
        if (!strcmp(s, "--")) {
            in = json;
            continue;
        }
        if (!strstr(in, s)) fail_msg("explain %s: no '%s' in\n%s", args, s, in);
    }
    va_end(ap);
}

static void a_hit_says_so(void **state)
{
    fixture *f = *state;
    warm(f, "", "");
    explain(f, "", "--arch sm_80 src/k.cu", "src/k.cu for sm_80: hit:", "holds this key", "--",
            "\"verdict\": \"hit\"", "\"difference_count\": 0", NULL);
}

static void a_changed_header_is_named_with_its_digests(void **state)
{
    fixture *f = *state;
    warm(f, "", "");
    char path[700];
    snprintf(path, sizeof path, "%s/k.h", f->src);
    test_write_text(path, "#define N 2.0f\n");
    /* SHA-256 of the two versions of k.h */
    explain(f, "", "--arch sm_80 src/k.cu", "miss: header src/k.h changed: digest", "was f99540d3", "--",
            "\"input\": \"dependency\", \"name\": \"src/k.h\", \"was\": \"f99540d3",
            "\"verdict\": \"miss\"", NULL);
}

static void an_option_is_named(void **state)
{
    fixture *f = *state;
    warm(f, "", "-D M=1");
    explain(f, "", "--arch sm_80 -D M=2 src/k.cu", "miss: option -DM=1 removed", "option -DM=2 added", "--",
            "\"input\": \"option\", \"name\": \"-DM=1\"", "\"difference_count\": 2", NULL);
}

static void the_arch_is_named(void **state)
{
    fixture *f = *state;
    warm(f, "", "");
    explain(f, "", "--arch sm_90 src/k.cu", "miss: the arch: 'sm_80' -> 'sm_90' (the one difference", "--",
            "\"input\": \"arch\", \"name\": null, \"was\": \"sm_80\", \"now\": \"sm_90\"", NULL);
}

static void nvrtcs_identity_is_named(void **state)
{
    fixture *f = *state;
    char out[4096], env[1400];
    /* another file of the same NVRTC: only its identity (path, size, mtime) differs */
    if (test_shell_in(f->root, out, sizeof out, "cp '%s' nvrtc-copy.so", ASYNCRT_TEST_REAL_NVRTC) != 0) fail_msg("cp: %s", out);
    snprintf(env, sizeof env, "ASYNCRT_NVRTC='%s'", ASYNCRT_TEST_REAL_NVRTC);
    warm(f, env, "");
    snprintf(env, sizeof env, "ASYNCRT_NVRTC='%s/nvrtc-copy.so'", f->root);
    explain(f, env, "--arch sm_80 src/k.cu", "miss: NVRTC's identity (path, size, mtime)", "nvrtc-copy.so", "--",
            "\"input\": \"nvrtc\"", NULL);
}

static void compact_images_assembler_is_named(void **state)
{
    fixture *f = *state;
    warm(f, "ASYNCRT_COMPACT_IMAGES=0", "");
    /* compact images on (the default; no nvPTXCompiler needed to key them): the CUBIN's assembler is an input */
    explain(f, "ASYNCRT_COMPACT_IMAGES=1", "--arch sm_80 src/k.cu",
            "miss: compact images' assembler (nvPTXCompiler): 'compact off' -> 'compact on", "--",
            "\"input\": \"compact\"", NULL);
}

static void the_working_folder_is_named(void **state)
{
    fixture *f = *state;
    char args[800];
    /* a quoted include searches the working folder: the same file by its full path from elsewhere */
    snprintf(args, sizeof args, "--arch sm_80 '%s/k.cu'", f->src);
    char out[16384];
    int rc = test_shell_in(f->root, out, sizeof out, "'%s' --dir cache warm %s", ASYNCRT_CACHE_TOOL, args);
    if (rc) fail_msg("warm: %s", out);
    snprintf(args, sizeof args, "--arch sm_80 '%s/k.cu'", f->src);
    explain(f, "cd src &&", args, "miss: the working folder (quoted includes search it)", "/src'", "--",
            "\"input\": \"cwd\"", NULL);
}

static void the_bundle_is_named(void **state)
{
    fixture *f = *state;
    char out[16384];
    int rc = test_shell_in(f->root, out, sizeof out, "'%s' src/k.cu -I src --arch sm_80 -o b1.bundle && "
                "ASYNCRT_CACHE_DIR='%s' '%s' --compile-only --arch sm_80 --bundle b1.bundle src/k.cu",
                ASYNCRT_BUNDLE_TOOL, f->cache, ASYNCRT_RUN_TOOL);
    if (rc) fail_msg("bundle, run: %d\n%s", rc, out);
    char path[700];
    snprintf(path, sizeof path, "%s/k.h", f->src);
    test_write_text(path, "#define N 3.0f\n");
    rc = test_shell_in(f->root, out, sizeof out, "'%s' src/k.cu -I src --arch sm_80 -o b2.bundle", ASYNCRT_BUNDLE_TOOL);
    if (rc) fail_msg("bundle: %d\n%s", rc, out);
    test_write_text(path, "#define N 1.0f\n");
    explain(f, "", "--arch sm_80 --bundle b2.bundle src/k.cu", "miss: the header bundle:", "--",
            "\"input\": \"bundle\"", NULL);
}

static void two_keys_compare(void **state)
{
    fixture *f = *state;
    char a[16384], b[16384], args[300];
    int rc = test_shell_in(f->root, a, sizeof a, "'%s' --dir cache warm --arch sm_80,sm_90 src/k.cu >/dev/null && "
                "'%s' --dir cache --json explain --arch sm_80 src/k.cu", ASYNCRT_CACHE_TOOL, ASYNCRT_CACHE_TOOL);
    assert_int_equal(rc, 0);
    rc = test_shell_in(f->root, b, sizeof b, "'%s' --dir cache --json explain --arch sm_90 src/k.cu", ASYNCRT_CACHE_TOOL);
    assert_int_equal(rc, 0);
    const char *ka = strstr(a, "\"key\": \""), *kb = strstr(b, "\"key\": \"");
    assert_non_null(ka);
    assert_non_null(kb);
    snprintf(args, sizeof args, "%.64s %.64s.mf", ka + 8, kb + 8);
    explain(f, "", args, "two entries: miss: the arch: 'sm_80' -> 'sm_90'", "--", "\"input\": \"arch\"", NULL);
    snprintf(args, sizeof args, "%.64s %.64s", ka + 8, ka + 8);
    explain(f, "", args, "two entries: hit: the two records hold the same inputs", "--", "\"verdict\": \"hit\"",
            NULL);
    rc = test_shell_in(f->root, a, sizeof a, "'%s' --dir cache explain %0*d %.64s", ASYNCRT_CACHE_TOOL, 64, 0, kb + 8);
    assert_int_equal(rc, 7);
    assert_non_null(strstr(a, "no key record for 0000"));
    rc = test_shell_in(f->root, a, sizeof a, "'%s' --dir cache explain xyz %.64s", ASYNCRT_CACHE_TOOL, kb + 8);
    assert_int_equal(rc, 2);
}

static void no_record_and_the_remote(void **state)
{
    fixture *f = *state;
    explain(f, "", "--arch sm_80 src/k.cu", "no-record: no entry of src/k.cu is recorded here", "--",
            "\"verdict\": \"no-record\"", "\"remote\": null", NULL);
    if (!redis_server_program()) {
        print_message("skipping the remote half: no redis-server\n");
        return;
    }
    redis_server s;
    assert_true(redis_start(&s, false));
    char *key = make_key_file(f->root, "remote.key"), env[2000];
    snprintf(env, sizeof env, "ASYNCRT_REMOTE_CACHE='%s' ASYNCRT_REMOTE_CACHE_KEY_FILE='%s'", s.spec, key);
    char out[16384];
    /* another machine's cache fills the remote; this one's is empty */
    int rc = test_shell_in(f->root, out, sizeof out, "%s '%s' --dir other warm --arch sm_80 src/k.cu", env, ASYNCRT_CACHE_TOOL);
    if (rc) fail_msg("warm: %s", out);
    explain(f, env, "--remote --arch sm_80 src/k.cu", "remote   hit: the remote holds this key", "--",
            "\"remote\": \"hit: the remote holds this key", NULL);
    /* ... but the other machine's key record: the nearest, from the remote (issue 36) */
    explain(f, env, "--remote --arch sm_90 src/k.cu", "remote   miss: the remote holds nothing for this key",
            "miss: the arch: 'sm_80' -> 'sm_90'", " (a remote record)\n",
            "  records  1 key record of src/k.cu on the remote\n", "--",
            "\"remote\": \"miss: the remote holds nothing", "\"nearest_tier\": \"remote\"", NULL);
    redis_stop(&s);
    free(key);
}

static void runs_v_and_the_log_say_the_cause(void **state)
{
    fixture *f = *state;
    warm(f, "", "");
    char out[16384];
    int rc = test_shell_in(f->root, out, sizeof out, "ASYNCRT_CACHE_DIR='%s' '%s' -v --compile-only --arch sm_80 -D M=2 src/k.cu",
                f->cache, ASYNCRT_RUN_TOOL);
    if (rc) fail_msg("run: %s", out);
    if (!strstr(out, "asyncrt-run: src/k.cu: why the cache missed: option -DM=2 added (the one difference"))
        fail_msg("no cause in\n%s", out);
    rc = test_shell_in(f->root, out, sizeof out, "ASYNCRT_LOG=1 ASYNCRT_CACHE_DIR='%s' '%s' --compile-only --arch sm_90 src/k.cu",
            f->cache, ASYNCRT_RUN_TOOL);
    if (rc) fail_msg("run: %s", out);
    if (!strstr(out, "asyncrt: src/k.cu: cache miss for sm_90: the arch: 'sm_80' -> 'sm_90'"))
        fail_msg("no cause in\n%s", out);
}

/* Through the library: an in-memory header's digest, and the struct's rules. */
static void an_in_memory_header_is_named(void **state)
{
    fixture *f = *state;
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, f->cache));
    asyncrt_header h = {"m.h", "#define M 1\n"};
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    o.arch = "sm_80", o.headers = &h, o.header_count = 1;
    const char *src = "#include <m.h>\nextern \"C\" __global__ void m(int *x) { *x = M; }\n";
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "m.cu", src, &o, &p));
    asyncrt_program_destroy(p);
    h.content = "#define M 2\n";
    asyncrt_cache_explanation e = ASYNCRT_CACHE_EXPLANATION_INIT;
    assert_ok(ctx, asyncrt_cache_explain(ctx, "m.cu", src, &o, 0, &e));
    assert_int_equal(e.verdict, ASYNCRT_CACHE_VERDICT_MISS);
    assert_int_equal(e.differences, 1);
    if (!strstr(e.cause, "in-memory header m.h changed: digest")) fail_msg("%s", e.cause);
    assert_non_null(strstr(e.json, "\"input\": \"header\", \"name\": \"m.h\""));
    asyncrt_cache_explanation_free(&e);
    asyncrt_cache_explanation bad = {.size = 3};
    assert_int_equal(asyncrt_cache_explain(ctx, "m.cu", src, &o, 0, &bad), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(asyncrt_cache_explain(ctx, "m.cu", src, &o, 8, &e), ASYNCRT_ERROR_INVALID_ARGUMENT);
    asyncrt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_hit_says_so, setup, teardown),
        cmocka_unit_test_setup_teardown(a_changed_header_is_named_with_its_digests, setup, teardown),
        cmocka_unit_test_setup_teardown(an_option_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(the_arch_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(nvrtcs_identity_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(compact_images_assembler_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(the_working_folder_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(the_bundle_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(two_keys_compare, setup, teardown),
        cmocka_unit_test_setup_teardown(no_record_and_the_remote, setup, teardown),
        cmocka_unit_test_setup_teardown(runs_v_and_the_log_say_the_cause, setup, teardown),
        cmocka_unit_test_setup_teardown(an_in_memory_header_is_named, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
