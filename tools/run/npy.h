/* NumPy .npy files (format versions 1, 2 and 3): little-endian numeric
 * arrays in C order. Parsing is a pure function over bytes so that it can be
 * tested (and fuzzed) without files. */
#ifndef ASYNCRT_RUN_NPY_H
#define ASYNCRT_RUN_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

#define RUN_NPY_MAX_RANK 8

typedef struct run_npy {
    run_dtype dtype;
    int rank;                          /* 0 for a scalar array */
    uint64_t shape[RUN_NPY_MAX_RANK];
    uint64_t count;                    /* product of shape */
    const void *data;                  /* points into the parsed bytes */
} run_npy;

/* Parses a whole .npy image. On failure writes why into err and returns false. */
bool run_npy_parse(const void *bytes, size_t size, run_npy *out, char *err, size_t err_size);

/* .npy inputs above this, or above physical memory, are refused. */
#define RUN_NPY_MAX_BYTES (UINT64_C(1) << 40)
uint64_t run_npy_max_bytes(void);

/* Reads and parses a regular file (FIFOs and devices are refused); *storage receives the malloc'd bytes (free it
 * after use of out->data). */
bool run_npy_read(const char *path, run_npy *out, void **storage, char *err, size_t err_size);

/* The header (magic .. newline, a multiple of 64 bytes) for an array. bf16
 * has no NumPy type: callers write such data as f32. Returns its length, or 0
 * if it does not fit. */
size_t run_npy_header(run_dtype dtype, const uint64_t *shape, int rank, char *buf, size_t size);

/* Writes atomically: a temporary file next to path, renamed over it. */
bool run_npy_write(const char *path, run_dtype dtype, const uint64_t *shape, int rank,
                   const void *data, char *err, size_t err_size);

#endif
