/* Encoding through the driver: validate first (so the user gets a named
 * rule, not CUDA_ERROR_INVALID_VALUE), then cuTensorMapEncode*. */
#include <stdlib.h>

#include "context.h"
#include "tensormap_rules.h"

/* Our enums are passed to the driver as they are: their values must match. */
#define SAME(ours, cuda) ((int)(ours) == (int)(cuda))
_Static_assert(sizeof(asyncrt_tensor_map) == sizeof(CUtensorMap), "CUtensorMap size");
_Static_assert(_Alignof(asyncrt_tensor_map) >= 64, "the driver needs 64-byte alignment");
_Static_assert(SAME(ASYNCRT_TENSORMAP_DTYPE_U8, CU_TENSOR_MAP_DATA_TYPE_UINT8) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_U16, CU_TENSOR_MAP_DATA_TYPE_UINT16) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_U32, CU_TENSOR_MAP_DATA_TYPE_UINT32) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_I32, CU_TENSOR_MAP_DATA_TYPE_INT32) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_U64, CU_TENSOR_MAP_DATA_TYPE_UINT64) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_I64, CU_TENSOR_MAP_DATA_TYPE_INT64) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_F16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_F32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_F64, CU_TENSOR_MAP_DATA_TYPE_FLOAT64) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_BF16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_F32_FTZ, CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_TF32, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_TF32_FTZ, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_16U4_ALIGN8B, CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_16U4_ALIGN16B, CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B) &&
               SAME(ASYNCRT_TENSORMAP_DTYPE_16U6_ALIGN16B, CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B),
               "CUtensorMapDataType values");
_Static_assert(SAME(ASYNCRT_TENSORMAP_INTERLEAVE_NONE, CU_TENSOR_MAP_INTERLEAVE_NONE) &&
               SAME(ASYNCRT_TENSORMAP_INTERLEAVE_16B, CU_TENSOR_MAP_INTERLEAVE_16B) &&
               SAME(ASYNCRT_TENSORMAP_INTERLEAVE_32B, CU_TENSOR_MAP_INTERLEAVE_32B),
               "CUtensorMapInterleave values");
_Static_assert(SAME(ASYNCRT_TENSORMAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE) &&
               SAME(ASYNCRT_TENSORMAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_32B) &&
               SAME(ASYNCRT_TENSORMAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_64B) &&
               SAME(ASYNCRT_TENSORMAP_SWIZZLE_128B, CU_TENSOR_MAP_SWIZZLE_128B) &&
               SAME(ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_32B, CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B) &&
               SAME(ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_32B_FLIP_8B, CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B) &&
               SAME(ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_64B, CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B),
               "CUtensorMapSwizzle values");
_Static_assert(SAME(ASYNCRT_TENSORMAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE) &&
               SAME(ASYNCRT_TENSORMAP_L2_PROMOTION_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_64B) &&
               SAME(ASYNCRT_TENSORMAP_L2_PROMOTION_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B) &&
               SAME(ASYNCRT_TENSORMAP_L2_PROMOTION_256B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B),
               "CUtensorMapL2promotion values");
_Static_assert(SAME(ASYNCRT_TENSORMAP_OOB_FILL_ZERO, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) &&
               SAME(ASYNCRT_TENSORMAP_OOB_FILL_NAN, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA),
               "CUtensorMapFloatOOBfill values");

/* The driver is needed; a device is not. When one is open its context is
 * made current (the driver may want one) and its architecture's rules apply. */
static asyncrt_status prepare(asyncrt_context *ctx, int *sm)
{
    asyncrt_status s = asyncrt_require_driver(ctx);
    if (s != ASYNCRT_SUCCESS) return s;
    *sm = 0;
    if (!asyncrt_context_device(ctx)) return ASYNCRT_SUCCESS;
    s = asyncrt_require_device(ctx);
    if (s == ASYNCRT_SUCCESS) *sm = ctx->info.cc_major * 10 + ctx->info.cc_minor;
    return s;
}

/* A rejection validation did not predict: a gap in our rules, reported with
 * everything needed to add the missing one. */
static asyncrt_status driver_rejected(asyncrt_context *ctx, CUresult r, const char *call, char *dump)
{
    asyncrt_status status = r == CUDA_ERROR_INVALID_VALUE ? ASYNCRT_ERROR_TENSORMAP_INVALID
                                                          : ASYNCRT_ERROR_DRIVER;
    return asyncrt_fail_cu(ctx, status, r, call,
                           "the descriptor passed asyncrt's validation, so this is a rule asyncrt "
                           "does not know yet (please report it); the parameters were:\n%s",
                           dump ? dump : "(out of memory)");
}

static char *dump_tiled(const asyncrt_tensormap_desc *d)
{
    size_t n = asyncrt_tensormap_dump(d, NULL, 0) + 1;
    char *buf = malloc(n);
    if (buf) asyncrt_tensormap_dump(d, buf, n);
    return buf;
}

static char *dump_im2col(const asyncrt_tensormap_im2col_desc *d)
{
    size_t n = asyncrt_tensormap_dump_im2col(d, NULL, 0) + 1;
    char *buf = malloc(n);
    if (buf) asyncrt_tensormap_dump_im2col(d, buf, n);
    return buf;
}

