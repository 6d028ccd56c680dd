/* asyncrt_cache_dir (asyncrt/cache.h): one folder opened once, its door
 * descriptor and how it was judged, bound to the context that opened it.
 * The calls that only touch files are the context layer's (cache_dir.c,
 * cache_listing.c); those that read what an entry holds are the compile
 * layer's (compile/cache_check.c), which keeps the strings it hands out in
 * `item`, a slot it frees itself (the context cannot name its types). */
#ifndef ASYNCRT_CACHE_DIR_H
#define ASYNCRT_CACHE_DIR_H

#include <stdbool.h>
#include <stdint.h>

#include "asyncrt/cache.h"
#include "context.h"

struct asyncrt_cache_dir {
    asyncrt_context *ctx;       /* its messages, remote and settings */
    char *name;                 /* for messages only: never opened again */
    int fd;                     /* the door: O_DIRECTORY | O_NOFOLLOW, opened once */
    asyncrt_cache_dir_role role;
    bool trusted;               /* a cache the library would use (an export folder: true) */
    bool shared;                /* a team cache: sealed with mac_key */
    uint8_t mac_key[32];
    char why[512];              /* why not trusted */
    asyncrt_context_slot item;  /* the last check's strings (compile/cache_check.c) */
};

/* The seal a file of `dir` carries: the team MAC of a shared cache, or NULL
 * for plain SHA-256 (a private cache, an export folder). */
static inline const uint8_t *asyncrt__folder_mac(const asyncrt_cache_dir *dir)
{
    return dir->role == ASYNCRT_CACHE_DIR_CACHE && dir->shared ? dir->mac_key : NULL;
}

/* INVALID_ARGUMENT unless `name` is a plain file name of the folder ("what"
 * says which call, for the message); SUCCESS otherwise. */
asyncrt_status asyncrt__folder_name_ok(asyncrt_cache_dir *dir, const char *name, const char *what);
/* IO with the reason when the folder may not be changed or trusted as a
 * cache (an untrusted cache directory); SUCCESS otherwise. */
asyncrt_status asyncrt__folder_trusted(asyncrt_cache_dir *dir, const char *what);

#endif
