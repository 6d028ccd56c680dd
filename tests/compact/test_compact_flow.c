/* Compact images in the compile flow (issue 37), through
 * asyncrt_program_compile with the NVRTC this process uses, no GPU:
 *   - on (the default) without an nvPTXCompiler, and off: NVRTC's image,
 *     the reason recorded on the program (asyncrt_program_image_info_of);
 *   - on with a loader of another version: refused, saying so;
 *   - on with a fake loader of NVRTC's version (fake_ptxcompiler.c, whose
 *     "CUBIN" is no ELF): the proof refuses it, NVRTC's image stays;
 *   - on with the real loader ($ASYNCRT_PTXCOMPILER, else where
 *     tools/setup-ptxcompiler.sh built it beside that NVRTC; skipped, saying
 *     why, elsewhere): the compact image, smaller, proven;
 *   - the cache key: an entry made with compact images on is never served
 *     with them off or with another assembler, nor the other way round;
 *   - the verdict survives the cache entry's payload. */
#define _GNU_SOURCE /* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvrtc_loader.h"
#include "program.h"
#include "ptx_assemble.h"
#include "test_support.h"

/* A few hundred unused libcu++ globals, compiled in well under a second. */
static const char *k_source = "#include <cuda/std/limits>\n"
                              "extern \"C\" __global__ void k(float *y)\n"
                              "{ y[threadIdx.x] = cuda::std::numeric_limits<float>::max(); }\n";
static char g_nvrtc[32]; /* NVRTC's exact version, from its PTX: "13.1.115" */
static char g_loader[4096]; /* $ASYNCRT_PTXCOMPILER as the test started: the real loader, if any */

static const char *fake(const char *variable)
{
    const char *path = getenv(variable);
    if (!path) fail_msg("%s is not set (ctest sets it)", variable);
    return path;
}

/* A fresh context as a process with these settings would make it (NULL: unset). */
static asyncrt_context *context(const char *mode, const char *ptxcompiler, const char *cache_dir)
{
    if (mode) setenv("ASYNCRT_COMPACT_IMAGES", mode, 1);
    else unsetenv("ASYNCRT_COMPACT_IMAGES");
    if (ptxcompiler) setenv("ASYNCRT_PTXCOMPILER", ptxcompiler, 1);
    else unsetenv("ASYNCRT_PTXCOMPILER");
    if (cache_dir) {
        setenv("ASYNCRT_CACHE_DIR", cache_dir, 1);
        unsetenv("ASYNCRT_CACHE");
    } else {
        setenv("ASYNCRT_CACHE", "0", 1);
    }
    asyncrt_context *ctx = NULL;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    return ctx;
}

/* Compiles k_source for sm_90 in a fresh context; its info, and its origin. */
static asyncrt_program_image_info compile_with(const char *mode, const char *ptxcompiler, const char *cache_dir,
                                               asyncrt_program_origin *origin)
{
    asyncrt_context *ctx = context(mode, ptxcompiler, cache_dir);
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    o.arch = "sm_90";
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "limits.cu", k_source, &o, &p));
    asyncrt_program_image_info info = ASYNCRT_PROGRAM_IMAGE_INFO_INIT;
    assert_ok(ctx, asyncrt_program_image_info_of(ctx, p, &info));
    size_t size = 0;
    const unsigned char *image = asyncrt_program_image(p, &size);
    assert_int_equal(info.image_bytes, size);
    assert_memory_equal(image, "\177ELF", 4);
    if (origin) *origin = asyncrt_program_origin_of(p);
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    return info;
}

static void says(const asyncrt_program_image_info *info, const char *phrase)
{
    if (!strstr(info->reason, phrase)) fail_msg("the reason \"%s\" does not say \"%s\"", info->reason, phrase);
}

/* NVRTC's image, as it made it. */
static void nvrtcs_own(const asyncrt_program_image_info *info)
{
    assert_false(info->compact);
    assert_int_equal(info->image_bytes, info->nvrtc_image_bytes);
}

