/* The library's environment in a set-uid or set-gid process (issue 33,
 * finding 4): every variable that names a library, program, file, folder or
 * server (base/settings.h's ASYNCRT_NOT_SETUID rows) is ignored there, and
 * the context says so at ASYNCRT_LOG=1.
 *
 * Two ways, honestly told apart:
 *   - the settings reader with AT_SECURE faked through its seam
 *     (asyncrt__settings_secure), over every row of the X-macro, so a row
 *     added later is covered by what its column says;
 *   - a real set-uid (then set-gid) program: this test's own binary copied to
 *     a folder under /tmp, owned by nobody (65534) with mode 04755, run as
 *     root with ASYNCRT_NVRTC and ASYNCRT_LIBCUDA naming a library whose
 *     constructor leaves a mark. Needs root (CI runs as root) and a /tmp
 *     mounted without nosuid; elsewhere that test skips, saying why. The
 *     same copy run without the set-uid bit does leave the marks (the set-up
 *     can show the attack), the set-uid one must not. */
#define _GNU_SOURCE /* getauxval */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "context.h"
#include "format.h"
#include "settings.h"
#include "test_support.h"

static bool fake_secure(void) { return true; }
static bool fake_ordinary(void) { return false; }

typedef struct row {
    const char *name;
    bool not_setuid;
    size_t offset;
} row;

static const row k_rows[] = {
#define ROW(field, name, rule) {name, rule, offsetof(asyncrt_settings, field)},
    ASYNCRT_SETTINGS(ROW)
#undef ROW
};
#define ROWS (sizeof k_rows / sizeof *k_rows)

static char *field_of(const asyncrt_settings *s, const row *r) { return *(char *const *)((const char *)s + r->offset); }

/* Every variable set to a value of its own; the old values come back after. */
static char *g_saved[ROWS];
static bool (*g_real_secure)(void);

static int set_all(void **state)
{
    (void)state;
    for (size_t i = 0; i < ROWS; i++) {
        const char *old = getenv(k_rows[i].name);
        g_saved[i] = old ? strdup(old) : NULL;
        char value[96];
        snprintf(value, sizeof value, "/tmp/x/%s", k_rows[i].name);
        setenv(k_rows[i].name, strcmp(k_rows[i].name, "ASYNCRT_LOG") ? value : "1", 1);
    }
    return 0;
}

static int restore_all(void **state)
{
    (void)state;
    asyncrt__settings_secure = g_real_secure;
    for (size_t i = 0; i < ROWS; i++) {
        if (g_saved[i]) setenv(k_rows[i].name, g_saved[i], 1);
        else unsetenv(k_rows[i].name);
        free(g_saved[i]);
        g_saved[i] = NULL;
    }
    return 0;
}

static void every_row_names_its_rule(void **state)
{
    (void)state;
    size_t places = 0;
    for (size_t i = 0; i < ROWS; i++) places += k_rows[i].not_setuid;
    /* The variables the issue names are among them (a row's column, checked). */
    const char *must[] = {"ASYNCRT_NVRTC", "ASYNCRT_LIBCUDA", "ASYNCRT_LIBHIREDIS", "ASYNCRT_COMPILE_WORKER",
                          "CUDA_PATH", "CUDA_HOME", "ASYNCRT_CACHE_DIR", "ASYNCRT_REMOTE_CACHE",
                          "ASYNCRT_REMOTE_CACHE_KEY_FILE", "TMPDIR", "XDG_CACHE_HOME", "HOME"};
    for (size_t m = 0; m < sizeof must / sizeof *must; m++) {
        bool found = false;
        for (size_t i = 0; i < ROWS; i++)
            if (!strcmp(k_rows[i].name, must[m])) found = k_rows[i].not_setuid;
        if (!found) fail_msg("%s is not an ASYNCRT_NOT_SETUID row", must[m]);
    }
    assert_true(places >= sizeof must / sizeof *must);
    /* A guard for rows added later: a name that reads like a place is a
     * NOT_SETUID row, unless listed here with the reason it names none. */
    const char *placelike[] = {"PATH", "HOME", "DIR", "FILE", "LIB", "ENV", "BASE", "ROOT", "PREFIX", "WORKER", "NVRTC"};
    const char *not_a_place[] = {"ASYNCRT_PATH"}; /* tma, ldgsts or plain: a built-in op's path, no file */
    for (size_t i = 0; i < ROWS; i++) {
        bool looks = false, excused = false;
        for (size_t p = 0; p < sizeof placelike / sizeof *placelike; p++)
            looks |= strstr(k_rows[i].name, placelike[p]) != NULL;
        for (size_t e = 0; e < sizeof not_a_place / sizeof *not_a_place; e++)
            excused |= !strcmp(k_rows[i].name, not_a_place[e]);
        if (looks && !excused && !k_rows[i].not_setuid)
            fail_msg("%s reads like a library, program, file or folder but is read in set-uid processes "
                     "(base/settings.h: ASYNCRT_NOT_SETUID, or excuse it here with the reason)", k_rows[i].name);
    }
}

