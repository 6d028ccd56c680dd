/* asyncrt runtime: contexts, device probe, NVRTC compilation with a cache,
 * module loading, launches, and the few memory helpers a test or tool needs.
 *
 * Handles are opaque. Every call that can fail returns an asyncrt_status and
 * leaves the details in the context's last-error message for the calling
 * thread. Nothing is printed unless ASYNCRT_LOG asks for it.
 *
 * Threads. Separate contexts are independent. On one context, these calls
 * may run from any number of threads at once: asyncrt_program_compile
 * (cache lookups and stores included; two threads compiling the same program
 * run NVRTC once, the second waits and gets the cached copy),
 * asyncrt_module_load, asyncrt_module_build, asyncrt_build_batch,
 * asyncrt_context_wait_device, asyncrt_context_device, asyncrt_device_count,
 * asyncrt_device_probe, the memory_*, stream_* and synchronize calls, and
 * asyncrt_context_last_error. Each thread that calls into a context makes the
 * device's context current for itself (cuCtxSetCurrent), as needed.
 * Everything else on a context must not overlap with any other call on it:
 * create/destroy, set_log_level, set_cache_dir and open_device (run it before
 * the other threads start, or use open_device_async, which other calls wait
 * for). A module with its kernels, a program and a timer are each used by one
 * thread at a time (different modules from different threads is fine).
 *
 * Last error: one message per thread per context; asyncrt_context_last_error
 * says what it holds and how long. */
#ifndef ASYNCRT_RUNTIME_H
#define ASYNCRT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asyncrt/status.h"
#include "asyncrt/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct asyncrt_context asyncrt_context;
typedef struct asyncrt_program asyncrt_program; /* a compiled image; needs no device */
typedef struct asyncrt_module asyncrt_module;   /* an image loaded on the context's device */
typedef struct asyncrt_kernel asyncrt_kernel;   /* owned by its module */
typedef struct asyncrt_timer asyncrt_timer;     /* a pair of CUDA events */
typedef struct asyncrt_bundle asyncrt_bundle;   /* headers for a toolkit-less machine: asyncrt/bundle.h */

typedef uint64_t asyncrt_deviceptr; /* a CUdeviceptr */
typedef void *asyncrt_stream;       /* a CUstream; NULL is the default stream */

/* ---- context ------------------------------------------------------------ */

/* Creates a context without touching the driver: compiling for an explicit
 * arch works on machines with no GPU. Reads ASYNCRT_LOG, ASYNCRT_CACHE,
 * ASYNCRT_CACHE_DIR (else XDG_CACHE_HOME/asyncrt, else ~/.cache/asyncrt),
 * ASYNCRT_REMOTE_CACHE and ASYNCRT_REMOTE_CACHE_KEY_FILE (a refused remote
 * is logged at level 1 and shows in asyncrt_context_remote_cache_stats).
 * Fails only with ASYNCRT_ERROR_OUT_OF_MEMORY, leaving *out NULL. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_create(asyncrt_context **out);
ASYNCRT_EXTERN void asyncrt_context_destroy(asyncrt_context *ctx); /* NULL is fine */

/* The calling thread's message about its most recent call on ctx that can
 * fail: that call's failure (the failing call, the CUresult name, NVRTC's or
 * the JIT's log), or "" when it succeeded, since each such call clears the
 * thread's message on entry. Each thread has its own: another thread's
 * calls never change it. The string stays valid until this thread's next
 * failure on ctx or ctx's destruction (asyncrt_build_batch's own threads
 * drop theirs when they end); a call that succeeds leaves it valid, and "".
 * Never NULL ("" for a NULL ctx). */
ASYNCRT_EXTERN const char *asyncrt_context_last_error(const asyncrt_context *ctx);

/* 0 = quiet (default), 1 = info, 2 = debug. Messages go to stderr. */
ASYNCRT_EXTERN void asyncrt_context_set_log_level(asyncrt_context *ctx, int level);

/* The cache directory, the counters and the remote cache: asyncrt/cache.h. */

