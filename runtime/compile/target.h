/* The compile's target for a context: auto (the open device's) or explicit,
 * checked against the NVRTC it will use (target.c). */
#ifndef ASYNCRT_TARGET_H
#define ASYNCRT_TARGET_H

#include "arch.h"
#include "context.h"

/* Resolves `text` (NULL/"auto" or explicit) for this context. */
asyncrt_status asyncrt__arch_resolve(asyncrt_context *ctx, const char *text, asyncrt_arch *out);
/* The same; `why` gets the rule that chose it (asyncrt_program_arch_reason). */
asyncrt_status asyncrt__arch_resolve_why(asyncrt_context *ctx, const char *text, asyncrt_arch *out, char *why,
                                        size_t why_size);

/* Records on `p` why it has its arch: `why`, the reason `resolved` was
 * chosen, and, when p's arch is another (the sm_XYa retry), that too.
 * NULL p is fine. */
void asyncrt__target_note(asyncrt_program *p, const asyncrt_arch *resolved, const char *why);

#endif
