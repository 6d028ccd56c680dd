/* The steps every built-in op shares (op_driver.h), run over its table. */
#include "op_driver.h"

#include <stdio.h>
#include <stdlib.h>

#include "asyncrt/graph.h"
#include "capture.h"
#include "compile.h"
#include "target.h"

void asyncrt__op_destroy(asyncrt_op *op)
{
    if (!op) return;
    asyncrt_module_destroy(op->loaded);
    asyncrt_program_destroy(op->program);
    free(op->source);
    free(op);
}

asyncrt_status asyncrt__op_check_stream(asyncrt_op *op, asyncrt_stream stream)
{
    asyncrt_context *ctx = op->ctx;
    const asyncrt_driver *drv = ctx->drv;
    if (!stream || stream == op->checked_stream || !drv->cuStreamGetCtx) return ASYNCRT_SUCCESS;
    CUcontext owner = NULL;
    CUresult r = drv->cuStreamGetCtx((CUstream)stream, &owner);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, r, "cuStreamGetCtx", "%s: stream %p", op->module->name,
                                stream);
    if (owner == ctx->cu_context) {
        op->checked_stream = stream;
        return ASYNCRT_SUCCESS;
    }
    CUdevice other;
    char whose[64] = "another context's (not device's primary one)";
    if (drv->cuStreamGetDevice && drv->cuStreamGetDevice((CUstream)stream, &other) == CUDA_SUCCESS)
        snprintf(whose, sizeof whose, "device %d's", (int)other);
    return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                         "%s: the op was made for device %d (%s) but stream %p is %s; make the op on a context of "
                         "that device (asyncrt_context_create_peer shares the cache: its program is a memory hit there)",
                         op->module->name, ctx->info.ordinal, ctx->info.name, stream, whose);
}

/* Loads the program and looks up the module's kernels. */
static asyncrt_status load(asyncrt_op *op)
{
    const char *names[ASYNCRT_OP_MAX_KERNELS];
    asyncrt_kernel **slots[ASYNCRT_OP_MAX_KERNELS];
    size_t count = op->module->kernels(op, names, slots);
    ASYNCRT_TRY(asyncrt_module_load(op->ctx, op->program, &op->loaded));
    for (size_t k = 0; k < count; k++) ASYNCRT_TRY(asyncrt_module_get_kernel(op->loaded, names[k], slots[k]));
    /* loaded now, not lazily at the first launch: an op made before a stream
     * capture may then launch inside it (asyncrt/graph.h); a lazy driver
     * without cuFuncLoad (before 12.4) leaves that to the first launch */
    asyncrt_status s = asyncrt_module_make_resident(op->loaded);
    return s == ASYNCRT_ERROR_UNSUPPORTED ? ASYNCRT_SUCCESS : s;
}

static asyncrt_status op_create(asyncrt_context *ctx, const asyncrt_op_module *m, const void *desc,
                               asyncrt_op **out)
{
    if (!out) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "%s: out is NULL", m->name);
    *out = NULL;
    if (!desc) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "%s: the description is NULL", m->name);
    ASYNCRT_TRY(m->check(ctx, desc));
    if (asyncrt_context_device(ctx)) ASYNCRT_TRY(asyncrt__capture_refuse(ctx, "creating built-in op", m->name));
    asyncrt_dispatch_op ranking;
    asyncrt_op_path wanted, path;
    const char *arch_text;
    m->wants(desc, &ranking, &wanted, &arch_text);
    asyncrt__arch arch;
    char why[2048];
    ASYNCRT_TRY(asyncrt__op_select(ctx, m->name, ranking, wanted, arch_text, &arch, why, sizeof why, &path));

    asyncrt_op *op = calloc(1, m->size);
    if (!op) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "%s: out of memory", m->name);
    *op = (asyncrt_op){.ctx = ctx, .module = m, .path = path, .arch = arch};
    const asyncrt_device_info *dev = asyncrt_context_device(ctx);
    asyncrt_status s = m->tune(op, desc);
    if (s != ASYNCRT_SUCCESS) goto fail;
    m->plan(op, desc, dev);
    if (!(op->source = m->generate(op, desc))) {
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "%s: out of memory", m->name);
        goto fail;
    }
    s = asyncrt__program_compile_arch(ctx, m->source_name, op->source, NULL, &arch, &op->program);
    asyncrt__target_note(op->program, &arch, why); /* the reason the op's target was chosen */
    if (s == ASYNCRT_SUCCESS && dev) s = load(op);
    if (s != ASYNCRT_SUCCESS) goto fail;
    char arch_name[32];
    asyncrt__arch_format(&arch, arch_name, sizeof arch_name);
    m->report(op, arch_name);
    *out = op;
    return ASYNCRT_SUCCESS;
fail:
    asyncrt__op_destroy(op);
    return s;
}

asyncrt_status asyncrt__op_create(asyncrt_context *ctx, const asyncrt_op_module *m, const void *desc,
                                 asyncrt_op **out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, op_create(ctx, m, desc, out));
}
