/* asyncrt-cache on a real cache: every command, its --help, --json and
 * --version, its exit codes (the shared table: 0 good, 2 usage, 6 bad files,
 * 7 no usable directory). The tool's path
 * comes from ASYNCRT_CACHE_TOOL (set by CMake). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base_internal.h" /* asyncrt__format */
#include "test_support.h"

static char *g_dir;

/* Runs the tool with `args` under `env` (NAME=VALUE ..., for env(1)); returns
 * its exit code, its stdout+stderr in *out. */
static int tool_in(const char *env, const char *args, char **out)
{
    char *cmd = asyncrt__format("env %s '%s' %s 2>&1", env, getenv("ASYNCRT_CACHE_TOOL"), args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *text = calloc(1, 1 << 16);
    size_t n = fread(text, 1, (1 << 16) - 1, p);
    text[n] = '\0';
    int status = pclose(p);
    free(cmd);
    if (out) *out = text;
    else free(text);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void expect_in(const char *env, const char *args, int code, const char *needle)
{
    char *out = NULL;
    int rc = tool_in(env, args, &out);
    if (rc != code || (needle && !strstr(out, needle)))
        fail_msg("%s asyncrt-cache %s: exit %d (expected %d), output:\n%s\n(expected \"%s\")", env, args, rc, code,
                 out, needle ? needle : "");
    free(out);
}

static void expect(const char *args, int code, const char *needle) { expect_in("", args, code, needle); }

/* One compile into the cache, in a fresh context. */
static void compile_into_cache(const char *source, const asyncrt_compile_options *o)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, g_dir));
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "k.cu", source, o, &p));
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
}

static void populate(int count)
{
    for (int v = 0; v < count; v++) {
        char define[32];
        snprintf(define, sizeof define, "VALUE=%d", v);
        const char *defines[] = {define};
        asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_80", .defines = defines, .define_count = 1};
        compile_into_cache("extern \"C\" __global__ void k(int *x) { *x = VALUE; }", &o);
    }
}

static char *first_entry(void)
{
    char *cmd = asyncrt__format("ls %s/*.bin | head -1", g_dir);
    FILE *ls = popen(cmd, "r");
    char *path = calloc(1, 1024);
    assert_non_null(fgets(path, 1024, ls));
    path[strcspn(path, "\n")] = '\0';
    pclose(ls);
    free(cmd);
    return path;
}

