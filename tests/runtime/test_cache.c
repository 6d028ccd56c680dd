/* The program cache: hits, misses, key sensitivity, damage, concurrency. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "test_support.h"

static const char *k_source =
    "#include \"scale.cuh\"\n"
    "extern \"C\" __global__ void scale(float *x, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] = FACTOR * x[i];\n"
    "}\n";

typedef struct fixture {
    char *dir;
    asyncrt_context *ctx;
    asyncrt_header header;
    const char *define;
    asyncrt_compile_options opts;
} fixture;

static asyncrt_context *new_context(const char *dir)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    return ctx;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_make_temp_dir("asyncrt-cache");
    f->ctx = new_context(f->dir);
    f->header = (asyncrt_header){"scale.cuh", "#define FACTOR 2.0f\n"};
    f->define = "UNUSED=1";
    f->opts = (asyncrt_compile_options){.size = sizeof(asyncrt_compile_options),
                                        .arch = "sm_80", .headers = &f->header, .header_count = 1,
                                        .defines = &f->define, .define_count = 1};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    asyncrt_context_destroy(f->ctx);
    test_remove_tree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Compiles k_source in ctx and returns where the program came from. */
static asyncrt_program_origin compile_origin(asyncrt_context *ctx, const asyncrt_compile_options *opts)
{
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "scale.cu", k_source, opts, &p));
    size_t size;
    assert_non_null(asyncrt_program_image(p, &size));
    assert_true(size > 0);
    asyncrt_program_origin origin = asyncrt_program_origin_of(p);
    asyncrt_program_destroy(p);
    return origin;
}

static char *only_entry(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s/*.bin", dir);
    FILE *ls = popen(cmd, "r");
    char *path = calloc(1, 1024);
    assert_non_null(fgets(path, 1024, ls));
    path[strcspn(path, "\n")] = '\0';
    char extra[1024];
    assert_null(fgets(extra, sizeof extra, ls));
    pclose(ls);
    return path;
}

/* File timestamps tick with the kernel's coarse clock: wait past a tick so
 * that a file just written is older than the next compile's start. */
static void settle(void)
{
    struct timespec pause = {0, 30 * 1000000L};
    nanosleep(&pause, NULL);
}

static void hit_in_memory_then_on_disk(void **state)
{
    fixture *f = *state;
    assert_int_equal(compile_origin(f->ctx, &f->opts), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_origin(f->ctx, &f->opts), ASYNCRT_ORIGIN_MEMORY_CACHE);
    asyncrt_context *fresh = new_context(f->dir);
    assert_int_equal(compile_origin(fresh, &f->opts), ASYNCRT_ORIGIN_DISK_CACHE);
    asyncrt_context_destroy(fresh);
}

static void any_change_to_an_input_misses(void **state)
{
    fixture *f = *state;
    assert_int_equal(compile_origin(f->ctx, &f->opts), ASYNCRT_ORIGIN_COMPILED);

    asyncrt_compile_options o = f->opts;
    asyncrt_header other = {"scale.cuh", "#define FACTOR 3.0f\n"};
    o.headers = &other;
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_COMPILED); /* header content */

    o = f->opts;
    const char *define = "UNUSED=2";
    o.defines = &define;
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_COMPILED); /* define */

    o = f->opts;
    const char *option = "-lineinfo";
    o.options = &option;
    o.option_count = 1;
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_COMPILED); /* option */

    o = f->opts;
    o.arch = "sm_86";
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_COMPILED); /* arch */

    o = f->opts;
    o.std = "c++20";
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_COMPILED); /* language standard */

    assert_int_equal(compile_origin(f->ctx, &f->opts), ASYNCRT_ORIGIN_MEMORY_CACHE); /* unchanged */
}

