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
    /* Declared parameters; -1 when unknown (a parameter pack, or overloads
     * that disagree). Used to catch a missing --arg when the driver cannot
     * list parameters (no cuFuncGetParamInfo). */
    int param_count;
    /* A template's parameter list as written, e.g. "typename T, int N"
     * (whitespace collapsed), and the arguments of an explicit instantiation
     * in the file, e.g. "float, 4"; empty when none. */
    char template_params[RUN_SCAN_NAME_MAX];
    char instantiation[RUN_SCAN_NAME_MAX];
} run_found_kernel;

/* Writes up to `capacity` distinct kernels (declarations and definitions of
 * one name count once) and returns how many were found in all. */
size_t run_scan_kernels(const char *source, run_found_kernel *out, size_t capacity);

/* The kernel among found[0..count) that --kernel NAME means: NAME without
 * its template arguments and a leading "::". NULL if none. */
const run_found_kernel *run_scan_find(const run_found_kernel *found, size_t count, const char *name);

/* Whether the kernel `name` is passed to NVRTC as a name expression. Not an
 * extern "C" kernel of the file named plainly: the driver finds it by that
 * name, and the compile is then the library's default one, the one
 * asyncrt-cache warm makes unless told other names. */
bool run_scan_needs_name(const run_found_kernel *found, size_t count, const char *name);

/* An example --kernel value for a template: its explicit instantiation if
 * the file has one, else a placeholder per parameter (float for a type, 1 for
 * a value), e.g. "scale<float, 1>". */
void run_scan_example(const run_found_kernel *k, char *buf, size_t size);

#endif
