/* Key records (key_record.h) in a context's cache directory: the disk
 * tier's folder opened, then key_record_life.c's calls on it. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "cache_store.h"
#include "cache_tiers.h"
#include "key_record.h"
#include "sha256.h"

/* c's directory as a records folder; -1 when it has none. */
static int open_cache(asyncrt_cache *c, asyncrt_key_records_dir *d, uint8_t mac_key[32], char **dir)
{
    bool shared = false; /* unset where the disk tier is off */
    int fd = asyncrt__disk_open(c, dir, mac_key, &shared);
    *d = (asyncrt_key_records_dir){fd, shared ? mac_key : NULL, c->diag, fd >= 0 ? *dir : NULL};
    return fd;
}

size_t asyncrt__key_records_load(asyncrt_cache *c, const char *source_name, asyncrt_key_record *out, size_t max)
{
    uint8_t mac_key[32];
    char *dir, file[32];
    asyncrt_key_records_dir d;
    if (open_cache(c, &d, mac_key, &dir) < 0) return 0;
    asyncrt__key_records_file(source_name, file);
    size_t n = asyncrt__key_records_load_at(&d, file, out, max);
    free(dir);
    close(d.fd);
    return n;
}

bool asyncrt__key_records_save(asyncrt_cache *c, const char *source_name, const uint8_t key1[32],
                               const asyncrt_string_list *lines)
{
    uint8_t mac_key[32];
    char *dir;
    asyncrt_key_records_dir d;
    if (open_cache(c, &d, mac_key, &dir) < 0) return false;
    bool ok = asyncrt__key_records_save_at(&d, source_name, key1, lines);
    free(dir);
    close(d.fd);
    return ok;
}

bool asyncrt__key_records_find(asyncrt_cache *c, const char *key_hex, asyncrt_key_record *out)
{
    uint8_t mac_key[32];
    char *dir;
    asyncrt_key_records_dir d;
    if (open_cache(c, &d, mac_key, &dir) < 0) return false;
    asyncrt_cache_listing l = {0};
    bool found = false;
    if (asyncrt__cache_scan_at(d.fd, &l)) {
        for (size_t i = 0; i < l.count && !found; i++) {
            if (!l.files[i].regular || !asyncrt__key_records_named(l.files[i].name)) continue;
            asyncrt_key_record recs[ASYNCRT_KEY_RECORDS_MAX];
            size_t n = asyncrt__key_records_load_at(&d, l.files[i].name, recs, ASYNCRT_KEY_RECORDS_MAX);
            for (size_t r = 0; r < n; r++) {
                char hex[65];
                asyncrt__sha256_hex(recs[r].key1, hex);
                if (!found && strcmp(hex, key_hex) == 0) {
                    *out = recs[r];
                    recs[r].lines = (asyncrt_string_list){0};
                    found = true;
                }
                asyncrt__key_record_free(&recs[r]);
            }
        }
        asyncrt__cache_listing_free(&l);
    }
    free(dir);
    close(d.fd);
    return found;
}
