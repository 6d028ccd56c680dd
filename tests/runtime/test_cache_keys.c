/* Key completeness, as a property over every include form: editing any file
 * a compile read makes the next lookup miss (in memory and on disk), and
 * putting it back hits again (the manifest keeps the older dependency set);
 * touching a file it read without changing it, editing an unrelated file and
 * creating a new one all still hit.
 *
 * Forms: quoted "../x.h" from the source's directory (paths relative to the
 * working directory), an absolute include, -I (include_dirs), --include-path
 * in raw options, the source's own directory given absolutely, a source with
 * no directory (stdin-like) reading from the working directory, a nested
 * include, and the toolkit's headers (a stand-in toolkit under CUDA_PATH). */
#define _DEFAULT_SOURCE /* CLOCK_REALTIME_COARSE, symlink */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base_internal.h"  /* asyncrt__format */
#include "cache_internal.h" /* dependency sets */
#include "test_support.h"

static char *g_root; /* the working directory of every case */

static void settle(void)
{
    /* Past a tick of the coarse clock that file timestamps come from: a
     * file changed at or after a compile began is not recorded. */
    struct timespec pause = {0, 30 * 1000000L};
    nanosleep(&pause, NULL);
}

static void write_text(const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_root, rel);
    for (char *slash = strchr(path + strlen(g_root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0700);
        *slash = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_root, rel);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *text = calloc(1, 4096);
    size_t n = fread(text, 1, 4095, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

typedef struct include_case {
    const char *what;
    const char *source_name;     /* %s: the root */
    const char *source;          /* %s: the root */
    const char *include_dir;     /* -I, %s: the root; NULL for none */
    const char *raw_option;      /* %s: the root; NULL for none */
    const char *files[3];        /* read by the compile, relative to the root */
    const char *unrelated;       /* in the same directory, never read */
    bool toolkit;                /* CUDA_PATH points at the stand-in toolkit */
} include_case;

static const include_case k_cases[] = {
    {"quoted ../ from the source's directory", "src/k.cu", "#include \"../inc/up.h\"\n", NULL, NULL,
     {"inc/up.h"}, "inc/notes.txt", false},
    {"absolute include", "k.cu", "#include \"%s/abs/abs.h\"\n", NULL, NULL, {"abs/abs.h"}, "abs/other.h", false},
    {"-I include_dirs", "k.cu", "#include <idir.h>\n", "%s/idir", NULL, {"idir/idir.h"}, "idir/unused.h", false},
    {"--include-path in raw options", "k.cu", "#include <ipath.h>\n", NULL, "--include-path=%s/ipath",
     {"ipath/ipath.h"}, "ipath/log.txt", false},
    {"the source's directory, absolute", "%s/srcdir/k.cu", "#include \"local.h\"\n", NULL, NULL,
     {"srcdir/local.h"}, "srcdir/data.bin", false},
    {"no directory: the working directory", "kernel.cu", "#include \"cwd.h\"\n", NULL, NULL, {"cwd.h"},
     "build.log", false},
    {"nested includes", "nest/k.cu", "#include \"outer.h\"\n", NULL, NULL, {"nest/outer.h", "nest/deep/inner.h"},
     "nest/deep/README", false},
    {"toolkit headers", "k.cu", "#include <cuda/barrier>\n", NULL, NULL, {"toolkit/include/cuda/barrier"},
     "toolkit/include/cuda/unrelated", true},
};

static void make_files(void)
{
    write_text("src/README", "the source of the first form is in memory; its directory is here\n");
    write_text("inc/up.h", "#define VALUE 1\n");
    write_text("inc/notes.txt", "notes\n");
    write_text("abs/abs.h", "#define VALUE 2\n");
    write_text("abs/other.h", "#error never included\n");
    write_text("idir/idir.h", "#define VALUE 3\n");
    write_text("idir/unused.h", "#error never included\n");
    write_text("ipath/ipath.h", "#define VALUE 4\n");
    write_text("ipath/log.txt", "log\n");
    write_text("srcdir/local.h", "#define VALUE 5\n");
    write_text("srcdir/data.bin", "data\n");
    write_text("cwd.h", "#define VALUE 6\n");
    write_text("build.log", "log\n");
    write_text("nest/outer.h", "#include \"deep/inner.h\"\n#define VALUE (INNER + 1)\n");
    write_text("nest/deep/inner.h", "#define INNER 7\n");
    write_text("nest/deep/README", "readme\n");
    write_text("toolkit/include/cuda/barrier", "#define VALUE 8\n");
    write_text("toolkit/include/cuda/unrelated", "unrelated\n");
    settle();
}

static char *fill(const char *fmt)
{
    return fmt ? asyncrt__format(fmt, g_root) : NULL; /* every %s is the root */
}

/* Compiles the case in ctx (a fresh one when ctx is NULL) and returns the origin. */
static asyncrt_program_origin compile_case(asyncrt_context *ctx, const include_case *c, const char *cache_dir)
{
    bool fresh = ctx == NULL;
    if (fresh) {
        assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
        assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, cache_dir));
    }
    char *name = fill(c->source_name), *include = fill(c->source), *dir = fill(c->include_dir),
         *option = fill(c->raw_option);
    char *source = asyncrt__format("%s\nextern \"C\" __global__ void k(int *x) { x[0] = VALUE; }\n", include);
    const char *dirs[] = {dir}, *options[] = {option};
    asyncrt_compile_options o = {.size = sizeof o,
                                 .arch = "compute_80", .include_dirs = dirs, .include_dir_count = dir ? 1 : 0,
                                 .options = options, .option_count = option ? 1 : 0};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, name, source, &o, &p));
    asyncrt_program_origin origin = asyncrt_program_origin_of(p);
    asyncrt_program_destroy(p);
    if (fresh) asyncrt_context_destroy(ctx);
    free(name), free(include), free(dir), free(option), free(source);
    return origin;
}