static int find_nvrtc_version(void **state)
{
    (void)state;
    const char *loader = getenv("ASYNCRT_PTXCOMPILER");
    snprintf(g_loader, sizeof g_loader, "%s", loader ? loader : "");
    asyncrt_context *ctx = context(NULL, NULL, NULL);
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    o.arch = "compute_90";
    asyncrt_program *p = NULL;
    asyncrt_lib_version v;
    size_t size = 0;
    const char *ptx = asyncrt_program_compile(ctx, "v.cu", "__global__ void k() {}\n", &o, &p) == ASYNCRT_SUCCESS
                          ? asyncrt_program_image(p, &size)
                          : NULL;
    if (!ptx || !asyncrt__ptx_made_by(ptx, size, &v)) {
        fprintf(stderr, "no NVRTC to compile with: %s\n", asyncrt_context_last_error(ctx));
        return -1;
    }
    asyncrt__lib_version_format(&v, g_nvrtc, sizeof g_nvrtc);
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    setenv("ASYNCRT_TEST_FAKE_PTXC_VERSION", g_nvrtc, 1);
    return 0;
}

static void on_by_default_and_nvrtcs_without_an_assembler(void **state)
{
    (void)state;
    asyncrt_program_image_info info = compile_with(NULL, "/nonexistent/libasyncrt_ptxcompiler.so", NULL, NULL);
    nvrtcs_own(&info);
    says(&info, "compact images off: no nvPTXCompiler at /nonexistent/libasyncrt_ptxcompiler.so");
    info = compile_with("auto", fake("ASYNCRT_TEST_FAKE_PTXC"), NULL, NULL);
    says(&info, "NVRTC's image: the compact one differs: "); /* on: the fake assembled, the proof refused it */
    asyncrt_context *ctx = context("1", fake("ASYNCRT_TEST_FAKE_PTXC"), NULL); /* the setting, for probe and -v */
    asyncrt_program_image_info setting = ASYNCRT_PROGRAM_IMAGE_INFO_INIT;
    assert_ok(ctx, asyncrt_program_image_info_of(ctx, NULL, &setting));
    assert_true(setting.compact);
    says(&setting, "compact images on: nvPTXCompiler ");
    asyncrt_context_destroy(ctx);
    ctx = context("0", NULL, NULL);
    assert_ok(ctx, asyncrt_program_image_info_of(ctx, NULL, &setting));
    assert_false(setting.compact);
    says(&setting, "compact images off: ASYNCRT_COMPACT_IMAGES=0");
    asyncrt_context_destroy(ctx);
    info = compile_with("0", NULL, NULL, NULL);
    says(&info, "compact images off: ASYNCRT_COMPACT_IMAGES=0");
    info = compile_with("yes", NULL, NULL, NULL);
    nvrtcs_own(&info);
    says(&info, "ASYNCRT_COMPACT_IMAGES is \"yes\"; it must be 0, 1 or auto");
    info = compile_with("1", "/nonexistent/libasyncrt_ptxcompiler.so", NULL, NULL);
    nvrtcs_own(&info);
    says(&info, "compact images off: no nvPTXCompiler at /nonexistent/libasyncrt_ptxcompiler.so");
}

static void another_version_is_refused(void **state)
{
    (void)state;
    asyncrt_lib_version v;
    assert_true(asyncrt__lib_version_parse(g_nvrtc, &v));
    char other[40];
    snprintf(other, sizeof other, "%d.%d.%d", v.major, v.minor, v.patch + 1);
    setenv("ASYNCRT_TEST_FAKE_PTXC_VERSION", other, 1);
    asyncrt_program_image_info info = compile_with("1", fake("ASYNCRT_TEST_FAKE_PTXC"), NULL, NULL);
    setenv("ASYNCRT_TEST_FAKE_PTXC_VERSION", g_nvrtc, 1);
    nvrtcs_own(&info);
    /* Refused at the open where NVRTC's file names its patch level, else by its PTX's header. */
    if (!strstr(info.reason, "is not NVRTC's version") && !strstr(info.reason, "its PTX is NVRTC"))
        fail_msg("the reason \"%s\" does not name the two versions", info.reason);
    says(&info, other);
}

static void an_image_not_proven_is_not_kept(void **state)
{
    (void)state;
    asyncrt_program_image_info info = compile_with("1", fake("ASYNCRT_TEST_FAKE_PTXC"), NULL, NULL);
    nvrtcs_own(&info);
    says(&info, "NVRTC's image: the compact one differs: ");
}

/* The real loader ($ASYNCRT_PTXCOMPILER, else beside the NVRTC in use) in
 * path, or NULL and why not. */
