/* Precompiled headers within a process (pch.h): a PCH never serves a header
 * that changed, on disk or in memory; the cache manifest of a compile that
 * used a PCH still names the headers the PCH held; auto mode makes no PCH
 * for a process's first compile nor for light kernels. CPU only (PTX for
 * compute_90): NVRTC runs here, no device is needed. */
#define _GNU_SOURCE /* usleep, unshare */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_io.h"
#include "context.h"
#include "pch.h"
#include "test_support.h"

typedef struct fixture {
    char *dir;     /* cache, include directory and TMPDIR */
    char *inc;     /* holds pch_dep.h */
    char *tmpdir;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_make_temp_dir("asyncrt-pch");
    f->inc = malloc(strlen(f->dir) + 8);
    sprintf(f->inc, "%s/inc", f->dir);
    assert_int_equal(mkdir(f->inc, 0700), 0);
    /* the PCH directories go under TMPDIR: a private one, to see them go */
    f->tmpdir = strdup("/tmp/asyncrt-pch-tmp-XXXXXX");
    assert_non_null(mkdtemp(f->tmpdir));
    setenv("TMPDIR", f->tmpdir, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unsetenv("TMPDIR");
    unsetenv("ASYNCRT_PCH");
    test_remove_tree(f->tmpdir);
    test_remove_tree(f->dir);
    free(f->tmpdir);
    free(f->inc);
    free(f->dir);
    free(f);
    return 0;
}

static void write_dep(const fixture *f, long value)
{
    char path[512];
    snprintf(path, sizeof path, "%s/pch_dep.h", f->inc);
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fprintf(file, "#pragma once\n#define DISK_VALUE %ld\n", value);
    fclose(file);
    usleep(50 * 1000); /* a file written within the compile's clock tick is never recorded */
}

static asyncrt_context *new_context(const fixture *f, const char *pch_mode)
{
    if (pch_mode) setenv("ASYNCRT_PCH", pch_mode, 1);
    else unsetenv("ASYNCRT_PCH");
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, f->dir));
    return ctx;
}

/* Compiles a kernel that stores DISK_VALUE + MEM_VALUE + `slot` (its
 * leading #includes: <cuda/ptx> (heavy), pch_dep.h from disk, mem.h from
 * memory), and asserts the PTX holds `expect`. Returns where it came from. */
static asyncrt_program_origin compile_expect(asyncrt_context *ctx, const fixture *f, int slot, const char *mem,
                                             long expect)
{
    char source[512];
    snprintf(source, sizeof source,
             "#include <cuda/ptx>\n#include <pch_dep.h>\n#include \"mem.h\"\n"
             "extern \"C\" __global__ void k%d(long *p) { p[%d] = DISK_VALUE + MEM_VALUE + %d; }\n",
             slot, slot, slot);
    const char *dirs[] = {f->inc};
    asyncrt_header header = {"mem.h", mem};
    asyncrt_compile_options o = {.size = sizeof o,
                                 .arch = "compute_90", .include_dirs = dirs, .include_dir_count = 1,
                                 .headers = &header, .header_count = 1};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "pch_test.cu", source, &o, &p));
    size_t size = 0;
    const char *ptx = asyncrt_program_image(p, &size);
    char want[64];
    snprintf(want, sizeof want, "%ld;", expect);
    if (!strstr(ptx, want)) fail_msg("slot %d: the PTX lacks %s (a stale header?)", slot, want);
    asyncrt_program_origin origin = asyncrt_program_origin_of(p);
    asyncrt_program_destroy(p);
    return origin;
}

#define MEM_A "#define MEM_VALUE 1000\n"
#define MEM_B "#define MEM_VALUE 5000\n"

/* Two compiles share a PCH; a disk header in it is edited; both compile
 * again in the same process and must see the edit. */