static void an_ordinary_process_reads_every_row(void **state)
{
    (void)state;
    asyncrt__settings_secure = fake_ordinary;
    asyncrt_settings s;
    assert_true(asyncrt__settings_read(&s));
    for (size_t i = 0; i < ROWS; i++) assert_non_null(field_of(&s, &k_rows[i]));
    assert_int_equal(s.ignored, 0);
    char names[2048];
    assert_int_equal(asyncrt__settings_ignored_names(&s, names, sizeof names), 0);
    asyncrt__settings_free(&s);
    asyncrt__settings_secure = g_real_secure;
}

static void a_set_uid_process_ignores_every_not_setuid_row(void **state)
{
    (void)state;
    asyncrt__settings_secure = fake_secure;
    asyncrt_settings s;
    assert_true(asyncrt__settings_read(&s));
    char names[4096];
    size_t ignored = asyncrt__settings_ignored_names(&s, names, sizeof names), expected = 0;
    for (size_t i = 0; i < ROWS; i++) {
        const row *r = &k_rows[i];
        if (r->not_setuid) {
            expected++;
            if (field_of(&s, r)) fail_msg("%s was read in a set-uid process", r->name);
            if (!strstr(names, r->name)) fail_msg("%s is not named as ignored: %s", r->name, names);
        } else if (!field_of(&s, r)) {
            fail_msg("%s was not read, though any process may set it", r->name);
        }
    }
    assert_int_equal(ignored, expected);
    asyncrt__settings_free(&s);
    /* An unset variable is not reported as ignored. */
    unsetenv("ASYNCRT_NVRTC");
    assert_true(asyncrt__settings_read(&s));
    asyncrt__settings_ignored_names(&s, names, sizeof names);
    assert_null(strstr(names, "ASYNCRT_NVRTC"));
    asyncrt__settings_free(&s);
    asyncrt__settings_secure = g_real_secure;
}

static void a_context_says_so_in_the_log(void **state)
{
    (void)state;
    asyncrt__settings_secure = fake_secure;
    test_capture_begin();
    asyncrt_context *ctx = NULL;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    char *log = test_capture_end();
    if (!strstr(log, "set-uid or set-gid: ignoring") || !strstr(log, "ASYNCRT_NVRTC") || !strstr(log, "CUDA_PATH"))
        fail_msg("no such line in the log:\n%s", log);
    assert_null(ctx->settings.nvrtc);
    assert_null(asyncrt_context_cache_dir(ctx)); /* neither ASYNCRT_CACHE_DIR nor HOME: no disk cache */
    asyncrt_context_destroy(ctx);
    free(log);
    asyncrt__settings_secure = g_real_secure;
}

/* ---- a real set-uid program --------------------------------------------- */

/* The probe: what a set-uid program that uses the library would do. */
static int probe_main(void)
{
    printf("secure=%lu euid=%u egid=%u\n", getauxval(AT_SECURE), (unsigned)geteuid(), (unsigned)getegid());
    fflush(stdout);
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    printf("nvrtc=%d\n", asyncrt_nvrtc_version()); /* loads NVRTC: $ASYNCRT_NVRTC unless ignored */
    asyncrt_status s = asyncrt_context_open_device(ctx, 0); /* loads the driver: $ASYNCRT_LIBCUDA likewise */
    printf("open_device=%s\n", asyncrt_status_string(s));
    asyncrt_context_destroy(ctx);
    /* _exit: no atexit handlers. LeakSanitizer's would fail in a set-uid
     * process (not dumpable: it can neither read ASAN_OPTIONS from
     * /proc/self/environ nor ptrace its own threads); leaks are the other
     * tests' business. */
    fflush(stdout);
    _exit(0);
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
    char *cmd = asyncrt__format("cp '%s' '%s' && chmod %o '%s'", from, to, (unsigned)mode, to);
    assert_int_equal(system(cmd), 0);
    free(cmd);
}

