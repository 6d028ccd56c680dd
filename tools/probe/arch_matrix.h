/* --arch-matrix: which feature's probe kernel compiles for which arch. Needs
 * NVRTC only, no driver and no GPU. */
#ifndef ASYNCRT_PROBE_ARCH_MATRIX_H
#define ASYNCRT_PROBE_ARCH_MATRIX_H

#include "asyncrt/runtime.h"
#include "report.h"

/* The archs NVRTC supports, with sm_90a and sm_100a after their base archs;
 * each feature is compiled to a CUBIN so that ptxas judges every
 * instruction. Fails only when NVRTC itself does. */
asyncrt_status probe_arch_matrix_build(asyncrt_context *ctx, probe_arch_matrix *m);
/* Why the build failed: the tool's own reason, else the library's. */
const char *probe_arch_matrix_why(const asyncrt_context *ctx);

#endif
