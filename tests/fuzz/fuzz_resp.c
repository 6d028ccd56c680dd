/* libFuzzer target: the remote cache's Redis protocol (runtime/cache/resp.h),
 * which reads what a server sends, and a server may be hostile. The bytes
 * come through a real socket pair, so the reader's own recv, poll and
 * buffering run as they do against a server.
 *
 * Input: a mode byte, then the bytes.
 *   bits 0-1: the limits: 0 a small reply (AUTH, SET, EVAL), 1 a SCAN step,
 *             2 a GETRANGE value (max = the next byte x 64), 3 limits from
 *             the next 4 bytes (bulk, elements, bytes, depth)
 *   bit 2:    the bytes come in pieces of 1 + (mode >> 4) bytes, each read
 *             before the next is sent (the first 64; then the rest at once)
 *   bit 3:    instead, asyncrt__resp_send: argc = 1 + next byte % 8, then
 *             each argument as a length byte and its bytes (bit 4: lens
 *             NULL, so each argument ends at its first NUL)
 *
 * Properties, beyond no crash and no sanitizer report:
 *   - the peer always closes after its bytes, so never a time-out;
 *   - a refusal has a message and leaves the reply empty;
 *   - an accepted reply keeps the limits (each bulk, array, depth and the
 *     bytes buffered in all), each string NUL-terminated;
 *   - the answer is the one a plain parser of the same bytes in memory
 *     gives (ref_reply below: status, and the reply itself), however the
 *     bytes were cut into pieces; only bytes after a complete reply may be
 *     refused or not, by where the cut fell;
 *   - a command sent is read back as an array of exactly its arguments. */
#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include <linux/sockios.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "diag.h" /* asyncrt__now_ms */
#include "resp.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define CHECK(cond) \
    do {            \
        if (!(cond)) abort(); \
    } while (0)

/* ---- the peer: the bytes, whole or in pieces, then closed ---------------- */

typedef struct feed {
    int fd;
    const unsigned char *data;
    size_t size, piece;
    atomic_bool done; /* the reader has finished: stop */
} feed;

static bool send_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t sent = send(fd, p, n, MSG_NOSIGNAL);
        if (sent <= 0) return false; /* the reader closed its end */
        p += sent, n -= (size_t)sent;
    }
    return true;
}

static void *feeder(void *arg)
{
    feed *f = arg;
    for (size_t at = 0, pieces = 0; at < f->size && !atomic_load(&f->done); pieces++) {
        size_t n = f->size - at;
        if (pieces < 64 && f->piece < n) n = f->piece;
        if (!send_all(f->fd, f->data + at, n)) break;
        at += n;
        /* Until the reader has taken it all, so that the next piece arrives apart. */
        for (int queued = 1; queued > 0 && !atomic_load(&f->done);)
            if (ioctl(f->fd, SIOCOUTQ, &queued) != 0) queued = 0;
            else if (queued > 0) sched_yield();
    }
    shutdown(f->fd, SHUT_WR);
    return NULL;
}

/* ---- the plain parser: the same rules over bytes in memory -------------- */

typedef struct ref {
    const unsigned char *p;
    size_t size, at, left;
    const asyncrt_resp_limits *lim;
} ref;

static asyncrt_resp_status ref_line(ref *r, const unsigned char **line, size_t *len)
{
    size_t avail = r->size - r->at;
    for (size_t i = 0; i + 1 < avail && i + 2 <= ASYNCRT_RESP_LINE_MAX; i++)
        if (r->p[r->at + i] == '\r' && r->p[r->at + i + 1] == '\n') {
            *line = r->p + r->at, *len = i;
            r->at += i + 2;
            return ASYNCRT_RESP_OK;
        }
    /* No CRLF where a line may have one: too long once that much is there, else cut short. */
    return avail >= ASYNCRT_RESP_LINE_MAX ? ASYNCRT_RESP_PROTOCOL : ASYNCRT_RESP_IO;
}

static bool ref_number(const unsigned char *s, size_t len, long long *out)
{
    size_t i = len && s[0] == '-';
    if (len - i < 1 || len - i > 18) return false;
    long long v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = len && s[0] == '-' ? -v : v;
    return true;
}

static bool ref_charge(ref *r, unsigned long long n)
{
    if (n > r->left) return false;
    r->left -= (size_t)n;
    return true;
}

