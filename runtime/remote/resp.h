/* The Redis protocol (RESP2) for the remote cache's client, bounded: a
 * command is sent and its reply read under one deadline (a server that
 * drips a byte at a time runs into it), and every length a reply declares
 * ($N bulk, *N array) is checked against the caller's limits before a byte
 * of it is buffered (a 6 GiB declared reply costs nothing). Anything else,
 * RESP3 types, nesting past the limit, bytes after the reply, malformed
 * numbers, is refused. After any failure the stream is out of step: close
 * the connection. */
#ifndef ASYNCRT_RESP_H
#define ASYNCRT_RESP_H

#include <stdbool.h>
#include <stddef.h>

/* A reply's first line (a type, a number, or a status/error text) with its CRLF, at most. */
#define ASYNCRT_RESP_LINE_MAX 4096

typedef enum asyncrt_resp_type {
    ASYNCRT_RESP_NIL,     /* $-1 or *-1 */
    ASYNCRT_RESP_STATUS,  /* +OK */
    ASYNCRT_RESP_ERROR,   /* -ERR ... */
    ASYNCRT_RESP_INTEGER, /* :1 */
    ASYNCRT_RESP_BULK,    /* $N, then N bytes */
    ASYNCRT_RESP_ARRAY    /* *N, then N replies */
} asyncrt_resp_type;

typedef struct asyncrt_resp {
    asyncrt_resp_type type;
    long long integer;             /* INTEGER */
    char *str;                     /* STATUS, ERROR, BULK: malloc'd, len bytes and a NUL */
    size_t len;
    struct asyncrt_resp *elements; /* ARRAY: count of them, malloc'd */
    size_t count;
} asyncrt_resp;

typedef struct asyncrt_resp_limits {
    size_t max_bulk;     /* the longest bulk string */
    size_t max_elements; /* the longest array */
    size_t max_bytes;    /* all that the reply buffers together (strings and elements) */
    int max_depth;       /* 0: no arrays; 1: an array of scalars; 2: arrays in an array */
} asyncrt_resp_limits;

typedef enum asyncrt_resp_status {
    ASYNCRT_RESP_OK,
    ASYNCRT_RESP_IO,       /* the connection failed or closed (why) */
    ASYNCRT_RESP_TIMEOUT,  /* the deadline passed */
    ASYNCRT_RESP_PROTOCOL  /* malformed, over a limit, out of memory (why) */
} asyncrt_resp_status;

/* One connection's reading side: the socket (not owned) and what was
 * received but not yet parsed. */
typedef struct asyncrt_resp_conn {
    int fd;
    size_t at, end;
    unsigned char buf[16384];
} asyncrt_resp_conn;

/* Sends one command (argv[i] of lens[i] bytes, or strlen when lens is NULL)
 * by `deadline` (asyncrt__now_ms's clock); never raises SIGPIPE. */
asyncrt_resp_status asyncrt__resp_send(asyncrt_resp_conn *c, int argc, const char *const *argv, const size_t *lens,
                                       double deadline, char *why, size_t why_size);

/* Reads one whole reply by `deadline`, within `limits`; *out is freed with
 * asyncrt__resp_free (and empty on failure). */
asyncrt_resp_status asyncrt__resp_read(asyncrt_resp_conn *c, const asyncrt_resp_limits *limits, double deadline,
                                       asyncrt_resp *out, char *why, size_t why_size);

void asyncrt__resp_free(asyncrt_resp *r);

/* Up to out_size - 1 of s's n bytes for a message, each byte that is not
 * printable ASCII as '?': what a server sent reaches logs and terminals. */
const char *asyncrt__resp_printable(const void *s, size_t n, char *out, size_t out_size);

/* "bulk string", "integer", ...: for messages. */
const char *asyncrt__resp_type_name(asyncrt_resp_type t);

#endif