static void test_changed_disk_header_is_never_served_from_a_pch(void **state)
{
    fixture *f = *state;
    write_dep(f, 300000);
    asyncrt_context *ctx = new_context(f, "1");
    assert_int_equal(compile_expect(ctx, f, 1, MEM_A, 301001), ASYNCRT_ORIGIN_COMPILED);
    assert_true(asyncrt__pch_file_count(asyncrt__pch_of(ctx)) >= 1); /* the first compile made one */
    assert_int_equal(compile_expect(ctx, f, 2, MEM_A, 301002), ASYNCRT_ORIGIN_COMPILED);
    write_dep(f, 700000); /* same size, new content */
    assert_int_equal(compile_expect(ctx, f, 1, MEM_A, 701001), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_expect(ctx, f, 2, MEM_A, 701002), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_context_destroy(ctx);
}

/* The second compile took <cuda/ptx> and pch_dep.h from the PCH, so its trace
 * lists neither; its cache entry must still depend on them: another process
 * (context) without PCH, after the edit, misses and sees the new value. */
static void test_manifest_of_a_pch_compile_names_what_the_pch_held(void **state)
{
    fixture *f = *state;
    write_dep(f, 400000);
    asyncrt_context *ctx = new_context(f, "1");
    compile_expect(ctx, f, 1, MEM_A, 401001);
    compile_expect(ctx, f, 2, MEM_A, 401002); /* through the PCH */
    asyncrt_context_destroy(ctx);
    asyncrt_context *other = new_context(f, "0");
    assert_int_equal(compile_expect(other, f, 2, MEM_A, 401002), ASYNCRT_ORIGIN_DISK_CACHE);
    write_dep(f, 800000);
    assert_int_equal(compile_expect(other, f, 2, MEM_A, 801002), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_context_destroy(other);
}

/* An in-memory header's new content (which NVRTC's PCH alone would serve
 * stale) gets a PCH of its own. */
static void test_changed_memory_header_is_never_served_from_a_pch(void **state)
{
    fixture *f = *state;
    write_dep(f, 500000);
    asyncrt_context *ctx = new_context(f, "1");
    compile_expect(ctx, f, 1, MEM_A, 501001);
    compile_expect(ctx, f, 2, MEM_A, 501002);
    compile_expect(ctx, f, 3, MEM_B, 505003);
    compile_expect(ctx, f, 4, MEM_A, 501004);
    asyncrt_context_destroy(ctx);
}

/* Auto: nothing for a process's first compile; a PCH from the second compile
 * of a key whose first read many headers; never for a light kernel; off with
 * ASYNCRT_PCH=0. The context's directories go with it. */
static void test_auto_mode_and_cleanup(void **state)
{
    fixture *f = *state;
    write_dep(f, 600000);
    asyncrt_context *ctx = new_context(f, NULL);
    compile_expect(ctx, f, 1, MEM_A, 601001);
    assert_int_equal(asyncrt__pch_file_count(asyncrt__pch_of(ctx)), 0);
    compile_expect(ctx, f, 2, MEM_A, 601002);
    assert_true(asyncrt__pch_file_count(asyncrt__pch_of(ctx)) >= 1);
    for (int i = 0; i < 3; i++) { /* light: no includes */
        char source[128];
        snprintf(source, sizeof source, "extern \"C\" __global__ void light(int *p) { p[0] = %d; }\n", i);
        asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_90"};
        asyncrt_program *p = NULL;
        assert_ok(ctx, asyncrt_program_compile(ctx, "light.cu", source, &o, &p));
        asyncrt_program_destroy(p);
    }
    assert_int_equal(asyncrt__pch_file_count(asyncrt__pch_of(ctx)), 1);
    asyncrt_context_destroy(ctx);
    char listing[600];
    snprintf(listing, sizeof listing, "test -z \"$(ls -A %s)\"", f->tmpdir);
    assert_int_equal(system(listing), 0); /* no directory left behind */

    ctx = new_context(f, "0");
    compile_expect(ctx, f, 3, MEM_A, 601003);
    compile_expect(ctx, f, 4, MEM_A, 601004);
    assert_int_equal(asyncrt__pch_file_count(asyncrt__pch_of(ctx)), 0);
    asyncrt_context_destroy(ctx);
}

typedef struct thread_job {
    asyncrt_context *ctx;
    const fixture *f;
    int slot;
} thread_job;

static void *compile_two(void *arg)
{
    thread_job *j = arg;
    compile_expect(j->ctx, j->f, j->slot, MEM_A, 901000 + j->slot);
    compile_expect(j->ctx, j->f, j->slot + 10, MEM_A, 901010 + j->slot);
    return NULL;
}

/* Threads compiling through one context's PCH at once (ThreadSanitizer runs
 * this: label tsan), then an edit seen by all. */
static void test_threads_share_the_pch(void **state)
{
    fixture *f = *state;
    write_dep(f, 900000);
    asyncrt_context *ctx = new_context(f, "1");
    pthread_t threads[4];
    thread_job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (thread_job){ctx, f, i + 1};
        assert_int_equal(pthread_create(&threads[i], NULL, compile_two, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
    write_dep(f, 950000);
    compile_expect(ctx, f, 1, MEM_A, 951001);
    asyncrt_context_destroy(ctx);
}

/* ---- a full TMPDIR (issue 23 item 9) -------------------------------------- */

/* The child's part, in a process of its own whose TMPDIR is a 1 MiB tmpfs:
 * three heavy compiles with ASYNCRT_PCH=1 in one context. NVRTC would write
 * a ~130 MB PCH there through a memory map and die of SIGBUS; the library
 * must see there is no room and compile without. 0 when all went well. */
static int small_tmpdir_child(const char *inc, const char *cache)
{
    setenv("ASYNCRT_PCH", "1", 1);
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS || asyncrt_context_set_cache_dir(ctx, cache)) return 2;
    asyncrt_context_set_log_level(ctx, 1);
    int failed = 0;
    for (int slot = 1; slot <= 3; slot++) {
        char source[256];
        snprintf(source, sizeof source, "#include <cuda/ptx>\n#include <pch_dep.h>\n"
                 "extern \"C\" __global__ void k%d(long *p) { p[0] = DISK_VALUE + %d; }\n", slot, slot);
        const char *dirs[] = {inc};
        asyncrt_compile_options o = {.size = sizeof o,
                                     .arch = "compute_90", .include_dirs = dirs, .include_dir_count = 1};
        asyncrt_program *p = NULL;
        failed |= asyncrt_program_compile(ctx, "full_tmp.cu", source, &o, &p) != ASYNCRT_SUCCESS;
        asyncrt_program_destroy(p);
    }
    failed |= asyncrt__pch_file_count(asyncrt__pch_of(ctx)) != 0;
    asyncrt_context_destroy(ctx);
    return failed ? 1 : 0;
}

static void test_a_full_tmpdir_never_crashes(void **state)
{
    fixture *f = *state;
    write_dep(f, 100000);
    char small[512], log[600];
    snprintf(small, sizeof small, "%s/small", f->tmpdir);
    snprintf(log, sizeof log, "%s/child.log", f->dir);
    assert_int_equal(mkdir(small, 0700), 0);
    pid_t pid = fork();
    if (pid == 0) { /* a mount namespace of its own: the tmpfs is gone with it */
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount("asyncrt-test", small, "tmpfs", 0, "size=1m") != 0)
            _exit(77);
        setenv("TMPDIR", small, 1);
        if (!freopen(log, "w", stderr)) _exit(3);
        execl("/proc/self/exe", "test_pch", "--small-tmpdir", f->inc, f->dir, (char *)NULL);
        _exit(4);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        print_message("cannot mount a tmpfs here (needs CAP_SYS_ADMIN): skipped\n");
        skip();
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cat %s >&2", log);
    if (system(cmd) != 0) print_message("no child log\n");
    if (WIFSIGNALED(status)) fail_msg("the process died of signal %d", WTERMSIG(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    snprintf(cmd, sizeof cmd, "test $(grep -c 'no precompiled headers: ' %s) -eq 1", log);
    assert_int_equal(system(cmd), 0); /* said once */
}

/* The same through the free-space seam, in this process. */
static uint64_t one_mebibyte(const char *dir)
{
    (void)dir;
    return 1 << 20;
}

static void test_no_room_means_no_pch(void **state)
{
    fixture *f = *state;
    write_dep(f, 200000);
    uint64_t (*statvfs_based)(const char *) = asyncrt__pch_free_bytes;
    asyncrt__pch_free_bytes = one_mebibyte;
    asyncrt_context *ctx = new_context(f, "1");
    assert_int_equal(compile_expect(ctx, f, 1, MEM_A, 201001), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_expect(ctx, f, 2, MEM_A, 201002), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(asyncrt__pch_file_count(asyncrt__pch_of(ctx)), 0);
    asyncrt_context_destroy(ctx);
    asyncrt__pch_free_bytes = statvfs_based;
}

/* ---- folders of crashed processes (issue 23 item 10) --------------------- */

static bool exists(const fixture *f, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", f->tmpdir, name);
    return access(path, F_OK) == 0;
}

static void test_folders_of_dead_processes_are_swept(void **state)
{
    fixture *f = *state;
    int pipe_fds[2];
    assert_int_equal(pipe(pipe_fds), 0);
    pid_t dead = fork();
    if (dead == 0) { /* leaves a PCH and a trace folder behind, as a kill -9 would */
        char pch[64], trace[64], file[128];
        bool ok = asyncrt__private_dir_make(f->tmpdir, pch, sizeof pch, "asyncrt-pch-") &&
                  asyncrt__private_dir_make(f->tmpdir, trace, sizeof trace, "asyncrt-trace-");
        snprintf(file, sizeof file, "%s/heavy_0.pch", pch);
        FILE *out = ok ? fopen(file, "w") : NULL;
        if (out) fclose(out);
        char names[130];
        int n = snprintf(names, sizeof names, "%s\n%s\n", strrchr(pch, '/') + 1, strrchr(trace, '/') + 1);
        _exit(out && write(pipe_fds[1], names, (size_t)n) == n ? 0 : 1);
    }
    close(pipe_fds[1]);
    int status = 0;
    assert_int_equal(waitpid(dead, &status, 0), dead);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char names[130] = "";
    assert_true(read(pipe_fds[0], names, sizeof names - 1) > 0);
    close(pipe_fds[0]);
    char *pch = strtok(names, "\n"), *trace = strtok(NULL, "\n");
    assert_non_null(trace);
    assert_true(exists(f, pch) && exists(f, trace));
    /* Not ours to sweep: a live process's, another user's, another name. */
    char other[600], alive[600], odd[600];
    snprintf(alive, sizeof alive, "%s/asyncrt-pch-1-alive", f->tmpdir);
    snprintf(other, sizeof other, "%s/asyncrt-pch-%ld-other", f->tmpdir, (long)dead);
    snprintf(odd, sizeof odd, "%s/asyncrt-pch-x%ld-odd", f->tmpdir, (long)dead);
    assert_int_equal(mkdir(alive, 0700), 0);
    assert_int_equal(mkdir(other, 0700), 0);
    assert_int_equal(mkdir(odd, 0700), 0);
    bool as_root = geteuid() == 0;
    if (as_root) assert_int_equal(chown(other, 4242, 4242), 0);

    write_dep(f, 300000);
    asyncrt_context *ctx = new_context(f, "1"); /* its first compile makes both kinds of folder */
    compile_expect(ctx, f, 1, MEM_A, 301001);
    asyncrt_context_destroy(ctx);
    assert_false(exists(f, pch));
    assert_false(exists(f, trace));
    assert_true(exists(f, "asyncrt-pch-1-alive"));
    assert_int_equal(access(other, F_OK), as_root ? 0 : -1);
    assert_int_equal(access(odd, F_OK), 0);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--small-tmpdir") == 0) return small_tmpdir_child(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_changed_disk_header_is_never_served_from_a_pch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest_of_a_pch_compile_names_what_the_pch_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_memory_header_is_never_served_from_a_pch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auto_mode_and_cleanup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_share_the_pch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_full_tmpdir_never_crashes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_room_means_no_pch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folders_of_dead_processes_are_swept, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
