#define _DEFAULT_SOURCE /* gethostname */
#include "remote_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "cache_codec.h"
#include "cache_trust.h"
#include "remote_config.h"
#include "remote_redis.h"
#include "remote_value.h"
#include "sha256.h"

#define VALUE_MAX ((size_t)64 << 20) /* larger values are refused unread */
#define KEY_FILE_MAX 4096
#define BREAKER_FAILURES 3           /* failed operations in a row that switch a shard off */
#define STATS_SIDE_FILE "remote-stats"

enum { R_HITS, R_MISSES, R_ERRORS, R_REJECTED, R_STORES, R_LEASE_WAITS, R_BYTES_READ, R_BYTES_WRITTEN, R_TIME_US,
       R_COUNT };
static const char *const counter_names[R_COUNT] = {"hits", "misses", "errors", "rejected", "stores",
                                                   "lease_waits", "bytes_read", "bytes_written", "time_us"};

typedef struct shard {
    asyncrt_redis *conn;  /* NULL until first used, or after a failure */
    unsigned failures;    /* in a row */
    bool off;             /* switched off for the rest of the process */
} shard;

struct asyncrt_remote {
    asyncrt_cache *cache;          /* the local tiers it fills, and its tally's side file */
    const asyncrt_diag *diag;      /* where it logs */
    asyncrt_remote_config cfg;     /* empty when refused */
    uint8_t mac_key[32];
    char token[128];               /* our leases' value: host, pid, random */
    char state[512];               /* the description, or why refused / switched off */
    pthread_mutex_t lock;          /* guards shards[] (one command at a time per connection) and state */
    shard shards[ASYNCRT_REMOTE_MAX_SHARDS];
    bool refused;                  /* configured but not usable: only the stats see it */
    uint64_t counters[R_COUNT];    /* __atomic */
};

static void add(asyncrt_remote *r, int which, uint64_t n)
{
    __atomic_fetch_add(&r->counters[which], n, __ATOMIC_RELAXED);
}

static asyncrt_remote *new_remote(void)
{
    asyncrt_remote *r = calloc(1, sizeof *r);
    if (r && pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return NULL;
    }
    return r;
}

static void free_remote(asyncrt_remote *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->cfg.server_count; i++) asyncrt__redis_close(r->shards[i].conn);
    asyncrt__remote_config_free(&r->cfg);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

asyncrt_remote *asyncrt__remote_create(const char *spec, const char *key_file, asyncrt_cache *cache,
                                      const asyncrt_diag *diag, asyncrt_status *status, char *why, size_t why_size)
{
    asyncrt_remote *r = new_remote();
    if (r) r->cache = cache, r->diag = diag;
    *status = ASYNCRT_ERROR_INVALID_ARGUMENT;
    char detail[400];
    size_t key_size = 0;
    unsigned char *secret = NULL;
    if (!r) {
        *status = ASYNCRT_ERROR_OUT_OF_MEMORY;
        snprintf(why, why_size, "out of memory");
    } else if (!asyncrt__remote_config_parse(spec, &r->cfg, detail, sizeof detail)) {
        snprintf(why, why_size, "remote cache refused: %s", detail);
    } else if (!key_file || !*key_file) {
        snprintf(why, why_size, "remote cache refused: no HMAC key. Anyone who can write to the server could "
                 "plant code, so every value is signed: set ASYNCRT_REMOTE_CACHE_KEY_FILE to a file of this "
                 "user's, mode 0600, holding the fleet's secret (e.g. head -c 32 /dev/urandom)");
    } else if (!(secret = asyncrt__read_private_file(key_file, KEY_FILE_MAX, &key_size, detail, sizeof detail))) {
        snprintf(why, why_size, "remote cache refused: its HMAC key file is not usable: %s", detail);
    } else if (key_size < 16) {
        snprintf(why, why_size, "remote cache refused: the HMAC key file %s holds %zu bytes; at least 16 are "
                 "needed (e.g. head -c 32 /dev/urandom)", key_file, key_size);
    } else if (!asyncrt__redis_available(detail, sizeof detail)) {
        *status = ASYNCRT_ERROR_UNSUPPORTED;
        snprintf(why, why_size, "remote cache unavailable: %s", detail);
    } else {
        asyncrt__hmac_sha256(secret, key_size, "asyncrt remote cache", 20, r->mac_key);
        char host[64] = "host";
        gethostname(host, sizeof host - 1);
        unsigned rnd = 0;
        if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd) rnd = (unsigned)clock();
        snprintf(r->token, sizeof r->token, "%.63s:%ld:%08x", host, (long)getpid(), rnd);
        asyncrt__remote_describe(&r->cfg, r->state, sizeof r->state);
        *status = ASYNCRT_SUCCESS;
    }
    if (secret) memset(secret, 0, key_size);
    free(secret);
    if (*status == ASYNCRT_SUCCESS) return r;
    free_remote(r);
    return NULL;
}

