/* Header bundles in the library, on small bundles made here (the tool and
 * CCCL's real headers: test_bundle_tool.sh): loading checks the format and
 * digest; a compile takes its headers in memory under their names with no
 * toolkit; a missing header names itself; the digest is in the key (a
 * changed bundle misses) and replaces per-file checks (its manifest lists
 * no bundled file); the caller's headers win; toolkit discovery is off
 * under ASYNCRT_TOOLKIT=none, and with a bundle unless asked for; the
 * compile worker gets the bundle. */
#define _GNU_SOURCE /* setenv, memmem */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "codec.h"      /* the seal header's size */
#include "cache_internal.h"   /* manifests */
#include "compile_internal.h" /* the bundle format */
#include "bundle_names.h"     /* the maker's header discovery */
#include "test_support.h"

/* "lib/a.h" includes "b.h" as written: NVRTC looks in-memory names up as written. */
static unsigned char *make_bundle(const char *b_value, size_t *size)
{
    char b_text[64];
    snprintf(b_text, sizeof b_text, "#define B_VAL %s\n", b_value);
    const char *texts[] = {"#pragma once\n#include \"b.h\"\n#define A_VAL (B_VAL + 1)\n", b_text};
    const char *names[] = {"lib/a.h", "b.h"};
    const size_t text_of[] = {0, 1};
    unsigned char *data = asyncrt__bundle_encode("asyncrt-bundle k.cu -o test.bin", texts, 2, names, text_of, 2, size);
    assert_non_null(data);
    return data;
}

static asyncrt_bundle *load(asyncrt_context *ctx, const char *b_value)
{
    size_t size;
    unsigned char *data = make_bundle(b_value, &size);
    asyncrt_bundle *b = NULL;
    assert_ok(ctx, asyncrt_bundle_load(ctx, data, size, &b));
    free(data); /* the bundle is a copy */
    return b;
}

static const char k_source[] = "#include <lib/a.h>\nextern \"C\" __global__ void k(int *p) { *p = A_VAL; }\n";

/* Compiles k_source to PTX (fast, and the constant can be read back). */
static asyncrt_status compile(asyncrt_context *ctx, const char *source, const asyncrt_bundle *b,
                              const asyncrt_header *headers, size_t header_count, bool with_toolkit,
                              asyncrt_program **out)
{
    asyncrt_compile_options o = {.size = sizeof o,
                                 .arch = "compute_90", .bundle = b, .headers = headers,
                                 .header_count = header_count, .toolkit_with_bundle = with_toolkit};
    return asyncrt_program_compile(ctx, "k.cu", source, &o, out);
}

static bool ptx_has(const asyncrt_program *p, const char *text)
{
    size_t size;
    const char *ptx = asyncrt_program_image(p, &size);
    return strstr(ptx, text) != NULL;
}

static void test_load_checks_the_format(void **state)
{
    asyncrt_context *ctx = *state;
    size_t size;
    unsigned char *data = make_bundle("41", &size);
    asyncrt_bundle *b = NULL;
    assert_ok(ctx, asyncrt_bundle_load(ctx, data, size, &b));
    assert_int_equal(asyncrt_bundle_header_count(b), 2);
    assert_int_equal(strlen(asyncrt_bundle_digest(b)), 64);
    asyncrt_bundle_destroy(b);
    data[size - 3] ^= 1; /* the last name's text index, far out of range */
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_bundle_load(ctx, data, size, &b));
    assert_null(b);
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "header bundle: header 1 (\"b.h\") is malformed"));
    data[size - 3] ^= 1;
    /* A header's text, changed: loading does not hash (a program that only
     * hits the cache pays nothing); the first compile that needs the texts
     * checks the digest and refuses. */
    char *text = memmem(data, size, "B_VAL 41", 8);
    assert_non_null(text);
    text[7] = '2';
    asyncrt_context_set_cache_dir(ctx, NULL); /* NVRTC must be asked */
    assert_ok(ctx, asyncrt_bundle_load(ctx, data, size, &b));
    asyncrt_program *p = NULL;
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_90", .bundle = b};
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_program_compile(ctx, "k.cu", k_source, &o, &p));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "header bundle: checksum mismatch (damaged)"));
    asyncrt_bundle_destroy(b);
    text[7] = '1';
    /* Truncated, said so (issue 33: a payload cut inside its first item was
     * "out of memory", ASYNCRT_ERROR_OUT_OF_MEMORY): cut with the header's
     * length made to agree, a byte short, shorter than the header. */
    unsigned char cut[ASYNCRT_SEAL_HEADER_SIZE + 4];
    memcpy(cut, data, sizeof cut);
    uint64_t four = 4; /* the payload: half of the note's length */
    memcpy(cut + 48, &four, 8);
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_bundle_load(ctx, cut, sizeof cut, &b));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "ends inside an item (truncated or damaged)"));
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_bundle_load(ctx, data, size - 1, &b));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "truncated: "));
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_bundle_load(ctx, data, 60, &b));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "truncated: 60 bytes, less than a bundle's header"));
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_bundle_load(ctx, NULL, size, &b));
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_bundle_load(ctx, data, size, NULL));
    assert_int_equal(asyncrt_bundle_load(NULL, data, size, &b), ASYNCRT_ERROR_INVALID_ARGUMENT);
    free(data);
    /* One name twice: NVRTC would take either silently. */
    const char *texts[] = {"x", "y"}, *names[] = {"a.h", "a.h"};
    const size_t text_of[] = {0, 1};
    data = asyncrt__bundle_encode("", texts, 2, names, text_of, 2, &size);
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_bundle_load(ctx, data, size, &b));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "\"a.h\" is given twice"));
    free(data);
}

