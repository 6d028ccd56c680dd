/* asyncrt_cache_dir (asyncrt/cache.h, cache_dir.h): opening the door, what
 * it is, handing it to a context, and the calls that only move files:
 * remove, prune, clear, pull, the remote tally. */
#include "cache_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "cache_store.h"
#include "key_record.h"
#include "key_record_remote.h"
#include "safe_io.h"

asyncrt_status asyncrt__folder_name_ok(asyncrt_cache_dir *dir, const char *name, const char *what)
{
    if (name && name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, ".."))
        return ASYNCRT_SUCCESS;
    return asyncrt__fail(dir->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                         "%s: the name %s%s%s is not a file of the folder: it must be a plain file name (no '/', "
                         "not \"\", \".\" or \"..\")", what, name ? "\"" : "", name ? name : "NULL", name ? "\"" : "");
}

asyncrt_status asyncrt__folder_trusted(asyncrt_cache_dir *dir, const char *what)
{
    if (dir->trusted) return ASYNCRT_SUCCESS;
    return asyncrt__fail(dir->ctx, ASYNCRT_ERROR_IO, "%s: the library would not use this directory: %s", what,
                         dir->why);
}

/* An export folder: created 0700 when asked, opened once, never through a link. */
static int open_export(asyncrt_cache_dir *dir, bool create)
{
    if (create && mkdir(dir->name, 0700) != 0 && errno != EEXIST) {
        asyncrt__mkdir_why(dir->name, errno, dir->why, sizeof dir->why);
        return -1;
    }
    int fd = open(dir->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        snprintf(dir->why, sizeof dir->why, "cannot %s %s (%s)", create ? "write" : "read", dir->name,
                 errno == ELOOP ? "a symbolic link: name the folder itself" : strerror(errno));
    dir->trusted = fd >= 0;
    return fd;
}

static asyncrt_status dir_open(asyncrt_context *ctx, const asyncrt_cache_dir_options *caller, asyncrt_cache_dir **out)
{
    asyncrt_cache_dir_options o;
    ASYNCRT_TRY(asyncrt__sized_take(ctx, ASYNCRT_SIZED_CACHE_DIR_OPTIONS, caller, &o, "cache dir options"));
    if (o.role != ASYNCRT_CACHE_DIR_CACHE && o.role != ASYNCRT_CACHE_DIR_EXPORT)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "cache dir options: role %d is neither "
                             "ASYNCRT_CACHE_DIR_CACHE (0) nor ASYNCRT_CACHE_DIR_EXPORT (1)", (int)o.role);
    const char *name = o.dir ? o.dir : asyncrt__cache_dir(ctx->cache);
    if (!name)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_IO, "no cache directory: caching is off (ASYNCRT_CACHE=0) or "
                             "HOME is unset; name one (asyncrt_cache_dir_options.dir)");
    if (!name[0])
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "cache dir options: dir is \"\": name a folder");
    asyncrt_cache_dir *dir = calloc(1, sizeof *dir);
    if (!dir || !(dir->name = strdup(name))) {
        free(dir);
        return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory opening %s", name);
    }
    dir->ctx = ctx;
    dir->role = o.role;
    uint64_t max_bytes;
    bool max_malformed;
    if (o.role == ASYNCRT_CACHE_DIR_CACHE) {
        asyncrt__cache_settings(ctx->cache, &dir->shared, &max_bytes, &max_malformed);
        dir->fd = asyncrt__dir_open_door(dir->name, dir->shared, o.create, dir->mac_key, &dir->trusted, dir->why,
                                         sizeof dir->why);
    } else {
        dir->fd = open_export(dir, o.create);
    }
    if (dir->fd < 0) {
        struct stat st;
        bool there = lstat(dir->name, &st) == 0 && S_ISDIR(st.st_mode);
        asyncrt_status s = asyncrt__fail(ctx, there ? ASYNCRT_ERROR_IO : ASYNCRT_ERROR_NOT_FOUND, "%s", dir->why);
        asyncrt_cache_dir_close(dir);
        return s;
    }
    if (dir->trusted) dir->why[0] = '\0';
    *out = dir;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_cache_dir_open(asyncrt_context *ctx, const asyncrt_cache_dir_options *opts,
                                      asyncrt_cache_dir **out)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!out) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_cache_dir_open: out is NULL");
    *out = NULL;
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, dir_open(ctx, opts, out));
}

