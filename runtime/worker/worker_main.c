/* asyncrt-compile-worker: one compile per process, for asyncrt_build_batch
 * (see runtime/build/worker_client.h for why and for the protocol). Reads the
 * request from stdin; when the cache key it computes for it is the parent's,
 * compiles it with asyncrt_program_compile into the cache directory the
 * parent opened (its descriptor, ASYNCRT_WORKER_PASSED_FD here, checked
 * again; never reopened by name) and writes "status N" and the message to
 * stdout, else writes "mismatch" and its key. Exit status 0 when it answered, 2 when the request was
 * malformed. Linked with the library's objects (asyncrt_private), so it
 * needs no libasyncrt.so and computes keys with the same code. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncrt/asyncrt.h"
#include "safe_io.h"
#include "worker_client.h"
#include "context_internal.h" /* asyncrt__context_adopt_cache_dir */
#include "link_worker.h"
#include "sha256.h"
#include "worker_process.h" /* ASYNCRT_WORKER_PASSED_FD */

#define MAGIC ASYNCRT_WORKER_MAGIC
#define MAX_ITEMS (1u << 16)

typedef struct reader {
    const unsigned char *p, *end;
    bool failed;
    void **owned; /* everything decoded, freed at the end */
    size_t owned_count, owned_cap;
} reader;

static void *own(reader *r, void *block)
{
    if (!block) {
        r->failed = true;
        return NULL;
    }
    if (r->owned_count == r->owned_cap) {
        size_t cap = r->owned_cap ? 2 * r->owned_cap : 64;
        void **grown = realloc(r->owned, cap * sizeof *grown);
        if (!grown) {
            free(block);
            r->failed = true;
            return NULL;
        }
        r->owned = grown;
        r->owned_cap = cap;
    }
    return r->owned[r->owned_count++] = block;
}

