/* The compile's target for a context: auto (the open device's) or explicit,
 * checked against the NVRTC it will use (target.c). */
#ifndef ASYNCRT_TARGET_H
#define ASYNCRT_TARGET_H

#include "arch.h"
#include "context.h"

/* Resolves `text` (NULL/"auto" or explicit) for this context. */
asyncrt_status asyncrt__arch_resolve(asyncrt_context *ctx, const char *text, asyncrt_arch *out);

#endif
