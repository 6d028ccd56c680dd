/* A minimal Redis client for the remote cache. hiredis, opened at run time
 * (dlopen of the libhiredis.so.<soname> its headers name, or
 * $ASYNCRT_LIBHIREDIS) only when a remote cache is configured, makes the
 * connection; commands and replies go through resp.h, bounded in bytes and
 * time. A program that never uses a remote never needs hiredis. Built
 * without the hiredis headers (Debian: libhiredis-dev), every call fails
 * with a message that says so.
 *
 * Each command is bounded by one deadline (asyncrt__now_ms's clock) for all
 * of it, sending and every byte of the reply, not by a time-out per read;
 * connecting by connect_ms. A reply longer than the call's limit is refused
 * from its declared
 * length, before it is buffered. A reply of another type than the command
 * returns is refused. A connection that failed once is unusable: close it.
 * SIGPIPE is never raised (MSG_NOSIGNAL). One connection is used by one
 * thread at a time. */
#ifndef ASYNCRT_REMOTE_REDIS_H
#define ASYNCRT_REMOTE_REDIS_H

#include <stdbool.h>
#include <stddef.h>

#include "remote_config.h"
#include "resp.h"

typedef struct asyncrt_redis asyncrt_redis;

/* SCAN: the COUNT hint, and what one step's reply may hold. */
#define ASYNCRT_REDIS_SCAN_COUNT "1000"
#define ASYNCRT_REDIS_SCAN_KEYS_MAX 65536 /* names in one step */
#define ASYNCRT_REDIS_SCAN_KEY_MAX 1024   /* bytes in one name */

typedef enum asyncrt_redis_result {
    ASYNCRT_REDIS_OK,
    ASYNCRT_REDIS_NIL,   /* no such key (GET), not set (SET NX), nothing deleted */
    ASYNCRT_REDIS_ERROR, /* why says what; the connection is unusable */
    ASYNCRT_REDIS_TIMEOUT /* the same, because the operation timeout passed */
} asyncrt_redis_result;

/* Opens hiredis once per process. False with why when it cannot be used. */
bool asyncrt__redis_available(char *why, size_t why_size);

/* Connects within connect_ms; then AUTH and SELECT as configured and the
 * caller's first command share one deadline, op_ms from the connection
 * made, set in *deadline. NULL with why. */
asyncrt_redis *asyncrt__redis_connect(const asyncrt_remote_server *s, int connect_ms, int op_ms, double *deadline,
                                     char *why, size_t why_size);
void asyncrt__redis_close(asyncrt_redis *r); /* NULL is fine */

/* GET of at most max bytes (GETRANGE 0 max): a longer value is
 * ASYNCRT_REDIS_OK with *too_big set and no data (not transferred past
 * max + 1 bytes; a reply declaring more is refused unread). An empty value
 * reads as NIL. *value is malloc'd. */
asyncrt_redis_result asyncrt__redis_get(asyncrt_redis *r, const char *key, size_t max, double deadline,
                                       unsigned char **value, size_t *size, bool *too_big, char *why,
                                       size_t why_size);

/* SET key value [NX] [PX ttl_ms]; NIL when NX found the key there. */
asyncrt_redis_result asyncrt__redis_set(asyncrt_redis *r, const char *key, const void *value, size_t size, bool nx,
                                       long ttl_ms, double deadline, char *why, size_t why_size);

/* SET key value only while key's value begins with head (head_size bytes),
 * or key is absent: OK when stored, NIL when another value is there now. */
asyncrt_redis_result asyncrt__redis_replace_if(asyncrt_redis *r, const char *key, const void *value, size_t size,
                                              const unsigned char *head, size_t head_size, double deadline, char *why,
                                              size_t why_size);

/* Deletes key only while it holds `token` (a lease of ours). */
asyncrt_redis_result asyncrt__redis_del_if(asyncrt_redis *r, const char *key, const char *token, double deadline,
                                          char *why, size_t why_size);

/* One SCAN step over keys matching `match`: *cursor 0 starts and, once back
 * at 0, the scan is over. keys: malloc'd array of malloc'd names. The reply
 * is refused (ERROR) unless it is a cursor of decimal digits that fits 64
 * bits and an array of at most ASYNCRT_REDIS_SCAN_KEYS_MAX names, each a
 * string longer than match's part before its first wildcard, starting with
 * it, with no NUL byte, of at most ASYNCRT_REDIS_SCAN_KEY_MAX bytes. */
asyncrt_redis_result asyncrt__redis_scan(asyncrt_redis *r, unsigned long long *cursor, const char *match,
                                        double deadline, char ***keys, size_t *count, char *why, size_t why_size);

/* Any command (argv[i] of lens[i] bytes, or strlen when lens is NULL), its
 * reply read within `limits` by `deadline` into *reply (the caller checks
 * its type and frees it); a server's error reply is ERROR with its text. */
asyncrt_redis_result asyncrt__redis_command(asyncrt_redis *r, int argc, const char **argv, const size_t *lens,
                                            const asyncrt_resp_limits *limits, double deadline, asyncrt_resp *reply,
                                            char *why, size_t why_size);

#endif
