/* asyncrt-compile-worker: one compile per process, for asyncrt_build_batch
 * (see runtime/src/compile_worker.h for why and for the protocol). Reads the
 * request from stdin, compiles it with asyncrt_program_compile into the
 * given cache directory, writes "status N" and the message to stdout. Exit
 * status 0 when it answered, 2 when the request was malformed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncrt/asyncrt.h"

#define MAGIC "ASYNCRTW1"
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
    char *cache_dir = get_str(r), *source_name = get_str(r), *source = get_str(r), *arch = get_str(r),
         *std = get_str(r);
    asyncrt_compile_options o = {.arch = arch, .std = std && *std ? std : NULL};
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
    if (r->failed || !h || r->p != r->end) return 2;

    asyncrt_context *ctx = NULL;
    asyncrt_program *p = NULL;
    asyncrt_status s = asyncrt_context_create(&ctx);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_context_set_cache_dir(ctx, cache_dir);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_program_compile(ctx, source_name, source, &o, &p);
    printf("status %d\n%s", (int)s, s == ASYNCRT_SUCCESS ? "" : ctx ? asyncrt_context_last_error(ctx) : "out of memory");
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    return fflush(stdout) == 0 ? 0 : 1;
}
