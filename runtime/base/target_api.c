/* The public face of arch.h (asyncrt/runtime.h, "targets"): parsing and
 * naming targets, NVRTC's list, and the "auto" rule for any machine. The
 * caller's asyncrt_arch is read and written by its size (sized.h). */
#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "asyncrt/runtime.h"
#include "nvrtc_loader.h"
#include "sized.h"
#include "try.h"

static void to_public(const asyncrt__arch *in, asyncrt_arch *out)
{
    asyncrt_arch full = ASYNCRT_ARCH_INIT;
    full.number = in->number;
    full.suffix = in->suffix;
    full.ptx = in->ptx;
    char why[ASYNCRT_SIZED_WHY];
    asyncrt__sized_out(ASYNCRT_SIZED_ARCH, out, &full, why); /* its size was checked by the caller */
}

static bool size_ok(const asyncrt_arch *arch)
{
    asyncrt_arch full;
    char why[ASYNCRT_SIZED_WHY];
    return arch && asyncrt__sized_in(ASYNCRT_SIZED_ARCH, arch, &full, why);
}

bool asyncrt_arch_parse(const char *text, asyncrt_arch *out)
{
    asyncrt__arch arch;
    if (!size_ok(out) || !text || !asyncrt__arch_parse(text, &arch)) return false;
    to_public(&arch, out);
    return true;
}

int asyncrt_arch_format(const asyncrt_arch *arch, char *buf, size_t size)
{
    asyncrt_arch full;
    char why[ASYNCRT_SIZED_WHY];
    if (!arch || !asyncrt__sized_in(ASYNCRT_SIZED_ARCH, arch, &full, why)) return -1;
    if (full.suffix)
        return snprintf(buf, size, "%s_%d%c", full.ptx ? "compute" : "sm", full.number, full.suffix);
    return snprintf(buf, size, "%s_%d", full.ptx ? "compute" : "sm", full.number);
}

/* No NVRTC lists more; the count says when one does. */
#define TARGET_API_MAX_ARCHS 256

asyncrt_status asyncrt_nvrtc_supported_archs(int *out, size_t capacity, size_t *count)
{
    const asyncrt_nvrtc *nv;
    int n = 0, all[TARGET_API_MAX_ARCHS];
    if (count) *count = 0;
    if (!count || (capacity && !out)) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    ASYNCRT_TRY(asyncrt__nvrtc_load(&nv, NULL, 0));
    if (nv->nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > TARGET_API_MAX_ARCHS ||
        nv->nvrtcGetSupportedArchs(all) != NVRTC_SUCCESS)
        return ASYNCRT_ERROR_NVRTC;
    for (size_t i = 0; i < capacity && i < (size_t)n; i++) out[i] = all[i];
    *count = (size_t)n;
    return ASYNCRT_SUCCESS;
}

size_t asyncrt__nvrtc_supported_archs(int *out, size_t capacity)
{
    size_t n = 0; /* all of them or none */
    if (asyncrt_nvrtc_supported_archs(out, capacity, &n) != ASYNCRT_SUCCESS || n > capacity) return 0;
    return n;
}

asyncrt_status asyncrt_arch_auto(int cc_major, int cc_minor, int driver_version, asyncrt_arch *out, char *why,
                                 size_t why_size)
{
    char bad[ASYNCRT_SIZED_WHY];
    if (!out || !asyncrt__sized_in(ASYNCRT_SIZED_ARCH, out, &(asyncrt_arch){0}, bad)) {
        if (why && why_size) snprintf(why, why_size, "%s", out ? bad : "out is NULL");
        return ASYNCRT_ERROR_INVALID_ARGUMENT;
    }
    int archs[TARGET_API_MAX_ARCHS];
    size_t n = 0;
    asyncrt_status s = asyncrt_nvrtc_supported_archs(archs, TARGET_API_MAX_ARCHS, &n);
    if (s != ASYNCRT_SUCCESS) {
        if (why && why_size) snprintf(why, why_size, "no NVRTC to ask which targets it supports");
        return s;
    }
    asyncrt__arch arch;
    char sentence[1024] = "";
    const asyncrt_nvrtc *nv;
    ASYNCRT_TRY(asyncrt__nvrtc_load(&nv, NULL, 0)); /* opened by the call above */
    s = asyncrt__arch_select_auto(cc_major, cc_minor, driver_version, nv->version, archs, n, &arch,
                                  sentence, sizeof sentence);
    if (why && why_size) snprintf(why, why_size, "%s", sentence);
    if (s == ASYNCRT_SUCCESS) to_public(&arch, out);
    return s;
}