asyncrt_remote *asyncrt__remote_refused(const char *why)
{
    asyncrt_remote *r = new_remote();
    if (!r) return NULL;
    r->refused = true;
    snprintf(r->state, sizeof r->state, "off: %.500s", why);
    return r;
}

void asyncrt__remote_stats(asyncrt_remote *r, asyncrt_remote_cache_stats *out)
{
    *out = (asyncrt_remote_cache_stats){0};
    if (!r) {
        snprintf(out->state, sizeof out->state, "off: no remote cache configured (ASYNCRT_REMOTE_CACHE)");
        return;
    }
    uint64_t *v[R_COUNT] = {&out->hits, &out->misses, &out->errors, &out->rejected, &out->stores,
                            &out->lease_waits, &out->bytes_read, &out->bytes_written, NULL};
    for (int i = 0; i < R_TIME_US; i++) *v[i] = __atomic_load_n(&r->counters[i], __ATOMIC_RELAXED);
    out->time_ms = (double)__atomic_load_n(&r->counters[R_TIME_US], __ATOMIC_RELAXED) / 1000.0;
    pthread_mutex_lock(&r->lock);
    out->enabled = !r->refused;
    for (size_t i = 0; out->enabled && i < r->cfg.server_count; i++) out->enabled = !r->shards[i].off;
    snprintf(out->state, sizeof out->state, "%s", r->state);
    pthread_mutex_unlock(&r->lock);
}

/* ---- the tally in the cache directory --------------------------------------- */

static void parse_tally(const char *text, uint64_t v[R_COUNT])
{
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        for (int i = 0; i < R_COUNT; i++) {
            size_t n = strlen(counter_names[i]);
            if (strncmp(line, counter_names[i], n) == 0 && line[n] == ' ')
                v[i] = strtoull(line + n + 1, NULL, 10);
        }
}

void asyncrt__remote_stats_tally(asyncrt_cache *cache, asyncrt_remote_cache_stats *out)
{
    uint64_t v[R_COUNT] = {0};
    char *text = asyncrt__cache_read_side(cache, STATS_SIDE_FILE);
    if (text) parse_tally(text, v);
    free(text);
    *out = (asyncrt_remote_cache_stats){.hits = v[R_HITS], .misses = v[R_MISSES], .errors = v[R_ERRORS],
                                        .rejected = v[R_REJECTED], .stores = v[R_STORES],
                                        .lease_waits = v[R_LEASE_WAITS], .bytes_read = v[R_BYTES_READ],
                                        .bytes_written = v[R_BYTES_WRITTEN], .time_ms = (double)v[R_TIME_US] / 1e3};
}

/* Read, add, write: two processes ending at once may lose one's counts
 * (the cache directory has no locks); they are a guide, not a ledger. */
static void save_tally(const asyncrt_remote *r)
{
    uint64_t v[R_COUNT] = {0};
    bool any = false;
    for (int i = 0; i < R_COUNT; i++) any |= r->counters[i] != 0;
    if (!any) return;
    char *text = asyncrt__cache_read_side(r->cache, STATS_SIDE_FILE);
    if (text) parse_tally(text, v);
    free(text);
    char out[1024];
    size_t n = 0;
    for (int i = 0; i < R_COUNT && n < sizeof out; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, "%s %llu\n", counter_names[i],
                              (unsigned long long)(v[i] + r->counters[i]));
    asyncrt__cache_write_side(r->cache, STATS_SIDE_FILE, out);
}

void asyncrt__remote_destroy(asyncrt_remote *r)
{
    if (!r) return;
    asyncrt__diag_log(r->diag, 2, "remote cache: %llu hits, %llu misses, %llu errors, %llu rejected, %llu stores, "
                        "%llu lease waits, %llu bytes read, %llu written, %.1f ms",
                (unsigned long long)r->counters[R_HITS], (unsigned long long)r->counters[R_MISSES],
                (unsigned long long)r->counters[R_ERRORS], (unsigned long long)r->counters[R_REJECTED],
                (unsigned long long)r->counters[R_STORES], (unsigned long long)r->counters[R_LEASE_WAITS],
                (unsigned long long)r->counters[R_BYTES_READ], (unsigned long long)r->counters[R_BYTES_WRITTEN],
                (double)r->counters[R_TIME_US] / 1e3);
    if (r->cache) save_tally(r);
    free_remote(r);
}

