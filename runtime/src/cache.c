#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"

struct asyncrt_cached_program {
    asyncrt_program *program;
    asyncrt_cached_program *next;
};

char *asyncrt_cache_entry_path(const asyncrt_context *ctx, const uint8_t key[32])
{
    if (!ctx->cache_dir) return NULL;
    char hex[65];
    asyncrt_sha256_hex(key, hex);
    return asyncrt_format("%s/%s.bin", ctx->cache_dir, hex);
}

static unsigned char *read_file(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    unsigned char *data = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (data = malloc((size_t)st.st_size))) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        *size = got;
    }
    close(fd);
    return data;
}

static void remember(asyncrt_context *ctx, const asyncrt_program *program)
{
    asyncrt_cached_program *node = malloc(sizeof *node);
    asyncrt_program *copy = node ? asyncrt_program_clone(program) : NULL;
    if (!copy) {
        free(node);
        return;
    }
    node->program = copy;
    node->next = ctx->programs;
    ctx->programs = node;
}

asyncrt_program *asyncrt_cache_find(asyncrt_context *ctx, const uint8_t key[32])
{
    if (!ctx->memory_cache) return NULL;
    for (asyncrt_cached_program *n = ctx->programs; n; n = n->next) {
        if (memcmp(n->program->key, key, 32) != 0) continue;
        asyncrt_program *copy = asyncrt_program_clone(n->program);
        if (copy) copy->origin = ASYNCRT_ORIGIN_MEMORY_CACHE;
        return copy;
    }
    char *path = asyncrt_cache_entry_path(ctx, key);
    if (!path) return NULL;
    size_t size = 0;
    unsigned char *data = read_file(path, &size);
    asyncrt_program *program = NULL;
    if (data) {
        char why[256];
        if (asyncrt_program_decode(data, size, key, &program, why, sizeof why) == ASYNCRT_SUCCESS) {
            asyncrt_log(ctx, 2, "cache hit: %s", path);
            remember(ctx, program);
        } else {
            /* Another process may be renaming a good entry over this one;
             * unlinking is still safe, since rename replaces atomically. */
            asyncrt_log(ctx, 1, "warning: discarding cache entry %s: %s", path, why);
            unlink(path);
        }
    } else {
        asyncrt_log(ctx, 2, "cache miss: %s", path);
    }
    free(data);
    free(path);
    return program;
}

/* mkdir -p, 0700: compiled code is the user's own business. */
static int make_dirs(const char *dir)
{
    char *copy = strdup(dir);
    if (!copy) return -1;
    for (char *p = copy + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(copy, 0700) != 0 && errno != EEXIST) {
            free(copy);
            return -1;
        }
        *p = '/';
    }
    int rc = mkdir(copy, 0700) != 0 && errno != EEXIST ? -1 : 0;
    free(copy);
    return rc;
}

static int write_all(int fd, const unsigned char *data, size_t size)
{
    while (size) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

void asyncrt_cache_store(asyncrt_context *ctx, const asyncrt_program *program)
{
    if (!ctx->memory_cache) return;
    remember(ctx, program);
    char *path = asyncrt_cache_entry_path(ctx, program->key);
    if (!path) return;
    size_t size = 0;
    unsigned char *data = asyncrt_program_encode(program, &size);
    char *tmp = asyncrt_format("%s.tmp.%ld.%p", path, (long)getpid(), (void *)program);
    const char *failed = NULL;
    int fd = -1;
    if (!data || !tmp) failed = "out of memory";
    else if (make_dirs(ctx->cache_dir) != 0) failed = "cannot create the directory";
    else if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) failed = "cannot create a file";
    else if (write_all(fd, data, size) != 0) failed = "write failed";
    else if (close(fd) != 0) failed = "close failed";
    else if ((fd = -1, rename(tmp, path) != 0)) failed = "rename failed";

    if (failed) {
        int err = errno;
        if (fd >= 0) close(fd);
        if (tmp) unlink(tmp);
        asyncrt_log(ctx, 1, "warning: not caching in %s: %s (%s)", ctx->cache_dir, failed,
                    strerror(err));
    } else {
        asyncrt_log(ctx, 2, "cached %s (%zu bytes)", path, size);
    }
    free(tmp);
    free(data);
    free(path);
}

void asyncrt_cache_clear(asyncrt_context *ctx)
{
    while (ctx->programs) {
        asyncrt_cached_program *n = ctx->programs;
        ctx->programs = n->next;
        asyncrt_program_destroy(n->program);
        free(n);
    }
}
