/* Stream capture (CUDA graphs): what must not happen while a stream is
 * capturing, refused before it breaks the capture (load/capture.c). */
#ifndef ASYNCRT_CAPTURE_H
#define ASYNCRT_CAPTURE_H

#include <stdbool.h>

#include "context.h"

/* ASYNCRT_ERROR_CAPTURE (the message names `what` and `name` and how to load
 * it first) when a stream captured through asyncrt_stream_capture_begin is
 * capturing: a module load there would invalidate the capture (global
 * capture mode, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED). */
asyncrt_status asyncrt__capture_refuse(asyncrt_context *ctx, const char *what, const char *name);

/* The same for a launch on `stream` of `function` (kernel `name`): refused
 * when the stream is capturing and the function is not loaded yet (lazy
 * loading would load it inside the capture). `launched`: the kernel has run
 * before, so it is loaded even where the driver cannot say. */
asyncrt_status asyncrt__capture_check_launch(asyncrt_context *ctx, CUstream stream, CUfunction function,
                                             bool launched, const char *name);

/* Loads every function of `module` (`name` in messages) now, when the
 * driver loads lazily (CUDA_MODULE_LOADING=LAZY, the default since CUDA
 * 12.2); *loaded gets how many were loaded. */
asyncrt_status asyncrt__module_load_functions(asyncrt_context *ctx, CUmodule module, const char *name,
                                              unsigned *loaded);

#endif
