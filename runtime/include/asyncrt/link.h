/* asyncrt: programs of several files and device libraries, linked with
 * nvJitLink (docs/linking.md).
 *
 *     asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90", .options = (const char *[]){"-dlto"},
 *                                  .option_count = 1};
 *     asyncrt_program_compile(ctx, "main.cu", main_src, &o, &main_prog);   // -rdc=true without LTO
 *     asyncrt_program_compile(ctx, "util.cu", util_src, &o, &util_prog);
 *     asyncrt_link *link;
 *     asyncrt_link_create(ctx, "sm_90", &link);
 *     asyncrt_link_add_program(link, main_prog);
 *     asyncrt_link_add_program(link, util_prog);
 *     asyncrt_link_add_file(link, "libfft.ltoir", ASYNCRT_LINK_ANY);
 *     asyncrt_link_add_option(link, "-lto");
 *     asyncrt_link_complete(link, &linked);          // cached; load with asyncrt_module_load
 *     asyncrt_link_destroy(link);
 *
 * A program compiled with -dlto is LTO-IR (to link with "-lto"); with
 * -rdc=true it is relocatable code (a CUBIN, or PTX for a compute_XY target).
 * Without -lto, an extern __shared__ array starts only 16 bytes aligned
 * whatever its __align__ (relocatable code does not keep it; nvcc -dc with
 * nvlink does the same): where the alignment matters (TMA), link with -lto
 * (docs/linking.md). A link is used
 * by one thread at a time; errors go to the context's last error like every
 * other call. */
#ifndef ASYNCRT_LINK_H
#define ASYNCRT_LINK_H

#include <stddef.h>

#include "asyncrt/cache.h"
#include "asyncrt/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct asyncrt_link asyncrt_link;

/* What an input is; ANY tells it from its bytes (an ELF for the GPU is a
 * CUBIN, another ELF a host object with device code, "!<arch>" a library,
 * the fatbin and LTO-IR magic numbers, PTX text). The values are
 * nvJitLink's own input types. */
typedef enum asyncrt_link_input {
    ASYNCRT_LINK_ANY = 0,
    ASYNCRT_LINK_CUBIN = 1,
    ASYNCRT_LINK_PTX = 2,
    ASYNCRT_LINK_LTOIR = 3,
    ASYNCRT_LINK_FATBIN = 4,
    ASYNCRT_LINK_OBJECT = 5,   /* a host object (nvcc -c -rdc=true): its embedded fatbin */
    ASYNCRT_LINK_LIBRARY = 6   /* a host library (.a) of such objects */
} asyncrt_link_input;

/* Starts a link for `arch`: NULL or "auto" is the opened device's target
 * (its sm_XY; a compute_XY choice links for sm_XY), else "sm_XY" or
 * "sm_XYa". Every input must be built for that SM: one that says it is
 * built for another (a program's arch, a CUBIN's ELF header, a fatbin with
 * no entry for it, a PTX .target) is refused with
 * ASYNCRT_ERROR_UNSUPPORTED_ARCH naming it. *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_link_create(asyncrt_context *ctx, const char *arch, asyncrt_link **out);
ASYNCRT_EXTERN void asyncrt_link_destroy(asyncrt_link *link); /* NULL is fine */

/* A compiled program (-rdc=true or -dlto). Its image is copied, and its
 * name expressions carry over: asyncrt_module_get_kernel finds
 * "scale<float>" in the linked module as in the program's own. */
ASYNCRT_EXTERN asyncrt_status asyncrt_link_add_program(asyncrt_link *link, const asyncrt_program *program);

/* A file (read once, now, through the same checks as the cache's files: a
 * regular file, no FIFO, at most 256 MiB), or a blob of `size` bytes named
 * `name` in messages (copied). A kind that contradicts the bytes is
 * ASYNCRT_ERROR_INVALID_ARGUMENT. */
ASYNCRT_EXTERN asyncrt_status asyncrt_link_add_file(asyncrt_link *link, const char *path, asyncrt_link_input kind);
ASYNCRT_EXTERN asyncrt_status asyncrt_link_add_data(asyncrt_link *link, const void *data, size_t size,
                                                    asyncrt_link_input kind, const char *name);

/* One nvJitLink option, e.g. "-lto", "-O3", "-maxrregcount=64",
 * "-Xptxas=-v", "-ftz=1"; in order. -arch is the link's own (create). */
ASYNCRT_EXTERN asyncrt_status asyncrt_link_add_option(asyncrt_link *link, const char *option);

/* Tells fn, with user, each phase of this link's asyncrt_link_complete
 * (the cache lookup, nvJitLink), on the thread that calls it (asyncrt/runtime.h,
 * "progress"); NULL fn: nothing is told (the default). */
ASYNCRT_EXTERN asyncrt_status asyncrt_link_set_progress(asyncrt_link *link, asyncrt_progress_fn fn, void *user);

/* Links into a loadable program (a CUBIN for the link's arch). The result
 * is cached in memory and on disk like a compile: the key holds every
 * input's kind, name and SHA-256, the options, the arch and the nvJitLink
 * library's identity (path, size, mtime, inode: its version), so a changed
 * input is a miss; a program input's digest covers its sources' manifests.
 * A link that fails is ASYNCRT_ERROR_COMPILE with nvJitLink's log (the
 * undefined or duplicate symbol and the input that has it). nvJitLink runs
 * in the compile worker's process when one is found (as for
 * asyncrt_build_batch; ASYNCRT_COMPILE_WORKER=0 links here): there its
 * messages on stderr are read too. The link stays usable (add more, complete
 * again). *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_link_complete(asyncrt_link *link, asyncrt_program **out);

/* Whether asyncrt_link_complete would hit the disk cache, and on a miss what
 * differs from the nearest recorded link of the same inputs' names (each
 * stored link keeps its key's inputs: docs/cache.md, "Why a miss"):
 * nvJitLink's identity (path, size, mtime; its version), the arch, a link
 * option added or removed, an input's kind or content (its digests), a name
 * expression. As asyncrt_cache_explain (asyncrt/cache.h): changes nothing,
 * links nothing; flags ASYNCRT_CACHE_EXPLAIN_REMOTE or 0; ASYNCRT_SUCCESS
 * whatever the verdict; free *out's strings with
 * asyncrt_cache_explanation_free. */
ASYNCRT_EXTERN asyncrt_status asyncrt_link_explain(asyncrt_link *link, unsigned flags,
                                                   asyncrt_cache_explanation *out);

#ifdef __cplusplus
}
#endif
#endif
