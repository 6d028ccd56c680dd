/* cubin-compare [--layout|--resources] A.cubin B.cubin: are they the same
 * kernels (tests/parity/cubin_elf.h)? --layout and --resources compare less.
 * Prints the first image's kernels and every difference; exit 0 same, 1
 * different, 2 unreadable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubin_elf.h"
#include "parity_file.h"

int main(int argc, char **argv)
{
    asyncrt_cubin_facts facts = ASYNCRT_CUBIN_ALL;
    if (argc == 4 && strcmp(argv[1], "--layout") == 0) facts = ASYNCRT_CUBIN_LAYOUT;
    if (argc == 4 && strcmp(argv[1], "--resources") == 0) facts = ASYNCRT_CUBIN_RESOURCES;
    if (argc != 3 + (facts != ASYNCRT_CUBIN_ALL)) {
        fprintf(stderr, "usage: cubin-compare [--layout|--resources] A.cubin B.cubin\n");
        return 2;
    }
    argv += facts != ASYNCRT_CUBIN_ALL;
    size_t as = 0, bs = 0;
    void *a = parity_read_file(argv[1], &as), *b = parity_read_file(argv[2], &bs);
    if (!a || !b) {
        fprintf(stderr, "cubin-compare: cannot read %s\n", a ? argv[2] : argv[1]);
        return 2;
    }
    static asyncrt_cubin_kernel k[64];
    char why[256], report[8192];
    int n = asyncrt__cubin_kernels(a, as, k, 64, why, sizeof why);
    for (int i = 0; i < n && i < 64; i++)
        printf("%s: %u registers, %llu B static shared (aligned %llu), %u B stack frame, %llu B code\n", k[i].name,
               k[i].regs, (unsigned long long)k[i].shared_size, (unsigned long long)k[i].shared_align, k[i].frame,
               (unsigned long long)k[i].text_size);
    int d = asyncrt__cubin_compare(a, as, b, bs, facts, report, sizeof report);
    fputs(report, stdout);
    printf("%s\n", d == 0 ? "same kernels" : d < 0 ? "unreadable" : "different");
    free(a);
    free(b);
    return d == 0 ? 0 : d < 0 ? 2 : 1;
}
