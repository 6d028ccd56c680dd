/* asyncrt runtime: contexts, device probe, NVRTC compilation with a cache,
 * module loading, launches, and the few memory helpers a test or tool needs.
 *
 * Handles are opaque. A context is used by one thread at a time; separate
 * contexts may be used from separate threads. Every call that can fail
 * returns an asyncrt_status and leaves the details in the context's
 * last-error message. Nothing is printed unless ASYNCRT_LOG asks for it. */
#ifndef ASYNCRT_RUNTIME_H
#define ASYNCRT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asyncrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ASYNCRT_VERSION_MAJOR 0
#define ASYNCRT_VERSION_MINOR 1
#define ASYNCRT_VERSION_PATCH 0
#define ASYNCRT_VERSION_STRING "0.1.0"

typedef struct asyncrt_context asyncrt_context;
typedef struct asyncrt_program asyncrt_program; /* a compiled image; needs no device */
typedef struct asyncrt_module asyncrt_module;   /* an image loaded on the context's device */
typedef struct asyncrt_kernel asyncrt_kernel;   /* owned by its module */
typedef struct asyncrt_timer asyncrt_timer;     /* a pair of CUDA events */

typedef uint64_t asyncrt_deviceptr; /* a CUdeviceptr */
typedef void *asyncrt_stream;       /* a CUstream; NULL is the default stream */

/* ---- context ------------------------------------------------------------ */

/* Creates a context without touching the driver: compiling for an explicit
 * arch works on machines with no GPU. Reads ASYNCRT_LOG, ASYNCRT_CACHE,
 * ASYNCRT_CACHE_DIR (else XDG_CACHE_HOME/asyncrt, else ~/.cache/asyncrt).
 * Fails only with ASYNCRT_ERROR_OUT_OF_MEMORY. */
asyncrt_status asyncrt_context_create(asyncrt_context **out);
void asyncrt_context_destroy(asyncrt_context *ctx); /* NULL is fine */

/* The details of the last failure on this context. Each public call that
 * can fail clears it on entry, so it describes the most recent such call:
 * its failure, or "" after it succeeded. Valid until the next call on the
 * context. */
const char *asyncrt_context_last_error(const asyncrt_context *ctx);

/* 0 = quiet (default), 1 = info, 2 = debug. Messages go to stderr. */
void asyncrt_context_set_log_level(asyncrt_context *ctx, int level);

/* Overrides the on-disk cache directory; NULL disables the disk cache. The
 * in-process cache stays on unless ASYNCRT_CACHE=0. */
asyncrt_status asyncrt_context_set_cache_dir(asyncrt_context *ctx, const char *dir);
const char *asyncrt_context_cache_dir(const asyncrt_context *ctx); /* NULL if off */

/* Loads the driver (dlopen of libcuda.so.1, or $ASYNCRT_LIBCUDA), initialises
 * it and makes device `ordinal`'s primary context current for this context's
 * calls. ASYNCRT_ERROR_NO_DRIVER / ASYNCRT_ERROR_NO_DEVICE say why not. */
asyncrt_status asyncrt_context_open_device(asyncrt_context *ctx, int ordinal);

/* ---- device probe ------------------------------------------------------- */

/* What a device can do with asynchronous data movement, derived from its
 * compute capability (and, for clusters, the driver's attribute). */
typedef struct asyncrt_features {
    bool ldgsts;         /* cp.async, sm_80+ */
    bool mbarrier;       /* hardware mbarrier, sm_80+ */
    bool mbarrier_tx;    /* mbarrier transaction counts (expect_tx), sm_90+ */
    bool bulk_copy;      /* cp.async.bulk, sm_90+ */
    bool tma;            /* cp.async.bulk.tensor with CUtensorMap, sm_90+ */
    bool clusters;       /* thread block clusters, distributed shared memory, sm_90+ */
    bool sm90a;          /* arch-specific sm_90a: wgmma, setmaxnreg */
    bool sm100a;         /* arch-specific sm_100a: tcgen05 */
} asyncrt_features;

