/* One compile for one target, as compile.c's flow passes it through its
 * steps, each in its own file and entered once per target, in this order:
 *   target.c     the target (asyncrt__arch), resolved once;
 *   toolkit.c    what device code sees: the toolkit's include directory,
 *                the built-in headers offered, the stand-in <cuda.h>;
 *   key.c        NVRTC's options for the target and the cache key over them;
 *   lookup.c     the cache lookup, one compile per key at a time;
 *   nvrtc_run.c  NVRTC, with a time trace and maybe a precompiled header,
 *                then compact_use.c's compact image of a CUBIN (when on);
 *   deps.c       the files the compile read, from the trace;
 *   store.c      the result into the cache, the PCH's record, the claim let go.
 * retry.c (sm_XYa after ptxas) and target.c (the target, a guessed one while
 * the device opens) decide around that flow. Private to runtime/compile. */
#ifndef ASYNCRT_COMPILE_JOB_H
#define ASYNCRT_COMPILE_JOB_H

#include <time.h>

#include "arch.h"
#include "bundle.h"
#include "cache.h"
#include "cache_manifest.h"
#include "context.h"
#include "embedded.h"
#include "pch.h"
#include "program.h"
#include "string_list.h"

/* Where a job stands. The in-flight claim on its key is held exactly while
 * the state is CLAIMED (lookup.c takes it, store.c or a retarget lets it go). */
typedef enum asyncrt_compile_state {
    ASYNCRT_COMPILE_NEW,         /* a target, nothing prepared for it */
    ASYNCRT_COMPILE_KEYED,       /* options and key are the target's; cacheable */
    ASYNCRT_COMPILE_UNCACHEABLE, /* options and key are the target's; no cache (key.c logs why) */
    ASYNCRT_COMPILE_MISSED,      /* the cache missed; no claim held */
    ASYNCRT_COMPILE_CLAIMED,     /* the cache missed; this job compiles the key, others wait */
    ASYNCRT_COMPILE_HIT,         /* the program came from the cache */
    ASYNCRT_COMPILE_COMPILED,    /* NVRTC built it; not cached */
    ASYNCRT_COMPILE_STORED,      /* NVRTC built it and the cache holds it */
    ASYNCRT_COMPILE_FAILED,      /* a step failed: its status and the last error say why */
} asyncrt_compile_state;

/* What a lookup-only flow answers for the state it stopped in: SUCCESS on a
 * hit, UNSUPPORTED when the cache was not consulted, else NOT_FOUND (lookup.c). */
asyncrt_status asyncrt__compile_lookup_status(asyncrt_compile_state state);


typedef struct asyncrt_compile_job {
    asyncrt_context *ctx;
    const char *source_name, *source;
    const asyncrt_compile_options *opts;
    asyncrt__arch arch;
    char arch_name[32];              /* arch, for NVRTC's -arch= and messages */
    asyncrt_compile_state state;
    asyncrt_cache_claim claim;       /* what it holds on key while CLAIMED: the claim, then the lease (cache.h) */
    bool *std_offered;               /* [asyncrt__std_header_file_count]: toolkit.c */
    char toolkit[4096];              /* the toolkit's include directory, "" if none */
    bool toolkit_cccl;               /* it holds cccl/ (CUDA 13's CCCL headers) */
    char toolkit_why[160];           /* why there is none (a bundle, ASYNCRT_TOOLKIT=none, none found) */
    asyncrt_string_list options;     /* what NVRTC gets */
    size_t keyed_options;            /* options.count at the key; the PCH's and trace's follow */
    uint8_t key[32];                 /* key1: what is known before compiling */
    uint8_t pch_key[32];             /* key1 less the source: which PCH directory (pch.h) */
    char trace_dir[64];              /* this compile's -fdevice-time-trace directory, "" if none */
    struct timespec began;           /* when the compile began, on the files' clock */
    asyncrt_pch_use pch;             /* the precompiled headers this compile uses */
    double start_ms;
    asyncrt_string_list record;      /* key1's named inputs (key_record.h), stored beside the entry */
} asyncrt_compile_job;

