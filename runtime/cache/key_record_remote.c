/* The key records' remote tier (key_record_remote.h). */
#include "key_record_remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache_explain.h"
#include "cache_tiers.h"
#include "remote_records.h"
#include "sha256.h"

void asyncrt__key_record_push(asyncrt_cache *c, const char *source_name, const uint8_t key1[32],
                              const asyncrt_string_list *lines)
{
    if (!c->remote || !asyncrt__remote_writable(c->remote)) return;
    uint8_t digest[32];
    size_t size = 0;
    char why[300];
    asyncrt__key_record_name_digest(source_name, digest);
    unsigned char *payload = asyncrt__key_record_wire_encode(source_name, key1, (int64_t)time(NULL), lines, &size);
    if (!payload) snprintf(why, sizeof why, "out of memory");
    if (!payload || !asyncrt__remote_records_put(c->remote, digest, key1, payload, size, why, sizeof why))
        asyncrt__diag_log(c->diag, 2, "remote cache: the key record of %s not stored: %s", source_name, why);
    free(payload);
}

/* The records of the list of `digest`, verified and decoded, one per key1
 * (the newest): into out, *refused and the first reason in why. */
static asyncrt_remote_got fetch(asyncrt_cache *c, const uint8_t digest[32], asyncrt_key_record *out, char **names,
                                size_t max, size_t *count, size_t *refused, char *why, size_t why_size)
{
    asyncrt_remote_record recs[ASYNCRT_REMOTE_RECORDS_MAX];
    size_t n = 0;
    *count = 0;
    asyncrt_remote_got got = asyncrt__remote_records_get(c->remote, digest, recs, ASYNCRT_REMOTE_RECORDS_MAX, &n,
                                                         refused, why, why_size);
    for (size_t i = 0; i < n && *count < max; i++) {
        bool seen = false;
        for (size_t j = 0; j < *count; j++) seen |= memcmp(out[j].key1, recs[i].key1, 32) == 0;
        char one[300], *name = NULL;
        if (seen) continue;
        if (asyncrt__key_record_wire_decode(recs[i].payload, recs[i].size, recs[i].key1, digest, &name,
                                            &out[*count], one, sizeof one)) {
            if (names) names[*count] = name;
            else free(name);
            (*count)++;
        } else if (!(*refused)++) {
            snprintf(why, why_size, "%s", one);
        }
    }
    asyncrt__remote_records_free(recs, n);
    if (got == ASYNCRT_REMOTE_VALUE && !*count) got = ASYNCRT_REMOTE_BAD;
    if (*refused) {
        char hex[65];
        asyncrt__sha256_hex(digest, hex);
        asyncrt__diag_log(c->diag, 1, "warning: remote cache: %zu key record%s of the list %.16s... refused "
                          "(not used): %s", *refused, *refused == 1 ? "" : "s", hex, why);
    }
    return got;
}

size_t asyncrt__key_records_fetch(asyncrt_cache *c, const char *source_name, asyncrt_key_record *out, size_t max,
                                  char *note, size_t note_size)
{
    if (!c->remote || !asyncrt__remote_usable(c->remote)) {
        snprintf(note, note_size, "no usable remote cache (ASYNCRT_REMOTE_CACHE)");
        return 0;
    }
    uint8_t digest[32];
    size_t count = 0, refused = 0;
    char why[300] = "";
    asyncrt__key_record_name_digest(source_name, digest);
    asyncrt_remote_got got = fetch(c, digest, out, NULL, max, &count, &refused, why, sizeof why);
    if (got == ASYNCRT_REMOTE_ERROR)
        snprintf(note, note_size, "not asked: the remote failed: %s", why);
    else if (got == ASYNCRT_REMOTE_NOTHING)
        snprintf(note, note_size, "the remote holds no key record of %s", source_name);
    else if (refused)
        snprintf(note, note_size, "%zu key record%s of %s on the remote, %zu refused (not used): %s", count,
                 count == 1 ? "" : "s", source_name, refused, why);
    else
        snprintf(note, note_size, "%zu key record%s of %s on the remote", count, count == 1 ? "" : "s", source_name);
    return count;
}

/* Whether key1 is among the n records of local. */
static bool among(const asyncrt_key_record *local, size_t n, const uint8_t key1[32])
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(local[i].key1, key1, 32) == 0) return true;
    return false;
}

/* One list: its records of entries held here, and not recorded here yet, written. */
static void pull_list(asyncrt_cache *c, const uint8_t digest[32], size_t *written)
{
    asyncrt_key_record recs[ASYNCRT_REMOTE_RECORDS_MAX], local[ASYNCRT_KEY_RECORDS_MAX];
    char *names[ASYNCRT_REMOTE_RECORDS_MAX] = {0}, why[300];
    size_t n = 0, refused = 0;
    fetch(c, digest, recs, names, ASYNCRT_REMOTE_RECORDS_MAX, &n, &refused, why, sizeof why);
    /* one source name per list (each record's name hashes to it): its local records read once */
    size_t here = n ? asyncrt__key_records_load(c, names[0], local, ASYNCRT_KEY_RECORDS_MAX) : 0;
    for (size_t i = n; i-- > 0;) { /* the oldest first: the local file keeps the newest first too */
        asyncrt_key_diff stale;
        asyncrt_key1_state held = asyncrt__cache_key1_state(c, recs[i].key1, &stale);
        asyncrt__key_diff_free(&stale, 1);
        if (held == ASYNCRT_KEY1_HIT && !among(local, here, recs[i].key1) &&
            asyncrt__key_records_save(c, names[i], recs[i].key1, &recs[i].lines))
            (*written)++;
        asyncrt__key_record_free(&recs[i]);
        free(names[i]);
    }
    for (size_t i = 0; i < here; i++) asyncrt__key_record_free(&local[i]);
}

bool asyncrt__key_records_pull(asyncrt_cache *c, size_t *written, char *why, size_t why_size)
{
    *written = 0;
    asyncrt_remote *r = c->remote;
    if (!r || !asyncrt__remote_usable(r)) {
        snprintf(why, why_size, "no usable remote cache");
        return false;
    }
    for (size_t i = 0; i < asyncrt__remote_shard_count(r); i++) {
        unsigned long long cursor = 0;
        size_t rounds = 0;
        do {
            asyncrt_remote_key *lists;
            size_t n;
            if (!asyncrt__remote_scan_kind(r, "rec", i, &cursor, &rounds, &lists, &n, why, why_size)) return false;
            for (size_t k = 0; k < n; k++)
                if (lists[k].valid) pull_list(c, lists[k].key1, written);
            free(lists);
        } while (cursor != 0);
    }
    return true;
}