/* ---- operations, each on one shard, with the breaker ----------------------- */

typedef enum { OP_GET, OP_SET, OP_LEASE, OP_UNLEASE } op_kind;

typedef struct op {
    op_kind kind;
    const char *key;
    const void *value;          /* SET */
    size_t size;
    unsigned char *got;         /* GET: malloc'd */
    bool too_big;
    asyncrt_redis_result result;
} op;

static bool usable(const asyncrt_remote *r) { return r && !r->refused; }

/* Runs o on key1's shard (connecting first if needed). False when the shard
 * is off or the operation failed (counted; the breaker may trip). */
static bool run_op(asyncrt_remote *r, const uint8_t key1[32], op *o)
{
    size_t i = asyncrt__remote_shard_of(&r->cfg, key1);
    shard *s = &r->shards[i];
    char why[256] = "";
    double start = asyncrt__now_ms();
    pthread_mutex_lock(&r->lock);
    bool ok = !s->off;
    if (ok && !s->conn &&
        !(s->conn = asyncrt__redis_connect(&r->cfg.servers[i], r->cfg.connect_timeout_ms,
                                           r->cfg.operation_timeout_ms, why, sizeof why)))
        ok = false, s->failures = BREAKER_FAILURES; /* a connect that failed costs its timeout once */
    if (ok) {
        switch (o->kind) {
        case OP_GET:
            o->result = asyncrt__redis_get(s->conn, o->key, VALUE_MAX, &o->got, &o->size, &o->too_big, why,
                                           sizeof why);
            break;
        case OP_SET:
            o->result = asyncrt__redis_set(s->conn, o->key, o->value, o->size, false, 0, why, sizeof why);
            break;
        case OP_LEASE:
            o->result = asyncrt__redis_set(s->conn, o->key, r->token, strlen(r->token), true,
                                           r->cfg.lease_wait_ms > 1000 ? r->cfg.lease_wait_ms : 1000, why,
                                           sizeof why);
            break;
        case OP_UNLEASE: o->result = asyncrt__redis_del_if(s->conn, o->key, r->token, why, sizeof why); break;
        }
        ok = o->result != ASYNCRT_REDIS_ERROR && o->result != ASYNCRT_REDIS_TIMEOUT;
        if (!ok) { /* a server that lets an operation time out is not waited for again */
            asyncrt__redis_close(s->conn);
            s->conn = NULL;
            s->failures = o->result == ASYNCRT_REDIS_TIMEOUT ? BREAKER_FAILURES : s->failures + 1;
        } else {
            s->failures = 0;
        }
    }
    bool tripped = !ok && !s->off && s->failures >= BREAKER_FAILURES;
    char server[256];
    asyncrt__remote_describe_server(&r->cfg.servers[i], server, sizeof server);
    if (tripped) {
        s->off = true;
        snprintf(r->state, sizeof r->state, "off: %.240s switched off for this process: %.200s", server, why);
    }
    pthread_mutex_unlock(&r->lock);
    add(r, R_TIME_US, (uint64_t)((asyncrt__now_ms() - start) * 1000));
    if (!ok && why[0]) {
        add(r, R_ERRORS, 1);
        if (tripped)
            asyncrt__diag_log(r->diag, 1, "warning: remote cache %s switched off for this process (compiles go on "
                                "without it): %s", server, why);
        else
            asyncrt__diag_log(r->diag, 1, "warning: remote cache %s: %s", server, why);
    }
    return ok;
}

static void key_name(const asyncrt_remote *r, const char *kind, const uint8_t key1[32], char *out, size_t size)
{
    char hex[65];
    asyncrt__sha256_hex(key1, hex);
    snprintf(out, size, "%s:%s:%s", r->cfg.prefix, kind, hex);
}

typedef enum { GOT_NOTHING, GOT_PROGRAM, GOT_STALE, GOT_BAD, GOT_ERROR } got;

/* Verifies a value and installs it locally. A value refused once in a
 * lookup is not counted or logged again by the lease's re-checks (quiet). */
