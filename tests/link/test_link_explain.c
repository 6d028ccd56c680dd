/* asyncrt_link_explain (issue 36): a link's miss named by its cause, from
 * the record each stored link keeps of its key's inputs (link_record.c): a
 * hit, a link option added, an input's content changed (its digests), the
 * arch, and nvJitLink's identity. On the CPU: main.cu and util.cu of
 * tests/link/kernels compiled for linking and linked for sm_90.
 *
 * nvJitLink is chosen once per process (link_jit.h), so its case re-runs
 * this program (--explain-child) with another nvJitLink chosen: a wheel of
 * a made-up version 13.7 in $VIRTUAL_ENV, beside tests/runtime's fake NVRTC
 * of that version ($ASYNCRT_NVRTC). Nothing loads either: explaining a link
 * opens no nvJitLink. */
#define _GNU_SOURCE /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "asyncrt/link.h"
#include "link_support.h"

#define ARCH "sm_90"

typedef struct fixture {
    test_cache_fixture base; /* first: test_setup_cache_context's */
    char main_path[600], util_path[600];
} fixture;

static void write_image(const char *path, const asyncrt_program *p)
{
    size_t size = 0;
    const void *image = asyncrt_program_image(p, &size);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(image, 1, size, out), size);
    assert_int_equal(fclose(out), 0);
}

static int setup(void **state)
{
    test_cache_fixture *base = NULL;
    test_setup_cache_context((void **)&base);
    fixture *f = calloc(1, sizeof *f);
    f->base = *base;
    free(base);
    asyncrt_program *m = link_test_compile(f->base.ctx, "main.cu", ARCH, "-rdc=true");
    asyncrt_program *u = link_test_compile(f->base.ctx, "util.cu", ARCH, "-rdc=true");
    snprintf(f->main_path, sizeof f->main_path, "%s/main.cubin", f->base.dir);
    snprintf(f->util_path, sizeof f->util_path, "%s/util.cubin", f->base.dir);
    write_image(f->main_path, m);
    write_image(f->util_path, u);
    asyncrt_program_destroy(m);
    asyncrt_program_destroy(u);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    test_cache_fixture *base = malloc(sizeof *base);
    *base = f->base;
    free(f);
    return test_teardown_cache_context((void **)&base);
}

/* A link of main.cubin and util.cubin (util's bytes `util` when not NULL), with `option` (NULL: none). */
static asyncrt_link *make_link(asyncrt_context *ctx, const fixture *f, const char *arch, const char *option,
                               const void *util, size_t util_size)
{
    asyncrt_link *l = NULL;
    assert_ok(ctx, asyncrt_link_create(ctx, arch, &l));
    assert_ok(ctx, asyncrt_link_add_file(l, f->main_path, ASYNCRT_LINK_ANY));
    if (util) assert_ok(ctx, asyncrt_link_add_data(l, util, util_size, ASYNCRT_LINK_CUBIN, f->util_path));
    else assert_ok(ctx, asyncrt_link_add_file(l, f->util_path, ASYNCRT_LINK_ANY));
    if (option) assert_ok(ctx, asyncrt_link_add_option(l, option));
    return l;
}

/* The baseline: the plain link, linked and stored (with its record). */
static void store_baseline(asyncrt_context *ctx, const fixture *f)
{
    asyncrt_link *l = make_link(ctx, f, ARCH, NULL, NULL, 0);
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_link_complete(l, &p));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_program_destroy(p);
    asyncrt_link_destroy(l);
}

static void explain(asyncrt_context *ctx, asyncrt_link *l, asyncrt_cache_explanation *e)
{
    *e = (asyncrt_cache_explanation)ASYNCRT_CACHE_EXPLANATION_INIT;
    assert_ok(ctx, asyncrt_link_explain(l, 0, e));
    asyncrt_link_destroy(l);
}

static void expect(const asyncrt_cache_explanation *e, const char *in_cause, const char *in_json)
{
    if (!strstr(e->cause, in_cause) || (in_json && !strstr(e->json, in_json)))
        fail_msg("want '%s' in the cause and '%s' in the JSON:\n%s\n%s", in_cause, in_json ? in_json : "",
                 e->text, e->json);
}

static void a_hit_says_so(void **state)
{
    fixture *f = *state;
    asyncrt_context *ctx = f->base.ctx;
    asyncrt_cache_explanation e;
    explain(ctx, make_link(ctx, f, ARCH, NULL, NULL, 0), &e);
    assert_int_equal(e.verdict, ASYNCRT_CACHE_VERDICT_NO_RECORD); /* nothing of this link stored yet */
    asyncrt_cache_explanation_free(&e);
    store_baseline(ctx, f);
    explain(ctx, make_link(ctx, f, ARCH, NULL, NULL, 0), &e);
    assert_int_equal(e.verdict, ASYNCRT_CACHE_VERDICT_HIT);
    expect(&e, "holds this key", "\"verdict\": \"hit\"");
    assert_non_null(strstr(e.text, "link: ")); /* the link's name: its inputs */
    asyncrt_cache_explanation_free(&e);
}

