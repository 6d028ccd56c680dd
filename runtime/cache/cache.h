/* The program cache and its tiers, behind one facade: a lookup asks memory,
 * then the disk, then the remote (installing a remote hit on disk); a store
 * writes memory and the disk, then the remote; single flight holds a key
 * for one compiler at a time, among this process's threads (claims.h) and
 * the fleet's processes (the remote's lease). The compile layer asks once
 * and stores once (compile/lookup.c, compile/store.c); cache_tiers.h is how
 * the tiers fit together.
 *
 * The cache keeps entries, never programs: an entry is the caller's payload
 * (compile/program.c's form of a program), sealed on disk under its result
 * key, with the dependency set it was compiled against (cache_manifest.h);
 * a lookup hands each entry it finds to the caller's reader, which makes the
 * program of it or refuses it (then the cache drops it and looks on).
 * Lookup: key1 -> the newest dependency set whose files still hold their
 * recorded content -> the entry stored under that set's result key.
 *
 * The cache owns its directory, its memory list, its remote client, counters
 * and claims; it reports through its owner's diag.
 *
 * Thread safety: lookup, lease, store, release, clear and the stats
 * may be called concurrently on one cache. set_dir, adopt_dir and
 * set_remote must not run concurrently with them. Other processes are
 * coordinated through the filesystem only (rename into place, no locks) and,
 * for the remote, its leases. */
#ifndef ASYNCRT_CACHE_H
#define ASYNCRT_CACHE_H

#include <stdint.h>

#include "asyncrt/cache.h"
#include "asyncrt/runtime.h"
#include "cache_config.h"
#include "cache_manifest.h"
#include "claims.h"
#include "diag.h"
#include "settings.h"

typedef struct asyncrt_cache asyncrt_cache;

/* From the settings, as cache_config.h reads them, with the remote tier
 * they ask for (ASYNCRT_REMOTE_CACHE: a refused one is a warning at level 1
 * and its stats say why). Warnings go to diag. NULL on OOM. */
asyncrt_cache *asyncrt__cache_create(const asyncrt_settings *env, const asyncrt_diag *diag);
/* Tallies the remote's counters, logs the counters at ASYNCRT_LOG=2 and
 * frees everything (NULL: no-op). */
void asyncrt__cache_destroy(asyncrt_cache *c);

/* ---- one compile's use: lookup, lease, store ---------------------------- */

/* An entry as the cache gives and takes it. */
typedef struct asyncrt_cache_entry {
    uint8_t key[32];               /* its result key (key2: cache_manifest.h) */
    unsigned char *payload;        /* malloc'd */
    size_t size;
    asyncrt_program_origin origin; /* where a lookup found it: the memory, disk or remote cache */
} asyncrt_cache_entry;
void asyncrt__cache_entry_free(asyncrt_cache_entry *e);

/* An entry's form on disk and in a remote value (entry.c): the codec's seal
 * ("ASYNCRTC", format 3) around the payload under its result key; mac_key
 * (32 bytes) for a shared cache's HMAC, NULL for SHA-256. open: the payload
 * copied into *out, out->key the key it was sealed under (key2, when key2 is
 * not NULL: NULL checks no key); false with why ("cache entry ...") when the
 * seal fails. */
unsigned char *asyncrt__cache_entry_seal(const unsigned char *payload, size_t size, const uint8_t key2[32],
                                         const uint8_t *mac_key, size_t *sealed_size);
bool asyncrt__cache_entry_open(const void *data, size_t size, const uint8_t key2[32], const uint8_t *mac_key,
                               asyncrt_cache_entry *out, char *why, size_t why_size);

/* Which tiers a use goes to: all, or this machine's (links: their results
 * are not shared with the fleet). */
typedef enum { ASYNCRT_TIERS_ALL, ASYNCRT_TIERS_LOCAL } asyncrt_cache_tiers;

/* What a compile holds on its key1 from a claiming lookup until its store
 * or release: this process's claim, then the fleet's lease. */
typedef struct asyncrt_cache_claim {
    uint8_t key1[32];
    bool held;   /* no other thread of this process compiles key1 meanwhile */
    bool leased; /* nor another process of the fleet (the remote's lease) */
} asyncrt_cache_claim;

/* A lookup's reader, the caller's: the entry's payload made into the
 * caller's object (user), or refused (false, with why): the cache never
 * looks inside a payload, its reader does, once per entry a tier gives. */
typedef bool (*asyncrt_cache_accept_fn)(const asyncrt_cache_entry *e, void *user, char *why, size_t why_size);

/* The entry cached for key1, as above, through accept: true when one was
 * accepted (user holds what accept made of it). A damaged, foreign or
 * oddly typed file or value is a miss (logged, counted as rejected), never
 * handed to accept. An entry accept refuses is dropped from the tiers it
 * reached, logged and counted as a damaged file is (a remote value is
 * refused as one whose seal failed), and the lookup goes on: one from
 * memory or the disk may be found again elsewhere (the remote); a refused
 * remote value is a miss. Only a writer that holds the digest or the key
 * can seal such a payload. claim (NULL: none) first waits while another
 * thread of this process holds key1, then holds it: let go at once on a
 * hit, else by the store or release that follows. Nothing with caching off. */
bool asyncrt__cache_lookup(asyncrt_cache *c, const uint8_t key1[32], asyncrt_cache_tiers tiers,
                           asyncrt_cache_claim *claim, asyncrt_cache_accept_fn accept, void *user);

