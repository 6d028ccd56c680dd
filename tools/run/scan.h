/* Finds the __global__ functions of a CUDA source by a light scan (comments,
 * strings and preprocessor lines skipped), so that a file with one kernel
 * needs no --kernel. Pure; never fails on malformed text. */
#ifndef ASYNCRT_RUN_SCAN_H
#define ASYNCRT_RUN_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#define RUN_SCAN_NAME_MAX 256

typedef struct run_found_kernel {
    char name[RUN_SCAN_NAME_MAX]; /* qualified with enclosing namespaces, e.g. "ns::scale" */
    bool is_template;
    bool is_extern_c;
} run_found_kernel;

/* Writes up to `capacity` distinct kernels (declarations and definitions of
 * one name count once) and returns how many were found in all. */
size_t run_scan_kernels(const char *source, run_found_kernel *out, size_t capacity);

#endif