static void test_load_file(void **state)
{
    asyncrt_context *ctx = *state;
    char *dir = test_make_temp_dir("asyncrt-test-bundle");
    char path[512];
    snprintf(path, sizeof path, "%s/b.bin", dir);
    size_t size;
    unsigned char *data = make_bundle("41", &size);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    asyncrt_bundle *from_file = NULL, *from_memory = load(ctx, "41");
    assert_ok(ctx, asyncrt_bundle_load_file(ctx, path, &from_file));
    assert_string_equal(asyncrt_bundle_digest(from_file), asyncrt_bundle_digest(from_memory));
    asyncrt_bundle_destroy(from_file);
    asyncrt_bundle_destroy(from_memory);
    snprintf(path, sizeof path, "%s/none.bin", dir);
    assert_status(ctx, ASYNCRT_ERROR_IO, asyncrt_bundle_load_file(ctx, path, &from_file));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), path));
    free(data);
    test_remove_tree(dir);
    free(dir);
}

static void test_compiles_from_the_bundle_alone(void **state)
{
    (void)state;
    setenv("ASYNCRT_TOOLKIT", "none", 1);
    asyncrt_context *ctx = NULL;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    asyncrt_context_set_cache_dir(ctx, NULL);
    asyncrt_bundle *b = load(ctx, "41");
    asyncrt_program *p = NULL;
    assert_ok(ctx, compile(ctx, k_source, b, NULL, 0, false, &p));
    assert_true(ptx_has(p, "42;")); /* A_VAL through "b.h", named as written */
    asyncrt_program_destroy(p);
    /* The caller's own headers win over the bundle's. */
    asyncrt_header mine = {"b.h", "#define B_VAL 99\n"};
    assert_ok(ctx, compile(ctx, k_source, b, &mine, 1, false, &p));
    assert_true(ptx_has(p, "100;"));
    asyncrt_program_destroy(p);
    asyncrt_bundle_destroy(b);
    asyncrt_context_destroy(ctx);
    unsetenv("ASYNCRT_TOOLKIT");
}

/* A built-in standard header wins over a bundle's of the same name, as the
 * docs/bundles.md says: NVRTC refuses two in-memory headers of one name, so one must
 * yield, and the toolkit compile a bundle is recorded from read the
 * built-in (asyncrt-bundle never bundles its names). With no_std_headers
 * there is no built-in, and the bundle's is the one. Before (issue 33),
 * the bundle's <cstdint> replaced the built-in. */
static void test_a_builtin_header_wins_over_the_bundles(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_context_set_cache_dir(ctx, NULL);
    const char *texts[] = {"#define FROM_BUNDLE 7u\n"}, *names[] = {"cstdint"};
    const size_t text_of[] = {0};
    size_t size;
    unsigned char *data = asyncrt__bundle_encode("", texts, 1, names, text_of, 1, &size);
    asyncrt_bundle *b = NULL;
    assert_ok(ctx, asyncrt_bundle_load(ctx, data, size, &b));
    const char *source = "#include <cstdint>\n#ifdef FROM_BUNDLE\n#define V FROM_BUNDLE\n#else\n#define V 5u\n#endif\n"
                         "extern \"C\" __global__ void k(unsigned *p) { *p = V; }\n";
    asyncrt_program *p = NULL;
    assert_ok(ctx, compile(ctx, source, b, NULL, 0, true, &p)); /* the built-in reads <cuda/std/cstdint> */
    assert_true(ptx_has(p, "5;"));
    asyncrt_program_destroy(p);
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_90", .bundle = b, .no_std_headers = true};
    assert_ok(ctx, asyncrt_program_compile(ctx, "k.cu", source, &o, &p));
    assert_true(ptx_has(p, "7;"));
    asyncrt_program_destroy(p);
    asyncrt_bundle_destroy(b);
    free(data);
}

