/* The remote cache's client (issue 26): values and leases on a shared Redis.
 * See docs/cache.md, "The remote cache". It knows nothing of the disk cache: a
 * value is what the cache hands it, two sealed blobs under key1 (the
 * manifest's dependency set and the entry) wrapped in the codec's sealed
 * container with an HMAC-SHA-256 under the fleet's key
 * (ASYNCRT_REMOTE_CACHE_KEY_FILE; remote_value.h has the layout). The cache's
 * remote tier (cache/remote_tier.h) decides what to get, put and lease, and
 * checks what the inner seals hold.
 *
 * Faults cost time, never a result: each operation has one deadline, the
 * operation timeout (plus the connect timeout when it connects), for all of
 * it; a shard that cannot be connected, or that failed three operations in
 * a row, is switched off for the process with one log line (a circuit
 * breaker).
 *
 * Values are written with SET NX, so a machine with another key file never
 * overwrites the fleet's values (nor they its); a value this process verified
 * and found stale for its own headers (asyncrt__remote_note_stale) is the one
 * a put may replace, and only while it is still there.
 *
 * Leases (the fleet's single flight, PREFIX:l:<hex key1>): SET NX PX
 * lease-wait, holding this process's token; given up only while it still
 * holds the token. */
#ifndef ASYNCRT_REMOTE_H
#define ASYNCRT_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asyncrt/runtime.h"
#include "diag.h"
#include "remote_config.h"
#include "remote_redis.h"

typedef struct asyncrt_remote asyncrt_remote;

/* The counters; ASYNCRT_RC_KEPT is the tally's only: the public stats
 * struct's size is ABI. */
enum {
    ASYNCRT_RC_HITS, ASYNCRT_RC_MISSES, ASYNCRT_RC_ERRORS, ASYNCRT_RC_REJECTED, ASYNCRT_RC_STORES,
    ASYNCRT_RC_LEASE_WAITS, ASYNCRT_RC_BYTES_READ, ASYNCRT_RC_BYTES_WRITTEN, ASYNCRT_RC_TIME_US, ASYNCRT_RC_KEPT,
    ASYNCRT_RC_COUNT
};

/* PREFIX:kind:<64 hex>, the name of a value ("v") or a lease ("l"). */
#define ASYNCRT_REMOTE_NAME_SIZE (ASYNCRT_REMOTE_PREFIX_MAX + 72)
/* Larger values are refused unread. */
#define ASYNCRT_REMOTE_VALUE_MAX ((size_t)64 << 20)

/* A remote for spec (remote_config.h) keyed by the secret in key_file
 * (asyncrt__file_read_private's rules), logging to diag (which outlives
 * it). Opens hiredis, does not connect. NULL with why (and *status:
 * INVALID_ARGUMENT for a bad spec or key, UNSUPPORTED without hiredis,
 * OUT_OF_MEMORY). */
asyncrt_remote *asyncrt__remote_create(const char *spec, const char *key_file, const asyncrt_diag *diag,
                                      asyncrt_status *status, char *why, size_t why_size);
/* A remote that was asked for and refused: it does nothing, and its stats
 * say why (NULL when out of memory). */
asyncrt_remote *asyncrt__remote_refused(const char *why);
/* Logs its counters at ASYNCRT_LOG=2 and frees it. NULL is fine. */
void asyncrt__remote_destroy(asyncrt_remote *r);
/* Its counters and state (r NULL: "off", none configured). Thread-safe. */
void asyncrt__remote_stats(asyncrt_remote *r, asyncrt_remote_cache_stats *out);
/* Every counter (for the tally), and one added to (the tier counts hits,
 * misses and lease waits). */
void asyncrt__remote_counters(const asyncrt_remote *r, uint64_t out[ASYNCRT_RC_COUNT]);
void asyncrt__remote_count(asyncrt_remote *r, int which, uint64_t n);

/* Configured and not refused; writable: and not read-only. */
bool asyncrt__remote_usable(const asyncrt_remote *r);
bool asyncrt__remote_writable(const asyncrt_remote *r);
/* lease-wait in ms (0: no leases); the name of key1's value or lease, for messages. */
int asyncrt__remote_lease_wait_ms(const asyncrt_remote *r);
void asyncrt__remote_name(const asyncrt_remote *r, const char *kind, const uint8_t key1[32],
                          char out[ASYNCRT_REMOTE_NAME_SIZE]);

