/* The remote cache tier (issue 26): memory, then the disk cache, then a
 * shared Redis. See README, "The remote cache".
 *
 * A remote value, PREFIX:v:<hex key1>, holds what the disk cache holds for
 * one compile: the manifest's dependency set (sealed under key1) and the
 * entry (the image, sealed under the set's result key), wrapped in the
 * codec's sealed container ("ASYNCRTR", format 2, key1, length) with an
 * HMAC-SHA-256 under the fleet's key (ASYNCRT_REMOTE_CACHE_KEY_FILE). A value
 * is used only when its HMAC, bounds and both inner seals check, and every
 * file of its dependency set holds, on this machine, the content recorded
 * (re-hashed here; then the set takes this machine's stat data). It is then
 * installed through the disk cache's own store (cache.h), so later lookups
 * are ordinary memory or disk hits. Anything else is ignored and counted,
 * and left in place: values are written with SET NX, so a machine with
 * another key file never overwrites the fleet's values (nor they its).
 *
 * Faults cost time, never a result: each operation has one deadline, the
 * operation timeout (plus the connect timeout when it connects), for all of
 * it; a shard that cannot be connected, or that
 * failed three operations in a row, is switched off for the process with
 * one log line (a circuit breaker).
 *
 * Fleet single flight: before compiling a key every process missed, a
 * process takes the lease PREFIX:l:<hex key1> (SET NX PX lease-wait); the
 * others poll for the value until it comes, the lease goes (they try to
 * take it), or lease-wait passes (they compile themselves). */
#ifndef ASYNCRT_REMOTE_CACHE_H
#define ASYNCRT_REMOTE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "asyncrt/runtime.h"
#include "cache.h"
#include "cache_manifest.h"
#include "diag.h"
#include "program.h"

typedef struct asyncrt_remote asyncrt_remote;

/* A remote cache for spec (remote_config.h) keyed by the secret in
 * key_file (asyncrt__file_read_private's rules), filling `cache` and
 * logging to diag (both outlive it). Opens hiredis, does not connect. NULL
 * with why (and *status: INVALID_ARGUMENT for a bad spec or key,
 * UNSUPPORTED without hiredis, OUT_OF_MEMORY). */
asyncrt_remote *asyncrt__remote_create(const char *spec, const char *key_file, asyncrt_cache *cache,
                                      const asyncrt_diag *diag, asyncrt_status *status, char *why,
                                      size_t why_size);
/* A remote that was asked for and refused: it does nothing, and its stats
 * say why (NULL when out of memory). */
asyncrt_remote *asyncrt__remote_refused(const char *why);
/* Adds its counters to its cache directory's tally (the side file
 * remote-stats, for asyncrt-cache stats) and frees it. NULL is fine. */
void asyncrt__remote_destroy(asyncrt_remote *r);
/* Its counters and state (r NULL: "off", none configured). Thread-safe. */
void asyncrt__remote_stats(asyncrt_remote *r, asyncrt_remote_cache_stats *out);

/* Each does nothing with r NULL or refused. */
/* After a local miss: the program the remote holds for key1, verified and
 * installed locally (origin ASYNCRT_ORIGIN_REMOTE_CACHE), or NULL. */
asyncrt_program *asyncrt__remote_find(asyncrt_remote *r, const uint8_t key1[32]);
/* Before compiling key1: the lease (*leased), or another process's
 * result after waiting for it, or NULL after waiting in vain. */
asyncrt_program *asyncrt__remote_claim(asyncrt_remote *r, const uint8_t key1[32], bool *leased);
/* After a compile stored locally: the same to the remote (unless
 * read-only), only where the key is absent (SET NX): a value there already
 * is kept, counted (kept) and, where this process refused it, a warning. */
void asyncrt__remote_store(asyncrt_remote *r, const uint8_t key1[32], const asyncrt_dep_set *deps,
                          const asyncrt_program *program);
/* Gives up a lease taken by claim, if *leased. */
void asyncrt__remote_release(asyncrt_remote *r, const uint8_t key1[32], bool *leased);

/* asyncrt-cache push/pull. push: one set and its entry under key1 (false
 * with why); *kept (when not NULL) says a value was there already, which
 * was left as it is (SET NX), so nothing was stored; pull: every value of
 * every shard installed (counts in *installed, *refused, *stale); false
 * when a shard failed. */
bool asyncrt__remote_push(asyncrt_remote *r, const uint8_t key1[32], const asyncrt_dep_set *deps,
                         const asyncrt_program *program, bool *kept, char *why, size_t why_size);
bool asyncrt__remote_pull(asyncrt_remote *r, size_t *installed, size_t *refused, size_t *stale, char *why,
                         size_t why_size);

/* The tally of remote-stats in cache's directory (zeros when none), and
 * (kept, when not NULL) the stores that found a value there already. */
void asyncrt__remote_stats_tally(asyncrt_cache *cache, asyncrt_remote_cache_stats *out, uint64_t *kept);

#endif
