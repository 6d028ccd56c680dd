/* asyncrt: CUDA graphs without surprises (docs/library.md, "CUDA graphs").
 *
 * asyncrt_kernel_launch and the built-in ops' launches may be captured into
 * a graph with every launch attribute (cluster, cooperative, PDL; a priority
 * stream's priority is kept by its kernel nodes). What would load a module
 * while a stream captures is refused first with ASYNCRT_ERROR_CAPTURE, and
 * the capture stays valid:
 *   - a launch whose kernel is not loaded yet (lazy loading,
 *     CUDA_MODULE_LOADING=LAZY, the driver's default) on a capturing stream;
 *   - asyncrt_module_load, asyncrt_module_build, creating a built-in op and
 *     asyncrt_module_make_resident while a stream captures through
 *     asyncrt_stream_capture_begin (a capture begun elsewhere is not known to
 *     the library: only the launch check covers it).
 * asyncrt_program_compile alone is allowed: NVRTC never touches the driver.
 * The way to capture: build and load, asyncrt_module_make_resident (a
 * built-in op is made resident when it is created), then
 * asyncrt_stream_capture_begin, launches, asyncrt_stream_capture_end. */
#ifndef ASYNCRT_GRAPH_H
#define ASYNCRT_GRAPH_H

#include <stdbool.h>

#include "asyncrt/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct asyncrt_graph asyncrt_graph; /* a captured, instantiated graph */

/* Loads every function of the module on its device now (cuFuncLoad for each
 * of cuModuleEnumerateFunctions') when the driver loads lazily; nothing to do
 * when it loads eagerly. ASYNCRT_ERROR_UNSUPPORTED on a lazy driver without
 * cuFuncLoad (before CUDA 12.4: set CUDA_MODULE_LOADING=EAGER);
 * ASYNCRT_ERROR_CAPTURE while a stream captures. */
ASYNCRT_EXTERN asyncrt_status asyncrt_module_make_resident(asyncrt_module *module);

/* Begins capturing `stream` (not NULL: the default stream cannot be captured)
 * in global mode (CU_STREAM_CAPTURE_MODE_GLOBAL, the CUDA runtime's default),
 * and remembers it so that loads are refused until the capture ends. */
ASYNCRT_EXTERN asyncrt_status asyncrt_stream_capture_begin(asyncrt_context *ctx, asyncrt_stream stream);
/* Ends the capture and instantiates the graph into *out (NULL on failure).
 * ASYNCRT_ERROR_CAPTURE when something invalidated the capture. */
ASYNCRT_EXTERN asyncrt_status asyncrt_stream_capture_end(asyncrt_context *ctx, asyncrt_stream stream,
                                                         asyncrt_graph **out);
/* Launches the whole graph on `stream` (cuGraphLaunch). */
ASYNCRT_EXTERN asyncrt_status asyncrt_graph_launch(asyncrt_graph *graph, asyncrt_stream stream);
ASYNCRT_EXTERN void asyncrt_graph_destroy(asyncrt_graph *graph); /* NULL is fine */
/* Whether `stream` is capturing now (cuStreamGetCaptureInfo), by anyone. */
ASYNCRT_EXTERN asyncrt_status asyncrt_stream_capturing(asyncrt_context *ctx, asyncrt_stream stream, bool *capturing);

#ifdef __cplusplus
}
#endif
#endif
