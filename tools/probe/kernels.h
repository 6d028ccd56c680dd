/* The probe kernels (kernels_src/probe_features.cu, embedded in the probe by
 * tools/probe/CMakeLists.txt through cmake/embed.cmake: the library never
 * compiles them). */
#ifndef ASYNCRT_PROBE_KERNELS_H
#define ASYNCRT_PROBE_KERNELS_H

#include <stddef.h>

#include "asyncrt/runtime.h"

/* The generated table (probe_kernel.c in the build tree). */
typedef struct probe_embedded_file {
    const char *name; /* "asyncrt/probe_features.cu" */
    const char *content;
} probe_embedded_file;
extern const probe_embedded_file probe_kernel_files[];
extern const size_t probe_kernel_file_count;
const char *probe_kernel_find(const char *name);

/* The source. */
const char *probe_kernel_source(void);

/* Compiles the part selected by `define` for `arch` (NULL: the device's). */
asyncrt_status probe_compile(asyncrt_context *ctx, const char *define, const char *arch, asyncrt_program **out);
/* Compiles and loads it on the context's device. */
asyncrt_status probe_build_module(asyncrt_context *ctx, const char *define, const char *arch, asyncrt_module **out);

#endif
