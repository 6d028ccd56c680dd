/* The remote cache tests' fixtures: a redis-server of the test's own (on a
 * unix socket in a fresh private folder, or on 127.0.0.1 at a free port;
 * never any other address), always stopped (and killed with the test
 * process, PR_SET_PDEATHSIG); a hostile fake one (fake_redis.py, Python's
 * standard library, on 127.0.0.1, ending by itself after its lifetime);
 * and compiles in child processes, each with its own local cache: the
 * "machines" of a fleet. */
#ifndef ASYNCRT_REDIS_FIXTURE_H
#define ASYNCRT_REDIS_FIXTURE_H

#include <stdbool.h>
#include <sys/types.h>

#include "asyncrt/asyncrt.h"
#include "diag.h" /* asyncrt__now_ms: the redis calls' deadlines */
#include "remote_redis.h"

typedef struct redis_server {
    pid_t pid;
    char dir[256];     /* its folder: socket, log */
    char socket[320];  /* the unix socket, when !tcp */
    int port;          /* the TCP port on 127.0.0.1, when tcp */
    char spec[400];    /* ASYNCRT_REMOTE_CACHE for it */
} redis_server;

/* The redis-server program, or NULL (the tests then skip, saying so). */
const char *redis_server_program(void);

/* Starts one and waits (at most 10 s) until it answers. False: the test fails. */
bool redis_start(redis_server *s, bool tcp);
/* SIGTERM, then SIGKILL after 2 s; reaps it and removes its folder. */
void redis_stop(redis_server *s);
/* kill -9, reaped; the folder stays (a restart may reuse the socket path). */
void redis_kill9(redis_server *s);
/* kill -9, then a fresh (empty) server at the same socket or port. */
bool redis_restart(redis_server *s);

/* A fake server (tests/remote/fake_redis.py, run by python3) in `mode`, for
 * at most lifetime_s; count_file (or NULL) gets the number of commands it
 * answered. False (the test skips) without python3. */
typedef struct fake_redis {
    pid_t pid;
    int port;
    char spec[200]; /* ASYNCRT_REMOTE_CACHE for it, no attributes */
} fake_redis;
bool fake_redis_start(fake_redis *f, const char *mode, int lifetime_s, const char *count_file);
void fake_redis_stop(fake_redis *f); /* SIGTERM (its count file is written), SIGKILL after 2 s; reaped */

/* A direct connection to s, for tests that inspect or tamper with values. */
asyncrt_redis *redis_direct(const redis_server *s);
/* A value read (malloc'd; NULL when absent or on an error) or written (true
 * when stored) directly on s, with no asyncrt logic between. */
unsigned char *redis_value_get(const redis_server *s, const char *name, size_t *size);
bool redis_value_put(const redis_server *s, const char *name, const void *data, size_t size);
/* The names of keys matching `match` on s (malloc'd array of malloc'd). */
size_t redis_keys(const redis_server *s, const char *match, char ***keys);
void redis_keys_free(char **keys, size_t n);

/* A fresh HMAC key file (32 random bytes, mode 0600) in dir; malloc'd path. */
char *make_key_file(const char *dir, const char *name);

/* A test's remote world: a redis-server of its own on a unix socket, a fresh
 * temporary folder named for `name` and the fleet's key file in it (fails
 * the test if any can't be made); closed: the server stopped, the folder
 * removed, both strings freed. */
void redis_world_open(redis_server *server, char **dir, char **key, const char *name);
void redis_world_close(redis_server *server, char *dir, char *key);

/* One compile in a child process with a context of its own. */
typedef struct remote_run {
    const char *cache_dir;    /* the child's local disk cache */
    const char *spec;         /* asyncrt_context_set_remote_cache's; NULL: none */
    const char *key_file;
    const char *source_name;
    const char *source;
    const char *include_dir;  /* NULL: none */
    const char *arch;         /* NULL: sm_90 */
    size_t data_limit_mb;     /* RLIMIT_DATA of the child (0: none; never under ASan) */
} remote_run;

typedef struct remote_result {
    bool ran;                 /* the child reported (did not crash or hang) */
    asyncrt_status set_status;   /* of asyncrt_context_set_remote_cache */
    char set_message[512];
    asyncrt_status status;    /* of asyncrt_program_compile */
    asyncrt_program_origin origin;
    double compile_ms;
    asyncrt_remote_cache_stats stats;
    asyncrt_cache_stats local;
    uint64_t kept;            /* the tally's stores that found a value there (a fresh cache_dir: this child's) */
    long max_rss_kb;          /* the child's peak resident memory */
} remote_result;

/* Starts the child; it waits for a byte on go_fd (-1: it does not wait). */
pid_t remote_child_start(const remote_run *run, int go_fd, int *result_fd);
/* Its result, waiting at most limit_s (then it is killed: ran is false). */
remote_result remote_child_finish(pid_t pid, int result_fd, int limit_s);
/* Both, at once. */
remote_result remote_compile(const remote_run *run);

/* root/cacheN, a name not handed out before in this process (malloc'd): a
 * fresh local cache, another machine. */
char *fresh_cache_dir(const char *root);

/* Writes dir/name (replacing it). */
void write_text(const char *dir, const char *name, const char *text);

#endif
