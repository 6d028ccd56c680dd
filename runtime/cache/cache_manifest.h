/* Dependency sets and manifests: ccache's "direct mode" for NVRTC.
 *
 * key1 (cache_key.h) covers what is known before compiling. A manifest,
 * <dir>/<key1>.mf, lists one or more dependency sets: the files one compile
 * read (from NVRTC's time trace) with their stat data and SHA-256, and the
 * result key under which that compile's program is stored (<dir>/<key2>.bin,
 * key2 = SHA-256 of key1, the working directory when a path is relative, and
 * every path with its content hash). Several sets per key1, because the same
 * source and options may read different files (an include directory's file
 * edited and edited back, another working directory): a lookup takes the
 * newest set whose files all still hold the recorded content, so flipping
 * between two header versions hits both. A set is valid when each file
 * stats the same (size, mtime, ctime, inode, device) or, where the stat
 * changed, still hashes the same. */
#ifndef ASYNCRT_CACHE_MANIFEST_H
#define ASYNCRT_CACHE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>


#define ASYNCRT_MANIFEST_MAX_SETS 8

typedef struct asyncrt_dep {
    char *path;           /* as NVRTC named it; relative = to the working directory */
    uint64_t size, ino, dev;
    int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
    uint8_t sha[32];
} asyncrt_dep;

typedef struct asyncrt_dep_set {
    uint8_t result_key[32];
    char *cwd;            /* "" unless some path is relative */
    size_t count;
    asyncrt_dep *deps;
} asyncrt_dep_set;

typedef struct asyncrt_manifest {
    asyncrt_dep_set *sets; /* newest first */
    size_t count;
} asyncrt_manifest;

/* Records the files a compile read (paths, in the order it read them: the
 * compile layer's trace.h reads them from NVRTC): each that is a file on
 * disk is stat'ed and hashed; a name that is not on disk must be one of the
 * in-memory headers (they win over disk files of the same name). Refused
 * (false, why) when a file changed at or after `start` (the compile may have
 * seen another version), vanished, is not a regular file, or, outside
 * toolkit_dir, uses __has_include (a probe that failed leaves no trace, so a
 * file created later would go unnoticed). */
bool asyncrt__dep_set_record(const char *const *paths, size_t path_count, const char *const *memory_names,
                            size_t memory_count, const char *toolkit_dir, const struct timespec *start,
                            const uint8_t key1[32], asyncrt_dep_set *out, char *why, size_t why_size);

/* True when every file still holds its recorded content (see above). */
bool asyncrt__dep_set_valid(const asyncrt_dep_set *set);

bool asyncrt__dep_set_copy(asyncrt_dep_set *dst, const asyncrt_dep_set *src);
void asyncrt__dep_set_free(asyncrt_dep_set *set); /* its members; not set itself */

/* The sealed form ("ASYNCRTM", key1): set count, then per set the result
 * key, cwd, dep count and each dep's fields. */
unsigned char *asyncrt__manifest_encode(const asyncrt_manifest *m, const uint8_t key1[32],
                                       const uint8_t *mac_key, size_t *size);
bool asyncrt__manifest_decode(const void *data, size_t size, const uint8_t key1[32], const uint8_t *mac_key,
                             asyncrt_manifest *out, char *why, size_t why_size);
void asyncrt__manifest_free(asyncrt_manifest *m);

/* The result keys a manifest names, unchecked (no digest or MAC: eviction
 * only needs to know which entries go with it). Up to MAX_SETS; 0 when it
 * does not parse. */
size_t asyncrt__manifest_result_keys(const void *data, size_t size, uint8_t keys[ASYNCRT_MANIFEST_MAX_SETS][32]);

#endif
