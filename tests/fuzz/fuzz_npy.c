/* libFuzzer target: the .npy reader. Whatever it accepts must describe data
 * inside the input, and its header must round-trip through run_npy_header. */
#include <stdlib.h>
#include <string.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    /* An exact-size copy, so that ASan sees any read past the end. */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    run_npy npy;
    char err[512];
    if (run_npy_parse(copy, size, &npy, err, sizeof err)) {
        const unsigned char *d = npy.data;
        size_t bytes = (size_t)npy.count * run_dtype_size(npy.dtype);
        if (npy.rank < 0 || npy.rank > RUN_NPY_MAX_RANK) abort();
        if (d < copy || d > copy + size || bytes > (size_t)(copy + size - d)) abort();
        unsigned char sum = 0;
        for (size_t i = 0; i < bytes; i++) sum ^= d[i];
        *(volatile unsigned char *)&sum = sum; /* every byte read */
        char header[4096];
        size_t len = run_npy_header(npy.dtype, npy.shape, npy.rank, header, sizeof header);
        if (len) {
            unsigned char *again = malloc(len + bytes);
            if (again) {
                memcpy(again, header, len);
                if (bytes) memcpy(again + len, d, bytes);
                run_npy back;
                if (!run_npy_parse(again, len + bytes, &back, err, sizeof err)) abort();
                if (back.dtype != npy.dtype || back.rank != npy.rank || back.count != npy.count) abort();
                free(again);
            }
        }
    } else if (err[0] == '\0') {
        abort(); /* a refusal must say why */
    }
    free(copy);
    return 0;
}
