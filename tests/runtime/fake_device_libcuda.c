/* A stand-in libcuda with one device (compute capability $FAKE_CC, default
 * 90) behind a driver of $FAKE_DRIVER_VERSION (default 13000, CUDA 13.0),
 * enough to open it, "load" modules and count the loads, so that thread
 * safety, the asynchronous device open and the arch rule run on machines
 * without a GPU.
 * Opening can be held at a gate (fake_gate_hold / fake_gate_release, looked
 * up with dlsym by the tests) to make "the device is still opening"
 * deterministic. $FAKE_FAIL names one entry point (e.g. cuDeviceGetName)
 * that fails with CUDA_ERROR_NOT_SUPPORTED, to reach a tool's "a driver call
 * failed" exit code. Nothing here runs a kernel: cuLaunchKernelEx fails, but
 * first keeps what it was asked (fake_last_launch), so that a test sees what
 * the library made of a launch config (tests/abi).
 * Stream capture as the real driver does it: cuStreamBeginCapture makes a
 * stream capture; a module load, or a lazy function load (a launch or an
 * attribute query of a function not cuFuncLoad-ed, under
 * CUDA_MODULE_LOADING=LAZY, the default here; $FAKE_LOADING=eager turns it
 * off), invalidates the capture and fails; a launch of a loaded function is
 * captured (succeeds). fake_capture_state and fake_function_loads tell the
 * tests (tests/runtime/test_capture.c).
 * Many GPUs: $FAKE_DEVICES devices (default 1), device 1 and up of compute
 * capability $FAKE_CC1 (default $FAKE_CC); context-independent loading
 * (cuLibrary*, counted by fake_library_loads; fake_module_loads counts the
 * modules made on a device, from an image or a library) unless
 * $FAKE_NO_LIBRARY is set; every pair of devices peers; stream 0x1000 + N
 * (made up by a test) is device N's. With $FAKE_RUNS set, memory is host
 * memory (a device pointer is a malloc'd address), copies and fills are
 * memcpy/memset, and a launch succeeds doing nothing: enough for a tool's
 * whole run (asyncrt-run --devices all) without a GPU. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { OK = 0, UNSUPPORTED = 801 /* CUDA_ERROR_NOT_SUPPORTED */, NOT_FOUND = 500 };

CUresult cuInit(unsigned flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                             int *status);
void fake_gate_hold(void);
void fake_gate_release(void);
int fake_module_loads(void);
int fake_library_loads(void);
int fake_last_launch(unsigned grid[3], unsigned block[3], unsigned *shared_bytes, unsigned *attrs);
int fake_capture_state(void);
int fake_function_loads(void);

static pthread_mutex_t g_gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_gate_open = PTHREAD_COND_INITIALIZER;
static int g_gate_held;
static atomic_int g_loads;
static atomic_int g_library_loads;

void fake_gate_hold(void)
{
    pthread_mutex_lock(&g_gate_lock);
    g_gate_held = 1;
    pthread_mutex_unlock(&g_gate_lock);
}

void fake_gate_release(void)
{
    pthread_mutex_lock(&g_gate_lock);
    g_gate_held = 0;
    pthread_cond_broadcast(&g_gate_open);
    pthread_mutex_unlock(&g_gate_lock);
}

int fake_module_loads(void) { return atomic_load(&g_loads); }
int fake_library_loads(void) { return atomic_load(&g_library_loads); }

static int devices(void)
{
    const char *n = getenv("FAKE_DEVICES");
    return n ? atoi(n) : 1;
}

/* CUlaunchConfig's layout (cuda.h, CUDA 12 and 13), without cuda.h. */
typedef struct launch_config {
    unsigned grid[3], block[3], shared_bytes;
    void *stream, *attrs;
    unsigned attr_count;
} launch_config;
static pthread_mutex_t g_launch_lock = PTHREAD_MUTEX_INITIALIZER;
static launch_config g_last_launch;
static int g_launches;

/* The last launch's grid, block, dynamic shared memory and attribute count;
 * returns how many launches were asked for. */
