/* The one place the library reads its environment (settings.h). */
#define _GNU_SOURCE /* secure_getenv */
#include "settings.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

static bool process_is_secure(void) { return getauxval(AT_SECURE) != 0; }

bool (*asyncrt__settings_secure)(void) = process_is_secure;

/* Every row gets a bit of ->ignored. */
#define ASYNCRT_SETTINGS_ONE(field, name, rule) +1
_Static_assert(0 ASYNCRT_SETTINGS(ASYNCRT_SETTINGS_ONE) <= 64, "asyncrt_settings.ignored has 64 bits");
#undef ASYNCRT_SETTINGS_ONE

bool asyncrt__settings_read(asyncrt_settings *out)
{
    *out = (asyncrt_settings){0};
    bool ok = true, secure = asyncrt__settings_secure();
    unsigned row = 0;
    /* A NOT_SETUID row goes through secure_getenv as well: the seam can only
     * add refusals, never take the kernel's away. */
#define ASYNCRT_SETTINGS_READ(field, name, not_setuid)                                   \
    {                                                                                    \
        const char *value = not_setuid ? secure_getenv(name) : getenv(name);             \
        if (not_setuid && secure && (value || getenv(name))) {                           \
            out->ignored |= (uint64_t)1 << row;                                          \
            value = NULL;                                                                \
        }                                                                                \
        if (value && !(out->field = strdup(value))) ok = false;                          \
        row++;                                                                           \
    }
    ASYNCRT_SETTINGS(ASYNCRT_SETTINGS_READ)
#undef ASYNCRT_SETTINGS_READ
    if (!ok) asyncrt__settings_free(out);
    return ok;
}

size_t asyncrt__settings_ignored_names(const asyncrt_settings *s, char *out, size_t size)
{
    static const char *const names[] = {
#define ASYNCRT_SETTINGS_NAME(field, name, rule) name,
        ASYNCRT_SETTINGS(ASYNCRT_SETTINGS_NAME)
#undef ASYNCRT_SETTINGS_NAME
    };
    size_t count = 0, used = 0;
    if (size) out[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (!(s->ignored >> i & 1)) continue;
        int n = size > used ? snprintf(out + used, size - used, "%s%s", count ? ", " : "", names[i]) : 0;
        used += n > 0 ? (size_t)n : 0;
        count++;
    }
    return count;
}

void asyncrt__settings_free(asyncrt_settings *s)
{
#define ASYNCRT_SETTINGS_FREE(field, name, rule) free(s->field);
    ASYNCRT_SETTINGS(ASYNCRT_SETTINGS_FREE)
#undef ASYNCRT_SETTINGS_FREE
    *s = (asyncrt_settings){0};
}

bool asyncrt__settings_set(asyncrt_settings *s, const char *name, const char *value)
{
#define ASYNCRT_SETTINGS_SET(field, var, rule)                              \
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

bool asyncrt__settings_get(const asyncrt_settings *s, const char *name, const char **value)
{
#define ASYNCRT_SETTINGS_GET(field, var, rule) \
    if (strcmp(name, var) == 0) {              \
        *value = s->field;                     \
        return true;                           \
    }
    ASYNCRT_SETTINGS(ASYNCRT_SETTINGS_GET)
#undef ASYNCRT_SETTINGS_GET
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
