/* A remote cache value (remote_cache.h): what the disk cache holds for one
 * compile, the manifest's dependency set (sealed under key1) and the entry
 * (sealed under the set's result key), in the codec's sealed container
 * ("ASYNCRTR", format 2, key1, length) with an HMAC-SHA-256 under the
 * fleet's key over all of it: the header (kind, format, key1) and the payload
 * (the set, and the entry with its arch, kind and image). One key's value
 * served under another key fails the MAC, before the inner seals' keys are
 * looked at. */
#ifndef ASYNCRT_REMOTE_VALUE_H
#define ASYNCRT_REMOTE_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache_manifest.h"
#include "program.h"

/* The value for one set and its program (program->key = deps->result_key);
 * NULL when out of memory. */
unsigned char *asyncrt__remote_value_encode(const uint8_t mac_key[32], const uint8_t key1[32],
                                           const asyncrt_dep_set *deps, const asyncrt_program *p, size_t *size);

/* The value's one set (*m) and program, every bound, seal and the MAC
 * checked; false with why for anything over max bytes, unsigned, truncated
 * or malformed. */
bool asyncrt__remote_value_decode(const uint8_t mac_key[32], const uint8_t key1[32], const unsigned char *data,
                                  size_t size, size_t max, asyncrt_manifest *m, asyncrt_program **program, char *why,
                                  size_t why_size);

/* Whether every file of the set holds, here, the content recorded where it
 * was compiled (each is re-hashed: another machine's stat data proves
 * nothing; a per-process memo by path and stat spares re-hashing a header
 * the kernels share); then the set takes this machine's stat data, so that
 * later lookups here stat instead of hashing. A stale or foreign set fails. */
bool asyncrt__remote_value_fits(asyncrt_dep_set *set, char *why, size_t why_size);

#endif
