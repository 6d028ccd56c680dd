#include "speculate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "context.h"

/* <cache dir>/targets/<host>-device-<N>: per host, since a cache directory
 * may be shared by machines with different GPUs. */
static char *hint_path(const char *cache_dir, int ordinal)
{
    char host[256] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/') *c = '_';
    return asyncrt__format("%s/targets/%s-device-%d", cache_dir, host, ordinal);
}

bool asyncrt__speculation_guess(const char *cache_dir, int ordinal, char *arch, size_t size)
{
    if (!cache_dir || size == 0) return false;
    char *path = hint_path(cache_dir, ordinal);
    int fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
    free(path);
    if (fd < 0) return false;
    char text[40] = {0};
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (off_t)sizeof text
                    ? read(fd, text, sizeof text - 1) : -1;
    close(fd);
    if (n <= 0) return false;
    text[n] = '\0';
    text[strcspn(text, "\n")] = '\0';
    asyncrt_arch parsed;
    if (!asyncrt__arch_parse(text, &parsed) || strlen(text) >= size) return false;
    snprintf(arch, size, "%s", text);
    return true;
}

void asyncrt__speculation_record(asyncrt_context *ctx)
{
    if (!ctx->cache_dir || !ctx->memory_cache) return;
    int supported[64];
    size_t count = asyncrt__nvrtc_supported_archs(supported, 64);
    asyncrt_arch arch;
    char why[768], name[32], old[32];
    if (!count || asyncrt__arch_select_auto(ctx->info.cc_major, ctx->info.cc_minor, ctx->info.driver_version,
                                           asyncrt_nvrtc_version(), supported, count, &arch, why,
                                           sizeof why) != ASYNCRT_SUCCESS)
        return;
    asyncrt__arch_format(&arch, name, sizeof name);
    int ordinal = ctx->info.ordinal;
    if (asyncrt__speculation_guess(ctx->cache_dir, ordinal, old, sizeof old) && strcmp(old, name) == 0) return;

    char *dir = asyncrt__format("%s/targets", ctx->cache_dir);
    char *path = hint_path(ctx->cache_dir, ordinal);
    char *tmp = path ? asyncrt__format("%s.tmp.%ld", path, (long)getpid()) : NULL;
    int fd = -1;
    /* Only inside an existing cache directory: creating that one, with its
     * trust rules, is the cache's business (cache_trust.c). */
    bool ok = dir && tmp && (mkdir(dir, 0700) == 0 || errno == EEXIST) &&
              (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0;
    if (ok) {
        size_t len = strlen(name);
        name[len] = '\n';
        ok = write(fd, name, len + 1) == (ssize_t)(len + 1);
        name[len] = '\0';
    }
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok && tmp) unlink(tmp);
    asyncrt__log(ctx, 2, ok ? "remembered target %s for device %d in %s"
                                    : "warning: cannot remember target %s for device %d in %s",
                name, ordinal, dir ? dir : "?");
    free(dir);
    free(path);
    free(tmp);
}
