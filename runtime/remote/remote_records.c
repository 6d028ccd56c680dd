/* Key records on the remote cache (remote_records.h): sealed elements of
 * one list per source name, pushed and read by EVAL. */
#include "remote_records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

#define STR2(x) #x
#define STR(x) STR2(x)

/* Push, drop the older element of the same key1 (the seal's key: bytes 17
 * to 48 of an element, codec.h) and trim; a key of another type is left
 * alone (0). ARGV: the element, the count kept, key1. */
static const char k_put[] =
    "local t = redis.call('type', KEYS[1]).ok "
    "if t ~= 'list' and t ~= 'none' then return 0 end "
    "local n = tonumber(ARGV[2]) "
    "local old = redis.call('lrange', KEYS[1], 0, n - 1) "
    "redis.call('lpush', KEYS[1], ARGV[1]) "
    "local drop = false "
    "for i, v in ipairs(old) do if string.sub(v, 17, 48) == ARGV[3] or v == '' then "
    "redis.call('lset', KEYS[1], i, '') drop = true end end "
    "if drop then redis.call('lrem', KEYS[1], 0, '') end "
    "redis.call('ltrim', KEYS[1], 0, n - 1) "
    "return 1";

/* The newest ARGV[1] elements, each over ARGV[2] bytes as its length only;
 * -1 for a key of another type. */
static const char k_get[] =
    "local t = redis.call('type', KEYS[1]).ok "
    "if t == 'none' then return {} end "
    "if t ~= 'list' then return -1 end "
    "local out = {} "
    "for i, v in ipairs(redis.call('lrange', KEYS[1], 0, tonumber(ARGV[1]) - 1)) do "
    "if #v <= tonumber(ARGV[2]) then out[i] = v else out[i] = #v end end "
    "return out";

/* Each element at most the bound (or its length), and an array of the count. */
static const asyncrt_resp_limits k_get_limits = {
    .max_bulk = ASYNCRT_REMOTE_RECORD_MAX,
    .max_elements = ASYNCRT_REMOTE_RECORDS_MAX,
    .max_bytes = ASYNCRT_REMOTE_RECORDS_MAX * (ASYNCRT_REMOTE_RECORD_MAX + 64),
    .max_depth = 1,
};
static const asyncrt_resp_limits k_put_limits = {.max_bulk = 64, .max_bytes = 256};

typedef struct call {
    const char *script, *key;
    const char *args[3];
    size_t lens[3];
    int argc;
    const asyncrt_resp_limits *limits;
    asyncrt_resp reply; /* the caller frees it */
} call;

static asyncrt_redis_result eval(asyncrt_redis *conn, void *arg, double deadline, char *why, size_t why_size)
{
    call *c = arg;
    const char *argv[7] = {"EVAL", c->script, "1", c->key};
    size_t lens[7] = {4, strlen(c->script), 1, strlen(c->key)};
    for (int i = 0; i < c->argc; i++) argv[4 + i] = c->args[i], lens[4 + i] = c->lens[i];
    return asyncrt__redis_command(conn, 4 + c->argc, argv, lens, c->limits, deadline, &c->reply, why, why_size);
}

bool asyncrt__remote_records_put(asyncrt_remote *r, const uint8_t name_digest[32], const uint8_t key1[32],
                                 const unsigned char *payload, size_t size, char *why, size_t why_size)
{
    if (!asyncrt__remote_writable(r)) {
        snprintf(why, why_size, "%s", asyncrt__remote_usable(r) ? "the remote cache is read-only" : "no usable remote cache");
        return false;
    }
    asyncrt_writer w = {0};
    asyncrt__seal_begin(&w);
    asyncrt__put(&w, payload, size);
    size_t sealed_size = 0;
    unsigned char *sealed = asyncrt__seal_end(&w, ASYNCRT_RECORD_MAGIC, ASYNCRT_RECORD_FORMAT, key1,
                                              asyncrt__remote_mac_key(r), &sealed_size);
    if (!sealed) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    if (sealed_size > ASYNCRT_REMOTE_RECORD_MAX) {
        snprintf(why, why_size, "a key record of %zu bytes, more than the remote's %zu", sealed_size,
                 ASYNCRT_REMOTE_RECORD_MAX);
        free(sealed);
        return false;
    }
    char name[ASYNCRT_REMOTE_NAME_SIZE];
    asyncrt__remote_name(r, "rec", name_digest, name);
    call c = {.script = k_put, .key = name, .argc = 3, .limits = &k_put_limits,
              .args = {(const char *)sealed, STR(ASYNCRT_REMOTE_RECORDS_MAX), (const char *)key1},
              .lens = {sealed_size, strlen(STR(ASYNCRT_REMOTE_RECORDS_MAX)), 32}};
    asyncrt_redis_result res;
    bool ok = asyncrt__remote_run(r, name_digest, eval, &c, &res, why, why_size);
    free(sealed);
    if (ok && c.reply.type != ASYNCRT_RESP_INTEGER) {
        snprintf(why, why_size, "EVAL: a reply of type %s, where an integer was expected",
                 asyncrt__resp_type_name(c.reply.type));
        ok = false;
    } else if (ok && c.reply.integer != 1) {
        snprintf(why, why_size, "%s holds a value of another kind (not asyncrt's key records): left alone", name);
        ok = false;
    } else if (ok) {
        asyncrt__remote_count(r, ASYNCRT_RC_BYTES_WRITTEN, sealed_size);
    }
    asyncrt__resp_free(&c.reply);
    return ok;
}

