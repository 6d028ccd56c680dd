/* asyncrt-cache warm / export / import, end to end on the CPU: warmed
 * entries are what a library compile finds; an export imports on another
 * cache; a tampered, foreign or symlinked file is refused on import. */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

static const char *k_kernels[] = {
    "extern \"C\" __global__ void w1(float *x) { x[threadIdx.x] += 1.0f; }\n",
    "extern \"C\" __global__ void w2(float *x) { x[threadIdx.x] *= 2.0f; }\n",
};

typedef struct fixture {
    char *root, *src[2], *cache_a, *cache_b, *export_dir;
} fixture;

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);
    snprintf(s, n, "%s/%s", a, b);
    return s;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->root = test_make_temp_dir("asyncrt-warm");
    /* Sources in their own directory: today's key hashes the whole include
     * directory (issue 12), which must not hold the caches. */
    char *src_dir = join(f->root, "src");
    mkdir(src_dir, 0700);
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof name, "src/w%d.cu", i + 1);
        f->src[i] = join(f->root, name);
        FILE *out = fopen(f->src[i], "w");
        fputs(k_kernels[i], out);
        fclose(out);
    }
    free(src_dir);
    f->cache_a = join(f->root, "cache-a");
    f->cache_b = join(f->root, "cache-b");
    f->export_dir = join(f->root, "export");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    test_remove_tree(f->root);
    free(f->root);
    free(f->src[0]);
    free(f->src[1]);
    free(f->cache_a);
    free(f->cache_b);
    free(f->export_dir);
    free(f);
    return 0;
}

/* asyncrt-cache with printf-style arguments. */
static int tool(char *out, size_t size, const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", ASYNCRT_CACHE_TOOL, args);
    return test_shell(out, size, cmd);
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strlen(e->d_name) == 68 && strstr(e->d_name, ".bin");
    if (d) closedir(d);
    return n;
}

/* What a library user compiling the same file (as asyncrt-run does) gets. */
static asyncrt_program_origin origin_in(const char *cache, const char *path, const char *arch)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, cache));
    char *copy = strdup(path), *dir = dirname(copy);
    const char *includes[] = {dir};
    asyncrt_compile_options o = {.size = sizeof o, .arch = arch, .include_dirs = includes, .include_dir_count = 1};
    char *source = strstr(path, "w1.cu") ? (char *)k_kernels[0] : (char *)k_kernels[1];
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, path, source, &o, &p));
    asyncrt_program_origin origin = asyncrt_program_origin_of(p);
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    free(copy);
    return origin;
}

static void warm_fills_what_a_compile_then_finds(void **state)
{
    fixture *f = *state;
    char out[16384];
    int rc = tool(out, sizeof out, "--dir '%s' warm --arch sm_80,compute_90,sm_80 --threads 3 '%s' '%s'",
                  f->cache_a, f->src[0], f->src[1]);
    if (rc != 0) fail_msg("warm: %d\n%s", rc, out);
    assert_non_null(strstr(out, "4 programs (4 compiled, 0 already cached, 0 failed)"));
    assert_int_equal(entries(f->cache_a), 4);
    rc = tool(out, sizeof out, "--dir '%s' warm --arch sm_80,compute_90 '%s' '%s'", f->cache_a,
              f->src[0], f->src[1]);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "(0 compiled, 4 already cached, 0 failed)"));
    assert_int_equal(origin_in(f->cache_a, f->src[0], "sm_80"), ASYNCRT_ORIGIN_DISK_CACHE);
    assert_int_equal(origin_in(f->cache_a, f->src[1], "compute_90"), ASYNCRT_ORIGIN_DISK_CACHE);
}

/* asyncrt-run --compile-only -v ARGS on the cache `dir` says it hit. */
static void assert_run_hits(const char *dir, const char *args)
{
    char out[16384], cmd[8192];
    snprintf(cmd, sizeof cmd, "ASYNCRT_CACHE_DIR='%s' '%s' --compile-only -v %s 2>&1", dir, ASYNCRT_RUN_TOOL, args);
    int rc = test_shell(out, sizeof out, cmd);
    if (rc != 0 || !strstr(out, "disk cache hit")) fail_msg("asyncrt-run %s: rc %d, no disk hit:\n%s", args, rc, out);
}

/* What warm fills is what asyncrt-run then looks up (issue 23, item 8): a
 * file's one kernel, extern "C" (no name expression, as the library's
 * default) or C++ (asyncrt-run's name for it); a file of several kernels
 * with --name as the run's --kernel. */
static void warm_fills_what_asyncrt_run_then_finds(void **state)
{
    fixture *f = *state;
    char *cpp = join(f->root, "src/ns.cu"), *two = join(f->root, "src/two.cu");
    FILE *out = fopen(cpp, "w");
    fputs("namespace ns { __global__ void scale(float *x) { x[threadIdx.x] *= 3.0f; } }\n", out);
    fclose(out);
    out = fopen(two, "w");
    fputs("extern \"C\" __global__ void first(float *x) { x[0] = 1.0f; }\n"
          "template <int N> __global__ void second(float *x) { x[0] = N; }\n", out);
    fclose(out);
    char text[16384];
    int rc = tool(text, sizeof text, "--dir '%s' warm --arch sm_80 '%s' '%s' '%s'", f->cache_a, f->src[0], f->src[1],
                  cpp);
    if (rc != 0) fail_msg("warm: %d\n%s", rc, text);
    char args[4096];
    snprintf(args, sizeof args, "--arch sm_80 '%s'", f->src[1]);
    assert_run_hits(f->cache_a, args);
    snprintf(args, sizeof args, "--arch sm_80 '%s'", cpp);
    assert_run_hits(f->cache_a, args);
    assert_int_equal(origin_in(f->cache_a, f->src[0], "sm_80"), ASYNCRT_ORIGIN_DISK_CACHE); /* the library's default */

    rc = tool(text, sizeof text, "--dir '%s' warm --arch sm_80 --name 'second<4>' --name first '%s'", f->cache_a, two);
    if (rc != 0) fail_msg("warm: %d\n%s", rc, text);
    snprintf(args, sizeof args, "--arch sm_80 '%s' --kernel 'second<4>' --then --kernel first", two);
    assert_run_hits(f->cache_a, args);
    free(cpp);
    free(two);
}

