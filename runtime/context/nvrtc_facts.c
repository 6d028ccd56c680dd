/* NVRTC's version and supported archs, memoised beside the cache (the side
 * file is the cache's, so this sits above it): a cache hit never opens NVRTC. */
#include "nvrtc_facts.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "context.h"

/* ---- facts: version and archs, memoised beside the cache ---------------- */

static pthread_mutex_t g_facts_lock = PTHREAD_MUTEX_INITIALIZER;
static asyncrt_nvrtc_facts g_facts;
static bool g_have_facts;

/* nvrtc-<FNV-1a of the identity>.facts: a name in the cache directory. */
static void memo_name(const asyncrt_nvrtc_identity *id, char *out, size_t size)
{
    uint64_t h = 1469598103934665603ull;
    char key[4200];
    snprintf(key, sizeof key, "%s|%lld|%lld", id->path, (long long)id->size, (long long)id->mtime_ns);
    for (const char *p = key; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    snprintf(out, size, "nvrtc-%016llx.facts", (unsigned long long)h);
}

/* "asyncrt-nvrtc-facts 1\n<path> <size> <mtime_ns>\nversion <v> archs <a> <b> ...\n" */
static char *memo_format(const asyncrt_nvrtc_identity *id, const asyncrt_nvrtc_facts *facts)
{
    size_t cap = strlen(id->path) + 128 + 8 * facts->arch_count;
    char *text = malloc(cap);
    if (!text) return NULL;
    size_t n = (size_t)snprintf(text, cap, "asyncrt-nvrtc-facts 1\n%s %lld %lld\nversion %d archs", id->path,
                                (long long)id->size, (long long)id->mtime_ns, facts->version);
    for (size_t i = 0; i < facts->arch_count && n < cap; i++)
        n += (size_t)snprintf(text + n, cap - n, " %d", facts->archs[i]);
    if (n + 2 > cap) {
        free(text);
        return NULL;
    }
    strcpy(text + n, "\n");
    return text;
}

bool asyncrt__nvrtc_memo_parse(const char *text, const asyncrt_nvrtc_identity *id, asyncrt_nvrtc_facts *out)
{
    memset(out, 0, sizeof *out);
    const char *magic = "asyncrt-nvrtc-facts 1\n";
    if (strncmp(text, magic, strlen(magic)) != 0) return false;
    text += strlen(magic);
    char want[4400];
    snprintf(want, sizeof want, "%s %lld %lld\n", id->path, (long long)id->size, (long long)id->mtime_ns);
    if (strncmp(text, want, strlen(want)) != 0) return false; /* another NVRTC's, or a hash collision */
    text += strlen(want);
    int used = 0;
    if (sscanf(text, "version %d archs%n", &out->version, &used) != 1 || used == 0 || out->version < 11000)
        return false;
    text += used;
    for (int arch, n; out->arch_count < 64 && sscanf(text, " %d%n", &arch, &n) == 1; text += n) {
        if (arch <= 0 || arch > 10000) return false;
        out->archs[out->arch_count++] = arch;
    }
    out->from_memo = true;
    return out->arch_count > 0 && strcmp(text, "\n") == 0;
}

asyncrt_status asyncrt__nvrtc_facts_get(asyncrt_context *ctx, asyncrt_nvrtc_facts *out, char *msg,
                                       size_t msg_size)
{
    pthread_mutex_lock(&g_facts_lock);
    asyncrt_status status = ASYNCRT_SUCCESS;
    asyncrt_nvrtc_identity id;
    char memo[64] = "";
    if (!g_have_facts && ctx && asyncrt__nvrtc_identity_get(&id)) {
        memo_name(&id, memo, sizeof memo);
        char *text = asyncrt__cache_read_side(ctx->cache, memo);
        g_have_facts = text && asyncrt__nvrtc_memo_parse(text, &id, &g_facts);
        free(text);
    }
    if (!g_have_facts) {
        const asyncrt_nvrtc *nv;
        int n = 0;
        status = asyncrt__nvrtc_load(&nv, msg, msg_size);
        if (status == ASYNCRT_SUCCESS &&
            (nv->nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 64 ||
             nv->nvrtcGetSupportedArchs(g_facts.archs) != NVRTC_SUCCESS)) {
            if (msg && msg_size) snprintf(msg, msg_size, "%s: nvrtcGetSupportedArchs failed", nv->path);
            status = ASYNCRT_ERROR_NVRTC;
        }
        if (status == ASYNCRT_SUCCESS) {
            g_facts.version = nv->version;
            g_facts.arch_count = (size_t)n;
            g_facts.from_memo = false;
            g_have_facts = true;
            char *text = memo[0] ? memo_format(&id, &g_facts) : NULL;
            if (text) asyncrt__cache_write_side(ctx->cache, memo, text); /* no memo: NVRTC is opened next time too */
            free(text);
        }
    }
    if (status == ASYNCRT_SUCCESS) *out = g_facts;
    pthread_mutex_unlock(&g_facts_lock);
    return status;
}
