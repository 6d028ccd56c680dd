/* Worker processes (worker_process.h): which program, and one exchange with it. */
#include "worker_process.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec.h"
#include "format.h"
#include "nvrtc_loader.h"
#include "safe_io.h"
#include "self_file.h"

/* From CMake's install directories (runtime/CMakeLists.txt). */
#ifndef ASYNCRT_WORKER_FROM_LIBDIR
#define ASYNCRT_WORKER_FROM_LIBDIR "../libexec/asyncrt/asyncrt-compile-worker"
#endif
#ifndef ASYNCRT_WORKER_FROM_BINDIR
#define ASYNCRT_WORKER_FROM_BINDIR "../libexec/asyncrt/asyncrt-compile-worker"
#endif

/* Where the installed worker would be: relative to libasyncrt.so, or to the
 * program when the library is linked into it (self_file.h). */
static bool installed_worker(char *out, size_t size)
{
    char self[PATH_MAX];
    bool in_program = false;
    if (!asyncrt__self_file(self, sizeof self, &in_program)) return false;
    const char *relative = in_program ? ASYNCRT_WORKER_FROM_BINDIR : ASYNCRT_WORKER_FROM_LIBDIR;
    char *slash = strrchr(self, '/');
    if (!slash) return false;
    *slash = '\0';
    int n = snprintf(out, size, "%s/%s", self, relative);
    return n > 0 && (size_t)n < size;
}

asyncrt_status asyncrt__worker_find(const char *named, char *path, size_t size, char *why, size_t why_size)
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

extern char **environ;

/* The worker's environment: this process's, with ASYNCRT_NVRTC naming the
 * NVRTC this process chose. The worker recomputes the cache key, which holds
 * NVRTC's identity, and must compile with the same NVRTC: its own search
 * could choose another (the set-up's folder is searched only from the build
 * tree, a worker elsewhere does not see it). NULL when out of memory; the
 * strings are environ's, but for the one in *owned. */
static char **worker_environment(char **owned)
{
    asyncrt_nvrtc_identity id;
    *owned = asyncrt__nvrtc_identity_get(&id) ? asyncrt__format("ASYNCRT_NVRTC=%s", id.path) : NULL;
    size_t n = 0;
    while (environ && environ[n]) n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env) return NULL;
    size_t used = 0;
    for (size_t i = 0; i < n; i++)
        if (!*owned || strncmp(environ[i], "ASYNCRT_NVRTC=", 14) != 0) env[used++] = environ[i];
    if (*owned) env[used] = *owned;
    return env;
}

bool asyncrt__worker_exchange(const char *worker, int pass_fd, const void *req, size_t req_size,
                              unsigned char **reply, size_t *reply_size, char **why)
{
    asyncrt_writer answer = {0};
    int sv[2] = {-1, -1}, spawn_error = 0, passed = -1;
    char *nvrtc_setting = NULL, **env = worker_environment(&nvrtc_setting);
    pid_t pid = -1;
    posix_spawn_file_actions_t actions;
    bool have_actions = false, ok = false;
    *reply = NULL;
    *reply_size = 0;
    *why = NULL;
    /* One socket for both directions: send() with MSG_NOSIGNAL cannot raise
     * SIGPIPE in the caller's process if the worker dies early, and
     * SOCK_CLOEXEC keeps other workers spawned meanwhile from holding it. */
    if (!env || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        posix_spawn_file_actions_init(&actions) != 0)
        goto done;
    have_actions = true;
    /* pass_fd's copy numbered above the worker's 0, 1 and 3, so that no dup2
     * of these overwrites it first, and close-on-exec until its own dup2. */
    if (pass_fd >= 0 && (passed = fcntl(pass_fd, F_DUPFD_CLOEXEC, ASYNCRT_WORKER_PASSED_FD + 1)) < 0) goto done;
    char *argv[] = {(char *)worker, NULL};
    if (posix_spawn_file_actions_adddup2(&actions, sv[1], 0) != 0 ||
        posix_spawn_file_actions_adddup2(&actions, sv[1], 1) != 0 ||
        (passed >= 0 && posix_spawn_file_actions_adddup2(&actions, passed, ASYNCRT_WORKER_PASSED_FD) != 0) ||
        (spawn_error = posix_spawn(&pid, worker, &actions, NULL, argv, env)) != 0) {
        pid = -1;
        goto done;
    }
    close(sv[1]);
    sv[1] = -1;
    if (passed >= 0) close(passed), passed = -1;
    for (size_t sent = 0; sent < req_size;) {
        ssize_t n = send(sv[0], (const char *)req + sent, req_size - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) goto done;
        sent += (size_t)n;
    }
    shutdown(sv[0], SHUT_WR);
    unsigned char chunk[65536];
    for (ssize_t n; (n = read(sv[0], chunk, sizeof chunk)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) goto done;
        asyncrt__put(&answer, chunk, (size_t)n);
    }
    asyncrt__put(&answer, "", 1);
    ok = !answer.failed;
done:
    if (sv[0] >= 0) close(sv[0]);
    if (sv[1] >= 0) close(sv[1]);
    if (passed >= 0) close(passed);
    if (pid < 0)
        *why = asyncrt__format("it could not be started: %s", spawn_error ? strerror(spawn_error) : "no resources");
    if (pid > 0) {
        int wstatus = 0; /* unread unless reaped: SIGCHLD ignored by the host gives ECHILD */
        pid_t reaped;
        while ((reaped = waitpid(pid, &wstatus, 0)) < 0 && errno == EINTR) {}
        if (reaped == pid && (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)) {
            ok = false;
            *why = WIFEXITED(wstatus) ? asyncrt__format("it exited with status %d", WEXITSTATUS(wstatus))
                                      : asyncrt__format("it was killed by signal %d", WTERMSIG(wstatus));
        }
    }
    if (!ok && !*why) *why = asyncrt__format("it did not answer");
    if (have_actions) posix_spawn_file_actions_destroy(&actions);
    free(env);
    free(nvrtc_setting);
    if (ok) {
        *reply = answer.data;
        *reply_size = answer.size - 1;
    } else {
        free(answer.data);
    }
    return ok;
}