static const char *real_loader(char *path, size_t size)
{
    asyncrt_nvrtc_identity id;
    char why[512];
    struct stat st;
    if (!asyncrt__ptxcompiler_path(g_loader, asyncrt__nvrtc_identity_get(&id) ? id.path : NULL, path, size, why,
                                   sizeof why))
        return "NVRTC's file is not known";
    if (stat(path, &st) != 0) return "no nvPTXCompiler beside NVRTC (tools/setup-ptxcompiler.sh builds it)";
    return NULL;
}

static void a_proven_image_is_kept(void **state)
{
    (void)state;
    char path[4096];
    const char *why = real_loader(path, sizeof path);
    if (why) {
        print_message("skipped: %s\n", why);
        skip();
    }
    asyncrt_program_image_info info = compile_with("1", path, NULL, NULL);
    if (!info.compact) fail_msg("not compact: %s", info.reason);
    says(&info, "compact image: ");
    says(&info, "proven the same program");
    assert_true(info.image_bytes < info.nvrtc_image_bytes);
    print_message("%zu bytes for NVRTC's %zu\n", info.image_bytes, info.nvrtc_image_bytes);
}

/* Contexts sharing one cache directory, as processes would. */
static void the_key_holds_the_feature_and_the_assembler(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("compact-key");
    asyncrt_program_origin origin;
    const char *a = fake("ASYNCRT_TEST_FAKE_PTXC"), *b = fake("ASYNCRT_TEST_FAKE_PTXC_B");
    asyncrt_program_image_info on_a = compile_with("1", a, dir, &origin);
    assert_int_equal(origin, ASYNCRT_ORIGIN_COMPILED);
    asyncrt_program_image_info off = compile_with("0", NULL, dir, &origin);
    assert_int_equal(origin, ASYNCRT_ORIGIN_COMPILED); /* not on_a's entry */
    says(&off, "ASYNCRT_COMPACT_IMAGES=0");
    asyncrt_program_image_info again = compile_with("1", a, dir, &origin);
    assert_int_equal(origin, ASYNCRT_ORIGIN_DISK_CACHE); /* on_a's entry, its verdict with it */
    assert_string_equal(again.reason, on_a.reason);
    assert_int_equal(again.nvrtc_image_bytes, on_a.nvrtc_image_bytes);
    compile_with("1", b, dir, &origin);
    assert_int_equal(origin, ASYNCRT_ORIGIN_COMPILED); /* the same version, another file */
    compile_with("1", "/nonexistent/libasyncrt_ptxcompiler.so", dir, &origin);
    assert_int_equal(origin, ASYNCRT_ORIGIN_COMPILED); /* on, with none */
    asyncrt_program_image_info off_again = compile_with("0", NULL, dir, &origin);
    assert_int_equal(origin, ASYNCRT_ORIGIN_DISK_CACHE); /* off's entry */
    assert_string_equal(off_again.reason, off.reason);
    asyncrt_program_image_info on_default = compile_with(NULL, a, dir, &origin);
    assert_int_equal(origin, ASYNCRT_ORIGIN_DISK_CACHE); /* unset is on: on_a's entry */
    assert_string_equal(on_default.reason, on_a.reason);
    char path[4096];
    if (!real_loader(path, sizeof path)) { /* a compact entry, and off after it */
        char *dir2 = test_make_temp_dir("compact-key-real");
        asyncrt_program_image_info real = compile_with("1", path, dir2, &origin);
        assert_true(real.compact);
        asyncrt_program_image_info cached = compile_with("1", path, dir2, &origin);
        assert_int_equal(origin, ASYNCRT_ORIGIN_DISK_CACHE);
        assert_true(cached.compact);
        assert_int_equal(cached.image_bytes, real.image_bytes);
        asyncrt_program_image_info plain = compile_with("0", NULL, dir2, &origin);
        assert_int_equal(origin, ASYNCRT_ORIGIN_COMPILED);
        assert_false(plain.compact);
        assert_int_equal(plain.image_bytes, real.nvrtc_image_bytes);
        test_remove_tree(dir2);
        free(dir2);
    }
    test_remove_tree(dir);
    free(dir);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = NULL;
    assert_non_null(in);
    unlink(to); /* a new file (inode) at the same path */
    assert_non_null(out = fopen(to, "wb"));
    char buf[65536];
    for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;) assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static int opens(const char *trace)
{
    FILE *f = fopen(trace, "r");
    int n = 0;
    for (int c; f && (c = fgetc(f)) != EOF;) n += c == '\n';
    if (f) fclose(f);
    return n;
}

