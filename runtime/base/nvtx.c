/* NVTX v3 (NVIDIA's header-only C API): nvtxDomainRangePushEx and friends
 * call through pointers that start at an initialiser; the first call looks
 * for an injection library (NVTX_INJECTION64_PATH, what nsys sets) and, with
 * none, points them at no-ops. We go further and skip even the formatting
 * unless the variable is set, and never let the environment name a library
 * to load in a set-uid process (settings.h's rule). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "nvtx.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "settings.h"

#if ASYNCRT_NVTX
#include <nvtx3/nvToolsExt.h>

static nvtxDomainHandle_t g_domain;
static bool g_on;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void decide(void)
{
    /* a tool injects through the variable (nsys) or a preloaded library
     * exporting NVTX's pre-injection entry point */
    const char *inject = getenv("NVTX_INJECTION64_PATH");
    bool injected = (inject && *inject) || dlsym(RTLD_DEFAULT, "InitializeInjectionNvtx2Preinject");
    g_on = injected && !asyncrt__settings_secure();
    if (g_on) g_domain = nvtxDomainCreateA("asyncrt");
}

bool asyncrt__nvtx_on(void)
{
    pthread_once(&g_once, decide);
    return g_on;
}

/* ARGB, one per kind: compile blue, cache green, link purple, load orange, launch red. */
static const uint32_t k_colours[] = {0xFF1F77B4u, 0xFF2CA02Cu, 0xFF9467BDu, 0xFFFF7F0Eu, 0xFFD62728u};

static nvtxEventAttributes_t attributes(asyncrt_range_kind kind, const char *message)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = (uint32_t)kind + 1;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = k_colours[(unsigned)kind < 5 ? kind : 0];
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = message;
    return a;
}

/* A range's start or a mark, with its message formatted from ap. */
static void emit(asyncrt_range_kind kind, bool mark, const char *fmt, va_list ap) ASYNCRT_PRINTF(3, 0);
static void emit(asyncrt_range_kind kind, bool mark, const char *fmt, va_list ap)
{
    char message[256];
    vsnprintf(message, sizeof message, fmt, ap);
    nvtxEventAttributes_t a = attributes(kind, message);
    if (mark) nvtxDomainMarkEx(g_domain, &a);
    else nvtxDomainRangePushEx(g_domain, &a);
}

void asyncrt__range_push(asyncrt_range_kind kind, const char *fmt, ...)
{
    if (!asyncrt__nvtx_on()) return;
    va_list ap;
    va_start(ap, fmt);
    emit(kind, false, fmt, ap);
    va_end(ap);
}

void asyncrt__range_pop(void)
{
    if (asyncrt__nvtx_on()) nvtxDomainRangePop(g_domain);
}

void asyncrt__range_mark(asyncrt_range_kind kind, const char *fmt, ...)
{
    if (!asyncrt__nvtx_on()) return;
    va_list ap;
    va_start(ap, fmt);
    emit(kind, true, fmt, ap);
    va_end(ap);
}

#else /* built without NVTX headers: nothing to record */
bool asyncrt__nvtx_on(void) { return false; }
void asyncrt__range_push(asyncrt_range_kind kind, const char *fmt, ...) { (void)kind, (void)fmt; }
void asyncrt__range_pop(void) {}
void asyncrt__range_mark(asyncrt_range_kind kind, const char *fmt, ...) { (void)kind, (void)fmt; }
#endif
