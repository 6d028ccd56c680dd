/* The tools' status line (tools/common/tool_progress.h) as a user meets it:
 * asyncrt-run, asyncrt-bundle and asyncrt-cache warm, each on a compile
 * that takes seconds (<cuda/barrier> and an unrolled loop that keeps ptxas
 * busy, into an empty cache), run under a pseudo-terminal (forkpty) with
 * stdout on /dev/null, so that the terminal shows exactly what the tool
 * writes to stderr: the line is drawn after 0.5 s and redrawn in place,
 * cleared ("\r\033[K") before anything else is written and at the end; with
 * --quiet, and with stderr on a pipe, nothing at all. */
#define _DEFAULT_SOURCE /* forkpty's header, mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "test_support.h"
#include "tool_progress.h"

#define CLEAR "\r\033[K"
#define SLOW_SOURCE                                                                 \
    "#include <cuda/barrier>\n"                                                     \
    "extern \"C\" __global__ void k(float *x)\n"                                    \
    "{\n"                                                                           \
    "    float v = x[threadIdx.x];\n"                                               \
    "#pragma unroll\n"                                                              \
    "    for (int i = 0; i < 32; i++) v = v * 1.0001f + sinf(v + i);\n"             \
    "    x[threadIdx.x] = v;\n"                                                     \
    "}\n"

static char *g_dir; /* the sources, the caches, the outputs */

typedef struct ran {
    int code;
    char *err;       /* what the terminal (or the pipe) got: the tool's stderr */
    size_t size;
    double seconds;
} ran;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A fresh cache directory for each run: every compile is a miss. */
static const char *fresh_cache(void)
{
    static char path[512];
    static int n;
    snprintf(path, sizeof path, "%s/cache-%d", g_dir, n++);
    return path;
}

static void child(const char *cache, char *const argv[])
{
    int null = open("/dev/null", O_WRONLY);
    if (null < 0 || dup2(null, STDOUT_FILENO) < 0) _exit(126);
    setenv("ASYNCRT_CACHE_DIR", cache, 1);
    setenv("TERM", "xterm", 1);
    unsetenv("ASYNCRT_LOG");
    /* A sanitizer build's tool would print the leak suppressions it used (NVRTC's) on stderr at exit. */
    const char *lsan = getenv("LSAN_OPTIONS");
    char options[4096];
    snprintf(options, sizeof options, "%s%sprint_suppressions=0", lsan ? lsan : "", lsan && *lsan ? ":" : "");
    setenv("LSAN_OPTIONS", options, 1);
    execv(argv[0], argv);
    _exit(127);
}

static void append(ran *r, const char *buf, size_t n)
{
    char *grown = realloc(r->err, r->size + n + 1);
    assert_non_null(grown);
    memcpy(grown + r->size, buf, n);
    r->err = grown;
    r->size += n;
    r->err[r->size] = '\0';
}

/* Runs argv with stderr on a terminal 200 columns wide (tty) or on a pipe. */
static ran run(bool tty, char *const argv[])
{
    ran r = {.err = calloc(1, 1)};
    const char *cache = fresh_cache();
    int fd = -1, pipe_fds[2];
    double start = now_s();
    pid_t pid;
    if (tty) {
        struct winsize ws = {.ws_row = 40, .ws_col = 200};
        struct termios raw;
        cfmakeraw(&raw); /* no "\n" -> "\r\n": the bytes as the tool wrote them */
        pid = forkpty(&fd, NULL, &raw, &ws);
    } else {
        assert_int_equal(pipe(pipe_fds), 0);
        pid = fork();
        if (pid == 0) {
            dup2(pipe_fds[1], STDERR_FILENO);
            close(pipe_fds[0]);
        }
        fd = pipe_fds[0];
    }
    assert_true(pid >= 0);
    if (pid == 0) child(cache, argv);
    if (!tty) close(pipe_fds[1]);
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break; /* EIO: the terminal's last writer is gone */
        append(&r, buf, (size_t)n);
    }
    close(fd);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    r.seconds = now_s() - start;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