/* Before compiling a key a claiming lookup missed: the fleet's single
 * flight. Takes the remote's lease, or waits for another process's result:
 * true when one came and accept took it (the claim is still held: release);
 * a refused one is dropped as lookup drops it. */
bool asyncrt__cache_lease(asyncrt_cache *c, asyncrt_cache_claim *claim, asyncrt_cache_accept_fn accept, void *user);

/* Stores the payload under key1 with the files it read (deps; the entry's
 * key is deps->result_key): memory, the disk when its directory is trusted
 * (then trimmed to the cap), and, with ASYNCRT_TIERS_ALL, the remote; then
 * lets claim (NULL: none) go. Failures degrade to "not cached" with a
 * warning at ASYNCRT_LOG=1: never a reason to fail. */
void asyncrt__cache_store(asyncrt_cache *c, const uint8_t key1[32], asyncrt_cache_tiers tiers,
                          const asyncrt_dep_set *deps, const unsigned char *payload, size_t size,
                          asyncrt_cache_claim *claim);

/* Lets claim go (lease, then claim), where held: a compile that stores nothing. */
void asyncrt__cache_release(asyncrt_cache *c, asyncrt_cache_claim *claim);

/* ---- settings, state, stats --------------------------------------------- */

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
/* A module loaded on a device (load/module.c), and whether the driver was
 * handed the image for it (false: the device took it from a shared library). */
void asyncrt__cache_count_load(asyncrt_cache *c, bool image);
/* The disk tier as asyncrt_context_cache_info reports it (cache_info.c):
 * the directory checked as a lookup checks it; out->size is left alone. */
void asyncrt__cache_info(asyncrt_cache *c, asyncrt_cache_info *out);
/* What the settings made of it: shared mode, the cap, and whether
 * ASYNCRT_CACHE_MAX_BYTES was malformed (the default applies). */
void asyncrt__cache_settings(const asyncrt_cache *c, bool *shared, uint64_t *max_bytes, bool *max_malformed);
/* True when c's disk cache is the directory open as dir_fd (the same
 * inode), as asyncrt__cache_adopt_dir leaves it. */
bool asyncrt__cache_holds_dir(asyncrt_cache *c, int dir_fd);
/* Where it logs (its owner's). */
const asyncrt_diag *asyncrt__cache_diag(const asyncrt_cache *c);

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

/* ---- the remote tier (remote_tier.h says how it works) -------------------- */

/* The remote cache spec names, keyed by key_file (NULL spec: none): the
 * cache's remote tier from now on, replacing (and tallying) the one it had.
 * False with why and *status (remote.h's create) when it cannot be used;
 * the old one then stays. */
bool asyncrt__cache_set_remote(asyncrt_cache *c, const char *spec, const char *key_file, asyncrt_status *status,
                               char *why, size_t why_size);
/* Its counters and state; the tally of remote counters c's directory keeps
 * (kept, when not NULL: the stores that found a value there already). */
void asyncrt__cache_remote_stats(asyncrt_cache *c, asyncrt_remote_cache_stats *out);
void asyncrt__cache_remote_tally(asyncrt_cache *c, asyncrt_remote_cache_stats *out, uint64_t *kept);
/* The tally of the directory dir_fd (trusted: asyncrt__dir_open_door),
 * named `name`, as asyncrt__cache_remote_tally reads its own. */
void asyncrt__cache_remote_tally_at(const char *name, int dir_fd, bool shared, const uint8_t mac_key[32],
                                    const asyncrt_diag *diag, asyncrt_remote_cache_stats *out, uint64_t *kept);
/* asyncrt-cache push and pull. push: one set and its entry's payload under
 * key1 (false with why); *kept (when not NULL) says a value was there
 * already, which was left as it is (SET NX), so nothing was stored. pull:
 * every value of every shard installed (counts in *installed, *refused,
 * *stale; *present: verified, and the disk held that very entry already:
 * not written again); false when a shard failed. */
bool asyncrt__cache_remote_push(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                                const unsigned char *payload, size_t size, bool *kept, char *why, size_t why_size);
bool asyncrt__cache_remote_pull(asyncrt_cache *c, size_t *installed, size_t *refused, size_t *stale,
                                size_t *present, char *why, size_t why_size);

/* ---- side files (side.c) ------------------------------------------------- */

/* Small text notes kept beside the entries (the NVRTC facts memo, the
 * speculative target hints, the ops' calibration, the remote tally), under a
 * plain file name (no '/') in the cache directory. The only way anything
 * else touches that directory: only when it is usable (checked, opened once,
 * see safe_io.h), through its descriptor, with the entries' checks (no
 * symlink, no FIFO, bounded size, unguessable temporary, atomic rename) and
 * sealed like them (a digest, or the team MAC in shared mode). read: the
 * text (malloc'd), or NULL when absent, refused (logged) or there is no
 * usable directory. */
char *asyncrt__cache_read_side(asyncrt_cache *c, const char *name);
bool asyncrt__cache_write_side(asyncrt_cache *c, const char *name, const char *text);
/* The same on a folder already open (dir_fd) and sealed under mac (a shared
 * cache's team MAC; NULL: plain SHA-256): for the calls that hold a folder,
 * not a cache (asyncrt_cache_dir's, an export folder). read: NULL with why
 * ("" when absent), nothing logged; write: false with errno. */
char *asyncrt__side_read_at(int dir_fd, const uint8_t *mac, const char *name, char *why, size_t why_size);
bool asyncrt__side_write_at(int dir_fd, const uint8_t *mac, const char *name, const char *text);

#endif
