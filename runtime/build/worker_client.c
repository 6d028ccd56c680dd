/* The compile worker's client (worker_client.h): a request out, its answer back. */
#include "worker_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "codec.h"
#include "format.h"
#include "sha256.h"
#include "sized.h"
#include "worker_process.h"

/* The request's fields: codec.h's writer (u64 little-endian lengths, on the
 * little-endian hosts asyncrt runs on), a NULL string sent as "". */
static void put_str(asyncrt_writer *b, const char *s) { asyncrt__put_str(b, s ? s : ""); }

static void put_list(asyncrt_writer *b, const char *const *items, size_t count)
{
    asyncrt__put_u64(b, count);
    for (size_t i = 0; i < count; i++) put_str(b, items[i]);
}

/* Every field of asyncrt_compile_options goes to the worker, but the
 * progress callback and its pointer (they mean nothing in another process:
 * batch.c tells the callback instead): one added to the struct must be added
 * here (and to the worker's decoder) too. */
_Static_assert(sizeof(asyncrt_compile_options) == 18 * sizeof(void *), /* size, 13 pointers and counts, 4 bools, the progress pair */
               "asyncrt_compile_options changed: send the new field to the compile worker");

static bool encode_request(asyncrt_writer *b, const uint8_t key[32], const char *cache_name, bool shared,
                           const char *source_name, const char *source, const asyncrt_compile_options *o,
                           const char *arch)
{
    asyncrt__put(b, ASYNCRT_WORKER_MAGIC, strlen(ASYNCRT_WORKER_MAGIC));
    asyncrt__put_u64(b, 32);
    asyncrt__put(b, key, 32);
    put_str(b, cache_name);
    put_str(b, source_name);
    put_str(b, source);
    put_str(b, arch);
    put_str(b, o->std);
    asyncrt__put_u64(b, (o->std ? ASYNCRT_WORKER_STD_GIVEN : 0) | (o->no_std_headers ? ASYNCRT_WORKER_NO_STD_HEADERS : 0) |
                            (o->no_default_device ? ASYNCRT_WORKER_NO_DEFAULT_DEVICE : 0) |
                            (o->bundle ? ASYNCRT_WORKER_BUNDLE : 0) |
                            (o->toolkit_with_bundle ? ASYNCRT_WORKER_TOOLKIT_WITH_BUNDLE : 0) |
                            (shared ? ASYNCRT_WORKER_SHARED_CACHE : 0));
    asyncrt__put_u64(b, o->header_count);
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
    if (bundle) {
        asyncrt__put_u64(b, size);
        asyncrt__put(b, bundle, size);
    }
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
    asyncrt_writer req = {0};
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