/* Loads the driver (dlopen of libcuda.so.1, or $ASYNCRT_LIBCUDA), initialises
 * it and makes device `ordinal`'s primary context current for this context's
 * calls. ASYNCRT_ERROR_NO_DRIVER / ASYNCRT_ERROR_NO_DEVICE say why not. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_open_device(asyncrt_context *ctx, int ordinal);

/* Many GPUs (docs/library.md, "Many GPUs in one process"): a context is one
 * device, and a peer is another device's context that shares base's program
 * cache (its tiers and counters: asyncrt_context_cache_stats reads the same
 * on each) and its set of loaded libraries, with a copy of base's settings.
 * A program compiled on any of them is a memory hit on the others of its
 * arch, and a CUBIN is handed to the driver once (cuLibraryLoadData) for
 * every device, each taking its kernels from it; a device of another arch
 * compiles its own image once. Opens `ordinal` on the new context; the
 * failure (NO_DEVICE for an ordinal out of range, naming it and the count)
 * is in base's last error. The contexts may be destroyed in any order; a
 * module must be destroyed before its own context. set_cache_dir and
 * set_remote_cache on any of them change the one cache, and must not
 * overlap calls on the others. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_create_peer(asyncrt_context *base, int ordinal,
                                                           asyncrt_context **out);
/* Whether a and b share one cache (one made the other, or both came from a third). */
ASYNCRT_EXTERN bool asyncrt_context_shares_cache(const asyncrt_context *a, const asyncrt_context *b);

/* ---- device probe ------------------------------------------------------- */

/* What a device can do with asynchronous data movement, derived from its
 * compute capability (and, for clusters, the driver's attribute). Its layout
 * is frozen (it is returned by value and sits inside asyncrt_device_info):
 * new capabilities are appended to asyncrt_device_info. */
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
    /* Set it with ASYNCRT_DEVICE_INFO_INIT (or .size = sizeof(asyncrt_device_info)): the
     * library writes only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
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
#define ASYNCRT_DEVICE_INFO_INIT ASYNCRT_SIZED_INIT(asyncrt_device_info)

/* Pure: derives the feature flags. cluster_launch is the driver attribute. */
ASYNCRT_EXTERN asyncrt_features asyncrt_features_from_cc(int cc_major, int cc_minor, bool cluster_launch);

/* Peak DRAM bandwidth in GB/s implied by clock and bus width (both edges). */
ASYNCRT_EXTERN double asyncrt_device_peak_bandwidth_gbs(const asyncrt_device_info *info);

/* Loads the driver if needed; works without an open device. */
ASYNCRT_EXTERN asyncrt_status asyncrt_device_count(asyncrt_context *ctx, int *count);
ASYNCRT_EXTERN asyncrt_status asyncrt_device_probe(asyncrt_context *ctx, int ordinal, asyncrt_device_info *out);

/* The info of the device opened with asyncrt_context_open_device, or NULL:
 * the library's own copy, whose size is the library's (at least the
 * caller's, for a library at least as new as the caller's header). */
ASYNCRT_EXTERN const asyncrt_device_info *asyncrt_context_device(const asyncrt_context *ctx);

/* The NVRTC version as major*1000 + minor*10 (13000 for 13.0); 0 when no NVRTC
 * is found. Opens NVRTC on first use (see docs/platform.md, "Finding NVRTC"). */
ASYNCRT_EXTERN int asyncrt_nvrtc_version(void);

/* ---- compile ------------------------------------------------------------ */

/* ---- progress ------------------------------------------------------------- */

/* What a long call is doing now, for a status line (the tools draw one on a
 * terminal: docs/tools.md, "Progress"). A call given a callback tells it at
 * each phase boundary, before the phase starts; it prints nothing itself and
 * starts no thread or timer for it (NVRTC blocks for seconds: a caller that
 * shows elapsed time keeps its own clock).
 *
 * Threads: the callback runs on the thread that made the call
 * (asyncrt_program_compile, asyncrt_module_build, asyncrt_link_complete,
 * asyncrt_bundle_make), except in asyncrt_build_batch, where it also runs on
 * the batch's pool threads, several at once: there it must be thread-safe.
 * It is never called after the call that was given it returns. It must
 * return quickly and make no call on the same context. A NULL callback costs
 * nothing. */
typedef enum asyncrt_progress_phase {
    ASYNCRT_PROGRESS_CACHE_LOOKUP = 0, /* the cache is asked for a compile or link (memory, disk, remote,
                                          and waiting for another process's compile of the same key) */
    ASYNCRT_PROGRESS_COMPILE,          /* NVRTC runs (here, or in a batch's compile worker) */
    ASYNCRT_PROGRESS_LINK,             /* nvJitLink runs */
    ASYNCRT_PROGRESS_LOAD,             /* the driver loads the image (module_build, a batch with load) */
    ASYNCRT_PROGRESS_BUNDLE_HEADER     /* asyncrt_bundle_make has read one more header (count) */
} asyncrt_progress_phase;