static void include_directory_contents_are_in_the_key(void **state)
{
    fixture *f = *state;
    char *inc = test_make_temp_dir("asyncrt-inc");
    char path[512];
    snprintf(path, sizeof path, "%s/scale.cuh", inc);
    FILE *h = fopen(path, "w");
    fputs("#define FACTOR 4.0f\n", h);
    fclose(h);
    settle(); /* a header changed at or after a compile began is not recorded */
    const char *dirs[] = {inc};
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_80", .include_dirs = dirs, .include_dir_count = 1};
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_MEMORY_CACHE);
    h = fopen(path, "w");
    fputs("#define FACTOR 5.0f\n", h);
    fclose(h);
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_COMPILED);
    settle();
    /* Recorded by the last compile, or (written in its first clock tick) by this one. */
    asyncrt_program_origin origin = compile_origin(f->ctx, &o);
    assert_true(origin == ASYNCRT_ORIGIN_COMPILED || origin == ASYNCRT_ORIGIN_MEMORY_CACHE);
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_MEMORY_CACHE);

    /* A header dated at or after the compile's start may have changed while
     * NVRTC read it: that compile is not cached, in memory or on disk. */
    h = fopen(path, "w");
    fputs("#define FACTOR 6.0f\n", h);
    fclose(h);
    struct timespec later[2] = {{time(NULL) + 60, 0}, {time(NULL) + 60, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, later, 0), 0);
    asyncrt_context_set_log_level(f->ctx, 1);
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_origin(f->ctx, &o), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_context_set_log_level(f->ctx, 0);
    test_remove_tree(inc);
    free(inc);
}

static void damage(const char *path, bool truncate_it)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    if (truncate_it) {
        assert_int_equal(truncate(path, st.st_size / 2), 0);
        return;
    }
    int fd = open(path, O_RDWR);
    unsigned char byte;
    off_t at = st.st_size - 100;
    assert_int_equal(pread(fd, &byte, 1, at), 1);
    byte ^= 0xFF;
    assert_int_equal(pwrite(fd, &byte, 1, at), 1);
    close(fd);
}

static void damaged_entries_are_recompiled_and_replaced(void **state)
{
    fixture *f = *state;
    assert_int_equal(compile_origin(f->ctx, &f->opts), ASYNCRT_ORIGIN_COMPILED);
    char *entry = only_entry(f->dir);
    for (int truncate_it = 0; truncate_it < 2; truncate_it++) {
        damage(entry, truncate_it);
        asyncrt_context *fresh = new_context(f->dir);
        assert_int_equal(compile_origin(fresh, &f->opts), ASYNCRT_ORIGIN_COMPILED);
        asyncrt_context_destroy(fresh);
        fresh = new_context(f->dir); /* the recompiled entry replaced the damaged one */
        assert_int_equal(compile_origin(fresh, &f->opts), ASYNCRT_ORIGIN_DISK_CACHE);
        asyncrt_context_destroy(fresh);
    }
    free(entry);
}

/* An entry whose seal holds (its digest, which whoever can write the
 * directory can compute) around a payload that is no program: the cache
 * hands it over, the compile layer refuses it (cache.h's refuse), and it is
 * logged, counted and replaced as a damaged file is, never a disk hit. */
static void an_entry_sealed_around_no_program_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_equal(compile_origin(f->ctx, &f->opts), ASYNCRT_ORIGIN_COMPILED);
    char *entry = only_entry(f->dir);
    const char *hex = strrchr(entry, '/') + 1;
    uint8_t key2[32];
    for (int i = 0; i < 32; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        key2[i] = (uint8_t)v;
    }
    static const unsigned char junk[] = "not a program";
    size_t size = 0;
    unsigned char *sealed = asyncrt__cache_entry_seal(junk, sizeof junk, key2, NULL, &size);
    assert_non_null(sealed);
    FILE *out = fopen(entry, "wb");
    assert_int_equal(fwrite(sealed, 1, size, out), size);
    fclose(out);
    asyncrt_context *fresh = new_context(f->dir);
    char *log = NULL;
    test_capture_begin();
    asyncrt_context_set_log_level(fresh, 1);
    assert_int_equal(compile_origin(fresh, &f->opts), ASYNCRT_ORIGIN_COMPILED);
    log = test_capture_end();
    assert_non_null(strstr(log, "discarding cache file"));
    assert_non_null(strstr(log, "cache entry payload is malformed"));
    asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
    assert_ok(fresh, asyncrt_context_cache_stats(fresh, &s));
    assert_int_equal(s.disk_hits, 0);
    assert_int_equal(s.rejected, 1);
    assert_int_equal(s.misses, 1);
    assert_int_equal(s.stores, 1);
    asyncrt_context_destroy(fresh);
    fresh = new_context(f->dir); /* the recompiled entry replaced the refused one */
    assert_int_equal(compile_origin(fresh, &f->opts), ASYNCRT_ORIGIN_DISK_CACHE);
    asyncrt_context_destroy(fresh);
    free(log);
    free(sealed);
    free(entry);
}

static void unwritable_directory_degrades_to_no_cache(void **state)
{
    fixture *f = *state;
    asyncrt_context *ctx = new_context("/proc/asyncrt-cannot-exist/cache");
    assert_int_equal(compile_origin(ctx, &f->opts), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_origin(ctx, &f->opts), ASYNCRT_ORIGIN_MEMORY_CACHE);
    asyncrt_context_destroy(ctx);
}

