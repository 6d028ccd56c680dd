#define _GNU_SOURCE /* dladdr1 */
#include "compile_worker.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_trust.h"
#include "context.h"
#include "sha256.h"

/* From CMake's install directories (runtime/CMakeLists.txt). */
#ifndef ASYNCRT_WORKER_FROM_LIBDIR
#define ASYNCRT_WORKER_FROM_LIBDIR "../libexec/asyncrt/asyncrt-compile-worker"
#endif
#ifndef ASYNCRT_WORKER_FROM_BINDIR
#define ASYNCRT_WORKER_FROM_BINDIR "../libexec/asyncrt/asyncrt-compile-worker"
#endif

extern char **environ;

/* Where the installed worker would be: relative to libasyncrt.so, or to the
 * program when the library is linked into it (the first link map, which has
 * no name): /proc/self/exe, unless ld.so was run as a command ("ld.so
 * PROGRAM": no interpreter, AT_BASE 0), where that is ld.so and dladdr's
 * name the path ld.so was given. */
static bool installed_worker(char *out, size_t size)
{
    Dl_info info;
    struct link_map *map = NULL;
    char self[PATH_MAX];
    if (!dladdr1((void *)asyncrt__compile_worker_find, &info, (void **)&map, RTLD_DL_LINKMAP) || !map ||
        !realpath(map->l_name[0] ? map->l_name : getauxval(AT_BASE) ? "/proc/self/exe" : info.dli_fname, self))
        return false;
    const char *relative = map == _r_debug.r_map ? ASYNCRT_WORKER_FROM_BINDIR : ASYNCRT_WORKER_FROM_LIBDIR;
    char *slash = strrchr(self, '/');
    if (!slash) return false;
    *slash = '\0';
    int n = snprintf(out, size, "%s/%s", self, relative);
    return n > 0 && (size_t)n < size;
}

asyncrt_status asyncrt__compile_worker_find(const char *named, char *path, size_t size, char *why, size_t why_size)
{
    const char *env = named;
    char installed[PATH_MAX], reason[PATH_MAX + 256];
    if (env && strcmp(env, "0") == 0) {
        snprintf(why, why_size, "ASYNCRT_COMPILE_WORKER=0");
        return ASYNCRT_ERROR_NOT_FOUND;
    }
    if (!env || !*env) {
        if (!installed_worker(installed, sizeof installed)) {
            snprintf(why, why_size, "cannot tell where this library lies, so no installed worker");
            return ASYNCRT_ERROR_NOT_FOUND;
        }
        if (access(installed, F_OK) != 0) {
            snprintf(why, why_size, "no worker installed at %s (ASYNCRT_COMPILE_WORKER names one)", installed);
            return ASYNCRT_ERROR_NOT_FOUND;
        }
        env = installed;
    }
    if (asyncrt__trusted_executable(env, path, size, reason, sizeof reason)) return ASYNCRT_SUCCESS;
    snprintf(why, why_size, "%s%s refused: %s", env == installed ? "the installed worker " : "ASYNCRT_COMPILE_WORKER=",
             env, reason);
    return ASYNCRT_ERROR_IO;
}

typedef struct buffer {
    char *data;
    size_t size, cap;
    bool failed;
} buffer;

static void put(buffer *b, const void *src, size_t n)
{
    if (b->failed) return;
    if (b->size + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->size + n) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->size, src, n);
    b->size += n;
}

static void put_u64(buffer *b, uint64_t v)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(v >> (8 * i));
    put(b, le, 8);
}

static void put_str(buffer *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_u64(b, n);
    put(b, s ? s : "", n);
}

static void put_list(buffer *b, const char *const *items, size_t count)
{
    put_u64(b, count);
    for (size_t i = 0; i < count; i++) put_str(b, items[i]);
}

/* Every field of asyncrt_compile_options goes to the worker: one added to
 * the struct must be added here (and to the worker's decoder) too. */
_Static_assert(sizeof(asyncrt_compile_options) == 13 * sizeof(void *), /* 12 pointers and counts, 2 bools */
               "asyncrt_compile_options changed: send the new field to the compile worker");