typedef struct asyncrt_progress_event {
    size_t size;                  /* sizeof the library's struct: a field at or past it is absent */
    asyncrt_progress_phase phase;
    const char *source_name;      /* the source (a link: its inputs' names, shortened); never NULL */
    const char *arch;             /* the target, e.g. "sm_90"; never NULL */
    long long count;              /* BUNDLE_HEADER: the distinct headers read so far; otherwise -1 */
} asyncrt_progress_event;

/* The strings live until the callback returns: copy what is kept. */
typedef void (*asyncrt_progress_fn)(const asyncrt_progress_event *event, void *user);

/* An element of an array (asyncrt_compile_options.headers): its layout is frozen. */
typedef struct asyncrt_header {
    const char *name;    /* as written in #include, e.g. "tile.cuh" */
    const char *content;
} asyncrt_header;

typedef struct asyncrt_compile_options {
    /* Set it with ASYNCRT_COMPILE_OPTIONS_INIT (or .size = sizeof(asyncrt_compile_options)): the
     * library reads only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
    /* NULL or "auto": the opened device's target (see docs/library.md: arch
     * selection). Otherwise "sm_XY", "sm_XYa" (CUBIN) or "compute_XY",
     * "compute_XYa" (PTX), checked against nvrtcGetSupportedArchs; and, for
     * a program to be loaded (asyncrt_module_build, asyncrt_module_load),
     * against the driver: PTX from an NVRTC newer than the driver is
     * ASYNCRT_ERROR_VERSION_MISMATCH. asyncrt_program_compile alone builds
     * it (it may be for another machine). */
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
    /* ---- The first layout ends here. Fields added later: a caller whose
     * size stops short of one gets zero, its default. */
    /* Do not offer the built-in device-side standard headers (<cmath>,
     * <cstdint>, <type_traits>, ...: docs/library.md, "Headers kernels see"). Even
     * when offered, a header the caller provides (in `headers` or as a file
     * in one of `include_dirs`) of the same name wins over the built-in one. */
    bool no_std_headers;
    /* Do not pass NVRTC -default-device (docs/library.md, "Headers kernels see"). */
    bool no_default_device;
    /* Headers from a bundle (asyncrt/bundle.h), given to NVRTC in memory;
     * the toolkit is then not searched, so a header the bundle lacks is an
     * error naming it, unless toolkit_with_bundle also lets the toolkit's
     * copy be found. The `headers` above win over the bundle's. */
    const asyncrt_bundle *bundle;
    bool toolkit_with_bundle;
    /* The program will be loaded on ctx's device: a target its driver cannot
     * load is ASYNCRT_ERROR_VERSION_MISMATCH before anything is compiled, as
     * asyncrt_module_build does (asyncrt-run). */
    bool for_load;
    /* Told each phase of this compile (the cache lookup, NVRTC, and with
     * asyncrt_module_build the load), with progress_user; NULL: nothing is
     * told. Neither is part of the cache key, nor sent to a compile worker. */
    asyncrt_progress_fn progress;
    void *progress_user;
} asyncrt_compile_options;
#define ASYNCRT_COMPILE_OPTIONS_INIT ASYNCRT_SIZED_INIT(asyncrt_compile_options)

typedef enum asyncrt_program_origin {
    ASYNCRT_ORIGIN_COMPILED = 0,  /* NVRTC ran */
    ASYNCRT_ORIGIN_MEMORY_CACHE,  /* found in this context's cache */
    ASYNCRT_ORIGIN_DISK_CACHE,    /* read from the cache directory */
    ASYNCRT_ORIGIN_REMOTE_CACHE,  /* fetched from the remote cache, verified, stored locally */
    ASYNCRT_ORIGIN_IMAGE          /* bytes the caller gave (asyncrt_program_from_image) */
} asyncrt_program_origin;

/* Compiles `source` (named `source_name` in messages). opts may be NULL
 * (the defaults); a size below its first layout is
 * ASYNCRT_ERROR_INVALID_ARGUMENT naming the rule.
 * A compile error gives ASYNCRT_ERROR_COMPILE with NVRTC's full log in the
 * context's message. <asyncrt/device.cuh> and the toolkit's headers
 * (<cuda/barrier>, <cuda/pipeline>, <cuda/ptx>, <cooperative_groups.h>) are
 * always available, and device-side <cmath>, <cstdint>, <type_traits>, ...
 * unless no_std_headers (docs/library.md, "Headers kernels see"). With arch auto, a
 * kernel that needs sm_XYa (wgmma, setmaxnreg) is retried with it once.
 * *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_program_compile(asyncrt_context *ctx, const char *source_name,
                                       const char *source, const asyncrt_compile_options *opts,
                                       asyncrt_program **out);
ASYNCRT_EXTERN void asyncrt_program_destroy(asyncrt_program *program); /* NULL is fine */

