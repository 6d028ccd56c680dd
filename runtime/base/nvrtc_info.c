/* The public face of the NVRTC search (asyncrt/runtime.h, "the NVRTC
 * search"): what nvrtc_loader.h chose and why, for asyncrt-probe and
 * asyncrt-run -v. The search and the load are made once per process, so
 * every string handed out lives as long as the process. */
#include <pthread.h>
#include <stdio.h>

#include "asyncrt/runtime.h"
#include "lib_search.h"
#include "nvrtc_loader.h"
#include "sized.h"

static char g_versions[ASYNCRT_LIB_MAX_CANDIDATES][32];
static char g_load_message[2048];
static const asyncrt_nvrtc *g_loaded;
static pthread_once_t g_versions_once = PTHREAD_ONCE_INIT, g_load_once = PTHREAD_ONCE_INIT;

static void format_versions(void)
{
    asyncrt_nvrtc_choice c;
    asyncrt__nvrtc_choice_get(&c);
    for (size_t i = 0; i < c.count; i++)
        asyncrt__lib_version_format(&c.candidates[i].version, g_versions[i], sizeof g_versions[i]);
}

/* The load is made once per process: its outcome, message included, never changes. */
static void load(void)
{
    if (asyncrt__nvrtc_load(&g_loaded, g_load_message, sizeof g_load_message) != ASYNCRT_SUCCESS) g_loaded = NULL;
}

asyncrt_status asyncrt_nvrtc_info_get(bool open, asyncrt_nvrtc_info *out)
{
    char why[ASYNCRT_SIZED_WHY];
    asyncrt_nvrtc_info full = ASYNCRT_NVRTC_INFO_INIT;
    if (!out || !asyncrt__sized_in(ASYNCRT_SIZED_NVRTC_INFO, out, &full, why)) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt_nvrtc_choice c;
    asyncrt__nvrtc_choice_get(&c);
    full = (asyncrt_nvrtc_info){sizeof full, c.count, c.chosen, c.why, c.searched, 0, NULL};
    asyncrt_status s = ASYNCRT_SUCCESS;
    if (open) {
        pthread_once(&g_load_once, load);
        if (g_loaded) {
            full.version = g_loaded->version;
            full.path = g_loaded->path;
            full.why = g_loaded->why;
        } else {
            full.why = g_load_message;
            s = ASYNCRT_ERROR_NO_NVRTC;
        }
    }
    asyncrt__sized_out(ASYNCRT_SIZED_NVRTC_INFO, out, &full, why);
    return s;
}

asyncrt_status asyncrt_nvrtc_candidate_get(size_t index, asyncrt_nvrtc_candidate *out)
{
    char why[ASYNCRT_SIZED_WHY];
    asyncrt_nvrtc_candidate full = ASYNCRT_NVRTC_CANDIDATE_INIT;
    if (!out || !asyncrt__sized_in(ASYNCRT_SIZED_NVRTC_CANDIDATE, out, &full, why))
        return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt_nvrtc_choice c;
    asyncrt__nvrtc_choice_get(&c);
    if (index >= c.count) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    pthread_once(&g_versions_once, format_versions);
    const asyncrt_lib_candidate *k = &c.candidates[index];
    full = (asyncrt_nvrtc_candidate){sizeof full, k->path, g_versions[index], k->step, k->version_from};
    asyncrt__sized_out(ASYNCRT_SIZED_NVRTC_CANDIDATE, out, &full, why);
    return ASYNCRT_SUCCESS;
}
