/* The key records' life (key_record.h) on a folder already open: side files
 * through side_io.c's checked helpers, records whose entry is gone skipped
 * and dropped, every read-merge-write under one bounded advisory lock, and
 * the records carried by export and import. Nothing here opens the cache
 * (key_record_store.c does), so the disk tier's store may sweep. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "cache_store.h"
#include "format.h"
#include "key_record.h"
#include "safe_io.h"
#include "sha256.h"

#define RECORDS_MAX_TEXT 60000 /* under side.c's 64 KiB with its seal */

/* Whether key1's entry is still in d: its manifest, a regular file. */
static bool live(const asyncrt_key_records_dir *d, const uint8_t key1[32])
{
    char name[72];
    struct stat st;
    asyncrt__sha256_hex(key1, name);
    strcat(name, ".mf");
    return fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* The records of `file` in d, those of `alive` (NULL: d) only; *raw: how
 * many the file holds, dead or alive. NULL text (absent or refused): 0, why. */
static size_t read_records(const asyncrt_key_records_dir *d, const asyncrt_key_records_dir *alive, const char *file,
                           asyncrt_key_record *out, size_t max, size_t *raw, char *why, size_t why_size)
{
    char *text = asyncrt__side_read_at(d->fd, d->mac, file, why, why_size);
    size_t n = asyncrt__key_records_parse(text, out, max), kept = 0;
    free(text);
    for (size_t i = 0; i < n; i++) {
        if (live(alive ? alive : d, out[i].key1)) out[kept++] = out[i];
        else asyncrt__key_record_free(&out[i]);
    }
    if (raw) *raw = n;
    return kept;
}

size_t asyncrt__key_records_load_at(const asyncrt_key_records_dir *d, const char *file, asyncrt_key_record *out,
                                    size_t max)
{
    char why[256];
    size_t n = read_records(d, NULL, file, out, max, NULL, why, sizeof why);
    if (!n && why[0]) asyncrt__diag_log(d->diag, 1, "warning: ignoring cache side file %s/%s: %s", d->name, file, why);
    return n;
}

/* recs (in order, the first of each key1 kept, at most the count and the
 * size, the later ones dropped) as side file `file` of d; none (n == 0):
 * the file deleted. Called with the lock held. False (errno) when not
 * written, the file left as it was (the first record alone too big: EFBIG). */
static bool write_records(const asyncrt_key_records_dir *d, const char *file, const asyncrt_key_record *recs,
                          size_t n)
{
    char *text = asyncrt__format("asyncrt key records %d\n", ASYNCRT_KEY_RECORDS_FORMAT);
    size_t total = text ? strlen(text) : 0, kept = 0;
    for (size_t i = 0; text && i < n && kept < ASYNCRT_KEY_RECORDS_MAX; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) seen = memcmp(recs[j].key1, recs[i].key1, 32) == 0;
        char *t = seen ? NULL : asyncrt__key_record_text(&recs[i]);
        size_t len = t ? strlen(t) : 0;
        char *grown = t && total + len < RECORDS_MAX_TEXT ? realloc(text, total + len + 1) : NULL;
        if (grown) {
            memcpy(grown + total, t, len + 1);
            text = grown, total += len, kept++;
        }
        free(t);
        if (!seen && !grown) break; /* the oldest go first */
    }
    if (!kept && n) errno = text ? EFBIG : ENOMEM; /* the newest alone is too big: the file left as it is */
    bool ok = text && (kept ? asyncrt__side_write_at(d->fd, d->mac, file, text)
                            : !n && (unlinkat(d->fd, file, 0) == 0 || errno == ENOENT));
    if (!text) errno = ENOMEM;
    free(text);
    return ok;
}

static int lock(const asyncrt_key_records_dir *d, char *why, size_t why_size)
{
    return asyncrt__file_lock(d->fd, ASYNCRT_KEY_RECORDS_LOCK, d->mac ? 0660 : 0600, ASYNCRT_KEY_RECORDS_LOCK_MS, why,
                              why_size);
}

bool asyncrt__key_records_save_at(const asyncrt_key_records_dir *d, const char *source_name, const uint8_t key1[32],
                                  const asyncrt_string_list *lines)
{
    if (lines->failed) return false;
    char file[32], why[256];
    asyncrt__key_records_file(source_name, file);
    int held = lock(d, why, sizeof why);
    if (held < 0) {
        asyncrt__diag_log(d->diag, 1, "warning: key record of %s not kept in %s: %s", source_name, d->name, why);
        return false;
    }
    asyncrt_key_record recs[ASYNCRT_KEY_RECORDS_MAX + 1];
    recs[0].when = (int64_t)time(NULL), recs[0].lines = *lines; /* borrowed */
    memcpy(recs[0].key1, key1, 32);
    size_t n = 1 + asyncrt__key_records_load_at(d, file, recs + 1, ASYNCRT_KEY_RECORDS_MAX);
    bool ok = write_records(d, file, recs, n);
    if (!ok)
        asyncrt__diag_log(d->diag, 1, "warning: cannot write cache side file %s/%s: %s", d->name, file, strerror(errno));
    close(held);
    for (size_t i = 1; i < n; i++) asyncrt__key_record_free(&recs[i]);
    return ok;
}

