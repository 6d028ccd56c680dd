/* The cache's remote tier (remote_tier.h). */
#include "remote_tier.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cache_tiers.h"
#include "dep_fit.h"
#include "sha256.h"

typedef enum { GOT_NOTHING, GOT_PROGRAM, GOT_STALE, GOT_BAD, GOT_ERROR } got;

/* The inner seals of a value the client verified: its one set (*m) and its
 * entry; false with why. */
static bool open_value(const asyncrt_remote_value *v, const uint8_t key1[32], asyncrt_manifest *m,
                       asyncrt_cache_entry *e, char *why, size_t why_size)
{
    *m = (asyncrt_manifest){0};
    if (!asyncrt__manifest_decode(v->manifest, v->manifest_size, key1, NULL, m, why, why_size)) return false;
    if (m->count != 1) {
        snprintf(why, why_size, "remote value: %zu dependency sets, expected 1", m->count);
        asyncrt__manifest_free(m);
        return false;
    }
    if (!asyncrt__cache_entry_open(v->entry, v->entry_size, m->sets[0].result_key, NULL, e, why, why_size)) {
        asyncrt__manifest_free(m);
        return false;
    }
    return true;
}

/* A value's set and entry, checked and installed locally. A value refused
 * once in a lookup is not counted or logged again by the lease's re-checks
 * (quiet). */
static got install(asyncrt_cache *c, asyncrt_remote *r, const uint8_t key1[32], const asyncrt_remote_value *v,
                   bool quiet, asyncrt_cache_entry *out)
{
    asyncrt_manifest m;
    asyncrt_cache_entry e;
    char why[512], hex[65];
    if (!open_value(v, key1, &m, &e, why, sizeof why)) {
        asyncrt__remote_refuse(r, key1, quiet, why);
        return GOT_BAD;
    }
    got result = GOT_PROGRAM;
    if (!asyncrt__dep_set_fits(&m.sets[0], why, sizeof why)) {
        asyncrt__sha256_hex(key1, hex);
        asyncrt__diag_log(asyncrt__cache_diag(c), 2, "remote cache: the value for %s does not fit this machine: %s",
                          hex, why);
        asyncrt__remote_note_stale(r, key1, v);
        result = GOT_STALE;
    } else {
        asyncrt__cache_install(c, key1, &m.sets[0], e.payload, e.size); /* memory and disk, through their checks */
        e.origin = ASYNCRT_ORIGIN_REMOTE_CACHE;
        *out = e;
        e = (asyncrt_cache_entry){0};
    }
    asyncrt__cache_entry_free(&e);
    asyncrt__manifest_free(&m);
    return result;
}

/* GET and install; GOT_ERROR with why in err (when not NULL). */
static got fetch(asyncrt_cache *c, asyncrt_remote *r, const uint8_t key1[32], bool quiet, asyncrt_cache_entry *out,
                 char err[256])
{
    asyncrt_remote_value v;
    *out = (asyncrt_cache_entry){0};
    switch (asyncrt__remote_get(r, key1, quiet, &v, err)) {
    case ASYNCRT_REMOTE_NOTHING: return GOT_NOTHING;
    case ASYNCRT_REMOTE_BAD: return GOT_BAD;
    case ASYNCRT_REMOTE_ERROR: return GOT_ERROR;
    case ASYNCRT_REMOTE_VALUE: break;
    }
    got g = install(c, r, key1, &v, quiet, out);
    asyncrt__remote_value_free(&v);
    return g;
}

bool asyncrt__remote_tier_find(asyncrt_cache *c, asyncrt_remote *r, const uint8_t key1[32], asyncrt_cache_entry *out)
{
    if (!asyncrt__remote_usable(r)) return false;
    got g = fetch(c, r, key1, false, out, NULL);
    if (g != GOT_ERROR) asyncrt__remote_count(r, g == GOT_PROGRAM ? ASYNCRT_RC_HITS : ASYNCRT_RC_MISSES, 1);
    return g == GOT_PROGRAM;
}

static void sleep_ms(double ms)
{
    struct timespec t = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (double)(time_t)(ms / 1000)) * 1e6)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