static got install(asyncrt_remote *r, const uint8_t key1[32], const unsigned char *data,
                   size_t size, bool quiet, asyncrt_program **out)
{
    asyncrt_manifest m;
    asyncrt_program *p = NULL;
    char why[512], hex[65];
    asyncrt__sha256_hex(key1, hex);
    if (!asyncrt__remote_value_decode(r->mac_key, key1, data, size, VALUE_MAX, &m, &p, why, sizeof why)) {
        if (!quiet) add(r, R_REJECTED, 1);
        asyncrt__diag_log(r->diag, quiet ? 2 : 1, "warning: remote cache: ignoring the value for %s: %s", hex, why);
        return GOT_BAD;
    }
    got result = GOT_PROGRAM;
    if (!asyncrt__remote_value_fits(&m.sets[0], why, sizeof why)) {
        asyncrt__diag_log(r->diag, 2, "remote cache: the value for %s does not fit this machine: %s", hex, why);
        result = GOT_STALE;
    } else {
        asyncrt__cache_store(r->cache, key1, &m.sets[0], p); /* memory and disk, through their checks */
        p->origin = ASYNCRT_ORIGIN_REMOTE_CACHE;
        *out = p;
        p = NULL;
    }
    asyncrt_program_destroy(p);
    asyncrt__manifest_free(&m);
    return result;
}

/* GET and install. */
static got fetch(asyncrt_remote *r, const uint8_t key1[32], bool quiet, asyncrt_program **out)
{
    char name[160];
    key_name(r, "v", key1, name, sizeof name);
    op o = {.kind = OP_GET, .key = name};
    *out = NULL;
    if (!run_op(r, key1, &o)) return GOT_ERROR;
    if (o.result == ASYNCRT_REDIS_NIL) return GOT_NOTHING;
    add(r, R_BYTES_READ, o.size);
    got g = GOT_BAD;
    if (o.too_big) {
        if (!quiet) add(r, R_REJECTED, 1);
        asyncrt__diag_log(r->diag, quiet ? 2 : 1, "warning: remote cache: ignoring %s: larger than %zu bytes", name,
                          VALUE_MAX);
    } else {
        g = install(r, key1, o.got, o.size, quiet, out);
    }
    free(o.got);
    return g;
}

asyncrt_program *asyncrt__remote_find(asyncrt_remote *r, const uint8_t key1[32])
{
    if (!usable(r)) return NULL;
    asyncrt_program *p = NULL;
    got g = fetch(r, key1, false, &p);
    if (g != GOT_ERROR) add(r, p ? R_HITS : R_MISSES, 1);
    return p;
}

static void sleep_ms(double ms)
{
    struct timespec t = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (double)(time_t)(ms / 1000)) * 1e6)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

asyncrt_program *asyncrt__remote_claim(asyncrt_remote *r, const uint8_t key1[32], bool *leased)
{
    *leased = false;
    if (!usable(r) || r->cfg.read_only || r->cfg.lease_wait_ms == 0) return NULL;
    char name[160];
    key_name(r, "l", key1, name, sizeof name);
    double start = asyncrt__now_ms(), pause = 10;
    bool waited = false;
    asyncrt_program *p = NULL;
    for (;;) {
        op o = {.kind = OP_LEASE, .key = name};
        if (!run_op(r, key1, &o)) break;
        if (o.result == ASYNCRT_REDIS_OK) { /* ours: one more look, a holder may have just finished */
            *leased = true;
            if (fetch(r, key1, true, &p) == GOT_PROGRAM) asyncrt__remote_release(r, key1, leased);
            break;
        }
        if (!waited) {
            add(r, R_LEASE_WAITS, 1);
            asyncrt__diag_log(r->diag, 2, "remote cache: another process compiles %s; waiting up to %d ms", name,
                        r->cfg.lease_wait_ms);
            waited = true;
        }
        double now = asyncrt__now_ms();
        if (now - start >= r->cfg.lease_wait_ms) {
            asyncrt__diag_log(r->diag, 1, "remote cache: waited %.0f ms for another process's compile of %s; "
                                          "compiling here",
                              now - start, name);
            break;
        }
        sleep_ms(pause);
        add(r, R_TIME_US, (uint64_t)(pause * 1000));
        pause = pause * 1.5 > 100 ? 100 : pause * 1.5;
        got g = fetch(r, key1, true, &p);
        if (g == GOT_PROGRAM || g == GOT_ERROR) break;
    }
    if (p) add(r, R_HITS, 1);
    return p;
}