/* Whether the last sweep (its stamp's mtime) is under `every` seconds old. */
static bool swept_lately(const asyncrt_key_records_dir *d, unsigned every)
{
    struct stat st;
    return every && fstatat(d->fd, ASYNCRT_KEY_RECORDS_SWEPT, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           time(NULL) - st.st_mtime < (time_t)every;
}

size_t asyncrt__key_records_sweep_at(const asyncrt_key_records_dir *d, unsigned every)
{
    char why[256];
    asyncrt_cache_listing l;
    if (swept_lately(d, every)) return 0;
    int held = lock(d, why, sizeof why);
    if (held < 0) {
        asyncrt__diag_log(d->diag, 1, "warning: key records in %s not swept: %s", d->name, why);
        return 0;
    }
    size_t changed = 0;
    if (!swept_lately(d, every) && asyncrt__cache_scan_at(d->fd, &l)) {
        asyncrt__side_write_at(d->fd, d->mac, ASYNCRT_KEY_RECORDS_SWEPT, "swept\n"); /* none: the next one sweeps */
        for (size_t i = 0; i < l.count; i++) {
            if (!l.files[i].regular || !asyncrt__key_records_named(l.files[i].name)) continue;
            asyncrt_key_record recs[ASYNCRT_KEY_RECORDS_MAX];
            size_t raw = 0, n = read_records(d, NULL, l.files[i].name, recs, ASYNCRT_KEY_RECORDS_MAX, &raw, why,
                                             sizeof why);
            if (n < raw && write_records(d, l.files[i].name, recs, n)) changed++;
            for (size_t r = 0; r < n; r++) asyncrt__key_record_free(&recs[r]);
        }
        asyncrt__cache_listing_free(&l);
    }
    close(held);
    return changed;
}

/* Whether every record's source name (where it says one) is the file's. */
static bool names_match(const asyncrt_key_record *recs, size_t n, const char *file, char *why, size_t why_size)
{
    for (size_t i = 0; i < n; i++) {
        char *name = asyncrt__key_value(&recs[i].lines, "source name"), expect[32];
        if (name) asyncrt__key_records_file(name, expect);
        bool ok = !name || strcmp(expect, file) == 0;
        if (!ok) asyncrt__say(why, why_size, "a record of source name \"%.80s\" is kept in %s, not %s", name, expect, file);
        free(name);
        if (!ok) return false;
    }
    return true;
}

static int newer_first(const void *a, const void *b)
{
    const asyncrt_key_record *x = a, *y = b;
    return x->when != y->when ? (x->when > y->when ? -1 : 1) : 0;
}

asyncrt_status asyncrt__key_records_transfer_at(const asyncrt_key_records_dir *from, const asyncrt_key_records_dir *to,
                                                const char *file, bool into_cache, char *why, size_t why_size)
{
    asyncrt_key_record recs[2 * ASYNCRT_KEY_RECORDS_MAX];
    size_t raw = 0, n = 0, ours = 0;
    int held = -1;
    asyncrt_status s = ASYNCRT_ERROR_CORRUPT;
    if (!asyncrt__key_records_named(file)) {
        asyncrt__say(why, why_size, "not named keys-<16 hex digits>");
        return s;
    }
    /* live where they come from, and (into a cache) where they go */
    n = read_records(from, into_cache ? to : from, file, recs, ASYNCRT_KEY_RECORDS_MAX, &raw, why, why_size);
    if (!raw && !why[0]) asyncrt__say(why, why_size, "no key record of format %d", ASYNCRT_KEY_RECORDS_FORMAT);
    else if (raw && names_match(recs, n, file, why, why_size)) s = ASYNCRT_SUCCESS;
    if (s == ASYNCRT_SUCCESS && into_cache && (held = lock(to, why, why_size)) < 0) s = ASYNCRT_ERROR_IO;
    if (s == ASYNCRT_SUCCESS && into_cache) {
        ours = read_records(to, NULL, file, recs + n, ASYNCRT_KEY_RECORDS_MAX, NULL, why, why_size);
        why[0] = '\0'; /* ours unreadable: replaced */
        n += ours;
        qsort(recs, n, sizeof *recs, newer_first); /* theirs and ours by time; a tie: either */
    }
    if (s == ASYNCRT_SUCCESS && n && !write_records(to, file, recs, n)) {
        asyncrt__say(why, why_size, "%s", strerror(errno));
        s = ASYNCRT_ERROR_IO;
    }
    if (held >= 0) close(held);
    for (size_t i = 0; i < n; i++) asyncrt__key_record_free(&recs[i]);
    return s;
}
