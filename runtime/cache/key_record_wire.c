/* A key record's bytes on the remote (key_record.h, "on the wire"): the
 * source name, then the record as key_record.c writes one in its side file
 * ("asyncrt key records 1", the key line, the lines), each length-prefixed
 * (codec.h); read back with key_record.c's own parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "format.h"
#include "key_record.h"

unsigned char *asyncrt__key_record_wire_encode(const char *source_name, const uint8_t key1[32], int64_t when,
                                              const asyncrt_string_list *lines, size_t *size)
{
    if (lines->failed) return NULL;
    asyncrt_key_record r = {.when = when, .lines = *lines}; /* lines borrowed */
    memcpy(r.key1, key1, 32);
    char *head = asyncrt__format("asyncrt key records %d\n", ASYNCRT_KEY_RECORDS_FORMAT);
    char *text = asyncrt__key_record_text(&r);
    asyncrt_writer w = {0};
    if (head && text) {
        asyncrt__put_str(&w, source_name);
        asyncrt__put_u64(&w, strlen(head) + strlen(text));
        asyncrt__put(&w, head, strlen(head));
        asyncrt__put(&w, text, strlen(text));
    }
    bool ok = head && text && !w.failed;
    free(head);
    free(text);
    if (!ok) {
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
    if (*source_name) asyncrt__key_record_name_digest(*source_name, d);
    if (!*source_name || !text || rd.left)
        snprintf(why, why_size, "key record: malformed");
    else if (memcmp(d, name_digest, 32) != 0)
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
