#define _GNU_SOURCE /* memfd_create */
#include "link_worker.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codec.h"
#include "format.h"
#include "worker_process.h"

#define MAX_ITEMS (1u << 16)

/* u64 length + bytes: codec.h's writer and reader, as build/worker_client.h's protocol. */
static void put_bytes(asyncrt_writer *w, const void *p, size_t n)
{
    asyncrt__put_u64(w, n);
    asyncrt__put(w, p, n);
}

static const unsigned char *take_bytes(asyncrt_reader *r, size_t *n)
{
    uint64_t len = asyncrt__take_u64(r);
    const unsigned char *at = r->bad ? NULL : asyncrt__take(r, (size_t)len);
    *n = at ? (size_t)len : 0;
    return at;
}

asyncrt_status asyncrt__link_in_worker(const char *worker, const char *const *options, size_t option_count,
                                      const asyncrt_link_item *items, size_t count, unsigned char **image,
                                      size_t *image_size, char **log, char **message)
{
    *image = NULL;
    *image_size = 0;
    *log = NULL;
    *message = NULL;
    asyncrt_writer req = {0};
    asyncrt__put(&req, ASYNCRT_LINK_WORKER_MAGIC, strlen(ASYNCRT_LINK_WORKER_MAGIC));
    asyncrt__put_u64(&req, option_count);
    for (size_t i = 0; i < option_count; i++) put_bytes(&req, options[i], strlen(options[i]));
    asyncrt__put_u64(&req, count);
    for (size_t i = 0; i < count; i++) {
        asyncrt__put_u64(&req, (uint64_t)items[i].kind);
        put_bytes(&req, items[i].name, strlen(items[i].name));
        put_bytes(&req, items[i].data, items[i].size);
    }
    asyncrt_status s = ASYNCRT_ERROR_IO;
    unsigned char *reply = NULL;
    size_t reply_size = 0;
    if (!req.failed && asyncrt__worker_exchange(worker, -1, req.data, req.size, &reply, &reply_size, message)) {
        int code = -1, used = 0; /* the reply is NUL-terminated: sscanf stops there at worst */
        asyncrt_reader r = {reply, reply_size, false};
        if (sscanf((const char *)reply, "status %d\n%n", &code, &used) == 1 && used > 0 && code >= 0 &&
            code < ASYNCRT_STATUS_COUNT) {
            r.p += used;
            r.left -= (size_t)used;
            size_t n = 0;
            const unsigned char *at = take_bytes(&r, &n);
            if (at && (code != ASYNCRT_SUCCESS || n) && (!n || (*image = malloc(n))) &&
                (*log = asyncrt__format("%.*s", (int)r.left, (const char *)r.p))) {
                if (n) memcpy(*image, at, n);
                *image_size = n;
                s = (asyncrt_status)code;
            }
        }
        if (s == ASYNCRT_ERROR_IO) {
            free(*image);
            *image = NULL;
            *image_size = 0;
            free(*log);
            *log = NULL;
            *message = strdup("its answer was malformed");
        }
    } else if (!*message) {
        *message = strdup(req.failed ? "out of memory" : "it did not answer");
    }
    free(req.data);
    free(reply);
    return s;
}

/* nvJitLink prints some errors on stderr only: into a memory file while it runs. */
static int capture_stderr(int *saved)
{
    int fd = memfd_create("nvjitlink-stderr", MFD_CLOEXEC);
    *saved = fd >= 0 ? dup(2) : -1;
    if (fd >= 0 && (*saved < 0 || dup2(fd, 2) < 0)) {
        close(fd);
        if (*saved >= 0) close(*saved);
        return *saved = -1;
    }
    return fd;
}

static char *release_stderr(int fd, int saved)
{
    if (fd < 0) return strdup("");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t size = lseek(fd, 0, SEEK_END);
    char *text = size >= 0 ? calloc(1, (size_t)size + 1) : NULL;
    if (text && (lseek(fd, 0, SEEK_SET) != 0 || read(fd, text, (size_t)size) != size)) text[0] = '\0';
    close(fd);
    return text ? text : strdup("");
}

int asyncrt__link_worker_answer(const unsigned char *data, size_t size)
{
    size_t magic = strlen(ASYNCRT_LINK_WORKER_MAGIC);
    if (size < magic || memcmp(data, ASYNCRT_LINK_WORKER_MAGIC, magic) != 0) return 2;
    asyncrt_reader r = {data + magic, size - magic, false};
    uint64_t option_count = asyncrt__take_u64(&r);
    char **options = !r.bad && option_count <= MAX_ITEMS ? calloc(option_count + 1, sizeof *options) : NULL;
    for (uint64_t i = 0; options && i < option_count; i++) r.bad |= !(options[i] = asyncrt__take_str(&r));
    uint64_t count = options ? asyncrt__take_u64(&r) : 0;
    asyncrt_link_item *items = !r.bad && count <= MAX_ITEMS ? calloc(count + 1, sizeof *items) : NULL;
    for (uint64_t i = 0; items && i < count; i++) {
        items[i].kind = (int)asyncrt__take_u64(&r);
        r.bad |= !(items[i].name = asyncrt__take_str(&r));
        const unsigned char *at = take_bytes(&r, &items[i].size);
        /* A copy with a NUL after it: nvJitLink reads PTX's size + 1 bytes,
         * and here the byte after is the next input's (a PTX file's bytes
         * as the first input were refused as not PTX). */
        r.bad |= !at || !(items[i].data = (const unsigned char *)asyncrt__dup_bytes(at, items[i].size));
    }
    int rc = 2;
    if (options && items && !r.bad && r.left == 0) {
        unsigned char *image = NULL;
        size_t image_size = 0;
        char *log = NULL;
        int saved;
        int fd = capture_stderr(&saved);
        asyncrt_status s = asyncrt__jitlink_run((const char *const *)options, (size_t)option_count, items,
                                               (size_t)count, &image, &image_size, &log);
        char *printed = release_stderr(fd, saved);
        /* "error   : Multiple definition of 'f' in 'b.cubin', first defined in 'a.cubin'", yet success */
        bool errors = printed && (strncmp(printed, "error", 5) == 0 || strstr(printed, "\nerror"));
        if (s == ASYNCRT_SUCCESS && errors) {
            s = ASYNCRT_ERROR_COMPILE;
            free(image);
            image = NULL;
            image_size = 0;
            free(log);
            log = asyncrt__format("nvJitLink reported errors yet returned success:\n%s", printed);
        } else if (s != ASYNCRT_SUCCESS && printed && *printed && log) {
            char *both = asyncrt__format("%s\n%s", log, printed);
            free(log);
            log = both;
        }
        printf("status %d\n", (int)(log ? s : ASYNCRT_ERROR_OUT_OF_MEMORY));
        unsigned char le[8];
        for (int i = 0; i < 8; i++) le[i] = (unsigned char)((uint64_t)image_size >> (8 * i));
        fwrite(le, 1, 8, stdout);
        if (image_size) fwrite(image, 1, image_size, stdout);
        fputs(log ? log : "out of memory", stdout);
        rc = fflush(stdout) == 0 ? 0 : 1;
        free(image);
        free(log);
        free(printed);
    }
    for (uint64_t i = 0; options && i < option_count; i++) free(options[i]);
    for (uint64_t i = 0; items && i < count; i++) free((char *)items[i].name), free((void *)items[i].data);
    free(options);
    free(items);
    return rc;
}
