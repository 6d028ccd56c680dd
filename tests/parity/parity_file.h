/* A kernel file of the parity corpus (tests/parity/{tricky,corpus}/NAME.cu)
 * and its header lines:
 *   // parity: arch=sm_90a
 *   // parity: nvcc=FLAGS            (optional: what nvcc needs besides -cubin -arch -std=c++17)
 *   // parity: run=--kernel NAME ... (asyncrt-run's arguments)
 *   // parity: compare=BUF[:exact|:rtol=R,atol=A] ...
 * corpus/README.md says more. */
#ifndef ASYNCRT_PARITY_FILE_H
#define ASYNCRT_PARITY_FILE_H

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

/* A whole file, malloc'd; NULL if it cannot be read. */
void *parity_read_file(const char *path, size_t *size);

#endif
