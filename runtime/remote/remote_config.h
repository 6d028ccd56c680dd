/* The remote cache's configuration (issue 26): one Redis URL with
 * attributes in ccache's style (its remote_storage syntax), parsed without
 * touching the network or hiredis.
 *
 *   redis://[[USER:]PASSWORD@]HOST[:PORT][/DB]|attr|attr=value...
 *   redis+unix:/abs/path.sock[?db=N]|...   (also redis+unix:///abs/path.sock)
 *
 * Attributes: read-only (or read-only=true|false), connect-timeout=MS
 * (default 100), operation-timeout=MS (default 1000), prefix=TEXT (default
 * "asyncrt"; key names are PREFIX:v:<hex> and PREFIX:l:<hex>; at most
 * ASYNCRT_REMOTE_PREFIX_MAX characters, none of Redis's glob * ? [ ] \),
 * shards=A,B,... (each name replaces the one '*' of the URL; a key goes to
 * the shard its rendezvous hash picks), lease-wait=MS (default 30000: how
 * long a process that missed waits for another's compile of the same key).
 * A password is kept for AUTH and never printed (see asyncrt__remote_describe). */
#ifndef ASYNCRT_REMOTE_CONFIG_H
#define ASYNCRT_REMOTE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ASYNCRT_REMOTE_MAX_SHARDS 16
#define ASYNCRT_REMOTE_PREFIX_MAX 200 /* characters of prefix=; a longer one is refused */

typedef struct asyncrt_remote_server {
    char *name;        /* the shard's name ("" when not sharded), for hashing */
    char *host;        /* NULL for a unix socket */
    int port;          /* 6379 by default */
    char *socket_path; /* NULL for TCP */
    int db;            /* SELECT'ed when not 0 */
    char *user, *password; /* NULL when absent */
} asyncrt_remote_server;

typedef struct asyncrt_remote_config {
    asyncrt_remote_server servers[ASYNCRT_REMOTE_MAX_SHARDS];
    size_t server_count;
    bool read_only;
    int connect_timeout_ms, operation_timeout_ms, lease_wait_ms;
    char *prefix;
} asyncrt_remote_config;

/* False with why (naming the offending part and the rule) when malformed;
 * *out is then empty (nothing to free). */
bool asyncrt__remote_config_parse(const char *spec, asyncrt_remote_config *out, char *why, size_t why_size);
void asyncrt__remote_config_free(asyncrt_remote_config *c);

/* The configuration for people: URLs with any password as "****". */
void asyncrt__remote_describe(const asyncrt_remote_config *c, char *out, size_t size);
/* One server the same way ("redis://127.0.0.1:6379/0", "redis+unix:/run/r.sock"). */
void asyncrt__remote_describe_server(const asyncrt_remote_server *s, char *out, size_t size);

/* Which shard holds `key` (rendezvous hashing over the shard names). */
size_t asyncrt__remote_shard_of(const asyncrt_remote_config *c, const uint8_t key[32]);

#endif