static bool encode_request(buffer *b, const uint8_t key[32], const char *cache_dir, const char *source_name,
                           const char *source, const asyncrt_compile_options *o, const char *arch)
{
    put(b, ASYNCRT_WORKER_MAGIC, strlen(ASYNCRT_WORKER_MAGIC));
    put_u64(b, 32);
    put(b, key, 32);
    put_str(b, cache_dir);
    put_str(b, source_name);
    put_str(b, source);
    put_str(b, arch);
    put_str(b, o->std);
    put_u64(b, (o->std ? ASYNCRT_WORKER_STD_GIVEN : 0) | (o->no_std_headers ? ASYNCRT_WORKER_NO_STD_HEADERS : 0) |
                   (o->no_default_device ? ASYNCRT_WORKER_NO_DEFAULT_DEVICE : 0));
    put_u64(b, o->header_count);
    for (size_t i = 0; i < o->header_count; i++) {
        put_str(b, o->headers[i].name);
        put_str(b, o->headers[i].content);
    }
    put_list(b, o->include_dirs, o->include_dir_count);
    put_list(b, o->defines, o->define_count);
    put_list(b, o->options, o->option_count);
    put_list(b, o->name_expressions, o->name_expression_count);
    return !b->failed;
}

asyncrt_status asyncrt__compile_in_worker(const char *worker, const char *cache_dir, const char *source_name,
                                         const char *source, const asyncrt_compile_options *opts,
                                         const char *arch, const uint8_t key[32], char **message)
{
    static const asyncrt_compile_options none = {0};
    *message = NULL;
    buffer req = {0}, reply = {0};
    int sv[2] = {-1, -1};
    pid_t pid = -1;
    asyncrt_status status = ASYNCRT_ERROR_IO;
    posix_spawn_file_actions_t actions;
    bool have_actions = false;
    int spawn_error = 0;
    /* One socket for both directions: send() with MSG_NOSIGNAL cannot raise
     * SIGPIPE in the caller's process if the worker dies early, and
     * SOCK_CLOEXEC keeps other workers spawned meanwhile from holding it. */
    if (!encode_request(&req, key, cache_dir, source_name, source, opts ? opts : &none, arch) ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        posix_spawn_file_actions_init(&actions) != 0)
        goto done;
    have_actions = true;
    char *argv[] = {(char *)worker, NULL};
    if (posix_spawn_file_actions_adddup2(&actions, sv[1], 0) != 0 ||
        posix_spawn_file_actions_adddup2(&actions, sv[1], 1) != 0 ||
        (spawn_error = posix_spawn(&pid, worker, &actions, NULL, argv, environ)) != 0) {
        pid = -1;
        goto done;
    }
    close(sv[1]);
    sv[1] = -1;
    for (size_t sent = 0; sent < req.size;) {
        ssize_t n = send(sv[0], req.data + sent, req.size - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) goto done;
        sent += (size_t)n;
    }
    shutdown(sv[0], SHUT_WR);
    char chunk[65536];
    for (ssize_t n; (n = read(sv[0], chunk, sizeof chunk)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) goto done;
        put(&reply, chunk, (size_t)n);
    }
    put(&reply, "", 1);
    int code = -1, used = 0;
    char theirs[65] = "", ours[65];
    if (reply.failed) goto done;
    if (sscanf(reply.data, "status %d\n%n", &code, &used) == 1 && used > 0 && code >= 0 &&
        code < ASYNCRT_STATUS_COUNT) {
        status = (asyncrt_status)code;
        if (status != ASYNCRT_SUCCESS) *message = strdup(reply.data + used);
    } else if (sscanf(reply.data, "mismatch %64[0-9a-f]", theirs) == 1) {
        asyncrt__sha256_hex(key, ours);
        *message = asyncrt__format("it computed the cache key %s, this process %s (another version of "
                                   "asyncrt, or another environment)", theirs, ours);
    } else {
        *message = strdup("its answer was malformed");
    }
done:
    if (sv[0] >= 0) close(sv[0]);
    if (sv[1] >= 0) close(sv[1]);
    if (pid < 0 && !*message)
        *message = asyncrt__format("it could not be started: %s", spawn_error ? strerror(spawn_error) : "no resources");
    if (pid > 0) {
        int wstatus = 0; /* unread unless reaped: SIGCHLD ignored by the host gives ECHILD */
        pid_t reaped;
        while ((reaped = waitpid(pid, &wstatus, 0)) < 0 && errno == EINTR) {}
        if (reaped == pid && (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)) {
            status = ASYNCRT_ERROR_IO;
            free(*message);
            *message = WIFEXITED(wstatus) ? asyncrt__format("it exited with status %d", WEXITSTATUS(wstatus))
                                          : asyncrt__format("it was killed by signal %d", WTERMSIG(wstatus));
        }
    }
    if (status == ASYNCRT_ERROR_IO && !*message) *message = strdup("it did not answer");
    if (have_actions) posix_spawn_file_actions_destroy(&actions);
    free(req.data);
    free(reply.data);
    return status;
}
