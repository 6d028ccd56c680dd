/* The compile's target for a context: auto (the open device's) or explicit,
 * checked against the NVRTC it will use (target.c). */
#ifndef ASYNCRT_TARGET_H
#define ASYNCRT_TARGET_H

#include "arch.h"
#include "context.h"

/* One compile flow's target (compile.c), resolved in one call per step:
 * asyncrt__target_next is asked until it answers false; true means "compile
 * for t->arch now" (t->from_auto: the sm_XYa retry is allowed), and the
 * compile's status and program go back in on the next call. It waits for the
 * device where the target needs it, reads NVRTC's facts once, applies
 * arch.h's rules and, for a program to be loaded, the load rule before any
 * compile. "auto" while the device still opens on another thread: the target
 * remembered for it (speculate.h) is compiled first, then judged against the
 * device's own; a wrong guess is never the answer. On false, *status (and
 * *out) is the answer, with the program's reason noted (target_note). */
typedef enum asyncrt__target_step {
    ASYNCRT_TARGET_NEW,     /* nothing resolved yet */
    ASYNCRT_TARGET_GUESSED, /* the guess was compiled: judge it */
    ASYNCRT_TARGET_CHOSEN,  /* the target was compiled for: note it */
} asyncrt__target_step;

typedef struct asyncrt__target {
    const char *text;            /* NULL/"auto" or a name (the options' arch) */
    const asyncrt__arch *given;  /* a caller's target, used as is (NULL: resolve text) */
    bool lookup_only, to_load;   /* the flow's mode: no guess; the load rule first */
    asyncrt__target_step step;
    asyncrt__arch arch;          /* compile for this now */
    bool from_auto;
    char why[2048];              /* the rule that chose it (asyncrt_program_arch_reason) */
    char load[4800];             /* the load rule's sentence when it refuses */
    char guess[32];              /* the remembered target, as written */
    bool known;                  /* this NVRTC knows the guess */
    double start;                /* when the guess's compile began */
} asyncrt__target;

bool asyncrt__target_next(asyncrt_context *ctx, asyncrt__target *t, const char *source_name, asyncrt_program **out,
                          asyncrt_status *status);

/* Resolves `text` (NULL/"auto" or explicit) for this context. */
asyncrt_status asyncrt__arch_resolve(asyncrt_context *ctx, const char *text, asyncrt__arch *out);
/* The same; `why` gets the rule that chose it (asyncrt_program_arch_reason)
 * and, for an explicit target while a device is open, whether its driver can
 * load it (asyncrt__arch_loadable's sentence; nothing is refused here). */
asyncrt_status asyncrt__arch_resolve_why(asyncrt_context *ctx, const char *text, asyncrt__arch *out, char *why,
                                        size_t why_size);

/* A program for `arch` is to be loaded on ctx's open device: arch.h's load
 * rule (asyncrt__arch_check_load), with this NVRTC, this driver and, in the
 * advice, an older NVRTC the search found. VERSION_MISMATCH with the rule's
 * sentence when the driver cannot load it; SUCCESS when it can, when no
 * device is open (the program may be for another machine) or when NVRTC's
 * facts are unknown (the driver then speaks for itself). */
asyncrt_status asyncrt__arch_loadable(asyncrt_context *ctx, const asyncrt__arch *arch);

/* Records on `p` why it has its arch: `why`, the reason `resolved` was
 * chosen, and, when p's arch is another (the sm_XYa retry), that too.
 * NULL p is fine. */
void asyncrt__target_note(asyncrt_program *p, const asyncrt__arch *resolved, const char *why);

#endif
