#include "asyncrt/status.h"

#include <stddef.h>

static const struct {
    const char *name;
    const char *description;
} k_statuses[ASYNCRT_STATUS_COUNT] = {
    [ASYNCRT_SUCCESS] = {"ASYNCRT_SUCCESS", "success"},
    [ASYNCRT_ERROR_INVALID_ARGUMENT] = {"ASYNCRT_ERROR_INVALID_ARGUMENT", "an argument breaks a documented rule"},
    [ASYNCRT_ERROR_OUT_OF_MEMORY] = {"ASYNCRT_ERROR_OUT_OF_MEMORY", "out of host memory"},
    [ASYNCRT_ERROR_NO_DRIVER] = {"ASYNCRT_ERROR_NO_DRIVER", "no usable CUDA driver"},
    [ASYNCRT_ERROR_NO_DEVICE] = {"ASYNCRT_ERROR_NO_DEVICE", "no such CUDA device"},
    [ASYNCRT_ERROR_DRIVER] = {"ASYNCRT_ERROR_DRIVER", "a CUDA driver call failed"},
    [ASYNCRT_ERROR_NVRTC] = {"ASYNCRT_ERROR_NVRTC", "NVRTC failed"},
    [ASYNCRT_ERROR_COMPILE] = {"ASYNCRT_ERROR_COMPILE", "the source did not compile"},
    [ASYNCRT_ERROR_UNSUPPORTED_ARCH] = {"ASYNCRT_ERROR_UNSUPPORTED_ARCH", "the target architecture is not supported"},
    [ASYNCRT_ERROR_NOT_FOUND] = {"ASYNCRT_ERROR_NOT_FOUND", "no kernel of that name"},
    [ASYNCRT_ERROR_MODULE_LOAD] = {"ASYNCRT_ERROR_MODULE_LOAD", "the driver rejected the module image"},
    [ASYNCRT_ERROR_LAUNCH] = {"ASYNCRT_ERROR_LAUNCH", "the kernel launch or the kernel failed"},
    [ASYNCRT_ERROR_ARGUMENT_MISMATCH] = {"ASYNCRT_ERROR_ARGUMENT_MISMATCH", "kernel arguments do not match its parameters"},
    [ASYNCRT_ERROR_RESOURCE_LIMIT] = {"ASYNCRT_ERROR_RESOURCE_LIMIT", "beyond a device limit"},
    [ASYNCRT_ERROR_UNSUPPORTED] = {"ASYNCRT_ERROR_UNSUPPORTED", "the device or driver cannot do this"},
    [ASYNCRT_ERROR_TENSORMAP_INVALID] = {"ASYNCRT_ERROR_TENSORMAP_INVALID", "the tensor map breaks a rule of cuTensorMapEncode"},
    [ASYNCRT_ERROR_IO] = {"ASYNCRT_ERROR_IO", "a file could not be read or written"},
    [ASYNCRT_ERROR_NO_NVRTC] = {"ASYNCRT_ERROR_NO_NVRTC", "no usable NVRTC library to compile with"},
};

const char *asyncrt_status_string(asyncrt_status status)
{
    if ((unsigned)status >= ASYNCRT_STATUS_COUNT) return "ASYNCRT_STATUS_UNKNOWN";
    return k_statuses[status].name;
}

const char *asyncrt_status_description(asyncrt_status status)
{
    if ((unsigned)status >= ASYNCRT_STATUS_COUNT) return "unknown status";
    return k_statuses[status].description;
}
