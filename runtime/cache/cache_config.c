/* The cache's settings, interpreted once (cache_config.h). */
#include "cache_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

bool asyncrt__cache_parse_size(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || errno || text[0] == '-') return false;
    int shift = 0;
    if (*end && strchr("kK", *end)) shift = 10, end++;
    else if (*end && strchr("mM", *end)) shift = 20, end++;
    else if (*end && strchr("gG", *end)) shift = 30, end++;
    if (*end || v > (UINT64_MAX >> shift)) return false;
    *out = (uint64_t)v << shift;
    return true;
}

static char *default_dir(const asyncrt_settings *env)
{
    if (env->cache_dir && *env->cache_dir) return strdup(env->cache_dir);
    if (env->xdg_cache_home && *env->xdg_cache_home) return asyncrt__format("%s/asyncrt", env->xdg_cache_home);
    if (env->home && *env->home) return asyncrt__format("%s/.cache/asyncrt", env->home);
    return NULL;
}

void asyncrt__cache_config_read(const asyncrt_settings *env, asyncrt_cache_config *out)
{
    *out = (asyncrt_cache_config){.max_bytes = ASYNCRT_CACHE_DEFAULT_MAX_BYTES};
    out->enabled = !(env->cache && strcmp(env->cache, "0") == 0);
    if (out->enabled) out->dir = default_dir(env);
    const char *max = env->cache_max_bytes;
    if (max && *max && !asyncrt__cache_parse_size(max, &out->max_bytes)) {
        out->max_bytes = ASYNCRT_CACHE_DEFAULT_MAX_BYTES;
        out->malformed_max = max;
    }
    out->shared = env->cache_shared && strcmp(env->cache_shared, "1") == 0;
}

void asyncrt__cache_config_free(asyncrt_cache_config *cfg)
{
    free(cfg->dir);
    cfg->dir = NULL;
}