static void test_a_missing_header_names_itself(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_bundle *b = load(ctx, "41");
    asyncrt_program *p = NULL;
    assert_status(ctx, ASYNCRT_ERROR_COMPILE,
                  compile(ctx, "#include <lib/a.h>\n#include <lib/gone.h>\n", b, NULL, 0, false, &p));
    const char *msg = asyncrt_context_last_error(ctx);
    assert_non_null(strstr(msg, "\"lib/gone.h\" is not in the header bundle"));
    assert_non_null(strstr(msg, "made by: asyncrt-bundle k.cu -o test.bin"));
    assert_non_null(strstr(msg, "remake the bundle"));
    asyncrt_bundle_destroy(b);
}

/* With a bundle the toolkit is not searched: <nv/target> (a toolkit header
 * the bundle lacks) fails, unless toolkit_with_bundle asks for the toolkit. */
static void test_toolkit_only_when_asked_beside_a_bundle(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_bundle *b = load(ctx, "41");
    asyncrt_program *p = NULL;
    const char *source = "#include <lib/a.h>\n#include <nv/target>\n";
    assert_status(ctx, ASYNCRT_ERROR_COMPILE, compile(ctx, source, b, NULL, 0, false, &p));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "\"nv/target\" is not in the header bundle"));
    assert_ok(ctx, compile(ctx, source, b, NULL, 0, true, &p));
    asyncrt_program_destroy(p);
    asyncrt_bundle_destroy(b);
}

static void test_toolkit_none_turns_discovery_off(void **state)
{
    (void)state;
    const char *values[] = {"none", "nOne"};
    for (size_t i = 0; i < 2; i++) {
        setenv("ASYNCRT_TOOLKIT", values[i], 1);
        asyncrt_context *ctx = NULL;
        assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
        asyncrt_program *p = NULL;
        assert_status(ctx, ASYNCRT_ERROR_COMPILE, compile(ctx, "#include <nv/target>\n", NULL, NULL, 0, false, &p));
        const char *msg = asyncrt_context_last_error(ctx);
        assert_non_null(strstr(msg, "\"nv/target\" was not found: toolkit discovery is off"));
        assert_non_null(strstr(msg, i ? "ASYNCRT_TOOLKIT=\"nOne\" is neither" : "(ASYNCRT_TOOLKIT=none)"));
        assert_non_null(strstr(msg, "asyncrt-bundle"));
        asyncrt_context_destroy(ctx);
    }
    unsetenv("ASYNCRT_TOOLKIT");
}

/* The only manifest in dir: how many files its newest set checks. */
static size_t manifest_deps(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t deps = (size_t)-1, manifests = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 3 || strcmp(e->d_name + n - 3, ".mf") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static unsigned char data[1 << 16];
        size_t size = fread(data, 1, sizeof data, f);
        fclose(f);
        uint8_t key1[32];
        memcpy(key1, data + 16, 32); /* the seal's key field (codec.h) */
        asyncrt_manifest m;
        char why[256];
        assert_true(asyncrt__manifest_decode(data, size, key1, NULL, &m, why, sizeof why));
        deps = m.sets[0].count;
        asyncrt__manifest_free(&m);
        manifests++;
    }
    closedir(d);
    assert_int_equal(manifests, 1);
    return deps;
}

