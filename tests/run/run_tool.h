/* Running the built asyncrt-run from a test, and .npy fixtures. */
#ifndef ASYNCRT_TEST_RUN_TOOL_H
#define ASYNCRT_TEST_RUN_TOOL_H

#include <stddef.h>

#include "dtype.h"

/* Runs `asyncrt-run ARGS` through /bin/sh with stdout and stderr captured;
 * returns the exit code. The captured text stays in run_tool_output(). */
int run_tool(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *run_tool_output(void);

/* Runs and asserts the exit code, printing the output when it differs. */
#define assert_tool(expected, ...)                                                                    \
    do {                                                                                              \
        int rc_ = run_tool(__VA_ARGS__);                                                              \
        if (rc_ != (expected)) fail_msg("exit %d, expected %d; output:\n%s", rc_, (expected), run_tool_output()); \
    } while (0)

/* A path inside this test's temporary directory (static buffer rotation);
 * the directory is the process's own and is removed when it exits. */
const char *tmp_path(const char *name);
/* The kernels directory of the source tree. */
const char *kernel_path(const char *file);

void write_npy_or_fail(const char *path, run_dtype t, const unsigned long long *shape, int rank, const void *data);

#endif
