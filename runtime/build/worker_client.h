/* The compile worker's client: compiles in worker processes for the batch
 * (batch.c). The worker program is runtime/worker/worker_main.c; which one
 * runs, and how one request is exchanged with it, is base/worker_process.h.
 *
 * NVRTC 13.0 serialises nvrtcCompileProgram behind one process-wide mutex (seen with gdb: a second thread waits in
 * pthread_mutex_lock inside nvrtcCompileProgram until the first returns), so
 * threads alone do not make a batch of cache misses faster. A batch with
 * several misses therefore runs each miss in a fresh asyncrt-compile-worker
 * process (exec'd, never a bare fork: NVRTC 13 initialises libcuda, which
 * does not survive fork) that compiles into the same disk cache; the batch
 * then reads the results back through the normal cache lookup. The worker
 * gets the cache directory as the parent's own descriptor of it (its
 * descriptor ASYNCRT_WORKER_PASSED_FD), checked again there, never by name:
 * a folder swapped in at the name meanwhile is never written into. The worker
 * is only an accelerator: any problem with it, and any failure of its
 * compile, falls back to compiling here, and what is returned always comes
 * through this process's own cache checks.
 *
 * Request (worker's stdin): "ASYNCRTW4", then fields as u64 little-endian
 * length + bytes: the parent's cache key (32 bytes), the cache directory's
 * name (for messages), source_name, source, arch, std, then a u64 of flags (ASYNCRT_WORKER_*), then for
 * headers (name, content pairs), include_dirs, defines, options and
 * name_expressions a u64 count and the strings, then with the BUNDLE flag
 * the bundle's bytes (u64 length + bytes): every field of
 * asyncrt_compile_options. Reply (stdout): a line "status N", then the
 * failure's message up to EOF; or, when the key the worker computes differs
 * from the parent's (it then compiles nothing), a line "mismatch HEX". */
#ifndef ASYNCRT_WORKER_CLIENT_H
#define ASYNCRT_WORKER_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "asyncrt/runtime.h"
#include "compile.h" /* asyncrt__program_lookup, the worker's first step */

#define ASYNCRT_WORKER_MAGIC "ASYNCRTW4"
enum { ASYNCRT_WORKER_STD_GIVEN = 1, ASYNCRT_WORKER_NO_STD_HEADERS = 2, ASYNCRT_WORKER_NO_DEFAULT_DEVICE = 4,
       ASYNCRT_WORKER_BUNDLE = 8, ASYNCRT_WORKER_TOOLKIT_WITH_BUNDLE = 16, /* BUNDLE: its bytes follow, u64-sized */
       ASYNCRT_WORKER_SHARED_CACHE = 32 };                                  /* the directory is a shared cache */

/* Runs one compile in a worker process, into the cache directory cache_fd
 * (a usable one: asyncrt__cache_dir_fd's, shared or not, named cache_name).
 * key: this process's cache key for the request (asyncrt__program_lookup's),
 * which the worker must compute too. Returns the worker's status and its
 * message in *message (malloc'd, NULL on success); ERROR_IO when the worker
 * could not run or answer, or computed another key. `arch` is explicit
 * (resolved by the caller). */
asyncrt_status asyncrt__compile_in_worker(const char *worker, int cache_fd, bool shared, const char *cache_name,
                                         const char *source_name, const char *source,
                                         const asyncrt_compile_options *opts, const char *arch, const uint8_t key[32],
                                         char **message);

#endif
