/* The program cache: in this context's memory, then on disk. The thin front
 * over cache_key (key1's parts), cache_trace (what NVRTC read),
 * cache_manifest (dependency sets) and cache_store (the directory: eviction,
 * listing); base/safe_io.h checks the directory and reads and writes it.
 *
 * Lookup: key1 -> the newest dependency set whose files still hold their
 * recorded content -> the program stored under that set's result key.
 *
 * The cache owns its directory, its memory list and counters; it reports
 * through its owner's diag.
 *
 * Thread safety: asyncrt__cache_find, asyncrt__cache_store, asyncrt__cache_clear
 * and asyncrt__cache_stats may be called concurrently on one cache.
 * A mutex guards the in-memory list and the directory check; it is never
 * held while validating dependencies (stat, hashing) or reading and writing
 * files. Counters are atomics. asyncrt__cache_set_dir must not run
 * concurrently with them. Other processes are coordinated through the
 * filesystem only (rename into place, no locks). */
#ifndef ASYNCRT_CACHE_H
#define ASYNCRT_CACHE_H

#include <stdint.h>

#include "asyncrt/runtime.h"
#include "cache_config.h"
#include "cache_manifest.h"
#include "claims.h"
#include "diag.h"
#include "program.h"
#include "settings.h"

typedef struct asyncrt_cache asyncrt_cache;

/* From the settings, as cache_config.h reads them, with the remote tier
 * they ask for (ASYNCRT_REMOTE_CACHE: a refused one is a warning at level 1
 * and its stats say why). Warnings go to diag. NULL on OOM. */
asyncrt_cache *asyncrt__cache_create(const asyncrt_settings *env, const asyncrt_diag *diag);
/* Logs the counters at ASYNCRT_LOG=2 and frees everything (NULL: no-op). */
void asyncrt__cache_destroy(asyncrt_cache *c);

/* The disk cache's directory (NULL: none) and whether caching is on at all. */
bool asyncrt__cache_set_dir(asyncrt_cache *c, const char *dir); /* false: out of memory */
const char *asyncrt__cache_dir(const asyncrt_cache *c);
/* Uses dir_fd, a directory the caller opened and found trusted through
 * safe_io.h's asyncrt__dir_open_door (shared mode and its key as it
 * found them), as the disk cache, named `name` in messages: the cache keeps a
 * descriptor of its own and never opens a directory by name again (until
 * asyncrt__cache_set_dir). False when out of memory or descriptors. */
bool asyncrt__cache_adopt_dir(asyncrt_cache *c, const char *name, int dir_fd, bool shared, const uint8_t mac_key[32]);
bool asyncrt__cache_enabled(const asyncrt_cache *c);
void asyncrt__cache_stats(const asyncrt_cache *c, asyncrt_cache_stats *out);
/* Single flight per key among this cache's users (claims.h). */
asyncrt_claims *asyncrt__cache_claims(asyncrt_cache *c);
/* Where it logs (its owner's). */
const asyncrt_diag *asyncrt__cache_diag(const asyncrt_cache *c);

/* ---- the remote tier (remote_tier.h says how it works) -------------------- */

/* The remote cache spec names, keyed by key_file (NULL spec: none): the
 * cache's remote tier from now on, replacing (and tallying) the one it had.
 * False with why and *status (remote.h's create) when it cannot be used;
 * the old one then stays. Not concurrently with other calls on c. */
bool asyncrt__cache_set_remote(asyncrt_cache *c, const char *spec, const char *key_file, asyncrt_status *status,
                               char *why, size_t why_size);
/* Its counters and state; the tally of remote counters c's directory keeps
 * (kept, when not NULL: the stores that found a value there already). */
void asyncrt__cache_remote_stats(asyncrt_cache *c, asyncrt_remote_cache_stats *out);
void asyncrt__cache_remote_tally(asyncrt_cache *c, asyncrt_remote_cache_stats *out, uint64_t *kept);
/* remote_tier.h's find, claim, store, push and pull, on c's remote; release
 * gives up a lease claim took, if *leased. */
asyncrt_program *asyncrt__cache_remote_find(asyncrt_cache *c, const uint8_t key1[32]);
asyncrt_program *asyncrt__cache_remote_claim(asyncrt_cache *c, const uint8_t key1[32], bool *leased);
void asyncrt__cache_remote_store(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                                 const asyncrt_program *program);
void asyncrt__cache_remote_release(asyncrt_cache *c, const uint8_t key1[32], bool *leased);
bool asyncrt__cache_remote_push(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                                const asyncrt_program *program, bool *kept, char *why, size_t why_size);
bool asyncrt__cache_remote_pull(asyncrt_cache *c, size_t *installed, size_t *refused, size_t *stale, char *why,
                                size_t why_size);

/* A copy of the program cached for key1 whose recorded dependencies are
 * unchanged, or NULL on a miss. A damaged, foreign or oddly typed disk file
 * is a miss (logged, counted as rejected), never loaded. */
asyncrt_program *asyncrt__cache_find(asyncrt_cache *c, const uint8_t key1[32]);

/* Stores a copy under key1 with the files it read (deps); program->key must
 * be deps->result_key. In memory, and on disk when the directory is trusted;
 * then trims the directory to the cap. Failures degrade to "not cached" with
 * a warning at ASYNCRT_LOG=1: never a reason to fail. */
void asyncrt__cache_store(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                         const asyncrt_program *program);

/* Whether the cache directory may be used (checked and created as a
 * lookup would; a refusal is logged once). False without one. */
bool asyncrt__cache_dir_usable(asyncrt_cache *c);

/* The usable cache directory (as asyncrt__cache_dir_usable checks it) as a
 * descriptor of the caller's own (close it, and free *name: its name for
 * messages), and whether it is a shared one; -1 without one. The compile
 * workers get it, never the name, so they use the directory checked here. */
int asyncrt__cache_dir_fd(asyncrt_cache *c, char **name, bool *shared);

/* Empties the in-memory cache. */
void asyncrt__cache_clear(asyncrt_cache *c);

/* Side files: small text notes kept beside the entries (the NVRTC facts
 * memo, the speculative target hints, the ops' calibration), under a plain
 * file name (no '/') in the cache directory. The only way anything else touches that directory: only when it
 * is usable (checked, opened once, see safe_io.h), through its
 * descriptor, with the entries' checks (no symlink, no FIFO, bounded size,
 * unguessable temporary, atomic rename) and sealed like them (a digest, or
 * the team MAC in shared mode). read: the text (malloc'd), or NULL when
 * absent, refused (logged) or there is no usable directory. */
char *asyncrt__cache_read_side(asyncrt_cache *c, const char *name);
bool asyncrt__cache_write_side(asyncrt_cache *c, const char *name, const char *text);

#endif
