/* One cache file read and checked as the library reads it, then decoded:
 * what verify, list, export and import each start from. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context_internal.h"
#include "tool.h"

void cache_loaded_free(cache_loaded *l)
{
    asyncrt_program_destroy(l->program);
    if (l->is_manifest) asyncrt__manifest_free(&l->manifest);
}

bool cache_load(int dir_fd, const asyncrt_cache_file *f, const uint8_t *mac, cache_loaded *out, char *why,
                size_t size)
{
    memset(out, 0, sizeof *out);
    if (f->kind != ASYNCRT_CACHE_ENTRY && f->kind != ASYNCRT_CACHE_MANIFEST) {
        snprintf(why, size, "not named <64 hex digits>.bin or .mf");
        return false;
    }
    if (!f->regular || !tool_key_from_name(f->name, out->key)) {
        snprintf(why, size, f->regular ? "malformed name" : "not a regular file");
        return false;
    }
    size_t n = 0;
    why[0] = '\0';
    unsigned char *data = asyncrt__file_read(dir_fd, f->name, ASYNCRT_FILE_MAX, false, &n, why, size);
    if (!data) {
        if (!why[0]) snprintf(why, size, "vanished while reading");
        return false;
    }
    bool ok;
    if (f->kind == ASYNCRT_CACHE_ENTRY) {
        ok = asyncrt__program_decode_keyed(data, n, out->key, mac, &out->program, why, size) == ASYNCRT_SUCCESS;
    } else {
        ok = out->is_manifest = asyncrt__manifest_decode(data, n, out->key, mac, &out->manifest, why, size);
    }
    free(data);
    return ok;
}

asyncrt_context *cache_tool_context(const cache_tool *tool, const char *cmd)
{
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) {
        cache_fail(tool, cmd, TOOL_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    if (asyncrt__context_adopt_cache_dir(ctx, tool->dir, tool->dir_fd, tool->shared, tool->mac_key) !=
        ASYNCRT_SUCCESS) {
        cache_fail(tool, cmd, TOOL_EXIT_INTERNAL, "%s", asyncrt_context_last_error(ctx));
        asyncrt_context_destroy(ctx);
        return NULL;
    }
    return ctx;
}

int tool_open_folder(const char *path, bool create, char *why, size_t size)
{
    if (create && mkdir(path, 0700) != 0 && errno != EEXIST) {
        snprintf(why, size, "cannot create %s (%s)", path, strerror(errno));
        return -1;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        snprintf(why, size, "cannot %s %s (%s)", create ? "write" : "read", path,
                 errno == ELOOP ? "a symbolic link: name the folder itself" : strerror(errno));
    return fd;
}