/* Runs dir/probe with the evil libraries named; its output, the marks left. */
static char *run_probe(const char *dir, const char *marks)
{
    char *cmd = asyncrt__format("env ASYNCRT_LOG=1 ASYNCRT_NVRTC='%s/libnvrtc-evil.so' "
                                "ASYNCRT_LIBCUDA='%s/libcuda-evil.so' EVIL_MARKER_DIR='%s' '%s/probe' --probe 2>&1",
                                dir, dir, marks, dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *out = calloc(1, 1 << 16);
    size_t n = fread(out, 1, (1 << 16) - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    if (status != 0) fail_msg("the probe failed (status %d):\n%s", status, out);
    free(cmd);
    return out;
}

static int count_marks(const char *marks)
{
    DIR *d = opendir(marks);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

static void clear_marks(const char *marks)
{
    char *cmd = asyncrt__format("rm -f '%s'/*", marks);
    assert_int_equal(system(cmd), 0);
    free(cmd);
}

static void a_set_uid_program_loads_no_library_the_environment_names(void **state)
{
    (void)state;
    const char *evil = getenv("ASYNCRT_TEST_EVIL_LIBRARY"), *preload = getenv("LD_PRELOAD");
    bool valgrind = preload && strstr(preload, "vgpreload"); /* it runs a set-uid program as an ordinary one */
    struct statvfs fs;
    if (geteuid() != 0 || !evil || valgrind || statvfs("/tmp", &fs) != 0 || (fs.f_flag & ST_NOSUID)) {
        printf("SKIP a_set_uid_program_loads_no_library_the_environment_names: %s\n",
               geteuid() != 0 ? "needs root (to make a set-uid program of another user's)"
               : !evil       ? "ASYNCRT_TEST_EVIL_LIBRARY is not set (run through ctest)"
               : valgrind    ? "under valgrind, which ignores the set-uid bit"
                             : "/tmp is mounted nosuid");
        skip();
    }
    char *dir = test_make_temp_dir("asyncrt-setuid");
    char *marks = asyncrt__format("%s/marks", dir), *probe = asyncrt__format("%s/probe", dir);
    char *nvrtc = asyncrt__format("%s/libnvrtc-evil.so", dir), *cuda = asyncrt__format("%s/libcuda-evil.so", dir);
    assert_int_equal(chmod(dir, 0755), 0);
    assert_int_equal(mkdir(marks, 0777), 0);
    assert_int_equal(chmod(marks, 0777), 0);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1); /* this binary, not cp's */
    assert_true(n > 0);
    self[n] = '\0';
    copy_file(self, probe, 0755);
    copy_file(evil, nvrtc, 0644);
    copy_file(evil, cuda, 0644);

    /* The control: an ordinary run loads both, so the set-up shows the attack. */
    char *out = run_probe(dir, marks);
    if (!strstr(out, "secure=0") || count_marks(marks) != 2)
        fail_msg("the control run did not load the named libraries (%d marks):\n%s", count_marks(marks), out);
    free(out);

    /* Set-uid nobody, then set-gid nogroup: AT_SECURE, both ignored, and said. */
    const char *modes[] = {"set-uid", "set-gid"};
    for (int m = 0; m < 2; m++) {
        clear_marks(marks);
        assert_int_equal(chown(probe, m == 0 ? 65534 : 0, 65534), 0);
        assert_int_equal(chmod(probe, m == 0 ? 04755 : 02755), 0);
        out = run_probe(dir, marks);
        if (!strstr(out, "secure=1")) fail_msg("the %s probe did not run with AT_SECURE:\n%s", modes[m], out);
        if (count_marks(marks) != 0) fail_msg("the %s probe loaded a library the environment named:\n%s", modes[m], out);
        if (!strstr(out, "set-uid or set-gid: ignoring") || !strstr(out, "ASYNCRT_LIBCUDA") ||
            !strstr(out, "ASYNCRT_NVRTC"))
            fail_msg("the %s probe did not say what it ignored:\n%s", modes[m], out);
        free(out);
    }
    test_remove_tree(dir);
    free(dir), free(marks), free(probe), free(nvrtc), free(cuda);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--probe")) return probe_main();
    g_real_secure = asyncrt__settings_secure;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_names_its_rule),
        cmocka_unit_test_setup_teardown(an_ordinary_process_reads_every_row, set_all, restore_all),
        cmocka_unit_test_setup_teardown(a_set_uid_process_ignores_every_not_setuid_row, set_all, restore_all),
        cmocka_unit_test_setup_teardown(a_context_says_so_in_the_log, set_all, restore_all),
        cmocka_unit_test(a_set_uid_program_loads_no_library_the_environment_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
