/* The one place the library reads its environment (settings.h). */
#include "settings.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

bool asyncrt__settings_read(asyncrt_settings *out)
{
    *out = (asyncrt_settings){0};
    bool ok = true;
#define ASYNCRT_SETTINGS_READ(field, name)                          \
    {                                                               \
        const char *value = getenv(name);                           \
        if (value && !(out->field = strdup(value))) ok = false;     \
    }
    ASYNCRT_SETTINGS(ASYNCRT_SETTINGS_READ)
#undef ASYNCRT_SETTINGS_READ
    if (!ok) asyncrt__settings_free(out);
    return ok;
}

void asyncrt__settings_free(asyncrt_settings *s)
{
#define ASYNCRT_SETTINGS_FREE(field, name) free(s->field);
    ASYNCRT_SETTINGS(ASYNCRT_SETTINGS_FREE)
#undef ASYNCRT_SETTINGS_FREE
    *s = (asyncrt_settings){0};
}

bool asyncrt__settings_set(asyncrt_settings *s, const char *name, const char *value)
{
#define ASYNCRT_SETTINGS_SET(field, var)                                \
    if (strcmp(name, var) == 0) {                                       \
        char *copy = value ? strdup(value) : NULL;                      \
        if (value && !copy) return false;                               \
        free(s->field);                                                 \
        s->field = copy;                                                \
        return true;                                                    \
    }
    ASYNCRT_SETTINGS(ASYNCRT_SETTINGS_SET)
#undef ASYNCRT_SETTINGS_SET
    return false;
}

static asyncrt_settings g_process;
static bool g_process_ok;
static pthread_once_t g_process_once = PTHREAD_ONCE_INIT;

static void read_process(void) { g_process_ok = asyncrt__settings_read(&g_process); }

const asyncrt_settings *asyncrt__settings_process(void)
{
    pthread_once(&g_process_once, read_process);
    return g_process_ok ? &g_process : NULL;
}
