#define _GNU_SOURCE /* RTLD_ flags */
#include "remote_redis.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "diag.h" /* asyncrt__now_ms */
#include "resp.h"
#include "settings.h"

#if !defined(ASYNCRT_NO_HIREDIS) && __has_include(<hiredis/hiredis.h>)
#include <hiredis/hiredis.h>
#define HAVE_HIREDIS 1
#else
#define HAVE_HIREDIS 0
#endif

#if HAVE_HIREDIS
#define STR2(x) #x
#define STR(x) STR2(x)
/* The soname that matches the headers' structures (redisContext's layout
 * differs between 0.14 and 1.x). */
#define HIREDIS_FILE "libhiredis.so." STR(HIREDIS_SONAME)

/* hiredis only connects (name resolution, the connect timeout, unix
 * sockets); commands and replies are resp.c's, bounded in bytes and time,
 * since hiredis's reader buffers a whole reply of any declared size. */
static struct {
    redisContext *(*connect_tcp)(const char *, int, const struct timeval);
    redisContext *(*connect_unix)(const char *, const struct timeval);
    void (*free_context)(redisContext *);
} g_api;
static char g_load_error[512];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void load_once(void)
{
    const asyncrt_settings *settings = asyncrt__settings_process(); /* a process-wide loader, as NVRTC's */
    const char *env = settings ? settings->libhiredis : NULL;
    const char *file = env && *env ? env : HIREDIS_FILE;
    void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(g_load_error, sizeof g_load_error, "cannot open %s (Debian: libhiredis%s): %s", file,
                 STR(HIREDIS_SONAME), dlerror());
        return;
    }
    *(void **)&g_api.connect_tcp = dlsym(lib, "redisConnectWithTimeout");
    *(void **)&g_api.connect_unix = dlsym(lib, "redisConnectUnixWithTimeout");
    *(void **)&g_api.free_context = dlsym(lib, "redisFree");
    if (!g_api.connect_tcp || !g_api.connect_unix || !g_api.free_context) {
        snprintf(g_load_error, sizeof g_load_error, "%s lacks a hiredis function asyncrt needs", file);
        g_api.connect_tcp = NULL;
        dlclose(lib);
    }
}

bool asyncrt__redis_available(char *why, size_t why_size)
{
    pthread_once(&g_once, load_once);
    if (g_api.connect_tcp) return true;
    snprintf(why, why_size, "%s", g_load_error);
    return false;
}

struct asyncrt_redis {
    redisContext *c;
    asyncrt_resp_conn io; /* on c's socket */
};

/* What a reply may hold: small ones (AUTH, SELECT, SET, EVAL), a value, a SCAN step. */
static const asyncrt_resp_limits small_reply = {.max_bulk = 512, .max_bytes = 4096};
static const asyncrt_resp_limits scan_reply = {.max_bulk = ASYNCRT_REDIS_SCAN_KEY_MAX,
                                               .max_elements = ASYNCRT_REDIS_SCAN_KEYS_MAX,
                                               .max_bytes = (size_t)16 << 20, .max_depth = 2};

/* One command: sent and its whole reply read by `deadline`. A server's
 * error reply is ERROR with its text in why. */
static asyncrt_redis_result command(asyncrt_redis *r, int argc, const char **argv, const size_t *lens,
                                    const asyncrt_resp_limits *limits, double deadline, asyncrt_resp *reply,
                                    char *why, size_t why_size)
{
    char detail[256];
    asyncrt_resp_status s = asyncrt__resp_send(&r->io, argc, argv, lens, deadline, detail, sizeof detail);
    if (s == ASYNCRT_RESP_OK) s = asyncrt__resp_read(&r->io, limits, deadline, reply, detail, sizeof detail);
    if (s != ASYNCRT_RESP_OK) {
        snprintf(why, why_size, "%s: %s", argv[0], detail);
        return s == ASYNCRT_RESP_TIMEOUT ? ASYNCRT_REDIS_TIMEOUT : ASYNCRT_REDIS_ERROR;
    }
    if (reply->type == ASYNCRT_RESP_ERROR) {
        snprintf(why, why_size, "%s: the server said %s", argv[0],
                 asyncrt__resp_printable(reply->str, reply->len, detail, 201));
        asyncrt__resp_free(reply);
        return ASYNCRT_REDIS_ERROR;
    }
    return ASYNCRT_REDIS_OK;
}

/* A reply of another type than the command returns: refused. */
static asyncrt_redis_result wrong_type(asyncrt_resp *reply, const char *cmd, const char *expected, char *why,
                                       size_t why_size)
{
    snprintf(why, why_size, "%s: a reply of type %s, where %s was expected", cmd,
             asyncrt__resp_type_name(reply->type), expected);
    asyncrt__resp_free(reply);
    return ASYNCRT_REDIS_ERROR;
}

