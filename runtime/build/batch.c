/* asyncrt_build_batch: many programs compiled (and loaded) at once. A CCCL
 * kernel's compile is ~90% header parsing on one core, so a batch should
 * scale with cores; but NVRTC 13.0 runs one nvrtcCompileProgram at a time
 * per process, so cache misses go to worker processes when there are
 * several (worker_client.h) and everything else runs on threads:
 *   1. look every distinct request up in the cache (threads);
 *   2. compile the misses, one per distinct cache key, in workers that store
 *      into the same disk cache;
 *   3. compile every request not yet done here: a disk hit for what a worker
 *      built, a real compile for the rest (no worker, not cacheable, or the
 *      worker failed: its failure is never the answer, this process's
 *      compile is); then load.
 * Workers run only with a usable disk cache (they hand results over through
 * it: the descriptor this process checked, never its name) and only the one
 * asyncrt__worker_find accepts (base/worker_process.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "cache.h"
#include "compile.h"
#include "worker_client.h"
#include "context.h"
#include "program.h"
#include "progress.h"
#include "sha256.h"
#include "target.h"
#include "thread_pool.h"
#include "worker_process.h"

/* What happened to one distinct request before its final compile. */
typedef struct lead_state {
    asyncrt_status lookup;   /* SUCCESS hit, NOT_FOUND miss, UNSUPPORTED not cacheable, else failed */
    uint8_t key[32];
    asyncrt__arch arch;       /* the target the lookup resolved */
    bool worker_owner;       /* its key was compiled by a worker for it */
    asyncrt_status worker;   /* that worker's status (IO: it could not run) */
} lead_state;

typedef struct batch {
    asyncrt_context *ctx;
    asyncrt_build_request *reqs;
    size_t count;
    bool load;
    size_t *leader;      /* leader[i]: the first request identical to request i */
    size_t *leaders;     /* the distinct requests, one task each */
    size_t leader_count;
    lead_state *state;   /* per distinct request */
    size_t *misses;      /* indexes into leaders: one per distinct missing key */
    size_t miss_count;
    char worker[PATH_MAX];   /* the checked worker, "" for none */
    int dir_fd;              /* the workers' cache directory, as this process checked it (-1: none) */
    char *dir_name;          /* its name, for messages */
    bool shared;
} batch;

/* Identity of a request: name, source text and the options pointer (the
 * options' contents are compared by the cache key, in compile.c). */
static void request_digest(const asyncrt_build_request *r, uint8_t out[32])
{
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    const char *parts[] = {r->source_name ? r->source_name : "", r->source ? r->source : ""};
    for (size_t i = 0; i < 2; i++) {
        uint64_t n = strlen(parts[i]);
        asyncrt__sha256_update(&h, &n, sizeof n);
        asyncrt__sha256_update(&h, parts[i], n);
    }
    const void *opts = r->opts;
    bool has_source = r->source != NULL;
    asyncrt__sha256_update(&h, &opts, sizeof opts);
    asyncrt__sha256_update(&h, &has_source, sizeof has_source);
    asyncrt__sha256_final(&h, out);
}

static bool find_leaders(batch *b)
{
    uint8_t (*digests)[32] = malloc(b->count * sizeof *digests);
    b->leader = malloc(b->count * sizeof *b->leader);
    b->leaders = malloc(b->count * sizeof *b->leaders);
    if (!digests || !b->leader || !b->leaders) {
        free(digests);
        return false;
    }
    for (size_t i = 0; i < b->count; i++) {
        request_digest(&b->reqs[i], digests[i]);
        size_t j = i; /* quadratic in distinct requests: fine for hundreds */
        for (size_t k = 0; k < b->leader_count && j == i; k++)
            if (memcmp(digests[b->leaders[k]], digests[i], 32) == 0) j = b->leaders[k];
        b->leader[i] = j;
        if (j == i) b->leaders[b->leader_count++] = i;
    }
    free(digests);
    return true;
}

static void fail_request(asyncrt_context *ctx, asyncrt_build_request *r, asyncrt_status s)
{
    r->status = s;
    r->message = asyncrt__diag_error_copy(&ctx->diag);
}

static void load_request(asyncrt_context *ctx, asyncrt_build_request *r)
{
    asyncrt__progress_options(r->opts, ASYNCRT_PROGRESS_LOAD, r->source_name, r->program->arch);
    asyncrt_status s = asyncrt_module_load(ctx, r->program, &r->module);
    if (s != ASYNCRT_SUCCESS) fail_request(ctx, r, s);
}