static void test_the_digest_is_in_the_key(void **state)
{
    test_cache_fixture *f = *state;
    setenv("ASYNCRT_TOOLKIT", "none", 1);
    asyncrt_bundle *b41 = load(f->ctx, "41"), *b6 = load(f->ctx, "6");
    asyncrt_program *p = NULL;
    assert_ok(f->ctx, compile(f->ctx, k_source, b41, NULL, 0, false, &p));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_program_destroy(p);
    assert_int_equal(manifest_deps(f->dir), 0); /* no bundled file to check on a hit: the digest stands for them */
    asyncrt_context *fresh = NULL; /* another process, in effect */
    assert_int_equal(asyncrt_context_create(&fresh), ASYNCRT_SUCCESS);
    assert_ok(fresh, asyncrt_context_set_cache_dir(fresh, f->dir));
    assert_ok(fresh, compile(fresh, k_source, b41, NULL, 0, false, &p));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_DISK_CACHE);
    asyncrt_program_destroy(p);
    assert_ok(fresh, compile(fresh, k_source, b6, NULL, 0, false, &p)); /* a changed bundle misses */
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_COMPILED);
    assert_true(ptx_has(p, "7;"));
    asyncrt_program_destroy(p);
    assert_ok(fresh, compile(fresh, k_source, NULL, NULL, 0, false, &p) == ASYNCRT_ERROR_COMPILE ? ASYNCRT_SUCCESS
                                                                                                 : ASYNCRT_ERROR_NVRTC);
    asyncrt_context_destroy(fresh);
    asyncrt_bundle_destroy(b41);
    asyncrt_bundle_destroy(b6);
    unsetenv("ASYNCRT_TOOLKIT");
}

/* Two misses in a batch go to compile workers, which must get the bundle
 * (and so compute this process's key): none is compiled here instead. */
static void test_the_worker_gets_the_bundle(void **state)
{
    test_cache_fixture *f = *state;
    setenv("ASYNCRT_TOOLKIT", "none", 1);
    asyncrt_bundle *b = load(f->ctx, "41");
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_90", .bundle = b};
    asyncrt_build_request reqs[2] = {
        {.source_name = "k1.cu", .source = k_source, .opts = &o},
        {.source_name = "k2.cu", .source = "#include <lib/a.h>\nextern \"C\" __global__ void k2(int *p) { *p = A_VAL; }\n",
         .opts = &o}};
    asyncrt_context_set_log_level(f->ctx, 2);
    test_capture_begin();
    asyncrt_status s = asyncrt_build_batch(f->ctx, reqs, 2, 2, false);
    char *log = test_capture_end();
    asyncrt_context_set_log_level(f->ctx, 0);
    assert_int_equal(s, ASYNCRT_SUCCESS);
    if (strstr(log, "compiling it in this process")) fail_msg("a worker did not compile its request:\n%s", log);
    for (int i = 0; i < 2; i++) assert_true(ptx_has(reqs[i].program, "42;"));
    asyncrt_build_batch_release(reqs, 2);
    free(log);
    asyncrt_bundle_destroy(b);
    unsetenv("ASYNCRT_TOOLKIT");
}

/* asyncrt_bundle_make: a source with a header of its own folder, for PTX,
 * checked; and the input it refuses, each named. */