ASYNCRT_EXTERN const void *asyncrt_program_image(const asyncrt_program *program, size_t *size);
ASYNCRT_EXTERN bool asyncrt_program_is_ptx(const asyncrt_program *program);
ASYNCRT_EXTERN const char *asyncrt_program_arch(const asyncrt_program *program);  /* e.g. "sm_90", "compute_80" */
/* Why the library compiled for that arch: the rule that chose it (for "auto":
 * the device, the driver and NVRTC; for a named target: NVRTC supports it,
 * and, with a device open, whether its driver can load it),
 * and the sm_XYa retry when there was one. For people (asyncrt-run -v and
 * --json); "" when unknown, never NULL. */
ASYNCRT_EXTERN const char *asyncrt_program_arch_reason(const asyncrt_program *program);
ASYNCRT_EXTERN const char *asyncrt_program_log(const asyncrt_program *program);   /* NVRTC warnings, may be "" */
ASYNCRT_EXTERN asyncrt_program_origin asyncrt_program_origin_of(const asyncrt_program *program);
/* "compiled", "memory cache", "disk cache", "remote cache" or "image"; "unknown" for other values. Never NULL. */
ASYNCRT_EXTERN const char *asyncrt_program_origin_string(asyncrt_program_origin origin);
/* The mangled name of a registered name expression, or NULL. */
ASYNCRT_EXTERN const char *asyncrt_program_lowered_name(const asyncrt_program *program, const char *name_expression);

/* A program around bytes the caller has, as if compiled for `arch`: sm_XY[a|f]
 * takes an ELF CUBIN (nvcc -cubin), compute_XY[a|f] PTX text (a NUL is added
 * if missing). The bytes are copied; no NVRTC, no cache: origin
 * ASYNCRT_ORIGIN_IMAGE, log "", no name expressions. 
 * ASYNCRT_ERROR_INVALID_ARGUMENT naming the rule for a malformed arch or
 * bytes not of that kind. *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_program_from_image(asyncrt_context *ctx, const void *data, size_t size,
                                                         const char *arch, asyncrt_program **out);

/* ---- targets ------------------------------------------------------------ */

/* A target: sm_90 is {number 90, suffix 0, ptx false}; compute_100f is
 * {100, 'f', true}. Set .size with ASYNCRT_ARCH_INIT. */
typedef struct asyncrt_arch {
    size_t size;
    int number;   /* 90 for sm_90 */
    char suffix;  /* 0, 'a' (arch-specific) or 'f' (family-specific) */
    bool ptx;     /* compute_XY (PTX) rather than sm_XY (CUBIN) */
} asyncrt_arch;
#define ASYNCRT_ARCH_INIT ASYNCRT_SIZED_INIT(asyncrt_arch)

/* "sm_90", "sm_90a", "compute_80", "compute_100f"; false if malformed
 * ("auto" is not a target) or out's size is refused (docs/deployment.md,
 * "ABI and versioning"). */
ASYNCRT_EXTERN bool asyncrt_arch_parse(const char *text, asyncrt_arch *out);
/* "sm_90a", "compute_80" into buf; returns what snprintf would, -1 for a
 * refused size. */
ASYNCRT_EXTERN int asyncrt_arch_format(const asyncrt_arch *arch, char *buf, size_t size);
/* This process's NVRTC's targets (nvrtcGetSupportedArchs), ascending: at most
 * `capacity` into out, *count the number NVRTC has. ASYNCRT_ERROR_NO_NVRTC
 * when none opens. */
ASYNCRT_EXTERN asyncrt_status asyncrt_nvrtc_supported_archs(int *out, size_t capacity, size_t *count);
/* The "auto" rule for a device of cc_major.cc_minor under driver_version
 * (13000) with this process's NVRTC, for a machine other than this one
 * (asyncrt-probe's table). `why` gets the rule's sentence, also on
 * ASYNCRT_ERROR_VERSION_MISMATCH and ASYNCRT_ERROR_UNSUPPORTED_ARCH;
 * ASYNCRT_ERROR_NO_NVRTC when none opens. */
ASYNCRT_EXTERN asyncrt_status asyncrt_arch_auto(int cc_major, int cc_minor, int driver_version, asyncrt_arch *out,
                                                char *why, size_t why_size);
