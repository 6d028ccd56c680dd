/* Test helpers around the asyncrt-run binary. */
#include "run_tool.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"
#include "test_support.h"

static char output[1 << 16];
static char *dir;
static pid_t dir_owner; /* a forked child makes its own and never removes its parent's */

const char *run_tool_output(void) { return output; }

/* At exit, a failed test's too (cmocka's failures return to main). */
static void remove_dir(void)
{
    if (!dir || dir_owner != getpid()) return;
    test_remove_tree(dir);
    free(dir);
    dir = NULL;
}

const char *tmp_path(const char *name)
{
    static char paths[8][4096];
    static int next;
    static bool registered;
    if (!dir || dir_owner != getpid()) {
        dir = test_make_temp_dir("asyncrt-run-test");
        dir_owner = getpid();
        if (!registered) registered = atexit(remove_dir) == 0;
    }
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

const char *kernel_path(const char *file)
{
    static char paths[4][4096];
    static int next;
    const char *root = getenv("ASYNCRT_TEST_SOURCE_DIR");
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/tests/run/kernels/%s", root ? root : ".", file);
    return p;
}

int run_tool(const char *fmt, ...)
{
    char args[8192], cmd[12288];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    const char *log = tmp_path("tool.log");
    /* ASYNCRT_TEST_TOOL_WRAPPER: a command the tool runs under (tools/gpu-check.sh
     * sanitize puts compute-sanitizer there: the device work is the tool's). */
    const char *wrapper = getenv("ASYNCRT_TEST_TOOL_WRAPPER");
    snprintf(cmd, sizeof cmd, "%s%s%s %s >%s 2>&1", wrapper ? wrapper : "", wrapper ? " " : "", ASYNCRT_RUN_TOOL,
             args, log);
    int status = system(cmd);
    output[0] = '\0';
    FILE *f = fopen(log, "rb");
    if (f) {
        size_t n = fread(output, 1, sizeof output - 1, f);
        output[n] = '\0';
        fclose(f);
    }
    printf("$ asyncrt-run %s -> %d\n", args, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void write_npy_or_fail(const char *path, run_dtype t, const unsigned long long *shape, int rank, const void *data)
{
    uint64_t s[RUN_NPY_MAX_RANK];
    char err[512];
    for (int i = 0; i < rank; i++) s[i] = shape[i];
    if (!run_npy_write(path, t, s, rank, data, err, sizeof err)) fail_msg("%s", err);
}
