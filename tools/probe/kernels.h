/* The probe kernels (kernels_src/probe_features.cu, embedded in the library). */
#ifndef ASYNCRT_PROBE_KERNELS_H
#define ASYNCRT_PROBE_KERNELS_H

#include "asyncrt/runtime.h"

/* The source, or NULL if the library was built without it. */
const char *probe_kernel_source(void);

/* Compiles the part selected by `define` for `arch` (NULL: the device's). */
asyncrt_status probe_compile(asyncrt_context *ctx, const char *define, const char *arch, asyncrt_program **out);
/* Compiles and loads it on the context's device. */
asyncrt_status probe_build_module(asyncrt_context *ctx, const char *define, const char *arch, asyncrt_module **out);

#endif
