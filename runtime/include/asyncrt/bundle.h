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
/* How many distinct headers (texts) it holds. */
ASYNCRT_EXTERN size_t asyncrt_bundle_text_count(const asyncrt_bundle *bundle);

/* What asyncrt_bundle_make bundles. Set .size with ASYNCRT_BUNDLE_MAKE_OPTIONS_INIT. */
typedef struct asyncrt_bundle_make_options {
    size_t size;
    const char *const *sources;   /* files, read with the library's checks */
    size_t source_count;
    const char *const *include_dirs; /* as asyncrt_compile_options */
    size_t include_dir_count;
    const char *const *defines;   /* as asyncrt_compile_options */
    size_t define_count;
    const char *const *archs;     /* targets: sm_90, compute_80, auto; 0 of them: {"sm_90"} */
    size_t arch_count;
    bool no_check;                /* skip compiling each source again from the bundle alone */
    const char *note;             /* recorded in the bundle (asyncrt-bundle: its command line); NULL: "" */
    /* ---- The first layout ends here. Fields added later: a caller whose
     * size stops short of one gets zero, its default. */
    /* Told each compile (the cache lookup, NVRTC: the check's too) and each
     * header read (ASYNCRT_PROGRESS_BUNDLE_HEADER, with the count so far), on
     * the calling thread, with progress_user (asyncrt/runtime.h, "progress"). */
    asyncrt_progress_fn progress;
    void *progress_user;
} asyncrt_bundle_make_options;
#define ASYNCRT_BUNDLE_MAKE_OPTIONS_INIT ASYNCRT_SIZED_INIT(asyncrt_bundle_make_options)

/* Makes a bundle: compiles every source for every target with the toolkit
 * (found as a compile finds it; no precompiled header, a private cache of
 * its own), learns from NVRTC's trace every header it read, names each as
 * NVRTC resolved it, and encodes them: *data (malloc'd, the caller frees it)
 * and *size. Unless no_check, every source is compiled again from the bundle
 * alone and its image must equal the toolkit's. ctx receives the message:
 * ASYNCRT_ERROR_IO for no toolkit, an unreadable source or header, or a
 * header no include names; the compile's status for a source that does not
 * compile (with NVRTC's log); ASYNCRT_ERROR_CORRUPT when the check finds
 * another image (naming the source and target); INVALID_ARGUMENT for no
 * sources or a bad size. *data is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_bundle_make(asyncrt_context *ctx, const asyncrt_bundle_make_options *opts,
                                                  void **data, size_t *size);

#ifdef __cplusplus
}
#endif
#endif