/* A run shorter than a second proves nothing about a 0.5 s line: skipped, saying so. */
static bool slow_enough(const ran *r)
{
    if (r->seconds >= 1.0) return true;
    printf("the compile took %.2f s here: too fast to show the line; skipped\n", r->seconds);
    return false;
}

static const char *last(const char *text, const char *needle)
{
    const char *found = NULL;
    for (const char *at = text; (at = strstr(at, needle)); at++) found = at;
    return found;
}

/* What a line drawn on a terminal must be: first drawn at 0.5 s or later,
 * redrawn in place (no newline), and cleared as the last thing before
 * `after` (or the end). */
static void assert_drawn_and_cleared(const ran *r, const char *line, const char *after)
{
    const char *first = strstr(r->err, line), *clear = last(r->err, CLEAR);
    if (!first || !clear) fail_msg("no line \"%s\" drawn and cleared on the terminal; it got:\n%s", line + 1, r->err);
    double shown = 0;
    const char *time = strstr(first, " ... ");
    assert_non_null(time);
    assert_int_equal(sscanf(time, " ... %lf s", &shown), 1);
    if (shown < 0.5) fail_msg("drawn at %.1f s, before 0.5 s", shown);
    const char *end = after ? strstr(r->err, after) : r->err + r->size;
    if (!end) fail_msg("no \"%s\" after the line; the terminal got:\n%s", after, r->err);
    if (clear + strlen(CLEAR) != end)
        fail_msg("the line is not cleared right before \"%s\"; the terminal got:\n%s", after ? after : "the end",
                 r->err);
    assert_null(memchr(r->err, '\n', (size_t)(clear - r->err))); /* redrawn in place */
    assert_null(strstr(end, "\r")); /* nothing drawn after */
}

static void write_source(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static char *path_of(const char *name)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, 512, "%s/%s", g_dir, name);
    return p;
}

/* A slow compile that fails: drawn, then cleared before the error message. */
static void run_draws_then_clears_before_the_error(void **state)
{
    (void)state;
    char *argv[] = {ASYNCRT_RUN_TOOL, path_of("bad.cu"), "--compile-only", "--arch", "sm_90", NULL};
    ran r = run(true, argv);
    assert_int_equal(r.code, 3);
    if (slow_enough(&r)) {
        char line[600];
        snprintf(line, sizeof line, "\rcompiling %s for sm_90 ... ", path_of("bad.cu"));
        assert_drawn_and_cleared(&r, line, "asyncrt-run: error: ");
    }
    free(r.err);
}

static void run_quiet_and_on_a_pipe_say_nothing(void **state)
{
    (void)state;
    char *quiet[] = {ASYNCRT_RUN_TOOL, path_of("slow.cu"), "--compile-only", "--arch", "sm_90", "--quiet", NULL};
    char *plain[] = {ASYNCRT_RUN_TOOL, path_of("slow.cu"), "--compile-only", "--arch", "sm_90", NULL};
    ran on_tty = run(true, quiet), on_pipe = run(false, plain);
    assert_int_equal(on_tty.code, 0);
    assert_int_equal(on_pipe.code, 0);
    if (slow_enough(&on_tty) && on_tty.size) fail_msg("--quiet on a terminal wrote:\n%s", on_tty.err);
    if (slow_enough(&on_pipe) && on_pipe.size) fail_msg("on a pipe, stderr got:\n%s", on_pipe.err);
    free(on_tty.err);
    free(on_pipe.err);
}

static void bundle_draws_and_quiet_does_not(void **state)
{
    (void)state;
    char *drawn[] = {ASYNCRT_BUNDLE_TOOL, path_of("slow.cu"), "--no-check", "-o", path_of("a.bundle"), NULL};
    char *quiet[] = {ASYNCRT_BUNDLE_TOOL, path_of("slow.cu"), "--no-check", "-o", path_of("b.bundle"), "--quiet",
                     NULL};
    ran r = run(true, drawn), q = run(true, quiet);
    assert_int_equal(r.code, 0);
    assert_int_equal(q.code, 0);
    char line[600];
    snprintf(line, sizeof line, "\rbundle: compiling %s for sm_90 ... ", path_of("slow.cu"));
    if (slow_enough(&r)) assert_drawn_and_cleared(&r, line, NULL);
    if (slow_enough(&q) && q.size) fail_msg("asyncrt-bundle --quiet on a terminal wrote:\n%s", q.err);
    free(r.err);
    free(q.err);
}

