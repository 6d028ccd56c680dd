/* Compiles in worker processes. NVRTC 13.0 serialises nvrtcCompileProgram
 * behind one process-wide mutex (seen with gdb: a second thread waits in
 * pthread_mutex_lock inside nvrtcCompileProgram until the first returns), so
 * threads alone do not make a batch of cache misses faster. A batch with
 * several misses therefore runs each miss in a fresh asyncrt-compile-worker
 * process (exec'd, never a bare fork: NVRTC 13 initialises libcuda, which
 * does not survive fork) that compiles into the same disk cache; the batch
 * then reads the results back through the normal cache lookup. The worker
 * is only an accelerator: any problem with it falls back to compiling here,
 * and what is returned always comes through this process's own cache checks.
 *
 * Request (worker's stdin): "ASYNCRTW1", then fields as u64 little-endian
 * length + bytes: cache_dir, source_name, source, arch, std ("" = default),
 * then for headers (name, content pairs), include_dirs, defines, options and
 * name_expressions a u64 count and the strings. Reply (stdout): a line
 * "status N", then the failure's message up to EOF. */
#ifndef ASYNCRT_COMPILE_WORKER_H
#define ASYNCRT_COMPILE_WORKER_H

#include <stdint.h>

#include "asyncrt/runtime.h"

#define ASYNCRT_WORKER_MAGIC "ASYNCRTW1"

/* compile.c: the compile flow up to the cache lookup. SUCCESS with *out on a
 * hit; NOT_FOUND on a miss and UNSUPPORTED when the compile is not cacheable
 * (both: nothing set in the last error); any other status is the failure the
 * compile itself would give (bad arch, no device...). key: the cache key. */
asyncrt_status asyncrt__program_lookup(asyncrt_context *ctx, const char *source_name, const char *source,
                                      const asyncrt_compile_options *opts, asyncrt_program **out,
                                      uint8_t key[32]);

/* The worker to use: $ASYNCRT_COMPILE_WORKER ("0" turns workers off), else
 * the installed one, else the one in the build tree; NULL if none runs. */
const char *asyncrt__compile_worker_path(void);

/* Runs one compile in a worker process, into cache_dir. Returns the worker's
 * status, its message in *message (malloc'd, NULL on success), or
 * ASYNCRT_ERROR_IO when the worker itself could not run or answer (then the
 * caller compiles here). `arch` is explicit (resolved by the caller). */
asyncrt_status asyncrt__compile_in_worker(const char *worker, const char *cache_dir, const char *source_name,
                                         const char *source, const asyncrt_compile_options *opts,
                                         const char *arch, char **message);

#endif
