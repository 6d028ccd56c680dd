/* One cache file read and checked as the library reads it, then decoded:
 * what verify, list, export and import each start from. */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

void cache_loaded_free(cache_loaded *l)
{
    asyncrt_program_destroy(l->program);
    if (l->is_manifest) asyncrt__manifest_free(&l->manifest);
}

bool cache_load(const char *dir, const asyncrt_cache_file *f, const uint8_t *mac, cache_loaded *out, char *why,
                size_t size)
{
    memset(out, 0, sizeof *out);
    if (f->kind != ASYNCRT_CACHE_ENTRY && f->kind != ASYNCRT_CACHE_MANIFEST) {
        snprintf(why, size, "not named <64 hex digits>.bin or .mf");
        return false;
    }
    if (!f->regular || !tool_key_from_name(f->name, out->key)) {
        snprintf(why, size, f->regular ? "malformed name" : "not a regular file");
        return false;
    }
    char *path = asyncrt__format("%s/%s", dir, f->name);
    size_t n = 0;
    why[0] = '\0';
    unsigned char *data = path ? asyncrt__cache_read_file(AT_FDCWD, path, ASYNCRT_CACHE_FILE_MAX, false, &n, why, size) : NULL;
    free(path);
    if (!data) {
        if (!why[0]) snprintf(why, size, "vanished while reading");
        return false;
    }
    bool ok;
    if (f->kind == ASYNCRT_CACHE_ENTRY) {
        ok = asyncrt__program_decode_keyed(data, n, out->key, mac, &out->program, why, size) == ASYNCRT_SUCCESS;
    } else {
        ok = out->is_manifest = asyncrt__manifest_decode(data, n, out->key, mac, &out->manifest, why, size);
    }
    free(data);
    return ok;
}