static void every_command_on_a_real_cache(void **state)
{
    (void)state;
    g_dir = test_make_temp_dir("asyncrt-cache-tool");
    char *dir = asyncrt__format("--dir %s", g_dir);
    char *args = NULL;
    populate(3);

#define RUN(code, needle, fmt) \
    do { args = asyncrt__format(fmt, dir); expect(args, code, needle); free(args); } while (0)
    RUN(0, "entries    3", "%s stats");
    RUN(0, "manifests  3", "%s stats");
    RUN(0, "3 entries, 3 manifests", "%s list");
    /* What each entry is for, from what it stores. */
    RUN(0, "k.cu for compute_80 (PTX); options -std=c++17 -default-device -DVALUE=2\n", "%s list");
    RUN(0, "1 dependency set, 0 files read; the newest is entry ", "%s list");
    RUN(0, "\"source\": \"k.cu\", \"arch\": \"compute_80\", \"ptx\": true, \"names\": [], "
           "\"options\": \"-std=c++17 -default-device -DVALUE=1\"}", "%s list --json");
    RUN(0, "\"entries\": 3,", "%s --json list");
    RUN(0, "\"manifests\": 3,", "%s --json stats");
    RUN(0, "\"checked\": 6,", "%s verify --json");
    RUN(0, "6 files verified: 0 bad", "%s verify");

    /* A damaged entry: named by verify (exit 1), then deleted (exit 0). */
    char *entry = first_entry();
    FILE *f = fopen(entry, "r+");
    fseek(f, -10, SEEK_END);
    fputc('!', f);
    fclose(f);
    const char *name = strrchr(entry, '/') + 1;
    RUN(6, "checksum mismatch", "%s verify");
    RUN(6, name, "%s verify");
    RUN(0, "(cannot be read: cache entry: checksum mismatch (damaged))", "%s list");
    RUN(6, "\"why\": \"cache entry: checksum mismatch (damaged)\", \"deleted\": false}", "%s verify --json");
    RUN(0, "(deleted)", "%s verify --delete");
    assert_int_equal(access(entry, F_OK), -1);
    RUN(0, "5 files verified: 0 bad", "%s verify");

    /* A header edited since: "out of date", not bad. */
    RUN(0, "0 dependency sets out of date", "%s verify");
    char *inc = test_make_temp_dir("asyncrt-cache-tool-inc");
    char *header = asyncrt__format("%s/value.h", inc);
    f = fopen(header, "w");
    fputs("#define VALUE 42\n", f);
    fclose(f);
    struct timespec pause = {0, 30 * 1000000L}; /* older than the compile's start, or it is not recorded */
    nanosleep(&pause, NULL);
    const char *dirs[] = {inc};
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_80", .include_dirs = dirs, .include_dir_count = 1};
    compile_into_cache("#include <value.h>\nextern \"C\" __global__ void k(int *x) { *x = VALUE; }", &o);
    RUN(0, "7 files verified: 0 bad; 0 dependency sets out of date", "%s verify");
    f = fopen(header, "w");
    fputs("#define VALUE 43\n", f);
    fclose(f);
    RUN(0, "7 files verified: 0 bad; 1 dependency sets out of date", "%s verify");
    test_remove_tree(inc);
    free(inc);
    free(header);

    /* prune: an entry goes with its manifest, so down to the newest one
     * (each takes under 1 KiB with its manifest) leaves one of each; a cap
     * below that one is refused, nothing evicted. Then clear. */
    RUN(2, "is smaller than the newest entry with its manifest", "%s prune --max-bytes 0");
    RUN(0, "entries    3", "%s stats");
    RUN(0, "evicted 5 files", "%s prune --max-bytes 1K");
    RUN(0, "entries    1", "%s stats");
    RUN(0, "manifests  1", "%s stats");
    RUN(0, "2 files verified: 0 bad", "%s verify");
    populate(2);
    RUN(0, "removed 7 files", "%s clear"); /* with the key records */
    RUN(0, "0 entries, 0 manifests", "%s list");

    /* Usage errors. */
    RUN(2, "--max-bytes N is required", "%s prune");
    RUN(2, "is not a size", "%s prune --max-bytes lots");
    RUN(2, "unknown option", "%s verify --frobnicate");
    RUN(2, "unexpected argument", "%s stats extra");
    expect("bogus", 2, "unknown command 'bogus' (see asyncrt-cache --help)");
    expect("", 2, "no command given");
    expect("--dir", 2, "--dir needs a value");
    expect("--frobnicate", 2, "unknown option '--frobnicate'");

    /* Help, everywhere. */
    expect("--help", 0, "Exit codes (the same for asyncrt-run, asyncrt-probe, asyncrt-bench,\nasyncrt-cache and asyncrt-bundle)");
    expect("--version", 0, "asyncrt-cache " ASYNCRT_VERSION_STRING " (libasyncrt ");
    const char *commands[] = {"stats", "list", "verify", "prune", "clear"};
    for (int i = 0; i < 5; i++) {
        args = asyncrt__format("%s --help", commands[i]);
        char *needle = asyncrt__format("usage: asyncrt-cache [--dir DIR] %s", commands[i]);
        expect(args, 0, needle);
        free(args);
        free(needle);
    }

    /* No usable directory: missing; writable by others (verify refuses, stats notes it). */
    expect("--dir /nonexistent/asyncrt-cache stats", 7, "no cache directory at");
    expect("--json --dir /nonexistent/asyncrt-cache stats", 7, "\"exit_code\": 7");
    assert_int_equal(chmod(g_dir, 0777), 0);
    RUN(7, "writable by others", "%s verify");
    RUN(7, "would not use", "%s clear");
    RUN(7, "NOT used by the library", "%s stats"); /* shown, and not trusted: 7, as --help says */
    RUN(7, "writable by others", "%s stats");
    RUN(7, "\"trusted\": false", "--json %s stats");
    RUN(7, "does not use this directory", "%s list");
    assert_int_equal(chmod(g_dir, 0700), 0);
#undef RUN
    free(entry);
    free(dir);
    test_remove_tree(g_dir);
    free(g_dir);
}

/* The directory, cap and shared mode come from the library's own reading of
 * ASYNCRT_CACHE, ASYNCRT_CACHE_DIR, ASYNCRT_CACHE_MAX_BYTES and
 * ASYNCRT_CACHE_SHARED (cache_config.h), not from a second one. */
static void reads_the_library_settings(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("asyncrt-cache-env");
    char *env = asyncrt__format("ASYNCRT_CACHE_DIR=%s", dir);
    expect_in(env, "--json stats", 0, "\"cap_bytes\": 1073741824,\n  \"cap_env_malformed\": false");
    char *quoted = asyncrt__format("\"directory\": \"%s\"", dir);
    expect_in(env, "--json stats", 0, quoted);
    free(env);
    env = asyncrt__format("ASYNCRT_CACHE_DIR=%s ASYNCRT_CACHE_MAX_BYTES=512M", dir);
    expect_in(env, "--json stats", 0, "\"cap_bytes\": 536870912,\n  \"cap_env_malformed\": false");
    free(env);
    env = asyncrt__format("ASYNCRT_CACHE_DIR=%s ASYNCRT_CACHE_MAX_BYTES=lots", dir);
    expect_in(env, "stats", 0, "(ASYNCRT_CACHE_MAX_BYTES is malformed; the default shown)");
    free(env);
    /* Shared mode wants a group-writable setgid folder: this private one is refused, and said so. */
    env = asyncrt__format("ASYNCRT_CACHE_DIR=%s ASYNCRT_CACHE_SHARED=1", dir);
    expect_in(env, "--json stats", 0, "\"shared\": true");
    free(env);
    expect_in("ASYNCRT_CACHE=0", "stats", 7, "caching is off (ASYNCRT_CACHE=0)");
    free(quoted);
    test_remove_tree(dir);
    free(dir);
}

int main(void)
{
    if (!getenv("ASYNCRT_CACHE_TOOL")) {
        fprintf(stderr, "test_cache_tool: set ASYNCRT_CACHE_TOOL to asyncrt-cache's path\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_command_on_a_real_cache),
                                       cmocka_unit_test(reads_the_library_settings)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
