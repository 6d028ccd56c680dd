#include "driver.h"
#include "format.h" /* ASYNCRT_PRINTF */
#include "settings.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static asyncrt_driver g_driver;
static asyncrt_status g_status;
static char g_message[512];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Records why the driver cannot be used (every later asyncrt__driver_load
 * reports it) and drops what was loaded. */
static void fail(asyncrt_status status, const char *fmt, ...) ASYNCRT_PRINTF(2, 3);
static void fail(asyncrt_status status, const char *fmt, ...)
{
    g_status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_message, sizeof g_message, fmt, ap);
    va_end(ap);
    if (g_driver.handle) dlclose(g_driver.handle);
    memset(&g_driver, 0, sizeof g_driver);
}

static void load_once(void)
{
    const asyncrt_settings *env = asyncrt__settings_process();
    const char *path = env ? env->libcuda : NULL;
    if (!path || !*path) path = "libcuda.so.1";

    g_driver.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!g_driver.handle) {
        const char *why = dlerror();
        fail(ASYNCRT_ERROR_NO_DRIVER, "no CUDA driver: cannot open %s (%s)", path, why ? why : "?");
        return;
    }
    /* cuInit first, through dlsym: on the toolkit's stub library every call
     * returns CUDA_ERROR_STUB_LIBRARY, which must read as "no driver". */
    PFN_cuInit_v2000 init = (PFN_cuInit_v2000)dlsym(g_driver.handle, "cuInit");
    if (!init) {
        fail(ASYNCRT_ERROR_NO_DRIVER, "no CUDA driver: %s is not a CUDA driver library (it lacks cuInit)", path);
        return;
    }
    CUresult r = init(0);
    if (r == CUDA_ERROR_STUB_LIBRARY) {
        fail(ASYNCRT_ERROR_NO_DRIVER,
             "no CUDA driver: %s is the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY)", path);
        return;
    }
    if (r == CUDA_ERROR_NO_DEVICE) {
        fail(ASYNCRT_ERROR_NO_DEVICE, "CUDA driver %s found no device (CUDA_ERROR_NO_DEVICE)", path);
        return;
    }
    if (r != CUDA_SUCCESS) {
        /* cuGetErrorName works before a successful cuInit; name the result. */
        const char *name = NULL;
        PFN_cuGetErrorName_v6000 error_name = (PFN_cuGetErrorName_v6000)dlsym(g_driver.handle, "cuGetErrorName");
        if (!error_name || error_name(r, &name) != CUDA_SUCCESS) name = NULL;
        fail(ASYNCRT_ERROR_NO_DRIVER, "CUDA driver %s: cuInit failed with CUresult %d%s%s%s", path, (int)r,
             name ? " (" : "", name ? name : "", name ? ")" : "");
        return;
    }

    PFN_cuGetProcAddress_v12000 get_proc =
        (PFN_cuGetProcAddress_v12000)dlsym(g_driver.handle, "cuGetProcAddress_v2");
    if (!get_proc) {
        fail(ASYNCRT_ERROR_NO_DRIVER,
             "CUDA driver %s is too old: it lacks cuGetProcAddress_v2 (CUDA 12.0 or newer needed)", path);
        return;
    }

    g_driver.cuGetProcAddress = get_proc;
    CUdriverProcAddressQueryResult found;
#define ASYNCRT_DRIVER_RESOLVE(name, ver)                                                     \
    if (get_proc(#name, (void **)&g_driver.name, ver, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=  \
            CUDA_SUCCESS || !g_driver.name) {                                                 \
        fail(ASYNCRT_ERROR_NO_DRIVER, "CUDA driver %s lacks %s (needed at CUDA " #ver " ABI)", \
             path, #name);                                                                    \
        return;                                                                               \
    }
    ASYNCRT_DRIVER_FUNCTIONS(ASYNCRT_DRIVER_RESOLVE)
#undef ASYNCRT_DRIVER_RESOLVE
#define ASYNCRT_DRIVER_RESOLVE_OPTIONAL(name, ver)                                            \
    if (get_proc(#name, (void **)&g_driver.name, ver, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=  \
        CUDA_SUCCESS)                                                                         \
        g_driver.name = NULL;
    ASYNCRT_DRIVER_OPTIONAL_FUNCTIONS(ASYNCRT_DRIVER_RESOLVE_OPTIONAL)
#undef ASYNCRT_DRIVER_RESOLVE_OPTIONAL

    if (g_driver.cuDriverGetVersion(&g_driver.version) != CUDA_SUCCESS) {
        fail(ASYNCRT_ERROR_NO_DRIVER, "CUDA driver %s: cuDriverGetVersion failed", path);
        return;
    }
    g_status = ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__driver_load(const asyncrt_driver **out, char *msg, size_t msg_size)
{
    pthread_once(&g_once, load_once);
    if (g_status != ASYNCRT_SUCCESS) {
        if (msg && msg_size) snprintf(msg, msg_size, "%s", g_message);
        *out = NULL;
        return g_status;
    }
    *out = &g_driver;
    return ASYNCRT_SUCCESS;
}

void asyncrt__driver_describe(const asyncrt_driver *drv, CUresult result, char *buf, size_t size)
{
    const char *name = NULL, *text = NULL;
    if (drv && drv->cuGetErrorName) drv->cuGetErrorName(result, &name);
    if (drv && drv->cuGetErrorString) drv->cuGetErrorString(result, &text);
    if (name)
        snprintf(buf, size, "%s (%s)", name, text ? text : "no description");
    else
        snprintf(buf, size, "CUresult %d", (int)result);
}
