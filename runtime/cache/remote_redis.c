#define _GNU_SOURCE /* sigtimedwait with _POSIX_C_SOURCE, RTLD_ flags */
#include "remote_redis.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

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
/* The soname that matches the headers' structures (redisReply's layout
 * differs between 0.14 and 1.x). */
#define HIREDIS_FILE "libhiredis.so." STR(HIREDIS_SONAME)

static struct {
    redisContext *(*connect_tcp)(const char *, int, const struct timeval);
    redisContext *(*connect_unix)(const char *, const struct timeval);
    int (*set_timeout)(redisContext *, const struct timeval);
    void *(*command_argv)(redisContext *, int, const char **, const size_t *);
    void (*free_reply)(void *);
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
    *(void **)&g_api.set_timeout = dlsym(lib, "redisSetTimeout");
    *(void **)&g_api.command_argv = dlsym(lib, "redisCommandArgv");
    *(void **)&g_api.free_reply = dlsym(lib, "freeReplyObject");
    *(void **)&g_api.free_context = dlsym(lib, "redisFree");
    if (!g_api.connect_tcp || !g_api.connect_unix || !g_api.set_timeout || !g_api.command_argv ||
        !g_api.free_reply || !g_api.free_context) {
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
    bool timed_out; /* the last command failed by its timeout */
};

/* ERROR, or TIMEOUT when that is why. */
static asyncrt_redis_result failed(const asyncrt_redis *r)
{
    return r->timed_out ? ASYNCRT_REDIS_TIMEOUT : ASYNCRT_REDIS_ERROR;
}

/* SIGPIPE from a write to a server that went away: blocked on this thread
 * around each command, and one raised meanwhile is consumed, so the process
 * never sees it (the write fails with EPIPE instead). */
typedef struct pipe_guard {
    sigset_t old;
    bool was_pending;
} pipe_guard;

static void guard_begin(pipe_guard *g)
{
    sigset_t pipe_only, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigpending(&pending);
    g->was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &g->old);
}

