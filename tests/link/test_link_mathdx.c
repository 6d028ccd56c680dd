/* A real device library linked at run time (issue 27): cuFFTDx's 64-point
 * FFT as LTO-IR from NVIDIA's libmathdx (tests/link/mathdx/make_fft_ltoir.sh
 * makes it; skipped, saying so, where it has not been made), linked with
 * kernels/fft_main.cu through asyncrt_link with -lto, run on 4096 FFTs of
 * fresh random data into a poisoned output and compared with a CPU DFT in
 * double precision. Skipped without an sm_90 device (test_link links the
 * LTO-IR on the CPU). */
#define _GNU_SOURCE /* asprintf */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "link_support.h"

static char *ltoir_path(void)
{
    char *path = NULL;
    if (asprintf(&path, "%s/tests/link/mathdx/fft64_c2c_f32_sm90.ltoir", getenv("ASYNCRT_TEST_SOURCE_DIR")) < 0)
        return NULL;
    struct stat st;
    if (stat(path, &st) == 0) return path;
    printf("test_link_mathdx: skipped: no %s (tests/link/mathdx/make_fft_ltoir.sh makes it where PyPI is reachable)\n",
           path);
    free(path);
    return NULL;
}

static asyncrt_program *link_fft(asyncrt_context *ctx, const char *arch, const char *ltoir)
{
    asyncrt_program *main_p = link_test_compile(ctx, "fft_main.cu", arch, "-dlto");
    asyncrt_link *link;
    asyncrt_program *out = NULL;
    assert_ok(ctx, asyncrt_link_create(ctx, arch, &link));
    assert_ok(ctx, asyncrt_link_add_program(link, main_p));
    assert_ok(ctx, asyncrt_link_add_file(link, ltoir, ASYNCRT_LINK_ANY));
    assert_ok(ctx, asyncrt_link_add_option(link, "-lto"));
    assert_ok(ctx, asyncrt_link_complete(link, &out));
    asyncrt_link_destroy(link);
    asyncrt_program_destroy(main_p);
    return out;
}

static asyncrt_context *g_ctx;
static char *g_ltoir;

static void fft_matches_dft(void **state)
{
    (void)state;
    asyncrt_context *ctx = g_ctx;
    asyncrt_program *p = link_fft(ctx, NULL, g_ltoir);
    asyncrt_module *m;
    asyncrt_kernel *k;
    assert_ok(ctx, asyncrt_module_load(ctx, p, &m));
    assert_ok(ctx, asyncrt_module_get_kernel(m, "fft64", &k));
    test_seed_random("test_link_mathdx");
    enum { N = 64, BATCHES = 4096 };
    size_t floats = 2 * (size_t)N * BATCHES;
    float *in = malloc(floats * sizeof *in), *out = malloc(floats * sizeof *out);
    assert_true(in && out);
    for (size_t i = 0; i < floats; i++) in[i] = test_random_float(-1.0f, 1.0f);
    asyncrt_deviceptr din, dout;
    assert_ok(ctx, asyncrt_memory_alloc(ctx, floats * sizeof *in, &din));
    assert_ok(ctx, asyncrt_memory_alloc(ctx, floats * sizeof *out, &dout));
    assert_ok(ctx, asyncrt_memory_to_device(ctx, din, in, floats * sizeof *in));
    assert_ok(ctx, asyncrt_memory_fill(ctx, dout, 0xFF, floats * sizeof *out, NULL)); /* NaN */
    void *args[] = {&din, &dout};
    size_t sizes[] = {sizeof din, sizeof dout};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {BATCHES}, .block = {8}, .shared_bytes = 512};
    assert_ok(ctx, asyncrt_kernel_launch(k, &cfg, args, sizes, 2));
    assert_ok(ctx, asyncrt_synchronize(ctx));
    assert_ok(ctx, asyncrt_memory_to_host(ctx, out, dout, floats * sizeof *out));
    double worst = 0;
    for (size_t b = 0; b < BATCHES; b++)
        for (int j = 0; j < N; j++) {
            double re = 0, im = 0; /* X[j] = sum x[n] e^(-2 pi i j n / N) */
            for (int n = 0; n < N; n++) {
                double a = -2 * M_PI * j * n / N, xr = in[2 * (b * N + n)], xi = in[2 * (b * N + n) + 1];
                re += xr * cos(a) - xi * sin(a);
                im += xr * sin(a) + xi * cos(a);
            }
            double dr = out[2 * (b * N + j)] - re, di = out[2 * (b * N + j) + 1] - im;
            double err = sqrt(dr * dr + di * di);
            if (!(err <= worst)) worst = err; /* a NaN sticks */
        }
    printf("cuFFTDx 64-point FFT linked from libmathdx's LTO-IR: %d FFTs, largest error %.3g (inputs in [-1, 1))\n",
           BATCHES, worst);
    assert_true(worst < 1e-4); /* float FFT of 64 values of magnitude <= 1.4: ~1e-6 expected */
    free(in), free(out);
    asyncrt_memory_free(ctx, din);
    asyncrt_memory_free(ctx, dout);
    asyncrt_module_destroy(m);
    asyncrt_program_destroy(p);
}

int main(void)
{
    if (!(g_ltoir = ltoir_path())) return ASYNCRT_TEST_SKIP;
    if (!(g_ctx = test_open_device_or_skip("test_link_mathdx"))) return ASYNCRT_TEST_SKIP;
    const asyncrt_device_info *d = asyncrt_context_device(g_ctx);
    int failed = ASYNCRT_TEST_SKIP;
    if (d->cc_major == 9 && d->cc_minor == 0) {
        const struct CMUnitTest tests[] = {cmocka_unit_test(fft_matches_dft)};
        failed = cmocka_run_group_tests(tests, NULL, NULL);
    } else {
        printf("test_link_mathdx: skipped: the LTO-IR is for sm_90, the device is sm_%d%d\n", d->cc_major, d->cc_minor);
    }
    asyncrt_context_destroy(g_ctx);
    free(g_ltoir);
    return failed;
}
