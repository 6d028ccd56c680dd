#include "compile_worker.h"
#include "bundle.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_trust.h"
#include "context.h"
#include "self_file.h"
#include "sha256.h"
#include "sized.h"
#include "worker_exchange.h"

/* From CMake's install directories (runtime/CMakeLists.txt). */
#ifndef ASYNCRT_WORKER_FROM_LIBDIR
#define ASYNCRT_WORKER_FROM_LIBDIR "../libexec/asyncrt/asyncrt-compile-worker"
#endif
#ifndef ASYNCRT_WORKER_FROM_BINDIR
#define ASYNCRT_WORKER_FROM_BINDIR "../libexec/asyncrt/asyncrt-compile-worker"
#endif

/* Where the installed worker would be: relative to libasyncrt.so, or to the
 * program when the library is linked into it (self_file.h). */
static bool installed_worker(char *out, size_t size)
{
    char self[PATH_MAX];
    bool in_program = false;
    if (!asyncrt__self_file(self, sizeof self, &in_program)) return false;
    const char *relative = in_program ? ASYNCRT_WORKER_FROM_BINDIR : ASYNCRT_WORKER_FROM_LIBDIR;
    char *slash = strrchr(self, '/');
    if (!slash) return false;
    *slash = '\0';
    int n = snprintf(out, size, "%s/%s", self, relative);
    return n > 0 && (size_t)n < size;
}

asyncrt_status asyncrt__compile_worker_find(const char *named, char *path, size_t size, char *why, size_t why_size)
{
    const char *env = named;
    char installed[PATH_MAX], reason[PATH_MAX + 256];
    if (env && strcmp(env, "0") == 0) {
        snprintf(why, why_size, "ASYNCRT_COMPILE_WORKER=0");
        return ASYNCRT_ERROR_NOT_FOUND;
    }
    if (!env || !*env) {
        if (!installed_worker(installed, sizeof installed)) {
            snprintf(why, why_size, "cannot tell where this library lies, so no installed worker");
            return ASYNCRT_ERROR_NOT_FOUND;
        }
        if (access(installed, F_OK) != 0) {
            snprintf(why, why_size, "no worker installed at %s (ASYNCRT_COMPILE_WORKER names one)", installed);
            return ASYNCRT_ERROR_NOT_FOUND;
        }
        env = installed;
    }
    if (asyncrt__trusted_executable(env, path, size, reason, sizeof reason)) return ASYNCRT_SUCCESS;
    snprintf(why, why_size, "%s%s refused: %s", env == installed ? "the installed worker " : "ASYNCRT_COMPILE_WORKER=",
             env, reason);
    return ASYNCRT_ERROR_IO;
}

typedef struct buffer {
    char *data;
    size_t size, cap;
    bool failed;
} buffer;

static void put(buffer *b, const void *src, size_t n)
{
    if (b->failed) return;
    if (b->size + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->size + n) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->size, src, n);
    b->size += n;
}

static void put_u64(buffer *b, uint64_t v)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(v >> (8 * i));
    put(b, le, 8);
}

static void put_str(buffer *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_u64(b, n);
    put(b, s ? s : "", n);
}

static void put_list(buffer *b, const char *const *items, size_t count)
{
    put_u64(b, count);
    for (size_t i = 0; i < count; i++) put_str(b, items[i]);
}

/* Every field of asyncrt_compile_options goes to the worker: one added to
 * the struct must be added here (and to the worker's decoder) too. */
_Static_assert(sizeof(asyncrt_compile_options) == 16 * sizeof(void *), /* size, 13 pointers and counts, 3 bools */
               "asyncrt_compile_options changed: send the new field to the compile worker");

static bool encode_request(buffer *b, const uint8_t key[32], const char *cache_name, bool shared,
                           const char *source_name, const char *source, const asyncrt_compile_options *o,
                           const char *arch)
{
    put(b, ASYNCRT_WORKER_MAGIC, strlen(ASYNCRT_WORKER_MAGIC));
    put_u64(b, 32);
    put(b, key, 32);
    put_str(b, cache_name);
    put_str(b, source_name);
    put_str(b, source);
    put_str(b, arch);
    put_str(b, o->std);
    put_u64(b, (o->std ? ASYNCRT_WORKER_STD_GIVEN : 0) | (o->no_std_headers ? ASYNCRT_WORKER_NO_STD_HEADERS : 0) |
                   (o->no_default_device ? ASYNCRT_WORKER_NO_DEFAULT_DEVICE : 0) |
                   (o->bundle ? ASYNCRT_WORKER_BUNDLE : 0) |
                   (o->toolkit_with_bundle ? ASYNCRT_WORKER_TOOLKIT_WITH_BUNDLE : 0) |
                   (shared ? ASYNCRT_WORKER_SHARED_CACHE : 0));
    put_u64(b, o->header_count);
    for (size_t i = 0; i < o->header_count; i++) {
        put_str(b, o->headers[i].name);
        put_str(b, o->headers[i].content);
    }
    put_list(b, o->include_dirs, o->include_dir_count);
    put_list(b, o->defines, o->define_count);
    put_list(b, o->options, o->option_count);
    put_list(b, o->name_expressions, o->name_expression_count);
    size_t size = 0;
    unsigned char *bundle = o->bundle ? asyncrt__bundle_bytes(o->bundle, &size) : NULL;
    if (o->bundle && !bundle) b->failed = true;
    if (bundle) put_u64(b, size), put(b, bundle, size);
    free(bundle);
    return !b->failed;
}

asyncrt_status asyncrt__compile_in_worker(const char *worker, int cache_fd, bool shared, const char *cache_name,
                                         const char *source_name, const char *source,
                                         const asyncrt_compile_options *opts, const char *arch, const uint8_t key[32],
                                         char **message)
{
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT; /* the caller's, read by its size */
    char why[ASYNCRT_SIZED_WHY];
    *message = NULL;
    if (opts && !asyncrt__sized_in(ASYNCRT_SIZED_COMPILE_OPTIONS, opts, &o, why)) {
        *message = strdup(why);
        return ASYNCRT_ERROR_INVALID_ARGUMENT;
    }
    buffer req = {0};
    unsigned char *reply = NULL;
    size_t reply_size = 0;
    asyncrt_status status = ASYNCRT_ERROR_IO;
    if (!encode_request(&req, key, cache_name, shared, source_name, source, &o, arch)) {
        *message = strdup("out of memory");
    } else if (asyncrt__worker_exchange(worker, cache_fd, req.data, req.size, &reply, &reply_size, message)) {
        const char *text = (const char *)reply; /* NUL-terminated */
        int code = -1, used = 0;
        char theirs[65] = "", ours[65];
        if (sscanf(text, "status %d\n%n", &code, &used) == 1 && used > 0 && code >= 0 && code < ASYNCRT_STATUS_COUNT) {
            status = (asyncrt_status)code;
            if (status != ASYNCRT_SUCCESS) *message = strdup(text + used);
        } else if (sscanf(text, "mismatch %64[0-9a-f]", theirs) == 1) {
            asyncrt__sha256_hex(key, ours);
            *message = asyncrt__format("it computed the cache key %s, this process %s (another version of "
                                       "asyncrt, or another environment)", theirs, ours);
        } else {
            *message = strdup("its answer was malformed");
        }
    }
    free(req.data);
    free(reply);
    return status;
}