/* compile.c: a job for a target; free releases its claim and its memory. */
void asyncrt__job_init(asyncrt_compile_job *job, asyncrt_context *ctx, const char *source_name,
                       const char *source, const asyncrt_compile_options *opts, const asyncrt__arch *arch);
void asyncrt__job_free(asyncrt_compile_job *job);

/* toolkit.c: the toolkit's include directory and the built-in headers
 * offered, for any state; FAILED when out of memory. The stand-in <cuda.h>
 * is offered unless the caller gave its own. */
extern const asyncrt_header asyncrt__cuda_h;
asyncrt_status asyncrt__job_headers(asyncrt_compile_job *job);
bool asyncrt__job_offers_cuda_h(const asyncrt_compile_job *job);

/* key.c: NEW -> KEYED | UNCACHEABLE (FAILED when out of memory). */
asyncrt_status asyncrt__job_key(asyncrt_compile_job *job);

/* lookup.c: KEYED -> HIT (*out set) | CLAIMED (claim) | MISSED, asking
 * the cache once; other states are left alone. release: CLAIMED -> MISSED,
 * the claim and lease let go. */
void asyncrt__job_lookup(asyncrt_compile_job *job, bool claim, asyncrt_program **out);
void asyncrt__job_release(asyncrt_compile_job *job);
/* explain_judge.c: at ASYNCRT_LOG=1 and above, a miss's one-line cause (what
 * asyncrt_cache_explain says), logged by compile.c's flow after its own
 * claiming lookup missed. */
void asyncrt__job_log_miss(asyncrt_compile_job *job);

/* nvrtc_run.c: a fresh program in *out, or the failure. The state is left
 * for store.c to settle. */
asyncrt_status asyncrt__job_nvrtc(asyncrt_compile_job *job, asyncrt_program **out);

/* Whether the compile's trace is read: a cacheable compile that succeeded,
 * or one whose precompiled header needs its record settled either way. */
static inline bool asyncrt__job_traced(const asyncrt_compile_job *job, asyncrt_status compiled)
{
    return job->trace_dir[0] && (compiled == ASYNCRT_SUCCESS || job->pch.dir);
}

/* deps.c: what the compile read (*deps), when it is known: false with why
 * when not (no trace, a trace that cannot be read...). */
bool asyncrt__job_deps(asyncrt_compile_job *job, asyncrt_status compiled, asyncrt_dep_set *deps, char *why,
                       size_t why_size);

/* store.c: -> STORED | COMPILED | FAILED; the PCH's record and the trace
 * settled, the claim let go. deps NULL: unknown (why says why). */
void asyncrt__job_store(asyncrt_compile_job *job, asyncrt_status compiled, asyncrt_program *p,
                        const asyncrt_dep_set *deps, const char *why);
/* store.c: after a hit, p's record written locally when the remote answered
 * (the key records, key_record.h: its entry was just installed here). */
void asyncrt__job_record_hit(asyncrt_compile_job *job, const asyncrt_program *p);

/* retry.c. earlier: whether a miss for this job's target (from `auto`, sm_XY
 * with XY >= 90) may be an earlier run's retry, cached under *retry (sm_XYa).
 * plan: after ERROR_COMPILE, true with r->retry to compile for (logged);
 * false with *s the answer (a hint added). finish: the retry's answer, its
 * failure saying both attempts; frees r. */
typedef struct asyncrt_retry {
    asyncrt__arch first, retry;
    int supported[64]; /* NVRTC's archs */
    size_t count;
    char *first_error; /* the first attempt's message */
    char hint[512];
} asyncrt_retry;
bool asyncrt__retry_earlier(const asyncrt_compile_job *job, bool from_auto, asyncrt__arch *retry);
bool asyncrt__retry_plan(const asyncrt_compile_job *job, bool from_auto, asyncrt_retry *r, asyncrt_status *s);
asyncrt_status asyncrt__retry_finish(const asyncrt_compile_job *job, asyncrt_retry *r, asyncrt_status s);

#endif
