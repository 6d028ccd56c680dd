/* asyncrt_build_batch: many programs compiled (and loaded) at once. NVRTC
 * may run on several threads for different programs, and a CCCL kernel's
 * compile is ~90% header parsing on one core, so a batch scales with cores. */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "program.h"
#include "sha256.h"
#include "thread_pool.h"

typedef struct batch {
    asyncrt_context *ctx;
    asyncrt_build_request *reqs;
    size_t count;
    bool load;
    size_t *leader;      /* leader[i]: the first request identical to request i */
    size_t *leaders;     /* the distinct requests, one task each */
    size_t leader_count;
} batch;

/* Identity of a request: name, source text and the options pointer (the
 * options' contents are compared by the cache key, in compile.c). */
static void request_digest(const asyncrt_build_request *r, uint8_t out[32])
{
    asyncrt_sha256 h;
    asyncrt_sha256_init(&h);
    const char *parts[] = {r->source_name ? r->source_name : "", r->source ? r->source : ""};
    for (size_t i = 0; i < 2; i++) {
        uint64_t n = strlen(parts[i]);
        asyncrt_sha256_update(&h, &n, sizeof n);
        asyncrt_sha256_update(&h, parts[i], n);
    }
    const void *opts = r->opts;
    bool has_source = r->source != NULL;
    asyncrt_sha256_update(&h, &opts, sizeof opts);
    asyncrt_sha256_update(&h, &has_source, sizeof has_source);
    asyncrt_sha256_final(&h, out);
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
    r->message = asyncrt_thread_error_copy(ctx);
}

static void load_request(asyncrt_context *ctx, asyncrt_build_request *r)
{
    asyncrt_status s = asyncrt_module_load(ctx, r->program, &r->module);
    if (s != ASYNCRT_SUCCESS) fail_request(ctx, r, s);
}

/* One distinct request: compile once, then give each duplicate its copy. */
static void build_one(void *arg, size_t index)
{
    batch *b = arg;
    asyncrt_context *ctx = b->ctx;
    size_t lead = b->leaders[index];
    asyncrt_build_request *first = &b->reqs[lead];
    asyncrt_status s = asyncrt_program_compile(ctx, first->source_name, first->source, first->opts,
                                               &first->program);
    if (s != ASYNCRT_SUCCESS) fail_request(ctx, first, s);
    else if (b->load) load_request(ctx, first);
    for (size_t i = lead + 1; i < b->count; i++) {
        if (b->leader[i] != lead) continue;
        asyncrt_build_request *dup = &b->reqs[i];
        if (s != ASYNCRT_SUCCESS) {
            dup->status = s;
            dup->message = first->message ? strdup(first->message) : NULL;
            continue;
        }
        if (!(dup->program = asyncrt_program_clone(first->program))) {
            fail_request(ctx, dup, asyncrt_fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory"));
            continue;
        }
        dup->program->origin = ASYNCRT_ORIGIN_MEMORY_CACHE; /* it was not compiled for this request */
        if (b->load) load_request(ctx, dup);
    }
}

static void forget_thread(void *arg)
{
    asyncrt_thread_error_forget(((batch *)arg)->ctx);
}

asyncrt_status asyncrt_build_batch(asyncrt_context *ctx, asyncrt_build_request *reqs, size_t count,
                                   unsigned threads, bool load)
{
    if (count && !reqs)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "reqs is NULL with count %zu", count);
    for (size_t i = 0; i < count; i++) {
        reqs[i].program = NULL;
        reqs[i].module = NULL;
        reqs[i].status = ASYNCRT_SUCCESS;
        reqs[i].message = NULL;
    }
    if (!count) return ASYNCRT_SUCCESS;
    batch b = {.ctx = ctx, .reqs = reqs, .count = count, .load = load};
    if (!find_leaders(&b)) {
        free(b.leader);
        free(b.leaders);
        return asyncrt_fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory for a batch of %zu", count);
    }
    double start = asyncrt_now_ms();
    asyncrt_pool_run(threads, b.leader_count, build_one, forget_thread, &b);
    size_t failed = 0, first = count;
    for (size_t i = 0; i < count; i++)
        if (reqs[i].status != ASYNCRT_SUCCESS && failed++ == 0) first = i;
    asyncrt_log(ctx, 2, "batch of %zu (%zu distinct) built in %.1f ms on up to %u threads, %zu failed",
                count, b.leader_count, asyncrt_now_ms() - start,
                threads ? threads : asyncrt_pool_default_threads(), failed);
    free(b.leader);
    free(b.leaders);
    if (!failed) return ASYNCRT_SUCCESS;
    const asyncrt_build_request *r = &reqs[first];
    return asyncrt_fail(ctx, r->status, "%zu of %zu builds failed; the first is request %zu (%s): %s",
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