static void guard_end(pipe_guard *g)
{
    sigset_t pipe_only, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigpending(&pending);
    if (!g->was_pending && sigismember(&pending, SIGPIPE)) {
        const struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR) {}
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static struct timeval ms_to_tv(int ms) { return (struct timeval){ms / 1000, (ms % 1000) * 1000}; }

/* One command; NULL (why) when the connection failed or the server said
 * ERR; r->timed_out when the operation timeout passed. */
static redisReply *command(asyncrt_redis *r, int argc, const char **argv, const size_t *lens, char *why,
                           size_t why_size)
{
    pipe_guard g;
    r->timed_out = false;
    guard_begin(&g);
    errno = 0;
    redisReply *reply = g_api.command_argv(r->c, argc, argv, lens);
    int err = errno;
    guard_end(&g);
    if (!reply) {
        /* SO_RCVTIMEO/SO_SNDTIMEO expiring: the read or write fails with EAGAIN */
        r->timed_out = r->c->err == REDIS_ERR_IO && (err == EAGAIN || err == EWOULDBLOCK || err == ETIMEDOUT);
        snprintf(why, why_size, "%s: %s", argv[0],
                 r->timed_out ? "no answer within the operation timeout" : r->c->errstr[0] ? r->c->errstr : "no reply");
        return NULL;
    }
    if (reply->type == REDIS_REPLY_ERROR) {
        snprintf(why, why_size, "%s: the server said %.*s", argv[0], (int)(reply->len < 200 ? reply->len : 200),
                 reply->str);
        g_api.free_reply(reply);
        return NULL;
    }
    return reply;
}

asyncrt_redis *asyncrt__redis_connect(const asyncrt_remote_server *s, int connect_ms, int op_ms, char *why,
                                     size_t why_size)
{
    if (!asyncrt__redis_available(why, why_size)) return NULL;
    asyncrt_redis *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    pipe_guard g;
    guard_begin(&g);
    r->c = s->socket_path ? g_api.connect_unix(s->socket_path, ms_to_tv(connect_ms))
                          : g_api.connect_tcp(s->host, s->port, ms_to_tv(connect_ms));
    guard_end(&g);
    if (!r->c || r->c->err) {
        snprintf(why, why_size, "connect: %s", r->c ? r->c->errstr : "out of memory");
        asyncrt__redis_close(r);
        return NULL;
    }
    if (g_api.set_timeout(r->c, ms_to_tv(op_ms)) != 0) {
        snprintf(why, why_size, "cannot set the operation timeout: %s", r->c->errstr);
        asyncrt__redis_close(r);
        return NULL;
    }
    char db[16];
    snprintf(db, sizeof db, "%d", s->db);
    const char *auth[] = {"AUTH", s->user ? s->user : s->password, s->password};
    const char *select[] = {"SELECT", db};
    redisReply *reply = NULL;
    bool ok = (!s->password || (reply = command(r, s->user ? 3 : 2, auth, NULL, why, why_size)));
    if (reply) g_api.free_reply(reply), reply = NULL;
    if (ok && s->db) ok = (reply = command(r, 2, select, NULL, why, why_size)) != NULL;
    if (reply) g_api.free_reply(reply);
    if (!ok) {
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

asyncrt_redis_result asyncrt__redis_get(asyncrt_redis *r, const char *key, size_t max, unsigned char **value,
                                       size_t *size, bool *too_big, char *why, size_t why_size)
{
    *value = NULL;
    *size = 0;
    *too_big = false;
    char end[32];
    snprintf(end, sizeof end, "%zu", max); /* GETRANGE's end is inclusive: max + 1 bytes tell "too big" */
    const char *argv[] = {"GETRANGE", key, "0", end};
    redisReply *reply = command(r, 4, argv, NULL, why, why_size);
    if (!reply) return failed(r);
    asyncrt_redis_result result = ASYNCRT_REDIS_NIL;
    if (reply->type != REDIS_REPLY_STRING) {
        snprintf(why, why_size, "GETRANGE: an unexpected reply (type %d)", reply->type);
        result = ASYNCRT_REDIS_ERROR;
    } else if (reply->len > max) {
        *too_big = true;
        result = ASYNCRT_REDIS_OK;
    } else if (reply->len > 0) {
        if ((*value = malloc(reply->len))) {
            memcpy(*value, reply->str, reply->len);
            *size = reply->len;
            result = ASYNCRT_REDIS_OK;
        } else {
            snprintf(why, why_size, "out of memory for %zu bytes", (size_t)reply->len);
            result = ASYNCRT_REDIS_ERROR;
        }
    }
    g_api.free_reply(reply);
    return result;
}

asyncrt_redis_result asyncrt__redis_set(asyncrt_redis *r, const char *key, const void *value, size_t size, bool nx,
                                       long ttl_ms, char *why, size_t why_size)
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
    redisReply *reply = command(r, argc, argv, lens, why, why_size);
    if (!reply) return failed(r);
    asyncrt_redis_result result = reply->type == REDIS_REPLY_NIL ? ASYNCRT_REDIS_NIL : ASYNCRT_REDIS_OK;
    g_api.free_reply(reply);
    return result;
}

asyncrt_redis_result asyncrt__redis_del_if(asyncrt_redis *r, const char *key, const char *token, char *why,
                                          size_t why_size)
{
    static const char script[] =
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
    const char *argv[] = {"EVAL", script, "1", key, token};
    redisReply *reply = command(r, 5, argv, NULL, why, why_size);
    if (!reply) return failed(r);
    asyncrt_redis_result result = reply->type == REDIS_REPLY_INTEGER && reply->integer ? ASYNCRT_REDIS_OK
                                                                                        : ASYNCRT_REDIS_NIL;
    g_api.free_reply(reply);
    return result;
}

asyncrt_redis_result asyncrt__redis_scan(asyncrt_redis *r, unsigned long long *cursor, const char *match,
                                        char ***keys, size_t *count, char *why, size_t why_size)
{
    *keys = NULL;
    *count = 0;
    char at[32];
    snprintf(at, sizeof at, "%llu", *cursor);
    const char *argv[] = {"SCAN", at, "MATCH", match, "COUNT", "256"};
    redisReply *reply = command(r, 6, argv, NULL, why, why_size);
    if (!reply) return failed(r);
    bool ok = reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
              reply->element[0]->type == REDIS_REPLY_STRING && reply->element[1]->type == REDIS_REPLY_ARRAY;
    redisReply *names = ok ? reply->element[1] : NULL;
    if (ok) *cursor = strtoull(reply->element[0]->str, NULL, 10);
    if (ok && names->elements && !(*keys = calloc(names->elements, sizeof **keys))) ok = false;
    for (size_t i = 0; ok && i < names->elements; i++) {
        if (names->element[i]->type != REDIS_REPLY_STRING) continue;
        if (!((*keys)[*count] = strdup(names->element[i]->str))) ok = false;
        else (*count)++;
    }
    g_api.free_reply(reply);
    if (ok) return ASYNCRT_REDIS_OK;
    for (size_t i = 0; i < *count; i++) free((*keys)[i]);
    free(*keys);
    *keys = NULL;
    *count = 0;
    snprintf(why, why_size, "SCAN: an unexpected reply");
    return ASYNCRT_REDIS_ERROR;
}

#else /* built without hiredis's headers */

bool asyncrt__redis_available(char *why, size_t why_size)
{
    snprintf(why, why_size, "this asyncrt was built without the hiredis headers (Debian: libhiredis-dev), so it "
             "has no remote cache");
    return false;
}

asyncrt_redis *asyncrt__redis_connect(const asyncrt_remote_server *s, int connect_ms, int op_ms, char *why,
                                     size_t why_size)
{
    (void)s, (void)connect_ms, (void)op_ms;
    asyncrt__redis_available(why, why_size);
    return NULL;
}

void asyncrt__redis_close(asyncrt_redis *r) { (void)r; }

asyncrt_redis_result asyncrt__redis_get(asyncrt_redis *r, const char *key, size_t max, unsigned char **value,
                                       size_t *size, bool *too_big, char *why, size_t why_size)
{
    (void)r, (void)key, (void)max, (void)too_big;
    *value = NULL, *size = 0;
    return asyncrt__redis_available(why, why_size), ASYNCRT_REDIS_ERROR;
}

asyncrt_redis_result asyncrt__redis_set(asyncrt_redis *r, const char *key, const void *value, size_t size, bool nx,
                                       long ttl_ms, char *why, size_t why_size)
{
    (void)r, (void)key, (void)value, (void)size, (void)nx, (void)ttl_ms;
    return asyncrt__redis_available(why, why_size), ASYNCRT_REDIS_ERROR;
}

asyncrt_redis_result asyncrt__redis_del_if(asyncrt_redis *r, const char *key, const char *token, char *why,
                                          size_t why_size)
{
    (void)r, (void)key, (void)token;
    return asyncrt__redis_available(why, why_size), ASYNCRT_REDIS_ERROR;
}

asyncrt_redis_result asyncrt__redis_scan(asyncrt_redis *r, unsigned long long *cursor, const char *match,
                                        char ***keys, size_t *count, char *why, size_t why_size)
{
    (void)r, (void)cursor, (void)match;
    *keys = NULL, *count = 0;
    return asyncrt__redis_available(why, why_size), ASYNCRT_REDIS_ERROR;
}

#endif