static void a_link_option_is_named(void **state)
{
    fixture *f = *state;
    asyncrt_context *ctx = f->base.ctx;
    store_baseline(ctx, f);
    asyncrt_cache_explanation e;
    explain(ctx, make_link(ctx, f, ARCH, "-lineinfo", NULL, 0), &e);
    assert_int_equal(e.verdict, ASYNCRT_CACHE_VERDICT_MISS);
    assert_int_equal(e.differences, 1);
    expect(&e, "link option -lineinfo added", "{\"input\": \"link option\", \"name\": \"-lineinfo\"");
    asyncrt_cache_explanation_free(&e);
}

static void an_inputs_content_is_named_with_its_digests(void **state)
{
    fixture *f = *state;
    asyncrt_context *ctx = f->base.ctx;
    store_baseline(ctx, f);
    FILE *in = fopen(f->util_path, "rb");
    assert_non_null(in);
    unsigned char *util = malloc(1 << 20);
    size_t size = fread(util, 1, 1 << 20, in);
    fclose(in);
    assert_true(size > 0 && size < 1 << 20);
    util[size - 1] ^= 1; /* another util.cu: the same name, other bytes */
    asyncrt_cache_explanation e;
    explain(ctx, make_link(ctx, f, ARCH, NULL, util, size), &e);
    free(util);
    assert_int_equal(e.verdict, ASYNCRT_CACHE_VERDICT_MISS);
    assert_int_equal(e.differences, 1);
    char want[700];
    snprintf(want, sizeof want, "link input %s (CUBIN) changed: digest ", f->util_path);
    expect(&e, want, "{\"input\": \"input\"");
    assert_non_null(strstr(e.text, "             was ")); /* both digests, in full */
    asyncrt_cache_explanation_free(&e);
}

static void the_arch_is_named(void **state)
{
    fixture *f = *state;
    asyncrt_context *ctx = f->base.ctx;
    store_baseline(ctx, f);
    asyncrt_cache_explanation e;
    explain(ctx, make_link(ctx, f, "sm_90a", NULL, NULL, 0), &e);
    assert_int_equal(e.verdict, ASYNCRT_CACHE_VERDICT_MISS);
    expect(&e, "the arch: 'sm_90' -> 'sm_90a'", "{\"input\": \"arch\"");
    asyncrt_cache_explanation_free(&e);
}

/* In the re-run program: the explanation of the plain link against cache
 * dir (argv), as JSON on stdout. */
static int explain_child(const char *dir, const char *main_path, const char *util_path)
{
    asyncrt_context *ctx = NULL;
    asyncrt_link *l = NULL;
    asyncrt_cache_explanation e = ASYNCRT_CACHE_EXPLANATION_INIT;
    asyncrt_status s = asyncrt_context_create(&ctx);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_context_set_cache_dir(ctx, dir);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_link_create(ctx, ARCH, &l);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_link_add_file(l, main_path, ASYNCRT_LINK_ANY);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_link_add_file(l, util_path, ASYNCRT_LINK_ANY);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_link_explain(l, 0, &e);
    if (s == ASYNCRT_SUCCESS) printf("%s\n%s\n", e.text, e.json);
    else fprintf(stderr, "%s: %s\n", asyncrt_status_string(s), asyncrt_context_last_error(ctx));
    asyncrt_cache_explanation_free(&e);
    asyncrt_link_destroy(l);
    asyncrt_context_destroy(ctx);
    return s == ASYNCRT_SUCCESS ? 0 : 1;
}

