/* Tensor-map arguments. */
#include "tmap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tool_format.h"

/* The tensor-map type for a buffer's elements: integers by width (a TMA copy
 * only moves bytes), floats as themselves. */
static bool default_dtype(run_dtype t, asyncrt_tensormap_dtype *out)
{
    switch (t) {
    case RUN_I8: case RUN_U8: *out = ASYNCRT_TENSORMAP_DTYPE_U8; return true;
    case RUN_I16: case RUN_U16: *out = ASYNCRT_TENSORMAP_DTYPE_U16; return true;
    case RUN_I32: *out = ASYNCRT_TENSORMAP_DTYPE_I32; return true;
    case RUN_U32: *out = ASYNCRT_TENSORMAP_DTYPE_U32; return true;
    case RUN_I64: *out = ASYNCRT_TENSORMAP_DTYPE_I64; return true;
    case RUN_U64: *out = ASYNCRT_TENSORMAP_DTYPE_U64; return true;
    case RUN_F16: *out = ASYNCRT_TENSORMAP_DTYPE_F16; return true;
    case RUN_BF16: *out = ASYNCRT_TENSORMAP_DTYPE_BF16; return true;
    case RUN_F32: *out = ASYNCRT_TENSORMAP_DTYPE_F32; return true;
    case RUN_F64: *out = ASYNCRT_TENSORMAP_DTYPE_F64; return true;
    default: return false;
    }
}

bool run_tmap_describe(const run_tmap_spec *t, const run_buffer *b, asyncrt_tensormap_desc *out, char *err,
                       size_t err_size)
{
    asyncrt_tensormap_dtype dtype;
    if (t->has_dtype) dtype = t->dtype;
    else if (!default_dtype(b->dtype, &dtype))
        return tool_refuse(err, err_size, "--tmap %s: buffer %s's dtype has no tensor-map type; give dtype=", t->name,
                        b->name);
    int rank = t->rank;
    /* describe_dense wants numpy order (outermost first); the command line
     * gives driver order, so both lists are reversed here. */
    uint64_t shape[ASYNCRT_TENSORMAP_MAX_RANK];
    uint32_t box[ASYNCRT_TENSORMAP_MAX_RANK];
    if (!t->dims_rank && b->rank != rank)
        return tool_refuse(err, err_size, "--tmap %s: box has %d entries but buffer %s has rank %d: give dims= "
                        "(innermost first) to view it with another rank", t->name, rank, b->name, b->rank);
    for (int i = 0; i < rank; i++) {
        shape[rank - 1 - i] = t->dims_rank ? t->dims[i] : b->shape[b->rank - 1 - i];
        box[rank - 1 - i] = (uint32_t)t->box[i];
    }
    if (asyncrt_tensormap_describe_dense(out, dtype, b->dev, (uint32_t)rank, shape, box) != ASYNCRT_SUCCESS)
        return tool_refuse(err, err_size, "--tmap %s: rank %d is outside 1..%d", t->name, rank,
                        ASYNCRT_TENSORMAP_MAX_RANK);
    for (int i = 0; i < t->strides_rank; i++) out->global_stride[i] = t->strides[i];
    for (int i = 0; i < t->estrides_rank; i++) out->element_stride[i] = (uint32_t)t->estrides[i];
    out->swizzle = t->swizzle;
    out->interleave = t->interleave;
    out->l2_promotion = t->l2;
    out->oob_fill = t->oob;
    char why[1024];
    if (asyncrt_tensormap_validate(out, why, sizeof why) != ASYNCRT_SUCCESS)
        return tool_refuse(err, err_size, "--tmap %s: %s", t->name, why);
    /* A map reaching past its buffer would let TMA read or write other memory.
     * Interleaved layouts too: their innermost dimension is stored in whole
     * 16- or 32-byte units, so the row is rounded up to one. */
    unsigned bits = asyncrt_tensormap_dtype_bits(dtype);
    long double extent = (long double)out->global_dim[0] * bits / 8;
    long double unit = t->interleave == ASYNCRT_TENSORMAP_INTERLEAVE_16B   ? 16
                       : t->interleave == ASYNCRT_TENSORMAP_INTERLEAVE_32B ? 32 : 1;
    extent = ceill(extent / unit) * unit;
    for (int i = 1; i < rank; i++)
        extent += (long double)(out->global_dim[i] ? out->global_dim[i] - 1 : 0) * out->global_stride[i - 1];
    if (extent > (long double)b->bytes)
        return tool_refuse(err, err_size, "--tmap %s: dims and strides reach %.0Lf bytes but buffer %s holds %zu",
                        t->name, extent, b->name, b->bytes);
    return true;
}

/* The warnings of a map the driver accepts (e.g. rows not a multiple of 16
 * bytes), with the open device's limits, to stderr; errors are encode's. */
static void print_tmap_warnings(asyncrt_context *ctx, const run_tmap_spec *t, const asyncrt_tensormap_desc *desc)
{
    const asyncrt_device_info *info = asyncrt_context_device(ctx);
    asyncrt_tensormap_check_options opts = ASYNCRT_TENSORMAP_CHECK_OPTIONS_INIT;
    if (info) {
        opts.sm = info->cc_major * 10 + info->cc_minor;
        opts.smem_per_block = info->shared_memory_per_block_optin > 0 ? (uint64_t)info->shared_memory_per_block_optin : 0;
    }
    asyncrt_tensormap_report report = ASYNCRT_TENSORMAP_REPORT_INIT;
    if (asyncrt_tensormap_analyze(desc, &opts, &report) != ASYNCRT_SUCCESS) return;
    for (unsigned i = 0; i < report.warning_count && i < ASYNCRT_TENSORMAP_MAX_WARNINGS; i++)
        fprintf(stderr, "asyncrt-run: warning: --tmap %s [%s]: %s\n", t->name, report.warnings[i].rule,
                report.warnings[i].message);
}

int run_tmaps_encode(asyncrt_context *ctx, const run_cli *cli, const run_buffer *buffers,
                     asyncrt_tensor_map *maps, char *err, size_t err_size)
{
    for (size_t i = 0; i < cli->tmap_count; i++) {
        const run_tmap_spec *t = &cli->tmaps[i];
        asyncrt_tensormap_desc desc;
        if (!run_tmap_describe(t, &buffers[t->buffer], &desc, err, err_size)) return RUN_EXIT_USAGE;
        print_tmap_warnings(ctx, t, &desc);
        asyncrt_status s = asyncrt_tensormap_encode(ctx, &desc, &maps[i]);
        if (s != ASYNCRT_SUCCESS) {
            snprintf(err, err_size, "--tmap %s: %s", t->name, asyncrt_context_last_error(ctx));
            return s == ASYNCRT_ERROR_TENSORMAP_INVALID || s == ASYNCRT_ERROR_INVALID_ARGUMENT ? RUN_EXIT_USAGE
                                                                                               : RUN_EXIT_CUDA;
        }
    }
    return RUN_EXIT_OK;
}