int fake_last_launch(unsigned grid[3], unsigned block[3], unsigned *shared_bytes, unsigned *attrs)
{
    pthread_mutex_lock(&g_launch_lock);
    for (int i = 0; i < 3; i++) {
        grid[i] = g_last_launch.grid[i];
        block[i] = g_last_launch.block[i];
    }
    *shared_bytes = g_last_launch.shared_bytes;
    *attrs = g_last_launch.attr_count;
    int n = g_launches;
    pthread_mutex_unlock(&g_launch_lock);
    return n;
}

/* ---- stream capture: one capturing stream at a time ---- */
enum { CAPTURE_NONE = 0, CAPTURE_ACTIVE = 1, CAPTURE_INVALIDATED = 2, FUNCTIONS = 2 };
static pthread_mutex_t g_capture_lock = PTHREAD_MUTEX_INITIALIZER;
static void *g_capture_stream;
static int g_capture = CAPTURE_NONE;
static int g_function_loaded[FUNCTIONS]; /* functions 0x2 and 0x3 of the last module */
static atomic_int g_function_loads;

/* The capture's state: 0 none, 1 capturing, 2 invalidated. */
int fake_capture_state(void)
{
    pthread_mutex_lock(&g_capture_lock);
    int c = g_capture;
    pthread_mutex_unlock(&g_capture_lock);
    return c;
}
int fake_function_loads(void) { return atomic_load(&g_function_loads); }

static int lazy(void)
{
    const char *mode = getenv("FAKE_LOADING");
    return !mode || strcmp(mode, "eager") != 0;
}
/* A module or function load: during a capture it invalidates the capture
 * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED). Returns the result to give. */
static CUresult load_under_capture(void)
{
    pthread_mutex_lock(&g_capture_lock);
    int capturing = g_capture == CAPTURE_ACTIVE;
    if (capturing) g_capture = CAPTURE_INVALIDATED;
    pthread_mutex_unlock(&g_capture_lock);
    return capturing ? 900 : OK;
}
/* A function used: lazily loaded first, which a capture does not survive. */
static CUresult use_function(void *f)
{
    size_t i = (size_t)((char *)f - (char *)0x2);
    if (i >= FUNCTIONS || !lazy() || g_function_loaded[i]) return OK;
    CUresult r = load_under_capture();
    if (r == OK) g_function_loaded[i] = 1;
    return r;
}
static CUresult capture_info(void *stream, int *status, void *id, void *graph, void *deps, void *edges, void *n)
{
    (void)id, (void)graph, (void)deps, (void)edges, (void)n;
    pthread_mutex_lock(&g_capture_lock);
    *status = stream && stream == g_capture_stream ? g_capture : CAPTURE_NONE;
    pthread_mutex_unlock(&g_capture_lock);
    return OK;
}
static CUresult begin_capture(void *stream, int mode)
{
    (void)mode;
    pthread_mutex_lock(&g_capture_lock);
    CUresult r = g_capture != CAPTURE_NONE || !stream ? 1 : OK;
    if (r == OK) g_capture_stream = stream, g_capture = CAPTURE_ACTIVE;
    pthread_mutex_unlock(&g_capture_lock);
    return r;
}
static CUresult end_capture(void *stream, void **graph)
{
    pthread_mutex_lock(&g_capture_lock);
    CUresult r = stream != g_capture_stream ? 1 : g_capture == CAPTURE_INVALIDATED ? 901 : OK;
    if (stream == g_capture_stream) g_capture_stream = NULL, g_capture = CAPTURE_NONE;
    pthread_mutex_unlock(&g_capture_lock);
    *graph = r == OK ? malloc(1) : NULL;
    return r == OK && !*graph ? 2 : r;
}
static CUresult graph_instantiate(void **exec, void *graph, unsigned long long flags)
{
    (void)flags;
    *exec = graph ? malloc(1) : NULL;
    return *exec ? OK : 1;
}
static CUresult graph_free(void *g) { free(g); return OK; }
static CUresult graph_launch(void *exec, void *stream) { (void)stream; return exec ? OK : 1; }
static CUresult stream_create(void **stream, unsigned flags) { (void)flags; *stream = malloc(1); return *stream ? OK : 2; }
static CUresult loading_mode(int *mode) { *mode = lazy() ? 2 : 1; return OK; }
static CUresult function_count(unsigned *n, void *module) { *n = module ? FUNCTIONS : 0; return module ? OK : 1; }
static CUresult enumerate_functions(void **fs, unsigned n, void *module)
{
    if (!module || n != FUNCTIONS) return 1;
    for (unsigned i = 0; i < n; i++) fs[i] = (char *)0x2 + i;
    return OK;
}
static CUresult func_load(void *f)
{
    size_t i = (size_t)((char *)f - (char *)0x2);
    if (i >= FUNCTIONS) return 1;
    CUresult r = load_under_capture();
    if (r == OK && !g_function_loaded[i]) g_function_loaded[i] = 1, atomic_fetch_add(&g_function_loads, 1);
    return r;
}
static CUresult func_is_loaded(int *state, void *f)
{
    size_t i = (size_t)((char *)f - (char *)0x2);
    if (i >= FUNCTIONS) return 1;
    *state = !lazy() || g_function_loaded[i];
    return OK;
}