static void cache_off_always_compiles(void **state)
{
    fixture *f = *state;
    setenv("ASYNCRT_CACHE", "0", 1);
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    unsetenv("ASYNCRT_CACHE");
    assert_null(asyncrt_context_cache_dir(ctx));
    assert_int_equal(compile_origin(ctx, &f->opts), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_origin(ctx, &f->opts), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_context_destroy(ctx);
}

static void default_directory_follows_the_environment(void **state)
{
    (void)state;
    asyncrt_context *ctx;
    char *saved = getenv("ASYNCRT_CACHE_DIR") ? strdup(getenv("ASYNCRT_CACHE_DIR")) : NULL;
    unsetenv("ASYNCRT_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_string_equal(asyncrt_context_cache_dir(ctx), "/tmp/xdg-test/asyncrt");
    asyncrt_context_destroy(ctx);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/someone", 1);
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_string_equal(asyncrt_context_cache_dir(ctx), "/home/someone/.cache/asyncrt");
    asyncrt_context_destroy(ctx);
    setenv("ASYNCRT_CACHE_DIR", "/tmp/explicit", 1);
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_string_equal(asyncrt_context_cache_dir(ctx), "/tmp/explicit");
    asyncrt_context_destroy(ctx);
    if (saved) setenv("ASYNCRT_CACHE_DIR", saved, 1);
    else unsetenv("ASYNCRT_CACHE_DIR");
    free(saved);
}

/* Several processes compile the same and different sources into one cache
 * at once; every one must get a good program and leave only good entries. */
static void concurrent_writers_share_one_directory(void **state)
{
    fixture *f = *state;
    enum { WRITERS = 6, ROUNDS = 3 };
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            int bad = 0;
            for (int r = 0; r < ROUNDS; r++) {
                asyncrt_context *ctx = NULL;
                if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) _exit(2);
                asyncrt_context_set_cache_dir(ctx, f->dir);
                char define[32];
                snprintf(define, sizeof define, "VARIANT=%d", (w + r) % 3); /* shared and distinct keys */
                const char *defines[] = {define};
                asyncrt_compile_options o = f->opts;
                o.defines = defines;
                asyncrt_program *p = NULL;
                size_t size = 0;
                if (asyncrt_program_compile(ctx, "scale.cu", k_source, &o, &p) != ASYNCRT_SUCCESS ||
                    !asyncrt_program_image(p, &size) || size == 0)
                    bad++;
                asyncrt_program_destroy(p);
                asyncrt_context_destroy(ctx);
            }
            _exit(bad ? 1 : 0);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    /* Exactly the three variants' entries and manifests, each intact, and no temporaries
     * (beside them, side files: the source name's key records and their lock, compact images' loader memo). */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -c -v -e '[.]bin$' -e '[.]mf$' -e '^keys-' -e '^keys[.]lock$' -e '^ptxcompiler-.*[.]memo$'",
             f->dir);
    FILE *others = popen(cmd, "r");
    int stray = -1;
    assert_int_equal(fscanf(others, "%d", &stray), 1);
    pclose(others);
    assert_int_equal(stray, 0);
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -c '[.]bin$'", f->dir);
    FILE *ls = popen(cmd, "r");
    int files = 0;
    assert_int_equal(fscanf(ls, "%d", &files), 1);
    pclose(ls);
    assert_int_equal(files, 3);
    for (int v = 0; v < 3; v++) {
        asyncrt_context *ctx = new_context(f->dir);
        char define[32];
        snprintf(define, sizeof define, "VARIANT=%d", v);
        const char *defines[] = {define};
        asyncrt_compile_options o = f->opts;
        o.defines = defines;
        assert_int_equal(compile_origin(ctx, &o), ASYNCRT_ORIGIN_DISK_CACHE);
        asyncrt_context_destroy(ctx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(hit_in_memory_then_on_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(any_change_to_an_input_misses, setup, teardown),
        cmocka_unit_test_setup_teardown(include_directory_contents_are_in_the_key, setup, teardown),
        cmocka_unit_test_setup_teardown(damaged_entries_are_recompiled_and_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(an_entry_sealed_around_no_program_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(unwritable_directory_degrades_to_no_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(cache_off_always_compiles, setup, teardown),
        cmocka_unit_test(default_directory_follows_the_environment),
        cmocka_unit_test_setup_teardown(concurrent_writers_share_one_directory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