/* A command whose reply is +OK. */
static bool ok_command(asyncrt_redis *r, int argc, const char **argv, double deadline, char *why, size_t why_size)
{
    asyncrt_resp reply;
    if (command(r, argc, argv, NULL, &small_reply, deadline, &reply, why, why_size) != ASYNCRT_REDIS_OK) return false;
    if (reply.type != ASYNCRT_RESP_STATUS) {
        wrong_type(&reply, argv[0], "+OK", why, why_size);
        return false;
    }
    asyncrt__resp_free(&reply);
    return true;
}

static struct timeval ms_to_tv(int ms) { return (struct timeval){ms / 1000, (ms % 1000) * 1000}; }

asyncrt_redis *asyncrt__redis_connect(const asyncrt_remote_server *s, int connect_ms, int op_ms, double *deadline,
                                     char *why, size_t why_size)
{
    if (!asyncrt__redis_available(why, why_size)) return NULL;
    asyncrt_redis *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    r->c = s->socket_path ? g_api.connect_unix(s->socket_path, ms_to_tv(connect_ms))
                          : g_api.connect_tcp(s->host, s->port, ms_to_tv(connect_ms));
    if (!r->c || r->c->err) {
        snprintf(why, why_size, "connect: %s", r->c ? r->c->errstr : "out of memory");
        asyncrt__redis_close(r);
        return NULL;
    }
    r->io.fd = r->c->fd;
    *deadline = asyncrt__now_ms() + op_ms; /* AUTH, SELECT and the caller's first command */
    char db[16];
    snprintf(db, sizeof db, "%d", s->db);
    const char *auth[] = {"AUTH", s->user ? s->user : s->password, s->password};
    const char *select[] = {"SELECT", db};
    if ((s->password && !ok_command(r, s->user ? 3 : 2, auth, *deadline, why, why_size)) ||
        (s->db && !ok_command(r, 2, select, *deadline, why, why_size))) {
        asyncrt__redis_close(r);
        return NULL;
    }
    return r;
}

void asyncrt__redis_close(asyncrt_redis *r)
{
    if (!r) return;
    if (r->c) g_api.free_context(r->c);
    free(r);
}

asyncrt_redis_result asyncrt__redis_get(asyncrt_redis *r, const char *key, size_t max, double deadline,
                                       unsigned char **value, size_t *size, bool *too_big, char *why, size_t why_size)
{
    *value = NULL;
    *size = 0;
    *too_big = false;
    char end[32];
    snprintf(end, sizeof end, "%zu", max); /* GETRANGE's end is inclusive: max + 1 bytes tell "too big" */
    const char *argv[] = {"GETRANGE", key, "0", end};
    const asyncrt_resp_limits limits = {.max_bulk = max + 1, .max_bytes = max + 2};
    asyncrt_resp reply;
    asyncrt_redis_result result = command(r, 4, argv, NULL, &limits, deadline, &reply, why, why_size);
    if (result != ASYNCRT_REDIS_OK) return result;
    if (reply.type != ASYNCRT_RESP_BULK) return wrong_type(&reply, "GETRANGE", "a bulk string", why, why_size);
    if (reply.len > max) *too_big = true;
    else if (reply.len == 0) result = ASYNCRT_REDIS_NIL;
    else *value = (unsigned char *)reply.str, *size = reply.len, reply.str = NULL; /* handed over, not copied */
    asyncrt__resp_free(&reply);
    return result;
}

asyncrt_redis_result asyncrt__redis_set(asyncrt_redis *r, const char *key, const void *value, size_t size, bool nx,
                                       long ttl_ms, double deadline, char *why, size_t why_size)
{
    char ttl[32];
    snprintf(ttl, sizeof ttl, "%ld", ttl_ms);
    const char *argv[6] = {"SET", key, value};
    size_t lens[6] = {3, strlen(key), size};
    int argc = 3;
    if (nx) argv[argc] = "NX", lens[argc++] = 2;
    if (ttl_ms > 0) {
        argv[argc] = "PX", lens[argc++] = 2;
        argv[argc] = ttl, lens[argc++] = strlen(ttl);
    }
    asyncrt_resp reply;
    asyncrt_redis_result result = command(r, argc, argv, lens, &small_reply, deadline, &reply, why, why_size);
    if (result != ASYNCRT_REDIS_OK) return result;
    if (reply.type == ASYNCRT_RESP_NIL && nx) result = ASYNCRT_REDIS_NIL; /* NX: the key was there */
    else if (reply.type != ASYNCRT_RESP_STATUS)
        return wrong_type(&reply, "SET", nx ? "+OK or nil" : "+OK", why, why_size);
    asyncrt__resp_free(&reply);
    return result;
}

