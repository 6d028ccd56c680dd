/* Shared by the tests: CMocka, device set-up that skips without a GPU,
 * random data, and reading files of the source tree. */
#ifndef ASYNCRT_TEST_SUPPORT_H
#define ASYNCRT_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "asyncrt/asyncrt.h"

/* The exit code ctest reads as "skipped" (SKIP_RETURN_CODE). */
#define ASYNCRT_TEST_SKIP 77

/* Asserts a status, printing the context's message when it differs. */
#define assert_status(ctx, expected, call)                                                    \
    do {                                                                                      \
        asyncrt_status got_ = (call);                                                         \
        if (got_ != (expected))                                                               \
            fail_msg("%s returned %s, expected %s: %s", #call, asyncrt_status_string(got_),   \
                     asyncrt_status_string(expected), asyncrt_context_last_error(ctx));       \
    } while (0)
#define assert_ok(ctx, call) assert_status(ctx, ASYNCRT_SUCCESS, call)

/* For a GPU test's main(): opens device 0 in a fresh context, or prints why
 * not and returns NULL, in which case main returns ASYNCRT_TEST_SKIP. */
asyncrt_context *test_open_device_or_skip(const char *test_name);

/* CMocka fixtures: *state is a fresh context with no device, destroyed after. */
int test_setup_context(void **state);
int test_teardown_context(void **state);
/* What setenv(name, value) then a fresh context would give (value NULL:
 * unset), on this context: the library reads its environment once, when
 * the context is created (base/settings.h). */
void test_context_setenv(asyncrt_context *ctx, const char *name, const char *value);

/* CMocka fixtures: *state is a test_cache_fixture, a fresh context (no device)
 * whose disk cache is a fresh temporary directory, removed after. */
typedef struct test_cache_fixture {
    char *dir;
    asyncrt_context *ctx;
} test_cache_fixture;
int test_setup_cache_context(void **state);
int test_teardown_cache_context(void **state);

/* A fresh context with an open device, for one test (fails the test if none). */
asyncrt_context *test_context_with_device(void);

/* NULL when a program for `arch` (e.g. "compute_80") can be loaded on ctx's
 * open device; otherwise the load rule's sentence (docs/library.md, "Arch
 * selection": PTX from an NVRTC newer than the driver), valid until the next
 * call on ctx. Fails the test on any other error. */
const char *test_unloadable_reason(asyncrt_context *ctx, const char *arch);
/* Skips the running CMocka test (reported as SKIPPED, with that sentence)
 * when a program for `arch` cannot be loaded on ctx's device. */
void test_skip_unless_loadable(asyncrt_context *ctx, const char *arch);

/* True under ASYNCRT_TEST_FULL=1 (.ci/run sets it): the tests that run a
 * sample by default, to keep the README's test command short (the parity
 * corpus, the tile matrix, race tries), run their full sets. */
bool test_full(void);

/* Seeded from the clock unless ASYNCRT_TEST_SEED is set; prints the seed. */
void test_seed_random(const char *test_name);
uint32_t test_random_u32(void);
float test_random_float(float lo, float hi);

/* Host f16 / bf16, rounding to nearest even, NaN and infinities included:
 * what the kernels' conversions do, for CPU references. */
float test_f16_to_float(uint16_t h);
uint16_t test_float_to_f16(float f);
float test_bf16_to_float(uint16_t b);
uint16_t test_float_to_bf16(float f);

/* A file of the source tree (ASYNCRT_TEST_SOURCE_DIR), NUL-terminated, malloc'd. */
char *test_read_source_file(const char *relative_path);

/* A fresh empty directory under /tmp, malloc'd. */
char *test_make_temp_dir(const char *prefix);
void test_remove_tree(const char *dir);
/* path's content set to text (fails the test when it cannot be written). */
void test_write_text(const char *path, const char *text);
/* cmd run by the shell: its exit status (-1 when it did not exit), its
 * output (whatever cmd sends to stdout; add 2>&1 for both) in out. */
int test_shell(char *out, size_t size, const char *cmd);
/* test_shell of a printf-style command run in folder dir, both streams in out. */
int test_shell_in(const char *dir, char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* fn(arg, dir) in a child process, with a fresh temporary directory (named
 * after prefix, removed after): for what a process loads once (the driver,
 * NVRTC). True when the child exited with 0. */
bool test_in_child(int (*fn)(const void *arg, const char *dir), const void *arg, const char *prefix);

/* stderr (the library's log) into a temporary file until test_capture_end,
 * which returns what was written, malloc'd. Not nested. */
void test_capture_begin(void);
char *test_capture_end(void);

#endif