static asyncrt_resp_status ref_reply(ref *r, int depth, asyncrt_resp *out)
{
    *out = (asyncrt_resp){0};
    const unsigned char *line;
    size_t len;
    asyncrt_resp_status s = ref_line(r, &line, &len);
    if (s) return s;
    if (len == 0) return ASYNCRT_RESP_PROTOCOL;
    long long n;
    switch (line[0]) {
    case '+':
    case '-':
        if (!ref_charge(r, len)) return ASYNCRT_RESP_PROTOCOL;
        out->type = line[0] == '+' ? ASYNCRT_RESP_STATUS : ASYNCRT_RESP_ERROR;
        out->str = malloc(len);
        CHECK(out->str);
        memcpy(out->str, line + 1, len - 1);
        out->str[out->len = len - 1] = '\0';
        return ASYNCRT_RESP_OK;
    case ':':
        if (!ref_number(line + 1, len - 1, &n)) return ASYNCRT_RESP_PROTOCOL;
        out->type = ASYNCRT_RESP_INTEGER, out->integer = n;
        return ASYNCRT_RESP_OK;
    case '$':
        if (!ref_number(line + 1, len - 1, &n) || n < -1) return ASYNCRT_RESP_PROTOCOL;
        if (n == -1) return ASYNCRT_RESP_OK; /* nil */
        if ((unsigned long long)n > r->lim->max_bulk || !ref_charge(r, (unsigned long long)n + 1))
            return ASYNCRT_RESP_PROTOCOL;
        if (r->size - r->at < (size_t)n + 2) return ASYNCRT_RESP_IO;
        if (r->p[r->at + n] != '\r' || r->p[r->at + n + 1] != '\n') return ASYNCRT_RESP_PROTOCOL;
        out->type = ASYNCRT_RESP_BULK;
        out->str = malloc((size_t)n + 1);
        CHECK(out->str);
        memcpy(out->str, r->p + r->at, (size_t)n);
        out->str[out->len = (size_t)n] = '\0';
        r->at += (size_t)n + 2;
        return ASYNCRT_RESP_OK;
    case '*':
        if (!ref_number(line + 1, len - 1, &n) || n < -1) return ASYNCRT_RESP_PROTOCOL;
        if (n == -1) return ASYNCRT_RESP_OK; /* nil */
        if (depth >= r->lim->max_depth || (unsigned long long)n > r->lim->max_elements ||
            !ref_charge(r, (unsigned long long)n * sizeof(asyncrt_resp)))
            return ASYNCRT_RESP_PROTOCOL;
        out->type = ASYNCRT_RESP_ARRAY;
        if (n) CHECK(out->elements = calloc((size_t)n, sizeof *out->elements));
        for (; out->count < (size_t)n; out->count++)
            if ((s = ref_reply(r, depth + 1, &out->elements[out->count]))) return out->count++, s;
        return ASYNCRT_RESP_OK;
    default:
        return ASYNCRT_RESP_PROTOCOL;
    }
}

/* ---- the properties ----------------------------------------------------- */

static bool same(const asyncrt_resp *a, const asyncrt_resp *b)
{
    if (a->type != b->type || a->integer != b->integer || a->len != b->len || a->count != b->count ||
        !a->str != !b->str || (a->str && memcmp(a->str, b->str, a->len) != 0))
        return false;
    for (size_t i = 0; i < a->count; i++)
        if (!same(&a->elements[i], &b->elements[i])) return false;
    return true;
}

/* Within the limits; returns the bytes it holds as the reader counts them. */
static size_t check_reply(const asyncrt_resp *r, const asyncrt_resp_limits *lim, int depth)
{
    CHECK(strcmp(asyncrt__resp_type_name(r->type), "?") != 0);
    switch (r->type) {
    case ASYNCRT_RESP_NIL:
    case ASYNCRT_RESP_INTEGER:
        CHECK(!r->str && !r->elements && !r->count);
        return 0;
    case ASYNCRT_RESP_STATUS:
    case ASYNCRT_RESP_ERROR:
    case ASYNCRT_RESP_BULK:
        CHECK(r->str && r->str[r->len] == '\0' && !r->elements && !r->count);
        CHECK(r->type != ASYNCRT_RESP_BULK || r->len <= lim->max_bulk);
        return r->len + 1;
    case ASYNCRT_RESP_ARRAY: {
        CHECK(depth < lim->max_depth && r->count <= lim->max_elements && !r->str && (r->elements || !r->count));
        size_t held = r->count * sizeof *r->elements;
        for (size_t i = 0; i < r->count; i++) held += check_reply(&r->elements[i], lim, depth + 1);
        return held;
    }
    }
    abort();
}

static bool empty(const asyncrt_resp *r)
{
    return r->type == ASYNCRT_RESP_NIL && !r->str && !r->len && !r->elements && !r->count && !r->integer;
}

