/* asyncrt-run --devices all on a machine with two or more GPUs (skipped,
 * with a message, on fewer): the run on every device, each checked by
 * --expect against a CPU reference on fresh random data with outputs
 * poisoned; one compile (the other devices' are memory-cache hits); tensor
 * maps encoded on each device (a 2D TMA kernel); a perturbed reference fails
 * (exit 6), so the check can fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "run_tool.h"
#include "test_support.h"

static int g_devices;

static size_t count_of(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

static void saxpy_on_every_device(void **state)
{
    (void)state;
    enum { N = 5000 };
    static float x[N], y[N], want[N];
    float a = test_random_float(-4, 4);
    for (int i = 0; i < N; i++) {
        x[i] = test_random_float(-1, 1);
        y[i] = test_random_float(-1, 1);
        want[i] = a * x[i] + y[i];
    }
    unsigned long long shape[1] = {N};
    write_npy_or_fail(tmp_path("mx.npy"), RUN_F32, shape, 1, x);
    write_npy_or_fail(tmp_path("my.npy"), RUN_F32, shape, 1, y);
    write_npy_or_fail(tmp_path("mwant.npy"), RUN_F32, shape, 1, want);
    char args[4096];
    snprintf(args, sizeof args,
             "%s --devices all --grid 20 --block 256 --buf x=npy:%s --buf y=f32:%d:npy=%s --arg f32:%.9g --arg buf:x "
             "--arg buf:y --arg i32:%d -D ASYNCRT_FRESH=%u",
             kernel_path("saxpy.cu"), tmp_path("mx.npy"), N, tmp_path("my.npy"), (double)a, N, test_random_u32());
    assert_tool(0, "%s --expect y=%s --json", args, tmp_path("mwant.npy"));
    const char *out = run_tool_output();
    assert_int_equal(count_of(out, "\"status\":\"ok\""), g_devices);
    assert_int_equal(count_of(out, "\"mismatches\":0"), g_devices);
    assert_int_equal(count_of(out, "\"origin\":\"nvrtc\""), 1); /* one compile (a fresh -D: no cache entry) */
    printf("saxpy_on_every_device: %zu of %d devices from the memory cache\n",
           count_of(out, "\"origin\":\"memory-cache\""), g_devices);
    assert_tool(0, "%s --expect y=%s", args, tmp_path("mwant.npy"));
    char last[32];
    snprintf(last, sizeof last, "device %d of %d", g_devices - 1, g_devices);
    assert_non_null(strstr(run_tool_output(), last));
    /* a wrong reference: device 0's check fails, and the run stops there */
    want[N / 2] += 1000;
    write_npy_or_fail(tmp_path("mwrong.npy"), RUN_F32, shape, 1, want);
    assert_tool(6, "%s --expect y=%s", args, tmp_path("mwrong.npy"));
    assert_non_null(strstr(run_tool_output(), "device 0: --expect"));
}

static void tensor_maps_on_every_device(void **state)
{
    (void)state;
    enum { H = 130, W = 200 };
    static float in[H * W], want[H * W];
    for (int i = 0; i < H * W; i++) {
        in[i] = test_random_float(-10, 10);
        want[i] = 2.0f * in[i] + 1.0f;
    }
    unsigned long long shape[2] = {H, W};
    write_npy_or_fail(tmp_path("min2d.npy"), RUN_F32, shape, 2, in);
    write_npy_or_fail(tmp_path("mwant2d.npy"), RUN_F32, shape, 2, want);
    assert_tool(0, "%s --devices all --json --grid 7,9 --block 128 --buf in=npy:%s --buf out=f32:%dx%d:poison "
                   "--tmap tin=in:box=32,16:swizzle=128b --tmap tout=out:box=32,16:swizzle=128b --arg tmap:tin "
                   "--arg tmap:tout --expect out=%s",
                kernel_path("tma_2d.cu"), tmp_path("min2d.npy"), H, W, tmp_path("mwant2d.npy"));
    assert_int_equal(count_of(run_tool_output(), "\"mismatches\":0"), g_devices);
}

int main(void)
{
    asyncrt_context *ctx = test_open_device_or_skip("test_run_multi_gpu");
    if (!ctx) return ASYNCRT_TEST_SKIP;
    asyncrt_device_count(ctx, &g_devices);
    asyncrt_context_destroy(ctx);
    if (g_devices < 2) {
        printf("test_run_multi_gpu: skipped, %d CUDA device(s): --devices all needs 2 or more to mean anything\n",
               g_devices);
        return ASYNCRT_TEST_SKIP;
    }
    test_seed_random("test_run_multi_gpu");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(saxpy_on_every_device),
        cmocka_unit_test(tensor_maps_on_every_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
