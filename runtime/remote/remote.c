#define _DEFAULT_SOURCE /* gethostname */
/* The remote cache's client (remote.h). */
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "format.h"
#include "remote_redis.h"
#include "remote_value.h"
#include "safe_io.h"
#include "sha256.h"

#define VALUE_MAX ASYNCRT_REMOTE_VALUE_MAX
#define KEY_FILE_MAX 4096
#define BREAKER_FAILURES 3           /* failed operations in a row that switch a shard off */
#define SCAN_ROUNDS_MAX 10000        /* SCAN steps of one shard's pull: 10 M slots at COUNT 1000 */
#define REMEMBERED 8                 /* values this process refused or found stale, for the store after */
#define NAME_SIZE ASYNCRT_REMOTE_NAME_SIZE


typedef struct shard {
    asyncrt_redis *conn;  /* NULL until first used, or after a failure */
    unsigned failures;    /* in a row */
    bool off;             /* switched off for the rest of the process */
} shard;

/* A value a lookup found and did not take: unverifiable (refused), or
 * verified but stale for this machine's headers (head: its seal header,
 * which holds its MAC, so names it). The store after the compile replaces
 * only the latter, and only while it is still there. */
typedef struct seen {
    uint8_t key1[32];
    bool verified;
    unsigned char head[ASYNCRT_SEAL_HEADER_SIZE];
} seen;

struct asyncrt_remote {
    const asyncrt_diag *diag;      /* where it logs */
    asyncrt_remote_config cfg;     /* empty when refused */
    uint8_t mac_key[32];
    char token[128];               /* our leases' value: host, pid, random */
    char state[512];               /* the description, or why refused / switched off */
    char last_refusal[300];        /* the last value refused and why ("" none) */
    seen seen[REMEMBERED];         /* a ring */
    unsigned seen_next;
    pthread_mutex_t lock;          /* guards shards[] (one command at a time per connection), state, refusals */
    shard shards[ASYNCRT_REMOTE_MAX_SHARDS];
    bool refused;                  /* configured but not usable: only the stats see it */
    _Atomic uint64_t counters[ASYNCRT_RC_COUNT]; /* relaxed: counts, no order between them */
};

