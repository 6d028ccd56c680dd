#define _GNU_SOURCE /* prctl */
#include "remote_bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/tool.h"
#include "asyncrt/asyncrt.h"
#include "jit_bench.h"

#define KERNELS 12
#define MAX_PROCESSES 64

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- one process ------------------------------------------------------------ */

/* What one process reports, one line. */
typedef struct proc_result {
    double wall_ms, cpu_ms, end_ms; /* end: CLOCK_MONOTONIC, comparable across processes */
    int compiled, remote, disk;
    double remote_time_ms;
    unsigned long long hits, misses, errors, lease_waits;
    double kernel_ms[KERNELS];
} proc_result;

/* argv: self --remote-child CACHE_DIR SALT SPEC|- ARCH */
int remote_bench_child(int argc, char **argv)
{
    if (argc != 6) return 2;
    double start = now_ms();
    proc_result r = {0};
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt_context_set_cache_dir(ctx, argv[2]);
    if (strcmp(argv[4], "-") && asyncrt_context_set_remote_cache(ctx, argv[4], NULL) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "asyncrt-bench --remote: %s\n", asyncrt_context_last_error(ctx));
        return 1;
    }
    asyncrt_compile_options opts = {.size = sizeof opts, .arch = argv[5]};
    for (int i = 0; i < KERNELS; i++) {
        char *src = jit_bench_kernel_source(i, atoi(argv[3]));
        asyncrt_program *p = NULL;
        double t = now_ms();
        asyncrt_status s = src ? asyncrt_program_compile(ctx, "cold.cu", src, &opts, &p) : ASYNCRT_ERROR_OUT_OF_MEMORY;
        r.kernel_ms[i] = now_ms() - t;
        free(src);
        if (s != ASYNCRT_SUCCESS) {
            fprintf(stderr, "asyncrt-bench --remote: kernel %d: %s\n", i, asyncrt_context_last_error(ctx));
            return 1;
        }
        asyncrt_program_origin o = asyncrt_program_origin_of(p);
        r.compiled += o == ASYNCRT_ORIGIN_COMPILED;
        r.remote += o == ASYNCRT_ORIGIN_REMOTE_CACHE;
        r.disk += o == ASYNCRT_ORIGIN_DISK_CACHE;
        asyncrt_program_destroy(p);
    }
    asyncrt_remote_cache_stats st = ASYNCRT_REMOTE_CACHE_STATS_INIT;
    asyncrt_context_remote_cache_stats(ctx, &st);
    asyncrt_context_destroy(ctx);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r.cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    r.end_ms = now_ms();
    r.wall_ms = r.end_ms - start;
    printf("ASYNCRT_REMOTE_BENCH %.3f %.3f %.3f %d %d %d %.3f %llu %llu %llu %llu", r.wall_ms, r.cpu_ms, r.end_ms,
           r.compiled, r.remote, r.disk, st.time_ms, (unsigned long long)st.hits, (unsigned long long)st.misses,
           (unsigned long long)st.errors, (unsigned long long)st.lease_waits);
    for (int i = 0; i < KERNELS; i++) printf(" %.3f", r.kernel_ms[i]);
    printf("\n");
    return 0;
}

typedef struct proc {
    pid_t pid;
    int out;
} proc;

