/* A key record's bytes on the remote (key_record.h, "on the wire"): the
 * source name, then the record as key_record.c writes one in its side file
 * ("asyncrt key records 1", the key line, the lines), each length-prefixed
 * (codec.h); read back with key_record.c's own parser. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "key_record.h"
#include "sha256.h"

void asyncrt__key_record_name_digest(const char *source_name, uint8_t out[32])
{
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    asyncrt__sha256_update(&h, source_name, strlen(source_name));
    asyncrt__sha256_final(&h, out);
}

unsigned char *asyncrt__key_record_wire_encode(const char *source_name, const uint8_t key1[32], int64_t when,
                                              const asyncrt_string_list *lines, size_t *size)
{
    char hex[65], head[160];
    asyncrt__sha256_hex(key1, hex);
    snprintf(head, sizeof head, "asyncrt key records %d\nkey %s %" PRId64 "\n", ASYNCRT_KEY_RECORDS_FORMAT, hex, when);
    size_t n = strlen(head);
    for (size_t i = 0; i < lines->count; i++) n += strlen(lines->items[i]) + 1;
    asyncrt_writer w = {0};
    asyncrt__put_str(&w, source_name);
    asyncrt__put_u64(&w, n);
    asyncrt__put(&w, head, strlen(head));
    for (size_t i = 0; i < lines->count; i++) {
        asyncrt__put(&w, lines->items[i], strlen(lines->items[i]));
        asyncrt__put(&w, "\n", 1);
    }
    if (w.failed || lines->failed) {
        free(w.data);
        return NULL;
    }
    *size = w.size;
    return w.data;
}

bool asyncrt__key_record_wire_decode(const unsigned char *data, size_t size, const uint8_t key1[32],
                                     const uint8_t name_digest[32], char **source_name, asyncrt_key_record *out,
                                     char *why, size_t why_size)
{
    asyncrt_reader rd = {data, size, false};
    *source_name = asyncrt__take_str(&rd);
    char *text = asyncrt__take_str(&rd);
    uint8_t d[32];
    bool ok = false;
    size_t parsed = 0;
    if (!*source_name || !text || rd.left)
        snprintf(why, why_size, "key record: malformed");
    else if (asyncrt__key_record_name_digest(*source_name, d), memcmp(d, name_digest, 32) != 0)
        snprintf(why, why_size, "key record: of another source name than its list's");
    else if ((parsed = asyncrt__key_records_parse(text, out, 1)) != 1)
        snprintf(why, why_size, "key record: not one record of format %d", ASYNCRT_KEY_RECORDS_FORMAT);
    else if (memcmp(out->key1, key1, 32) != 0)
        snprintf(why, why_size, "key record: its key line names another key than its seal");
    else
        ok = true;
    if (!ok && parsed) asyncrt__key_record_free(out);
    if (!ok) {
        free(*source_name);
        *source_name = NULL;
    }
    free(text);
    return ok;
}
