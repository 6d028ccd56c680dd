/* A shared team cache with real users (issue 33, finding 5): the directory
 * and its KEY must be owned by this user, by root, or by a member of the
 * directory's group. The reviewer's scenario, step by step: a set-gid parent
 * 2777 root:team; an outsider (in no team) creates `cache` in it, which
 * inherits the group team, lets the library make its KEY, compiles, and
 * re-seals its manifest under the victim's key; the victim, a member of
 * team, with ASYNCRT_CACHE_SHARED=1, must compile its own program instead of
 * taking the outsider's.
 *
 * The users are real: each step runs in this program exec'd again, which
 * drops to the step's uid, gid and groups (setgroups, setresgid, setresuid)
 * before anything else. That needs root (CI runs as root); elsewhere the test
 * skips, saying so. The outsider and the victim are uids and a gid no
 * account uses; a member by the user database (the rule's third case) is a
 * system account found at run time (daemon on Debian), or that case is
 * skipped, saying so. */
#define _GNU_SOURCE /* setresuid, getgrent */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_internal.h"
#include "format.h"
#include "safe_io.h"
#include "sha256.h"
#include "test_support.h"

static const char *k_source = "extern \"C\" __global__ void k(int *x) { x[0] = VALUE; }\n";

/* ---- the steps, each in a process of its own user ------------------------ */

/* Compiles VALUE for compute_80 into dir as a shared cache. Prints
 * "origin=N value666=B" (B: the PTX stores 666, the outsider's program). */
static int step_compile(const char *dir, const char *value)
{
    setenv("ASYNCRT_CACHE_SHARED", "1", 1);
    char define[32];
    snprintf(define, sizeof define, "VALUE=%s", value);
    const char *defines[] = {define};
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_80", .defines = defines, .define_count = 1};
    asyncrt_context *ctx = NULL;
    asyncrt_program *p = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt_context_set_log_level(ctx, 1);
    if (asyncrt_context_set_cache_dir(ctx, dir) != ASYNCRT_SUCCESS ||
        asyncrt_program_compile(ctx, "k.cu", k_source, &o, &p) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "compile failed: %s\n", asyncrt_context_last_error(ctx));
        return 1;
    }
    size_t size = 0;
    const char *ptx = asyncrt_program_image(p, &size);
    printf("origin=%d value666=%d\n", (int)asyncrt_program_origin_of(p), strstr(ptx, "666") != NULL);
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    return 0;
}

/* The outsider, holding the KEY of the cache it made: its one manifest
 * re-sealed under the victim's key1 (hex), so that the victim's lookup
 * leads to the outsider's program. */
static int step_reseal(const char *dir, const char *victim_hex)
{
    uint8_t mac[32], theirs[32], victim[32];
    char why[512], name[80];
    int fd = asyncrt__dir_open_trusted(dir, true, mac, why, sizeof why);
    DIR *d = fd >= 0 ? opendir(dir) : NULL;
    name[0] = '\0';
    for (struct dirent *e; d && (e = readdir(d));)
        if (strlen(e->d_name) == 67 && strcmp(e->d_name + 64, ".mf") == 0) memcpy(name, e->d_name, 68);
    if (d) closedir(d);
    for (int i = 0; i < 32; i++) {
        sscanf(name + 2 * i, "%2hhx", &theirs[i]);
        sscanf(victim_hex + 2 * i, "%2hhx", &victim[i]);
    }
    size_t size = 0;
    unsigned char *data = name[0] ? asyncrt__file_read(fd, name, 1 << 26, false, &size, why, sizeof why) : NULL;
    asyncrt_manifest m;
    if (!data || !asyncrt__manifest_decode(data, size, theirs, mac, &m, why, sizeof why)) {
        fprintf(stderr, "reseal: %s\n", why);
        return 1;
    }
    unsigned char *sealed = asyncrt__manifest_encode(&m, victim, mac, &size);
    char *target = asyncrt__format("%s.mf", victim_hex);
    bool ok = sealed && asyncrt__file_write(fd, target, sealed, size, 0660);
    asyncrt__manifest_free(&m);
    free(data), free(sealed), free(target);
    close(fd);
    return ok ? 0 : 1;
}

/* argv: --as UID GID GROUP|- STEP ARGS... */
static int step_main(int argc, char **argv)
{
    uid_t uid = (uid_t)strtoul(argv[2], NULL, 10);
    gid_t gid = (gid_t)strtoul(argv[3], NULL, 10), group = (gid_t)strtoul(argv[4], NULL, 10);
    bool has_group = strcmp(argv[4], "-") != 0;
    if (setgroups(has_group ? 1 : 0, &group) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0) {
        perror("dropping to the step's user");
        return 1;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 7 && !strcmp(argv[5], "mkdir")) return mkdir(argv[6], 0770) == 0 ? 0 : 1;
    if (argc == 8 && !strcmp(argv[5], "compile")) return step_compile(argv[6], argv[7]);
    if (argc == 8 && !strcmp(argv[5], "reseal")) return step_reseal(argv[6], argv[7]);
    fprintf(stderr, "unknown step\n");
    return 2;
}

