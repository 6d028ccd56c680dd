/* NVTX ranges (issue 36 part 3): with a profiler injected (here
 * nvtx_record.c through NVTX_INJECTION64_PATH), a compile, its cache lookup
 * with the tier that answered, a load and a launch are ranges named after the
 * source or kernel, in the "asyncrt" domain, each push with its pop. Without
 * NVTX_INJECTION64_PATH ($NVTX_EXPECT=none) nothing is recorded at all. On
 * the fake driver (loads succeed, launches fail after their range). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncrt/asyncrt.h"
#include "test_support.h"

static char *read_record(void)
{
    FILE *f = fopen(getenv("NVTX_RECORD"), "r");
    if (!f) return NULL;
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    return text;
}

static void assert_recorded(const char *text, const char *line)
{
    if (!text || !strstr(text, line)) fail_msg("the NVTX record lacks '%s':\n%s", line, text ? text : "(no file)");
}

static void compile_lookup_load_launch_are_ranges(void **state)
{
    (void)state;
    remove(getenv("NVTX_RECORD"));
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    char dir[] = "/tmp/asyncrt-nvtx-XXXXXX"; /* a cold cache: the first lookup misses */
    assert_non_null(mkdtemp(dir));
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    assert_ok(ctx, asyncrt_context_open_device(ctx, 0));
    static const char source[] = "extern \"C\" __global__ void nvtx_probe(float *y) { y[threadIdx.x] = 1.f; }";
    asyncrt_module *m = NULL, *again = NULL;
    asyncrt_status s = asyncrt_module_build(ctx, "nvtx_probe.cu", source, NULL, &m);
    if (s == ASYNCRT_ERROR_NO_NVRTC) {
        asyncrt_context_destroy(ctx);
        skip();
    }
    assert_int_equal(s, ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_module_build(ctx, "nvtx_probe.cu", source, NULL, &again)); /* a memory-cache hit */
    asyncrt_kernel *k = NULL;
    assert_ok(ctx, asyncrt_module_get_kernel(m, "nvtx_probe", &k));
    asyncrt_launch_config c = ASYNCRT_LAUNCH_CONFIG_INIT;
    c.grid[0] = c.block[0] = 1;
    asyncrt_deviceptr y = 0;
    void *args[] = {&y};
    (void)asyncrt_kernel_launch(k, &c, args, NULL, 1); /* the fake driver runs nothing; the range is there */
    asyncrt_module_destroy(again);
    asyncrt_module_destroy(m);
    asyncrt_context_destroy(ctx);
    char rm[64];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    assert_int_equal(system(rm), 0);

    const char *text = read_record();
    if (getenv("NVTX_EXPECT") && !strcmp(getenv("NVTX_EXPECT"), "none")) {
        if (text && *text) fail_msg("recorded without a profiler:\n%s", text);
        return;
    }
    assert_recorded(text, "domain asyncrt\n");
    assert_recorded(text, "push cache lookup nvtx_probe.cu\nmark cache nvtx_probe.cu: miss\npop\n");
    assert_recorded(text, "push compile nvtx_probe.cu (sm_90)\npop\n");
    assert_recorded(text, "push load nvtx_probe.cu (sm_90)\npop\n");
    assert_recorded(text, "mark cache nvtx_probe.cu: memory cache\n");
    assert_recorded(text, "push launch nvtx_probe\npop\n");
    int depth = 0;
    for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
        depth += !strncmp(line, "push ", 5) - !strncmp(line, "pop\n", 4);
        assert_true(depth >= 0);
    }
    assert_int_equal(depth, 0);
}

int main(void)
{
    if (!getenv("NVTX_RECORD")) return ASYNCRT_TEST_SKIP;
    const struct CMUnitTest tests[] = {cmocka_unit_test(compile_lookup_load_launch_are_ranges)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
