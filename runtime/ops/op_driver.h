/* The built-in ops as tables of steps, in the manner of sqlite3_module: each
 * op (op_map.c, op_tile.c) fills one asyncrt_op_module, and one driver
 * (op_driver.c) runs the steps every op shares, in this order:
 *   check the description, choose the target and path (op_select.c), tune,
 *   plan, generate the source, compile it for that target, load it and look
 *   up its kernels (with a device), log what was built.
 * An op's struct begins with an asyncrt_op, which the driver fills and frees. */
#ifndef ASYNCRT_OP_DRIVER_H
#define ASYNCRT_OP_DRIVER_H

#include <stddef.h>

#include "asyncrt/ops.h"
#include "arch.h"
#include "context.h"
#include "dispatch.h"

typedef struct asyncrt_op_module asyncrt_op_module;

/* What every built-in op has; the first member of each op's struct. */
typedef struct asyncrt_op {
    asyncrt_context *ctx;
    const asyncrt_op_module *module;
    asyncrt_op_path path;     /* never AUTO */
    asyncrt__arch arch;         /* resolved once, compiled for as it is */
    char *source;
    asyncrt_program *program;
    asyncrt_module *loaded;    /* NULL when compiled without a device */
    asyncrt_stream checked_stream; /* the last stream found to be of this op's device */
} asyncrt_op;

#define ASYNCRT_OP_MAX_KERNELS 2

struct asyncrt_op_module {
    const char *name;          /* "map", "tile": begins its messages */
    const char *source_name;   /* the generated file's name, e.g. "asyncrt_map.cu" */
    size_t size;               /* of the op's struct */
    /* The description's own rules (it is not NULL). */
    asyncrt_status (*check)(asyncrt_context *ctx, const void *desc);
    /* What the description asks for: its dispatcher ranking, path and arch text. */
    void (*wants)(const void *desc, asyncrt_dispatch_op *ranking, asyncrt_op_path *path, const char **arch);
    /* The tuning for op->path and op->arch, from op->ctx->settings. */
    asyncrt_status (*tune)(asyncrt_op *op, const void *desc);
    /* Tiles, stages and shared memory for `dev` (NULL: compiled without a device). */
    void (*plan)(asyncrt_op *op, const void *desc, const asyncrt_device_info *dev);
    /* The kernel source (malloc'd), NULL when out of memory. */
    char *(*generate)(const asyncrt_op *op, const void *desc);
    /* The kernels to look up once loaded: their names and where each goes; returns the count. */
    size_t (*kernels)(asyncrt_op *op, const char *names[ASYNCRT_OP_MAX_KERNELS],
                      asyncrt_kernel **slots[ASYNCRT_OP_MAX_KERNELS]);
    /* The ASYNCRT_LOG=1 line saying what was built (for arch_name, op->arch's). */
    void (*report)(const asyncrt_op *op, const char *arch_name);
};

/* Runs module's steps for `desc` into *out (a struct of module->size
 * bytes); NULL out or desc are refused with the op's name. */
asyncrt_status asyncrt__op_create(asyncrt_context *ctx, const asyncrt_op_module *module, const void *desc,
                                 asyncrt_op **out);
void asyncrt__op_destroy(asyncrt_op *op); /* NULL is fine */

/* An op runs on the device it was made for: a stream of another context
 * (another device's) is INVALID_ARGUMENT naming both devices, before any
 * launch. NULL is the op's context's own default stream. */
asyncrt_status asyncrt__op_check_stream(asyncrt_op *op, asyncrt_stream stream);

/* The target and path for an op (op_select.c): `arch_text` (NULL/"auto" or
 * explicit) resolved once; AUTO defers to ASYNCRT_PATH (ctx->settings), then
 * to the dispatcher (dispatch.h) with this device's calibration for
 * `ranking`. A path the target or the open device cannot run gives
 * ASYNCRT_ERROR_UNSUPPORTED. `why` gets the target's reason. The choice and
 * its reason are logged at ASYNCRT_LOG=1. */
asyncrt_status asyncrt__op_select(asyncrt_context *ctx, const char *op, asyncrt_dispatch_op ranking,
                                 asyncrt_op_path wanted, const char *arch_text, asyncrt__arch *arch, char *why,
                                 size_t why_size, asyncrt_op_path *out);

#endif