/* Could ctx's device load a program for `arch`? ASYNCRT_SUCCESS (also with
 * no device open, or for NULL or "auto"), ASYNCRT_ERROR_VERSION_MISMATCH
 * with the rule's sentence, ASYNCRT_ERROR_INVALID_ARGUMENT if malformed.
 * Waits for a device being opened. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_check_target(asyncrt_context *ctx, const char *arch);

/* ---- the NVRTC search (docs/platform.md, "Finding NVRTC") ------------------------- */

typedef struct asyncrt_nvrtc_info {
    size_t size;             /* ASYNCRT_NVRTC_INFO_INIT */
    size_t candidate_count;  /* every NVRTC the search found (stat and readdir only) */
    int chosen;              /* index of the one used, -1: none */
    const char *why;         /* why that one; or why none, naming every place looked at */
    const char *searched;    /* the places, in order */
    int version;             /* once opened: 13000; 0 otherwise */
    const char *path;        /* once opened: the file; NULL otherwise */
} asyncrt_nvrtc_info;
#define ASYNCRT_NVRTC_INFO_INIT ASYNCRT_SIZED_INIT(asyncrt_nvrtc_info)

typedef struct asyncrt_nvrtc_candidate {
    size_t size;               /* ASYNCRT_NVRTC_CANDIDATE_INIT */
    const char *path;          /* a file, or a bare soname for the dynamic loader */
    const char *version;       /* "13.0.88", "13.0", or "unknown" */
    const char *found_by;      /* the search step that found it, e.g. "$CUDA_PATH" */
    const char *version_from;  /* what told the version; "" for the file's own name */
} asyncrt_nvrtc_candidate;
#define ASYNCRT_NVRTC_CANDIDATE_INIT ASYNCRT_SIZED_INIT(asyncrt_nvrtc_candidate)

/* The process's NVRTC search (made once per process). open: open it now, and
 * ASYNCRT_ERROR_NO_NVRTC with why (in out->why) when it cannot; otherwise stat
 * only, as a cache hit does. Strings live as long as the process.
 * ASYNCRT_ERROR_INVALID_ARGUMENT for a refused size. */
ASYNCRT_EXTERN asyncrt_status asyncrt_nvrtc_info_get(bool open, asyncrt_nvrtc_info *out);
/* Candidate `index` of the search; ASYNCRT_ERROR_INVALID_ARGUMENT past
 * candidate_count or for a refused size. Strings live as long as the process. */
ASYNCRT_EXTERN asyncrt_status asyncrt_nvrtc_candidate_get(size_t index, asyncrt_nvrtc_candidate *out);

/* ---- settings and the driver, as the context has them ------------------ */

/* One of the library's variables (docs/library.md, "Environment") as ctx read it at its
 * creation or as set below; *value NULL when unset. INVALID_ARGUMENT for a
 * name the library does not read. The string lives until ctx is destroyed
 * or that setting is set again. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_setting(const asyncrt_context *ctx, const char *name,
                                                      const char **value);
/* As if `name` had been `value` (NULL: unset) when ctx was created, for ctx
 * alone: no setenv, no other context sees it. Must not overlap other calls on
 * ctx (like set_cache_dir); read where the library reads it next (a compile,
 * an op's creation). Variables with their own call (ASYNCRT_CACHE_DIR,
 * ASYNCRT_REMOTE_CACHE, ASYNCRT_REMOTE_CACHE_KEY_FILE) are INVALID_ARGUMENT,
 * naming that call. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_set_setting(asyncrt_context *ctx, const char *name, const char *value);

/* The driver's entry point `name` at ABI `cuda_version` (cuGetProcAddress),
 * from the libcuda the context opened ($ASYNCRT_LIBCUDA included), for a
 * caller who calls the driver beside the library. ASYNCRT_ERROR_NO_DRIVER,
 * or ASYNCRT_ERROR_NOT_FOUND naming the symbol. *fn is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_driver_proc(asyncrt_context *ctx, const char *name, int cuda_version,
                                                          void **fn);

/* How a program's image was made (README: "Compact images"). */
typedef struct asyncrt_program_image_info {
    /* Set it with ASYNCRT_PROGRAM_IMAGE_INFO_INIT (or .size = sizeof(asyncrt_program_image_info)): the
     * library writes only the fields this size covers (README, "ABI and versioning"). */
    size_t size;
    bool compact;             /* the compact image: NVRTC's program without its unused library
                                 globals, proven the same program as NVRTC's own image */
    size_t image_bytes;       /* the image's size (asyncrt_program_image) */
    size_t nvrtc_image_bytes; /* NVRTC's own image of that compile: image_bytes unless compact; 0 unknown */
    char reason[768];         /* why the image is the compact one or NVRTC's: compact images off
                                 (and why), nothing to remove, not proven (the first difference)...;
                                 "" where not recorded (PTX, LTO-IR, a link, an older cache entry) */
} asyncrt_program_image_info;
#define ASYNCRT_PROGRAM_IMAGE_INFO_INIT ASYNCRT_SIZED_INIT(asyncrt_program_image_info)
/* Fills *out for `program`; with program NULL, for the context's next CUBIN
 * compile (compact: whether compact images are on with a usable
 * nvPTXCompiler; reason: "compact images on: nvPTXCompiler V (path)" or why
 * they are off; the sizes 0). A size below the first layout is
 * ASYNCRT_ERROR_INVALID_ARGUMENT, with ctx's message saying why. Leaves the
 * last error alone unless it fails. */
