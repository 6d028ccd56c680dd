#define _GNU_SOURCE /* prctl, kill */
#include "redis_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"            /* the tally's kept count */
#include "context_internal.h" /* the context's cache */
#include "test_support.h"

const char *redis_server_program(void)
{
    static const char *const places[] = {"/usr/bin/redis-server", "/usr/local/bin/redis-server",
                                         "/usr/sbin/redis-server"};
    for (size_t i = 0; i < sizeof places / sizeof *places; i++)
        if (access(places[i], X_OK) == 0) return places[i];
    return NULL;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    int port = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
                       getsockname(fd, (struct sockaddr *)&a, &n) == 0
                   ? ntohs(a.sin_port)
                   : -1;
    if (fd >= 0) close(fd);
    return port;
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static bool answers(const redis_server *s)
{
    asyncrt_redis *r = redis_direct(s);
    if (!r) return false;
    unsigned char *v = NULL;
    size_t size = 0;
    bool big = false;
    char why[256];
    bool ok = asyncrt__redis_get(r, "ping", 16, asyncrt__now_ms() + 5000, &v, &size, &big, why, sizeof why) !=
              ASYNCRT_REDIS_ERROR;
    free(v);
    asyncrt__redis_close(r);
    return ok;
}

static bool launch(redis_server *s)
{
    char port[16];
    snprintf(port, sizeof port, "%d", s->socket[0] ? 0 : s->port);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the test */
        char log[300];
        snprintf(log, sizeof log, "%s/redis.log", s->dir);
        const char *argv[24] = {redis_server_program(), "--port", port, "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", s->dir, "--logfile", log, "--daemonize", "no"};
        int n = 15;
        if (s->socket[0]) argv[n++] = "--unixsocket", argv[n++] = s->socket, argv[n++] = "--unixsocketperm",
                          argv[n++] = "700";
        execv(argv[0], (char **)argv);
        _exit(127);
    }
    s->pid = pid;
    for (int i = 0; pid > 0 && i < 1000; i++) {
        if (answers(s)) return true;
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            s->pid = 0;
            return false;
        }
        sleep_ms(10);
    }
    return false;
}

bool redis_start(redis_server *s, bool tcp)
{
    memset(s, 0, sizeof *s);
    char *dir = test_make_temp_dir("asyncrt-redis");
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    free(dir);
    if (tcp) {
        s->port = free_port();
        snprintf(s->spec, sizeof s->spec, "redis://127.0.0.1:%d", s->port);
    } else {
        snprintf(s->socket, sizeof s->socket, "%s/redis.sock", s->dir);
        snprintf(s->spec, sizeof s->spec, "redis+unix:%s", s->socket);
    }
    return launch(s);
}

static void reap(redis_server *s, int first_signal)
{
    if (s->pid <= 0) return;
    kill(s->pid, first_signal);
    for (int i = 0; i < 200; i++) {
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
            s->pid = 0;
            return;
        }
        sleep_ms(10);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}

void redis_stop(redis_server *s)
{
    reap(s, SIGTERM);
    if (s->dir[0]) test_remove_tree(s->dir);
    s->dir[0] = '\0';
}

void redis_kill9(redis_server *s) { reap(s, SIGKILL); }

bool redis_restart(redis_server *s)
{
    reap(s, SIGKILL);
    if (s->socket[0]) unlink(s->socket);
    return launch(s);
}

