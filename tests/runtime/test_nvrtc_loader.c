#define _GNU_SOURCE /* realpath */
/* NVRTC is found at run time: the search order, the choice between majors,
 * and (one process per case, ASYNCRT_NVRTC_CASE) what a compile says when the
 * override names a missing file, a library lacking symbols, or the real one. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "target.h"
#include "nvrtc_facts.h"
#include "link_jit.h"
#include "nvrtc_loader.h"
#include "self_file.h"
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

static int find(const asyncrt_lib_candidate *c, size_t n, const char *suffix)
{
    for (size_t i = 0; i < n; i++) {
        size_t a = strlen(c[i].path), b = strlen(suffix);
        if (a >= b && strcmp(c[i].path + a - b, suffix) == 0) return (int)i;
    }
    return -1;
}

static void assert_version(const asyncrt_lib_candidate *c, const char *version, const char *from)
{
    char text[32];
    asyncrt__lib_version_format(&c->version, text, sizeof text);
    if (strcmp(text, version) != 0 || strcmp(c->version_from, from) != 0)
        fail_msg("%s: version %s from '%s', expected %s from '%s'", c->path, text, c->version_from, version, from);
}

/* A machine with six NVRTCs: wheels in a virtual environment (13.5.37), the
 * user's site-packages (13.2.86) and the system's (CUDA 12's layout,
 * 12.8.93), the set-up's folder (13.1.115), a toolkit under $CUDA_PATH (13.0,
 * known from its builtins) and one under $CUDA_HOME (12.4.99, from its file
 * name); the build's toolkit is $CUDA_PATH's again. */
typedef struct machine {
    char *root;
    char venv[4096], home[4096], usr_lib[4096], setup[4096], cuda_path[4096], cuda_home[4096], build[4200];
    const char *system[2];
} machine;

static void make_machine(machine *m)
{
    m->root = test_make_temp_dir("nvrtc-search");
    const char *r = m->root;
    snprintf(m->venv, sizeof m->venv, "%s/venv", r);
    snprintf(m->home, sizeof m->home, "%s/home", r);
    snprintf(m->usr_lib, sizeof m->usr_lib, "%s/usr/lib", r);
    snprintf(m->setup, sizeof m->setup, "%s/checkout/.pip", r);
    snprintf(m->cuda_path, sizeof m->cuda_path, "%s/cp", r);
    snprintf(m->cuda_home, sizeof m->cuda_home, "%s/ch", r);
    snprintf(m->build, sizeof m->build, "%s/lib64", m->cuda_path);
    touch(m->venv, "lib/python3.11/site-packages/nvidia/cu13/lib", "libnvrtc.so.13");
    touch(m->venv, "lib/python3.11/site-packages/nvidia/cu13/lib", "libnvrtc-builtins.so.13.5");
    touch(m->venv, "lib/python3.11/site-packages/nvidia_cuda_nvrtc-13.5.37.dist-info", "METADATA");
    touch(m->home, ".local/lib/python3.12/site-packages/nvidia/cu13/lib", "libnvrtc.so.13");
    touch(m->home, ".local/lib/python3.12/site-packages/nvidia_cuda_nvrtc-13.2.86.dist-info", "METADATA");
    touch(m->home, ".local/lib/python3.12/site-packages/nvidia/cu13/lib", "libnvJitLink.so.13");
    touch(m->home, ".local/lib/python3.12/site-packages/nvidia_nvjitlink-13.2.86.dist-info", "METADATA");
    touch(m->usr_lib, "python3/dist-packages/nvidia/cuda_nvrtc/lib", "libnvrtc.so.12");
    touch(m->usr_lib, "python3/dist-packages/nvidia_cuda_nvrtc_cu12-12.8.93.dist-info", "METADATA");
    touch(m->setup, "nvidia/cu13/lib", "libnvrtc.so.13");
    touch(m->setup, "nvidia/cu13/lib", "libnvJitLink.so.13");
    touch(m->setup, "nvidia_cuda_nvrtc-13.1.115.dist-info", "METADATA");
    touch(m->setup, "nvidia_nvjitlink-13.1.115.dist-info", "METADATA");
    touch(m->cuda_path, "lib64", "libnvrtc.so.13");
    touch(m->cuda_path, "lib64", "libnvrtc-builtins.so.13.0");
    touch(m->cuda_path, "lib64", "libnvrtc-builtins.alt.so.13.0");
    touch(m->cuda_path, "lib64", "libnvJitLink.so.13");
    touch(m->cuda_home, "lib", "libnvrtc.so.12.4.99");
    char link[4200], target[4200];
    snprintf(link, sizeof link, "%s/lib/libnvrtc.so.12", m->cuda_home);
    snprintf(target, sizeof target, "libnvrtc.so.12.4.99");
    assert_int_equal(symlink(target, link), 0);
    m->system[0] = m->usr_lib;
    m->system[1] = NULL;
}

