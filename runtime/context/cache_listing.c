/* asyncrt_cache_dir_scan and its listing (asyncrt/cache.h): the folder's
 * names as cache_store.h lists them, through the door. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache_dir.h"
#include "cache_store.h"

struct asyncrt_cache_dir_listing {
    asyncrt_cache_listing files; /* cache_store.h's */
    asyncrt_context *ctx;        /* for the size rule's messages */
    size_t odd;                  /* entry names that are not regular files */
};

static asyncrt_status dir_scan(asyncrt_cache_dir *dir, asyncrt_cache_dir_listing **out)
{
    if (!out)
        return asyncrt__fail(dir->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_cache_dir_scan: out is NULL");
    *out = NULL;
    asyncrt_cache_dir_listing *l = calloc(1, sizeof *l);
    if (!l) return asyncrt__fail(dir->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory listing %s", dir->name);
    errno = 0;
    if (!asyncrt__cache_scan_at(dir->fd, &l->files)) {
        int err = errno;
        free(l);
        return asyncrt__fail(dir->ctx, ASYNCRT_ERROR_IO, "cannot read %s (%s)", dir->name,
                             err ? strerror(err) : "out of memory");
    }
    l->ctx = dir->ctx;
    for (size_t i = 0; i < l->files.count; i++)
        l->odd += l->files.files[i].kind == ASYNCRT_CACHE_ENTRY && !l->files.files[i].regular;
    *out = l;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_cache_dir_scan(asyncrt_cache_dir *dir, asyncrt_cache_dir_listing **out)
{
    if (!dir) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__enter(dir->ctx);
    return asyncrt__leave(dir->ctx, dir_scan(dir, out));
}

size_t asyncrt_cache_dir_listing_count(const asyncrt_cache_dir_listing *l) { return l ? l->files.count : 0; }

static int64_t ns_of(const struct timespec *t) { return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec; }

/* The kinds are the same list in the same order (cache_store.h's, the public one). */
_Static_assert((int)ASYNCRT_CACHE_FILE_ENTRY == (int)ASYNCRT_CACHE_ENTRY &&
                   (int)ASYNCRT_CACHE_FILE_MANIFEST == (int)ASYNCRT_CACHE_MANIFEST &&
                   (int)ASYNCRT_CACHE_FILE_TEMP == (int)ASYNCRT_CACHE_TEMP &&
                   (int)ASYNCRT_CACHE_FILE_OTHER == (int)ASYNCRT_CACHE_OTHER,
               "one list of kinds");

/* Observers, like the stats: the last error is left alone unless they fail. */
asyncrt_status asyncrt_cache_dir_listing_file(const asyncrt_cache_dir_listing *l, size_t index,
                                              asyncrt_cache_dir_file *out)
{
    if (!l) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (index >= l->files.count)
        return asyncrt__fail(l->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "asyncrt_cache_dir_listing_file: index %zu is past the listing's %zu files", index,
                             l->files.count);
    const asyncrt_cache_file *f = &l->files.files[index];
    asyncrt_cache_dir_file full = {.size = sizeof full, .name = f->name, .kind = (asyncrt_cache_dir_file_kind)f->kind,
                                   .regular = f->regular, .bytes = f->size, .used_ns = ns_of(&f->mtime),
                                   .accessed_ns = ns_of(&f->atime)};
    return asyncrt__sized_give(l->ctx, ASYNCRT_SIZED_CACHE_DIR_FILE, out, &full, "cache dir file");
}

asyncrt_status asyncrt_cache_dir_listing_totals(const asyncrt_cache_dir_listing *l, asyncrt_cache_dir_totals *out)
{
    if (!l) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    const asyncrt_cache_listing *f = &l->files;
    asyncrt_cache_dir_totals full = {.size = sizeof full, .entries = f->entries, .manifests = f->manifests,
                                     .temps = f->temps, .odd = l->odd, .entry_bytes = f->entry_bytes,
                                     .manifest_bytes = f->manifest_bytes, .temp_bytes = f->temp_bytes};
    return asyncrt__sized_give(l->ctx, ASYNCRT_SIZED_CACHE_DIR_TOTALS, out, &full, "cache dir totals");
}

void asyncrt_cache_dir_listing_free(asyncrt_cache_dir_listing *l)
{
    if (!l) return;
    asyncrt__cache_listing_free(&l->files);
    free(l);
}
