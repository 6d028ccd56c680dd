/* nvJitLink in the compile worker's process (asyncrt-compile-worker, found
 * and trusted as for batches: base/worker_process.h). Why not in this process:
 * NVRTC 13.0 crashed inside nvrtcCompileProgram in processes that had run
 * nvJitLink's LTO (docs/platform.md, "Images are NVRTC's own"), and nvJitLink 13.0
 * reports some failures only on stderr ("Multiple definition of X", while
 * it returns success), which the worker can read and this library may not.
 *
 * Request (worker's stdin): "ASYNCRTL1", a u64 count and that many options
 * (u64 length + bytes, as build/worker_client.h), a u64 count of inputs, each a
 * u64 kind (ASYNCRT_JIT_*), its name and its bytes. Reply (stdout): a line
 * "status N", a u64 image size and the image (0 on failure), then the log
 * to EOF: nvJitLink's info log on success, its error log and what it
 * printed on stderr otherwise. */
#ifndef ASYNCRT_LINK_WORKER_H
#define ASYNCRT_LINK_WORKER_H

#include <stddef.h>

#include "asyncrt/status.h"
#include "link_jit.h"

#define ASYNCRT_LINK_WORKER_MAGIC "ASYNCRTL1"

/* Runs the link in `worker`. Returns the link's status with *image and *log
 * as asyncrt__jitlink_run gives them; ERROR_IO (why in *message, malloc'd)
 * when the worker could not run or answer: the caller then links itself. */
asyncrt_status asyncrt__link_in_worker(const char *worker, const char *const *options, size_t option_count,
                                      const asyncrt_link_item *items, size_t count, unsigned char **image,
                                      size_t *image_size, char **log, char **message);

/* The worker's side: answers the request in data[0..size) (magic included)
 * on stdout. Returns the worker's exit status: 0 answered, 2 malformed. */
int asyncrt__link_worker_answer(const unsigned char *data, size_t size);

#endif