bool asyncrt__remote_tier_claim(asyncrt_cache *c, asyncrt_remote *r, const uint8_t key1[32], bool *leased,
                                asyncrt_cache_entry *out)
{
    *leased = false;
    if (!asyncrt__remote_writable(r) || asyncrt__remote_lease_wait_ms(r) == 0) return false;
    const asyncrt_diag *diag = asyncrt__cache_diag(c);
    int wait_ms = asyncrt__remote_lease_wait_ms(r);
    char name[ASYNCRT_REMOTE_NAME_SIZE];
    asyncrt__remote_name(r, "l", key1, name);
    double start = asyncrt__now_ms(), pause = 10;
    bool waited = false;
    got g = GOT_NOTHING;
    for (;;) {
        asyncrt_lease lease = asyncrt__remote_lease(r, key1, leased);
        if (lease == ASYNCRT_LEASE_FAILED) break;
        if (lease == ASYNCRT_LEASE_TAKEN) { /* ours: one more look, a holder may have just finished */
            if ((g = fetch(c, r, key1, true, out, NULL)) == GOT_PROGRAM) asyncrt__remote_unlease(r, key1, leased);
            break;
        }
        if (!waited) {
            asyncrt__remote_count(r, ASYNCRT_RC_LEASE_WAITS, 1);
            asyncrt__diag_log(diag, 2, "remote cache: another process compiles %s; waiting up to %d ms", name,
                              wait_ms);
            waited = true;
        }
        double now = asyncrt__now_ms();
        if (now - start >= wait_ms) {
            asyncrt__diag_log(diag, 1, "remote cache: waited %.0f ms for another process's compile of %s; "
                                       "compiling here",
                              now - start, name);
            break;
        }
        sleep_ms(pause);
        asyncrt__remote_count(r, ASYNCRT_RC_TIME_US, (uint64_t)(pause * 1000));
        pause = pause * 1.5 > 100 ? 100 : pause * 1.5;
        g = fetch(c, r, key1, true, out, NULL);
        if (g == GOT_PROGRAM || g == GOT_ERROR) break;
    }
    if (g == GOT_PROGRAM) asyncrt__remote_count(r, ASYNCRT_RC_HITS, 1);
    return g == GOT_PROGRAM;
}

bool asyncrt__remote_tier_push(asyncrt_remote *r, const uint8_t key1[32], const asyncrt_dep_set *deps,
                               const unsigned char *payload, size_t size, bool *kept, char *why, size_t why_size)
{
    asyncrt_manifest m = {(asyncrt_dep_set *)deps, 1};
    size_t mf_size = 0, entry_size = 0;
    unsigned char *mf = NULL, *entry = NULL;
    if (asyncrt__remote_writable(r)) { /* else put says why, before encoding anything */
        mf = asyncrt__manifest_encode(&m, key1, NULL, &mf_size);
        entry = asyncrt__cache_entry_seal(payload, size, deps->result_key, NULL, &entry_size);
    }
    bool ok = asyncrt__remote_put(r, key1, mf, mf_size, entry, entry_size, kept, why, why_size);
    free(mf);
    free(entry);
    return ok;
}

void asyncrt__remote_tier_store(asyncrt_cache *c, asyncrt_remote *r, const uint8_t key1[32],
                                const asyncrt_dep_set *deps, const unsigned char *payload, size_t size)
{
    char why[256];
    if (!asyncrt__remote_writable(r)) return;
    if (!asyncrt__remote_tier_push(r, key1, deps, payload, size, NULL, why, sizeof why))
        asyncrt__diag_log(asyncrt__cache_diag(c), 2, "remote cache: not stored: %s", why);
}

/* Every value of one shard fetched and installed; counts: installed,
 * refused, stale. */
static bool pull_shard(asyncrt_cache *c, asyncrt_remote *r, size_t i, size_t counts[3], char *why, size_t why_size)
{
    unsigned long long cursor = 0;
    size_t rounds = 0;
    do {
        asyncrt_remote_key *keys;
        size_t n;
        if (!asyncrt__remote_scan(r, i, &cursor, &rounds, &keys, &n, why, why_size)) return false;
        bool failed = false;
        for (size_t k = 0; k < n && !failed; k++) {
            asyncrt_cache_entry e = {0};
            char err[256];
            got g = keys[k].valid ? fetch(c, r, keys[k].key1, false, &e, err) : GOT_BAD;
            if (g == GOT_ERROR) { /* the server failed: no value was refused, and the rest would fail too */
                char name[ASYNCRT_REMOTE_NAME_SIZE];
                asyncrt__remote_name(r, "v", keys[k].key1, name);
                snprintf(why, why_size, "the value %.100s: %s", name, err);
                failed = true;
            } else {
                counts[g == GOT_PROGRAM ? 0 : g == GOT_STALE ? 2 : 1] += g != GOT_NOTHING;
            }
            if (g == GOT_PROGRAM) /* taken from the remote, as a lookup's hit */
                asyncrt__remote_count(r, ASYNCRT_RC_HITS, 1);
            asyncrt__cache_entry_free(&e);
        }
        free(keys);
        if (failed) return false;
    } while (cursor != 0);
    return true;
}

bool asyncrt__remote_tier_pull(asyncrt_cache *c, asyncrt_remote *r, size_t *installed, size_t *refused,
                               size_t *stale, char *why, size_t why_size)
{
    size_t counts[3] = {0};
    bool ok = asyncrt__remote_usable(r);
    if (!ok) snprintf(why, why_size, "no usable remote cache");
    for (size_t i = 0; ok && i < asyncrt__remote_shard_count(r); i++) ok = pull_shard(c, r, i, counts, why, why_size);
    *installed = counts[0], *refused = counts[1], *stale = counts[2];
    return ok;
}
