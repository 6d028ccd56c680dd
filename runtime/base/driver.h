/* The CUDA driver, opened at run time. libcuda is never linked: the library
 * and the tools must start on machines with no driver and say so. */
#ifndef ASYNCRT_DRIVER_H
#define ASYNCRT_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include "asyncrt/status.h"

/* Every entry point we use, with the CUDA version whose ABI our call sites
 * assume. cuGetProcAddress is asked for exactly that version, so a newer
 * driver that changed a signature still hands us the one we were built for. */
#define ASYNCRT_DRIVER_FUNCTIONS(X)                   \
    X(cuInit, 2000)                                   \
    X(cuDriverGetVersion, 2020)                       \
    X(cuGetErrorName, 6000)                           \
    X(cuGetErrorString, 6000)                         \
    X(cuDeviceGetCount, 2000)                         \
    X(cuDeviceGet, 2000)                              \
    X(cuDeviceGetName, 2000)                          \
    X(cuDeviceGetUuid, 11040)                         \
    X(cuDeviceGetAttribute, 2000)                     \
    X(cuDeviceTotalMem, 3020)                         \
    X(cuDevicePrimaryCtxRetain, 7000)                 \
    X(cuDevicePrimaryCtxRelease, 11000)               \
    X(cuCtxSetCurrent, 4000)                          \
    X(cuCtxSynchronize, 2000)                         \
    X(cuModuleLoadDataEx, 2010)                       \
    X(cuModuleUnload, 2000)                           \
    X(cuModuleGetFunction, 2000)                      \
    X(cuFuncGetAttribute, 2020)                       \
    X(cuFuncSetAttribute, 9000)                       \
    X(cuLaunchKernelEx, 11060)                        \
    X(cuMemAlloc, 3020)                               \
    X(cuMemFree, 3020)                                \
    X(cuMemcpyHtoD, 3020)                             \
    X(cuMemcpyDtoH, 3020)                             \
    X(cuMemcpyDtoDAsync, 3020)                        \
    X(cuMemsetD8Async, 3020)                          \
    X(cuStreamCreate, 2000)                           \
    X(cuStreamDestroy, 4000)                          \
    X(cuStreamSynchronize, 2000)                      \
    X(cuEventCreate, 2000)                            \
    X(cuEventDestroy, 4000)                           \
    X(cuEventRecord, 2000)                            \
    X(cuEventSynchronize, 2000)                       \
    X(cuEventElapsedTime, 2000)                       \
    X(cuTensorMapEncodeTiled, 12000)                  \
    X(cuTensorMapEncodeIm2col, 12000)                 \
    X(cuTensorMapReplaceAddress, 12000)              \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000) \
    X(cuOccupancyMaxActiveClusters, 11070)            \
    X(cuCtxGetStreamPriorityRange, 5050)              \
    X(cuStreamCreateWithPriority, 5050)

/* Present only on newer drivers; NULL when missing, and callers cope. */
#define ASYNCRT_DRIVER_OPTIONAL_FUNCTIONS(X)          \
    X(cuFuncGetParamInfo, 12040)                      \
    ASYNCRT_DRIVER_GRAPH_FUNCTIONS(X) \
    ASYNCRT_DRIVER_MULTI_GPU_FUNCTIONS(X)

/* Stream capture and eager loading (load/capture.c). cuStreamGetCaptureInfo
 * is CUDA 13's cuStreamGetCaptureInfo_v3, the 7-argument form of 12.3. */
#define ASYNCRT_DRIVER_GRAPH_FUNCTIONS(X)             \
    X(cuStreamGetCaptureInfo, 12030)                  \
    X(cuModuleGetLoadingMode, 11070)                  \
    X(cuModuleGetFunctionCount, 12040)                \
    X(cuModuleEnumerateFunctions, 12040)              \
    X(cuFuncIsLoaded, 12040)                          \
    X(cuFuncLoad, 12040)                              \
    X(cuStreamBeginCapture, 10010)                    \
    X(cuStreamEndCapture, 10000)                      \
    X(cuGraphInstantiateWithFlags, 11040)             \
    X(cuGraphLaunch, 10000)                           \
    X(cuGraphExecDestroy, 10000)                      \
    X(cuGraphDestroy, 10000)

/* Many GPUs (load/library.c, tools/probe's peer matrix): context-independent
 * loading (CUDA 12.0+; cuModuleLoadDataEx per device where absent), the
 * peer queries and copies, and which device a stream or pointer is on. */
#define ASYNCRT_DRIVER_MULTI_GPU_FUNCTIONS(X)         \
    X(cuLibraryLoadData, 12000)                       \
    X(cuLibraryUnload, 12000)                         \
    X(cuLibraryGetKernel, 12000)                      \
    X(cuLibraryGetModule, 12000)                      \
    X(cuKernelGetFunction, 12000)                     \
    X(cuDeviceCanAccessPeer, 4000)                    \
    X(cuDeviceGetP2PAttribute, 8000)                  \
    X(cuCtxEnablePeerAccess, 4000)                    \
    X(cuMemcpyPeerAsync, 4000)                        \
    X(cuStreamGetCtx, 9020)                           \
    X(cuStreamGetDevice, 12080)                       \
    X(cuPointerGetAttribute, 4000)

typedef struct asyncrt_driver {
    void *handle;          /* from dlopen */
    int version;           /* cuDriverGetVersion, e.g. 13000 */
    PFN_cuGetProcAddress_v12000 cuGetProcAddress; /* for asyncrt_context_driver_proc */
#define ASYNCRT_DRIVER_FIELD(name, ver) PFN_##name##_v##ver name;
    ASYNCRT_DRIVER_FUNCTIONS(ASYNCRT_DRIVER_FIELD)
    ASYNCRT_DRIVER_OPTIONAL_FUNCTIONS(ASYNCRT_DRIVER_FIELD)
#undef ASYNCRT_DRIVER_FIELD
} asyncrt_driver;

/* The process's driver table, loaded and cuInit-ed once (thread-safe) from
 * $ASYNCRT_LIBCUDA or libcuda.so.1. On failure returns NO_DRIVER (or DRIVER)
 * and copies the reason into msg. The driver is process-wide by nature, so
 * this one table is too; contexts hold a pointer to it. */
asyncrt_status asyncrt__driver_load(const asyncrt_driver **out, char *msg, size_t msg_size);

/* "CUDA_ERROR_INVALID_VALUE (invalid argument)" for a result; never NULL. */
void asyncrt__driver_describe(const asyncrt_driver *drv, CUresult result, char *buf, size_t size);

#endif