static asyncrt_lib_search search_of(const machine *m)
{
    return (asyncrt_lib_search){.virtual_env = m->venv, .home = m->home, .system_libdirs = m->system,
                                .setup_dir = m->setup, .cuda_path = m->cuda_path, .cuda_home = m->cuda_home,
                                .build_libdir = m->build};
}

static void every_place_is_searched_in_the_documented_order(void **state)
{
    (void)state;
    machine m;
    make_machine(&m);
    asyncrt_lib_search s = search_of(&m);
    asyncrt_lib_candidate c[ASYNCRT_LIB_MAX_CANDIDATES];
    char searched[2048];
    size_t n = asyncrt__lib_candidates(ASYNCRT_LIB_NVRTC, &s, c, ASYNCRT_LIB_MAX_CANDIDATES, searched, sizeof searched);
    /* the six files (the build's toolkit is $CUDA_PATH's, listed once), then the two sonames */
    assert_int_equal(n, 8);
    assert_int_equal(find(c, n, "venv/lib/python3.11/site-packages/nvidia/cu13/lib/libnvrtc.so.13"), 0);
    assert_int_equal(find(c, n, "home/.local/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13"), 1);
    assert_int_equal(find(c, n, "usr/lib/python3/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"), 2);
    assert_int_equal(find(c, n, "checkout/.pip/nvidia/cu13/lib/libnvrtc.so.13"), 3);
    assert_int_equal(find(c, n, "cp/lib64/libnvrtc.so.13"), 4);
    assert_int_equal(find(c, n, "ch/lib/libnvrtc.so.12"), 5);
    assert_string_equal(c[6].path, "libnvrtc.so.13");
    assert_string_equal(c[7].path, "libnvrtc.so.12");
    assert_string_equal(c[0].step, "a wheel in $VIRTUAL_ENV");
    assert_string_equal(c[1].step, "a wheel in the user's site-packages");
    assert_string_equal(c[2].step, "a wheel in the system's site-packages");
    assert_string_equal(c[3].step, "the set-up's folder");
    assert_string_equal(c[4].step, "$CUDA_PATH");
    assert_string_equal(c[5].step, "$CUDA_HOME");
    assert_string_equal(c[6].step, "the dynamic loader");
    /* Each version, and what told it, without opening anything. */
    assert_version(&c[0], "13.5.37", "its wheel's dist-info");
    assert_version(&c[1], "13.2.86", "its wheel's dist-info");
    assert_version(&c[2], "12.8.93", "its wheel's dist-info");
    assert_version(&c[3], "13.1.115", "its wheel's dist-info");
    assert_version(&c[4], "13.0", "the libnvrtc-builtins beside it");
    assert_version(&c[5], "12.4.99", "its file name");
    assert_version(&c[6], "13 (minor unknown)", "");
    assert_true(c[0].exists && c[5].exists && !c[6].exists);
    assert_non_null(strstr(searched, m.setup));
    assert_non_null(strstr(searched, "($CUDA_HOME)"));
    /* PYTHONUSERBASE replaces ~/.local. */
    char base[4200];
    snprintf(base, sizeof base, "%s/.local", m.home);
    s.python_user_base = base;
    s.home = "/nonexistent";
    n = asyncrt__lib_candidates(ASYNCRT_LIB_NVRTC, &s, c, ASYNCRT_LIB_MAX_CANDIDATES, NULL, 0);
    assert_int_equal(find(c, n, "home/.local/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13"), 1);

    /* The override is the only candidate, even when it is missing. */
    s.override_path = "/nonexistent/libnvrtc.so.13";
    n = asyncrt__lib_candidates(ASYNCRT_LIB_NVRTC, &s, c, ASYNCRT_LIB_MAX_CANDIDATES, searched, sizeof searched);
    assert_int_equal(n, 1);
    assert_false(c[0].exists);
    char why[768];
    assert_int_equal(asyncrt__nvrtc_choose(c, n, 0, "", why, sizeof why), -1);
    assert_non_null(strstr(searched, "/nonexistent/libnvrtc.so.13 ($ASYNCRT_NVRTC)"));

    /* Nothing anywhere: only the sonames, tried through the dynamic loader. */
    const char *none[] = {NULL};
    asyncrt_lib_search empty = {.system_libdirs = none};
    n = asyncrt__lib_candidates(ASYNCRT_LIB_NVRTC, &empty, c, ASYNCRT_LIB_MAX_CANDIDATES, NULL, 0);
    assert_int_equal(n, 2);
    assert_int_equal(asyncrt__nvrtc_choose(c, n, 0, "", why, sizeof why), 0);
    assert_non_null(strstr(why, "dynamic loader"));
    test_remove_tree(m.root);
    free(m.root);
}

