/* A kernel file of the parity corpus (tests/parity/{tricky,corpus}/NAME.cu)
 * and its header lines:
 *   // parity: arch=sm_90a
 *   // parity: nvcc=FLAGS            (optional: what nvcc needs besides -cubin -arch -std=c++17)
 *   // parity: run=--kernel NAME ... (asyncrt-run's arguments)
 *   // parity: compare=BUF[:exact|:rtol=R,atol=A] ...
 * corpus/README.md says more. */
#ifndef ASYNCRT_PARITY_FILE_H
#define ASYNCRT_PARITY_FILE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct parity_file {
    char arch[32];
    char kernel[256];     /* --kernel's value from run=, "" if none */
    char nvcc_flags[512];
    char error[512];
} parity_file;

/* The *.cu names in `folder` (relative to ASYNCRT_TEST_SOURCE_DIR), sorted;
 * 0 when the folder is missing. The names and the array are malloc'd. */
size_t parity_list(const char *folder, char ***names);

/* Reads folder/name: returns its malloc'd full path and sets *source (the
 * text, malloc'd) and *pf; NULL with pf->error on a missing file or header. */
char *parity_read(const char *folder, const char *name, parity_file *pf, char **source);

/* Whether the i-th file (by sorted name) of `folder` is in the sample the
 * corpus tests run by default, to keep the README's test command short:
 * every file of tricky/ (each one layout hazard), one in eight of corpus/.
 * `full` (ASYNCRT_TEST_FULL=1, as .ci/run sets): every file. */
bool parity_sampled(const char *folder, size_t i, bool full);

/* A whole file, malloc'd; NULL if it cannot be read. */
void *parity_read_file(const char *path, size_t *size);

#endif
