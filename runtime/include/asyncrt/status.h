/* asyncrt: status codes. Every fallible call returns one of these; the
 * context that made the call keeps a message with the details
 * (asyncrt_context_last_error). */
#ifndef ASYNCRT_STATUS_H
#define ASYNCRT_STATUS_H

#include "asyncrt/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row per status: XX(code, description). The enum, the names and the
 * descriptions all expand from it, so no code can lack either. A value is
 * its row's position and part of the ABI: new codes go at the end. */
#define ASYNCRT_STATUS_MAP(XX)                                                                                  \
    XX(SUCCESS, "success")                                                                                      \
    XX(ERROR_INVALID_ARGUMENT, "an argument breaks a documented rule")                                          \
    XX(ERROR_OUT_OF_MEMORY, "out of host memory")                                                               \
    XX(ERROR_NO_DRIVER, "no usable CUDA driver") /* libcuda.so.1 missing, a stub, or too old */                 \
    XX(ERROR_NO_DEVICE, "no such CUDA device") /* driver present but no such device */                          \
    XX(ERROR_DRIVER, "a CUDA driver call failed")                                                               \
    XX(ERROR_NVRTC, "NVRTC failed") /* for a reason other than the source */                                    \
    XX(ERROR_COMPILE, "the source did not compile") /* the log is in the message */                             \
    XX(ERROR_UNSUPPORTED_ARCH, "the target architecture is not supported") /* unknown to NVRTC or the device */ \
    XX(ERROR_NOT_FOUND, "no kernel of that name") /* in the module */                                           \
    XX(ERROR_MODULE_LOAD, "the driver rejected the module image") /* JIT log in the message */                  \
    XX(ERROR_LAUNCH, "the kernel launch or the kernel failed")                                                  \
    XX(ERROR_ARGUMENT_MISMATCH, "kernel arguments do not match its parameters")                                 \
    XX(ERROR_RESOURCE_LIMIT, "beyond a device limit") /* shared memory, block size... */                        \
    XX(ERROR_UNSUPPORTED, "the device or driver cannot do this") /* e.g. a forced TMA path on sm_80 */          \
    XX(ERROR_TENSORMAP_INVALID, "the tensor map breaks a rule of cuTensorMapEncode")                            \
    XX(ERROR_IO, "a file could not be read or written")                                                         \
    XX(ERROR_NO_NVRTC, "no usable NVRTC library to compile with") /* a compile is needed and none was found */  \
    XX(ERROR_VERSION_MISMATCH, "NVRTC, nvJitLink and the driver are of versions that do not work together") \
    /* NVRTC too new for the driver to load what it builds; nvJitLink older than NVRTC's LTO-IR */            \
    XX(ERROR_CORRUPT, "a file failed its checks") /* damaged, foreign, truncated: asyncrt/cache.h */       \
    XX(ERROR_CAPTURE, "refused: a stream is capturing a CUDA graph") /* a compile, load or lazy load */

typedef enum asyncrt_status {
#define ASYNCRT_STATUS_ENUM_(code, description) ASYNCRT_##code,
    ASYNCRT_STATUS_MAP(ASYNCRT_STATUS_ENUM_) /* ASYNCRT_SUCCESS = 0, then errors */
#undef ASYNCRT_STATUS_ENUM_
    ASYNCRT_STATUS_COUNT
} asyncrt_status;

/* A short constant name for a status, e.g. "ASYNCRT_ERROR_COMPILE".
 * Never NULL; unknown values give "ASYNCRT_STATUS_UNKNOWN". */
ASYNCRT_EXTERN const char *asyncrt_status_string(asyncrt_status status);

/* One sentence saying what the status means. Never NULL. */
ASYNCRT_EXTERN const char *asyncrt_status_description(asyncrt_status status);

#ifdef __cplusplus
}
#endif
#endif
