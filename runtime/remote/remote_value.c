/* Remote values (remote_value.h): the container around two blobs. */
#include "remote_value.h"

#include <stdio.h>

#include "codec.h"

#define VALUE_MAGIC ASYNCRT_VALUE_MAGIC
#define VALUE_FORMAT ASYNCRT_VALUE_FORMAT /* 2: the MAC covers the header, key1 with it */

unsigned char *asyncrt__remote_value_wrap(const uint8_t mac_key[32], const uint8_t key1[32],
                                         const unsigned char *manifest, size_t manifest_size,
                                         const unsigned char *entry, size_t entry_size, size_t *size)
{
    asyncrt_writer w = {0};
    asyncrt__seal_begin(&w);
    asyncrt__put_u64(&w, manifest_size);
    asyncrt__put(&w, manifest, manifest_size);
    asyncrt__put_u64(&w, entry_size);
    asyncrt__put(&w, entry, entry_size);
    w.failed |= !manifest || !entry;
    return asyncrt__seal_end(&w, VALUE_MAGIC, VALUE_FORMAT, key1, mac_key, size);
}

bool asyncrt__remote_value_unwrap(const uint8_t mac_key[32], const uint8_t key1[32], const unsigned char *data,
                                  size_t size, size_t max, const unsigned char **manifest, size_t *manifest_size,
                                  const unsigned char **entry, size_t *entry_size, char *why, size_t why_size)
{
    const unsigned char *payload;
    size_t payload_size;
    if (size > max) {
        snprintf(why, why_size, "remote value: %zu bytes, more than %zu", size, max);
        return false;
    }
    if (!asyncrt__seal_open("remote value", data, size, VALUE_MAGIC, VALUE_FORMAT, key1, mac_key, &payload,
                           &payload_size, NULL, why, why_size))
        return false;
    asyncrt_reader rd = {payload, payload_size, false};
    *manifest_size = asyncrt__take_u64(&rd);
    *manifest = asyncrt__take(&rd, *manifest_size);
    *entry_size = asyncrt__take_u64(&rd);
    *entry = asyncrt__take(&rd, *entry_size);
    if (rd.bad || rd.left) {
        snprintf(why, why_size, "remote value: malformed payload");
        return false;
    }
    return true;
}
