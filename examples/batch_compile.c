/* Compiles several kernels at once with asyncrt_build_batch: up to `threads`
 * at a time, each request with its own status and message, misses compiled
 * by worker processes into the disk cache. With a GPU the programs are
 * loaded too; without one they are compiled for sm_90 only.
 * Build: examples/CMakeLists.txt (find_package), or
 *   cc batch_compile.c $(pkg-config --cflags --libs asyncrt) -Wl,-rpath,$(pkg-config --variable=libdir asyncrt) */
#include <asyncrt/asyncrt.h>
#include <stdio.h>

#define COUNT 4

static int fail(asyncrt_context *ctx, const char *what, asyncrt_status s)
{
    fprintf(stderr, "batch_compile: %s: %s: %s\n", what, asyncrt_status_string(s), asyncrt_context_last_error(ctx));
    asyncrt_context_destroy(ctx);
    return 1;
}

int main(void)
{
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt_compile_options opts = ASYNCRT_COMPILE_OPTIONS_INIT;
    asyncrt_status s = asyncrt_context_open_device(ctx, 0);
    bool gpu = s == ASYNCRT_SUCCESS;
    if (!gpu && s != ASYNCRT_ERROR_NO_DRIVER && s != ASYNCRT_ERROR_NO_DEVICE) return fail(ctx, "open device 0", s);
    if (!gpu) {
        printf("no GPU: %s\n", asyncrt_context_last_error(ctx));
        opts.arch = "sm_90"; /* an explicit target: compiling needs no device */
    }

    /* Four kernels, each its own program (a real program would read files). */
    char sources[COUNT][200];
    asyncrt_build_request reqs[COUNT];
    for (int i = 0; i < COUNT; i++) {
        snprintf(sources[i], sizeof sources[i],
                 "extern \"C\" __global__ void step%d(float *x, int n)\n"
                 "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * %d.0f + 1.0f; }\n",
                 i, i + 2);
        reqs[i] = (asyncrt_build_request){.source_name = "step.cu", .source = sources[i], .opts = &opts};
    }
    /* 0 threads: as many as the CPU has; load onto the device when there is one. */
    s = asyncrt_build_batch(ctx, reqs, COUNT, 0, gpu);
    for (int i = 0; i < COUNT; i++) {
        if (reqs[i].status != ASYNCRT_SUCCESS)
            fprintf(stderr, "batch_compile: step%d: %s: %s\n", i, asyncrt_status_string(reqs[i].status),
                    reqs[i].message ? reqs[i].message : "");
        else
            printf("step%d: %s for %s (%s)%s\n", i, asyncrt_program_is_ptx(reqs[i].program) ? "PTX" : "CUBIN",
                   asyncrt_program_arch(reqs[i].program),
                   asyncrt_program_origin_string(asyncrt_program_origin_of(reqs[i].program)),
                   reqs[i].module ? ", loaded" : "");
        asyncrt_module_destroy(reqs[i].module); /* the batch leaves modules to the caller */
    }
    asyncrt_build_batch_release(reqs, COUNT);
    if (s != ASYNCRT_SUCCESS) return fail(ctx, "build batch", s);
    printf("%d programs built%s\n", COUNT, gpu ? " and loaded" : "; loading them needs a GPU");
    asyncrt_context_destroy(ctx);
    return 0;
}
