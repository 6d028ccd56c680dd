/* Header bundles: the headers a set of kernels needs, so that a program can
 * compile them where no CUDA toolkit is installed (only the driver, and the
 * NVRTC it ships). tools/bundle/asyncrt-bundle makes one from the sources;
 * docs/bundles.md, has the whole recipe.
 *
 * A bundle maps each include name NVRTC resolved ("cuda/barrier",
 * "cuda/std/__atomic/api/owned.h", the quoted "info.h" of a header's own
 * folder) to the header's text, and carries a SHA-256 digest of all of it.
 * A compile given one (asyncrt_compile_options.bundle) hands NVRTC those
 * headers in memory under those names and searches no toolkit (unless
 * toolkit_with_bundle); the digest is part of the cache key. */
#ifndef ASYNCRT_BUNDLE_H
#define ASYNCRT_BUNDLE_H

#include <stddef.h>

#include "asyncrt/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads a bundle from memory (the bytes of a bundle file, or the array that
 * `asyncrt-bundle --format c` defines), copied, so data may be freed
 * afterwards. Its layout is checked here; a foreign or malformed buffer is
 * ASYNCRT_ERROR_INVALID_ARGUMENT with the reason in ctx's message. Its
 * digest is checked when a compile first needs its headers (a cache miss),
 * so that loading stays cheap for a program whose compiles all hit the
 * cache: a damaged bundle fails that compile with
 * ASYNCRT_ERROR_INVALID_ARGUMENT. *out is NULL on failure. ctx only
 * receives the message. */
ASYNCRT_EXTERN asyncrt_status asyncrt_bundle_load(asyncrt_context *ctx, const void *data, size_t size,
                                                  asyncrt_bundle **out);
/* The same from a file (a regular file, read through the library's checked
 * reader); one that cannot be read is ASYNCRT_ERROR_IO. */
ASYNCRT_EXTERN asyncrt_status asyncrt_bundle_load_file(asyncrt_context *ctx, const char *path,
                                                       asyncrt_bundle **out);
/* NULL is fine. A bundle must outlive the compiles that use it; it is
 * read-only, so any number of threads may compile with one at once. */
ASYNCRT_EXTERN void asyncrt_bundle_destroy(asyncrt_bundle *bundle);

/* The digest in lowercase hex (64 characters), as asyncrt-bundle prints it. */
ASYNCRT_EXTERN const char *asyncrt_bundle_digest(const asyncrt_bundle *bundle);
/* How many include names it holds (a header may be known under several). */
ASYNCRT_EXTERN size_t asyncrt_bundle_header_count(const asyncrt_bundle *bundle);

#ifdef __cplusplus
}
#endif
#endif
