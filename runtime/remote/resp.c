#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include "resp.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "diag.h" /* asyncrt__now_ms */

#define MAX_ARGS 8

/* Says why (into why) and returns status: every failure here goes this way. */
__attribute__((format(printf, 4, 5))) static asyncrt_resp_status fail(char *why, size_t why_size,
                                                                      asyncrt_resp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    return status;
}
#define FAIL(status, ...) fail(why, why_size, (status), __VA_ARGS__)

/* Until fd is ready for `events` or the deadline passes. */
static asyncrt_resp_status wait_for(int fd, short events, double deadline, char *why, size_t why_size)
{
    for (;;) {
        double left = deadline - asyncrt__now_ms();
        if (left <= 0) return FAIL(ASYNCRT_RESP_TIMEOUT, "no answer within the operation timeout");
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, (int)left + 1);
        if (n > 0) return ASYNCRT_RESP_OK; /* readable, writable, or an error that the next call reports */
        if (n < 0 && errno != EINTR) return FAIL(ASYNCRT_RESP_IO, "poll: %s", strerror(errno));
    }
}

asyncrt_resp_status asyncrt__resp_send(asyncrt_resp_conn *c, int argc, const char *const *argv, const size_t *lens,
                                       double deadline, char *why, size_t why_size)
{
    if (c->at != c->end)
        return FAIL(ASYNCRT_RESP_PROTOCOL, "the server sent %zu bytes nobody asked for", c->end - c->at);
    if (argc < 1 || argc > MAX_ARGS) return FAIL(ASYNCRT_RESP_PROTOCOL, "%d arguments (1 to %d)", argc, MAX_ARGS);
    char heads[MAX_ARGS + 1][24];
    struct iovec iov[1 + 3 * MAX_ARGS];
    int n = 0;
    iov[n++] = (struct iovec){heads[0], (size_t)snprintf(heads[0], sizeof heads[0], "*%d\r\n", argc)};
    for (int i = 0; i < argc; i++) {
        size_t len = lens ? lens[i] : strlen(argv[i]);
        iov[n++] = (struct iovec){heads[i + 1], (size_t)snprintf(heads[i + 1], sizeof heads[i + 1], "$%zu\r\n", len)};
        iov[n++] = (struct iovec){(void *)argv[i], len};
        iov[n++] = (struct iovec){"\r\n", 2};
    }
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
    while (m.msg_iovlen) {
        ssize_t sent = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL); /* EPIPE, never SIGPIPE */
        if (sent < 0) {
            asyncrt_resp_status s = ASYNCRT_RESP_OK;
            if (errno == EAGAIN || errno == EWOULDBLOCK) s = wait_for(c->fd, POLLOUT, deadline, why, why_size);
            else if (errno != EINTR) s = FAIL(ASYNCRT_RESP_IO, "send: %s", strerror(errno));
            if (s != ASYNCRT_RESP_OK) return s;
            continue;
        }
        size_t done = (size_t)sent;
        while (m.msg_iovlen && done >= m.msg_iov[0].iov_len) {
            done -= m.msg_iov[0].iov_len;
            m.msg_iov++, m.msg_iovlen--;
        }
        if (m.msg_iovlen) {
            m.msg_iov[0].iov_base = (char *)m.msg_iov[0].iov_base + done;
            m.msg_iov[0].iov_len -= done;
        }
    }
    return ASYNCRT_RESP_OK;
}

/* Up to cap bytes from the socket into dst (at least one). */
static asyncrt_resp_status receive(asyncrt_resp_conn *c, unsigned char *dst, size_t cap, double deadline, size_t *got,
                                   char *why, size_t why_size)
{
    for (;;) {
        ssize_t n = recv(c->fd, dst, cap, MSG_DONTWAIT);
        if (n > 0) {
            *got = (size_t)n;
            return ASYNCRT_RESP_OK;
        }
        if (n == 0) return FAIL(ASYNCRT_RESP_IO, "the server closed the connection");
        asyncrt_resp_status s = ASYNCRT_RESP_OK;
        if (errno == EAGAIN || errno == EWOULDBLOCK) s = wait_for(c->fd, POLLIN, deadline, why, why_size);
        else if (errno != EINTR) s = FAIL(ASYNCRT_RESP_IO, "recv: %s", strerror(errno));
        if (s != ASYNCRT_RESP_OK) return s;
    }
}

/* The next line, without its CRLF, in place in c->buf (valid until the next
 * read). The line and its CRLF must fit in ASYNCRT_RESP_LINE_MAX bytes,
 * looked for there only: the same bytes get the same answer however the
 * network cut them (a longer line that came in one piece was accepted). */
