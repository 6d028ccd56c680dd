/* Key records on the remote cache (issue 36; docs/cache.md, "Why a miss"):
 * what each compile stored to the remote was keyed by, so that a machine's
 * miss can be compared with the nearest compile of the fleet, not only with
 * its own. The client stores and fetches opaque records (their bytes are
 * cache/key_record_wire.h's); it seals, bounds and verifies them.
 *
 * One Redis list per source name, PREFIX:rec:<64 hex: SHA-256 of the source
 * name>, newest first, at most ASYNCRT_REMOTE_RECORDS_MAX elements, one per
 * key1. A put is one EVAL that pushes, drops the older element of the same
 * key1 and trims: atomic on the server, so writers on many machines never
 * lose each other's records (a read-modify-write of one blob would, and a
 * WATCH retry loop would spin under contention). A key of another type (not
 * ours) is left alone, never overwritten.
 *
 * Each element is sealed as values are (codec.h: kind ASYNCRT_RECORD_MAGIC,
 * the seal's key the record's key1, HMAC-SHA-256 under the fleet's key).
 * The server is hostile until verified: the EVAL that reads hands back, in
 * place of an element over ASYNCRT_REMOTE_RECORD_MAX bytes, only its length,
 * and the reply is read within those bounds (resp.h) by the operation's
 * deadline; each element's seal is checked before its bytes are used, and
 * what fails is refused, counted (rejected) and said, never used. Records
 * only explain misses: nothing else trusts them. */
#ifndef ASYNCRT_REMOTE_RECORDS_H
#define ASYNCRT_REMOTE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remote.h"

#define ASYNCRT_REMOTE_RECORDS_MAX 8
#define ASYNCRT_REMOTE_RECORD_MAX ((size_t)64 << 10) /* bytes of one sealed element */

/* Stores payload as the newest record of key1 in the list of name_digest
 * (unless read-only). False with why (not stored). */
bool asyncrt__remote_records_put(asyncrt_remote *r, const uint8_t name_digest[32], const uint8_t key1[32],
                                 const unsigned char *payload, size_t size, char *why, size_t why_size);

/* One verified record: the key1 its seal names, and its payload (malloc'd). */
typedef struct asyncrt_remote_record {
    uint8_t key1[32];
    unsigned char *payload;
    size_t size;
} asyncrt_remote_record;

/* The list of name_digest, newest first: the verified ones into out (at
 * most max, *count of them); *refused counts the others, the first one's
 * reason in why ("" none). NOTHING with none there; ERROR when the server
 * failed (why). */
asyncrt_remote_got asyncrt__remote_records_get(asyncrt_remote *r, const uint8_t name_digest[32],
                                               asyncrt_remote_record *out, size_t max, size_t *count,
                                               size_t *refused, char *why, size_t why_size);
void asyncrt__remote_records_free(asyncrt_remote_record *recs, size_t count);

/* Pull walks the lists with asyncrt__remote_scan_kind(r, "rec", ...). */

#endif
