/* Whom the disk cache trusts and what it refuses to read: a directory that
 * others can write or that belongs to someone else (simulated through the
 * euid seam, since the tests run as root here), a symlinked directory, the
 * shared-team mode with its MAC, and odd files at an entry's or manifest's
 * path (FIFO, directory, symlink, 2 GiB sparse file): never a hang, never a
 * load, always a clear log line. Also the counters, the size cap and the
 * clean-up of temporaries left by dead writers, and one context used from
 * several threads at once. */
#define _DEFAULT_SOURCE /* mkfifo, symlink */
#include <dirent.h>
#include <grp.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "codec.h"
#include "context.h"
#include "cache_store.h"
#include "safe_io.h"
#include "nvrtc_facts.h"
#include "nvrtc_loader.h"
#include "speculate.h"
#include "test_support.h"

static const char *k_source = "extern \"C\" __global__ void k(int *x) { x[0] = VALUE; }\n";

typedef struct fixture {
    char *root; /* holds the cache directories of one test */
    char *dir;  /* <root>/cache */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->root = test_make_temp_dir("asyncrt-trust");
    f->dir = asyncrt__format("%s/cache", f->root);
    unsetenv("ASYNCRT_CACHE_SHARED");
    unsetenv("ASYNCRT_CACHE_MAX_BYTES");
    alarm(60); /* a hang on a FIFO fails the test instead of stalling ctest */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    alarm(0);
    asyncrt__safe_io_euid = geteuid;
    unsetenv("ASYNCRT_CACHE_SHARED");
    unsetenv("ASYNCRT_CACHE_MAX_BYTES");
    test_remove_tree(f->root);
    free(f->root);
    free(f->dir);
    free(f);
    return 0;
}

static void assert_logged(const char *log, const char *needle)
{
    if (!strstr(log, needle)) fail_msg("expected \"%s\" in the log:\n%s", needle, log);
}

/* ---- compiling ---------------------------------------------------------- */

static asyncrt_context *new_context(const char *dir)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    asyncrt_context_set_log_level(ctx, 1);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    return ctx;
}

static asyncrt_program *compile_program(asyncrt_context *ctx, int value)
{
    char define[32];
    snprintf(define, sizeof define, "VALUE=%d", value);
    const char *defines[] = {define};
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_80", .defines = defines, .define_count = 1};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "k.cu", k_source, &o, &p));
    return p;
}

static asyncrt_program_origin compile_value(asyncrt_context *ctx, int value)
{
    asyncrt_program *p = compile_program(ctx, value);
    asyncrt_program_origin origin = asyncrt_program_origin_of(p);
    asyncrt_program_destroy(p);
    return origin;
}

/* Compiles `value` in a fresh context on dir; returns the origin, the log in *log. */
static asyncrt_program_origin fresh_compile(const char *dir, int value, char **log, asyncrt_cache_stats *stats)
{
    test_capture_begin();
    asyncrt_context *ctx = new_context(dir);
    asyncrt_program_origin origin = compile_value(ctx, value);
    if (stats) asyncrt_context_cache_stats(ctx, stats);
    asyncrt_context_destroy(ctx);
    char *text = test_capture_end();
    if (log) *log = text;
    else free(text);
    return origin;
}

static void assert_no_disk_cache(const char *dir, const char *reason)
{
    char *log = NULL;
    assert_int_equal(fresh_compile(dir, 1, &log, NULL), ASYNCRT_ORIGIN_COMPILED);
    assert_logged(log, "no disk cache");
    assert_logged(log, reason);
    free(log);
    assert_int_equal(fresh_compile(dir, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED); /* nothing was stored */
}

/* ---- the directory ------------------------------------------------------ */

static void a_directory_others_can_write_is_not_used(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdir(f->dir, 0700), 0);
    assert_int_equal(chmod(f->dir, 0777), 0);
    assert_no_disk_cache(f->dir, "writable by others");
    assert_int_equal(chmod(f->dir, 0770), 0);
    assert_no_disk_cache(f->dir, "writable by its group");
    assert_int_equal(chmod(f->dir, 0755), 0); /* readable by others is fine */
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
}

static uid_t someone_else(void) { return 4242; }

static void a_directory_of_another_user_is_not_used(void **state)
{
    fixture *f = *state;
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED); /* created, ours */
    asyncrt__safe_io_euid = someone_else; /* now it belongs to "another user" */
    assert_no_disk_cache(f->dir, "owned by uid");
    asyncrt__safe_io_euid = geteuid;
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
}

static void a_symlinked_directory_is_not_used(void **state)
{
    fixture *f = *state;
    char *real = asyncrt__format("%s/real", f->root);
    assert_int_equal(mkdir(real, 0700), 0);
    assert_int_equal(symlink(real, f->dir), 0);
    assert_no_disk_cache(f->dir, "symbolic link");
    free(real);
}