static void lookup_one(void *arg, size_t index)
{
    batch *b = arg;
    asyncrt_build_request *r = &b->reqs[b->leaders[index]];
    lead_state *st = &b->state[index];
    st->lookup = asyncrt__program_lookup(b->ctx, r->source_name, r->source, r->opts, &r->program, st->key,
                                        &st->arch);
    bool found = st->lookup == ASYNCRT_SUCCESS || st->lookup == ASYNCRT_ERROR_NOT_FOUND ||
                 st->lookup == ASYNCRT_ERROR_UNSUPPORTED;
    if (found && b->load) { /* to be loaded: a target the driver cannot load is compiled by no one */
        asyncrt_status loadable = asyncrt__arch_loadable(b->ctx, &st->arch);
        if (loadable != ASYNCRT_SUCCESS) {
            st->lookup = loadable;
            asyncrt_program_destroy(r->program); /* a cache hit, of no use */
            r->program = NULL;
        }
    }
    if (st->lookup != ASYNCRT_SUCCESS && st->lookup != ASYNCRT_ERROR_NOT_FOUND &&
        st->lookup != ASYNCRT_ERROR_UNSUPPORTED)
        fail_request(b->ctx, r, st->lookup); /* what compiling would say: a bad arch, no device... */
}

/* The first problem with the worker itself (it cannot start, or answers for
 * another key) is a warning at ASYNCRT_LOG=1, once per context; the rest,
 * and a compile that failed in it, are at 2. */
static int worker_log_level(asyncrt_context *ctx, bool problem)
{
    return problem && !atomic_exchange(&ctx->worker_reported, true) ? 1 : 2;
}

static void compile_in_worker(void *arg, size_t index)
{
    batch *b = arg;
    lead_state *st = &b->state[b->misses[index]];
    asyncrt_build_request *r = &b->reqs[b->leaders[b->misses[index]]];
    char name[32], *message = NULL; /* the target as the worker's request spells it */
    asyncrt__arch_format(&st->arch, name, sizeof name);
    /* The worker's NVRTC cannot tell this process: its compile is told here. */
    asyncrt__progress_options(r->opts, ASYNCRT_PROGRESS_COMPILE, r->source_name, name);
    st->worker = asyncrt__compile_in_worker(b->worker, b->dir_fd, b->shared, b->dir_name, r->source_name, r->source,
                                           r->opts, name, st->key, &message);
    if (st->worker != ASYNCRT_SUCCESS)
        asyncrt__log(b->ctx, worker_log_level(b->ctx, st->worker == ASYNCRT_ERROR_IO),
                    "%scompile worker %s, for %s: %s%s%s; compiling it in this process",
                    st->worker == ASYNCRT_ERROR_IO ? "warning: " : "", b->worker,
                    r->source_name ? r->source_name : "kernel.cu",
                    st->worker == ASYNCRT_ERROR_IO ? "" : asyncrt_status_string(st->worker),
                    st->worker == ASYNCRT_ERROR_IO ? "" : ": ", message ? message : "");
    free(message);
}

/* The worker for this batch in b->worker, if one may run (logged if not). */
static bool find_worker(batch *b)
{
    char why[PATH_MAX + 512];
    asyncrt_status s = asyncrt__worker_find(b->ctx->settings.compile_worker, b->worker, sizeof b->worker, why,
                                                   sizeof why);
    if (s == ASYNCRT_SUCCESS) return true;
    b->worker[0] = '\0';
    asyncrt__log(b->ctx, worker_log_level(b->ctx, s != ASYNCRT_ERROR_NOT_FOUND), "%sbatch: no compile worker: %s; "
                "compiling in this process", s != ASYNCRT_ERROR_NOT_FOUND ? "warning: " : "", why);
    return false;
}

/* Picks one distinct request per missing key for the workers. */
static void choose_misses(batch *b)
{
    b->miss_count = 0;
    for (size_t i = 0; i < b->leader_count; i++) {
        if (b->state[i].lookup != ASYNCRT_ERROR_NOT_FOUND) continue;
        bool seen = false;
        for (size_t k = 0; k < b->miss_count && !seen; k++)
            seen = !memcmp(b->state[b->misses[k]].key, b->state[i].key, 32);
        if (!seen) b->misses[b->miss_count++] = i;
    }
    for (size_t k = 0; k < b->miss_count; k++) b->state[b->misses[k]].worker_owner = true;
}

