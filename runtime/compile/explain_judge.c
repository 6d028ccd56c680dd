/* The verdict on a keyed job or a link's key (explain_report.h): the disk tier read for its
 * key1 (cache_explain.h); with nothing stored under it, the key records of
 * the same source name (key_record.h) compared and the nearest one, the
 * fewest differences, newest first, reported. Also the miss line that
 * lookup.c logs. Calls nothing of compile.c (no loop between them). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_explain.h"
#include "compile_job.h"
#include "explain_report.h"
#include "key_record.h"
#include "key_record_remote.h"
#include "sha256.h"

#define SHOWN_DIFFS 32

/* The record of recs[0..n) nearest to `now` (the fewest differences, the
 * newest first), other than key1 itself: its index into *at, its total of
 * differences returned; SIZE_MAX when none compares. */
static size_t pick(const asyncrt_key_record *recs, size_t n, const uint8_t key1[32], const asyncrt_string_list *now,
                   size_t *at)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(recs[i].key1, key1, 32) == 0) continue; /* stored, then evicted or cleared: not "nearest" */
        size_t total = asyncrt__key_diff(&recs[i].lines, now, NULL, 0);
        if (total < best) best = total, *at = i;
    }
    return best;
}

/* The nearest record of source_name to `now`, other than key1 itself:
 * its differences into d (up to SHOWN_DIFFS), the total returned, its key
 * into nearest; SIZE_MAX when there is no record to compare. */
static size_t nearest_record(asyncrt_cache *c, const char *source_name, const uint8_t key1[32],
                             const asyncrt_string_list *now, asyncrt_key_diff *d, char nearest[65])
{
    asyncrt_key_record recs[ASYNCRT_KEY_RECORDS_MAX];
    size_t n = asyncrt__key_records_load(c, source_name, recs, ASYNCRT_KEY_RECORDS_MAX), at = 0;
    size_t best = pick(recs, n, key1, now, &at);
    if (best != SIZE_MAX) {
        asyncrt__key_diff(&recs[at].lines, now, d, SHOWN_DIFFS);
        asyncrt__sha256_hex(recs[at].key1, nearest);
    }
    for (size_t i = 0; i < n; i++) asyncrt__key_record_free(&recs[i]);
    return best;
}

/* explain --remote: the remote's records of source_name (key_record_remote.h)
 * against the local nearest (`best` differences, SIZE_MAX none). Where one
 * is strictly nearer, its differences replace d's and its key nearest's,
 * and *from_remote is set. note: what the remote held (or why not asked). */
static size_t remote_nearest(asyncrt_cache *c, const char *source_name, const uint8_t key1[32],
                             const asyncrt_string_list *now, size_t best, asyncrt_key_diff *d, char nearest[65],
                             bool *from_remote, char *note, size_t note_size)
{
    asyncrt_key_record recs[ASYNCRT_KEY_RECORDS_MAX];
    size_t n = asyncrt__key_records_fetch(c, source_name, recs, ASYNCRT_KEY_RECORDS_MAX, note, note_size), at = 0;
    size_t remote = pick(recs, n, key1, now, &at);
    if (remote < best) { /* a tie stays local: what this machine holds */
        asyncrt__key_diff_free(d, best < SHOWN_DIFFS ? best : SHOWN_DIFFS);
        asyncrt__key_diff(&recs[at].lines, now, d, SHOWN_DIFFS);
        asyncrt__sha256_hex(recs[at].key1, nearest);
        *from_remote = true;
        best = remote;
    }
    for (size_t i = 0; i < n; i++) asyncrt__key_record_free(&recs[i]);
    return best;
}