static void warm_reports_failures_and_usage(void **state)
{
    fixture *f = *state;
    char out[16384], *bad = join(f->root, "src/bad.cu");
    FILE *b = fopen(bad, "w");
    fputs("extern \"C\" __global__ void b(float *x) { x[0] = nope; }\n", b);
    fclose(b);
    int rc = tool(out, sizeof out, "--dir '%s' warm --arch sm_90 '%s' '%s'", f->cache_a, f->src[0], bad);
    assert_int_equal(rc, 3); /* a compile error, as in every tool */
    assert_non_null(strstr(out, "bad.cu for sm_90: ASYNCRT_ERROR_COMPILE"));
    assert_non_null(strstr(out, "nope"));
    assert_int_equal(entries(f->cache_a), 1); /* the good one is cached all the same */
    assert_int_equal(tool(out, sizeof out, "--dir '%s' warm --arch sm_90", f->cache_a), 2);
    assert_int_equal(tool(out, sizeof out, "--dir '%s' warm --arch volta '%s'", f->cache_a, f->src[0]), 2);
    assert_non_null(strstr(out, "'volta' is malformed"));
    assert_int_equal(tool(out, sizeof out, "--dir '%s' warm --threads 0 '%s'", f->cache_a, f->src[0]), 2);
    free(bad);
}

static void export_then_import_refuses_tampering(void **state)
{
    fixture *f = *state;
    char out[16384];
    assert_int_equal(tool(out, sizeof out, "--dir '%s' warm --arch sm_80,sm_90 '%s' '%s'", f->cache_a,
                          f->src[0], f->src[1]), 0);
    int rc = tool(out, sizeof out, "--dir '%s' export '%s'", f->cache_a, f->export_dir);
    if (rc != 0) fail_msg("export: %d\n%s", rc, out);
    assert_int_equal(entries(f->export_dir), 4); /* and their 4 manifests */

    /* Tamper with one entry's payload (its last byte), plant a foreign file
     * under a key name, a symlink, and a badly named file. */
    DIR *d = opendir(f->export_dir);
    char victim[80] = "", other[80] = "";
    for (struct dirent *e; (e = readdir(d));)
        if (strlen(e->d_name) == 68) memcpy(victim[0] ? other : victim, e->d_name, 69);
    closedir(d);
    char *victim_path = join(f->export_dir, victim);
    FILE *v = fopen(victim_path, "r+b");
    fseek(v, -1, SEEK_END);
    int c = fgetc(v);
    fseek(v, -1, SEEK_END);
    fputc(c ^ 0x5a, v);
    fclose(v);
    char *planted = join(f->export_dir, "0000000000000000000000000000000000000000000000000000000000000000.bin");
    FILE *p = fopen(planted, "w");
    fputs("ASYNCRTC this is not an entry", p);
    fclose(p);
    char *link = join(f->export_dir, "1111111111111111111111111111111111111111111111111111111111111111.bin");
    char *target = join(f->export_dir, other);
    assert_int_equal(symlink(target, link), 0);
    char *odd = join(f->export_dir, "notes.txt");
    p = fopen(odd, "w");
    fputs("hello", p);
    fclose(p);

    rc = tool(out, sizeof out, "--dir '%s' import '%s'", f->cache_b, f->export_dir);
    assert_int_equal(rc, 6); /* files failed the checks */
    assert_non_null(strstr(out, "imported 9 files")); /* 4 manifests, 3 entries, 2 source names' key records */
    char expect[160];
    snprintf(expect, sizeof expect, "refusing %s: ", victim);
    if (!strstr(out, expect)) fail_msg("no refusal of the tampered %s:\n%s", victim, out);
    assert_non_null(strstr(out, "refusing 0000000000000000000000000000000000000000000000000000000000000000.bin"));
    assert_non_null(strstr(out, "refusing 1111111111111111111111111111111111111111111111111111111111111111.bin: not a regular file"));
    assert_non_null(strstr(out, "refusing notes.txt: not named"));
    assert_int_equal(entries(f->cache_b), 3);
    struct stat st;
    char *stored = join(f->cache_b, other);
    assert_int_equal(lstat(stored, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 077, 0); /* written by our store, not copied with its mode */

    /* The imported entries are hits for a library compile on the other cache. */
    int hits = 0;
    const char *archs[] = {"sm_80", "sm_90"};
    for (int s = 0; s < 2; s++)
        for (int a = 0; a < 2; a++) hits += origin_in(f->cache_b, f->src[s], archs[a]) == ASYNCRT_ORIGIN_DISK_CACHE;
    assert_int_equal(hits, 3); /* the tampered one was compiled afresh */
    free(victim_path);
    free(planted);
    free(link);
    free(target);
    free(odd);
    free(stored);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(warm_fills_what_a_compile_then_finds, setup, teardown),
        cmocka_unit_test_setup_teardown(warm_fills_what_asyncrt_run_then_finds, setup, teardown),
        cmocka_unit_test_setup_teardown(warm_reports_failures_and_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(export_then_import_refuses_tampering, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