void asyncrt_cache_dir_close(asyncrt_cache_dir *dir)
{
    if (!dir) return;
    if (dir->item.state) dir->item.free(dir->item.state);
    if (dir->fd >= 0) close(dir->fd);
    memset(dir->mac_key, 0, sizeof dir->mac_key);
    free(dir->name);
    free(dir);
}

asyncrt_status asyncrt_cache_dir_info(const asyncrt_cache_dir *dir, asyncrt_cache_info *out)
{
    if (!dir) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt_cache_info full = {.size = sizeof full, .dir = dir->name, .used = dir->trusted, .shared = dir->shared};
    bool shared;
    asyncrt__cache_settings(dir->ctx->cache, &shared, &full.max_bytes, &full.max_malformed);
    snprintf(full.why, sizeof full.why, "%s", dir->why);
    return asyncrt__sized_give(dir->ctx, ASYNCRT_SIZED_CACHE_INFO, out, &full, "cache info");
}

static asyncrt_status use_dir(asyncrt_context *ctx, const asyncrt_cache_dir *dir)
{
    if (!dir)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_context_use_cache_dir: the folder is NULL");
    if (dir->role != ASYNCRT_CACHE_DIR_CACHE)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_IO, "asyncrt_context_use_cache_dir: %s was opened as an export "
                             "folder, not a cache directory", dir->name);
    ASYNCRT_TRY(asyncrt__folder_trusted((asyncrt_cache_dir *)dir, "asyncrt_context_use_cache_dir"));
    if (asyncrt__cache_adopt_dir(ctx->cache, dir->name, dir->fd, dir->shared, dir->mac_key)) return ASYNCRT_SUCCESS;
    return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "cannot keep a descriptor of the cache directory %s",
                         dir->name);
}

asyncrt_status asyncrt_context_use_cache_dir(asyncrt_context *ctx, const asyncrt_cache_dir *dir)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, use_dir(ctx, dir));
}

bool asyncrt_cache_parse_size(const char *text, uint64_t *bytes)
{
    uint64_t v;
    if (!text || !bytes || !asyncrt__cache_parse_size(text, &v)) return false;
    *bytes = v;
    return true;
}

/* ---- the calls that change the folder ----------------------------------- */

#define ENTER(dir)                                         \
    do {                                                   \
        if (!(dir)) return ASYNCRT_ERROR_INVALID_ARGUMENT; \
        asyncrt__enter((dir)->ctx);                        \
    } while (0)

/* The folder's key records without the dead ones (key_record.h). */
static void sweep_records(asyncrt_cache_dir *dir)
{
    asyncrt_key_records_dir d = {dir->fd, asyncrt__folder_mac(dir), &dir->ctx->diag, dir->name};
    asyncrt__key_records_sweep_at(&d, 0);
}

static asyncrt_status dir_remove(asyncrt_cache_dir *dir, const char *name)
{
    ASYNCRT_TRY(asyncrt__folder_name_ok(dir, name, "asyncrt_cache_dir_remove"));
    ASYNCRT_TRY(asyncrt__folder_trusted(dir, "asyncrt_cache_dir_remove"));
    if (unlinkat(dir->fd, name, 0) == 0) {
        if (asyncrt__cache_kind_of(name) == ASYNCRT_CACHE_MANIFEST) sweep_records(dir); /* its record died */
        return ASYNCRT_SUCCESS;
    }
    return asyncrt__fail(dir->ctx, ASYNCRT_ERROR_IO, "cannot delete %s/%s: %s", dir->name, name, strerror(errno));
}

asyncrt_status asyncrt_cache_dir_remove(asyncrt_cache_dir *dir, const char *name)
{
    ENTER(dir);
    return asyncrt__leave(dir->ctx, dir_remove(dir, name));
}