static uint64_t get_u64(reader *r)
{
    if (r->failed || r->end - r->p < 8) {
        r->failed = true;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    return v;
}

/* NUL-terminated copies. */
static char *get_str(reader *r)
{
    uint64_t n = get_u64(r);
    if (r->failed || n > (uint64_t)(r->end - r->p)) {
        r->failed = true;
        return NULL;
    }
    char *s = own(r, malloc(n + 1));
    if (!s) return NULL;
    memcpy(s, r->p, n);
    s[n] = '\0';
    r->p += n;
    return s;
}

static void get_key(reader *r, uint8_t key[32])
{
    if (get_u64(r) != 32 || r->failed || r->end - r->p < 32) {
        r->failed = true;
        return;
    }
    memcpy(key, r->p, 32);
    r->p += 32;
}

static const char **get_list(reader *r, size_t *count)
{
    uint64_t n = get_u64(r);
    if (r->failed || n > MAX_ITEMS) {
        r->failed = true;
        return NULL;
    }
    const char **items = own(r, calloc(n + 1, sizeof *items));
    for (uint64_t i = 0; items && i < n; i++) items[i] = get_str(r);
    *count = (size_t)n;
    return items;
}

static int answer(reader *r);

int main(void)
{
    size_t cap = 1 << 20, size = 0;
    unsigned char *data = malloc(cap);
    for (ssize_t n; data && (n = read(0, data + size, cap - size)) > 0;) {
        size += (size_t)n;
        if (size == cap) {
            unsigned char *grown = realloc(data, cap *= 2);
            if (!grown) free(data);
            data = grown;
        }
    }
    size_t magic = strlen(MAGIC);
    if (data && size >= strlen(ASYNCRT_LINK_WORKER_MAGIC) && /* a link (link_worker.h) */
        memcmp(data, ASYNCRT_LINK_WORKER_MAGIC, strlen(ASYNCRT_LINK_WORKER_MAGIC)) == 0) {
        int rc = asyncrt__link_worker_answer(data, size);
        free(data);
        return rc;
    }
    if (!data || size < magic || memcmp(data, MAGIC, magic) != 0) {
        free(data);
        return 2;
    }
    reader r = {data + magic, data + size, false, NULL, 0, 0};
    int rc = answer(&r);
    for (size_t i = 0; i < r.owned_count; i++) free(r.owned[i]);
    free(r.owned);
    free(data);
    return rc;
}

/* Decodes the request (into r->owned) and answers it. */
static int answer(reader *r)
{
    uint8_t key[32];
    get_key(r, key);
    char *cache_dir = get_str(r), *source_name = get_str(r), *source = get_str(r),
         *arch = get_str(r), *std = get_str(r);
    uint64_t flags = get_u64(r);
    asyncrt_compile_options o = {.size = sizeof o,
                                 .arch = arch,
                                 .std = flags & ASYNCRT_WORKER_STD_GIVEN ? std : NULL,
                                 .no_std_headers = flags & ASYNCRT_WORKER_NO_STD_HEADERS,
                                 .no_default_device = flags & ASYNCRT_WORKER_NO_DEFAULT_DEVICE};
    uint64_t headers = get_u64(r);
    asyncrt_header *h = !r->failed && headers <= MAX_ITEMS ? own(r, calloc(headers + 1, sizeof *h)) : NULL;
    for (uint64_t i = 0; h && i < headers; i++) {
        h[i].name = get_str(r);
        h[i].content = get_str(r);
    }
    o.headers = h;
    o.header_count = (size_t)headers;
    o.include_dirs = get_list(r, &o.include_dir_count);
    o.defines = get_list(r, &o.define_count);
    o.options = get_list(r, &o.option_count);
    o.name_expressions = get_list(r, &o.name_expression_count);
    o.toolkit_with_bundle = flags & ASYNCRT_WORKER_TOOLKIT_WITH_BUNDLE;
    uint64_t bundle_size = flags & ASYNCRT_WORKER_BUNDLE ? get_u64(r) : 0;
    const unsigned char *bundle = r->p; /* its bytes, loaded once there is a context */
    if (bundle_size > (uint64_t)(r->end - r->p)) r->failed = true;
    else r->p += bundle_size;
    if (r->failed || !h || r->p != r->end ||
        flags & ~(uint64_t)(ASYNCRT_WORKER_STD_GIVEN | ASYNCRT_WORKER_NO_STD_HEADERS | ASYNCRT_WORKER_NO_DEFAULT_DEVICE |
                            ASYNCRT_WORKER_BUNDLE | ASYNCRT_WORKER_TOOLKIT_WITH_BUNDLE | ASYNCRT_WORKER_SHARED_CACHE))
        return 2;

    asyncrt_context *ctx = NULL;
    asyncrt_program *p = NULL;
    uint8_t mine[32] = {0};
    asyncrt_status s = asyncrt_context_create(&ctx);
    /* The parent's directory, as it opened it: checked again here (and the
     * shared key read) through the descriptor, never opened by name. */
    bool shared = flags & ASYNCRT_WORKER_SHARED_CACHE;
    uint8_t mac_key[32] = {0};
    char why[1024];
    if (s == ASYNCRT_SUCCESS && !asyncrt__dir_check_trusted(ASYNCRT_WORKER_PASSED_FD, cache_dir, shared, mac_key, why,
                                                         sizeof why))
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_IO, "the cache directory handed over: %s", why);
    if (s == ASYNCRT_SUCCESS)
        s = asyncrt__context_adopt_cache_dir(ctx, cache_dir, ASYNCRT_WORKER_PASSED_FD, shared, mac_key);
    close(ASYNCRT_WORKER_PASSED_FD); /* the context keeps a descriptor of its own */
    asyncrt_bundle *b = NULL;
    if (s == ASYNCRT_SUCCESS && flags & ASYNCRT_WORKER_BUNDLE) s = asyncrt_bundle_load(ctx, bundle, bundle_size, &b);
    o.bundle = b;
    /* The parent's key, or this answer does not count: its compile would be
     * stored where the parent never looks. A hit needs no compile. */
    if (s == ASYNCRT_SUCCESS) s = asyncrt__program_lookup(ctx, source_name, source, &o, &p, mine, NULL);
    if ((s == ASYNCRT_SUCCESS || s == ASYNCRT_ERROR_NOT_FOUND || s == ASYNCRT_ERROR_UNSUPPORTED) &&
        (memcmp(mine, key, 32) != 0 || s == ASYNCRT_ERROR_UNSUPPORTED)) {
        char hex[65];
        asyncrt__sha256_hex(mine, hex);
        printf("mismatch %s\n", hex);
    } else {
        if (s == ASYNCRT_ERROR_NOT_FOUND) s = asyncrt_program_compile(ctx, source_name, source, &o, &p);
        printf("status %d\n%s", (int)s,
               s == ASYNCRT_SUCCESS ? "" : ctx ? asyncrt_context_last_error(ctx) : "out of memory");
    }
    asyncrt_program_destroy(p);
    asyncrt_bundle_destroy(b);
    asyncrt_context_destroy(ctx);
    return fflush(stdout) == 0 ? 0 : 1;
}
