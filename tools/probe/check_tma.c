/* --check for TMA: tensor maps encoded through the driver, loaded by the
 * tile and im2col forms of cp.async.bulk.tensor. */
#include "check_support.h"

#include <cuda.h> /* the types only: the calls come from the context's libcuda */
#include <cudaTypedefs.h>
#include <stdio.h>

/* The entry points the checks call beside the library: tensor maps encoded
 * by the driver itself, not by asyncrt's encoder, at the ABI this file was
 * written for (asyncrt_context_driver_proc: the libcuda the context opened). */
typedef struct tma_driver {
    PFN_cuTensorMapEncodeTiled_v12000 cuTensorMapEncodeTiled;
    PFN_cuTensorMapEncodeIm2col_v12000 cuTensorMapEncodeIm2col;
    PFN_cuGetErrorName_v6000 cuGetErrorName;
    PFN_cuGetErrorString_v6000 cuGetErrorString;
} tma_driver;

/* The context's driver's entry points; a failed check when there are none. */
static const tma_driver *driver(probe_check *c)
{
    static tma_driver drv; /* the same libcuda for every context of the process */
    if (asyncrt_context_driver_proc(c->ctx, "cuTensorMapEncodeTiled", 12000, (void **)&drv.cuTensorMapEncodeTiled) ||
        asyncrt_context_driver_proc(c->ctx, "cuTensorMapEncodeIm2col", 12000,
                                    (void **)&drv.cuTensorMapEncodeIm2col) ||
        asyncrt_context_driver_proc(c->ctx, "cuGetErrorName", 6000, (void **)&drv.cuGetErrorName) ||
        asyncrt_context_driver_proc(c->ctx, "cuGetErrorString", 6000, (void **)&drv.cuGetErrorString)) {
        chk_fail(c, "no driver: %s", asyncrt_context_last_error(c->ctx));
        return NULL;
    }
    return &drv;
}

static bool encode_failed(probe_check *c, const tma_driver *drv, CUresult r, const char *call)
{
    const char *name = NULL, *text = NULL; /* as the library describes a CUresult */
    char described[160];
    drv->cuGetErrorName(r, &name);
    drv->cuGetErrorString(r, &text);
    if (name) snprintf(described, sizeof described, "%s (%s)", name, text ? text : "no description");
    else snprintf(described, sizeof described, "CUresult %d", (int)r);
    return chk_fail(c, "%s failed: %s", call, described);
}

/* A 64x48 u32 matrix, loaded in 16x8 tiles (one per CTA) and stored back in place. */
bool chk_tma_tile(probe_check *c)
{
    enum { W = 64, H = 48, BOX_W = 16, BOX_H = 8, N = W * H };
    asyncrt_kernel *k;
    asyncrt_deviceptr in, out;
    uint32_t *h;
    if (!chk_kernel(c, "probe_tma_tile", &k) || !(h = chk_input(c, N, &in)) || !chk_output(c, N, &out)) return false;
    const tma_driver *drv = driver(c);
    if (!drv) return false;
    CUtensorMap map;
    const cuuint64_t dims[2] = {W, H}, strides[1] = {W * 4};
    const cuuint32_t box[2] = {BOX_W, BOX_H}, elem_strides[2] = {1, 1};
    CUresult r = drv->cuTensorMapEncodeTiled(
        &map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, (void *)(uintptr_t)in, dims, strides, box, elem_strides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return encode_failed(c, drv, r, "cuTensorMapEncodeTiled");
    uint32_t width = W;
    void *args[] = {&map, &out, &width};
    size_t sizes[] = {sizeof map, sizeof out, sizeof width};
    return chk_launch(c, k, W / BOX_W, H / BOX_H, 128, 0, args, sizes, 3) && chk_verify(c, out, h, N);
}

/* An NHWC u32 tensor of 2 images of 5x6 pixels x 4 channels. The bounding
 * box of the filter's top-left corner is w in [0, W-2], h in [0, H-2] (lower
 * corner 0, upper corner -1, as for a 2x2 filter) and the load applies the
 * filter offset (1, 1): 32 pixels walk that box w first, then h, then n. */
bool chk_tma_im2col(probe_check *c)
{
    enum { C = 4, W = 6, H = 5, N = 2, WORDS = N * H * W * C, PIXELS = 32, BOX_W = W - 1, BOX_H = H - 1 };
    asyncrt_kernel *k;
    asyncrt_deviceptr in, out;
    uint32_t *h, *e;
    if (!chk_kernel(c, "probe_tma_im2col", &k) || !(h = chk_input(c, WORDS, &in)) ||
        !chk_output(c, PIXELS * C, &out) || !(e = chk_host(c, PIXELS * C)))
        return false;
    const tma_driver *drv = driver(c);
    if (!drv) return false;
    for (int p = 0; p < PIXELS; p++) {
        int n = p / (BOX_W * BOX_H), rest = p % (BOX_W * BOX_H), y = rest / BOX_W + 1, x = rest % BOX_W + 1;
        for (int ch = 0; ch < C; ch++) e[p * C + ch] = h[((n * H + y) * W + x) * C + ch];
    }
    CUtensorMap map;
    const cuuint64_t dims[4] = {C, W, H, N}, strides[3] = {C * 4, W * C * 4, H * W * C * 4};
    const int lower[2] = {0, 0}, upper[2] = {-1, -1};
    const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
    CUresult r = drv->cuTensorMapEncodeIm2col(
        &map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, (void *)(uintptr_t)in, dims, strides, lower, upper, C, PIXELS,
        elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return encode_failed(c, drv, r, "cuTensorMapEncodeIm2col");
    void *args[] = {&map, &out};
    size_t sizes[] = {sizeof map, sizeof out};
    return chk_launch(c, k, 1, 1, 128, 0, args, sizes, 2) && chk_verify(c, out, e, PIXELS * C);
}
