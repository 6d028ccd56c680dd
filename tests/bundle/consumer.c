/* A program as it is deployed where only the driver is: its header bundle
 * is compiled in (asyncrt-bundle --format c, at build time), NVRTC and the
 * driver are found at run time, no toolkit. It uses only the public API.
 *
 *   bundle_consumer KERNEL.cu --compile ARCH OUT   compile, write the image (CPU)
 *   bundle_consumer KERNEL.cu --run                run bundle_scale on device 0 against
 *                                                  a CPU reference (exit 77: no device)
 * Exit 0 on success, 1 on failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asyncrt/asyncrt.h"

extern const unsigned char asyncrt_test_bundle[];
extern const size_t asyncrt_test_bundle_size;

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1)) &&
        fread(text, 1, (size_t)n, f) == (size_t)n)
        text[n] = '\0';
    else free(text), text = NULL;
    fclose(f);
    return text;
}

static int fail(asyncrt_context *ctx, const char *what)
{
    fprintf(stderr, "bundle_consumer: %s: %s\n", what, ctx ? asyncrt_context_last_error(ctx) : "");
    return 1;
}

static int compile_only(asyncrt_context *ctx, const char *name, const char *source, const asyncrt_bundle *b,
                        const char *arch, const char *out)
{
    asyncrt_compile_options o = {.size = sizeof o, .arch = arch, .bundle = b};
    asyncrt_program *p = NULL;
    if (asyncrt_program_compile(ctx, name, source, &o, &p) != ASYNCRT_SUCCESS) return fail(ctx, "compile");
    size_t size;
    const void *image = asyncrt_program_image(p, &size);
    FILE *f = fopen(out, "wb");
    bool ok = f && fwrite(image, 1, size, f) == size;
    if (f && fclose(f) != 0) ok = false;
    printf("bundle_consumer: %s for %s, %zu bytes, from %s\n", name, asyncrt_program_arch(p), size,
           asyncrt_program_origin_string(asyncrt_program_origin_of(p)));
    asyncrt_program_destroy(p);
    return ok ? 0 : fail(NULL, out);
}

/* out = factor * in on random data, the output poisoned first. */
static int run(asyncrt_context *ctx, const char *name, const char *source, const asyncrt_bundle *b)
{
    if (asyncrt_context_open_device(ctx, 0) != ASYNCRT_SUCCESS) {
        printf("bundle_consumer: no device (%s): skipped\n", asyncrt_context_last_error(ctx));
        return 77;
    }
    unsigned seed = (unsigned)time(NULL);
    if (getenv("ASYNCRT_TEST_SEED")) seed = (unsigned)strtoul(getenv("ASYNCRT_TEST_SEED"), NULL, 10);
    printf("bundle_consumer: seed %u (ASYNCRT_TEST_SEED)\n", seed);
    srand(seed);
    int n = (1 << 20) + 123; /* a last block that is not full */
    float factor = 0.5f + (float)rand() / (float)RAND_MAX;
    float *in = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)n);
    if (!in || !out) return fail(NULL, "out of memory");
    for (int i = 0; i < n; i++) in[i] = (float)rand() / (float)RAND_MAX * 200.0f - 100.0f;
    asyncrt_compile_options o = {.size = sizeof o, .bundle = b}; /* arch auto: the device's own */
    asyncrt_module *module = NULL;
    asyncrt_kernel *kernel = NULL;
    asyncrt_deviceptr d_in = 0, d_out = 0;
    size_t bytes = sizeof(float) * (size_t)n;
    int rc = 1;
    if (asyncrt_module_build(ctx, name, source, &o, &module) != ASYNCRT_SUCCESS) {
        rc = fail(ctx, "build");
        goto done;
    }
    if (asyncrt_module_get_kernel(module, "bundle_scale", &kernel) != ASYNCRT_SUCCESS ||
        asyncrt_memory_alloc(ctx, bytes, &d_in) != ASYNCRT_SUCCESS ||
        asyncrt_memory_alloc(ctx, bytes, &d_out) != ASYNCRT_SUCCESS ||
        asyncrt_memory_to_device(ctx, d_in, in, bytes) != ASYNCRT_SUCCESS ||
        asyncrt_memory_fill(ctx, d_out, 0xFF, bytes, NULL) != ASYNCRT_SUCCESS) { /* NaN everywhere */
        rc = fail(ctx, "set-up");
        goto done;
    }
    void *args[] = {&d_out, &d_in, &factor, &n};
    size_t sizes[] = {sizeof d_out, sizeof d_in, sizeof factor, sizeof n};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {(unsigned)((n + 255) / 256)}, .block = {256}};
    if (asyncrt_kernel_launch(kernel, &cfg, args, sizes, 4) != ASYNCRT_SUCCESS ||
        asyncrt_synchronize(ctx) != ASYNCRT_SUCCESS ||
        asyncrt_memory_to_host(ctx, out, d_out, bytes) != ASYNCRT_SUCCESS) {
        rc = fail(ctx, "launch");
        goto done;
    }
    int wrong = 0;
    for (int i = 0; i < n; i++) {
        float want = factor * in[i]; /* one IEEE multiply, as on the device */
        if (memcmp(&out[i], &want, sizeof want) != 0 && wrong++ < 5)
            fprintf(stderr, "bundle_consumer: out[%d] = %g, expected %g\n", i, out[i], want);
    }
    printf("bundle_consumer: %d of %d elements wrong\n", wrong, n);
    rc = wrong ? 1 : 0;
done:
    asyncrt_memory_free(ctx, d_in);
    asyncrt_memory_free(ctx, d_out);
    asyncrt_module_destroy(module);
    free(in);
    free(out);
    return rc;
}

int main(int argc, char **argv)
{
    bool compile = argc == 5 && !strcmp(argv[2], "--compile"), go = argc == 3 && !strcmp(argv[2], "--run");
    if (!compile && !go) {
        fprintf(stderr, "usage: bundle_consumer KERNEL.cu --compile ARCH OUT | --run\n");
        return 1;
    }
    char *source = read_all(argv[1]);
    asyncrt_context *ctx = NULL;
    asyncrt_bundle *b = NULL;
    int rc = 1;
    if (!source) fprintf(stderr, "bundle_consumer: cannot read %s\n", argv[1]);
    else if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) fprintf(stderr, "bundle_consumer: no context\n");
    else if (asyncrt_bundle_load(ctx, asyncrt_test_bundle, asyncrt_test_bundle_size, &b) != ASYNCRT_SUCCESS)
        rc = fail(ctx, "bundle");
    else
        rc = compile ? compile_only(ctx, argv[1], source, b, argv[3], argv[4]) : run(ctx, argv[1], source, b);
    asyncrt_bundle_destroy(b);
    asyncrt_context_destroy(ctx);
    free(source);
    return rc;
}