/* The set-up's folder is searched by a copy running from its build tree
 * only: a package built in /tmp/x must not open /tmp/x/.pip/... on a user's
 * machine. The rule with paths given, then this process's own search (it
 * runs from the build tree), then the same program copied out of it. */
static void the_setup_folder_is_searched_from_the_build_tree_only(void **state)
{
    (void)state;
    assert_string_equal(asyncrt__lib_setup_dir("/b/build/runtime/libasyncrt.so.0", "/b/build", "/b/.pip"), "/b/.pip");
    assert_string_equal(asyncrt__lib_setup_dir("/b/build/tools/run/asyncrt-run", "/b/build/", "/b/.pip"), "/b/.pip");
    assert_string_equal(asyncrt__lib_setup_dir("/usr/lib/x86_64-linux-gnu/libasyncrt.so.0", "/tmp/x/build",
                                               "/tmp/x/.pip"), "");
    assert_string_equal(asyncrt__lib_setup_dir("/opt/asyncrt/bin/asyncrt-run", "/tmp/x/build", "/tmp/x/.pip"), "");
    assert_string_equal(asyncrt__lib_setup_dir("/tmp/x/build2/libasyncrt.so", "/tmp/x/build", "/tmp/x/.pip"), "");
    assert_string_equal(asyncrt__lib_setup_dir("/tmp/x/build", "/tmp/x/build", "/tmp/x/.pip"), "");
    assert_string_equal(asyncrt__lib_setup_dir(NULL, "/tmp/x/build", "/tmp/x/.pip"), "");
    assert_string_equal(asyncrt__lib_setup_dir("/tmp/x/build/lib.so", "", "/tmp/x/.pip"), "");
    assert_string_equal(asyncrt__lib_setup_dir("/tmp/x/build/lib.so", "build", "/tmp/x/.pip"), "");

    char self[4096];
    bool in_program = false;
    assert_true(asyncrt__self_file(self, sizeof self, &in_program));
    assert_true(in_program); /* the library is linked into this test */
    asyncrt_lib_search s = asyncrt__lib_search_of(NULL);
    const char *outside = getenv("ASYNCRT_TEST_OUTSIDE_BUILD");
    if (outside) { /* the copy below */
        if (*s.setup_dir) fail_msg("%s, outside the build tree, searches %s", self, s.setup_dir);
        return;
    }
    assert_string_equal(s.setup_dir, ASYNCRT_TEST_SETUP_PIP_DIR);
    char *dir = test_make_temp_dir("asyncrt-outside-build");
    char copy[4200], cmd[4 * 4200 + 128];
    snprintf(copy, sizeof copy, "%s/test_nvrtc_loader", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && ASYNCRT_TEST_OUTSIDE_BUILD=1 CMOCKA_TEST_ABORT=0 '%s' >'%s.log' 2>&1",
             self, copy, copy, copy);
    int rc = system(cmd);
    if (rc != 0) {
        snprintf(cmd, sizeof cmd, "%s.log", copy);
        FILE *log = fopen(cmd, "r");
        for (int c; log && (c = fgetc(log)) != EOF;) fputc(c, stderr);
        if (log) fclose(log);
        fail_msg("the copy of this test in %s: exit %d (its output above)", dir, rc);
    }
    test_remove_tree(dir);
    free(dir);
}