asyncrt_redis_result asyncrt__redis_command(asyncrt_redis *r, int argc, const char **argv, const size_t *lens,
                                            const asyncrt_resp_limits *limits, double deadline, asyncrt_resp *reply,
                                            char *why, size_t why_size)
{
    return command(r, argc, argv, lens, limits, deadline, reply, why, why_size);
}

/* EVAL's reply: 1 done, 0 not. */
static asyncrt_redis_result eval(asyncrt_redis *r, int argc, const char **argv, const size_t *lens, double deadline,
                                 char *why, size_t why_size)
{
    asyncrt_resp reply;
    asyncrt_redis_result result = command(r, argc, argv, lens, &small_reply, deadline, &reply, why, why_size);
    if (result != ASYNCRT_REDIS_OK) return result;
    if (reply.type != ASYNCRT_RESP_INTEGER) return wrong_type(&reply, "EVAL", "an integer", why, why_size);
    result = reply.integer ? ASYNCRT_REDIS_OK : ASYNCRT_REDIS_NIL;
    asyncrt__resp_free(&reply);
    return result;
}

asyncrt_redis_result asyncrt__redis_replace_if(asyncrt_redis *r, const char *key, const void *value, size_t size,
                                              const unsigned char *head, size_t head_size, double deadline, char *why,
                                              size_t why_size)
{
    static const char script[] =
        "local h = redis.call('getrange', KEYS[1], 0, #ARGV[2] - 1) "
        "if h == ARGV[2] or h == '' then redis.call('set', KEYS[1], ARGV[1]) return 1 else return 0 end";
    const char *argv[] = {"EVAL", script, "1", key, value, (const char *)head};
    const size_t lens[] = {4, sizeof script - 1, 1, strlen(key), size, head_size};
    return eval(r, 6, argv, lens, deadline, why, why_size);
}

asyncrt_redis_result asyncrt__redis_del_if(asyncrt_redis *r, const char *key, const char *token, double deadline,
                                          char *why, size_t why_size)
{
    static const char script[] =
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
    const char *argv[] = {"EVAL", script, "1", key, token};
    return eval(r, 5, argv, NULL, deadline, why, why_size);
}