/* What a get found. A value's blobs point into data, which it owns. */
typedef enum { ASYNCRT_REMOTE_NOTHING, ASYNCRT_REMOTE_VALUE, ASYNCRT_REMOTE_BAD, ASYNCRT_REMOTE_ERROR } asyncrt_remote_got;
typedef struct asyncrt_remote_value {
    unsigned char *data;
    size_t size;
    const unsigned char *manifest, *entry;
    size_t manifest_size, entry_size;
} asyncrt_remote_value;
void asyncrt__remote_value_free(asyncrt_remote_value *v);

/* GET of key1's value, its size bound and its MAC checked (remote_value.h):
 * VALUE with *v; NOTHING; BAD when refused (counted and logged, and noted
 * for the put after the compile, unless quiet: the lease's re-checks of a
 * value refused once); ERROR when the server failed (err says why). */
asyncrt_remote_got asyncrt__remote_get(asyncrt_remote *r, const uint8_t key1[32], bool quiet,
                                       asyncrt_remote_value *v, char err[256]);
/* A value get returned that its reader refused (an inner seal): counted,
 * logged and noted as get's own refusals are (quiet as there). */
void asyncrt__remote_refuse(asyncrt_remote *r, const uint8_t key1[32], bool quiet, const char *why);
/* A verified value that does not fit this machine: the one value a put of
 * key1 may replace, while it is still there. */
void asyncrt__remote_note_stale(asyncrt_remote *r, const uint8_t key1[32], const asyncrt_remote_value *v);

/* Stores the value of manifest and entry under key1 (unless read-only)
 * where the key is absent (SET NX), or over the value noted stale: a value
 * there already is kept, counted (kept) and, where this process refused it,
 * a warning; *kept (when not NULL) says so. False with why. */
bool asyncrt__remote_put(asyncrt_remote *r, const uint8_t key1[32], const unsigned char *manifest,
                         size_t manifest_size, const unsigned char *entry, size_t entry_size, bool *kept, char *why,
                         size_t why_size);

/* Takes key1's lease: TAKEN (*leased set), HELD by another process, or FAILED. */
typedef enum { ASYNCRT_LEASE_TAKEN, ASYNCRT_LEASE_HELD, ASYNCRT_LEASE_FAILED } asyncrt_lease;
asyncrt_lease asyncrt__remote_lease(asyncrt_remote *r, const uint8_t key1[32], bool *leased);
/* Gives up the lease, if *leased. */
void asyncrt__remote_unlease(asyncrt_remote *r, const uint8_t key1[32], bool *leased);

/* Pull's walk: the shards, and one SCAN step of shard i over PREFIX:v:*
 * (*cursor 0 starts and, back at 0, ends; *rounds counts the steps, and
 * one past the limit fails: a server whose cursor never returns to 0 is not
 * followed forever). *keys (malloc'd, *count of them, in the reply's order)
 * gets the key1 each name holds, valid false for a name that holds none.
 * False with why. */
typedef struct asyncrt_remote_key {
    uint8_t key1[32];
    bool valid;
} asyncrt_remote_key;
size_t asyncrt__remote_shard_count(const asyncrt_remote *r);
bool asyncrt__remote_scan(asyncrt_remote *r, size_t shard, unsigned long long *cursor, size_t *rounds,
                          asyncrt_remote_key **keys, size_t *count, char *why, size_t why_size);
/* The same over PREFIX:kind:* ("rec": remote_records.h's lists). */
bool asyncrt__remote_scan_kind(asyncrt_remote *r, const char *kind, size_t shard, unsigned long long *cursor,
                               size_t *rounds, asyncrt_remote_key **keys, size_t *count, char *why,
                               size_t why_size);

/* For remote/'s other files (remote_records.h): one command of theirs,
 * run on the shard of shard_key as the client's own are (the connection,
 * one deadline, the breaker, counted and logged when it fails); false with
 * why when it failed or the shard is off; *result is the call's. And the
 * fleet's MAC key (32 bytes) that seals what they store. */
typedef asyncrt_redis_result (*asyncrt_remote_call)(asyncrt_redis *conn, void *arg, double deadline, char *why,
                                                    size_t why_size);
bool asyncrt__remote_run(asyncrt_remote *r, const uint8_t shard_key[32], asyncrt_remote_call call, void *arg,
                         asyncrt_redis_result *result, char *why, size_t why_size);
const uint8_t *asyncrt__remote_mac_key(const asyncrt_remote *r);

#endif