static proc spawn(const char *cache, int salt, const char *spec, const char *arch)
{
    proc p = {-1, -1};
    int fds[2];
    char self[4096], salt_text[32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || pipe2(fds, O_CLOEXEC) != 0) return p;
    self[n] = '\0';
    snprintf(salt_text, sizeof salt_text, "%d", salt);
    fflush(NULL);
    p.pid = fork();
    if (p.pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        execl(self, self, REMOTE_BENCH_CHILD_FLAG, cache, salt_text, spec ? spec : "-", arch, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    p.out = fds[0];
    return p;
}

static bool finish(proc p, proc_result *r)
{
    char line[4096];
    size_t got = 0;
    for (ssize_t n; got < sizeof line - 1 && (n = read(p.out, line + got, sizeof line - 1 - got)) != 0;)
        if (n > 0) got += (size_t)n;
        else if (errno != EINTR) break;
    line[got] = '\0';
    close(p.out);
    int status = 0;
    waitpid(p.pid, &status, 0);
    memset(r, 0, sizeof *r);
    char *at = strstr(line, "ASYNCRT_REMOTE_BENCH ");
    if (!at || !WIFEXITED(status) || WEXITSTATUS(status)) return false;
    int used = 0;
    if (sscanf(at, "ASYNCRT_REMOTE_BENCH %lf %lf %lf %d %d %d %lf %llu %llu %llu %llu%n", &r->wall_ms, &r->cpu_ms,
               &r->end_ms, &r->compiled, &r->remote, &r->disk, &r->remote_time_ms, &r->hits, &r->misses, &r->errors,
               &r->lease_waits, &used) != 11)
        return false;
    at += used;
    for (int i = 0; i < KERNELS; i++) {
        if (sscanf(at, " %lf%n", &r->kernel_ms[i], &used) != 1) return false;
        at += used;
    }
    return true;
}

static bool run_one(const char *cache, int salt, const char *spec, const char *arch, proc_result *r)
{
    proc p = spawn(cache, salt, spec, arch);
    return p.pid > 0 && finish(p, r);
}

/* ---- the server ----------------------------------------------------------------- */

static bool socket_answers(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n >= sizeof a.sun_path) return false; /* no such socket can be reached */
    memcpy(a.sun_path, path, n + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0) close(fd);
    return ok;
}

/* A redis-server on dir/redis.sock; its pid, or -1. */
static pid_t start_redis(const char *dir, char *spec, size_t spec_size)
{
    static const char *const programs[] = {"/usr/bin/redis-server", "/usr/local/bin/redis-server"};
    const char *program = NULL;
    for (size_t i = 0; i < 2 && !program; i++)
        if (access(programs[i], X_OK) == 0) program = programs[i];
    if (!program) return -1;
    char sock[600], log[600];
    snprintf(sock, sizeof sock, "%s/redis.sock", dir);
    snprintf(log, sizeof log, "%s/redis.log", dir);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execl(program, program, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700", "--save", "",
              "--appendonly", "no", "--dir", dir, "--logfile", log, "--daemonize", "no", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; pid > 0 && i < 500 && !socket_answers(sock); i++) usleep(10000);
    snprintf(spec, spec_size, "redis+unix:%s", sock);
    return pid > 0 && socket_answers(sock) ? pid : -1;
}

/* ---- the report -------------------------------------------------------------- */

typedef struct report {
    int processes;
    proc_result cold, down, hangs;
    double fleet_last_ms, fleet_cpu_ms, fleet_mean_wall_ms;
    int fleet_compiled, fleet_remote, fleet_failed, fleet_lease_waits;
    double remote_hit_ms, disk_hit_ms, remote_hit_max_ms; /* medians per kernel; worst difference */
} report;

static void print_report(const report *r, const char *arch, bool json)
{
    double extra = r->remote_hit_ms - r->disk_hit_ms;
    if (json) {
        printf("{\"remote\": {\"arch\": \"%s\", \"processes\": %d, \"kernels\": %d, \"cold_ms\": %.1f, "
               "\"cold_cpu_ms\": %.1f, \"fleet_compiles\": %d, \"fleet_remote_hits\": %d, \"fleet_failed\": %d, "
               "\"fleet_lease_waits\": %d, \"fleet_last_finish_ms\": %.1f, \"fleet_cpu_ms\": %.1f, "
               "\"remote_hit_ms\": %.3f, \"disk_hit_ms\": %.3f, \"remote_hit_extra_ms\": %.3f, "
               "\"down_ms\": %.1f, \"down_remote_ms\": %.3f, \"hanging_connect_ms\": %.1f, "
               "\"hanging_connect_remote_ms\": %.3f}}\n",
               arch, r->processes, KERNELS, r->cold.wall_ms, r->cold.cpu_ms, r->fleet_compiled, r->fleet_remote,
               r->fleet_failed, r->fleet_lease_waits, r->fleet_last_ms, r->fleet_cpu_ms, r->remote_hit_ms,
               r->disk_hit_ms, extra, r->down.wall_ms, r->down.remote_time_ms, r->hangs.wall_ms,
               r->hangs.remote_time_ms);
        return;
    }
    printf("remote cache, %d CCCL kernels for %s, compiled one by one in each process\n", KERNELS, arch);
    printf("  one process, empty cache, no remote      %9.0f ms  (CPU %.0f ms)\n", r->cold.wall_ms, r->cold.cpu_ms);
    printf("  %2d processes, empty local caches, one loopback Redis:\n", r->processes);
    printf("    compiles in the fleet                  %9d      (no remote: %d)\n", r->fleet_compiled,
           r->processes * KERNELS);
    printf("    from the remote                        %9d      (%d processes waited for a lease)\n",
           r->fleet_remote, r->fleet_lease_waits);
    printf("    last process finished                  %9.0f ms  (%.2fx one cold process)\n", r->fleet_last_ms,
           r->fleet_last_ms / r->cold.wall_ms);
    printf("    fleet CPU                              %9.0f ms  (%.2fx one cold process; no remote: %dx)\n",
           r->fleet_cpu_ms, r->fleet_cpu_ms / r->cold.cpu_ms, r->processes);
    printf("  per kernel, median: remote hit, empty local cache %.2f ms; disk hit %.2f ms; difference %+.2f ms\n",
           r->remote_hit_ms, r->disk_hit_ms, extra);
    printf("  server down (nothing at the socket)      %9.0f ms  (%.1f ms in the remote; cold %.0f ms)\n",
           r->down.wall_ms, r->down.remote_time_ms, r->cold.wall_ms);
    printf("  connects hang (connect-timeout=100)      %9.0f ms  (%.1f ms in the remote)\n", r->hangs.wall_ms,
           r->hangs.remote_time_ms);
    if (r->fleet_failed) printf("  %d processes of the fleet failed\n", r->fleet_failed);
}

/* ---- the whole run ------------------------------------------------------------ */

static char *cache_in(const char *dir, const char *name, int n)
{
    char *path = malloc(strlen(dir) + 64);
    if (path) sprintf(path, "%s/%s%d", dir, name, n);
    return path;
}

static void remove_tree(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
}

static int measure(const char *dir, const char *spec, const char *arch, int processes, report *r)
{
    unsigned base = 0;
    if (getrandom(&base, sizeof base, 0) != sizeof base) base = (unsigned)time(NULL);
    int salt = (int)(base % 1000000) * 10; /* new keys: nothing cached anywhere yet */
    char *c;
    /* one cold process, no remote */
    bool ok = run_one(c = cache_in(dir, "cold", 0), salt, NULL, arch, &r->cold);
    free(c);
    /* the fleet */
    proc ps[MAX_PROCESSES];
    double start = now_ms();
    for (int i = 0; ok && i < processes; i++) {
        ps[i] = spawn(c = cache_in(dir, "fleet", i), salt + 1, spec, arch);
        free(c);
        ok = ps[i].pid > 0;
    }
    for (int i = 0; ok && i < processes; i++) {
        proc_result p;
        if (!finish(ps[i], &p)) {
            r->fleet_failed++;
            continue;
        }
        r->fleet_compiled += p.compiled;
        r->fleet_remote += p.remote;
        r->fleet_lease_waits += p.lease_waits > 0;
        r->fleet_cpu_ms += p.cpu_ms;
        if (p.end_ms - start > r->fleet_last_ms) r->fleet_last_ms = p.end_ms - start;
    }
    /* remote hits with an empty local cache, then disk hits on the same cache */
    double remote[3 * KERNELS], disk[3 * KERNELS];
    for (int rep = 0; ok && rep < 3; rep++) {
        proc_result a, b;
        c = cache_in(dir, "hit", rep);
        ok = run_one(c, salt + 1, spec, arch, &a) && a.remote == KERNELS && run_one(c, salt + 1, spec, arch, &b) &&
             b.disk == KERNELS;
        free(c);
        for (int k = 0; ok && k < KERNELS; k++) {
            remote[rep * KERNELS + k] = a.kernel_ms[k];
            disk[rep * KERNELS + k] = b.kernel_ms[k];
        }
    }
    if (ok) {
        r->remote_hit_ms = jit_bench_median(remote, 3 * KERNELS);
        r->disk_hit_ms = jit_bench_median(disk, 3 * KERNELS);
    }
    /* the server down: nothing at the socket; connects that hang: a full accept queue */
    char down[700];
    snprintf(down, sizeof down, "redis+unix:%s/nobody-here.sock|connect-timeout=100", dir);
    ok = ok && run_one(c = cache_in(dir, "down", 0), salt + 2, down, arch, &r->down);
    free(c);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    ok = ok && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 0) == 0 &&
         getsockname(lfd, (struct sockaddr *)&a, &len) == 0 && connect(filler, (struct sockaddr *)&a, sizeof a) == 0;
    char hangs[200];
    snprintf(hangs, sizeof hangs, "redis://127.0.0.1:%d|connect-timeout=100", ntohs(a.sin_port));
    ok = ok && run_one(c = cache_in(dir, "hangs", 0), salt + 3, hangs, arch, &r->hangs);
    free(c);
    close(lfd), close(filler);
    return ok && !r->fleet_failed ? 0 : 1;
}

