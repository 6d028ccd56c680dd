/* A host program using libasyncrt: compiles a templated kernel by its name
 * expression, launches it, and checks the result against the CPU.
 * Without a GPU it compiles for sm_90 only, says why it stops, and exits 0.
 * Build: examples/CMakeLists.txt (find_package), or
 *   cc scale_host.c $(pkg-config --cflags --libs asyncrt) -Wl,-rpath,$(pkg-config --variable=libdir asyncrt) */
#include <asyncrt/asyncrt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *k_source =
    "template <typename T>\n"
    "__global__ void scale(const T *x, T *y, T a, T b, unsigned n)\n"
    "{\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + b;\n"
    "}\n";

static int fail(asyncrt_context *ctx, const char *what, asyncrt_status s)
{
    fprintf(stderr, "scale_host: %s: %s: %s\n", what, asyncrt_status_string(s), asyncrt_context_last_error(ctx));
    asyncrt_context_destroy(ctx);
    return 1;
}

int main(void)
{
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    const char *names[] = {"scale<float>"};
    asyncrt_compile_options opts = {.size = sizeof opts, .name_expressions = names, .name_expression_count = 1};

    asyncrt_status s = asyncrt_context_open_device(ctx, 0);
    if (s == ASYNCRT_ERROR_NO_DRIVER || s == ASYNCRT_ERROR_NO_DEVICE) {
        printf("no GPU: %s\n", asyncrt_context_last_error(ctx));
        opts.arch = "sm_90"; /* what can be done without one */
        asyncrt_program *p;
        if ((s = asyncrt_program_compile(ctx, "scale.cu", k_source, &opts, &p)) != ASYNCRT_SUCCESS)
            return fail(ctx, "compile", s);
        printf("compiled scale<float> (%s) for %s (%s, origin: %s); running it needs a GPU\n",
               asyncrt_program_lowered_name(p, "scale<float>"), asyncrt_program_arch(p),
               asyncrt_program_is_ptx(p) ? "PTX" : "CUBIN",
               asyncrt_program_origin_string(asyncrt_program_origin_of(p)));
        asyncrt_program_destroy(p);
        asyncrt_context_destroy(ctx);
        return 0;
    }
    if (s != ASYNCRT_SUCCESS) return fail(ctx, "open device 0", s);

    asyncrt_module *module;
    asyncrt_kernel *kernel;
    if ((s = asyncrt_module_build(ctx, "scale.cu", k_source, &opts, &module)) != ASYNCRT_SUCCESS)
        return fail(ctx, "build", s);
    if ((s = asyncrt_module_get_kernel(module, "scale<float>", &kernel)) != ASYNCRT_SUCCESS)
        return fail(ctx, "get kernel", s);

    unsigned n = 1u << 20;
    float a = 3.0f, b = -0.5f;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y) return fail(ctx, "host memory", ASYNCRT_ERROR_OUT_OF_MEMORY);
    srand(12345u);
    for (unsigned i = 0; i < n; i++) x[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
    asyncrt_deviceptr dx = 0, dy = 0;
    if ((s = asyncrt_memory_alloc(ctx, n * sizeof(float), &dx)) || (s = asyncrt_memory_alloc(ctx, n * sizeof(float), &dy)) ||
        (s = asyncrt_memory_to_device(ctx, dx, x, n * sizeof(float))) ||
        (s = asyncrt_memory_fill(ctx, dy, 0xff, n * sizeof(float), 0))) /* poison: NaN */
        return fail(ctx, "device memory", s);
    void *args[] = {&dx, &dy, &a, &b, &n};
    size_t sizes[] = {sizeof dx, sizeof dy, sizeof a, sizeof b, sizeof n};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {(n + 255) / 256}, .block = {256}};
    if ((s = asyncrt_kernel_launch(kernel, &cfg, args, sizes, 5)) || (s = asyncrt_synchronize(ctx)) ||
        (s = asyncrt_memory_to_host(ctx, y, dy, n * sizeof(float))))
        return fail(ctx, "launch", s);

    unsigned bad = 0;
    for (unsigned i = 0; i < n; i++)
        if (!(fabsf(y[i] - (a * x[i] + b)) <= 1e-6f)) bad++;
    printf("scale<float> on %s: %u of %u elements %s the CPU reference\n",
           asyncrt_context_device(ctx)->name, bad ? bad : n, n, bad ? "differ from" : "match");
    asyncrt_memory_free(ctx, dx);
    asyncrt_memory_free(ctx, dy);
    free(x);
    free(y);
    asyncrt_module_destroy(module);
    asyncrt_context_destroy(ctx);
    return bad ? 1 : 0;
}
