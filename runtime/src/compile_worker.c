#include "compile_worker.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "context.h"

extern char **environ;

const char *asyncrt__compile_worker_path(void)
{
    const char *env = getenv("ASYNCRT_COMPILE_WORKER");
    if (env && *env) return strcmp(env, "0") == 0 || access(env, X_OK) != 0 ? NULL : env;
#ifdef ASYNCRT_WORKER_INSTALL_PATH
    if (access(ASYNCRT_WORKER_INSTALL_PATH, X_OK) == 0) return ASYNCRT_WORKER_INSTALL_PATH;
#endif
#ifdef ASYNCRT_WORKER_BUILD_PATH
    if (access(ASYNCRT_WORKER_BUILD_PATH, X_OK) == 0) return ASYNCRT_WORKER_BUILD_PATH;
#endif
    return NULL;
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

static bool encode_request(buffer *b, const char *cache_dir, const char *source_name, const char *source,
                           const asyncrt_compile_options *o, const char *arch)
{
    put(b, ASYNCRT_WORKER_MAGIC, strlen(ASYNCRT_WORKER_MAGIC));
    put_str(b, cache_dir);
    put_str(b, source_name);
    put_str(b, source);
    put_str(b, arch);
    put_str(b, o->std);
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
                                         const char *arch, char **message)
{
    static const asyncrt_compile_options none = {0};
    *message = NULL;
    buffer req = {0}, reply = {0};
    int sv[2] = {-1, -1};
    pid_t pid = -1;
    asyncrt_status status = ASYNCRT_ERROR_IO;
    posix_spawn_file_actions_t actions;
    bool have_actions = false;
    /* One socket for both directions: send() with MSG_NOSIGNAL cannot raise
     * SIGPIPE in the caller's process if the worker dies early, and
     * SOCK_CLOEXEC keeps other workers spawned meanwhile from holding it. */
    if (!encode_request(&req, cache_dir, source_name, source, opts ? opts : &none, arch) ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        posix_spawn_file_actions_init(&actions) != 0)
        goto done;
    have_actions = true;
    char *argv[] = {(char *)worker, NULL};
    if (posix_spawn_file_actions_adddup2(&actions, sv[1], 0) != 0 ||
        posix_spawn_file_actions_adddup2(&actions, sv[1], 1) != 0 ||
        posix_spawn(&pid, worker, &actions, NULL, argv, environ) != 0) {
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
    if (!reply.failed && sscanf(reply.data, "status %d\n%n", &code, &used) == 1 && used > 0 && code >= 0 &&
        code < ASYNCRT_STATUS_COUNT) {
        status = (asyncrt_status)code;
        if (status != ASYNCRT_SUCCESS) *message = strdup(reply.data + used);
    }
done:
    if (sv[0] >= 0) close(sv[0]);
    if (sv[1] >= 0) close(sv[1]);
    if (pid > 0) {
        int wstatus;
        while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
        if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
            status = ASYNCRT_ERROR_IO;
            free(*message);
            *message = NULL;
        }
    }
    if (have_actions) posix_spawn_file_actions_destroy(&actions);
    free(req.data);
    free(reply.data);
    return status;
}
