/* The cache's remote tier (remote_tier.h). */
#include "remote_tier.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dep_fit.h"
#include "sha256.h"

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

/* A value's set and entry, checked. */
static asyncrt_tier_got check(const asyncrt_diag *diag, asyncrt_remote *r, const uint8_t key1[32],
                              const asyncrt_remote_value *v, bool quiet, asyncrt_cache_entry *out,
                              asyncrt_dep_set *set)
{
    asyncrt_manifest m;
    char why[512], hex[65];
    if (!open_value(v, key1, &m, out, why, sizeof why)) {
        asyncrt__remote_refuse(r, key1, quiet, why);
        return ASYNCRT_TIER_BAD;
    }
    asyncrt_tier_got result = ASYNCRT_TIER_FOUND;
    if (!asyncrt__dep_set_fits(&m.sets[0], why, sizeof why)) {
        asyncrt__sha256_hex(key1, hex);
        asyncrt__diag_log(diag, 2, "remote cache: the value for %s does not fit this machine: %s", hex, why);
        asyncrt__remote_note_stale(r, key1, v);
        asyncrt__cache_entry_free(out);
        result = ASYNCRT_TIER_STALE;
    } else {
        out->origin = ASYNCRT_ORIGIN_REMOTE_CACHE;
        *set = m.sets[0]; /* taken from the manifest */
        m.sets[0] = (asyncrt_dep_set){0};
    }
    asyncrt__manifest_free(&m);
    return result;
}

asyncrt_tier_got asyncrt__remote_tier_fetch(const asyncrt_diag *diag, asyncrt_remote *r, const uint8_t key1[32],
                                            bool quiet, asyncrt_cache_entry *out, asyncrt_dep_set *set,
                                            char err[256])
{
    asyncrt_remote_value v;
    *out = (asyncrt_cache_entry){0};
    switch (asyncrt__remote_get(r, key1, quiet, &v, err)) {
    case ASYNCRT_REMOTE_NOTHING: return ASYNCRT_TIER_NOTHING;
    case ASYNCRT_REMOTE_BAD: return ASYNCRT_TIER_BAD;
    case ASYNCRT_REMOTE_ERROR: return ASYNCRT_TIER_ERROR;
    case ASYNCRT_REMOTE_VALUE: break;
    }
    asyncrt_tier_got g = check(diag, r, key1, &v, quiet, out, set);
    asyncrt__remote_value_free(&v);
    return g;
}

bool asyncrt__remote_tier_find(const asyncrt_diag *diag, asyncrt_remote *r, const uint8_t key1[32],
                               asyncrt_cache_entry *out, asyncrt_dep_set *set)
{
    if (!asyncrt__remote_usable(r)) return false;
    asyncrt_tier_got g = asyncrt__remote_tier_fetch(diag, r, key1, false, out, set, NULL);
    if (g != ASYNCRT_TIER_ERROR) asyncrt__remote_count(r, g == ASYNCRT_TIER_FOUND ? ASYNCRT_RC_HITS : ASYNCRT_RC_MISSES, 1);
    return g == ASYNCRT_TIER_FOUND;
}

static void sleep_ms(double ms)
{
    struct timespec t = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (double)(time_t)(ms / 1000)) * 1e6)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

bool asyncrt__remote_tier_claim(const asyncrt_diag *diag, asyncrt_remote *r, const uint8_t key1[32], bool *leased,
                                asyncrt_cache_entry *out, asyncrt_dep_set *set)
{
    *leased = false;
    if (!asyncrt__remote_writable(r) || asyncrt__remote_lease_wait_ms(r) == 0) return false;
    int wait_ms = asyncrt__remote_lease_wait_ms(r);
    char name[ASYNCRT_REMOTE_NAME_SIZE];
    asyncrt__remote_name(r, "l", key1, name);
    double start = asyncrt__now_ms(), pause = 10;
    bool waited = false;
    asyncrt_tier_got g = ASYNCRT_TIER_NOTHING;
    for (;;) {
        asyncrt_lease lease = asyncrt__remote_lease(r, key1, leased);
        if (lease == ASYNCRT_LEASE_FAILED) break;
        if (lease == ASYNCRT_LEASE_TAKEN) { /* ours: one more look, a holder may have just finished */
            if ((g = asyncrt__remote_tier_fetch(diag, r, key1, true, out, set, NULL)) == ASYNCRT_TIER_FOUND)
                asyncrt__remote_unlease(r, key1, leased);
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
        g = asyncrt__remote_tier_fetch(diag, r, key1, true, out, set, NULL);
        if (g == ASYNCRT_TIER_FOUND || g == ASYNCRT_TIER_ERROR) break;
    }
    if (g == ASYNCRT_TIER_FOUND) asyncrt__remote_count(r, ASYNCRT_RC_HITS, 1);
    return g == ASYNCRT_TIER_FOUND;
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

void asyncrt__remote_tier_store(const asyncrt_diag *diag, asyncrt_remote *r, const uint8_t key1[32],
                                const asyncrt_dep_set *deps, const unsigned char *payload, size_t size)
{
    char why[256];
    if (!asyncrt__remote_writable(r)) return;
    if (!asyncrt__remote_tier_push(r, key1, deps, payload, size, NULL, why, sizeof why))
        asyncrt__diag_log(diag, 2, "remote cache: not stored: %s", why);
}