static void each_form(const include_case *c)
{
    char *cache = test_make_temp_dir("asyncrt-keys-cache");
    char *toolkit = asyncrt__format("%s/toolkit", g_root);
    if (c->toolkit) setenv("CUDA_PATH", toolkit, 1);
    else unsetenv("CUDA_PATH");
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, cache));
    print_message("form: %s\n", c->what);

    assert_int_equal(compile_case(ctx, c, cache), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_case(ctx, c, cache), ASYNCRT_ORIGIN_MEMORY_CACHE);
    assert_int_equal(compile_case(NULL, c, cache), ASYNCRT_ORIGIN_DISK_CACHE);

    /* Unrelated files: edited, and a new one created beside the headers. */
    char *old = read_text(c->unrelated);
    char *edited = asyncrt__format("%sedited\n", old);
    write_text(c->unrelated, edited);
    char *created = asyncrt__format("%s.new", c->unrelated);
    write_text(created, "new\n");
    settle();
    assert_int_equal(compile_case(ctx, c, cache), ASYNCRT_ORIGIN_MEMORY_CACHE);
    assert_int_equal(compile_case(NULL, c, cache), ASYNCRT_ORIGIN_DISK_CACHE);
    free(old), free(edited), free(created);

    for (size_t i = 0; i < 3 && c->files[i]; i++) {
        /* Touched, content unchanged: the stat differs, the hash does not. */
        char *text = read_text(c->files[i]);
        write_text(c->files[i], text);
        settle();
        assert_int_equal(compile_case(ctx, c, cache), ASYNCRT_ORIGIN_MEMORY_CACHE);
        assert_int_equal(compile_case(NULL, c, cache), ASYNCRT_ORIGIN_DISK_CACHE);

        /* Edited: a miss in this context and in a fresh one. */
        char *changed = asyncrt__format("%s// edit %zu\n", text, i);
        write_text(c->files[i], changed);
        settle();
        assert_int_equal(compile_case(ctx, c, cache), ASYNCRT_ORIGIN_COMPILED);
        write_text(c->files[i], text); /* and back, then edited once more, for a fresh context */
        settle();
        assert_int_equal(compile_case(NULL, c, cache), ASYNCRT_ORIGIN_DISK_CACHE); /* the older set */
        free(changed);
        changed = asyncrt__format("%s// other edit %zu\n", text, i);
        write_text(c->files[i], changed);
        settle();
        assert_int_equal(compile_case(NULL, c, cache), ASYNCRT_ORIGIN_COMPILED);
        write_text(c->files[i], text);
        settle();
        assert_int_equal(compile_case(ctx, c, cache), ASYNCRT_ORIGIN_MEMORY_CACHE);
        free(changed);
        free(text);
    }
    asyncrt_context_destroy(ctx);
    unsetenv("CUDA_PATH");
    test_remove_tree(cache);
    free(cache);
    free(toolkit);
}

static void every_include_form_is_in_the_key(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) each_form(&k_cases[i]);
}

/* A source with no directory reads "cwd.h" from wherever the process runs:
 * another working directory with another cwd.h must not reuse the program. */
