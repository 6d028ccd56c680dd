#include "test_support.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compile_internal.h" /* asyncrt__target_loadable */
#include "context_internal.h" /* test_context_setenv */

asyncrt_context *test_open_device_or_skip(const char *test_name)
{
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "%s: out of memory\n", test_name);
        exit(1);
    }
    int count = 0;
    asyncrt_status s = asyncrt_device_count(ctx, &count);
    if (s == ASYNCRT_SUCCESS && count > 0) s = asyncrt_context_open_device(ctx, 0);
    else if (s == ASYNCRT_SUCCESS) s = ASYNCRT_ERROR_NO_DEVICE;
    if (s == ASYNCRT_ERROR_NO_DRIVER || s == ASYNCRT_ERROR_NO_DEVICE) {
        printf("%s: skipped, no CUDA device: %s\n", test_name, asyncrt_context_last_error(ctx));
        asyncrt_context_destroy(ctx);
        return NULL;
    }
    if (s != ASYNCRT_SUCCESS) {
        fprintf(stderr, "%s: cannot open device 0: %s\n", test_name, asyncrt_context_last_error(ctx));
        exit(1);
    }
    return ctx;
}

int test_setup_context(void **state)
{
    asyncrt_context *ctx = NULL;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    *state = ctx;
    return 0;
}

void test_context_setenv(asyncrt_context *ctx, const char *name, const char *value)
{
    assert_int_equal(asyncrt__context_set_setting(ctx, name, value), ASYNCRT_SUCCESS);
}

int test_teardown_context(void **state)
{
    asyncrt_context_destroy(*state);
    return 0;
}

int test_setup_cache_context(void **state)
{
    test_cache_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->dir = test_make_temp_dir("asyncrt-test-cache");
    assert_int_equal(asyncrt_context_create(&f->ctx), ASYNCRT_SUCCESS);
    assert_ok(f->ctx, asyncrt_context_set_cache_dir(f->ctx, f->dir));
    *state = f;
    return 0;
}

int test_teardown_cache_context(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_context_destroy(f->ctx);
    test_remove_tree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

asyncrt_context *test_context_with_device(void)
{
    asyncrt_context *ctx = NULL;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_open_device(ctx, 0));
    return ctx;
}

bool test_full(void)
{
    const char *env = getenv("ASYNCRT_TEST_FULL");
    return env && env[0] && strcmp(env, "0") != 0;
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

void test_seed_random(const char *test_name)
{
    const char *env = getenv("ASYNCRT_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    printf("%s: random seed %llu (set ASYNCRT_TEST_SEED to repeat)\n", test_name, (unsigned long long)seed);
    g_rng = seed ? seed : 1;
}

uint32_t test_random_u32(void)
{
    /* xorshift64*: plenty for test data */
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return (uint32_t)((g_rng * 0x2545F4914F6CDD1Dull) >> 32);
}

float test_random_float(float lo, float hi)
{
    return lo + (hi - lo) * (float)(test_random_u32() >> 8) / (float)(1u << 24);
}

char *test_read_source_file(const char *relative_path)
{
    const char *root = getenv("ASYNCRT_TEST_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root ? root : ".", relative_path);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)size + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
    data[size] = '\0';
    fclose(f);
    return data;
}

char *test_make_temp_dir(const char *prefix)
{
    char *dir = malloc(256);
    assert_non_null(dir);
    snprintf(dir, 256, "/tmp/%s-XXXXXX", prefix);
    assert_non_null(mkdtemp(dir));
    return dir;
}

void test_write_text(const char *path, const char *text)
{
    FILE *out = fopen(path, "w");
    if (!out) fail_msg("cannot write %s", path);
    fputs(text, out);
    assert_int_equal(fclose(out), 0);
}

int test_shell(char *out, size_t size, const char *cmd)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int test_shell_in(const char *dir, char *out, size_t size, const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s 2>&1", dir, args);
    return test_shell(out, size, cmd);
}

void test_remove_tree(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

static int g_saved_stderr = -1;
static char g_capture_path[64];

void test_capture_begin(void)
{
    snprintf(g_capture_path, sizeof g_capture_path, "/tmp/asyncrt-test-log-XXXXXX");
    int fd = mkstemp(g_capture_path);
    assert_true(fd >= 0);
    fflush(stderr);
    g_saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

char *test_capture_end(void)
{
    fflush(stderr);
    dup2(g_saved_stderr, 2);
    close(g_saved_stderr);
    FILE *f = fopen(g_capture_path, "r");
    char *text = calloc(1, 1 << 20);
    assert_non_null(text);
    size_t n = f ? fread(text, 1, (1 << 20) - 1, f) : 0;
    text[n] = '\0';
    if (f) fclose(f);
    unlink(g_capture_path);
    return text;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float test_f16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023;
    if (exp == 31) return bits_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        float v = ldexpf((float)man, -24);
        return sign ? -v : v;
    }
    return bits_float(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t test_float_to_f16(float f)
{
    uint32_t u = float_bits(f), sign = (u >> 16) & 0x8000u;
    float a = fabsf(f);
    if (isnan(f)) return (uint16_t)(sign | 0x7e00u);
    if (a >= 65520.0f) return (uint16_t)(sign | 0x7c00u); /* rounds to infinity */
    if (a < 6.103515625e-05f) {                            /* subnormal: a multiple of 2^-24, rounded */
        float q = nearbyintf(a * 16777216.0f);             /* the default rounding mode: to nearest even */
        return (uint16_t)(sign | (uint32_t)q);
    }
    uint32_t abs = u & 0x7fffffffu;
    uint32_t exp = (abs >> 23) - 112, man = abs & 0x7fffffu;
    uint32_t h = (exp << 10) | (man >> 13), rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++; /* a carry into the exponent is right too */
    return (uint16_t)(sign | h);
}

float test_bf16_to_float(uint16_t b) { return bits_float((uint32_t)b << 16); }

uint16_t test_float_to_bf16(float f)
{
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}


const char *test_unloadable_reason(asyncrt_context *ctx, const char *arch)
{
    asyncrt_status s = asyncrt__target_loadable(ctx, arch);
    if (s == ASYNCRT_SUCCESS) return NULL;
    if (s != ASYNCRT_ERROR_VERSION_MISMATCH)
        fail_msg("asyncrt__target_loadable(%s): %s: %s", arch, asyncrt_status_string(s), asyncrt_context_last_error(ctx));
    return asyncrt_context_last_error(ctx);
}

void test_skip_unless_loadable(asyncrt_context *ctx, const char *arch)
{
    const char *why = test_unloadable_reason(ctx, arch);
    if (!why) return;
    print_message("skipped: %s\n", why);
    skip();
}

bool test_in_child(int (*fn)(const void *arg, const char *dir), const void *arg, const char *prefix)
{
    char *dir = test_make_temp_dir(prefix);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(fn(arg, dir));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    test_remove_tree(dir);
    free(dir);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

