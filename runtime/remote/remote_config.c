#include "remote_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "sha256.h"

static bool parse_int(const char *text, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n), d[n] = '\0';
    return d;
}

static void server_free(asyncrt_remote_server *s)
{
    free(s->name), free(s->host), free(s->socket_path), free(s->user), free(s->password);
    *s = (asyncrt_remote_server){0};
}

void asyncrt__remote_config_free(asyncrt_remote_config *c)
{
    for (size_t i = 0; i < c->server_count; i++) server_free(&c->servers[i]);
    free(c->prefix);
    *c = (asyncrt_remote_config){0};
}

#define FAIL(...) asyncrt__refuse(why, why_size, __VA_ARGS__)

/* redis+unix:/path[?db=N] or redis+unix:///path[?db=N]. */
static bool parse_unix(const char *rest, asyncrt_remote_server *s, char *why, size_t why_size)
{
    if (strncmp(rest, "//", 2) == 0) rest += 2;
    if (rest[0] != '/') return FAIL("the socket of redis+unix: must be an absolute path (redis+unix:/run/redis.sock)");
    const char *q = strchr(rest, '?');
    if (q && (strncmp(q, "?db=", 4) != 0 || !parse_int(q + 4, 0, 1000000, &s->db)))
        return FAIL("\"%s\": the only query redis+unix: takes is ?db=N", q);
    if (!(s->socket_path = dup_n(rest, q ? (size_t)(q - rest) : strlen(rest)))) return FAIL("out of memory");
    return true;
}

/* redis://[[USER:]PASSWORD@]HOST[:PORT][/DB] */
static bool parse_tcp(const char *rest, asyncrt_remote_server *s, char *why, size_t why_size)
{
    const char *at = strrchr(rest, '@');
    if (at) {
        const char *colon = memchr(rest, ':', (size_t)(at - rest));
        const char *pw = colon ? colon + 1 : rest;
        if (colon && !(s->user = dup_n(rest, (size_t)(colon - rest)))) return FAIL("out of memory");
        if (!(s->password = dup_n(pw, (size_t)(at - pw)))) return FAIL("out of memory");
        rest = at + 1;
    }
    size_t host_len = strcspn(rest, ":/");
    if (host_len == 0) return FAIL("a redis:// URL needs a host (redis://HOST[:PORT][/DB])");
    if (!(s->host = dup_n(rest, host_len))) return FAIL("out of memory");
    rest += host_len;
    s->port = 6379;
    char number[16];
    if (*rest == ':') {
        size_t n = strcspn(++rest, "/");
        snprintf(number, sizeof number, "%.*s", (int)(n < 15 ? n : 15), rest);
        if (n >= sizeof number || !parse_int(number, 1, 65535, &s->port))
            return FAIL("port \"%.*s\" is not a number from 1 to 65535", (int)n, rest);
        rest += n;
    }
    if (*rest == '/' && rest[1] && !parse_int(rest + 1, 0, 1000000, &s->db))
        return FAIL("database \"%s\" is not a number (redis://HOST:PORT/DB)", rest + 1);
    return true;
}

static bool parse_url(const char *url, asyncrt_remote_server *s, char *why, size_t why_size)
{
    if (strncmp(url, "redis+unix:", 11) == 0) return parse_unix(url + 11, s, why, why_size);
    if (strncmp(url, "redis://", 8) == 0) return parse_tcp(url + 8, s, why, why_size);
    return FAIL("\"%.*s...\" is not a redis:// or redis+unix: URL", (int)strcspn(url, ":"), url);
}

/* One attribute: read-only, connect-timeout=MS, ... */
static bool parse_attr(const char *attr, asyncrt_remote_config *c, char **shards, char *why, size_t why_size)
{
    const char *eq = strchr(attr, '=');
    size_t n = eq ? (size_t)(eq - attr) : strlen(attr);
    const char *v = eq ? eq + 1 : NULL;
#define IS(name) (n == strlen(name) && strncmp(attr, name, n) == 0)
    if (IS("read-only")) {
        if (v && strcmp(v, "true") && strcmp(v, "false")) return FAIL("read-only=%s: the value is true or false", v);
        c->read_only = !v || strcmp(v, "true") == 0;
        return true;
    }
    int *ms = IS("connect-timeout") ? &c->connect_timeout_ms : IS("operation-timeout") ? &c->operation_timeout_ms
              : IS("lease-wait")    ? &c->lease_wait_ms
                                    : NULL;
    if (ms) {
        if (!v || !parse_int(v, IS("lease-wait") ? 0 : 1, 600000, ms))
            return FAIL("%.*s=%s: the value is a number of milliseconds up to 600000", (int)n, attr, v ? v : "");
        return true;
    }
    if (IS("prefix") || IS("shards")) {
        if (!v || !*v || strchr(v, ' ')) return FAIL("%.*s needs a value without spaces", (int)n, attr);
        if (IS("prefix") && strlen(v) > ASYNCRT_REMOTE_PREFIX_MAX)
            return FAIL("prefix=%.40s... is %zu characters long; the limit is %d", v, strlen(v),
                        ASYNCRT_REMOTE_PREFIX_MAX);
        if (IS("prefix") && strpbrk(v, "*?[]\\"))
            return FAIL("prefix=%s: * ? [ ] and \\ are Redis glob characters (asyncrt-cache pull's SCAN MATCH "
                        "PREFIX:v:*); the prefix may not hold them", v);
        char **slot = IS("prefix") ? &c->prefix : shards;
        free(*slot);
        return (*slot = strdup(v)) ? true : FAIL("out of memory");
    }
    return FAIL("unknown attribute \"%.*s\" (read-only, connect-timeout=, operation-timeout=, prefix=, shards=, "
                "lease-wait=)", (int)n, attr);
#undef IS
}