static void another_working_directory_is_another_dependency(void **state)
{
    (void)state;
    char *cache = test_make_temp_dir("asyncrt-keys-cache");
    char *other = test_make_temp_dir("asyncrt-keys-cwd");
    char path[512];
    snprintf(path, sizeof path, "%s/cwd.h", other);
    FILE *f = fopen(path, "w");
    fputs("#define VALUE 6\n", f); /* the same text: content decides, yet the set records its cwd */
    fclose(f);
    settle();
    const include_case *c = &k_cases[5];
    assert_int_equal(compile_case(NULL, c, cache), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(chdir(other), 0);
    assert_int_equal(compile_case(NULL, c, cache), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_case(NULL, c, cache), ASYNCRT_ORIGIN_DISK_CACHE);
    assert_int_equal(chdir(g_root), 0);
    assert_int_equal(compile_case(NULL, c, cache), ASYNCRT_ORIGIN_DISK_CACHE); /* both sets kept */
    test_remove_tree(cache);
    test_remove_tree(other);
    free(cache);
    free(other);
}

/* A source given as a string (no directory) with #include "cfg.h", whose
 * first place to look is the working directory, then the -I folder. Two
 * layouts, each compiled in one folder then the other, both orders, each
 * compile expecting its own folder's value: (1) a relative -I inc, each
 * folder with its own inc/cfg.h; (2) one absolute -I folder with cfg.h, and
 * a second working folder holding a cfg.h of its own, which wins there (the
 * first folder's compile looked for it in vain, which leaves no trace). */
static char *compile_here(const char *cache, const char *include_dir, asyncrt_program_origin *origin)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, cache));
    const char *dirs[] = {include_dir};
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_80", .include_dirs = dirs, .include_dir_count = 1};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "stdin", "#include \"cfg.h\"\n"
                                           "extern \"C\" __global__ void k(int *x) { x[0] = VALUE; }\n", &o, &p));
    *origin = asyncrt_program_origin_of(p);
    size_t size = 0;
    const char *image = asyncrt_program_image(p, &size);
    char *ptx = asyncrt__format("%.*s", (int)size, image);
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    return ptx;
}

static void each_working_directory_sees_its_own_headers(void **state)
{
    (void)state;
    write_text("A/inc/cfg.h", "#define VALUE 123111\n");
    write_text("B/inc/cfg.h", "#define VALUE 456222\n");
    write_text("shared/cfg.h", "#define VALUE 789333\n");
    write_text("C/README", "no cfg.h here: the shared one is read\n");
    write_text("D/cfg.h", "#define VALUE 999444\n");
    settle();
    char *shared = asyncrt__format("%s/shared", g_root);
    const struct { const char *dirs[2], *values[2], *include; } layouts[] = {
        {{"A", "B"}, {"123111", "456222"}, "inc"},
        {{"C", "D"}, {"789333", "999444"}, shared},
    };
    for (int l = 0; l < 2; l++)
        for (int order = 0; order < 2; order++) {
            char *cache = test_make_temp_dir("asyncrt-keys-cache");
            for (int pass = 0; pass < 2; pass++) /* compiled, then from the disk cache */
                for (int i = 0; i < 2; i++) {
                    int which = i ^ order;
                    char *dir = asyncrt__format("%s/%s", g_root, layouts[l].dirs[which]);
                    assert_int_equal(chdir(dir), 0);
                    asyncrt_program_origin origin;
                    char *ptx = compile_here(cache, layouts[l].include, &origin);
                    print_message("in %s (order %d, pass %d): origin %d\n", layouts[l].dirs[which], order, pass,
                                  (int)origin);
                    if (!strstr(ptx, layouts[l].values[which]))
                        fail_msg("in %s: the program lacks %s (another folder's header)", layouts[l].dirs[which],
                                 layouts[l].values[which]);
                    assert_int_equal(origin, pass ? ASYNCRT_ORIGIN_DISK_CACHE : ASYNCRT_ORIGIN_COMPILED);
                    free(ptx);
                    free(dir);
                }
            assert_int_equal(chdir(g_root), 0);
            test_remove_tree(cache);
            free(cache);
        }
    free(shared);
}

/* A folder or a symbolic link on the way to a header, switched by rename
 * while the compile ran, may have served NVRTC the other version: the
 * dependency set is refused. A folder merely written into is not a switch. */
