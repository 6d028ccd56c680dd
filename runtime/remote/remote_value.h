/* A remote cache value (remote.h): what the disk cache holds for one
 * compile, the manifest's dependency set (sealed under key1) and the entry
 * (sealed under the set's result key), in the codec's sealed container
 * ("ASYNCRTR", format 2, key1, length) with an HMAC-SHA-256 under the
 * fleet's key over all of it: the header (kind, format, key1) and the payload
 * (the two blobs, each u64 length + bytes). One key's value served under
 * another key fails the MAC, before the inner seals' keys are looked at;
 * those are the cache's to check (cache/remote_tier.c). */
#ifndef ASYNCRT_REMOTE_VALUE_H
#define ASYNCRT_REMOTE_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value around the two blobs; NULL when out of memory (or when either
 * blob is NULL, as when encoding it failed). */
unsigned char *asyncrt__remote_value_wrap(const uint8_t mac_key[32], const uint8_t key1[32],
                                         const unsigned char *manifest, size_t manifest_size,
                                         const unsigned char *entry, size_t entry_size, size_t *size);

/* The two blobs, pointing into data, every bound and the MAC checked; false
 * with why for anything over max bytes, unsigned, truncated or malformed. */
bool asyncrt__remote_value_unwrap(const uint8_t mac_key[32], const uint8_t key1[32], const unsigned char *data,
                                  size_t size, size_t max, const unsigned char **manifest, size_t *manifest_size,
                                  const unsigned char **entry, size_t *entry_size, char *why, size_t why_size);

#endif
