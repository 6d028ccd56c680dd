/* One request to a worker process and its whole answer: the compile worker's
 * compiles (compile_worker.h) and links (link_worker.h) both go through it.
 * The worker is exec'd (posix_spawn, never a bare fork: NVRTC 13 initialises
 * libcuda, which does not survive fork) with one socket as its stdin and
 * stdout. */
#ifndef ASYNCRT_WORKER_EXCHANGE_H
#define ASYNCRT_WORKER_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>

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