ASYNCRT_EXTERN asyncrt_status asyncrt_program_image_info_of(asyncrt_context *ctx, const asyncrt_program *program,
                                                            asyncrt_program_image_info *out);

/* ---- modules and kernels ------------------------------------------------ */

/* Loads a program on the opened device: a CUBIN from the library the context
 * and its peers share (cuLibraryLoadData once per image, then this device's
 * module of it), PTX (or any image, on a driver without cuLibrary*) with
 * cuModuleLoadDataEx; a rejected image gives ASYNCRT_ERROR_MODULE_LOAD with
 * the driver's reason (and, for cuModuleLoadDataEx, its JIT log). PTX the
 * driver cannot take (made by an NVRTC newer than the driver) is
 * ASYNCRT_ERROR_VERSION_MISMATCH before the driver is asked, naming both
 * versions and what to do (docs/library.md: arch selection). *out is NULL on
 * failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_module_load(asyncrt_context *ctx, const asyncrt_program *program,
                                   asyncrt_module **out);
/* Compile and load in one step; a target the driver cannot load is
 * ASYNCRT_ERROR_VERSION_MISMATCH before anything is compiled. *out is NULL
 * on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_module_build(asyncrt_context *ctx, const char *source_name,
                                    const char *source, const asyncrt_compile_options *opts,
                                    asyncrt_module **out);
ASYNCRT_EXTERN void asyncrt_module_destroy(asyncrt_module *module); /* NULL is fine */

/* `name` is an extern "C" name or one of the program's name expressions.
 * The kernel stays owned by the module. *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_module_get_kernel(asyncrt_module *module, const char *name,
                                         asyncrt_kernel **out);

/* The kernel's parameter sizes from cuFuncGetParamInfo. *count is set to the
 * number of parameters; at most `capacity` sizes are written. Returns
 * ASYNCRT_ERROR_UNSUPPORTED where the driver lacks cuFuncGetParamInfo. */
ASYNCRT_EXTERN asyncrt_status asyncrt_kernel_param_sizes(asyncrt_kernel *kernel, size_t *sizes, size_t capacity,
                                          size_t *count);

/* What the driver says a loaded kernel uses (cuFuncGetAttribute); a field
 * the driver cannot give is -1. */
typedef struct asyncrt_kernel_resources {
    /* Set it with ASYNCRT_KERNEL_RESOURCES_INIT (or .size = sizeof(asyncrt_kernel_resources)): the
     * library writes only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
    int registers;            /* per thread */
    int static_shared_bytes;  /* __shared__ arrays; dynamic shared memory is the launch's */
    int local_bytes;          /* per thread: spills and stack */
    int max_threads;          /* the most threads a block of this kernel may have */
} asyncrt_kernel_resources;
#define ASYNCRT_KERNEL_RESOURCES_INIT ASYNCRT_SIZED_INIT(asyncrt_kernel_resources)
ASYNCRT_EXTERN asyncrt_status asyncrt_kernel_resources_of(const asyncrt_kernel *kernel, asyncrt_kernel_resources *out);

/* The CUfunction behind a kernel, for callers who use the driver directly. */
ASYNCRT_EXTERN void *asyncrt_kernel_function(const asyncrt_kernel *kernel);