/* ---- the test's side ---------------------------------------------------- */

typedef struct who {
    uid_t uid;
    gid_t gid;
    long group; /* a supplementary group, or -1 */
} who;

typedef struct outcome {
    int rc;
    int origin;    /* -1: the step printed none */
    int value666;
    char *output;  /* its stdout and stderr (the library's log) */
} outcome;

static char *g_root;

/* Runs one step as `w`; fails the test when it cannot run at all. */
static outcome step_as(who w, const char *step, const char *a, const char *b)
{
    char *out_path = asyncrt__format("%s/step.out", g_root);
    int out = open(out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(out >= 0);
    char uid[16], gid[16], group[16];
    snprintf(uid, sizeof uid, "%u", (unsigned)w.uid);
    snprintf(gid, sizeof gid, "%u", (unsigned)w.gid);
    snprintf(group, sizeof group, w.group < 0 ? "-" : "%ld", w.group);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out, 1), dup2(out, 2);
        execl("/proc/self/exe", "test_cache_shared", "--as", uid, gid, group, step, a, b, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    outcome o = {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), -1, 0, calloc(1, 1 << 16)};
    assert_true(pread(out, o.output, (1 << 16) - 1, 0) >= 0);
    close(out);
    free(out_path);
    const char *line = strstr(o.output, "origin=");
    if (line) sscanf(line, "origin=%d value666=%d", &o.origin, &o.value666);
    if (o.rc != 0) fail_msg("step %s %s as uid %s failed (%d):\n%s", step, a, uid, o.rc, o.output);
    return o;
}

static void expect_logged(const outcome *o, const char *needle)
{
    if (!strstr(o->output, needle)) fail_msg("expected \"%s\" in:\n%s", needle, o->output);
}

/* A uid (or gid) from 40000 up that no account (group) uses. */
static unsigned unused_id(bool group, unsigned after)
{
    for (unsigned id = after + 1; id < 60000; id++)
        if (group ? getgrgid(id) == NULL : getpwuid(id) == NULL) return id;
    fail_msg("no unused id");
    return 0;
}

/* The victim's key1 for VALUE=1 (what its compile will look up): the name of
 * the manifest a private compile of the same program writes. */
static char *victim_key1_hex(void)
{
    char *dir = asyncrt__format("%s/scratch", g_root);
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    const char *defines[] = {"VALUE=1"};
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_80", .defines = defines, .define_count = 1};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "k.cu", k_source, &o, &p));
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    char *hex = NULL;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strlen(e->d_name) == 67 && !strcmp(e->d_name + 64, ".mf")) hex = strndup(e->d_name, 64);
    closedir(d);
    assert_non_null(hex);
    free(dir);
    return hex;
}

static who g_outsider, g_victim;
static gid_t g_team;

static int setup(void **state)
{
    (void)state;
    g_root = test_make_temp_dir("asyncrt-shared");
    assert_int_equal(chmod(g_root, 0755), 0); /* the steps' users pass through it */
    g_team = unused_id(true, 40000);
    gid_t outsiders = unused_id(true, g_team);
    g_outsider = (who){unused_id(false, 40000), outsiders, -1};
    g_victim = (who){unused_id(false, g_outsider.uid), outsiders, (long)g_team}; /* in team by a supplementary group */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    test_remove_tree(g_root);
    free(g_root);
    return 0;
}

/* A set-gid folder 2777 root:group under the root, for the team's caches. */
static char *team_parent(const char *name, gid_t group)
{
    char *parent = asyncrt__format("%s/%s", g_root, name);
    assert_int_equal(mkdir(parent, 0700), 0);
    assert_int_equal(chown(parent, 0, group), 0);
    assert_int_equal(chmod(parent, 02777), 0);
    return parent;
}