bool fake_redis_start(fake_redis *f, const char *mode, int lifetime_s, const char *count_file)
{
    *f = (fake_redis){0};
    char script[512], lifetime[16];
    snprintf(script, sizeof script, "%s/tests/remote/fake_redis.py", getenv("ASYNCRT_TEST_SOURCE_DIR"));
    snprintf(lifetime, sizeof lifetime, "%d", lifetime_s);
    int out[2];
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    fflush(NULL);
    f->pid = fork();
    assert_true(f->pid >= 0);
    if (f->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(out[1], STDOUT_FILENO);
        if (count_file)
            execlp("python3", "python3", script, mode, "--lifetime", lifetime, "--count-file", count_file,
                   (char *)NULL);
        else
            execlp("python3", "python3", script, mode, "--lifetime", lifetime, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char line[64] = "";
    size_t got = 0;
    struct pollfd p = {out[0], POLLIN, 0};
    while (got + 1 < sizeof line && !strchr(line, '\n') && poll(&p, 1, 10000) > 0) {
        ssize_t n = read(out[0], line + got, sizeof line - 1 - got);
        if (n <= 0) break;
        line[got += (size_t)n] = '\0';
    }
    close(out[0]);
    if (sscanf(line, "port %d", &f->port) != 1) {
        fake_redis_stop(f);
        return false;
    }
    snprintf(f->spec, sizeof f->spec, "redis://127.0.0.1:%d", f->port);
    return true;
}

void fake_redis_stop(fake_redis *f)
{
    if (f->pid > 0 && kill(f->pid, SIGTERM) == 0) /* it writes its count file and ends */
        for (int i = 0; i < 200 && waitpid(f->pid, NULL, WNOHANG) == 0; i++) sleep_ms(10);
    if (f->pid > 0 && kill(f->pid, SIGKILL) == 0) waitpid(f->pid, NULL, 0);
    f->pid = 0;
}

asyncrt_redis *redis_direct(const redis_server *s)
{
    asyncrt_remote_server server = {.name = "", .host = s->socket[0] ? NULL : "127.0.0.1", .port = s->port,
                                    .socket_path = s->socket[0] ? (char *)s->socket : NULL};
    char why[256];
    double deadline;
    return asyncrt__redis_connect(&server, 1000, 5000, &deadline, why, sizeof why);
}

unsigned char *redis_value_get(const redis_server *s, const char *name, size_t *size)
{
    asyncrt_redis *r = redis_direct(s);
    if (!r) return NULL;
    unsigned char *data = NULL;
    bool big = false;
    char why[256];
    if (asyncrt__redis_get(r, name, (size_t)1 << 30, asyncrt__now_ms() + 5000, &data, size, &big, why, sizeof why) !=
        ASYNCRT_REDIS_OK) {
        free(data);
        data = NULL;
    }
    asyncrt__redis_close(r);
    return data;
}

bool redis_value_put(const redis_server *s, const char *name, const void *data, size_t size)
{
    asyncrt_redis *r = redis_direct(s);
    if (!r) return false;
    char why[256];
    bool ok = asyncrt__redis_set(r, name, data, size, false, 0, asyncrt__now_ms() + 5000, why, sizeof why) ==
              ASYNCRT_REDIS_OK;
    asyncrt__redis_close(r);
    return ok;
}

size_t redis_keys(const redis_server *s, const char *match, char ***keys)
{
    asyncrt_redis *r = redis_direct(s);
    assert_non_null(r);
    unsigned long long cursor = 0;
    size_t total = 0;
    *keys = NULL;
    char why[256];
    do {
        char **some;
        size_t n;
        assert_int_equal(asyncrt__redis_scan(r, &cursor, match, asyncrt__now_ms() + 5000, &some, &n, why, sizeof why),
                         ASYNCRT_REDIS_OK);
        *keys = realloc(*keys, (total + n + 1) * sizeof **keys);
        assert_non_null(*keys);
        if (n) memcpy(*keys + total, some, n * sizeof *some);
        total += n;
        free(some);
    } while (cursor);
    asyncrt__redis_close(r);
    return total;
}

void redis_keys_free(char **keys, size_t n)
{
    for (size_t i = 0; i < n; i++) free(keys[i]);
    free(keys);
}

char *fresh_cache_dir(const char *root)
{
    static int n;
    char *dir = malloc(300);
    assert_non_null(dir);
    snprintf(dir, 300, "%s/cache%d", root, n++);
    return dir;
}

char *make_key_file(const char *dir, const char *name)
{
    char *path = malloc(512);
    assert_non_null(path);
    snprintf(path, 512, "%s/%s", dir, name);
    unsigned char secret[32];
    assert_int_equal(getrandom(secret, sizeof secret, 0), (ssize_t)sizeof secret);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, secret, sizeof secret), (ssize_t)sizeof secret);
    assert_int_equal(fchmod(fd, 0600), 0);
    close(fd);
    return path;
}

void redis_world_open(redis_server *server, char **dir, char **key, const char *name)
{
    assert_true(redis_start(server, false));
    *dir = test_make_temp_dir(name);
    *key = make_key_file(*dir, "fleet.key");
}

void redis_world_close(redis_server *server, char *dir, char *key)
{
    redis_stop(server);
    test_remove_tree(dir);
    free(dir);
    free(key);
}