int remote_bench_main(int argc, char **argv)
{
    int processes = 16;
    const char *arch = "sm_90";
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], REMOTE_BENCH_FLAG)) continue;
        if (!strcmp(argv[i], "--json")) json = true;
        else if (!strcmp(argv[i], "--processes") && v && atoi(v) >= 1 && atoi(v) <= MAX_PROCESSES)
            processes = atoi(v), i++;
        else if (!strcmp(argv[i], "--arch") && v) arch = v, i++;
        else
            return tool_usage_error("asyncrt-bench", "--remote takes --processes N (1..%d), --arch A, --json; not "
                                    "\"%s\"", MAX_PROCESSES, argv[i]);
    }
    char dir[256] = "/tmp/asyncrt-bench-remote-XXXXXX"; /* mode 0700 */
    /* The two variables as the library reads them: a set-uid or set-gid process ignores both
     * (docs/library.md, "Environment": each names a server or a file), as secure_getenv does. */
    const char *key_file = secure_getenv("ASYNCRT_REMOTE_CACHE_KEY_FILE");
    const char *given = secure_getenv("ASYNCRT_REMOTE_CACHE");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "asyncrt-bench --remote: cannot create %s\n", dir);
        return 1;
    }
    char key[300], spec[700];
    pid_t redis = -1;
    if (!key_file) { /* a key of this run's own */
        unsigned char secret[32];
        snprintf(key, sizeof key, "%s/key", dir);
        int fd = open(key, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        bool written = fd >= 0 && getrandom(secret, sizeof secret, 0) == sizeof secret &&
                       write(fd, secret, sizeof secret) == sizeof secret;
        if (fd >= 0) close(fd);
        if (written) setenv("ASYNCRT_REMOTE_CACHE_KEY_FILE", key, 1);
    }
    if (given && *given) snprintf(spec, sizeof spec, "%s", given);
    else if ((redis = start_redis(dir, spec, sizeof spec)) < 0) {
        fprintf(stderr, "asyncrt-bench --remote: no ASYNCRT_REMOTE_CACHE and no redis-server to start "
                        "(Debian: redis-server)\n");
        remove_tree(dir);
        return 1;
    }
    unsetenv("ASYNCRT_REMOTE_CACHE"); /* each process is given its remote explicitly */
    if (!json) fprintf(stderr, "asyncrt-bench --remote: %s, %d processes; this takes a few cold compiles\n", spec,
                       processes);
    report r = {.processes = processes};
    int rc = measure(dir, spec, arch, processes, &r);
    if (rc) fprintf(stderr, "asyncrt-bench --remote: a process failed (see above)\n");
    else print_report(&r, arch, json);
    if (redis > 0) {
        kill(redis, SIGTERM);
        waitpid(redis, NULL, 0);
    }
    remove_tree(dir);
    return rc;
}
