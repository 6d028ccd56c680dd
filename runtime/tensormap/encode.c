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
 * made current (the driver may want one) and *sm is its architecture (0
 * without), for the small-tensor fix. */
static asyncrt_status prepare(asyncrt_context *ctx, int *sm)
{
    ASYNCRT_TRY(asyncrt__require_driver(ctx));
    *sm = 0;
    if (!asyncrt_context_device(ctx)) return ASYNCRT_SUCCESS;
    ASYNCRT_TRY(asyncrt__require_device(ctx));
    *sm = ctx->info.cc_major * 10 + ctx->info.cc_minor;
    return ASYNCRT_SUCCESS;
}

/* A rejection validation did not predict: a gap in our rules, reported with
 * everything needed to add the missing one. */
static asyncrt_status driver_rejected(asyncrt_context *ctx, CUresult r, const char *call, char *dump)
{
    asyncrt_status status = r == CUDA_ERROR_INVALID_VALUE ? ASYNCRT_ERROR_TENSORMAP_INVALID
                                                          : ASYNCRT_ERROR_DRIVER;
    return asyncrt__fail_cu(ctx, status, r, call,
                           "the descriptor passed asyncrt's validation, so this is a rule asyncrt "
                           "does not know yet (please report it); the parameters were:\n%s",
                           dump ? dump : "(out of memory)");
}

/* Every rule before the driver is needed, so that a machine without one
 * still explains them; with a device open, its architecture's. Then the
 * warnings (device limits included) to the log: they never fail an encode. */
static asyncrt_status rules(asyncrt_context *ctx, const asyncrt_tensormap_desc *d,
                            const asyncrt_tensormap_im2col_desc *im2col, const char *what)
{
    const asyncrt_device_info *info = asyncrt_context_device(ctx);
    asyncrt_tensormap_check_options opts = ASYNCRT_TENSORMAP_CHECK_OPTIONS_INIT;
    if (info) {
        opts.sm = info->cc_major * 10 + info->cc_minor;
        opts.smem_per_block = info->shared_memory_per_block_optin > 0
                                  ? (uint64_t)info->shared_memory_per_block_optin : 0;
    }
    asyncrt_tensormap_report *r = calloc(1, sizeof *r);
    if (!r) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    asyncrt_status s = asyncrt__tensormap_analyze_im2col_or_tiled(d, im2col, &opts, r);
    if (s != ASYNCRT_SUCCESS) {
        s = asyncrt__fail(ctx, s, "%s: %s", what, r->error.message);
    } else {
        for (unsigned i = 0; i < r->warning_count && i < ASYNCRT_TENSORMAP_MAX_WARNINGS; i++)
            asyncrt__log(ctx, 1, "%s: warning [%s]: %s", what, r->warnings[i].rule, r->warnings[i].message);
    }
    free(r);
    return s;
}

/* NVIDIA's workaround for small tensors on Blackwell (small_tensor_fix.c). */
static void small_tensor_fix(asyncrt_context *ctx, const asyncrt_tensormap_desc *d, int sm,
                             asyncrt_tensor_map *out)
{
    uint64_t span = asyncrt__tensormap_span_bytes(d);
    if (!asyncrt__tensormap_needs_small_tensor_fix(sm, ctx->drv->version, span)) return;
    asyncrt__tensormap_apply_small_tensor_fix(out);
    asyncrt__log(ctx, 1, "tensor map: %llu-byte tensor on sm_%d with driver %d: bit 85 cleared "
                "(NVIDIA's workaround for small tensors on Blackwell)", (unsigned long long)span, sm,
                ctx->drv->version);
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

static asyncrt_status tensormap_encode(asyncrt_context *ctx, const asyncrt_tensormap_desc *desc,
                                       asyncrt_tensor_map *out)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!desc || !out)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "asyncrt_tensormap_encode: desc and out must not be NULL");
    ASYNCRT_TRY(rules(ctx, desc, NULL, "tensor map"));
    int sm;
    ASYNCRT_TRY(prepare(ctx, &sm));

    CUresult r = ctx->drv->cuTensorMapEncodeTiled(
        (CUtensorMap *)out, (CUtensorMapDataType)desc->dtype, desc->rank,
        (void *)(uintptr_t)desc->address, desc->global_dim, desc->global_stride, desc->box_dim,
        desc->element_stride, (CUtensorMapInterleave)desc->interleave,
        (CUtensorMapSwizzle)desc->swizzle, (CUtensorMapL2promotion)desc->l2_promotion,
        (CUtensorMapFloatOOBfill)desc->oob_fill);
    if (r == CUDA_SUCCESS) {
        small_tensor_fix(ctx, desc, sm, out);
        return ASYNCRT_SUCCESS;
    }
    char *dump = dump_tiled(desc);
    asyncrt_status s = driver_rejected(ctx, r, "cuTensorMapEncodeTiled", dump);
    free(dump);
    return s;
}