/* One distinct request: its final compile, then each duplicate's copy. */
static void build_one(void *arg, size_t index)
{
    batch *b = arg;
    asyncrt_context *ctx = b->ctx;
    size_t lead = b->leaders[index];
    lead_state *st = &b->state[index];
    asyncrt_build_request *first = &b->reqs[lead];
    asyncrt_status s = first->status;
    if (s == ASYNCRT_SUCCESS && !first->program) {
        s = b->load ? asyncrt__program_compile_to_load(ctx, first->source_name, first->source, first->opts,
                                                       &first->program)
                    : asyncrt_program_compile(ctx, first->source_name, first->source, first->opts, &first->program);
        if (s != ASYNCRT_SUCCESS) fail_request(ctx, first, s);
        else if (st->worker_owner && st->worker == ASYNCRT_SUCCESS)
            first->program->origin = ASYNCRT_ORIGIN_COMPILED; /* by its worker, for this request */
    }
    if (s == ASYNCRT_SUCCESS && b->load) load_request(ctx, first);
    for (size_t i = lead + 1; i < b->count; i++) {
        if (b->leader[i] != lead) continue;
        asyncrt_build_request *dup = &b->reqs[i];
        if (s != ASYNCRT_SUCCESS) {
            dup->status = s;
            dup->message = first->message ? strdup(first->message) : NULL;
            continue;
        }
        if (!(dup->program = asyncrt__program_clone(first->program))) {
            fail_request(ctx, dup, asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory"));
            continue;
        }
        dup->program->origin = ASYNCRT_ORIGIN_MEMORY_CACHE; /* it was not compiled for this request */
        if (b->load) load_request(ctx, dup);
    }
}

static void forget_thread(void *arg)
{
    asyncrt__diag_error_forget(&((batch *)arg)->ctx->diag);
}

asyncrt_status asyncrt_build_batch(asyncrt_context *ctx, asyncrt_build_request *reqs, size_t count,
                                   unsigned threads, bool load)
{
    if (count && !reqs)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "reqs is NULL with count %zu", count);
    for (size_t i = 0; i < count; i++) {
        reqs[i].program = NULL;
        reqs[i].module = NULL;
        reqs[i].status = ASYNCRT_SUCCESS;
        reqs[i].message = NULL;
    }
    if (!count) return ASYNCRT_SUCCESS;
    batch b = {.ctx = ctx, .reqs = reqs, .count = count, .load = load, .dir_fd = -1};
    if (!find_leaders(&b)) {
        free(b.leader);
        free(b.leaders);
        return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory for a batch of %zu", count);
    }
    double start = asyncrt__now_ms();
    b.state = calloc(b.leader_count, sizeof *b.state);
    b.misses = calloc(b.leader_count, sizeof *b.misses);
    /* Workers hand their results over through the disk cache: none without one. */
    if (b.state && b.misses && b.leader_count > 1 &&
        (b.dir_fd = asyncrt__cache_dir_fd(ctx->cache, &b.dir_name, &b.shared)) >= 0 && find_worker(&b)) {
        asyncrt__pool_run(threads, b.leader_count, lookup_one, forget_thread, &b);
        choose_misses(&b);
        if (b.miss_count > 1) { /* one miss: compiling here is as fast, without a spawn */
            asyncrt__log(ctx, 2, "batch: %zu cache misses go to worker processes (%s)", b.miss_count, b.worker);
            asyncrt__pool_run(threads, b.miss_count, compile_in_worker, forget_thread, &b);
        } else {
            for (size_t k = 0; k < b.miss_count; k++) b.state[b.misses[k]].worker_owner = false;
        }
    }
    if (b.dir_fd >= 0) close(b.dir_fd);
    free(b.dir_name);
    if (!b.state) {
        free(b.leader), free(b.leaders), free(b.misses);
        return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory for a batch of %zu", count);
    }
    asyncrt__pool_run(threads, b.leader_count, build_one, forget_thread, &b);
    free(b.state);
    free(b.misses);
    size_t failed = 0, first = count;
    for (size_t i = 0; i < count; i++)
        if (reqs[i].status != ASYNCRT_SUCCESS && failed++ == 0) first = i;
    asyncrt__log(ctx, 2, "batch of %zu (%zu distinct) built in %.1f ms on up to %u threads, %zu failed",
                count, b.leader_count, asyncrt__now_ms() - start,
                threads ? threads : asyncrt__pool_default_threads(), failed);
    free(b.leader);
    free(b.leaders);
    if (!failed) return ASYNCRT_SUCCESS;
    const asyncrt_build_request *r = &reqs[first];
    return asyncrt__fail(ctx, r->status, "%zu of %zu builds failed; the first is request %zu (%s): %s",
                        failed, count, first, r->source_name ? r->source_name : "kernel.cu",
                        r->message ? r->message : asyncrt_status_string(r->status));
}

void asyncrt_build_batch_release(asyncrt_build_request *reqs, size_t count)
{
    for (size_t i = 0; reqs && i < count; i++) {
        asyncrt_program_destroy(reqs[i].program);
        free(reqs[i].message);
        reqs[i].program = NULL;
        reqs[i].message = NULL;
    }
}