typedef struct asyncrt_device_info {
    int ordinal;
    char name[256];
    char uuid[48];                      /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    int cc_major, cc_minor;
    int sm_count;
    size_t total_memory_bytes;
    int shared_memory_per_block;        /* default limit (48 KiB) */
    int shared_memory_per_block_optin;  /* the most a kernel may opt in to */
    int shared_memory_per_sm;
    int registers_per_block, registers_per_sm;
    int l2_cache_bytes;
    int memory_clock_khz, memory_bus_width_bits;
    int max_threads_per_block, max_threads_per_sm, warp_size;
    bool cluster_launch;                /* CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH */
    int driver_version;                 /* CUDA version of the driver, e.g. 13000 */
    int nvrtc_version;                  /* e.g. 13000 for NVRTC 13.0 */
    asyncrt_features features;
} asyncrt_device_info;

/* Pure: derives the feature flags. cluster_launch is the driver attribute. */
asyncrt_features asyncrt_features_from_cc(int cc_major, int cc_minor, bool cluster_launch);

/* Peak DRAM bandwidth in GB/s implied by clock and bus width (both edges). */
double asyncrt_device_peak_bandwidth_gbs(const asyncrt_device_info *info);

/* Loads the driver if needed; works without an open device. */
asyncrt_status asyncrt_device_count(asyncrt_context *ctx, int *count);
asyncrt_status asyncrt_device_probe(asyncrt_context *ctx, int ordinal, asyncrt_device_info *out);

/* The info of the device opened with asyncrt_context_open_device, or NULL. */
const asyncrt_device_info *asyncrt_context_device(const asyncrt_context *ctx);

/* The NVRTC version as major*1000 + minor*10 (13000 for 13.0); 0 when no NVRTC
 * is found. Opens NVRTC on first use (see README, "Finding NVRTC"). */
int asyncrt_nvrtc_version(void);

/* ---- compile ------------------------------------------------------------ */

typedef struct asyncrt_header {
    const char *name;    /* as written in #include, e.g. "tile.cuh" */
    const char *content;
} asyncrt_header;

typedef struct asyncrt_compile_options {
    /* NULL or "auto": the opened device's target (see README: arch
     * selection). Otherwise "sm_XY", "sm_XYa" (CUBIN) or "compute_XY",
     * "compute_XYa" (PTX), checked against nvrtcGetSupportedArchs. */
    const char *arch;
    const char *std;                        /* NULL: "c++17" */
    const asyncrt_header *headers;          /* in-memory headers */
    size_t header_count;
    const char *const *include_dirs;
    size_t include_dir_count;
    const char *const *defines;             /* "NAME" or "NAME=VALUE" */
    size_t define_count;
    const char *const *options;             /* passed to NVRTC as they are */
    size_t option_count;
    const char *const *name_expressions;    /* C++ names to look up, e.g. "scale<float>" */
    size_t name_expression_count;
} asyncrt_compile_options;

typedef enum asyncrt_program_origin {
    ASYNCRT_ORIGIN_COMPILED = 0,  /* NVRTC ran */
    ASYNCRT_ORIGIN_MEMORY_CACHE,  /* found in this context's cache */
    ASYNCRT_ORIGIN_DISK_CACHE     /* read from the cache directory */
} asyncrt_program_origin;

/* Compiles `source` (named `source_name` in messages). opts may be NULL.
 * A compile error gives ASYNCRT_ERROR_COMPILE with NVRTC's full log in the
 * context's message. <asyncrt/device.cuh> and the toolkit's headers
 * (<cuda/barrier>, <cuda/pipeline>, <cuda/ptx>, <cooperative_groups.h>) are
 * always available. */
asyncrt_status asyncrt_program_compile(asyncrt_context *ctx, const char *source_name,
                                       const char *source, const asyncrt_compile_options *opts,
                                       asyncrt_program **out);
void asyncrt_program_destroy(asyncrt_program *program);

const void *asyncrt_program_image(const asyncrt_program *program, size_t *size);
bool asyncrt_program_is_ptx(const asyncrt_program *program);
const char *asyncrt_program_arch(const asyncrt_program *program);  /* e.g. "sm_90", "compute_80" */
const char *asyncrt_program_log(const asyncrt_program *program);   /* NVRTC warnings, may be "" */
asyncrt_program_origin asyncrt_program_origin_of(const asyncrt_program *program);
/* "compiled", "memory cache" or "disk cache"; "unknown" for other values. Never NULL. */
const char *asyncrt_program_origin_string(asyncrt_program_origin origin);
/* The mangled name of a registered name expression, or NULL. */
const char *asyncrt_program_lowered_name(const asyncrt_program *program, const char *name_expression);

/* ---- modules and kernels ------------------------------------------------ */