CUresult cuInit(unsigned flags) { return flags ? 1 : OK; }

static CUresult driver_version(int *v)
{
    const char *version = getenv("FAKE_DRIVER_VERSION"); /* 13000 = CUDA 13.0, the default */
    *v = version ? atoi(version) : 13000;
    return OK;
}
static CUresult error_name(CUresult r, const char **s) { (void)r; *s = "FAKE_ERROR"; return OK; }
static CUresult device_count(int *n) { *n = devices(); return OK; }
static CUresult device_get(int *dev, int ordinal) { *dev = ordinal; return ordinal >= 0 && ordinal < devices() ? OK : 101; }
static CUresult device_name(char *name, int len, int dev)
{
    (void)dev;
    strncpy(name, "Fake GPU", (size_t)len);
    return OK;
}
static CUresult device_uuid(void *uuid, int dev) { (void)dev; memset(uuid, 0, 16); return OK; }
static CUresult total_mem(size_t *bytes, int dev) { (void)dev; *bytes = (size_t)80 << 30; return OK; }

static CUresult attribute(int *value, int attr, int dev)
{
    const char *cc = dev > 0 && getenv("FAKE_CC1") ? getenv("FAKE_CC1") : getenv("FAKE_CC");
    int v = cc ? atoi(cc) : 90;
    switch (attr) {
    case 75: *value = v / 10; break;            /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *value = v % 10; break;            /* MINOR */
    case 1: *value = 1024; break;               /* MAX_THREADS_PER_BLOCK */
    case 10: *value = 32; break;                /* WARP_SIZE */
    case 97: *value = 227 * 1024; break;        /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    default: *value = 1; break;
    }
    return OK;
}

/* Opening the device waits at the gate. */
static CUresult primary_retain(void **ctx, int dev)
{
    (void)dev;
    pthread_mutex_lock(&g_gate_lock);
    while (g_gate_held) pthread_cond_wait(&g_gate_open, &g_gate_lock);
    pthread_mutex_unlock(&g_gate_lock);
    *ctx = (void *)(size_t)(dev + 1); /* one per device, never NULL */
    return OK;
}
static CUresult primary_release(int dev) { (void)dev; return OK; }
static CUresult set_current(void *ctx) { return ctx ? OK : 201; }

static CUresult module_load(void **module, const void *image, unsigned n, void *keys, void *values)
{
    (void)n, (void)keys, (void)values;
    if (!image) return 1;
    CUresult captured = load_under_capture();
    if (captured != OK) return captured;
    memset(g_function_loaded, 0, sizeof g_function_loaded); /* a new module: nothing loaded yet */
    atomic_fetch_add(&g_loads, 1);
    *module = malloc(1);
    return *module ? OK : 2;
}
static CUresult module_unload(void *module) { free(module); return OK; }
static CUresult module_function(void **f, void *module, const char *name)
{
    (void)module, (void)name;
    *f = (void *)0x2;
    return OK;
}
/* A kernel with no registers, shared or local memory of its own: enough for a
 * launch to raise its dynamic shared memory. */
static CUresult func_get_attribute(int *value, int attr, void *f)
{
    (void)attr;
    *value = 0;
    return use_function(f);
}
static CUresult func_set_attribute(void *f, int attr, int value)
{
    (void)f, (void)attr, (void)value;
    return OK;
}
static CUresult unsupported(void) { return UNSUPPORTED; }

