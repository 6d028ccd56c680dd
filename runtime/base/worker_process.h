/* Worker processes: which asyncrt-compile-worker runs, and one request to it
 * with its whole answer; the compile worker's compiles (build/worker_client.h)
 * and links (link/link_worker.h) both go through it.
 *
 * Which worker runs (asyncrt__worker_find): the one the user names
 * in $ASYNCRT_COMPILE_WORKER, else the installed one, found relative to the
 * file that holds this code: libasyncrt.so's folder (<prefix>/lib ->
 * <prefix>/libexec/asyncrt/), or, where the library is linked statically
 * into a program, that program's folder (<prefix>/bin -> the same), so an
 * installed prefix can be moved. Either way it must pass
 * asyncrt__trusted_executable; a build tree's worker runs only when named.
 *
 * The worker is exec'd (posix_spawn, never a bare fork: NVRTC 13 initialises
 * libcuda, which does not survive fork) with one socket as its stdin and
 * stdout. */
#ifndef ASYNCRT_WORKER_PROCESS_H
#define ASYNCRT_WORKER_PROCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/status.h"

/* The worker to run (see above), its real path in `path`; `named` is the
 * ASYNCRT_COMPILE_WORKER setting (NULL when unset). SUCCESS when it
 * may run; NOT_FOUND when there is none to run (ASYNCRT_COMPILE_WORKER=0,
 * or none installed beside this code); ERROR_IO when the one named or
 * installed was refused (not there, or writable by others). `why` says
 * which, and where it looked. */
asyncrt_status asyncrt__worker_find(const char *named, char *path, size_t size, char *why, size_t why_size);

/* The descriptor number a worker finds the caller's pass_fd at. */
#define ASYNCRT_WORKER_PASSED_FD 3

/* Sends req to `worker`'s stdin, reads its stdout to EOF into *reply
 * (malloc'd, NUL-terminated after *reply_size bytes) and reaps it; pass_fd,
 * unless -1, is the worker's descriptor ASYNCRT_WORKER_PASSED_FD (the
 * caller's stays open, and no other child gets it). False, with why
 * (malloc'd), when it could not start, did not answer, or exited other than
 * with status 0 (what it wrote is then dropped). */
bool asyncrt__worker_exchange(const char *worker, int pass_fd, const void *req, size_t req_size,
                              unsigned char **reply, size_t *reply_size, char **why);

#endif
