/* The cache directory as a set of files: entries <key2>.bin, manifests
 * <key1>.mf, temporaries .tmp.<host>.<pid>.<random>, the shared key KEY, and
 * side files (cache.h; "other" here: never evicted or cleared, except the
 * key records, which die with their entries: key_record.h). Eviction is
 * least-recently-used by mtime, an entry with the manifest that names it (a
 * hit refreshes both, see asyncrt__file_read), and needs no lock: every process trims the
 * directory to the cap after its own store, deletions race harmlessly (a
 * file deleted twice is gone once), and deleting a file another process has
 * open is fine on POSIX (it keeps reading its descriptor; on NFS the client
 * renames it to .nfsXXXX until closed). */
#ifndef ASYNCRT_CACHE_STORE_H
#define ASYNCRT_CACHE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef enum asyncrt_cache_file_kind {
    ASYNCRT_CACHE_ENTRY,
    ASYNCRT_CACHE_MANIFEST,
    ASYNCRT_CACHE_TEMP,
    ASYNCRT_CACHE_OTHER
} asyncrt_cache_file_kind;

typedef struct asyncrt_cache_file {
    char *name;
    asyncrt_cache_file_kind kind;
    bool regular;
    uint64_t size;
    struct timespec mtime, atime;
} asyncrt_cache_file;

typedef struct asyncrt_cache_listing {
    asyncrt_cache_file *files;
    size_t count;
    uint64_t entry_bytes, manifest_bytes, temp_bytes; /* regular files only */
    size_t entries, manifests, temps;
} asyncrt_cache_listing;

asyncrt_cache_file_kind asyncrt__cache_kind_of(const char *name);

/* Lists the directory (lstat of each name, relative to dir_fd). False when
 * it cannot be read. Every call here takes the directory as a descriptor
 * (safe_io.h's, opened and checked once), never as a path. */
bool asyncrt__cache_scan_at(int dir_fd, asyncrt_cache_listing *out);
void asyncrt__cache_listing_free(asyncrt_cache_listing *l);

typedef struct asyncrt_cache_eviction {
    size_t evicted;         /* entries and manifests deleted */
    size_t manifests;       /* of which manifests (their key records die: key_record.h) */
    size_t temps;           /* temporaries of dead writers deleted */
    uint64_t refused_below; /* not 0: the cap was refused, since the kept entry alone takes this many bytes */
} asyncrt_cache_eviction;

/* Deletes temporaries left by dead writers, then the least recently used
 * entries, each with its manifest (an entry and the manifest that names it
 * go together), until they take at most max_bytes. Never the entry named
 * `keep` (just stored) or, without one, the newest: when that one alone
 * exceeds max_bytes the cap is refused (refused_below) and nothing else is
 * evicted, since the cap could only ever empty the cache. */
asyncrt_cache_eviction asyncrt__cache_evict_at(int dir_fd, uint64_t max_bytes, const char *keep);

/* Deletes every entry, manifest, temporary and key records side file
 * (key_record.h; not KEY, the records' lock, nor other side files). Returns the count. */
size_t asyncrt__cache_remove_all_at(int dir_fd);

/* A temporary is stale when its writer is known dead (same host, no such
 * pid) or it is older than this many seconds (other hosts). */
#define ASYNCRT_CACHE_TEMP_MAX_AGE_S 3600

#endif
