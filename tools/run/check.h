/* --expect: compares a buffer with a .npy file element by element. */
#ifndef ASYNCRT_RUN_CHECK_H
#define ASYNCRT_RUN_CHECK_H

#include "buffers.h"

#define RUN_CHECK_SHOWN 10

typedef struct run_mismatch {
    uint64_t index;            /* flat; printed as a multi-index of the buffer's shape */
    long double got, expected;
} run_mismatch;

typedef struct run_check {
    const char *buffer, *path;
    uint64_t checked, mismatches;
    long double max_abs_err;
    double rtol, atol;
    run_mismatch first[RUN_CHECK_SHOWN];
    size_t shown;
} run_check;

/* Tolerances when --rtol/--atol are not given. */
void run_check_default_tolerance(run_dtype t, double *rtol, double *atol);

/* Compares got (count values of dtype) with expected (values of edtype).
 * NaN matches NaN; infinities match themselves. Pure. */
void run_check_compare(run_check *out, run_dtype dtype, const void *got, run_dtype edtype, const void *expected,
                       uint64_t count, double rtol, double atol);

/* Formats a flat index as "[i,j,k]" for a shape. */
void run_check_format_index(const run_buffer *b, uint64_t index, char *buf, size_t size);

#endif
