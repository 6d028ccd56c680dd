/* asyncrt: status codes. Every fallible call returns one of these; the
 * context that made the call keeps a message with the details
 * (asyncrt_context_last_error). */
#ifndef ASYNCRT_STATUS_H
#define ASYNCRT_STATUS_H

#include "asyncrt/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum asyncrt_status {
    ASYNCRT_SUCCESS = 0,
    ASYNCRT_ERROR_INVALID_ARGUMENT,   /* a parameter breaks a documented rule */
    ASYNCRT_ERROR_OUT_OF_MEMORY,      /* host allocation failed */
    ASYNCRT_ERROR_NO_DRIVER,          /* libcuda.so.1 missing, a stub, or too old */
    ASYNCRT_ERROR_NO_DEVICE,          /* driver present but no such device */
    ASYNCRT_ERROR_DRIVER,             /* a CUDA driver call failed */
    ASYNCRT_ERROR_NVRTC,              /* NVRTC failed for a reason other than the source */
    ASYNCRT_ERROR_COMPILE,            /* the source did not compile; the log is in the message */
    ASYNCRT_ERROR_UNSUPPORTED_ARCH,   /* the target arch is unknown to NVRTC or the device */
    ASYNCRT_ERROR_NOT_FOUND,          /* no kernel of that name in the module */
    ASYNCRT_ERROR_MODULE_LOAD,        /* the driver rejected the image; JIT log in the message */
    ASYNCRT_ERROR_LAUNCH,             /* the launch or the kernel itself failed */
    ASYNCRT_ERROR_ARGUMENT_MISMATCH,  /* kernel arguments do not match its parameters */
    ASYNCRT_ERROR_RESOURCE_LIMIT,     /* beyond a device limit (shared memory, block size...) */
    ASYNCRT_ERROR_UNSUPPORTED,        /* the device cannot do this (e.g. a forced TMA path on sm_80) */
    ASYNCRT_ERROR_TENSORMAP_INVALID,  /* a tensor map descriptor breaks a rule of cuTensorMapEncode* */
    ASYNCRT_ERROR_IO,                 /* a file could not be read or written */
    ASYNCRT_ERROR_NO_NVRTC,           /* a compile is needed and no usable NVRTC was found */
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