void write_text(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    /* Written long before any compile, as on a machine: a compile that starts
     * in the file's own clock tick (the kernel may stamp it finer than the
     * coarse clock the compile reads) rightly refuses to cache what it read,
     * so wait until the coarse clock has passed the file's times. */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    for (int i = 0; i < 100; i++) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME_COARSE, &now);
        if (now.tv_sec > st.st_ctim.tv_sec || (now.tv_sec == st.st_ctim.tv_sec && now.tv_nsec > st.st_ctim.tv_nsec))
            break;
        sleep_ms(1);
    }
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The child: one context, one compile, the result down the pipe. */
static void child(const remote_run *run, int go_fd, int out_fd)
{
    remote_result r = {.ran = true};
    if (go_fd >= 0) {
        char c;
        while (read(go_fd, &c, 1) < 0 && errno == EINTR) {}
    }
    unsetenv("ASYNCRT_REMOTE_CACHE");
#if !defined(__SANITIZE_ADDRESS__) /* ASan's shadow memory would not fit */
    struct rlimit limit = {run->data_limit_mb << 20, run->data_limit_mb << 20};
    if (run->data_limit_mb && setrlimit(RLIMIT_DATA, &limit) != 0) _exit(5);
#endif
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) _exit(3);
    asyncrt_context_set_cache_dir(ctx, run->cache_dir);
    if (run->spec) {
        r.set_status = asyncrt_context_set_remote_cache(ctx, run->spec, run->key_file);
        snprintf(r.set_message, sizeof r.set_message, "%s", asyncrt_context_last_error(ctx));
    }
    const char *dirs[] = {run->include_dir};
    asyncrt_compile_options opts = {.size = sizeof opts,
                                    .arch = run->arch ? run->arch : "sm_90", .include_dirs = dirs,
                                    .include_dir_count = run->include_dir ? 1 : 0};
    asyncrt_program *p = NULL;
    double start = now_ms();
    r.status = asyncrt_program_compile(ctx, run->source_name, run->source, &opts, &p);
    r.compile_ms = now_ms() - start;
    if (p) r.origin = asyncrt_program_origin_of(p);
    asyncrt_program_destroy(p);
    r.stats = (asyncrt_remote_cache_stats)ASYNCRT_REMOTE_CACHE_STATS_INIT;
    r.local = (asyncrt_cache_stats)ASYNCRT_CACHE_STATS_INIT;
    asyncrt_context_remote_cache_stats(ctx, &r.stats);
    asyncrt_context_cache_stats(ctx, &r.local);
    asyncrt_context_destroy(ctx); /* adds its counters to the tally */
    asyncrt_remote_cache_stats tally = ASYNCRT_REMOTE_CACHE_STATS_INIT;
    if (asyncrt_context_create(&ctx) == ASYNCRT_SUCCESS && asyncrt_context_set_cache_dir(ctx, run->cache_dir) == 0)
        asyncrt__cache_remote_tally(asyncrt__context_cache(ctx), &tally, &r.kept);
    asyncrt_context_destroy(ctx);
    struct rusage use;
    if (getrusage(RUSAGE_SELF, &use) == 0) r.max_rss_kb = use.ru_maxrss;
    ssize_t w = write(out_fd, &r, sizeof r);
    exit(w == (ssize_t)sizeof r ? 0 : 4); /* exit, not _exit: LeakSanitizer checks the child too */
}

pid_t remote_child_start(const remote_run *run, int go_fd, int *result_fd)
{
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child(run, go_fd, fds[1]);
    }
    close(fds[1]);
    *result_fd = fds[0];
    return pid;
}

remote_result remote_child_finish(pid_t pid, int result_fd, int limit_s)
{
    remote_result r = {0};
    size_t got = 0;
    double deadline = now_ms() + limit_s * 1000.0;
    while (got < sizeof r) {
        struct pollfd p = {result_fd, POLLIN, 0};
        int left = (int)(deadline - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0) break;
        ssize_t n = read(result_fd, (char *)&r + got, sizeof r - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    if (got < sizeof r) {
        r = (remote_result){0};
        kill(pid, SIGKILL);
    }
    close(result_fd);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) { /* crashed, or a sanitizer found something */
        print_message("a child compile ended with status 0x%x\n", status);
        r.ran = false;
    }
    return r;
}

remote_result remote_compile(const remote_run *run)
{
    int fd;
    pid_t pid = remote_child_start(run, -1, &fd);
    return remote_child_finish(pid, fd, 120);
}
