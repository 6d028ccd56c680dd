/* Writes the LTO-IR of one cuFFTDx FFT with NVIDIA's libmathdx (the MathDx
 * run-time code generator, pip nvidia-libmathdx-cu13; it runs NVRTC, no GPU
 * needed): a 64-point complex-to-complex forward FFT in float, block
 * execution, data in registers (API LMEM: void f(float2 *rmem, char *smem)),
 * for sm_90, under the extern "C" name asyncrt_fft64_c2c_f32. Checks the
 * traits tests/link/kernels/fft_main.cu is written for (8 threads, 8
 * elements each at stride 8, 512 bytes of shared memory) and fails if
 * libmathdx chose others. Usage: gen_fft_ltoir OUT.ltoir. Built and run by
 * make_fft_ltoir.sh. */
#include <stdio.h>
#include <stdlib.h>

#include "libcufftdx.h"
#include "libmathdx.h"

#define CHECK(call)                                                            \
    do {                                                                       \
        commondxStatusType s_ = (call);                                        \
        if (s_ != COMMONDX_SUCCESS) {                                          \
            fprintf(stderr, "gen_fft_ltoir: %s failed: %d\n", #call, (int)s_); \
            return 1;                                                          \
        }                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_fft_ltoir OUT.ltoir\n");
        return 2;
    }
    cufftdxDescriptor h;
    CHECK(cufftdxCreateDescriptor(&h));
    CHECK(cufftdxSetOperatorInt64(h, CUFFTDX_OPERATOR_SIZE, 64));
    CHECK(cufftdxSetOperatorInt64(h, CUFFTDX_OPERATOR_DIRECTION, CUFFTDX_DIRECTION_FORWARD));
    CHECK(cufftdxSetOperatorInt64(h, CUFFTDX_OPERATOR_TYPE, CUFFTDX_TYPE_C2C));
    CHECK(cufftdxSetOperatorInt64(h, CUFFTDX_OPERATOR_PRECISION, COMMONDX_PRECISION_F32));
    CHECK(cufftdxSetOperatorInt64(h, CUFFTDX_OPERATOR_SM, 900));
    CHECK(cufftdxSetOperatorInt64(h, CUFFTDX_OPERATOR_EXECUTION, COMMONDX_EXECUTION_BLOCK));
    CHECK(cufftdxSetOperatorInt64(h, CUFFTDX_OPERATOR_API, CUFFTDX_API_LMEM));
    CHECK(cufftdxSetOperatorInt64(h, CUFFTDX_OPERATOR_FFTS_PER_BLOCK, 1));
    CHECK(cufftdxSetOptionStr(h, COMMONDX_OPTION_SYMBOL_NAME, "asyncrt_fft64_c2c_f32"));
    commondxCode code;
    CHECK(commondxCreateCode(&code));
    CHECK(commondxSetCodeOptionInt64(code, COMMONDX_OPTION_TARGET_SM, 900));
    CHECK(cufftdxFinalizeCode(code, h)); /* LTO-IR is the code handle's default container */
    size_t n = 0, size = 0;
    CHECK(commondxGetCodeNumLTOIRs(code, &n));
    if (n != 1) {
        fprintf(stderr, "gen_fft_ltoir: %zu LTO-IR chunks, expected 1\n", n);
        return 1;
    }
    CHECK(commondxGetCodeLTOIRSizes(code, 1, &size));
    void *ltoir = malloc(size);
    if (!ltoir) return 1;
    CHECK(commondxGetCodeLTOIRs(code, 1, &ltoir));
    long long block[3], smem, ept, stride;
    CHECK(cufftdxGetTraitInt64s(h, CUFFTDX_TRAIT_BLOCK_DIM, 3, block));
    CHECK(cufftdxGetTraitInt64(h, CUFFTDX_TRAIT_SHARED_MEMORY_SIZE, &smem));
    CHECK(cufftdxGetTraitInt64(h, CUFFTDX_TRAIT_ELEMENTS_PER_THREAD, &ept));
    CHECK(cufftdxGetTraitInt64(h, CUFFTDX_TRAIT_STRIDE, &stride));
    printf("block %lld,%lld,%lld, %lld elements per thread at stride %lld, %lld bytes of shared memory, %zu bytes\n",
           block[0], block[1], block[2], ept, stride, smem, size);
    if (block[0] != 8 || block[1] != 1 || block[2] != 1 || ept != 8 || stride != 8 || smem > 1024) {
        fprintf(stderr, "gen_fft_ltoir: traits differ from what fft_main.cu is written for\n");
        return 1;
    }
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(ltoir, 1, size, f) != size || fclose(f) != 0) {
        perror(argv[1]);
        return 1;
    }
    free(ltoir);
    commondxDestroyCode(code);
    cufftdxDestroyDescriptor(h);
    return 0;
}
