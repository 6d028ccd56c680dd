/* A program outside the tree: only the installed header and library. */
#include <asyncrt/asyncrt.h>
#include <stdio.h>

int main(void)
{
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt_context_set_cache_dir(ctx, NULL);
    asyncrt_compile_options opts = {.arch = "sm_90"};
    asyncrt_program *p;
    asyncrt_status s = asyncrt_program_compile(ctx, "k.cu", "extern \"C\" __global__ void k() {}", &opts, &p);
    if (s != ASYNCRT_SUCCESS) {
        printf("%s: %s\n", asyncrt_status_string(s), asyncrt_context_last_error(ctx));
        return 1;
    }
    printf("compiled %s %s\n", asyncrt_program_arch(p), asyncrt_program_is_ptx(p) ? "PTX" : "CUBIN");
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    return 0;
}