/* Which NVRTC wins on that machine, for each driver and preference. */
static void the_driver_major_then_the_preferred_then_the_newest_wins(void **state)
{
    (void)state;
    machine m;
    make_machine(&m);
    asyncrt_lib_search s = search_of(&m);
    asyncrt_lib_candidate c[ASYNCRT_LIB_MAX_CANDIDATES];
    size_t n = asyncrt__lib_candidates(ASYNCRT_LIB_NVRTC, &s, c, ASYNCRT_LIB_MAX_CANDIDATES, NULL, 0);
    assert_int_equal(n, 8);
    const struct {
        const char *what;
        int driver;
        const char *preferred;
        int chosen;
        const char *why;
    } rows[] = {
        {"CUDA 13.0 driver, 13.1.115 preferred", 13000, "13.1.115", 3, "the version this build prefers"},
        {"CUDA 13.0 driver, no preference: the newest 13", 13000, "", 0, "the newest found of the driver's"},
        {"CUDA 13.0 driver, a preference not found", 13000, "13.4.92", 0, "13.4.92, is not among them"},
        {"a preference the toolkit's builtins match", 13000, "13.0.88", 4, "prefers"},
        {"CUDA 12.8 driver: the newest 12", 12080, "13.1.115", 2, "NVRTC 12.8.93"},
        {"CUDA 14 driver: an older major, preferred", 14000, "13.1.115", 3, "older major"},
        {"CUDA 14 driver: an older major, newest", 14000, "", 0, "older major"},
        {"CUDA 11.8 driver: nothing it loads", 11080, "", 0, "only NVRTCs of a newer major"},
        {"no driver, preferred", 0, "13.1.115", 3, "prefers"},
        {"no driver, newest", 0, "", 0, "no driver to match"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char why[768];
        int got = asyncrt__nvrtc_choose(c, n, rows[i].driver, rows[i].preferred, why, sizeof why);
        if (got != rows[i].chosen || !strstr(why, rows[i].why))
            fail_msg("%s: chose %d (%s), expected %d with '%s'", rows[i].what, got, why, rows[i].chosen, rows[i].why);
    }
    test_remove_tree(m.root);
    free(m.root);
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
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
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
        asyncrt__arch a;
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
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
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

/* nvJitLink on that machine: the user's 13.2.86 wheel, the set-up's
 * 13.1.115, the toolkit's (13.0, told by the builtins beside it: one
 * release); which one links for each NVRTC. */
static void nvjitlink_follows_nvrtc(void **state)
{
    (void)state;
    machine m;
    make_machine(&m);
    asyncrt_lib_search s = search_of(&m);
    asyncrt_lib_candidate c[ASYNCRT_LIB_MAX_CANDIDATES];
    size_t n = asyncrt__lib_candidates(ASYNCRT_LIB_NVJITLINK, &s, c, ASYNCRT_LIB_MAX_CANDIDATES, NULL, 0);
    assert_int_equal(n, 5); /* three files, two sonames */
    int user = find(c, n, "python3.12/site-packages/nvidia/cu13/lib/libnvJitLink.so.13");
    int setup = find(c, n, "checkout/.pip/nvidia/cu13/lib/libnvJitLink.so.13");
    int toolkit = find(c, n, "cp/lib64/libnvJitLink.so.13");
    assert_true(user == 0 && setup == 1 && toolkit == 2);
    assert_version(&c[user], "13.2.86", "its wheel's dist-info");
    assert_version(&c[setup], "13.1.115", "its wheel's dist-info");
    assert_version(&c[toolkit], "13.0", "the libnvrtc-builtins beside it");
    char setup_lib[4200], toolkit_lib[4200], real[4096];
    assert_non_null(realpath(m.setup, real));
    snprintf(setup_lib, sizeof setup_lib, "%s/nvidia/cu13/lib", real);
    assert_non_null(realpath(m.cuda_path, real));
    snprintf(toolkit_lib, sizeof toolkit_lib, "%s/lib64", real);
    const struct {
        const char *what;
        asyncrt_lib_version nvrtc;
        const char *dir;
        int chosen;
        const char *why;
    } rows[] = {
        {"the set-up's NVRTC 13.1.115", {13, 1, 115}, setup_lib, setup, "NVRTC's version (13.1.115)"},
        {"the toolkit's NVRTC 13.0", {13, 0, -1}, toolkit_lib, toolkit, "NVRTC's version (13.0)"},
        {"NVRTC 13.1 elsewhere", {13, 1, -1}, "/elsewhere", setup, "NVRTC's version"},
        {"NVRTC 13.5: only older ones, the nearest", {13, 5, 37}, "/elsewhere", user, "older than NVRTC (13.5.37)"},
        {"NVRTC 12.8: its soname", {12, 8, 93}, "/elsewhere", 4, "through the dynamic loader"},
        {"an NVRTC of unknown version: beside it", {13, -1, -1}, toolkit_lib, toolkit, "beside NVRTC"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char why[512];
        int got = asyncrt__jitlink_choose(c, n, &rows[i].nvrtc, rows[i].dir, why, sizeof why);
        if (got != rows[i].chosen || !strstr(why, rows[i].why))
            fail_msg("%s: chose %d (%s), expected %d with '%s'", rows[i].what, got, why, rows[i].chosen, rows[i].why);
    }
    /* NVRTC 13.0 with only the two newer wheels: the nearest newer, 13.1.115. */
    asyncrt_lib_candidate newer[2] = {c[user], c[setup]};
    char why[512];
    asyncrt_lib_version v130 = {13, 0, -1};
    assert_int_equal(asyncrt__jitlink_choose(newer, 2, &v130, "/elsewhere", why, sizeof why), 1);
    assert_non_null(strstr(why, "the nearest newer than NVRTC (13.0)"));
    test_remove_tree(m.root);
    free(m.root);
}

int main(void)
{
    if (getenv("ASYNCRT_TEST_OUTSIDE_BUILD")) { /* the copy, outside the build tree: that check alone */
        const struct CMUnitTest copy[] = {cmocka_unit_test(the_setup_folder_is_searched_from_the_build_tree_only)};
        return cmocka_run_group_tests(copy, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_place_is_searched_in_the_documented_order),
                                       cmocka_unit_test(the_setup_folder_is_searched_from_the_build_tree_only),
                                       cmocka_unit_test(the_driver_major_then_the_preferred_then_the_newest_wins),
                                       cmocka_unit_test(nvjitlink_follows_nvrtc),
                                       cmocka_unit_test(override_case)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