static void fuzz_read(const unsigned char *mode_at, const unsigned char *data, size_t size, int mode)
{
    asyncrt_resp_limits lim;
    switch (mode & 3) {
    case 0:
        lim = (asyncrt_resp_limits){.max_bulk = 512, .max_bytes = 4096}; /* remote_redis.c's small_reply */
        break;
    case 1:
        lim = (asyncrt_resp_limits){.max_bulk = 1024, .max_elements = 65536, .max_bytes = (size_t)16 << 20,
                                    .max_depth = 2}; /* its scan_reply */
        break;
    case 2: {
        size_t max = (size_t)mode_at[1] * 64; /* asyncrt__redis_get's */
        lim = (asyncrt_resp_limits){.max_bulk = max + 1, .max_bytes = max + 2};
        break;
    }
    default:
        lim = (asyncrt_resp_limits){.max_bulk = (size_t)mode_at[1] * 4, .max_elements = mode_at[2],
                                    .max_bytes = (size_t)mode_at[3] * 64, .max_depth = mode_at[4] % 4};
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
    bool pieces = mode & 4;
    feed f = {.fd = sv[1], .data = data, .size = size, .piece = 1 + ((size_t)mode >> 4)};
    atomic_init(&f.done, false);
    pthread_t thread;
    bool threaded = false;
    if (!pieces) { /* all at once, when the socket takes it */
        ssize_t n = size ? send(sv[1], data, size, MSG_DONTWAIT | MSG_NOSIGNAL) : 0;
        size_t sent = n > 0 ? (size_t)n : 0;
        f.data += sent, f.size -= sent;
    }
    if (f.size) threaded = pthread_create(&thread, NULL, feeder, &f) == 0;
    else shutdown(sv[1], SHUT_WR);
    if (f.size && !threaded) {
        close(sv[0]), close(sv[1]);
        return;
    }

    asyncrt_resp_conn *c = calloc(1, sizeof *c);
    CHECK(c);
    c->fd = sv[0];
    asyncrt_resp got;
    char why[256] = "";
    asyncrt_resp_status s = asyncrt__resp_read(c, &lim, asyncrt__now_ms() + 5000, &got, why, sizeof why);
    atomic_store(&f.done, true);
    shutdown(sv[0], SHUT_RDWR); /* a feeder blocked in send returns */
    if (threaded) pthread_join(thread, NULL);
    close(sv[0]), close(sv[1]);
    size_t buffered = sizeof c->buf; /* what the reader holds at once */
    free(c);

    CHECK(s == ASYNCRT_RESP_OK || s == ASYNCRT_RESP_IO || s == ASYNCRT_RESP_PROTOCOL);
    if (s != ASYNCRT_RESP_OK) CHECK(why[0] && empty(&got));
    else CHECK(check_reply(&got, &lim, 0) <= lim.max_bytes);

    ref r = {.p = data, .size = size, .left = lim.max_bytes, .lim = &lim};
    asyncrt_resp want;
    asyncrt_resp_status ws = ref_reply(&r, 0, &want);
    /* Whole, and all of it in the reader's buffer at once: bytes after the reply are always seen. */
    bool whole = !pieces && size <= buffered;
    if (ws == ASYNCRT_RESP_OK && r.at < size) {
        if (whole || s != ASYNCRT_RESP_OK) CHECK(s == ASYNCRT_RESP_PROTOCOL && strstr(why, "after the reply"));
        else CHECK(same(&got, &want));
    } else {
        CHECK(s == ws);
        if (s == ASYNCRT_RESP_OK) CHECK(same(&got, &want));
    }
    asyncrt__resp_free(&want);
    asyncrt__resp_free(&got);
}

static void fuzz_send(const unsigned char *data, size_t size, int mode)
{
    if (size < 1) return;
    int argc = 1 + data[0] % 8;
    const char *argv[8];
    size_t lens[8];
    char *copies[8] = {0};
    size_t at = 1;
    for (int i = 0; i < argc; i++) {
        size_t n = at < size ? data[at++] : 0;
        n = n < size - at ? n : size - at;
        CHECK(copies[i] = malloc(n + 1)); /* NUL-terminated, for lens NULL */
        memcpy(copies[i], data + at, n);
        copies[i][n] = '\0';
        argv[i] = copies[i], lens[i] = n;
        at += n;
    }
    bool by_strlen = mode & 16;
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    asyncrt_resp_conn *client = calloc(1, sizeof *client), *server = calloc(1, sizeof *server);
    CHECK(client && server);
    client->fd = sv[0], server->fd = sv[1];
    char why[256] = "";
    double deadline = asyncrt__now_ms() + 5000;
    CHECK(asyncrt__resp_send(client, argc, argv, by_strlen ? NULL : lens, deadline, why, sizeof why) ==
          ASYNCRT_RESP_OK); /* at most 8 x 255 bytes: the socket takes them */
    shutdown(sv[0], SHUT_WR);
    const asyncrt_resp_limits lim = {.max_bulk = 255, .max_elements = 8, .max_bytes = 1 << 16, .max_depth = 1};
    asyncrt_resp got;
    CHECK(asyncrt__resp_read(server, &lim, deadline, &got, why, sizeof why) == ASYNCRT_RESP_OK);
    CHECK(got.type == ASYNCRT_RESP_ARRAY && got.count == (size_t)argc);
    for (int i = 0; i < argc; i++) {
        size_t want = by_strlen ? strlen(argv[i]) : lens[i];
        const asyncrt_resp *e = &got.elements[i];
        CHECK(e->type == ASYNCRT_RESP_BULK && e->len == want && memcmp(e->str, argv[i], want) == 0);
    }
    asyncrt__resp_free(&got);
    close(sv[0]), close(sv[1]);
    free(client), free(server);
    for (int i = 0; i < argc; i++) free(copies[i]);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1) return 0;
    int mode = data[0];
    if (mode & 8) {
        fuzz_send(data + 1, size - 1, mode);
        return 0;
    }
    size_t header = (mode & 3) == 2 ? 2 : (mode & 3) == 3 ? 5 : 1;
    if (size < header) return 0;
    fuzz_read(data, data + header, size - header, mode);
    return 0;
}
