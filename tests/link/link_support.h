/* Shared by the link tests: compile a file of tests/link/kernels/ for
 * linking, and link a list of programs. */
#ifndef ASYNCRT_LINK_SUPPORT_H
#define ASYNCRT_LINK_SUPPORT_H

#include "test_support.h"

/* tests/link/kernels/<file>, compiled for arch with `mode` ("-rdc=true",
 * "-dlto" or NULL for a whole program); fails the test on error. */
asyncrt_program *link_test_compile(asyncrt_context *ctx, const char *file, const char *arch, const char *mode);

/* The programs (NULL-terminated) linked for arch with `option` (NULL: none);
 * returns the status, *out on success. */
asyncrt_status link_test_programs(asyncrt_context *ctx, const char *arch, const char *option, asyncrt_program **out,
                                  ...);

/* util.cu and main.cu as one source, for the single-file reference. */
char *link_test_single_source(void);

#endif