/* A library is a malloc'd byte; its module on a device, another. */
static CUresult library_load(void **lib, const void *image, void *o, void *ov, unsigned n, void *lo, void *lov,
                             unsigned ln)
{
    (void)o, (void)ov, (void)n, (void)lo, (void)lov, (void)ln;
    if (!image) return 1;
    atomic_fetch_add(&g_library_loads, 1);
    *lib = malloc(1);
    return *lib ? OK : 2;
}
static CUresult library_unload(void *lib) { free(lib); return OK; }
static CUresult library_module(void **module, void *lib)
{
    (void)lib;
    atomic_fetch_add(&g_loads, 1);
    *module = (void *)0x3;
    return OK;
}
static CUresult library_kernel(void **kernel, void *lib, const char *name)
{
    (void)lib, (void)name;
    *kernel = (void *)0x4;
    return OK;
}
static CUresult kernel_function(void **f, void *kernel)
{
    (void)kernel;
    *f = (void *)0x2;
    return OK;
}
/* Streams are made by the tests, not here: 0x1000 + N is one of device N's. */
static CUresult stream_ctx(void *stream, void **ctx)
{
    size_t s = (size_t)stream;
    if (s < 0x1000 || s >= 0x1000 + (size_t)devices()) return 400; /* CUDA_ERROR_INVALID_HANDLE */
    *ctx = (void *)(s - 0x1000 + 1);
    return OK;
}
static CUresult stream_device(void *stream, int *dev)
{
    void *ctx;
    CUresult r = stream_ctx(stream, &ctx);
    if (r == OK) *dev = (int)(size_t)ctx - 1;
    return r;
}
static CUresult can_access_peer(int *can, int dev, int peer) { *can = dev != peer; return OK; }
static CUresult p2p_attribute(int *value, int attr, int src, int dst)
{
    (void)src, (void)dst;
    *value = attr == 1 /* PERFORMANCE_RANK */ ? 0 : 1;
    return OK;
}
static CUresult launch_kernel_ex(const launch_config *config, void *f, void **params, void **extra)
{
    (void)params, (void)extra;
    CUresult loaded = use_function(f);
    if (loaded != OK) return loaded;
    pthread_mutex_lock(&g_launch_lock);
    g_last_launch = *config;
    g_launches++;
    pthread_mutex_unlock(&g_launch_lock);
    int status = CAPTURE_NONE;
    capture_info(config->stream, &status, NULL, NULL, NULL, NULL, NULL);
    if (status == CAPTURE_ACTIVE) return OK; /* captured: nothing runs yet */
    return getenv("FAKE_RUNS") ? OK : UNSUPPORTED;
}

