/* A minimal Redis client for the remote cache, over hiredis opened at run
 * time (dlopen of the libhiredis.so.<soname> its headers name, or
 * $ASYNCRT_LIBHIREDIS), only when a remote cache is configured: a program
 * that never uses one never needs hiredis. Built without the hiredis headers
 * (Debian: libhiredis-dev), every call fails with a message that says so.
 *
 * Each call is bounded: connecting by connect_ms, each command by op_ms
 * (SO_RCVTIMEO/SO_SNDTIMEO). A connection that failed once is unusable:
 * close it. SIGPIPE from a server that went away is blocked and consumed on
 * the calling thread, never delivered to the process. One connection is
 * used by one thread at a time. */
#ifndef ASYNCRT_REMOTE_REDIS_H
#define ASYNCRT_REMOTE_REDIS_H

#include <stdbool.h>
#include <stddef.h>

#include "remote_config.h"

typedef struct asyncrt_redis asyncrt_redis;

typedef enum asyncrt_redis_result {
    ASYNCRT_REDIS_OK,
    ASYNCRT_REDIS_NIL,   /* no such key (GET), not set (SET NX), nothing deleted */
    ASYNCRT_REDIS_ERROR, /* why says what; the connection is unusable */
    ASYNCRT_REDIS_TIMEOUT /* the same, because the operation timeout passed */
} asyncrt_redis_result;

/* Opens hiredis once per process. False with why when it cannot be used. */
bool asyncrt__redis_available(char *why, size_t why_size);

/* Connects (then AUTH and SELECT as configured). NULL with why. */
asyncrt_redis *asyncrt__redis_connect(const asyncrt_remote_server *s, int connect_ms, int op_ms, char *why,
                                     size_t why_size);
void asyncrt__redis_close(asyncrt_redis *r); /* NULL is fine */

/* GET of at most max bytes: a longer value is ASYNCRT_REDIS_OK with
 * *too_big set and no data (not transferred past max + 1 bytes). An empty
 * value reads as NIL. *value is malloc'd. */
asyncrt_redis_result asyncrt__redis_get(asyncrt_redis *r, const char *key, size_t max, unsigned char **value,
                                       size_t *size, bool *too_big, char *why, size_t why_size);

/* SET key value [NX] [PX ttl_ms]; NIL when NX found the key there. */
asyncrt_redis_result asyncrt__redis_set(asyncrt_redis *r, const char *key, const void *value, size_t size, bool nx,
                                       long ttl_ms, char *why, size_t why_size);

/* Deletes key only while it holds `token` (a lease of ours). */
asyncrt_redis_result asyncrt__redis_del_if(asyncrt_redis *r, const char *key, const char *token, char *why,
                                          size_t why_size);

/* One SCAN step over keys matching `match`: *cursor 0 starts and, once back
 * at 0, the scan is over. keys: malloc'd array of malloc'd names. */
asyncrt_redis_result asyncrt__redis_scan(asyncrt_redis *r, unsigned long long *cursor, const char *match,
                                        char ***keys, size_t *count, char *why, size_t why_size);

#endif