/* warm's own --quiet (only failures, and no line) and the tool's, before the command. */
static void warm_draws_and_quiet_does_not(void **state)
{
    (void)state;
    char *drawn[] = {ASYNCRT_CACHE_TOOL, "warm", "--arch", "sm_90", path_of("slow.cu"), NULL};
    char *quiet[] = {ASYNCRT_CACHE_TOOL, "warm", "--quiet", "--arch", "sm_90", path_of("slow.cu"), NULL};
    char *tool_quiet[] = {ASYNCRT_CACHE_TOOL, "--quiet", "warm", "--arch", "sm_90", path_of("slow.cu"), NULL};
    ran r = run(true, drawn), q = run(true, quiet), t = run(true, tool_quiet);
    assert_int_equal(r.code, 0);
    assert_int_equal(q.code, 0);
    assert_int_equal(t.code, 0);
    char line[600];
    snprintf(line, sizeof line, "\rwarm: compiling %s for sm_90 ... ", path_of("slow.cu"));
    if (slow_enough(&r)) assert_drawn_and_cleared(&r, line, NULL);
    if (slow_enough(&q) && q.size) fail_msg("warm --quiet on a terminal wrote:\n%s", q.err);
    if (slow_enough(&t) && t.size) fail_msg("asyncrt-cache --quiet warm on a terminal wrote:\n%s", t.err);
    free(r.err);
    free(q.err);
    free(t.err);
}

/* The words of each phase, and the headers a bundle has read so far. */
static void the_words(void **state)
{
    (void)state;
    char buf[256];
    asyncrt_progress_event e = {.size = sizeof e, .source_name = "k.cu", .arch = "sm_90", .count = -1};
    e.phase = ASYNCRT_PROGRESS_CACHE_LOOKUP;
    tool_progress_text("", &e, -1, buf, sizeof buf);
    assert_string_equal(buf, "looking up k.cu for sm_90 in the cache");
    e.phase = ASYNCRT_PROGRESS_LINK;
    tool_progress_text("", &e, -1, buf, sizeof buf);
    assert_string_equal(buf, "linking k.cu for sm_90");
    e.phase = ASYNCRT_PROGRESS_BUNDLE_HEADER, e.count = 57;
    tool_progress_text("bundle: ", &e, 57, buf, sizeof buf);
    assert_string_equal(buf, "bundle: 57 headers read, from k.cu for sm_90");
    e.phase = ASYNCRT_PROGRESS_COMPILE, e.count = -1; /* the check's compile, after the headers */
    tool_progress_text("bundle: ", &e, 57, buf, sizeof buf);
    assert_string_equal(buf, "bundle: compiling k.cu for sm_90 (57 headers read)");
    /* Off: no callback for the options, and every call takes NULL. */
    assert_null(tool_progress_new(NULL, "", true));
    assert_null(tool_progress_fn(NULL));
    tool_progress_begin(NULL);
    tool_progress_end(NULL);
    tool_progress_free(NULL);
}

static int setup(void **state)
{
    (void)state;
    g_dir = test_make_temp_dir("asyncrt-progress-tty-");
    write_source("slow.cu", SLOW_SOURCE);
    write_source("bad.cu", SLOW_SOURCE "__device__ int broken = not_declared;\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    test_remove_tree(g_dir);
    free(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_words),
        cmocka_unit_test(run_draws_then_clears_before_the_error),
        cmocka_unit_test(run_quiet_and_on_a_pipe_say_nothing),
        cmocka_unit_test(bundle_draws_and_quiet_does_not),
        cmocka_unit_test(warm_draws_and_quiet_does_not),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
