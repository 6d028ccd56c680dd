/* Telling a caller's progress callback (asyncrt/runtime.h, "progress") what
 * a call does next. Inline: a NULL callback costs one test. */
#ifndef ASYNCRT_BASE_PROGRESS_H
#define ASYNCRT_BASE_PROGRESS_H

#include "asyncrt/runtime.h"
#include "sized.h"

static inline void asyncrt__progress(asyncrt_progress_fn fn, void *user, asyncrt_progress_phase phase,
                                     const char *source_name, const char *arch, long long count)
{
    if (!fn) return;
    asyncrt_progress_event e = {.size = sizeof e, .phase = phase, .source_name = source_name ? source_name : "",
                                .arch = arch ? arch : "", .count = count};
    fn(&e, user);
}

/* The same through the callback of a caller's compile options, read by
 * their size as every call reads them (none for options the size rule
 * refuses: the call that compiles says why); a NULL source_name is the
 * compile's default name. */
static inline void asyncrt__progress_options(const asyncrt_compile_options *caller, asyncrt_progress_phase phase,
                                             const char *source_name, const char *arch)
{
    asyncrt_compile_options o;
    char why[ASYNCRT_SIZED_WHY];
    if (caller && asyncrt__sized_in(ASYNCRT_SIZED_COMPILE_OPTIONS, caller, &o, why))
        asyncrt__progress(o.progress, o.progress_user, phase, source_name ? source_name : "kernel.cu", arch, -1);
}

#endif