static asyncrt_resp_status read_line(asyncrt_resp_conn *c, double deadline, char **line, size_t *len, char *why,
                                     size_t why_size)
{
    char shown[24];
    for (size_t scanned = 0;;) {
        unsigned char *start = c->buf + c->at;
        size_t have = c->end - c->at, limit = have < ASYNCRT_RESP_LINE_MAX ? have : ASYNCRT_RESP_LINE_MAX;
        for (size_t i = scanned ? scanned - 1 : 0; i + 1 < limit; i++)
            if (start[i] == '\r' && start[i + 1] == '\n') {
                *line = (char *)start, *len = i;
                c->at += i + 2;
                return ASYNCRT_RESP_OK;
            }
        scanned = have;
        if (have >= ASYNCRT_RESP_LINE_MAX)
            return FAIL(ASYNCRT_RESP_PROTOCOL, "a reply line of more than %d bytes with its CRLF (\"%s...\")",
                        ASYNCRT_RESP_LINE_MAX, asyncrt__resp_printable(start, have, shown, sizeof shown));
        memmove(c->buf, start, have); /* room for the rest of the line */
        c->at = 0, c->end = have;
        size_t got;
        asyncrt_resp_status s = receive(c, c->buf + c->end, sizeof c->buf - c->end, deadline, &got, why, why_size);
        if (s != ASYNCRT_RESP_OK) return s;
        c->end += got;
    }
}

/* Exactly n bytes into dst: what is buffered, then straight from the socket. */
static asyncrt_resp_status read_exact(asyncrt_resp_conn *c, unsigned char *dst, size_t n, double deadline, char *why,
                                      size_t why_size)
{
    size_t take = c->end - c->at < n ? c->end - c->at : n;
    memcpy(dst, c->buf + c->at, take);
    c->at += take;
    for (size_t done = take, got; done < n; done += got) {
        asyncrt_resp_status s = receive(c, dst + done, n - done, deadline, &got, why, why_size);
        if (s != ASYNCRT_RESP_OK) return s;
    }
    return ASYNCRT_RESP_OK;
}

/* A decimal number as RESP writes it: an optional '-', then 1 to 18 digits. */
static bool parse_number(const char *text, size_t len, long long *out)
{
    bool negative = len && text[0] == '-';
    size_t i = negative;
    if (len == i || len - i > 18) return false;
    long long v = 0;
    for (; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') return false;
        v = v * 10 + (text[i] - '0');
    }
    *out = negative ? -v : v;
    return true;
}

static bool charge(size_t *left, size_t n)
{
    if (n > *left) return false;
    *left -= n;
    return true;
}