static void write_text(const char *dir, const char *name, const char *text)
{
    char path[512];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_true(n > 0 && (size_t)n < sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    /* A header changed in the coarse clock tick of its compile is not recorded (it may still change). */
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
}

static void test_make(void **state)
{
    asyncrt_context *ctx = *state;
    char *dir = test_make_temp_dir("asyncrt-test-bundle-make");
    char src[512], inc[512];
    snprintf(inc, sizeof inc, "%s/inc", dir);
    assert_int_equal(mkdir(inc, 0700), 0);
    write_text(inc, "val.h", "#define VAL 37\n");
    write_text(dir, "k.cu", "#include \"val.h\"\nextern \"C\" __global__ void k(int *p) { *p = VAL; }\n");
    snprintf(src, sizeof src, "%s/k.cu", dir);
    const char *sources[] = {src}, *dirs[] = {inc}, *archs[] = {"compute_90"};
    asyncrt_bundle_make_options o = ASYNCRT_BUNDLE_MAKE_OPTIONS_INIT;
    o.sources = sources, o.source_count = 1, o.include_dirs = dirs, o.include_dir_count = 1;
    o.archs = archs, o.arch_count = 1, o.note = "test_make";
    void *data = NULL;
    size_t size = 0;
    asyncrt_status s = asyncrt_bundle_make(ctx, &o, &data, &size);
    if (s == ASYNCRT_ERROR_IO && strstr(asyncrt_context_last_error(ctx), "the toolkit whose headers")) {
        test_remove_tree(dir), free(dir); /* no toolkit here: what it makes cannot be checked */
        skip();
    }
    assert_ok(ctx, s);
    asyncrt_bundle *b = NULL;
    assert_ok(ctx, asyncrt_bundle_load(ctx, data, size, &b));
    assert_int_equal(asyncrt_bundle_text_count(b), 1);
    assert_int_equal(asyncrt_bundle_header_count(b), 1);
    asyncrt_program *p = NULL;
    assert_ok(ctx, compile(ctx, "#include \"val.h\"\nextern \"C\" __global__ void k(int *p) { *p = VAL; }\n", b,
                           NULL, 0, false, &p));
    assert_true(ptx_has(p, "37"));
    asyncrt_program_destroy(p);
    asyncrt_bundle_destroy(b);
    free(data);

    /* What it refuses. */
    o.source_count = 0;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_bundle_make(ctx, &o, &data, &size));
    assert_null(data);
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "no sources given (source_count is 0)"));
    o.source_count = 1;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_bundle_make(ctx, &o, NULL, &size));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "bundle make: data is NULL"));
    asyncrt_bundle_make_options unsized = o;
    unsized.size = 0;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_bundle_make(ctx, &unsized, &data, &size));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "asyncrt_bundle_make_options.size is 0"));
    snprintf(src, sizeof src, "%s/missing.cu", dir);
    assert_status(ctx, ASYNCRT_ERROR_IO, asyncrt_bundle_make(ctx, &o, &data, &size));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "cannot read "));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "missing.cu"));
    write_text(dir, "broken.cu", "extern \"C\" __global__ void k( {\n");
    snprintf(src, sizeof src, "%s/broken.cu", dir);
    assert_status(ctx, ASYNCRT_ERROR_COMPILE, asyncrt_bundle_make(ctx, &o, &data, &size));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "broken.cu for compute_90: "));
    test_remove_tree(dir);
    free(dir);
}

/* Header discovery closes over unconditional #includes: a trace that names
 * only top.h (as NVRTC's left out <cuda/std/detail/__config>) still bundles
 * the config.h it includes under its guard, and what that includes, but not
 * the header of an #if branch NVRTC may have skipped. */
static void test_the_trace_s_gaps_are_closed(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("asyncrt-bundle-names");
    write_text(dir, "top.h", "#ifndef TOP_H\n#define TOP_H\n#include <config.h>\n#if WANT_SKIPPED\n"
                             "#include <skipped.h>\n#endif\n#endif\n");
    write_text(dir, "config.h", "#pragma once\n#include \"inner.h\"\n");
    write_text(dir, "inner.h", "#define INNER 1\n");
    write_text(dir, "skipped.h", "#define SKIPPED 1\n");
    write_text(dir, "k.cu", "#include <top.h>\n");
    char *top = asyncrt__format("%s/top.h", dir), *src = asyncrt__format("%s/k.cu", dir);
    const char *dirs[] = {dir}, *sources[] = {src};
    asyncrt_bundle_names b = {.dirs = dirs, .dir_count = 1};
    char why[512] = "";
    assert_true(asyncrt__bundle_names_add_file(&b, top, NULL, why, sizeof why));
    if (!asyncrt__bundle_names_resolve(&b, sources, 1, why, sizeof why)) fail_msg("%s", why);
    const char *want[] = {"config.h", "inner.h", "top.h"};
    assert_int_equal(b.name_count, 3);
    for (size_t i = 0; i < 3; i++) assert_string_equal(b.names[i].name, want[i]);
    asyncrt__bundle_names_free(&b);
    free(top), free(src);
    test_remove_tree(dir);
    free(dir);
}

int main(void)
{
    unsetenv("ASYNCRT_TOOLKIT");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_load_checks_the_format, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(test_load_file, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(test_make, test_setup_context, test_teardown_context),
        cmocka_unit_test(test_compiles_from_the_bundle_alone),
        cmocka_unit_test_setup_teardown(test_a_builtin_header_wins_over_the_bundles, test_setup_context,
                                        test_teardown_context),
        cmocka_unit_test_setup_teardown(test_a_missing_header_names_itself, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(test_toolkit_only_when_asked_beside_a_bundle, test_setup_context,
                                        test_teardown_context),
        cmocka_unit_test(test_toolkit_none_turns_discovery_off),
        cmocka_unit_test_setup_teardown(test_the_digest_is_in_the_key, test_setup_cache_context,
                                        test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(test_the_worker_gets_the_bundle, test_setup_cache_context,
                                        test_teardown_cache_context),
        cmocka_unit_test(test_the_trace_s_gaps_are_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