void asyncrt__remote_release(asyncrt_remote *r, const uint8_t key1[32], bool *leased)
{
    if (!*leased || !usable(r)) return;
    *leased = false;
    char name[160];
    key_name(r, "l", key1, name, sizeof name);
    op o = {.kind = OP_UNLEASE, .key = name};
    run_op(r, key1, &o);
}

bool asyncrt__remote_push(asyncrt_remote *r, const uint8_t key1[32], const asyncrt_dep_set *deps,
                         const asyncrt_program *program, char *why, size_t why_size)
{
    if (!usable(r)) return snprintf(why, why_size, "no usable remote cache"), false;
    if (r->cfg.read_only) return snprintf(why, why_size, "the remote cache is read-only"), false;
    size_t size = 0;
    unsigned char *data = asyncrt__remote_value_encode(r->mac_key, key1, deps, program, &size);
    if (!data) return snprintf(why, why_size, "out of memory"), false;
    char name[160];
    key_name(r, "v", key1, name, sizeof name);
    op o = {.kind = OP_SET, .key = name, .value = data, .size = size};
    bool ok = size <= VALUE_MAX && run_op(r, key1, &o);
    free(data);
    if (ok) add(r, R_STORES, 1), add(r, R_BYTES_WRITTEN, size);
    else
        snprintf(why, why_size, size > VALUE_MAX ? "larger than the remote's limit" : "the server failed (see the log)");
    return ok;
}

void asyncrt__remote_store(asyncrt_remote *r, const uint8_t key1[32], const asyncrt_dep_set *deps,
                          const asyncrt_program *program)
{
    char why[256];
    if (!usable(r) || r->cfg.read_only) return;
    if (!asyncrt__remote_push(r, key1, deps, program, why, sizeof why))
        asyncrt__diag_log(r->diag, 2, "remote cache: not stored: %s", why);
}

/* Every value of one shard: SCAN PREFIX:v:*, then each fetched and installed. */
static bool pull_shard(asyncrt_remote *r, size_t i, size_t counts[3], char *why,
                       size_t why_size)
{
    char match[160];
    snprintf(match, sizeof match, "%s:v:*", r->cfg.prefix);
    unsigned long long cursor = 0;
    size_t prefix_len = strlen(match) - 1;
    do {
        char **keys = NULL;
        size_t n = 0;
        pthread_mutex_lock(&r->lock);
        shard *s = &r->shards[i];
        if (!s->conn)
            s->conn = asyncrt__redis_connect(&r->cfg.servers[i], r->cfg.connect_timeout_ms,
                                            r->cfg.operation_timeout_ms, why, why_size);
        asyncrt_redis_result res = s->conn ? asyncrt__redis_scan(s->conn, &cursor, match, &keys, &n, why, why_size)
                                           : ASYNCRT_REDIS_ERROR;
        if (res != ASYNCRT_REDIS_OK && s->conn) asyncrt__redis_close(s->conn), s->conn = NULL;
        pthread_mutex_unlock(&r->lock);
        if (res != ASYNCRT_REDIS_OK) return false;
        for (size_t k = 0; k < n; k++) {
            uint8_t key1[32];
            const char *hex = keys[k] + prefix_len;
            bool named = strlen(hex) == 64;
            for (int b = 0; named && b < 32; b++) {
                unsigned v;
                named = sscanf(hex + 2 * b, "%2x", &v) == 1;
                key1[b] = (uint8_t)v;
            }
            asyncrt_program *p = NULL;
            got g = named ? fetch(r, key1, false, &p) : GOT_BAD;
            counts[g == GOT_PROGRAM ? 0 : g == GOT_STALE ? 2 : 1] += g != GOT_NOTHING;
            if (g == GOT_PROGRAM) add(r, R_HITS, 1); /* taken from the remote, as a lookup's hit */
            asyncrt_program_destroy(p);
            free(keys[k]);
        }
        free(keys);
    } while (cursor != 0);
    return true;
}

bool asyncrt__remote_pull(asyncrt_remote *r, size_t *installed, size_t *refused, size_t *stale, char *why,
                         size_t why_size)
{
    size_t counts[3] = {0};
    bool ok = usable(r);
    if (!ok) snprintf(why, why_size, "no usable remote cache");
    for (size_t i = 0; ok && i < r->cfg.server_count; i++) ok = pull_shard(r, i, counts, why, why_size);
    *installed = counts[0], *refused = counts[1], *stale = counts[2];
    return ok;
}
