/* Images loaded once for every device (cuLibraryLoadData, CUDA 12.0+). */
#ifndef ASYNCRT_LIBRARY_H
#define ASYNCRT_LIBRARY_H

#include <stdbool.h>

#include "context.h"
#include "program.h"

typedef struct asyncrt_library asyncrt_library;

/* The shared library holding p's image, loaded on first need and shared by
 * ctx and its peers (asyncrt_context_create_peer); *loaded says whether this
 * call handed the image to the driver. *out NULL (and SUCCESS) where the
 * per-device cuModuleLoadDataEx is the way: PTX (each device JIT-compiles it
 * anyway, and the JIT's log buffers must not outlive the call) or a driver
 * without cuLibrary*. A failed load is MODULE_LOAD with the driver's reason. */
asyncrt_status asyncrt__library_acquire(asyncrt_context *ctx, const asyncrt_program *p, asyncrt_library **out,
                                        bool *loaded);
/* One module fewer uses it; the last unloads it. NULL is fine. */
void asyncrt__library_release(asyncrt_context *ctx, asyncrt_library *lib);
CUlibrary asyncrt__library_handle(const asyncrt_library *lib);

#endif
