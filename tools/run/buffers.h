/* Device buffers named on the command line: host-side initialisation (pure
 * but for .npy reads), then upload and read-back. */
#ifndef ASYNCRT_RUN_BUFFERS_H
#define ASYNCRT_RUN_BUFFERS_H

#include "asyncrt/runtime.h"
#include "cli.h"

typedef struct run_buffer {
    const char *name;
    run_dtype dtype;
    int rank;
    uint64_t shape[RUN_MAX_RANK];
    uint64_t count;
    size_t bytes;
    void *host;              /* initial contents; read-back target after the run */
    asyncrt_deviceptr dev;
} run_buffer;

/* Fills out[i] for every --buf (reading .npy files). With --compile-only
 * only .npy buffers get a host copy (the others: shape and size). Returns
 * RUN_EXIT_OK, or RUN_EXIT_IO / RUN_EXIT_USAGE / RUN_EXIT_INTERNAL with a
 * message. */
int run_buffers_init(const run_cli *cli, run_buffer *out, char *err, size_t err_size);

/* Allocates and uploads every buffer. */
asyncrt_status run_buffers_upload(asyncrt_context *ctx, run_buffer *b, size_t count);
asyncrt_status run_buffers_download(asyncrt_context *ctx, run_buffer *b, size_t count);

/* Frees host and device memory (device only when ctx is not NULL). */
void run_buffers_free(asyncrt_context *ctx, run_buffer *b, size_t count);

/* The value generator of rand=: element i of a buffer seeded with seed, in
 * [0, 1). Exposed for tests. */
double run_random_unit(uint64_t seed, uint64_t i);

#endif