static asyncrt_resp_status read_reply(asyncrt_resp_conn *c, const asyncrt_resp_limits *lim, int depth, size_t *left,
                                      double deadline, asyncrt_resp *out, char *why, size_t why_size)
{
    *out = (asyncrt_resp){0};
    char *line = NULL, shown[41];
    size_t len = 0;
    asyncrt_resp_status s = read_line(c, deadline, &line, &len, why, why_size);
    if (s != ASYNCRT_RESP_OK) return s;
    if (len == 0) return FAIL(ASYNCRT_RESP_PROTOCOL, "an empty reply line");
    char kind = line[0];
    long long n = 0;
    if (kind == '+' || kind == '-') {
        out->type = kind == '+' ? ASYNCRT_RESP_STATUS : ASYNCRT_RESP_ERROR;
        if (!charge(left, len))
            return FAIL(ASYNCRT_RESP_PROTOCOL, "a %zu-byte %s line, over what is left of the reply's limit of %zu "
                        "bytes", len, kind == '+' ? "status" : "error", lim->max_bytes);
        if (!(out->str = malloc(len))) return FAIL(ASYNCRT_RESP_PROTOCOL, "out of memory for %zu bytes", len);
        memcpy(out->str, line + 1, len - 1);
        out->str[out->len = len - 1] = '\0';
        return ASYNCRT_RESP_OK;
    }
    if (kind != ':' && kind != '$' && kind != '*')
        return FAIL(ASYNCRT_RESP_PROTOCOL, "a reply of unknown type '%c' (0x%02x; RESP3, or not Redis)",
                    kind >= 0x20 && kind < 0x7f ? kind : '?', (unsigned char)kind);
    if (!parse_number(line + 1, len - 1, &n))
        return FAIL(ASYNCRT_RESP_PROTOCOL, "'%c' followed by \"%s\", not a number of 1 to 18 digits", kind,
                    asyncrt__resp_printable(line + 1, len - 1, shown, sizeof shown));
    if (kind == ':') {
        out->type = ASYNCRT_RESP_INTEGER;
        out->integer = n;
        return ASYNCRT_RESP_OK;
    }
    if (n == -1) {
        out->type = ASYNCRT_RESP_NIL;
        return ASYNCRT_RESP_OK;
    }
    if (n < -1) return FAIL(ASYNCRT_RESP_PROTOCOL, "a length of %lld", n);
    if (kind == '$') { /* the declared length is checked before a byte of it is buffered */
        if ((unsigned long long)n > lim->max_bulk)
            return FAIL(ASYNCRT_RESP_PROTOCOL, "a bulk string of %lld bytes declared, over the limit of %zu", n,
                        lim->max_bulk);
        if (!charge(left, (size_t)n + 1))
            return FAIL(ASYNCRT_RESP_PROTOCOL, "a bulk string of %lld bytes declared, over what is left of the "
                        "reply's limit of %zu bytes", n, lim->max_bytes);
        if (!(out->str = malloc((size_t)n + 1))) return FAIL(ASYNCRT_RESP_PROTOCOL, "out of memory for %lld bytes", n);
        out->type = ASYNCRT_RESP_BULK;
        out->len = (size_t)n;
        out->str[n] = '\0';
        unsigned char crlf[2];
        if ((s = read_exact(c, (unsigned char *)out->str, (size_t)n, deadline, why, why_size)) != ASYNCRT_RESP_OK ||
            (s = read_exact(c, crlf, 2, deadline, why, why_size)) != ASYNCRT_RESP_OK)
            return s;
        if (crlf[0] != '\r' || crlf[1] != '\n')
            return FAIL(ASYNCRT_RESP_PROTOCOL, "a bulk string of %lld bytes not followed by CRLF", n);
        return ASYNCRT_RESP_OK;
    }
    if (depth >= lim->max_depth)
        return lim->max_depth ? FAIL(ASYNCRT_RESP_PROTOCOL, "arrays nested more than %d deep", lim->max_depth)
                              : FAIL(ASYNCRT_RESP_PROTOCOL, "an array, where the command returns none");
    if ((unsigned long long)n > lim->max_elements)
        return FAIL(ASYNCRT_RESP_PROTOCOL, "an array of %lld elements declared, over the limit of %zu", n,
                    lim->max_elements);
    if (!charge(left, (size_t)n * sizeof *out->elements))
        return FAIL(ASYNCRT_RESP_PROTOCOL, "an array of %lld elements declared, over what is left of the reply's "
                    "limit of %zu bytes", n, lim->max_bytes);
    out->type = ASYNCRT_RESP_ARRAY;
    if (n && !(out->elements = calloc((size_t)n, sizeof *out->elements)))
        return FAIL(ASYNCRT_RESP_PROTOCOL, "out of memory for %lld elements", n);
    for (; out->count < (size_t)n; out->count++)
        if ((s = read_reply(c, lim, depth + 1, left, deadline, &out->elements[out->count], why, why_size))) {
            out->count++; /* the failed one may hold a partial string: freed with the rest */
            return s;
        }
    return ASYNCRT_RESP_OK;
}

asyncrt_resp_status asyncrt__resp_read(asyncrt_resp_conn *c, const asyncrt_resp_limits *limits, double deadline,
                                       asyncrt_resp *out, char *why, size_t why_size)
{
    size_t left = limits->max_bytes;
    asyncrt_resp_status s = read_reply(c, limits, 0, &left, deadline, out, why, why_size);
    if (s == ASYNCRT_RESP_OK && c->at != c->end)
        s = FAIL(ASYNCRT_RESP_PROTOCOL, "%zu bytes after the reply", c->end - c->at);
    if (s != ASYNCRT_RESP_OK) asyncrt__resp_free(out);
    return s;
}

void asyncrt__resp_free(asyncrt_resp *r)
{
    for (size_t i = 0; i < r->count; i++) asyncrt__resp_free(&r->elements[i]);
    free(r->elements);
    free(r->str);
    *r = (asyncrt_resp){0};
}

const char *asyncrt__resp_printable(const void *s, size_t n, char *out, size_t out_size)
{
    const unsigned char *b = s;
    size_t i = 0;
    for (; i < n && i + 1 < out_size; i++) out[i] = b[i] >= 0x20 && b[i] < 0x7f ? (char)b[i] : '?';
    if (out_size) out[i] = '\0';
    return out;
}

const char *asyncrt__resp_type_name(asyncrt_resp_type t)
{
    static const char *const names[] = {"nil", "status", "error", "integer", "bulk string", "array"};
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}