static asyncrt_status dir_prune(asyncrt_cache_dir *dir, uint64_t max_bytes, asyncrt_cache_dir_prune_result *out)
{
    asyncrt_cache_dir_prune_result full = {.size = sizeof full};
    ASYNCRT_TRY(asyncrt__sized_give(dir->ctx, ASYNCRT_SIZED_CACHE_DIR_PRUNE_RESULT, out, &full, "prune result"));
    ASYNCRT_TRY(asyncrt__folder_trusted(dir, "asyncrt_cache_dir_prune"));
    asyncrt_cache_eviction r = asyncrt__cache_evict_at(dir->fd, max_bytes, NULL);
    full.evicted = r.evicted, full.temps_removed = r.temps, full.refused_below = r.refused_below;
    if (r.manifests) sweep_records(dir);
    asyncrt__sized_give(dir->ctx, ASYNCRT_SIZED_CACHE_DIR_PRUNE_RESULT, out, &full, "prune result");
    if (!r.refused_below) return ASYNCRT_SUCCESS;
    return asyncrt__fail(dir->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_cache_dir_prune: max_bytes %llu is "
                         "smaller than the newest entry with its manifest (%llu bytes): refused, nothing evicted",
                         (unsigned long long)max_bytes, (unsigned long long)r.refused_below);
}

asyncrt_status asyncrt_cache_dir_prune(asyncrt_cache_dir *dir, uint64_t max_bytes, asyncrt_cache_dir_prune_result *out)
{
    ENTER(dir);
    return asyncrt__leave(dir->ctx, dir_prune(dir, max_bytes, out));
}

static asyncrt_status dir_clear(asyncrt_cache_dir *dir, size_t *removed)
{
    if (removed) *removed = 0;
    ASYNCRT_TRY(asyncrt__folder_trusted(dir, "asyncrt_cache_dir_clear"));
    size_t n = asyncrt__cache_remove_all_at(dir->fd);
    if (removed) *removed = n;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_cache_dir_clear(asyncrt_cache_dir *dir, size_t *removed)
{
    ENTER(dir);
    return asyncrt__leave(dir->ctx, dir_clear(dir, removed));
}

/* ---- the remote tier ------------------------------------------------------ */

static asyncrt_status dir_pull(asyncrt_cache_dir *dir, asyncrt_cache_dir_pull_result *out)
{
    asyncrt_cache_dir_pull_result full = {.size = sizeof full};
    ASYNCRT_TRY(asyncrt__sized_give(dir->ctx, ASYNCRT_SIZED_CACHE_DIR_PULL_RESULT, out, &full, "pull result"));
    ASYNCRT_TRY(asyncrt__folder_trusted(dir, "asyncrt_cache_dir_pull"));
    if (!asyncrt__cache_holds_dir(dir->ctx->cache, dir->fd))
        return asyncrt__fail(dir->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_cache_dir_pull: the context's disk "
                             "cache is not %s: call asyncrt_context_use_cache_dir(ctx, dir) first (a pull installs "
                             "through the context's cache)", dir->name);
    char why[512];
    bool ok = asyncrt__cache_remote_pull(dir->ctx->cache, &full.installed, &full.refused, &full.not_for_this_machine,
                                         &full.already_here, why, sizeof why);
    /* the source names are the records' own: a value names only its key */
    if (ok) ok = asyncrt__key_records_pull(dir->ctx->cache, &full.key_records, why, sizeof why);
    asyncrt__sized_give(dir->ctx, ASYNCRT_SIZED_CACHE_DIR_PULL_RESULT, out, &full, "pull result");
    return ok ? ASYNCRT_SUCCESS : asyncrt__fail(dir->ctx, ASYNCRT_ERROR_IO, "%s", why);
}

asyncrt_status asyncrt_cache_dir_pull(asyncrt_cache_dir *dir, asyncrt_cache_dir_pull_result *out)
{
    ENTER(dir);
    return asyncrt__leave(dir->ctx, dir_pull(dir, out));
}

/* An observer: the last error is left alone unless it fails. */
asyncrt_status asyncrt_cache_dir_remote_tally(const asyncrt_cache_dir *dir, asyncrt_remote_cache_stats *out,
                                              uint64_t *kept)
{
    if (!dir) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt_remote_cache_stats full = {.size = sizeof full};
    uint64_t k = 0;
    if (dir->trusted && dir->role == ASYNCRT_CACHE_DIR_CACHE)
        asyncrt__cache_remote_tally_at(dir->name, dir->fd, dir->shared, dir->mac_key, &dir->ctx->diag, &full, &k);
    ASYNCRT_TRY(asyncrt__sized_give(dir->ctx, ASYNCRT_SIZED_REMOTE_CACHE_STATS, out, &full, "remote tally"));
    if (kept) *kept = k;
    return ASYNCRT_SUCCESS;
}