/* The loader's version and hash are memoised beside the cache: a context
 * whose compiles hit opens no loader; one whose loader file was replaced
 * (the same path, another file) hashes it again and misses. */
static void a_hit_opens_no_loader(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("compact-memo");
    char loader[4200], trace[4200];
    snprintf(loader, sizeof loader, "%s/libasyncrt_ptxcompiler.so", dir);
    snprintf(trace, sizeof trace, "%s/opens", dir);
    copy_file(fake("ASYNCRT_TEST_FAKE_PTXC"), loader);
    char cache[4200];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("ASYNCRT_TEST_FAKE_PTXC_TRACE", trace, 1);
    asyncrt_program_origin origin;
    asyncrt_program_image_info first = compile_with("1", loader, cache, &origin);
    assert_int_equal(origin, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(opens(trace), 1);
    asyncrt_program_image_info hit = compile_with("1", loader, cache, &origin);
    assert_int_equal(origin, ASYNCRT_ORIGIN_DISK_CACHE);
    assert_string_equal(hit.reason, first.reason);
    assert_int_equal(opens(trace), 1); /* the key came from the memo */
    /* Another file at the same path: another hash, so another key. */
    copy_file(fake("ASYNCRT_TEST_FAKE_PTXC_B"), loader);
    compile_with("1", loader, cache, &origin);
    assert_int_equal(origin, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(opens(trace), 2);
    unsetenv("ASYNCRT_TEST_FAKE_PTXC_TRACE");
    test_remove_tree(dir);
    free(dir);
}

static void the_verdict_is_in_the_entry(void **state)
{
    (void)state;
    unsigned char image[] = "\177ELF compact";
    asyncrt_program p = {.arch = "sm_90", .log = "", .image = image, .image_size = sizeof image,
                         .compact = true, .nvrtc_image_size = 99, .image_note = "compact image: proven"};
    size_t size = 0;
    unsigned char *payload = asyncrt__program_payload(&p, &size);
    assert_non_null(payload);
    asyncrt_program *q = NULL;
    char why[256];
    uint8_t key[32] = {0};
    assert_int_equal(asyncrt__program_from_payload(payload, size, key, ASYNCRT_ORIGIN_DISK_CACHE, &q, why, sizeof why),
                     ASYNCRT_SUCCESS);
    assert_true(q->compact);
    assert_int_equal(q->nvrtc_image_size, 99);
    assert_string_equal(q->image_note, "compact image: proven");
    asyncrt_program *c = asyncrt__program_clone(q);
    assert_string_equal(c->image_note, q->image_note);
    asyncrt_program_destroy(c);
    asyncrt_program_destroy(q);
    /* A compact flag that is neither 0 nor 1 is a damaged entry. */
    payload[size - 16] = 2; /* its low byte (the flag, then NVRTC's size, 8 bytes each) */
    assert_int_equal(asyncrt__program_from_payload(payload, size, key, ASYNCRT_ORIGIN_DISK_CACHE, &q, why, sizeof why),
                     ASYNCRT_ERROR_IO);
    free(payload);
    /* A size below the first layout names the rule. */
    asyncrt_context *ctx = context(NULL, NULL, NULL);
    asyncrt_program_image_info info = {.size = 4};
    assert_int_equal(asyncrt_program_image_info_of(ctx, &p, &info), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "asyncrt_program_image_info.size is 4"));
    asyncrt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_verdict_is_in_the_entry),
        cmocka_unit_test(on_by_default_and_nvrtcs_without_an_assembler),
        cmocka_unit_test(another_version_is_refused),
        cmocka_unit_test(an_image_not_proven_is_not_kept),
        cmocka_unit_test(a_proven_image_is_kept),
        cmocka_unit_test(the_key_holds_the_feature_and_the_assembler),
        cmocka_unit_test(a_hit_opens_no_loader),
    };
    return cmocka_run_group_tests(tests, find_nvrtc_version, NULL);
}