/* $FAKE_RUNS: memory on the host. */
static CUresult mem_alloc(unsigned long long *p, size_t bytes)
{
    void *m = malloc(bytes);
    *p = (unsigned long long)(size_t)m;
    return m ? OK : 2;
}
static CUresult mem_free(unsigned long long p) { free((void *)(size_t)p); return OK; }
static CUresult mem_htod(unsigned long long dst, const void *src, size_t bytes)
{
    memcpy((void *)(size_t)dst, src, bytes);
    return OK;
}
static CUresult mem_dtoh(void *dst, unsigned long long src, size_t bytes)
{
    memcpy(dst, (const void *)(size_t)src, bytes);
    return OK;
}
static CUresult mem_dtod(unsigned long long dst, unsigned long long src, size_t bytes, void *stream)
{
    (void)stream;
    memmove((void *)(size_t)dst, (const void *)(size_t)src, bytes);
    return OK;
}
static CUresult mem_set(unsigned long long dst, unsigned char byte, size_t bytes, void *stream)
{
    (void)stream;
    memset((void *)(size_t)dst, byte, bytes);
    return OK;
}
static CUresult synchronize(void) { return OK; }

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                             int *status)
{
    (void)version, (void)flags, (void)status;
    static const struct {
        const char *name;
        void *fn;
    } table[] = {
        {"cuInit", (void *)cuInit},
        {"cuDriverGetVersion", (void *)driver_version},
        {"cuGetErrorName", (void *)error_name},
        {"cuGetErrorString", (void *)error_name},
        {"cuDeviceGetCount", (void *)device_count},
        {"cuDeviceGet", (void *)device_get},
        {"cuDeviceGetName", (void *)device_name},
        {"cuDeviceGetUuid", (void *)device_uuid},
        {"cuDeviceTotalMem", (void *)total_mem},
        {"cuDeviceGetAttribute", (void *)attribute},
        {"cuDevicePrimaryCtxRetain", (void *)primary_retain},
        {"cuDevicePrimaryCtxRelease", (void *)primary_release},
        {"cuCtxSetCurrent", (void *)set_current},
        {"cuModuleLoadDataEx", (void *)module_load},
        {"cuModuleUnload", (void *)module_unload},
        {"cuModuleGetFunction", (void *)module_function},
        {"cuFuncGetAttribute", (void *)func_get_attribute},
        {"cuFuncSetAttribute", (void *)func_set_attribute},
        {"cuLaunchKernelEx", (void *)launch_kernel_ex},
        {"cuStreamCreate", (void *)stream_create},
        {"cuStreamDestroy", (void *)graph_free},
        {"cuStreamGetCaptureInfo", (void *)capture_info},
        {"cuStreamBeginCapture", (void *)begin_capture},
        {"cuStreamEndCapture", (void *)end_capture},
        {"cuGraphInstantiateWithFlags", (void *)graph_instantiate},
        {"cuGraphLaunch", (void *)graph_launch},
        {"cuGraphExecDestroy", (void *)graph_free},
        {"cuGraphDestroy", (void *)graph_free},
        {"cuModuleGetLoadingMode", (void *)loading_mode},
        {"cuModuleGetFunctionCount", (void *)function_count},
        {"cuModuleEnumerateFunctions", (void *)enumerate_functions},
        {"cuFuncLoad", (void *)func_load},
        {"cuFuncIsLoaded", (void *)func_is_loaded},
        {"cuDeviceCanAccessPeer", (void *)can_access_peer},
        {"cuDeviceGetP2PAttribute", (void *)p2p_attribute},
        {"cuStreamGetCtx", (void *)stream_ctx},
        {"cuStreamGetDevice", (void *)stream_device},
    };
    static const struct {
        const char *name;
        void *fn;
    } library[] = {
        {"cuLibraryLoadData", (void *)library_load},
        {"cuLibraryUnload", (void *)library_unload},
        {"cuLibraryGetModule", (void *)library_module},
        {"cuLibraryGetKernel", (void *)library_kernel},
        {"cuKernelGetFunction", (void *)kernel_function},
    };
    static const struct {
        const char *name;
        void *fn;
    } runs[] = {
        {"cuMemAlloc", (void *)mem_alloc},       {"cuMemFree", (void *)mem_free},
        {"cuMemcpyHtoD", (void *)mem_htod},      {"cuMemcpyDtoH", (void *)mem_dtoh},
        {"cuMemcpyDtoDAsync", (void *)mem_dtod}, {"cuMemsetD8Async", (void *)mem_set},
        {"cuCtxSynchronize", (void *)synchronize}, {"cuStreamSynchronize", (void *)synchronize},
    };
    for (size_t i = 0; getenv("FAKE_RUNS") && i < sizeof runs / sizeof runs[0]; i++)
        if (strcmp(runs[i].name, symbol) == 0) {
            *pfn = runs[i].fn;
            return OK;
        }
    const char *fail = getenv("FAKE_FAIL");
    if (fail && strcmp(fail, symbol) == 0) {
        *pfn = (void *)unsupported;
        return OK;
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, symbol) == 0) {
            *pfn = table[i].fn;
            return OK;
        }
    for (size_t i = 0; i < sizeof library / sizeof library[0]; i++)
        if (strcmp(library[i].name, symbol) == 0) {
            *pfn = getenv("FAKE_NO_LIBRARY") ? NULL : library[i].fn;
            return *pfn ? OK : NOT_FOUND;
        }
    if (strcmp(symbol, "cuFuncGetParamInfo") == 0) {
        *pfn = NULL;
        return NOT_FOUND;
    }
    *pfn = (void *)unsupported; /* present, but fails: nothing here launches */
    return OK;
}
