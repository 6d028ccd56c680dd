/* Two source files linked into one program with nvJitLink (asyncrt/link.h):
 * main.cu's kernel calls a __device__ function that only util.cu defines.
 * Both are compiled as LTO-IR (-dlto) and linked with -lto. With a GPU the
 * result is loaded, launched and checked; without one it is linked for
 * sm_90 only.
 * Build: examples/CMakeLists.txt (find_package), or
 *   cc link_two.c $(pkg-config --cflags --libs asyncrt) -Wl,-rpath,$(pkg-config --variable=libdir asyncrt) */
#include <asyncrt/asyncrt.h>
#include <stdio.h>

static const char *k_main =
    "__device__ float axpb(float a, float x, float b); /* in util.cu */\n"
    "extern \"C\" __global__ void apply(const float *x, float *y, float a, float b, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = axpb(a, x[i], b); }\n";
static const char *k_util = "__device__ float axpb(float a, float x, float b) { return a * x + b; }\n";

static int fail(asyncrt_context *ctx, const char *what, asyncrt_status s)
{
    fprintf(stderr, "link_two: %s: %s: %s\n", what, asyncrt_status_string(s), asyncrt_context_last_error(ctx));
    asyncrt_context_destroy(ctx);
    return 1;
}

int main(void)
{
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt_status s = asyncrt_context_open_device(ctx, 0);
    bool gpu = s == ASYNCRT_SUCCESS;
    if (!gpu && s != ASYNCRT_ERROR_NO_DRIVER && s != ASYNCRT_ERROR_NO_DEVICE) return fail(ctx, "open device 0", s);
    if (!gpu) printf("no GPU: %s\n", asyncrt_context_last_error(ctx));
    const char *arch = gpu ? NULL : "sm_90"; /* NULL: the opened device's target */

    const char *dlto[] = {"-dlto"};
    asyncrt_compile_options opts = ASYNCRT_COMPILE_OPTIONS_INIT;
    opts.arch = arch;
    opts.options = dlto;
    opts.option_count = 1;
    asyncrt_program *parts[2] = {NULL, NULL}, *linked = NULL;
    asyncrt_link *link = NULL;
    if ((s = asyncrt_program_compile(ctx, "main.cu", k_main, &opts, &parts[0])) ||
        (s = asyncrt_program_compile(ctx, "util.cu", k_util, &opts, &parts[1])) ||
        (s = asyncrt_link_create(ctx, arch, &link)) || (s = asyncrt_link_add_program(link, parts[0])) ||
        (s = asyncrt_link_add_program(link, parts[1])) || (s = asyncrt_link_add_option(link, "-lto")) ||
        (s = asyncrt_link_complete(link, &linked))) {
        asyncrt_link_destroy(link);
        asyncrt_program_destroy(parts[0]);
        asyncrt_program_destroy(parts[1]);
        return fail(ctx, "compile and link", s);
    }
    asyncrt_link_destroy(link);
    asyncrt_program_destroy(parts[0]);
    asyncrt_program_destroy(parts[1]);
    size_t bytes;
    asyncrt_program_image(linked, &bytes);
    printf("linked main.cu and util.cu: a %zu-byte CUBIN for %s (%s)\n", bytes, asyncrt_program_arch(linked),
           asyncrt_program_origin_string(asyncrt_program_origin_of(linked)));
    if (!gpu) {
        printf("running it needs a GPU\n");
        asyncrt_program_destroy(linked);
        asyncrt_context_destroy(ctx);
        return 0;
    }

    enum { N = 1000 };
    float x[N], y[N], a = 2.0f, b = 0.5f;
    int n = N;
    for (int i = 0; i < N; i++) x[i] = (float)i;
    asyncrt_module *module = NULL;
    asyncrt_kernel *kernel;
    asyncrt_deviceptr dx = 0, dy = 0;
    void *args[] = {&dx, &dy, &a, &b, &n};
    size_t sizes[] = {sizeof dx, sizeof dy, sizeof a, sizeof b, sizeof n};
    asyncrt_launch_config cfg = ASYNCRT_LAUNCH_CONFIG_INIT;
    cfg.grid[0] = (N + 255) / 256;
    cfg.block[0] = 256;
    s = asyncrt_module_load(ctx, linked, &module);
    asyncrt_program_destroy(linked);
    if (s || (s = asyncrt_module_get_kernel(module, "apply", &kernel)) ||
        (s = asyncrt_memory_alloc(ctx, sizeof x, &dx)) || (s = asyncrt_memory_alloc(ctx, sizeof y, &dy)) ||
        (s = asyncrt_memory_to_device(ctx, dx, x, sizeof x)) || (s = asyncrt_kernel_launch(kernel, &cfg, args, sizes, 5)) ||
        (s = asyncrt_memory_to_host(ctx, y, dy, sizeof y))) {
        asyncrt_memory_free(ctx, dx); /* 0 is fine */
        asyncrt_memory_free(ctx, dy);
        asyncrt_module_destroy(module);
        return fail(ctx, "load and launch", s);
    }
    int bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != a * x[i] + b;
    printf("apply on %s: %d of %d elements %s the CPU reference\n", asyncrt_context_device(ctx)->name,
           bad ? bad : N, N, bad ? "differ from" : "match");
    asyncrt_memory_free(ctx, dx);
    asyncrt_memory_free(ctx, dy);
    asyncrt_module_destroy(module);
    asyncrt_context_destroy(ctx);
    return bad ? 1 : 0;
}