typedef struct asyncrt_launch_config {
    /* Set it with ASYNCRT_LAUNCH_CONFIG_INIT (or .size = sizeof(asyncrt_launch_config)): the
     * library reads only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
    unsigned grid[3];      /* a 0 in y or z is taken as 1 */
    unsigned block[3];
    /* Thread block cluster (sm_90+; all 0: no cluster). Each grid dimension
     * must be a multiple of the cluster's. Before launching, the shape is
     * checked with cuOccupancyMaxActiveClusters: one that cannot be resident
     * (too many blocks, threads or shared memory per cluster) is
     * ASYNCRT_ERROR_RESOURCE_LIMIT naming the limit, not a hang or a launch
     * failure. Clusters above 8 blocks (non-portable, up to 16 on the H100)
     * are allowed for you. */
    unsigned cluster[3];
    size_t shared_bytes;   /* dynamic shared memory; above 48 KiB the limit is raised for you */
    asyncrt_stream stream;
    /* ---- The first layout ends here. Fields added later: a caller whose
     * size stops short of one gets zero, its default. */
    /* Cooperative launch (CU_LAUNCH_ATTRIBUTE_COOPERATIVE), for kernels that
     * sync the whole grid (cooperative_groups::this_grid().sync()). Needs
     * CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH (sm_60+), else
     * ASYNCRT_ERROR_UNSUPPORTED. Every block must be resident at once: a grid
     * above cuOccupancyMaxActiveBlocksPerMultiprocessor x SM count (computed
     * with this block size and dynamic shared memory; with a cluster,
     * cuOccupancyMaxActiveClusters x cluster size) is
     * ASYNCRT_ERROR_RESOURCE_LIMIT before anything is launched. */
    bool cooperative;
    /* Programmatic dependent launch
     * (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION): this kernel
     * may start before the previous kernel in its stream finishes; it must
     * wait for that kernel's results with the PTX griddepcontrol.wait (NVRTC
     * lacks cudaGridDependencySynchronize), and the previous kernel may
     * release it early with griddepcontrol.launch_dependents. sm_90+, else
     * ASYNCRT_ERROR_UNSUPPORTED. */
    bool programmatic_serialization;
} asyncrt_launch_config;
#define ASYNCRT_LAUNCH_CONFIG_INIT ASYNCRT_SIZED_INIT(asyncrt_launch_config)

/* Launches with cuLaunchKernelEx. args[i] points at the value of parameter i.
 * When arg_sizes is not NULL and the driver has cuFuncGetParamInfo, the count
 * and sizes are checked first (ASYNCRT_ERROR_ARGUMENT_MISMATCH). A block of
 * more threads than the device allows, or whose x*y*z overflows, is
 * ASYNCRT_ERROR_RESOURCE_LIMIT. */
ASYNCRT_EXTERN asyncrt_status asyncrt_kernel_launch(asyncrt_kernel *kernel, const asyncrt_launch_config *config,
                                     void **args, const size_t *arg_sizes, size_t arg_count);

/* ---- start-up: device opening and batches of builds ---------------------- */

/* Starts opening device `ordinal` (driver load, cuInit, primary context) on
 * another thread and returns at once. Every call that needs the device waits
 * for it; asyncrt_context_wait_device gives the open's own result. Meanwhile
 * a compile for arch "auto" starts on the target this cache directory last
 * saw for this ordinal on this host (see docs/library.md: start-up) and checks it once
 * the device is known: a wrong guess costs a recompile, never a wrong image. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_open_device_async(asyncrt_context *ctx, int ordinal);
/* The result of open_device_async (ASYNCRT_SUCCESS if it was not used). */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_wait_device(asyncrt_context *ctx);

/* One program of a batch: the inputs, then what asyncrt_build_batch fills.
 * An element of an array: its layout is frozen. */
typedef struct asyncrt_build_request {
    const char *source_name;               /* as for asyncrt_program_compile */
    const char *source;
    const asyncrt_compile_options *opts;   /* may be NULL */
    /* out: */
    asyncrt_program *program;  /* the compiled program on success; the caller owns it */
    asyncrt_module *module;    /* loaded on the context's device when `load`; the caller owns it */
    asyncrt_status status;     /* this request's own result */
    char *message;             /* its failure's details (NVRTC log, ...), NULL on success */
} asyncrt_build_request;