/* SCAN's cursor: a decimal string of 1 to 20 digits that fits 64 bits. */
static bool parse_cursor(const asyncrt_resp *e, unsigned long long *out)
{
    if (e->type != ASYNCRT_RESP_BULK || e->len == 0 || e->len > 20) return false;
    unsigned long long v = 0;
    for (size_t i = 0; i < e->len; i++) {
        unsigned d = (unsigned)(e->str[i] - '0');
        if (d > 9 || v > (ULLONG_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* What a reply element is, for a message: "\"text\"" (printable, at most
 * 60 bytes) for a string, else its type. */
static void describe(const asyncrt_resp *e, char *out, size_t size)
{
    char text[61];
    if (e->str) snprintf(out, size, "\"%s\"", asyncrt__resp_printable(e->str, e->len, text, sizeof text));
    else if (e->type == ASYNCRT_RESP_ARRAY) snprintf(out, size, "an array of %zu", e->count);
    else snprintf(out, size, "%s", asyncrt__resp_type_name(e->type));
}

/* Why a SCAN reply is refused, or NULL, with what was refused in `bad`: its
 * shape, its cursor, and every name a string under `prefix` (match up to
 * its first wildcard), longer than it, with no NUL. */
static const char *scan_refusal(const asyncrt_resp *reply, const char *prefix, unsigned long long *cursor,
                                char *bad, size_t bad_size)
{
    if (reply->type != ASYNCRT_RESP_ARRAY || reply->count != 2 || reply->elements[1].type != ASYNCRT_RESP_ARRAY) {
        describe(reply->type == ASYNCRT_RESP_ARRAY && reply->count == 2 ? &reply->elements[1] : reply, bad,
                 bad_size);
        return "not an array of a cursor and an array of names";
    }
    if (!parse_cursor(&reply->elements[0], cursor)) {
        describe(&reply->elements[0], bad, bad_size);
        return "a cursor that is not a decimal number of 64 bits";
    }
    size_t n = strlen(prefix);
    for (size_t i = 0; i < reply->elements[1].count; i++) {
        const asyncrt_resp *k = &reply->elements[1].elements[i];
        if (k->type != ASYNCRT_RESP_BULK) {
            describe(k, bad, bad_size);
            return "a name that is not a bulk string";
        }
        if (k->len > n && strncmp(k->str, prefix, n) == 0 && !memchr(k->str, 0, k->len)) continue;
        describe(k, bad, bad_size);
        return "a name not under the prefix asked for (or no longer than it, or with a NUL byte)";
    }
    return NULL;
}

asyncrt_redis_result asyncrt__redis_scan(asyncrt_redis *r, unsigned long long *cursor, const char *match,
                                        double deadline, char ***keys, size_t *count, char *why, size_t why_size)
{
    *keys = NULL;
    *count = 0;
    char at[32], prefix[ASYNCRT_REDIS_SCAN_KEY_MAX + 1], bad[80] = "";
    snprintf(at, sizeof at, "%llu", *cursor);
    snprintf(prefix, sizeof prefix, "%.*s", (int)strcspn(match, "*?[\\"), match);
    const char *argv[] = {"SCAN", at, "MATCH", match, "COUNT", ASYNCRT_REDIS_SCAN_COUNT};
    asyncrt_resp reply;
    asyncrt_redis_result result = command(r, 6, argv, NULL, &scan_reply, deadline, &reply, why, why_size);
    if (result != ASYNCRT_REDIS_OK) return result;
    const char *refusal = scan_refusal(&reply, prefix, cursor, bad, sizeof bad);
    asyncrt_resp *names = refusal ? NULL : &reply.elements[1];
    if (names && names->count && !(*keys = calloc(names->count, sizeof **keys))) refusal = "out of memory";
    for (size_t i = 0; names && *keys && i < names->count; i++) /* handed over, not copied */
        (*keys)[(*count)++] = names->elements[i].str, names->elements[i].str = NULL;
    asyncrt__resp_free(&reply);
    if (!refusal) return ASYNCRT_REDIS_OK;
    snprintf(why, why_size, "SCAN: a reply refused: %s%s%s%s", refusal, bad[0] ? " (" : "", bad, bad[0] ? ")" : "");
    return ASYNCRT_REDIS_ERROR;
}

#else /* built without hiredis's headers */

bool asyncrt__redis_available(char *why, size_t why_size)
{
    snprintf(why, why_size, "this asyncrt was built without the hiredis headers (Debian: libhiredis-dev), so it "
             "has no remote cache");
    return false;
}

asyncrt_redis *asyncrt__redis_connect(const asyncrt_remote_server *s, int connect_ms, int op_ms, double *deadline,
                                     char *why, size_t why_size)
{
    (void)s, (void)connect_ms, (void)op_ms, (void)deadline;
    asyncrt__redis_available(why, why_size);
    return NULL;
}

void asyncrt__redis_close(asyncrt_redis *r) { (void)r; }

asyncrt_redis_result asyncrt__redis_get(asyncrt_redis *r, const char *key, size_t max, double deadline,
                                       unsigned char **value, size_t *size, bool *too_big, char *why, size_t why_size)
{
    (void)r, (void)key, (void)max, (void)deadline, (void)too_big;
    *value = NULL, *size = 0;
    asyncrt__redis_available(why, why_size); /* says why */
    return ASYNCRT_REDIS_ERROR;
}

asyncrt_redis_result asyncrt__redis_set(asyncrt_redis *r, const char *key, const void *value, size_t size, bool nx,
                                       long ttl_ms, double deadline, char *why, size_t why_size)
{
    (void)r, (void)key, (void)value, (void)size, (void)nx, (void)ttl_ms, (void)deadline;
    asyncrt__redis_available(why, why_size); /* says why */
    return ASYNCRT_REDIS_ERROR;
}

asyncrt_redis_result asyncrt__redis_replace_if(asyncrt_redis *r, const char *key, const void *value, size_t size,
                                              const unsigned char *head, size_t head_size, double deadline, char *why,
                                              size_t why_size)
{
    (void)r, (void)key, (void)value, (void)size, (void)head, (void)head_size, (void)deadline;
    asyncrt__redis_available(why, why_size); /* says why */
    return ASYNCRT_REDIS_ERROR;
}

asyncrt_redis_result asyncrt__redis_del_if(asyncrt_redis *r, const char *key, const char *token, double deadline,
                                          char *why, size_t why_size)
{
    (void)r, (void)key, (void)token, (void)deadline;
    asyncrt__redis_available(why, why_size); /* says why */
    return ASYNCRT_REDIS_ERROR;
}

asyncrt_redis_result asyncrt__redis_scan(asyncrt_redis *r, unsigned long long *cursor, const char *match,
                                        double deadline, char ***keys, size_t *count, char *why, size_t why_size)
{
    (void)r, (void)cursor, (void)match, (void)deadline;
    *keys = NULL, *count = 0;
    asyncrt__redis_available(why, why_size); /* says why */
    return ASYNCRT_REDIS_ERROR;
}

asyncrt_redis_result asyncrt__redis_command(asyncrt_redis *r, int argc, const char **argv, const size_t *lens,
                                            const asyncrt_resp_limits *limits, double deadline, asyncrt_resp *reply,
                                            char *why, size_t why_size)
{
    (void)r, (void)argc, (void)argv, (void)lens, (void)limits, (void)deadline;
    *reply = (asyncrt_resp){0};
    asyncrt__redis_available(why, why_size); /* says why */
    return ASYNCRT_REDIS_ERROR;
}

#endif