static void nvjitlinks_identity_is_named(void **state)
{
    fixture *f = *state;
    store_baseline(f->base.ctx, f);
    /* A wheel of NVRTC and nvJitLink 13.7 (neither is ever opened here). */
    char venv[700], lib[900], path[1100], cmd[4096], out[16384];
    snprintf(venv, sizeof venv, "%s/venv", f->base.dir);
    snprintf(lib, sizeof lib, "%s/lib/python3.12/site-packages/nvidia/cu13/lib", venv);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s/../../../nvidia_nvjitlink-13.7.0.dist-info' "
             "'%s/../../../nvidia_cuda_nvrtc-13.7.0.dist-info' && cp '%s' '%s/libnvrtc.so.13'",
             lib, lib, lib, FAKE_NVRTC_PATH, lib);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/libnvJitLink.so.13", lib);
    test_write_text(path, "not nvJitLink: explaining a link never opens it\n");
    snprintf(cmd, sizeof cmd,
             "ASYNCRT_NVRTC='%s/libnvrtc.so.13' FAKE_NVRTC_VERSION=13.7 VIRTUAL_ENV='%s' /proc/%d/exe --explain-child "
             "'%s' '%s' '%s' 2>&1", lib, venv, (int)getpid(), f->base.dir, f->main_path, f->util_path);
    int rc = test_shell(out, sizeof out, cmd);
    if (rc != 0 || !strstr(out, "nvJitLink's identity") || !strstr(out, path) || !strstr(out, "version 13.7.0") ||
        !strstr(out, "\"input\": \"nvjitlink\""))
        fail_msg("want nvJitLink's identity, %s and its version named (rc %d):\n%s", path, rc, out);
    char *cause = strstr(out, ": miss: nvJitLink's identity");
    if (!cause || strstr(out, "and 1 more")) fail_msg("want nvJitLink as the one difference:\n%s", out);
}

#ifdef ASYNCRT_CACHE_TOOL
/* asyncrt-cache explain with asyncrt-run's link options: the link asyncrt-run
 * made is a hit (the same key), and an nvJitLink option is named, in JSON too,
 * and by asyncrt-run -v as it links. */
static void the_tool_explains_asyncrt_runs_link(void **state)
{
    fixture *f = *state;
    char cmd[4096], out[32768];
    snprintf(cmd, sizeof cmd, "cp '%s/tests/link/kernels/main.cu' '%s/tests/link/kernels/util.cu' . && "
             "'%s' --arch " ARCH " --compile-only main.cu util.cu >/dev/null && "
             "'%s' --dir '%s' explain --arch " ARCH " main.cu util.cu",
             getenv("ASYNCRT_TEST_SOURCE_DIR"), getenv("ASYNCRT_TEST_SOURCE_DIR"), ASYNCRT_RUN_TOOL,
             ASYNCRT_CACHE_TOOL, f->base.dir);
    setenv("ASYNCRT_CACHE_DIR", f->base.dir, 1);
    int rc = test_shell_in(f->base.dir, out, sizeof out, "%s", cmd);
    if (rc != 0 || !strstr(out, "main.cu for " ARCH ": hit") || !strstr(out, "util.cu for " ARCH ": hit") ||
        !strstr(out, "link: main.cu util.cu for " ARCH ": hit"))
        fail_msg("want the compiles and the link hit (rc %d):\n%s", rc, out);
    snprintf(cmd, sizeof cmd, "'%s' --dir '%s' --json explain --arch " ARCH " -Xnvjitlink -O3 main.cu util.cu",
             ASYNCRT_CACHE_TOOL, f->base.dir);
    rc = test_shell_in(f->base.dir, out, sizeof out, "%s", cmd);
    const char *json = strstr(out, "{\"compiles\": "); /* the workers' sanitizer notes may come first */
    if (rc != 0 || !json || strncmp(json, "{\"compiles\": [{\"verdict\": \"hit\"", 31) ||
        !strstr(out, "\"link\": {\"verdict\": \"miss\", \"source\": \"link: main.cu util.cu\"") ||
        !strstr(out, "\"cause\": \"link option -O3 added (the one difference"))
        fail_msg("want the link's miss named in JSON (rc %d):\n%s", rc, out);
    /* asyncrt-run -v says the same as it links (explaining stored nothing: still a miss) */
    snprintf(cmd, sizeof cmd, "'%s' -v --arch " ARCH " --compile-only -Xnvjitlink -O3 main.cu util.cu", ASYNCRT_RUN_TOOL);
    rc = test_shell_in(f->base.dir, out, sizeof out, "%s", cmd);
    if (rc != 0 || !strstr(out, "asyncrt-run: link: why the cache missed: link option -O3 added"))
        fail_msg("want asyncrt-run -v to say why the link missed (rc %d):\n%s", rc, out);
}
#endif

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--explain-child")) return explain_child(argv[2], argv[3], argv[4]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_hit_says_so, setup, teardown),
        cmocka_unit_test_setup_teardown(a_link_option_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(an_inputs_content_is_named_with_its_digests, setup, teardown),
        cmocka_unit_test_setup_teardown(the_arch_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(nvjitlinks_identity_is_named, setup, teardown),
#ifdef ASYNCRT_CACHE_TOOL
        cmocka_unit_test_setup_teardown(the_tool_explains_asyncrt_runs_link, setup, teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