static void a_folder_or_link_switched_during_the_compile_is_not_recorded(void **state)
{
    (void)state;
    write_text("sw/v1/x.h", "#define VALUE 1\n");
    write_text("sw/v2/x.h", "#define VALUE 2\n");
    write_text("sw/dir/x.h", "#define VALUE 1\n");
    write_text("sw/dir2/x.h", "#define VALUE 2\n");
    write_text("sw/h1.h", "#define VALUE 1\n");
    write_text("sw/h2.h", "#define VALUE 2\n");
    char *v1 = asyncrt__format("%s/sw/v1", g_root), *v2 = asyncrt__format("%s/sw/v2", g_root);
    char *link = asyncrt__format("%s/sw/inc", g_root), *next = asyncrt__format("%s/sw/next", g_root);
    char *dir = asyncrt__format("%s/sw/dir", g_root), *dir2 = asyncrt__format("%s/sw/dir2", g_root);
    char *old = asyncrt__format("%s/sw/dir.old", g_root);
    char *hdr = asyncrt__format("%s/sw/hdr.h", g_root), *hnext = asyncrt__format("%s/sw/hnext.h", g_root);
    assert_int_equal(symlink(v1, link), 0);
    assert_int_equal(symlink(v2, next), 0);
    assert_int_equal(symlink("h1.h", hdr), 0);
    assert_int_equal(symlink("h2.h", hnext), 0);
    settle();
    char *paths[] = {asyncrt__format("%s/x.h", link), asyncrt__format("%s/x.h", dir), strdup(hdr)};
    const uint8_t key1[32] = {1};
    for (int step = 0; step < 4; step++) {
        struct timespec start;
        settle(); /* the last step's switch is older than this one's start */
        clock_gettime(CLOCK_REALTIME_COARSE, &start);
        settle();
        if (step == 0) write_text("sw/dir/unrelated.txt", "x\n"); /* written into: still recorded */
        if (step == 1) assert_int_equal(rename(next, link), 0);   /* mv -T next inc */
        if (step == 2) {                                          /* the folder swapped for another */
            assert_int_equal(rename(dir, old), 0);
            assert_int_equal(rename(dir2, dir), 0);
        }
        if (step == 3) assert_int_equal(rename(hnext, hdr), 0); /* the header itself: ln -sfn h2.h hdr.h */
        for (int k = 0; k < 3; k++) {
            const char *const *headers = (const char *const *)&paths[k];
            asyncrt_dep_set set;
            char why[512] = "";
            bool recorded = asyncrt__dep_set_record(headers, 1, NULL, 0, NULL, &start, key1, &set, why, sizeof why);
            bool switched = (step == 1 && k == 0) || (step == 2 && k == 1) || (step == 3 && k == 2);
            print_message("step %d, %s: %s\n", step, paths[k], recorded ? "recorded" : why);
            assert_int_equal(recorded, !switched);
            if (recorded) asyncrt__dep_set_free(&set);
            else assert_non_null(strstr(why, "was replaced while"));
        }
    }
    free(paths[0]), free(paths[1]), free(paths[2]), free(v1), free(v2), free(link), free(next), free(dir), free(dir2);
    free(old), free(hdr), free(hnext);
}

/* __has_include probes leave no trace: a probe that failed would not notice
 * the file appearing later. So a compile whose source, in-memory header or
 * (non-toolkit) disk header uses one is never cached. */
static void has_include_is_never_cached(void **state)
{
    (void)state;
    char *cache = test_make_temp_dir("asyncrt-keys-cache");
    write_text("probe/probe.h", "#if __has_include(\"optional.h\")\n#include \"optional.h\"\n#endif\n#define VALUE 9\n");
    settle();
    const include_case disk = {"disk header probing", "k.cu", "#include <probe.h>\n", "%s/probe", NULL, {NULL}, NULL,
                               false};
    const include_case source = {"source probing", "k.cu", "#if __has_include(<nothing.h>)\n#endif\n#define VALUE 1\n",
                                 NULL, NULL, {NULL}, NULL, false};
    const include_case *cases[] = {&disk, &source};
    for (int i = 0; i < 2; i++) {
        asyncrt_context *ctx;
        assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
        assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, cache));
        assert_int_equal(compile_case(ctx, cases[i], cache), ASYNCRT_ORIGIN_COMPILED);
        assert_int_equal(compile_case(ctx, cases[i], cache), ASYNCRT_ORIGIN_COMPILED);
        asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
        asyncrt_context_cache_stats(ctx, &s);
        assert_int_equal(s.stores, 0);
        asyncrt_context_destroy(ctx);
    }
    test_remove_tree(cache);
    free(cache);
}

int main(void)
{
    g_root = test_make_temp_dir("asyncrt-keys");
    if (chdir(g_root) != 0) return 1;
    make_files();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_include_form_is_in_the_key),
        cmocka_unit_test(another_working_directory_is_another_dependency),
        cmocka_unit_test(each_working_directory_sees_its_own_headers),
        cmocka_unit_test(a_folder_or_link_switched_during_the_compile_is_not_recorded),
        cmocka_unit_test(has_include_is_never_cached),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    test_remove_tree(g_root);
    free(g_root);
    return rc;
}