asyncrt_status asyncrt_tensormap_encode(asyncrt_context *ctx, const asyncrt_tensormap_desc *desc,
                                        asyncrt_tensor_map *out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, tensormap_encode(ctx, desc, out));
}

static asyncrt_status tensormap_encode_im2col(asyncrt_context *ctx,
                                              const asyncrt_tensormap_im2col_desc *desc,
                                              asyncrt_tensor_map *out)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!desc || !out)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "asyncrt_tensormap_encode_im2col: desc and out must not be NULL");
    ASYNCRT_TRY(rules(ctx, &desc->tiled, desc, "im2col tensor map"));
    int sm;
    ASYNCRT_TRY(prepare(ctx, &sm));

    const asyncrt_tensormap_desc *d = &desc->tiled;
    CUresult r = ctx->drv->cuTensorMapEncodeIm2col(
        (CUtensorMap *)out, (CUtensorMapDataType)d->dtype, d->rank, (void *)(uintptr_t)d->address,
        d->global_dim, d->global_stride, desc->lower_corner, desc->upper_corner,
        desc->channels_per_pixel, desc->pixels_per_column, d->element_stride,
        (CUtensorMapInterleave)d->interleave, (CUtensorMapSwizzle)d->swizzle,
        (CUtensorMapL2promotion)d->l2_promotion, (CUtensorMapFloatOOBfill)d->oob_fill);
    if (r == CUDA_SUCCESS) {
        small_tensor_fix(ctx, d, sm, out);
        return ASYNCRT_SUCCESS;
    }
    char *dump = dump_im2col(desc);
    asyncrt_status s = driver_rejected(ctx, r, "cuTensorMapEncodeIm2col", dump);
    free(dump);
    return s;
}

asyncrt_status asyncrt_tensormap_encode_im2col(asyncrt_context *ctx,
                                               const asyncrt_tensormap_im2col_desc *desc,
                                               asyncrt_tensor_map *out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, tensormap_encode_im2col(ctx, desc, out));
}

static asyncrt_status tensormap_replace_address(asyncrt_context *ctx, asyncrt_tensor_map *map,
                                                asyncrt_deviceptr address)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!map)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "asyncrt_tensormap_replace_address: map must not be NULL");
    if (address % 16 != 0)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_TENSORMAP_INVALID,
                            "address (0x%llx): must be 16-byte aligned", (unsigned long long)address);
    int sm;
    ASYNCRT_TRY(prepare(ctx, &sm));
    /* Where the small-tensor fix applies, a bit 85 that was clear stays clear
     * (the tensor, and so the decision, is the same; the driver may redo it). */
    bool keep_clear = asyncrt__tensormap_needs_small_tensor_fix(sm, ctx->drv->version, 0) &&
                      !asyncrt__tensormap_bit85(map);
    CUresult r = ctx->drv->cuTensorMapReplaceAddress((CUtensorMap *)map, (void *)(uintptr_t)address);
    if (r == CUDA_SUCCESS && keep_clear) asyncrt__tensormap_apply_small_tensor_fix(map);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, r == CUDA_ERROR_INVALID_VALUE ? ASYNCRT_ERROR_TENSORMAP_INVALID
                                                                  : ASYNCRT_ERROR_DRIVER,
                               r, "cuTensorMapReplaceAddress",
                               "address 0x%llx (it must be 32-byte aligned for maps made with "
                               "interleave 32B or an ALIGN16B dtype)", (unsigned long long)address);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_tensormap_replace_address(asyncrt_context *ctx, asyncrt_tensor_map *map,
                                                 asyncrt_deviceptr address)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, tensormap_replace_address(ctx, map, address));
}