/* Compiles (and with `load`, loads) reqs[0..count) concurrently on up to
 * `threads` threads (0: the CPU count), each request with its own status and
 * message. Requests with the same source_name, source and opts pointer are
 * built once and shared (each gets its own program copy and module). The
 * calling thread works too. NVRTC runs one compile at a time per process, so
 * with a usable disk cache, two or more cache misses are compiled by up to
 * `threads` asyncrt-compile-worker processes into that cache and read back
 * through it: the worker installed beside the library (libexec/asyncrt), or
 * the one ASYNCRT_COMPILE_WORKER names ("0" keeps everything in this
 * process), if nobody else can write it (docs/library.md, "Threads, batches and
 * start-up"); a worker that fails or is refused costs time, never a result
 * (the request is compiled here). With `load`, a request whose target the
 * driver cannot load is ASYNCRT_ERROR_VERSION_MISMATCH, compiled by no one. Returns ASYNCRT_SUCCESS when every request
 * succeeded, else the status of the first failed request (lowest index), with
 * a summary in the context's last error. The output fields of each request
 * are overwritten: free them from an earlier batch first. */
ASYNCRT_EXTERN asyncrt_status asyncrt_build_batch(asyncrt_context *ctx, asyncrt_build_request *reqs, size_t count,
                                   unsigned threads, bool load);

/* Frees each request's program and message and sets them to NULL; modules
 * are left to the caller (asyncrt_module_destroy). NULL reqs is fine. */
ASYNCRT_EXTERN void asyncrt_build_batch_release(asyncrt_build_request *reqs, size_t count);

/* ---- memory, streams, timing ------------------------------------------- */

ASYNCRT_EXTERN asyncrt_status asyncrt_memory_alloc(asyncrt_context *ctx, size_t bytes, asyncrt_deviceptr *out);
ASYNCRT_EXTERN asyncrt_status asyncrt_memory_free(asyncrt_context *ctx, asyncrt_deviceptr ptr); /* 0 is fine */
ASYNCRT_EXTERN asyncrt_status asyncrt_memory_to_device(asyncrt_context *ctx, asyncrt_deviceptr dst,
                                        const void *src, size_t bytes);
ASYNCRT_EXTERN asyncrt_status asyncrt_memory_to_host(asyncrt_context *ctx, void *dst, asyncrt_deviceptr src,
                                      size_t bytes);
ASYNCRT_EXTERN asyncrt_status asyncrt_memory_copy(asyncrt_context *ctx, asyncrt_deviceptr dst,
                                   asyncrt_deviceptr src, size_t bytes, asyncrt_stream stream);
ASYNCRT_EXTERN asyncrt_status asyncrt_memory_fill(asyncrt_context *ctx, asyncrt_deviceptr dst, uint8_t byte,
                                   size_t bytes, asyncrt_stream stream);

/* Waits for all work on the device; a fault in a kernel surfaces here. */
ASYNCRT_EXTERN asyncrt_status asyncrt_synchronize(asyncrt_context *ctx);
/* A non-blocking stream; *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_stream_create(asyncrt_context *ctx, asyncrt_stream *out);
ASYNCRT_EXTERN asyncrt_status asyncrt_stream_destroy(asyncrt_context *ctx, asyncrt_stream stream);
ASYNCRT_EXTERN asyncrt_status asyncrt_stream_synchronize(asyncrt_context *ctx, asyncrt_stream stream);

/* Stream priorities (cuCtxGetStreamPriorityRange): lower numbers are higher
 * priorities; *least is the default (0) and *greatest the most urgent (e.g.
 * -5 on the H100). Devices without priorities give 0 and 0. */
ASYNCRT_EXTERN asyncrt_status asyncrt_stream_priority_range(asyncrt_context *ctx, int *least, int *greatest);
/* A non-blocking stream of `priority`, which must lie in the range above
 * (ASYNCRT_ERROR_INVALID_ARGUMENT otherwise, where the driver would clamp it
 * silently). Destroy it with asyncrt_stream_destroy. *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_stream_create_with_priority(asyncrt_context *ctx, int priority,
                                                   asyncrt_stream *out);

/* *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_timer_create(asyncrt_context *ctx, asyncrt_timer **out);
ASYNCRT_EXTERN void asyncrt_timer_destroy(asyncrt_timer *timer); /* NULL is fine */
ASYNCRT_EXTERN asyncrt_status asyncrt_timer_start(asyncrt_timer *timer, asyncrt_stream stream);
ASYNCRT_EXTERN asyncrt_status asyncrt_timer_stop(asyncrt_timer *timer, asyncrt_stream stream);
/* Waits for the stop event, then gives the time between the two. */
ASYNCRT_EXTERN asyncrt_status asyncrt_timer_elapsed_ms(asyncrt_timer *timer, float *ms);

#ifdef __cplusplus
}
#endif

/* The cache's calls were declared here before asyncrt/cache.h held them: a
 * program that includes only this header still sees them. */
#include "asyncrt/cache.h"
#endif