asyncrt_status asyncrt_tensormap_encode(asyncrt_context *ctx, const asyncrt_tensormap_desc *desc,
                                        asyncrt_tensor_map *out)
{
    ASYNCRT_ENTER(ctx);
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!desc || !out)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "asyncrt_tensormap_encode: desc and out must not be NULL");
    /* The rules first, so that a machine without a driver still explains them. */
    char msg[512];
    asyncrt_status s = asyncrt_tensormap_check(desc, NULL, 0, NULL, msg, sizeof msg);
    if (s != ASYNCRT_SUCCESS) return asyncrt_fail(ctx, s, "tensor map: %s", msg);
    int sm;
    s = prepare(ctx, &sm);
    if (s != ASYNCRT_SUCCESS) return s;
    if (sm && asyncrt_tensormap_check(desc, NULL, sm, NULL, msg, sizeof msg) != ASYNCRT_SUCCESS)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_TENSORMAP_INVALID, "tensor map: %s", msg);

    CUresult r = ctx->drv->cuTensorMapEncodeTiled(
        (CUtensorMap *)out, (CUtensorMapDataType)desc->dtype, desc->rank,
        (void *)(uintptr_t)desc->address, desc->global_dim, desc->global_stride, desc->box_dim,
        desc->element_stride, (CUtensorMapInterleave)desc->interleave,
        (CUtensorMapSwizzle)desc->swizzle, (CUtensorMapL2promotion)desc->l2_promotion,
        (CUtensorMapFloatOOBfill)desc->oob_fill);
    if (r == CUDA_SUCCESS) return ASYNCRT_SUCCESS;
    char *dump = dump_tiled(desc);
    s = driver_rejected(ctx, r, "cuTensorMapEncodeTiled", dump);
    free(dump);
    return s;
}

asyncrt_status asyncrt_tensormap_encode_im2col(asyncrt_context *ctx,
                                               const asyncrt_tensormap_im2col_desc *desc,
                                               asyncrt_tensor_map *out)
{
    ASYNCRT_ENTER(ctx);
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!desc || !out)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "asyncrt_tensormap_encode_im2col: desc and out must not be NULL");
    /* The rules first, so that a machine without a driver still explains them. */
    char msg[512];
    asyncrt_status s = asyncrt_tensormap_check(&desc->tiled, desc, 0, NULL, msg, sizeof msg);
    if (s != ASYNCRT_SUCCESS) return asyncrt_fail(ctx, s, "im2col tensor map: %s", msg);
    int sm;
    s = prepare(ctx, &sm);
    if (s != ASYNCRT_SUCCESS) return s;
    if (sm && asyncrt_tensormap_check(&desc->tiled, desc, sm, NULL, msg, sizeof msg) != ASYNCRT_SUCCESS)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_TENSORMAP_INVALID, "im2col tensor map: %s", msg);

    const asyncrt_tensormap_desc *d = &desc->tiled;
    CUresult r = ctx->drv->cuTensorMapEncodeIm2col(
        (CUtensorMap *)out, (CUtensorMapDataType)d->dtype, d->rank, (void *)(uintptr_t)d->address,
        d->global_dim, d->global_stride, desc->lower_corner, desc->upper_corner,
        desc->channels_per_pixel, desc->pixels_per_column, d->element_stride,
        (CUtensorMapInterleave)d->interleave, (CUtensorMapSwizzle)d->swizzle,
        (CUtensorMapL2promotion)d->l2_promotion, (CUtensorMapFloatOOBfill)d->oob_fill);
    if (r == CUDA_SUCCESS) return ASYNCRT_SUCCESS;
    char *dump = dump_im2col(desc);
    s = driver_rejected(ctx, r, "cuTensorMapEncodeIm2col", dump);
    free(dump);
    return s;
}

asyncrt_status asyncrt_tensormap_replace_address(asyncrt_context *ctx, asyncrt_tensor_map *map,
                                                 asyncrt_deviceptr address)
{
    ASYNCRT_ENTER(ctx);
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!map)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "asyncrt_tensormap_replace_address: map must not be NULL");
    if (address % 16 != 0)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_TENSORMAP_INVALID,
                            "address (0x%llx): must be 16-byte aligned", (unsigned long long)address);
    int sm;
    asyncrt_status s = prepare(ctx, &sm);
    if (s != ASYNCRT_SUCCESS) return s;
    CUresult r = ctx->drv->cuTensorMapReplaceAddress((CUtensorMap *)map, (void *)(uintptr_t)address);
    if (r != CUDA_SUCCESS)
        return asyncrt_fail_cu(ctx, r == CUDA_ERROR_INVALID_VALUE ? ASYNCRT_ERROR_TENSORMAP_INVALID
                                                                  : ASYNCRT_ERROR_DRIVER,
                               r, "cuTensorMapReplaceAddress",
                               "address 0x%llx (it must be 32-byte aligned for maps made with "
                               "interleave 32B or an ALIGN16B dtype)", (unsigned long long)address);
    return ASYNCRT_SUCCESS;
}