/* Loads a program on the opened device with cuModuleLoadDataEx; a rejected
 * image gives ASYNCRT_ERROR_MODULE_LOAD with the driver's JIT log. */
asyncrt_status asyncrt_module_load(asyncrt_context *ctx, const asyncrt_program *program,
                                   asyncrt_module **out);
/* Compile and load in one step. */
asyncrt_status asyncrt_module_build(asyncrt_context *ctx, const char *source_name,
                                    const char *source, const asyncrt_compile_options *opts,
                                    asyncrt_module **out);
void asyncrt_module_destroy(asyncrt_module *module);

/* `name` is an extern "C" name or one of the program's name expressions.
 * The kernel stays owned by the module. */
asyncrt_status asyncrt_module_get_kernel(asyncrt_module *module, const char *name,
                                         asyncrt_kernel **out);

/* The kernel's parameter sizes from cuFuncGetParamInfo. *count is set to the
 * number of parameters; at most `capacity` sizes are written. Returns
 * ASYNCRT_ERROR_UNSUPPORTED where the driver lacks cuFuncGetParamInfo. */
asyncrt_status asyncrt_kernel_param_sizes(asyncrt_kernel *kernel, size_t *sizes, size_t capacity,
                                          size_t *count);

/* The CUfunction behind a kernel, for callers who use the driver directly. */
void *asyncrt_kernel_function(const asyncrt_kernel *kernel);

typedef struct asyncrt_launch_config {
    unsigned grid[3];      /* a 0 in y or z is taken as 1 */
    unsigned block[3];
    unsigned cluster[3];   /* all 0: no cluster */
    size_t shared_bytes;   /* dynamic shared memory; above 48 KiB the limit is raised for you */
    asyncrt_stream stream;
} asyncrt_launch_config;

/* Launches with cuLaunchKernelEx. args[i] points at the value of parameter i.
 * When arg_sizes is not NULL and the driver has cuFuncGetParamInfo, the count
 * and sizes are checked first (ASYNCRT_ERROR_ARGUMENT_MISMATCH). */
asyncrt_status asyncrt_kernel_launch(asyncrt_kernel *kernel, const asyncrt_launch_config *config,
                                     void **args, const size_t *arg_sizes, size_t arg_count);

/* ---- memory, streams, timing ------------------------------------------- */

asyncrt_status asyncrt_memory_alloc(asyncrt_context *ctx, size_t bytes, asyncrt_deviceptr *out);
asyncrt_status asyncrt_memory_free(asyncrt_context *ctx, asyncrt_deviceptr ptr); /* 0 is fine */
asyncrt_status asyncrt_memory_to_device(asyncrt_context *ctx, asyncrt_deviceptr dst,
                                        const void *src, size_t bytes);
asyncrt_status asyncrt_memory_to_host(asyncrt_context *ctx, void *dst, asyncrt_deviceptr src,
                                      size_t bytes);
asyncrt_status asyncrt_memory_copy(asyncrt_context *ctx, asyncrt_deviceptr dst,
                                   asyncrt_deviceptr src, size_t bytes, asyncrt_stream stream);
asyncrt_status asyncrt_memory_fill(asyncrt_context *ctx, asyncrt_deviceptr dst, uint8_t byte,
                                   size_t bytes, asyncrt_stream stream);

/* Waits for all work on the device; a fault in a kernel surfaces here. */
asyncrt_status asyncrt_synchronize(asyncrt_context *ctx);
asyncrt_status asyncrt_stream_create(asyncrt_context *ctx, asyncrt_stream *out);
asyncrt_status asyncrt_stream_destroy(asyncrt_context *ctx, asyncrt_stream stream);
asyncrt_status asyncrt_stream_synchronize(asyncrt_context *ctx, asyncrt_stream stream);

asyncrt_status asyncrt_timer_create(asyncrt_context *ctx, asyncrt_timer **out);
void asyncrt_timer_destroy(asyncrt_timer *timer);
asyncrt_status asyncrt_timer_start(asyncrt_timer *timer, asyncrt_stream stream);
asyncrt_status asyncrt_timer_stop(asyncrt_timer *timer, asyncrt_stream stream);
/* Waits for the stop event, then gives the time between the two. */
asyncrt_status asyncrt_timer_elapsed_ms(asyncrt_timer *timer, float *ms);

#ifdef __cplusplus
}
#endif
#endif