static void created_directories_are_private(void **state)
{
    fixture *f = *state;
    char *deep = asyncrt__format("%s/a/b/cache", f->root);
    mode_t old = umask(0);
    assert_int_equal(fresh_compile(deep, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    umask(old);
    const char *levels[] = {"a", "a/b", "a/b/cache"};
    for (int i = 0; i < 3; i++) {
        char *path = asyncrt__format("%s/%s", f->root, levels[i]);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        free(path);
    }
    assert_int_equal(fresh_compile(deep, 1, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
    free(deep);
}

/* A folder that cannot be created says why: EACCES named as such, with the
 * parent this user may not write, never the ENOENT of a later lstat (as
 * before: "No such file or directory"). Root may write anywhere, so as root
 * a child process drops to nobody (65534) to meet the permissions. */
static void open_as_someone_who_may_not_write(const char *dir, char *why, size_t size)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        char text[1024] = "";
        uint8_t key[32];
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
            snprintf(text, sizeof text, "SKIP: cannot become uid 65534");
        else if (asyncrt__dir_open_trusted(dir, false, key, text, sizeof text) >= 0)
            snprintf(text, sizeof text, "created or opened %s", dir);
        ssize_t n = write(fds[1], text, strlen(text));
        _exit(n < 0);
    }
    close(fds[1]);
    ssize_t n = read(fds[0], why, size - 1);
    why[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!strncmp(why, "SKIP", 4)) {
        printf("%s (running as root, permissions do not bite)\n", why);
        skip();
    }
}

static void a_folder_that_cannot_be_created_says_permission_denied(void **state)
{
    fixture *f = *state;
    char *locked = asyncrt__format("%s/locked", f->root), why[1024];
    assert_int_equal(chmod(f->root, 0755), 0);
    assert_int_equal(mkdir(locked, 0555), 0);
    assert_int_equal(chmod(locked, 0555), 0);
    unsigned uid = geteuid() == 0 ? 65534 : (unsigned)geteuid();
    const char *names[] = {"x", "x/y/cache"}; /* the folder, or one above it, is the one refused */
    for (int i = 0; i < 2; i++) {
        char *dir = asyncrt__format("%s/%s", locked, names[i]);
        open_as_someone_who_may_not_write(dir, why, sizeof why);
        char *expected = asyncrt__format("permission denied creating %s/x (parent %s is not writable by uid %u)",
                                         locked, locked, uid);
        if (strcmp(why, expected)) fail_msg("opening %s: \"%s\"\n(expected \"%s\")", dir, why, expected);
        free(expected);
        free(dir);
    }
    /* A parent this user cannot even look into. */
    assert_int_equal(chmod(locked, 0), 0);
    char *dir = asyncrt__format("%s/x", locked);
    open_as_someone_who_may_not_write(dir, why, sizeof why);
    if (!strstr(why, "permission denied creating") || !strstr(why, "is not searchable by uid"))
        fail_msg("opening %s: \"%s\"", dir, why);
    assert_int_equal(chmod(locked, 0700), 0);
    free(dir);
    free(locked);
}

/* Whoever may write the parent puts a symlink at the name the instant the
 * directory is made (inotify wakes it): the mode the library gives the new
 * directory must not land on the symlink's target. Before, a chmod by name
 * after mkdir followed it: one of the user's files, 0600 here, became 0700
 * (02770 in shared mode: the team's) in 64 and 69 of 200 tries (two runs). Now the mode is set
 * on the opened directory (fchmod), never through a name. */
typedef struct planter {
    int inotify;
    const char *name, *moved, *target;
    bool planted; /* the symlink went in: this try raced the library */
} planter;

static void *plant_symlink(void *arg)
{
    planter *p = arg;
    char events[4096];
    if (read(p->inotify, events, sizeof events) > 0 && rename(p->name, p->moved) == 0)
        p->planted = symlink(p->target, p->name) == 0;
    return NULL;
}

static void a_new_directory_s_mode_never_follows_a_symlink(void **state)
{
    fixture *f = *state;
    int changed = 0, planted = 0, tries = 200;
    for (int t = 0; t < tries; t++) {
        char *parent = asyncrt__format("%s/p%d", f->root, t), *name = asyncrt__format("%s/cache", parent);
        char *moved = asyncrt__format("%s/moved", parent), *target = asyncrt__format("%s/target", parent);
        assert_int_equal(mkdir(parent, 0700), 0);
        int fd = open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        assert_true(fd >= 0 && fchmod(fd, 0600) == 0);
        close(fd);
        planter p = {.inotify = inotify_init1(IN_CLOEXEC), .name = name, .moved = moved, .target = target};
        assert_true(p.inotify >= 0 && inotify_add_watch(p.inotify, parent, IN_CREATE | IN_ONLYDIR) >= 0);
        pthread_t thread;
        assert_int_equal(pthread_create(&thread, NULL, plant_symlink, &p), 0);
        usleep(1000); /* the planter waits in read() by the time the directory is made */
        uint8_t key[32];
        bool trusted;
        char why[512];
        int door = asyncrt__dir_open_door(name, false, true, key, &trusted, why, sizeof why);
        if (door >= 0) close(door);
        pthread_join(thread, NULL);
        close(p.inotify);
        struct stat st;
        assert_int_equal(stat(target, &st), 0);
        changed += (st.st_mode & 07777) != 0600;
        planted += p.planted;
        test_remove_tree(parent);
        free(parent), free(name), free(moved), free(target);
    }
    assert_true(planted > 0); /* the attack ran at all */
    if (changed) fail_msg("the new directory's mode went to the symlinked file in %d of %d tries", changed, tries);
}

static void a_directory_removed_under_a_context_is_made_again(void **state)
{
    fixture *f = *state;
    test_capture_begin();
    asyncrt_context *ctx = new_context(f->dir);
    assert_int_equal(compile_value(ctx, 1), ASYNCRT_ORIGIN_COMPILED);
    test_remove_tree(f->dir);
    assert_int_equal(compile_value(ctx, 2), ASYNCRT_ORIGIN_COMPILED); /* cannot store: warned */
    assert_int_equal(compile_value(ctx, 3), ASYNCRT_ORIGIN_COMPILED); /* checked, created, stored */
    asyncrt_context_destroy(ctx);
    char *log = test_capture_end();
    assert_logged(log, "not caching in");
    free(log);
    assert_int_equal(fresh_compile(f->dir, 3, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
}

static int count_files(const char *dir, const char *prefix, const char *suffix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name), tail = strlen(suffix);
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0 && len >= tail &&
             strcmp(e->d_name + len - tail, suffix) == 0;
    }
    if (d) closedir(d);
    return n;
}

/* Another user who owns the parent swaps the cache directory between two
 * compiles of one process, for one holding an entry of the second program's
 * key (made by compiling the same source). The context keeps using the
 * directory it checked and opened; the foreign one is never read. */
static void a_directory_swapped_between_compiles_is_never_read(void **state)
{
    fixture *f = *state;
    char *theirs = asyncrt__format("%s/theirs", f->root), *moved = asyncrt__format("%s/moved", f->root);
    assert_int_equal(fresh_compile(theirs, 2, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_context *ctx = new_context(f->dir);
    assert_int_equal(compile_value(ctx, 1), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(rename(f->dir, moved), 0);
    assert_int_equal(rename(theirs, f->dir), 0);
    if (geteuid() == 0) assert_int_equal(chown(f->dir, 4242, 4242), 0); /* theirs indeed */
    assert_int_equal(compile_value(ctx, 2), ASYNCRT_ORIGIN_COMPILED);  /* not their entry */
    asyncrt_context_destroy(ctx);
    assert_int_equal(count_files(moved, "", ".bin"), 2);   /* ours, stored where our directory went */
    assert_int_equal(count_files(f->dir, "", ".bin"), 1);  /* theirs, untouched */
    free(theirs), free(moved);
}

/* ---- side files: the NVRTC facts memo, the speculative target hint ------- */

/* The child's part: the facts through a context on dir; 10 when they came
 * from the memo. */
static int facts_child(const char *dir)
{
    alarm(20); /* blocked on a FIFO: killed, and the parent sees it */
    asyncrt_context *ctx = NULL;
    asyncrt_nvrtc_facts facts;
    char msg[256];
    bool ok = asyncrt_context_create(&ctx) == ASYNCRT_SUCCESS &&
              asyncrt_context_set_cache_dir(ctx, dir) == ASYNCRT_SUCCESS &&
              asyncrt__nvrtc_facts_get(ctx, &facts, msg, sizeof msg) == ASYNCRT_SUCCESS;
    asyncrt_context_destroy(ctx);
    return ok ? (facts.from_memo ? 10 : 0) : 1;
}

/* Runs facts_child in a fresh process (this one already knows the facts,
 * which are process-wide); its exit status, or 128 + the signal. */
static int facts_in_child(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "test_cache_trust", "--facts", dir, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *memo_path(const char *dir)
{
    DIR *d = opendir(dir);
    char *path = NULL;
    for (struct dirent *e; d && !path && (e = readdir(d));)
        if (strncmp(e->d_name, "nvrtc-", 6) == 0) path = asyncrt__format("%s/%s", dir, e->d_name);
    if (d) closedir(d);
    assert_non_null(path);
    return path;
}

static void copy_file(const char *from, const char *to);

static void side_files_follow_the_cache_rules(void **state)
{
    fixture *f = *state;
    /* Written, then read, in a directory the cache uses. */
    assert_int_equal(facts_in_child(f->dir), 0);
    assert_int_equal(count_files(f->dir, "nvrtc-", ".facts"), 1);
    assert_int_equal(facts_in_child(f->dir), 10);
    /* A FIFO at its name: ignored without blocking, and left alone. */
    char *memo = memo_path(f->dir);
    assert_int_equal(unlink(memo), 0);
    assert_int_equal(mkfifo(memo, 0600), 0);
    assert_int_equal(facts_in_child(f->dir), 0);
    /* Never written into, nor read from, a directory the cache refuses. */
    char *open_dir = asyncrt__format("%s/world-writable", f->root);
    assert_int_equal(mkdir(open_dir, 0700), 0);
    assert_int_equal(chmod(open_dir, 0777), 0);
    assert_int_equal(facts_in_child(open_dir), 0);
    assert_int_equal(count_files(open_dir, "", ""), 2); /* "." and ".." */

    /* The target hint: the same helpers, so a refused directory's hint is not read. */
    char *hint_dir = asyncrt__format("%s/hint", f->root);
    asyncrt_context *ctx = new_context(hint_dir);
    char arch[32];
    assert_false(asyncrt__speculation_guess(ctx, 0, arch, sizeof arch));
    assert_true(asyncrt__cache_write_side(ctx->cache, "target-h-device-0", "sm_90\n"));
    assert_int_equal(count_files(hint_dir, ".tmp", ""), 0);
    char *text = asyncrt__cache_read_side(ctx->cache, "target-h-device-0");
    assert_string_equal(text, "sm_90\n");
    free(text);
    asyncrt_context_destroy(ctx);
    assert_int_equal(chmod(hint_dir, 0777), 0);
    test_capture_begin();
    ctx = new_context(hint_dir);
    assert_null(asyncrt__cache_read_side(ctx->cache, "target-h-device-0"));
    assert_false(asyncrt__cache_write_side(ctx->cache, "target-h-device-1", "sm_80\n"));
    asyncrt_context_destroy(ctx);
    free(test_capture_end());
    assert_int_equal(count_files(hint_dir, "target-h-device-1", ""), 0);
    /* A symbolic link at a side file's name is refused, never followed. */
    assert_int_equal(chmod(hint_dir, 0700), 0);
    char *link = asyncrt__format("%s/target-h-device-2", hint_dir), *real = asyncrt__format("%s/target-h-device-0",
                                                                                             hint_dir);
    assert_int_equal(symlink(real, link), 0);
    test_capture_begin();
    ctx = new_context(hint_dir);
    assert_null(asyncrt__cache_read_side(ctx->cache, "target-h-device-2"));
    asyncrt_context_destroy(ctx);
    char *log = test_capture_end();
    assert_logged(log, "symbolic link");
    free(log), free(link), free(real), free(hint_dir), free(open_dir), free(memo);
}

/* The seal is what makes a side file trusted (issue 33): a file of the same
 * text written without it (an older asyncrt's plain text, or anyone's), a
 * sealed one copied under another side file's name, or, in a shared cache, one
 * without the team's MAC is ignored with a log line, as a consumer (the
 * speculative target hint) sees it too. */
static void unsealed_or_renamed_side_files_are_ignored(void **state)
{
    fixture *f = *state;
    char host[64] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/') *c = '_';
    char *hint = asyncrt__format("target-%s-device-0", host), *other = asyncrt__format("target-%s-device-1", host);
    char *hint_path = asyncrt__format("%s/%s", f->dir, hint), *other_path = asyncrt__format("%s/%s", f->dir, other);
    for (int shared = 0; shared < 2; shared++) {
        if (shared) {
            test_remove_tree(f->dir);
            assert_int_equal(mkdir(f->dir, 02770), 0);
            assert_int_equal(chmod(f->dir, 02770), 0);
            setenv("ASYNCRT_CACHE_SHARED", "1", 1);
        }
        asyncrt_context *ctx = new_context(f->dir);
        char arch[32];
        /* Sealed: read back, and the hint is used. */
        assert_true(asyncrt__cache_write_side(ctx->cache, hint, "sm_90\n"));
        assert_true(asyncrt__speculation_guess(ctx, 0, arch, sizeof arch));
        assert_string_equal(arch, "sm_90");
        /* Copied under another name: sealed for its own name only. */
        copy_file(hint_path, other_path);
        test_capture_begin();
        assert_null(asyncrt__cache_read_side(ctx->cache, other));
        char *log = test_capture_end();
        assert_logged(log, "ignoring cache side file");
        free(log);
        /* The same text, unsealed (a plain file of the user's, mode 0600). */
        FILE *plain = fopen(hint_path, "w");
        fputs("sm_90\n", plain);
        fclose(plain);
        test_capture_begin();
        assert_null(asyncrt__cache_read_side(ctx->cache, hint));
        assert_false(asyncrt__speculation_guess(ctx, 0, arch, sizeof arch));
        log = test_capture_end();
        assert_logged(log, "ignoring cache side file");
        free(log);
        asyncrt_context_destroy(ctx);
        if (!shared) continue;
        /* Sealed, but with a plain digest where the team's MAC belongs. */
        unsetenv("ASYNCRT_CACHE_SHARED");
        char *private_dir = asyncrt__format("%s/private", f->root);
        ctx = new_context(private_dir);
        assert_true(asyncrt__cache_write_side(ctx->cache, hint, "sm_90\n"));
        asyncrt_context_destroy(ctx);
        char *private_hint = asyncrt__format("%s/%s", private_dir, hint);
        copy_file(private_hint, hint_path);
        setenv("ASYNCRT_CACHE_SHARED", "1", 1);
        test_capture_begin();
        ctx = new_context(f->dir);
        assert_null(asyncrt__cache_read_side(ctx->cache, hint));
        asyncrt_context_destroy(ctx);
        log = test_capture_end();
        assert_logged(log, "not signed with the shared cache's key");
        free(log), free(private_dir), free(private_hint);
        unsetenv("ASYNCRT_CACHE_SHARED");
    }
    free(hint), free(other), free(hint_path), free(other_path);
}

/* ---- the shared team cache ---------------------------------------------- */

static char *only_file(const char *dir, const char *suffix)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s/*%s", dir, suffix);
    FILE *ls = popen(cmd, "r");
    char *path = calloc(1, 1024);
    assert_non_null(fgets(path, 1024, ls));
    path[strcspn(path, "\n")] = '\0';
    pclose(ls);
    return path;
}

static void copy_file(const char *from, const char *to)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
}

static void a_shared_cache_needs_the_opt_in_setgid_and_the_key(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdir(f->dir, 0700), 0);
    assert_int_equal(chmod(f->dir, 0770), 0);
    setenv("ASYNCRT_CACHE_SHARED", "1", 1);
    assert_no_disk_cache(f->dir, "setgid");
    assert_int_equal(chmod(f->dir, 02777), 0);
    assert_no_disk_cache(f->dir, "writable by others");
    assert_int_equal(chmod(f->dir, 02770), 0);
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
    char *key = asyncrt__format("%s/KEY", f->dir);
    struct stat st;
    assert_int_equal(stat(key, &st), 0);
    assert_int_equal(st.st_size, 32);
    assert_int_equal(st.st_mode & 0077, 040); /* group-readable only */
    char *entry = only_file(f->dir, ".bin");
    assert_int_equal(stat(entry, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0660); /* members refresh and evict each other's entries */

    /* An entry without the team's MAC (here: one from a private cache) is refused. */
    char *private_dir = asyncrt__format("%s/private", f->root);
    unsetenv("ASYNCRT_CACHE_SHARED");
    assert_int_equal(fresh_compile(private_dir, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    char *private_entry = only_file(private_dir, ".bin");
    assert_string_equal(strrchr(private_entry, '/'), strrchr(entry, '/')); /* same key, other seal */
    copy_file(private_entry, entry);
    setenv("ASYNCRT_CACHE_SHARED", "1", 1);
    char *log = NULL;
    asyncrt_cache_stats stats = ASYNCRT_CACHE_STATS_INIT;
    assert_int_equal(fresh_compile(f->dir, 1, &log, &stats), ASYNCRT_ORIGIN_COMPILED);
    assert_logged(log, "not signed with the shared cache's key");
    assert_int_equal(stats.rejected, 1);
    free(log);

    /* A different key (another team, or a forger without the key) is refused too. */
    unsetenv("ASYNCRT_CACHE_SHARED");
    char *other = asyncrt__format("%s/other", f->root);
    assert_int_equal(mkdir(other, 02770), 0);
    assert_int_equal(chmod(other, 02770), 0);
    setenv("ASYNCRT_CACHE_SHARED", "1", 1);
    assert_int_equal(fresh_compile(other, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    char *other_entry = only_file(other, ".bin");
    copy_file(other_entry, entry);
    assert_int_equal(fresh_compile(f->dir, 1, &log, NULL), ASYNCRT_ORIGIN_COMPILED);
    assert_logged(log, "MAC mismatch");
    free(log);

    /* A key file others could read or write is refused. */
    assert_int_equal(chmod(key, 0444), 0);
    assert_no_disk_cache(f->dir, "KEY has mode 0444");
    free(key), free(entry), free(private_dir), free(private_entry), free(other), free(other_entry);
}

/* ---- sealed bytes bound to their key (issue 33) -------------------------- */

/* The file of dir ending in suffix that is not `except` (NULL: the only one). */
static char *file_but(const char *dir, const char *suffix, const char *except)
{
    DIR *d = opendir(dir);
    char *path = NULL;
    for (struct dirent *e; d && !path && (e = readdir(d));) {
        size_t n = strlen(e->d_name), m = strlen(suffix);
        if (n < m || strcmp(e->d_name + n - m, suffix) != 0) continue;
        path = asyncrt__format("%s/%s", dir, e->d_name);
        if (except && strcmp(path, except) == 0) free(path), path = NULL;
    }
    if (d) closedir(d);
    assert_non_null(path);
    return path;
}

/* Writes `from`'s bytes at `to`, with the header's key (bytes 16..48) that
 * `to` had: the relabelling that needs no key. */
static void relabel(const char *from, const char *to)
{
    size_t size = 0, to_size = 0;
    char why[256];
    unsigned char *data = asyncrt__file_read(AT_FDCWD, from, 1 << 26, false, &size, why, sizeof why);
    unsigned char *old = asyncrt__file_read(AT_FDCWD, to, 1 << 26, false, &to_size, why, sizeof why);
    assert_non_null(data);
    assert_non_null(old);
    memcpy(data + 16, old + 16, 32);
    int fd = open(to, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, size), (ssize_t)size);
    close(fd);
    free(data), free(old);
}

/* Compiles `value` for `arch` in a fresh context on dir: its origin, its arch
 * in got (32 bytes), the log in *log. */
static asyncrt_program_origin compile_for(const char *dir, int value, const char *arch, char *got, char **log)
{
    char define[32];
    snprintf(define, sizeof define, "VALUE=%d", value);
    const char *defines[] = {define};
    asyncrt_compile_options o = {.size = sizeof o, .arch = arch, .defines = defines, .define_count = 1};
    test_capture_begin();
    asyncrt_context *ctx = new_context(dir);
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "k.cu", k_source, &o, &p));
    asyncrt_program_origin origin = asyncrt_program_origin_of(p);
    snprintf(got, 32, "%s", asyncrt_program_arch(p));
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    char *text = test_capture_end();
    if (log) *log = text;
    else free(text);
    return origin;
}

/* One key's sealed bytes under another key's name, the header's key
 * rewritten to match (all it takes without the team's key): the digest (the
 * MAC, in a shared cache) covers the header, so both an entry (compute_90's
 * image for a compute_80 request) and a manifest (VALUE=1's dependency set
 * for a VALUE=2 request) are refused, not served. In both modes. */
static void sealed_bytes_relabelled_for_another_key_are_refused(void **state)
{
    fixture *f = *state;
    for (int shared = 0; shared < 2; shared++) {
        char *dir = asyncrt__format("%s/%s", f->root, shared ? "shared" : "private");
        const char *refusal = shared ? "MAC mismatch" : "checksum mismatch";
        if (shared) {
            assert_int_equal(mkdir(dir, 02770), 0);
            assert_int_equal(chmod(dir, 02770), 0);
            setenv("ASYNCRT_CACHE_SHARED", "1", 1);
        }
        char arch[32], *log = NULL;
        assert_int_equal(compile_for(dir, 1, "compute_90", arch, NULL), ASYNCRT_ORIGIN_COMPILED);
        char *e90 = file_but(dir, ".bin", NULL), *mf1 = file_but(dir, ".mf", NULL);
        assert_int_equal(compile_for(dir, 1, "compute_80", arch, NULL), ASYNCRT_ORIGIN_COMPILED);
        char *e80 = file_but(dir, ".bin", e90), *mf80 = file_but(dir, ".mf", mf1);
        relabel(e90, e80);
        assert_int_equal(compile_for(dir, 1, "compute_80", arch, &log), ASYNCRT_ORIGIN_COMPILED);
        assert_string_equal(arch, "compute_80");
        assert_logged(log, refusal);
        free(log);
        assert_int_equal(compile_for(dir, 1, "compute_80", arch, NULL), ASYNCRT_ORIGIN_DISK_CACHE); /* rewritten */

        /* A manifest: VALUE=2's key leading to VALUE=1's program. */
        assert_int_equal(compile_for(dir, 2, "compute_90", arch, NULL), ASYNCRT_ORIGIN_COMPILED);
        char *mf2 = NULL;
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));) {
            char *path = asyncrt__format("%s/%s", dir, e->d_name);
            if (strstr(e->d_name, ".mf") && strcmp(path, mf1) && strcmp(path, mf80) && !mf2) mf2 = path;
            else free(path);
        }
        closedir(d);
        assert_non_null(mf2);
        relabel(mf1, mf2);
        assert_int_equal(compile_for(dir, 2, "compute_90", arch, &log), ASYNCRT_ORIGIN_COMPILED);
        assert_logged(log, refusal);
        free(log);
        unsetenv("ASYNCRT_CACHE_SHARED");
        free(dir), free(e90), free(e80), free(mf1), free(mf80), free(mf2);
    }
}

/* An entry of the previous format (an older asyncrt's) is a clean miss. */
static void an_entry_of_an_older_format_is_a_miss(void **state)
{
    fixture *f = *state;
    char arch[32], *log = NULL;
    assert_int_equal(compile_for(f->dir, 1, "compute_80", arch, NULL), ASYNCRT_ORIGIN_COMPILED);
    char *entry = file_but(f->dir, ".bin", NULL);
    int fd = open(entry, O_RDWR);
    uint32_t old = ASYNCRT_ENTRY_FORMAT - 1;
    assert_int_equal(pwrite(fd, &old, 4, 8), 4);
    close(fd);
    assert_int_equal(compile_for(f->dir, 1, "compute_80", arch, &log), ASYNCRT_ORIGIN_COMPILED);
    assert_logged(log, "written by an older asyncrt");
    free(log);
    assert_int_equal(compile_for(f->dir, 1, "compute_80", arch, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
    free(entry);
}

/* ---- odd files at an entry's or a manifest's path ----------------------- */

typedef enum odd_kind { ODD_FIFO, ODD_DIRECTORY, ODD_SYMLINK, ODD_HUGE } odd_kind;

static void plant(const char *path, odd_kind kind, const char *good_copy)
{
    assert_int_equal(unlink(path), 0);
    switch (kind) {
    case ODD_FIFO: assert_int_equal(mkfifo(path, 0600), 0); break;
    case ODD_DIRECTORY: assert_int_equal(mkdir(path, 0700), 0); break;
    case ODD_SYMLINK: assert_int_equal(symlink(good_copy, path), 0); break; /* to a good file: still refused */
    case ODD_HUGE: {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t)2 << 30), 0); /* sparse: costs no disk */
        close(fd);
        break;
    }
    }
}

static void odd_files_are_refused_without_hanging(void **state)
{
    fixture *f = *state;
    static const char *const expect[] = {"a FIFO", "a directory", "symbolic link", "implausible size"};
    for (int target = 0; target < 2; target++) {          /* the entry, then the manifest */
        for (odd_kind kind = ODD_FIFO; kind <= ODD_HUGE; kind++) {
            char *dir = asyncrt__format("%s/odd-%d-%d", f->root, target, (int)kind);
            assert_int_equal(fresh_compile(dir, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
            char *path = only_file(dir, target == 0 ? ".bin" : ".mf");
            char *good = asyncrt__format("%s/good-copy", f->root);
            copy_file(path, good);
            plant(path, kind, good);
            char *log = NULL;
            asyncrt_cache_stats stats = ASYNCRT_CACHE_STATS_INIT;
            assert_int_equal(fresh_compile(dir, 1, &log, &stats), ASYNCRT_ORIGIN_COMPILED);
            assert_logged(log, "refusing cache file");
            assert_logged(log, expect[kind]);
            assert_int_equal(stats.rejected, 1);
            assert_int_equal(stats.disk_hits, 0);
            free(log);
            unlink(good);
            test_remove_tree(dir);
            free(dir), free(path), free(good);
        }
    }
}

static void damaged_manifest_is_discarded(void **state)
{
    fixture *f = *state;
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    char *mf = only_file(f->dir, ".mf");
    int fd = open(mf, O_RDWR);
    unsigned char byte = 0;
    assert_int_equal(pread(fd, &byte, 1, 90), 1);
    byte ^= 1;
    assert_int_equal(pwrite(fd, &byte, 1, 90), 1);
    close(fd);
    char *log = NULL;
    assert_int_equal(fresh_compile(f->dir, 1, &log, NULL), ASYNCRT_ORIGIN_COMPILED);
    assert_logged(log, "discarding cache file");
    assert_logged(log, "checksum mismatch");
    free(log);
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE); /* rewritten */
    free(mf);
}

/* ---- counters, the cap, temporaries -------------------------------------- */

static void counters_count_what_happened(void **state)
{
    fixture *f = *state;
    asyncrt_context *ctx = new_context(f->dir);
    asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
    assert_int_equal(asyncrt_context_cache_stats(ctx, &s), ASYNCRT_SUCCESS);
    assert_int_equal(s.memory_hits + s.disk_hits + s.misses + s.stores + s.evictions + s.rejected, 0);
    assert_int_equal(compile_value(ctx, 1), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(compile_value(ctx, 1), ASYNCRT_ORIGIN_MEMORY_CACHE);
    assert_int_equal(compile_value(ctx, 1), ASYNCRT_ORIGIN_MEMORY_CACHE);
    assert_int_equal(compile_value(ctx, 2), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_context_cache_stats(ctx, &s);
    assert_int_equal(s.memory_hits, 2);
    assert_int_equal(s.disk_hits, 0);
    assert_int_equal(s.misses, 2);
    assert_int_equal(s.stores, 2);
    assert_int_equal(s.evictions, 0);
    asyncrt_context_destroy(ctx);

    test_capture_begin();
    ctx = new_context(f->dir);
    asyncrt_context_set_log_level(ctx, 2);
    assert_int_equal(compile_value(ctx, 2), ASYNCRT_ORIGIN_DISK_CACHE);
    asyncrt_context_cache_stats(ctx, &s);
    asyncrt_context_destroy(ctx);
    char *log = test_capture_end();
    assert_int_equal(s.disk_hits, 1);
    assert_int_equal(s.misses, 0);
    assert_logged(log, "cache: 0 memory hits, 1 disk hits, 0 misses, 0 stores, 0 evictions, 0 rejected");
    free(log);
    assert_int_equal(asyncrt_context_cache_stats(NULL, &s), ASYNCRT_ERROR_INVALID_ARGUMENT);
}

static uint64_t cache_bytes(const char *dir)
{
    asyncrt_cache_listing l;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(asyncrt__cache_scan_at(fd, &l));
    close(fd);
    uint64_t bytes = l.entry_bytes + l.manifest_bytes;
    asyncrt__cache_listing_free(&l);
    return bytes;
}

static void the_cap_evicts_the_least_recently_used(void **state)
{
    fixture *f = *state;
    assert_int_equal(fresh_compile(f->dir, 0, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    uint64_t one = cache_bytes(f->dir); /* one compile's entry + manifest */
    char cap_text[32];
    uint64_t cap = one * 7 / 2;          /* room for three */
    snprintf(cap_text, sizeof cap_text, "%llu", (unsigned long long)cap);
    setenv("ASYNCRT_CACHE_MAX_BYTES", cap_text, 1);
    struct timespec pause = {0, 20 * 1000000L};
    for (int v = 1; v < 3; v++) {
        nanosleep(&pause, NULL);
        assert_int_equal(fresh_compile(f->dir, v, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    }
    assert_true(cache_bytes(f->dir) <= cap);
    /* Value 0 is the oldest; a hit makes it the newest, so 1 goes first. */
    nanosleep(&pause, NULL);
    assert_int_equal(fresh_compile(f->dir, 0, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
    asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
    uint64_t evicted = 0;
    for (int v = 3; v < 8; v++) {
        nanosleep(&pause, NULL);
        assert_int_equal(fresh_compile(f->dir, v, NULL, &s), ASYNCRT_ORIGIN_COMPILED);
        evicted += s.evictions;
        assert_true(cache_bytes(f->dir) <= cap);
        if (v == 3) {
            assert_true(s.evictions >= 1); /* value 1's entry (its manifest may linger: it is small) */
            assert_int_equal(fresh_compile(f->dir, 0, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
            assert_int_equal(fresh_compile(f->dir, 2, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
        }
    }
    assert_true(evicted >= 5);
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED); /* evicted long ago */

    setenv("ASYNCRT_CACHE_MAX_BYTES", "lots", 1);
    setenv("ASYNCRT_LOG", "1", 1); /* read when the context is created, like the cap */
    char *log = NULL;
    fresh_compile(f->dir, 9, &log, NULL);
    unsetenv("ASYNCRT_LOG");
    assert_logged(log, "ASYNCRT_CACHE_MAX_BYTES=\"lots\" is not a size");
    free(log);
    uint64_t v = 0;
    assert_true(asyncrt__cache_parse_size("512M", &v) && v == 512ull << 20);
    assert_true(asyncrt__cache_parse_size("2g", &v) && v == 2ull << 30);
    assert_true(asyncrt__cache_parse_size("100", &v) && v == 100);
    assert_false(asyncrt__cache_parse_size("-1", &v));
    assert_false(asyncrt__cache_parse_size("1T", &v));
    assert_false(asyncrt__cache_parse_size("", &v));
}

/* An entry and its manifest go together, and a cap smaller than one of
 * them is refused with a warning (it would evict the entry just stored, or
 * its manifest, so that the next run misses). */
static void a_cap_below_one_entry_is_refused(void **state)
{
    fixture *f = *state;
    setenv("ASYNCRT_CACHE_MAX_BYTES", "100", 1);
    char *log = NULL;
    assert_int_equal(fresh_compile(f->dir, 1, &log, NULL), ASYNCRT_ORIGIN_COMPILED);
    assert_logged(log, "is smaller than one entry with its manifest");
    free(log);
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
    assert_int_equal(fresh_compile(f->dir, 2, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(count_files(f->dir, "", ".bin"), 2); /* refused: the default cap applies */
    assert_int_equal(count_files(f->dir, "", ".mf"), 2);
    /* A cap with room for one: the older entry goes with its manifest. */
    char cap[32];
    snprintf(cap, sizeof cap, "%llu", (unsigned long long)(cache_bytes(f->dir) * 3 / 4));
    setenv("ASYNCRT_CACHE_MAX_BYTES", cap, 1);
    struct timespec pause = {0, 20 * 1000000L};
    nanosleep(&pause, NULL);
    assert_int_equal(fresh_compile(f->dir, 3, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(count_files(f->dir, "", ".bin"), 1);
    assert_int_equal(count_files(f->dir, "", ".mf"), 1);
    assert_int_equal(fresh_compile(f->dir, 3, NULL, NULL), ASYNCRT_ORIGIN_DISK_CACHE);
}

static void stale_temporaries_are_removed_on_the_next_store(void **state)
{
    fixture *f = *state;
    assert_int_equal(fresh_compile(f->dir, 1, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    for (char *c = host; *c; c++)
        if (*c == '.' || *c == '/') *c = '_';
    /* A dead writer on this host, an old one elsewhere, a live one here. */
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    char *names[3] = {asyncrt__format("%s/.tmp.%s.%ld.0000beef", f->dir, host, (long)dead),
                      asyncrt__format("%s/.tmp.elsewhere.1.0000cafe", f->dir),
                      asyncrt__format("%s/.tmp.%s.%ld.0000f00d", f->dir, host, (long)getpid())};
    for (int i = 0; i < 3; i++) {
        FILE *t = fopen(names[i], "w");
        fputs("partial", t);
        fclose(t);
    }
    struct timespec old[2] = {{time(NULL) - 2 * 3600, 0}, {time(NULL) - 2 * 3600, 0}};
    assert_int_equal(utimensat(AT_FDCWD, names[1], old, 0), 0);
    assert_int_equal(fresh_compile(f->dir, 2, NULL, NULL), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(access(names[0], F_OK), -1);
    assert_int_equal(access(names[1], F_OK), -1);
    assert_int_equal(access(names[2], F_OK), 0); /* a live writer's */
    for (int i = 0; i < 3; i++) free(names[i]);
}

/* ---- one context, several threads ---------------------------------------- */

typedef struct thread_arg {
    asyncrt_context *ctx;
    int id, bad;
} thread_arg;

static unsigned char *g_reference[4];
static size_t g_reference_size[4];

static void *compile_loop(void *p)
{
    thread_arg *a = p;
    for (int i = 0; i < 24; i++) {
        int value = (a->id + i) % 4;
        char define[32];
        snprintf(define, sizeof define, "VALUE=%d", value);
        const char *defines[] = {define};
        asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_80", .defines = defines, .define_count = 1};
        asyncrt_program *prog = NULL;
        size_t size = 0;
        if (asyncrt_program_compile(a->ctx, "k.cu", k_source, &o, &prog) != ASYNCRT_SUCCESS)
            a->bad++;
        else if (!asyncrt_program_image(prog, &size) || size != g_reference_size[value] ||
                 memcmp(asyncrt_program_image(prog, &size), g_reference[value], size) != 0)
            a->bad++;
        asyncrt_program_destroy(prog);
        if (a->id == 0 && i % 6 == 5) asyncrt__cache_clear(a->ctx->cache);
        asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
        asyncrt_context_cache_stats(a->ctx, &s);
    }
    return NULL;
}

static void one_context_many_threads(void **state)
{
    fixture *f = *state;
    asyncrt_context *ctx = new_context(NULL); /* the references: no cache at all */
    for (int v = 0; v < 4; v++) {
        asyncrt_program *prog = compile_program(ctx, v);
        const void *image = asyncrt_program_image(prog, &g_reference_size[v]);
        g_reference[v] = malloc(g_reference_size[v]);
        memcpy(g_reference[v], image, g_reference_size[v]);
        asyncrt_program_destroy(prog);
    }
    asyncrt_context_destroy(ctx);
    ctx = new_context(f->dir);
    asyncrt_context_set_log_level(ctx, 0);
    enum { THREADS = 4 };
    pthread_t threads[THREADS];
    thread_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) {
        args[t] = (thread_arg){ctx, t, 0};
        assert_int_equal(pthread_create(&threads[t], NULL, compile_loop, &args[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        assert_int_equal(args[t].bad, 0);
    }
    asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
    asyncrt_context_cache_stats(ctx, &s);
    assert_int_equal(s.memory_hits + s.disk_hits + s.misses, THREADS * 24);
    assert_true(s.memory_hits > 0);
    asyncrt_context_destroy(ctx);
    for (int v = 0; v < 4; v++) free(g_reference[v]);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--facts") == 0) return facts_child(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_directory_others_can_write_is_not_used, setup, teardown),
        cmocka_unit_test_setup_teardown(a_directory_of_another_user_is_not_used, setup, teardown),
        cmocka_unit_test_setup_teardown(a_symlinked_directory_is_not_used, setup, teardown),
        cmocka_unit_test_setup_teardown(created_directories_are_private, setup, teardown),
        cmocka_unit_test_setup_teardown(a_folder_that_cannot_be_created_says_permission_denied, setup, teardown),
        cmocka_unit_test_setup_teardown(a_new_directory_s_mode_never_follows_a_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(a_directory_removed_under_a_context_is_made_again, setup, teardown),
        cmocka_unit_test_setup_teardown(a_directory_swapped_between_compiles_is_never_read, setup, teardown),
        cmocka_unit_test_setup_teardown(side_files_follow_the_cache_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(unsealed_or_renamed_side_files_are_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(a_shared_cache_needs_the_opt_in_setgid_and_the_key, setup, teardown),
        cmocka_unit_test_setup_teardown(sealed_bytes_relabelled_for_another_key_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(an_entry_of_an_older_format_is_a_miss, setup, teardown),
        cmocka_unit_test_setup_teardown(odd_files_are_refused_without_hanging, setup, teardown),
        cmocka_unit_test_setup_teardown(damaged_manifest_is_discarded, setup, teardown),
        cmocka_unit_test_setup_teardown(counters_count_what_happened, setup, teardown),
        cmocka_unit_test_setup_teardown(the_cap_evicts_the_least_recently_used, setup, teardown),
        cmocka_unit_test_setup_teardown(a_cap_below_one_entry_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(stale_temporaries_are_removed_on_the_next_store, setup, teardown),
        cmocka_unit_test_setup_teardown(one_context_many_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