static void an_outsiders_cache_in_a_set_gid_parent_is_not_trusted(void **state)
{
    (void)state;
    char *parent = team_parent("team", g_team), *cache = asyncrt__format("%s/cache", parent);
    char *victim_key1 = victim_key1_hex();
    /* The outsider's steps. */
    free(step_as(g_outsider, "mkdir", cache, NULL).output);
    struct stat st;
    assert_int_equal(stat(cache, &st), 0);
    assert_int_equal(st.st_gid, g_team); /* inherited from the set-gid parent */
    assert_true(st.st_mode & S_ISGID);
    outcome o = step_as(g_outsider, "compile", cache, "666");
    assert_int_equal(o.origin, ASYNCRT_ORIGIN_COMPILED);
    free(o.output);
    char *key = asyncrt__format("%s/KEY", cache);
    assert_int_equal(stat(key, &st), 0);
    assert_int_equal(st.st_uid, g_outsider.uid);
    assert_int_equal(st.st_gid, g_team);
    free(step_as(g_outsider, "reseal", cache, victim_key1).output);

    /* The victim, a member of team, compiles its own program, not the outsider's. */
    o = step_as(g_victim, "compile", cache, "1");
    if (o.origin != ASYNCRT_ORIGIN_COMPILED || o.value666)
        fail_msg("the victim was served from the outsider's cache (origin %d, the outsider's image: %d):\n%s",
                 o.origin, o.value666, o.output);
    expect_logged(&o, "no disk cache");
    expect_logged(&o, "nor a member of the directory's group");
    free(o.output);
    free(parent), free(cache), free(key), free(victim_key1);
}

/* The rule's other cases, each on its own: a cache owned by root is used; a
 * KEY someone outside the group owns, or a directory (with a good KEY), is
 * not. */
static void root_may_own_them_an_outsider_may_own_neither(void **state)
{
    (void)state;
    char *parent = team_parent("team", g_team), *cache = asyncrt__format("%s/cache", parent);
    assert_int_equal(mkdir(cache, 0700), 0);
    assert_int_equal(chown(cache, 0, g_team), 0);
    assert_int_equal(chmod(cache, 02770), 0);
    outcome o = step_as(g_victim, "compile", cache, "1"); /* root's directory; the victim makes KEY */
    assert_int_equal(o.origin, ASYNCRT_ORIGIN_COMPILED);
    free(o.output);
    o = step_as(g_victim, "compile", cache, "1");
    assert_int_equal(o.origin, ASYNCRT_ORIGIN_DISK_CACHE);
    free(o.output);
    char *key = asyncrt__format("%s/KEY", cache);
    assert_int_equal(chown(key, g_outsider.uid, g_team), 0);
    o = step_as(g_victim, "compile", cache, "1");
    assert_int_equal(o.origin, ASYNCRT_ORIGIN_COMPILED);
    expect_logged(&o, "KEY is owned by uid");
    free(o.output);
    assert_int_equal(chown(key, 0, g_team), 0);
    assert_int_equal(chown(cache, g_outsider.uid, g_team), 0);
    assert_int_equal(chmod(cache, 02770), 0); /* chown cleared the set-gid bit */
    o = step_as(g_victim, "compile", cache, "1");
    assert_int_equal(o.origin, ASYNCRT_ORIGIN_COMPILED);
    expect_logged(&o, "/cache is owned by uid");
    free(o.output);
    free(parent), free(cache), free(key);
}

/* A member by the user database (a system account whose primary group is
 * the directory's) may own it: the victim, in that group, uses its cache. */
static void a_member_of_the_group_may_own_it(void **state)
{
    (void)state;
    struct passwd *pw = NULL;
    setpwent();
    while ((pw = getpwent()) && (pw->pw_uid == 0 || pw->pw_gid == 0 || pw->pw_uid >= 40000 || !getgrgid(pw->pw_gid)))
        ;
    who member = pw ? (who){pw->pw_uid, pw->pw_gid, -1} : (who){0, 0, -1};
    endpwent();
    if (!pw) {
        printf("SKIP a_member_of_the_group_may_own_it: no account with a primary group of its own\n");
        skip();
    }
    char *parent = team_parent("members", member.gid), *cache = asyncrt__format("%s/cache", parent);
    free(step_as(member, "mkdir", cache, NULL).output);
    outcome o = step_as(member, "compile", cache, "1");
    assert_int_equal(o.origin, ASYNCRT_ORIGIN_COMPILED);
    free(o.output);
    who victim = {g_victim.uid, g_victim.gid, (long)member.gid};
    o = step_as(victim, "compile", cache, "1");
    if (o.origin != ASYNCRT_ORIGIN_DISK_CACHE) fail_msg("a member's cache refused:\n%s", o.output);
    free(o.output);
    free(parent), free(cache);
}

int main(int argc, char **argv)
{
    if (argc >= 6 && !strcmp(argv[1], "--as")) return step_main(argc, argv);
    if (geteuid() != 0) {
        printf("SKIP: the shared-cache users test needs root (to run steps as other users)\n");
        return ASYNCRT_TEST_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(an_outsiders_cache_in_a_set_gid_parent_is_not_trusted, setup, teardown),
        cmocka_unit_test_setup_teardown(root_may_own_them_an_outsider_may_own_neither, setup, teardown),
        cmocka_unit_test_setup_teardown(a_member_of_the_group_may_own_it, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