/* The verdict on a key and its record (explain_report.h). */
void asyncrt__explain_key(asyncrt_cache *c, const asyncrt_explain_subject *subj, unsigned flags,
                          asyncrt_cache_explanation *out)
{
    asyncrt_key_diff d[SHOWN_DIFFS];
    memset(d, 0, sizeof d);
    size_t total = 0;
    char remote[320] = "", subject[400], records[400] = "";
    const char *tier = NULL; /* where the nearest record is: "local" or "remote" */
    bool from_remote = false;
    asyncrt__sha256_hex(subj->key, out->key);
    if (subj->uncacheable) {
        out->verdict = ASYNCRT_CACHE_VERDICT_UNCACHEABLE;
        asyncrt__say(out->cause, sizeof out->cause, "not cached: %s",
                     *subj->uncacheable ? subj->uncacheable : "caching is off (ASYNCRT_CACHE=0)");
    } else {
        asyncrt_key_diff stale;
        asyncrt_key1_state state = asyncrt__cache_key1_state(c, subj->key, &stale);
        out->verdict = state == ASYNCRT_KEY1_HIT ? ASYNCRT_CACHE_VERDICT_HIT
                       : state == ASYNCRT_KEY1_NO_DIR ? ASYNCRT_CACHE_VERDICT_NO_CACHE
                                                      : ASYNCRT_CACHE_VERDICT_MISS;
        if (state == ASYNCRT_KEY1_HIT) {
            asyncrt__say(out->cause, sizeof out->cause, "%s holds this key and its headers hold",
                         asyncrt__cache_dir(c) ? asyncrt__cache_dir(c) : "the cache");
        } else if (state == ASYNCRT_KEY1_NO_DIR) {
            asyncrt__say(out->cause, sizeof out->cause, "no usable cache directory (asyncrt-cache stats says why)");
        } else if (state == ASYNCRT_KEY1_DAMAGED) {
            asyncrt__say(out->cause, sizeof out->cause, "the manifest of this key fails its checks (a lookup discards it)");
        } else if (state == ASYNCRT_KEY1_ENTRY_GONE) {
            asyncrt__say(out->cause, sizeof out->cause, "the entry stored for this key is gone (evicted or cleared)");
        } else if (state == ASYNCRT_KEY1_STALE) {
            memcpy(out->nearest, out->key, sizeof out->nearest); /* the same key: what it read changed */
            d[0] = stale;
            total = 1;
            if (!stale.name && !stale.was)
                asyncrt__say(out->cause, sizeof out->cause, "a header this key read was touched while checked: try again");
        } else {
            total = nearest_record(c, subj->source_name, subj->key, subj->record, d, out->nearest);
            tier = total != SIZE_MAX ? "local" : NULL;
            if (flags & ASYNCRT_CACHE_EXPLAIN_REMOTE) {
                total = remote_nearest(c, subj->source_name, subj->key, subj->record, total, d, out->nearest,
                                       &from_remote, records, sizeof records);
                tier = from_remote ? "remote" : tier;
            }
        }
        if (state == ASYNCRT_KEY1_NO_MANIFEST && total == SIZE_MAX) {
            out->verdict = ASYNCRT_CACHE_VERDICT_NO_RECORD;
            total = 0;
            asyncrt__say(out->cause, sizeof out->cause,
                         "no entry of %s is recorded here%s (never stored with this cache, or by an asyncrt "
                         "without key records)", subj->source_name,
                         (flags & ASYNCRT_CACHE_EXPLAIN_REMOTE) ? " or on the remote" : "");
        }
        if (state == ASYNCRT_KEY1_STALE && !stale.name && !stale.was) total = 0;
        if ((flags & ASYNCRT_CACHE_EXPLAIN_REMOTE) && state != ASYNCRT_KEY1_NO_DIR)
            asyncrt__cache_remote_state(c, subj->key, remote, sizeof remote);
    }
    asyncrt__say(subject, sizeof subject, "%s for %s", subj->source_name, subj->arch_name);
    size_t shown = total < SHOWN_DIFFS ? total : SHOWN_DIFFS;
    asyncrt__explain_report(out, subject, subj->source_name, subj->arch_name, remote[0] ? remote : NULL, d, shown,
                            total);
    asyncrt__explain_report_tier(out, tier, records[0] ? records : NULL);
    asyncrt__key_diff_free(d, shown);
}

/* The verdict on a keyed job, into *out (its strings malloc'd). */
void asyncrt__explain_judge(asyncrt_compile_job *job, unsigned flags, asyncrt_cache_explanation *out)
{
    char *why = asyncrt__key_value(&job->record, "uncacheable");
    asyncrt_explain_subject subj = {job->key, &job->record, job->source_name, job->arch_name, NULL};
    if (job->state == ASYNCRT_COMPILE_UNCACHEABLE) subj.uncacheable = why ? why : "";
    asyncrt__explain_key(job->ctx->cache, &subj, flags, out);
    free(why);
}

void asyncrt__job_log_miss(asyncrt_compile_job *job)
{
    if (job->ctx->diag.log_level < 1) return;
    asyncrt_cache_explanation e = {.size = sizeof e};
    asyncrt__explain_judge(job, 0, &e);
    if (e.verdict != ASYNCRT_CACHE_VERDICT_HIT) /* a hit here: another process stored it meanwhile */
        asyncrt__log(job->ctx, 1, "%s: cache miss for %s: %s", job->source_name, job->arch_name, e.cause);
    asyncrt_cache_explanation_free(&e);
}