static void add(asyncrt_remote *r, int which, uint64_t n)
{
    atomic_fetch_add_explicit(&r->counters[which], n, memory_order_relaxed);
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

asyncrt_remote *asyncrt__remote_create(const char *spec, const char *key_file, const asyncrt_diag *diag,
                                      asyncrt_status *status, char *why, size_t why_size)
{
    asyncrt_remote *r = new_remote();
    if (r) r->diag = diag;
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
    } else if (!(secret = asyncrt__file_read_private(key_file, KEY_FILE_MAX, &key_size, detail, sizeof detail))) {
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
    *out = (asyncrt_remote_cache_stats){.size = sizeof *out};
    if (!r) {
        snprintf(out->state, sizeof out->state, "off: no remote cache configured (ASYNCRT_REMOTE_CACHE)");
        return;
    }
    uint64_t *v[ASYNCRT_RC_COUNT] = {&out->hits, &out->misses, &out->errors, &out->rejected, &out->stores,
                            &out->lease_waits, &out->bytes_read, &out->bytes_written, NULL};
    for (int i = 0; i < ASYNCRT_RC_TIME_US; i++) *v[i] = atomic_load_explicit(&r->counters[i], memory_order_relaxed);
    out->time_ms = (double)atomic_load_explicit(&r->counters[ASYNCRT_RC_TIME_US], memory_order_relaxed) / 1000.0;
    pthread_mutex_lock(&r->lock);
    out->enabled = !r->refused;
    for (size_t i = 0; out->enabled && i < r->cfg.server_count; i++) out->enabled = !r->shards[i].off;
    if (r->last_refusal[0])
        snprintf(out->state, sizeof out->state, "%.200s; last value refused: %.280s", r->state, r->last_refusal);
    else
        snprintf(out->state, sizeof out->state, "%s", r->state);
    pthread_mutex_unlock(&r->lock);
}

void asyncrt__remote_destroy(asyncrt_remote *r)
{
    if (!r) return;
    uint64_t c[ASYNCRT_RC_COUNT];
    asyncrt__remote_counters(r, c);
    asyncrt__diag_log(r->diag, 2, "remote cache: %llu hits, %llu misses, %llu errors, %llu rejected, %llu stores, "
                      "%llu kept, %llu lease waits, %llu bytes read, %llu written, %.1f ms",
                      (unsigned long long)c[ASYNCRT_RC_HITS], (unsigned long long)c[ASYNCRT_RC_MISSES],
                      (unsigned long long)c[ASYNCRT_RC_ERRORS], (unsigned long long)c[ASYNCRT_RC_REJECTED],
                      (unsigned long long)c[ASYNCRT_RC_STORES], (unsigned long long)c[ASYNCRT_RC_KEPT],
                      (unsigned long long)c[ASYNCRT_RC_LEASE_WAITS], (unsigned long long)c[ASYNCRT_RC_BYTES_READ],
                      (unsigned long long)c[ASYNCRT_RC_BYTES_WRITTEN], (double)c[ASYNCRT_RC_TIME_US] / 1e3);
    free_remote(r);
}

/* ---- operations, each on one shard, with the breaker ----------------------- */

typedef enum { OP_GET, OP_SET, OP_REPLACE, OP_LEASE, OP_UNLEASE, OP_CALL } op_kind;

typedef struct op {
    op_kind kind;
    const char *key;
    const unsigned char *head;  /* REPLACE: the first bytes of the value it replaces */
    const void *value;          /* SET (only where the key is absent), REPLACE */
    size_t size;
    asyncrt_remote_call call;   /* CALL: another command (remote_records.c), with its argument */
    void *arg;
    unsigned char *got;         /* GET: malloc'd */
    bool too_big;
    asyncrt_redis_result result;
    char why[256];              /* why it failed ("" none said: the shard is off) */
} op;

static bool usable(const asyncrt_remote *r) { return r && !r->refused; }

/* A connection to shard i, made if needed, and *deadline: when the
 * operation must end. One deadline for the whole command, sent and its
 * reply's every byte read (with AUTH and SELECT on a fresh connection),
 * operation-timeout from its start, after a connect of connect-timeout at
 * most. NULL with why. */
static asyncrt_redis *connection(asyncrt_remote *r, size_t i, double *deadline, char *why, size_t why_size)
{
    shard *s = &r->shards[i];
    *deadline = asyncrt__now_ms() + r->cfg.operation_timeout_ms;
    if (!s->conn)
        s->conn = asyncrt__redis_connect(&r->cfg.servers[i], r->cfg.connect_timeout_ms, r->cfg.operation_timeout_ms,
                                         deadline, why, why_size);
    return s->conn;
}

/* Runs o on key1's shard (connecting first if needed). False when the shard
 * is off or the operation failed (counted; the breaker may trip). */
static bool run_op(asyncrt_remote *r, const uint8_t key1[32], op *o)
{
    size_t i = asyncrt__remote_shard_of(&r->cfg, key1);
    shard *s = &r->shards[i];
    char *why = o->why;
    const size_t why_size = sizeof o->why;
    why[0] = '\0';
    double start = asyncrt__now_ms();
    pthread_mutex_lock(&r->lock);
    double deadline;
    bool ok = !s->off;
    if (ok && !connection(r, i, &deadline, why, why_size))
        ok = false, s->failures = BREAKER_FAILURES; /* a connect that failed costs its timeout once */
    if (ok) {
        switch (o->kind) {
        case OP_GET:
            o->result = asyncrt__redis_get(s->conn, o->key, VALUE_MAX, deadline, &o->got, &o->size, &o->too_big,
                                           why, why_size);
            break;
        case OP_SET:
            o->result = asyncrt__redis_set(s->conn, o->key, o->value, o->size, true, 0, deadline, why, why_size);
            break;
        case OP_REPLACE:
            o->result = asyncrt__redis_replace_if(s->conn, o->key, o->value, o->size, o->head, ASYNCRT_SEAL_HEADER_SIZE,
                                                  deadline, why, why_size);
            break;
        case OP_LEASE:
            o->result = asyncrt__redis_set(s->conn, o->key, r->token, strlen(r->token), true,
                                           r->cfg.lease_wait_ms > 1000 ? r->cfg.lease_wait_ms : 1000, deadline, why,
                                           sizeof why);
            break;
        case OP_UNLEASE:
            o->result = asyncrt__redis_del_if(s->conn, o->key, r->token, deadline, why, why_size);
            break;
        case OP_CALL:
            o->result = o->call(s->conn, o->arg, deadline, why, why_size);
            break;
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
    add(r, ASYNCRT_RC_TIME_US, (uint64_t)((asyncrt__now_ms() - start) * 1000));
    if (!ok && why[0]) {
        add(r, ASYNCRT_RC_ERRORS, 1);
        if (tripped)
            asyncrt__diag_log(r->diag, 1, "warning: remote cache %s switched off for this process (compiles go on "
                                "without it): %s", server, why);
        else
            asyncrt__diag_log(r->diag, 1, "warning: remote cache %s: %s", server, why);
    }
    return ok;
}

/* PREFIX:kind:<hex>: the prefix is at most ASYNCRT_REMOTE_PREFIX_MAX long (remote_config.c). */
static void key_name(const asyncrt_remote *r, const char *kind, const uint8_t key1[32], char out[NAME_SIZE])
{
    char hex[65];
    asyncrt__sha256_hex(key1, hex);
    snprintf(out, NAME_SIZE, "%s:%s:%s", r->cfg.prefix, kind, hex);
}

/* A value not taken, for the store after the compile; a refusal (why not
 * NULL) also for -v (the stats' state). head: a verified value's first bytes. */
static void remember(asyncrt_remote *r, const uint8_t key1[32], const unsigned char *head, const char *why)
{
    pthread_mutex_lock(&r->lock);
    if (why) {
        char hex[65];
        asyncrt__sha256_hex(key1, hex);
        snprintf(r->last_refusal, sizeof r->last_refusal, "%.16s...: %.270s", hex, why);
    }
    seen *e = &r->seen[r->seen_next++ % REMEMBERED];
    memcpy(e->key1, key1, 32);
    e->verified = head != NULL;
    if (head) memcpy(e->head, head, sizeof e->head);
    pthread_mutex_unlock(&r->lock);
}

static bool recall(asyncrt_remote *r, const uint8_t key1[32], seen *out)
{
    bool found = false;
    pthread_mutex_lock(&r->lock);
    for (unsigned i = 0; i < REMEMBERED && i < r->seen_next; i++) /* the newest wins */
        if (memcmp(r->seen[(r->seen_next - 1 - i) % REMEMBERED].key1, key1, 32) == 0 && !found)
            *out = r->seen[(r->seen_next - 1 - i) % REMEMBERED], found = true;
    pthread_mutex_unlock(&r->lock);
    return found;
}

/* ---- what the cache's remote tier asks of it ------------------------------- */

bool asyncrt__remote_usable(const asyncrt_remote *r) { return usable(r); }
bool asyncrt__remote_writable(const asyncrt_remote *r) { return usable(r) && !r->cfg.read_only; }
int asyncrt__remote_lease_wait_ms(const asyncrt_remote *r) { return r->cfg.lease_wait_ms; }
void asyncrt__remote_count(asyncrt_remote *r, int which, uint64_t n) { add(r, which, n); }

void asyncrt__remote_counters(const asyncrt_remote *r, uint64_t out[ASYNCRT_RC_COUNT])
{
    for (int i = 0; i < ASYNCRT_RC_COUNT; i++) out[i] = atomic_load_explicit(&r->counters[i], memory_order_relaxed);
}

void asyncrt__remote_name(const asyncrt_remote *r, const char *kind, const uint8_t key1[32], char out[NAME_SIZE])
{
    key_name(r, kind, key1, out);
}

void asyncrt__remote_value_free(asyncrt_remote_value *v)
{
    free(v->data);
    *v = (asyncrt_remote_value){0};
}

void asyncrt__remote_refuse(asyncrt_remote *r, const uint8_t key1[32], bool quiet, const char *why)
{
    char hex[65];
    asyncrt__sha256_hex(key1, hex);
    if (!quiet) add(r, ASYNCRT_RC_REJECTED, 1);
    remember(r, key1, NULL, quiet ? NULL : why);
    asyncrt__diag_log(r->diag, quiet ? 2 : 1, "warning: remote cache: ignoring the value for %s: %s (left in "
                      "place: a value this machine cannot verify is never overwritten)", hex, why);
}

void asyncrt__remote_note_stale(asyncrt_remote *r, const uint8_t key1[32], const asyncrt_remote_value *v)
{
    remember(r, key1, v->data, NULL); /* unwrap checked: size > the seal header */
}

asyncrt_remote_got asyncrt__remote_get(asyncrt_remote *r, const uint8_t key1[32], bool quiet,
                                       asyncrt_remote_value *v, char err[256])
{
    char name[NAME_SIZE], why[512];
    key_name(r, "v", key1, name);
    op o = {.kind = OP_GET, .key = name};
    *v = (asyncrt_remote_value){0};
    if (!run_op(r, key1, &o)) {
        if (err) snprintf(err, 256, "%s", o.why[0] ? o.why : "the shard is switched off for this process");
        return ASYNCRT_REMOTE_ERROR;
    }
    if (o.result == ASYNCRT_REDIS_NIL) return ASYNCRT_REMOTE_NOTHING;
    add(r, ASYNCRT_RC_BYTES_READ, o.size);
    if (o.too_big) {
        snprintf(why, sizeof why, "larger than %zu bytes", VALUE_MAX);
        if (!quiet) add(r, ASYNCRT_RC_REJECTED, 1);
        remember(r, key1, NULL, quiet ? NULL : why);
        asyncrt__diag_log(r->diag, quiet ? 2 : 1, "warning: remote cache: ignoring %s: %s", name, why);
        free(o.got);
        return ASYNCRT_REMOTE_BAD;
    }
    v->data = o.got;
    v->size = o.size;
    if (!asyncrt__remote_value_unwrap(r->mac_key, key1, v->data, v->size, VALUE_MAX, &v->manifest,
                                      &v->manifest_size, &v->entry, &v->entry_size, why, sizeof why)) {
        asyncrt__remote_refuse(r, key1, quiet, why);
        asyncrt__remote_value_free(v);
        return ASYNCRT_REMOTE_BAD;
    }
    return ASYNCRT_REMOTE_VALUE;
}

asyncrt_lease asyncrt__remote_lease(asyncrt_remote *r, const uint8_t key1[32], bool *leased)
{
    char name[NAME_SIZE];
    key_name(r, "l", key1, name);
    op o = {.kind = OP_LEASE, .key = name};
    if (!run_op(r, key1, &o)) return ASYNCRT_LEASE_FAILED;
    if (o.result != ASYNCRT_REDIS_OK) return ASYNCRT_LEASE_HELD;
    *leased = true;
    return ASYNCRT_LEASE_TAKEN;
}

void asyncrt__remote_unlease(asyncrt_remote *r, const uint8_t key1[32], bool *leased)
{
    if (!*leased || !usable(r)) return;
    *leased = false;
    char name[NAME_SIZE];
    key_name(r, "l", key1, name);
    op o = {.kind = OP_UNLEASE, .key = name};
    run_op(r, key1, &o);
}

/* False, with why. */
static bool fail_with(char *why, size_t why_size, const char *what)
{
    snprintf(why, why_size, "%s", what);
    return false;
}

bool asyncrt__remote_put(asyncrt_remote *r, const uint8_t key1[32], const unsigned char *manifest,
                         size_t manifest_size, const unsigned char *entry, size_t entry_size, bool *kept, char *why,
                         size_t why_size)
{
    if (kept) *kept = false;
    if (!usable(r)) return fail_with(why, why_size, "no usable remote cache");
    if (r->cfg.read_only) return fail_with(why, why_size, "the remote cache is read-only");
    size_t size = 0;
    unsigned char *data =
        asyncrt__remote_value_wrap(r->mac_key, key1, manifest, manifest_size, entry, entry_size, &size);
    if (!data) return fail_with(why, why_size, "out of memory");
    char name[NAME_SIZE];
    key_name(r, "v", key1, name);
    /* Only where the key is absent (SET NX), or over a value this process
     * verified and found stale for its headers, while that value is still
     * there: a value this machine cannot verify (another key file) is never
     * overwritten, and the fleet's are safe from such a machine. */
    seen before;
    bool known = recall(r, key1, &before);
    op o = {.kind = known && before.verified ? OP_REPLACE : OP_SET, .key = name, .head = before.head, .value = data,
            .size = size};
    bool ok = size <= VALUE_MAX && run_op(r, key1, &o);
    free(data);
    if (ok && o.result == ASYNCRT_REDIS_NIL) {
        add(r, ASYNCRT_RC_KEPT, 1);
        if (kept) *kept = true;
        bool foreign = known && !before.verified;
        asyncrt__diag_log(r->diag, foreign ? 1 : 2, "%sremote cache: not storing %s: %s; it is kept",
                          foreign ? "warning: " : "", name,
                          foreign ? "the value there is one this machine cannot verify (signed with another key "
                                    "file?), and such a value is never overwritten"
                                  : "another value came first");
    } else if (ok) {
        add(r, ASYNCRT_RC_STORES, 1);
        add(r, ASYNCRT_RC_BYTES_WRITTEN, size);
    } else if (size > VALUE_MAX) {
        snprintf(why, why_size, "larger than the remote's limit");
    } else { /* the server and the cause, as a GET's */
        char server[256];
        asyncrt__remote_describe_server(&r->cfg.servers[asyncrt__remote_shard_of(&r->cfg, key1)], server,
                                        sizeof server);
        snprintf(why, why_size, "%.200s: %s", server, o.why[0] ? o.why : "switched off for this process");
    }
    return ok;
}

/* The key a name holds: PREFIX:kind:<64 hex digits>, nothing else. */
static bool key_of_name(const char *name, size_t prefix_len, uint8_t key1[32])
{
    const char *hex = name + prefix_len; /* the SCAN reply was checked: name is longer than the prefix */
    if (strlen(hex) != 64 || strspn(hex, "0123456789abcdef") != 64) return false;
    for (int b = 0; b < 32; b++) {
        unsigned v;
        if (sscanf(hex + 2 * b, "%2x", &v) != 1) return false;
        key1[b] = (uint8_t)v;
    }
    return true;
}

size_t asyncrt__remote_shard_count(const asyncrt_remote *r) { return usable(r) ? r->cfg.server_count : 0; }

bool asyncrt__remote_scan(asyncrt_remote *r, size_t i, unsigned long long *cursor, size_t *rounds,
                          asyncrt_remote_key **keys_out, size_t *count, char *why, size_t why_size)
{
    return asyncrt__remote_scan_kind(r, "v", i, cursor, rounds, keys_out, count, why, why_size);
}

bool asyncrt__remote_scan_kind(asyncrt_remote *r, const char *kind, size_t i, unsigned long long *cursor,
                               size_t *rounds, asyncrt_remote_key **keys_out, size_t *count, char *why,
                               size_t why_size)
{
    char match[NAME_SIZE];
    snprintf(match, sizeof match, "%s:%s:*", r->cfg.prefix, kind);
    size_t prefix_len = strlen(match) - 1;
    *keys_out = NULL;
    *count = 0;
    if ((*rounds)++ == SCAN_ROUNDS_MAX) {
        char server[256];
        asyncrt__remote_describe_server(&r->cfg.servers[i], server, sizeof server);
        snprintf(why, why_size, "%s: SCAN did not end after %d rounds (a shard of more than ~10 M keys, or a "
                 "server whose cursor never returns to 0)", server, SCAN_ROUNDS_MAX);
        return false;
    }
    char **names = NULL;
    size_t n = 0;
    pthread_mutex_lock(&r->lock);
    shard *s = &r->shards[i];
    double deadline;
    asyncrt_redis_result res = connection(r, i, &deadline, why, why_size)
                                   ? asyncrt__redis_scan(s->conn, cursor, match, deadline, &names, &n, why, why_size)
                                   : ASYNCRT_REDIS_ERROR;
    if (res != ASYNCRT_REDIS_OK && s->conn) {
        asyncrt__redis_close(s->conn);
        s->conn = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    if (res != ASYNCRT_REDIS_OK) return false;
    asyncrt_remote_key *keys = calloc(n ? n : 1, sizeof *keys);
    for (size_t k = 0; k < n; k++) {
        if (keys) keys[k].valid = key_of_name(names[k], prefix_len, keys[k].key1);
        free(names[k]);
    }
    free(names);
    if (!keys) return fail_with(why, why_size, "out of memory");
    *keys_out = keys;
    *count = n;
    return true;
}

/* ---- for the other files of remote/ (remote_records.c) --------------------- */

bool asyncrt__remote_run(asyncrt_remote *r, const uint8_t shard_key[32], asyncrt_remote_call call, void *arg,
                         asyncrt_redis_result *result, char *why, size_t why_size)
{
    op o = {.kind = OP_CALL, .call = call, .arg = arg};
    bool ok = usable(r) && run_op(r, shard_key, &o);
    if (!ok) snprintf(why, why_size, "%s", !usable(r) ? "no usable remote cache"
                                           : o.why[0] ? o.why : "the shard is switched off for this process");
    *result = o.result;
    return ok;
}

const uint8_t *asyncrt__remote_mac_key(const asyncrt_remote *r) { return r->mac_key; }