/* The URL with each shard's name in place of its '*'. */
static bool add_servers(asyncrt_remote_config *c, const char *url, const char *shards, char *why, size_t why_size)
{
    const char *star = strchr(url, '*');
    if (!shards) {
        if (star) return FAIL("the URL has a '*' but no shards= attribute names what replaces it");
        c->server_count = 1;
        return parse_url(url, &c->servers[0], why, why_size);
    }
    if (!star || strchr(star + 1, '*')) return FAIL("with shards=, the URL must hold exactly one '*'");
    for (const char *p = shards; *p;) {
        size_t n = strcspn(p, ",");
        if (n == 0) return FAIL("shards=%s: an empty shard name", shards);
        if (c->server_count == ASYNCRT_REMOTE_MAX_SHARDS)
            return FAIL("shards=%s: at most %d shards", shards, ASYNCRT_REMOTE_MAX_SHARDS);
        asyncrt_remote_server *s = &c->servers[c->server_count++];
        char *one = malloc(strlen(url) + n + 1);
        if (!one || !(s->name = dup_n(p, n))) {
            free(one);
            return FAIL("out of memory");
        }
        sprintf(one, "%.*s%s%s", (int)(star - url), url, s->name, star + 1);
        bool ok = parse_url(one, s, why, why_size);
        free(one);
        if (!ok) return false;
        p += n + (p[n] == ',');
    }
    return true;
}

bool asyncrt__remote_config_parse(const char *spec, asyncrt_remote_config *out, char *why, size_t why_size)
{
    *out = (asyncrt_remote_config){.connect_timeout_ms = 100, .operation_timeout_ms = 1000, .lease_wait_ms = 30000};
    char *copy = strdup(spec ? spec : ""), *shards = NULL;
    bool ok = copy != NULL;
    if (!ok) snprintf(why, why_size, "out of memory");
    char *save = NULL, *url = ok ? strtok_r(copy, "|", &save) : NULL;
    if (ok && !url) ok = FAIL("an empty remote cache URL (redis://HOST:PORT or redis+unix:/PATH)");
    for (char *attr; ok && (attr = strtok_r(NULL, "|", &save));) ok = parse_attr(attr, out, &shards, why, why_size);
    if (ok) ok = add_servers(out, url, shards, why, why_size);
    if (ok && !out->prefix && !(out->prefix = strdup("asyncrt"))) ok = FAIL("out of memory");
    free(shards);
    free(copy);
    if (!ok) asyncrt__remote_config_free(out);
    return ok;
}

void asyncrt__remote_describe_server(const asyncrt_remote_server *s, char *out, size_t size)
{
    if (s->socket_path)
        snprintf(out, size, "redis+unix:%s%s", s->socket_path, s->db ? "?db=" : "");
    else
        snprintf(out, size, "redis://%s%s%s:%d", s->password ? (s->user ? s->user : "") : "",
                 s->password ? (s->user ? ":****@" : "****@") : "", s->host, s->port);
    size_t n = strlen(out);
    if (s->db && n < size) snprintf(out + n, size - n, s->socket_path ? "%d" : "/%d", s->db);
}

void asyncrt__remote_describe(const asyncrt_remote_config *c, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < c->server_count && n + 1 < size; i++) {
        if (i) out[n++] = ' ', out[n] = '\0';
        asyncrt__remote_describe_server(&c->servers[i], out + n, size - n);
        n += strlen(out + n);
    }
    if (n + 1 < size)
        snprintf(out + n, size - n, "%s (connect-timeout=%d ms, operation-timeout=%d ms, prefix=%s)",
                 c->read_only ? " read-only" : "", c->connect_timeout_ms, c->operation_timeout_ms, c->prefix);
}

size_t asyncrt__remote_shard_of(const asyncrt_remote_config *c, const uint8_t key[32])
{
    size_t best = 0;
    uint8_t best_score[32] = {0};
    for (size_t i = 0; c->server_count > 1 && i < c->server_count; i++) {
        asyncrt_sha256 h;
        uint8_t score[32];
        asyncrt__sha256_init(&h);
        asyncrt__sha256_update(&h, key, 32);
        asyncrt__sha256_update(&h, c->servers[i].name, strlen(c->servers[i].name));
        asyncrt__sha256_final(&h, score);
        if (i == 0 || memcmp(score, best_score, 32) > 0) best = i, memcpy(best_score, score, 32);
    }
    return best;
}
