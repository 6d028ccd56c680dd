/* Two cache misses in one asyncrt_build_batch, through an installed
 * libasyncrt: install_and_consume.sh runs it with ASYNCRT_LOG=2 and checks
 * that the installed compile worker was found and ran. argv[1] seeds the
 * kernels, so each run misses. Exit 0 when both compiled. */
#include <stdio.h>
#include <stdlib.h>

#include "asyncrt/asyncrt.h"

int main(int argc, char **argv)
{
    int seed = argc > 1 ? atoi(argv[1]) : 0;
    char src[2][160];
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    asyncrt_build_request reqs[2];
    for (int i = 0; i < 2; i++) {
        snprintf(src[i], sizeof src[i], "extern \"C\" __global__ void k%d(int *x) { x[0] = %d; }\n", i, seed + i);
        reqs[i] = (asyncrt_build_request){.source_name = "consumer.cu", .source = src[i], .opts = &o};
    }
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt_status s = asyncrt_build_batch(ctx, reqs, 2, 2, false);
    if (s != ASYNCRT_SUCCESS) fprintf(stderr, "batch_consumer: %s\n", asyncrt_context_last_error(ctx));
    else printf("batch_consumer: 2 programs compiled\n");
    asyncrt_build_batch_release(reqs, 2);
    asyncrt_context_destroy(ctx);
    return s == ASYNCRT_SUCCESS ? 0 : 1;
}