/* One element checked: its bound, its seal (the fleet's MAC); the payload
 * copied into *out. False with why. */
static bool open_element(asyncrt_remote *r, const asyncrt_resp *e, size_t i, asyncrt_remote_record *out,
                         char *why, size_t why_size)
{
    const unsigned char *payload;
    size_t payload_size;
    char detail[256];
    if (e->type == ASYNCRT_RESP_INTEGER) {
        snprintf(why, why_size, "key record %zu: %lld bytes, more than %zu: refused unread", i, e->integer,
                 ASYNCRT_REMOTE_RECORD_MAX);
        return false;
    }
    if (e->type != ASYNCRT_RESP_BULK) {
        snprintf(why, why_size, "key record %zu: a reply of type %s, not a string", i, asyncrt__resp_type_name(e->type));
        return false;
    }
    if (!asyncrt__seal_open("key record", e->str, e->len, ASYNCRT_RECORD_MAGIC, ASYNCRT_RECORD_FORMAT, NULL,
                            asyncrt__remote_mac_key(r), &payload, &payload_size, out->key1, detail, sizeof detail)) {
        snprintf(why, why_size, "key record %zu: %s", i, detail);
        return false;
    }
    out->payload = malloc(payload_size ? payload_size : 1);
    if (!out->payload) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    memcpy(out->payload, payload, payload_size);
    out->size = payload_size;
    return true;
}

asyncrt_remote_got asyncrt__remote_records_get(asyncrt_remote *r, const uint8_t name_digest[32],
                                               asyncrt_remote_record *out, size_t max, size_t *count,
                                               size_t *refused, char *why, size_t why_size)
{
    *count = *refused = 0;
    why[0] = '\0';
    if (!asyncrt__remote_usable(r)) {
        snprintf(why, why_size, "no usable remote cache");
        return ASYNCRT_REMOTE_ERROR;
    }
    char name[ASYNCRT_REMOTE_NAME_SIZE], bound[32];
    asyncrt__remote_name(r, "rec", name_digest, name);
    snprintf(bound, sizeof bound, "%zu", ASYNCRT_REMOTE_RECORD_MAX);
    call c = {.script = k_get, .key = name, .argc = 2, .limits = &k_get_limits,
              .args = {STR(ASYNCRT_REMOTE_RECORDS_MAX), bound},
              .lens = {strlen(STR(ASYNCRT_REMOTE_RECORDS_MAX)), strlen(bound)}};
    asyncrt_redis_result res;
    if (!asyncrt__remote_run(r, name_digest, eval, &c, &res, why, why_size)) return ASYNCRT_REMOTE_ERROR;
    asyncrt_remote_got got = ASYNCRT_REMOTE_VALUE;
    if (c.reply.type == ASYNCRT_RESP_ARRAY) {
        char one[300];
        for (size_t i = 0; i < c.reply.count; i++) {
            const asyncrt_resp *e = &c.reply.elements[i];
            if (e->type == ASYNCRT_RESP_BULK) asyncrt__remote_count(r, ASYNCRT_RC_BYTES_READ, e->len);
            if (*count < max && open_element(r, e, i, &out[*count], one, sizeof one)) {
                (*count)++;
            } else if (*count < max) {
                if (!(*refused)++) snprintf(why, why_size, "%s", one);
                asyncrt__remote_count(r, ASYNCRT_RC_REJECTED, 1);
            }
        }
        if (!*count && !*refused) got = ASYNCRT_REMOTE_NOTHING;
        else if (!*count) got = ASYNCRT_REMOTE_BAD;
    } else {
        if (c.reply.type == ASYNCRT_RESP_INTEGER)
            snprintf(why, why_size, "%s holds a value of another kind (not asyncrt's key records)", name);
        else
            snprintf(why, why_size, "EVAL: a reply of type %s, where an array was expected",
                     asyncrt__resp_type_name(c.reply.type));
        *refused = 1;
        asyncrt__remote_count(r, ASYNCRT_RC_REJECTED, 1);
        got = ASYNCRT_REMOTE_BAD;
    }
    asyncrt__resp_free(&c.reply);
    return got;
}

void asyncrt__remote_records_free(asyncrt_remote_record *recs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(recs[i].payload);
        recs[i] = (asyncrt_remote_record){0};
    }
}
