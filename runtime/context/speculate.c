#include "speculate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "cache.h"
#include "context.h"

/* target-<host>-device-<N>, a side file of the cache: per host, since a
 * cache directory may be shared by machines with different GPUs. */
static void hint_name(int ordinal, char *out, size_t size)
{
    char host[64] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/') *c = '_';
    snprintf(out, size, "target-%s-device-%d", host, ordinal);
}

bool asyncrt__speculation_parse(const char *text, char *arch, size_t size)
{
    size_t n = strcspn(text, "\n");
    if (n == 0 || n >= size || n >= 32 || (text[n] == '\n' && text[n + 1])) return false;
    char name[32];
    memcpy(name, text, n);
    name[n] = '\0';
    asyncrt__arch parsed;
    if (!asyncrt__arch_parse(name, &parsed)) return false;
    memcpy(arch, name, n + 1);
    return true;
}

bool asyncrt__speculation_guess(asyncrt_context *ctx, int ordinal, char *arch, size_t size)
{
    char name[128];
    hint_name(ordinal, name, sizeof name);
    char *text = size ? asyncrt__cache_read_side(ctx->cache, name) : NULL;
    bool ok = text && asyncrt__speculation_parse(text, arch, size);
    free(text);
    return ok;
}

void asyncrt__speculation_record(asyncrt_context *ctx)
{
    if (!asyncrt__cache_dir(ctx->cache) || !asyncrt__cache_enabled(ctx->cache)) return;
    int supported[64];
    size_t count = asyncrt__nvrtc_supported_archs(supported, 64);
    asyncrt__arch arch;
    char why[768], text[34], old[32], name[128];
    if (!count || asyncrt__arch_select_auto(ctx->info.cc_major, ctx->info.cc_minor, ctx->info.driver_version,
                                           asyncrt_nvrtc_version(), supported, count, &arch, why,
                                           sizeof why) != ASYNCRT_SUCCESS)
        return;
    asyncrt__arch_format(&arch, text, 32);
    int ordinal = ctx->info.ordinal;
    if (asyncrt__speculation_guess(ctx, ordinal, old, sizeof old) && strcmp(old, text) == 0) return;
    hint_name(ordinal, name, sizeof name);
    strcat(text, "\n");
    bool ok = asyncrt__cache_write_side(ctx->cache, name, text);
    text[strcspn(text, "\n")] = '\0';
    asyncrt__log(ctx, 2, ok ? "remembered target %s for device %d as %s"
                            : "warning: cannot remember target %s for device %d as %s",
                text, ordinal, name);
}
