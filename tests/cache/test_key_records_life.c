/* The key records' life (key_record.h), through asyncrt-cache: clear deletes
 * them; a trim that evicts an entry, and verify --delete of a manifest, drop
 * its record; a manifest removed by anyone else is never "the nearest entry";
 * export and import carry the records (an imported entry explains its misses
 * as a local one), and a tampered records file is refused. Entries are
 * compiled on the CPU (explicit targets). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "key_record.h"
#include "sha256.h"
#include "test_support.h"

typedef struct fixture {
    char root[512], cache[600], other[600], out[600];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char *root = test_make_temp_dir("asyncrt-records");
    snprintf(f->root, sizeof f->root, "%s", root);
    free(root);
    snprintf(f->cache, sizeof f->cache, "%s/cache", f->root);
    snprintf(f->other, sizeof f->other, "%s/other", f->root);
    snprintf(f->out, sizeof f->out, "%s/export", f->root);
    mkdir(f->cache, 0700);
    char path[700];
    snprintf(path, sizeof path, "%s/k.cu", f->root);
    test_write_text(path, "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] += 1.0f; }\n");
    snprintf(path, sizeof path, "%s/j.cu", f->root);
    test_write_text(path, "extern \"C\" __global__ void j(float *x) { x[threadIdx.x] *= 2.0f; }\n");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    test_remove_tree(f->root);
    free(f);
    return 0;
}

/* asyncrt-cache --dir DIR ARGS, which must exit with `want`; its output. */
static char *tool(const fixture *f, const char *dir, int want, const char *env, const char *args)
{
    static char out[16384];
    int rc = test_shell_in(f->root, out, sizeof out, "%s '%s' --dir '%s' %s", env, ASYNCRT_CACHE_TOOL, dir, args);
    if (rc != want) fail_msg("asyncrt-cache %s: %d, not %d\n%s", args, rc, want, out);
    return out;
}

static void warm(const fixture *f, const char *env, const char *args)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "warm %s%s", args, strstr(args, ".cu") ? "" : " k.cu");
    tool(f, f->cache, 0, env, cmd);
}

/* The records of dir's side files, dead or alive (as the files hold them):
 * how many, those of `arch` only (NULL: all); the key of the last into key. */
static size_t records(const char *dir, const char *arch, uint8_t key[32])
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    DIR *d = fdopendir(dup(fd));
    assert_non_null(d);
    size_t count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "keys-", 5) != 0) continue;
        char why[256];
        char *text = asyncrt__side_read_at(fd, NULL, e->d_name, why, sizeof why);
        if (!text) fail_msg("%s/%s: %s", dir, e->d_name, why);
        asyncrt_key_record recs[ASYNCRT_KEY_RECORDS_MAX];
        size_t n = asyncrt__key_records_parse(text, recs, ASYNCRT_KEY_RECORDS_MAX);
        for (size_t i = 0; i < n; i++) {
            char *a = asyncrt__key_value(&recs[i].lines, "arch");
            if (!arch || (a && !strcmp(a, arch))) {
                count++;
                if (key) memcpy(key, recs[i].key1, 32);
            }
            free(a);
            asyncrt__key_record_free(&recs[i]);
        }
        free(text);
    }
    closedir(d);
    close(fd);
    return count;
}

static size_t files_named(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) n += !strncmp(e->d_name, prefix, strlen(prefix));
    closedir(d);
    return n;
}

static uint64_t entry_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    uint64_t bytes = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        char path[900];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (n > 4 && (!strcmp(e->d_name + n - 4, ".bin") || !strcmp(e->d_name + n - 3, ".mf")) && !stat(path, &st))
            bytes += (uint64_t)st.st_size;
    }
    closedir(d);
    return bytes;
}

/* A (sm_80 -DX=1) then B (sm_90) stored; A's manifest's path into path. */
static void two_entries(const fixture *f, char *path, size_t size)
{
    uint8_t a[32];
    char hex[65];
    warm(f, "", "--arch sm_80 -D X=1");
    warm(f, "", "--arch sm_90");
    assert_int_equal(records(f->cache, "sm_80", a), 1);
    asyncrt__sha256_hex(a, hex);
    snprintf(path, size, "%s/%s.mf", f->cache, hex);
}

static void must_hold(const char *out, const char *what)
{
    if (!strstr(out, what)) fail_msg("no '%s' in\n%s", what, out);
}

static void clear_deletes_the_records(void **state)
{
    fixture *f = *state;
    warm(f, "", "--arch sm_80");
    assert_int_equal(records(f->cache, NULL, NULL), 1);
    tool(f, f->cache, 0, "", "clear");
    assert_int_equal(files_named(f->cache, "keys-"), 0);
    /* no nearest entry named that clear took */
    char *out = tool(f, f->cache, 0, "", "explain --arch sm_90 k.cu");
    must_hold(out, "no entry of k.cu is recorded");
}

/* A (sm_80 -DX=1), then B (sm_90) stored under a cap that holds one of
 * them: A is evicted. The query sm_80 -DX=1 -DY=1 is nearer A (one option)
 * than B (the arch, two options): it must be compared with B. */
static void eviction_drops_the_evicted_record(void **state)
{
    fixture *f = *state;
    warm(f, "", "--arch sm_80 -D X=1");
    char env[128];
    snprintf(env, sizeof env, "ASYNCRT_CACHE_MAX_BYTES=%llu", (unsigned long long)(entry_bytes(f->cache) * 3 / 2));
    warm(f, env, "--arch sm_90");
    assert_int_equal(files_named(f->cache, "keys-"), 1);
    assert_int_equal(records(f->cache, "sm_80", NULL), 0); /* dropped, not only skipped */
    assert_int_equal(records(f->cache, "sm_90", NULL), 1);
    char *out = tool(f, f->cache, 0, "", "explain --arch sm_80 -D X=1 -D Y=1 k.cu");
    must_hold(out, "the arch: 'sm_90' -> 'sm_80'");
}

/* The same with B of another source name (j.cu): no store rewrites k.cu's
 * records file, the trim's sweep deletes it (its one record is dead). */
static void eviction_sweeps_another_names_records(void **state)
{
    fixture *f = *state;
    warm(f, "", "--arch sm_80");
    char env[128];
    snprintf(env, sizeof env, "ASYNCRT_CACHE_MAX_BYTES=%llu", (unsigned long long)(entry_bytes(f->cache) * 3 / 2));
    warm(f, env, "--arch sm_90 j.cu");
    assert_int_equal(records(f->cache, "sm_80", NULL), 0);
    assert_int_equal(files_named(f->cache, "keys-"), 1); /* j.cu's */
    char *out = tool(f, f->cache, 0, "", "explain --arch sm_90 k.cu");
    must_hold(out, "no entry of k.cu is recorded");
}

/* A's manifest removed by someone else (another process, an older asyncrt,
 * by hand): its record is still in the file, but never the nearest entry. */
static void a_record_whose_manifest_is_gone_is_skipped(void **state)
{
    fixture *f = *state;
    char path[900];
    two_entries(f, path, sizeof path);
    assert_int_equal(unlink(path), 0);
    char *out = tool(f, f->cache, 0, "", "explain --arch sm_80 -D X=1 -D Y=1 k.cu");
    must_hold(out, "the arch: 'sm_90' -> 'sm_80'");
    /* nor is it one of two keys compared */
    uint8_t live[32];
    char gone[65], kept[65], args[200], want[120];
    assert_int_equal(records(f->cache, "sm_90", live), 1);
    asyncrt__sha256_hex(live, kept);
    snprintf(gone, sizeof gone, "%.64s", strrchr(path, '/') + 1);
    snprintf(args, sizeof args, "explain %s %s", gone, kept);
    snprintf(want, sizeof want, "no key record for %s", gone);
    must_hold(tool(f, f->cache, 7, "", args), want);
}

/* verify --delete removes a damaged manifest by name: its record goes too. */
static void a_removed_manifest_takes_its_record(void **state)
{
    fixture *f = *state;
    char path[900];
    two_entries(f, path, sizeof path);
    FILE *m = fopen(path, "r+b");
    assert_non_null(m);
    fseek(m, 40, SEEK_SET);
    int c = fgetc(m);
    fseek(m, 40, SEEK_SET);
    fputc(c ^ 0x55, m);
    fclose(m);
    tool(f, f->cache, 0, "", "verify --delete");
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(records(f->cache, "sm_80", NULL), 0);
    assert_int_equal(records(f->cache, "sm_90", NULL), 1);
}

/* export then import into another cache: the entry explains its misses there
 * as here (the nearest entry named), and the records file came re-sealed. */
static void export_and_import_carry_the_records(void **state)
{
    fixture *f = *state;
    warm(f, "", "--arch sm_80");
    tool(f, f->cache, 0, "", "export export");
    assert_int_equal(records(f->out, "sm_80", NULL), 1);
    mkdir(f->other, 0700);
    tool(f, f->other, 0, "", "import export");
    assert_int_equal(records(f->other, "sm_80", NULL), 1);
    char *out = tool(f, f->other, 0, "", "explain --arch sm_90 k.cu");
    must_hold(out, "the arch: 'sm_80' -> 'sm_90'");
    /* imported again (sm_80 and sm_90 now), merged with one made there (sm_75) */
    warm(f, "", "--arch sm_90");
    tool(f, f->cache, 0, "", "export export");
    tool(f, f->other, 0, "", "warm --arch sm_75 k.cu");
    tool(f, f->other, 0, "", "import export");
    assert_int_equal(records(f->other, NULL, NULL), 3);
}

/* A records file that fails its seal is refused (exit 6) and named; nothing
 * of it lands in the cache. */
static void a_tampered_records_file_is_refused(void **state)
{
    fixture *f = *state;
    warm(f, "", "--arch sm_80");
    tool(f, f->cache, 0, "", "export export");
    DIR *d = opendir(f->out);
    assert_non_null(d);
    char path[900] = "";
    for (struct dirent *e; (e = readdir(d));)
        if (!strncmp(e->d_name, "keys-", 5)) snprintf(path, sizeof path, "%s/%s", f->out, e->d_name);
    closedir(d);
    FILE *m = fopen(path, "r+b");
    assert_non_null(m);
    fseek(m, -3, SEEK_END);
    fputc('Z', m);
    fclose(m);
    mkdir(f->other, 0700);
    char *out = tool(f, f->other, 6, "", "import export");
    must_hold(out, "refusing keys-");
    assert_int_equal(files_named(f->other, "keys-"), 0);
    assert_int_equal(files_named(f->other, "") > 0, 1);
}

/* A shared cache (ASYNCRT_CACHE_SHARED=1) seals its records with the team
 * MAC (not readable as a plain seal), explains with them, exports them
 * plain, and an import into a private cache explains as the team's. */
static void a_shared_caches_records_carry_the_team_mac(void **state)
{
    fixture *f = *state;
    char team[700];
    snprintf(team, sizeof team, "%s/team", f->root);
    const char *shared = "ASYNCRT_CACHE_SHARED=1";
    tool(f, team, 0, shared, "warm --arch sm_80 k.cu");
    must_hold(tool(f, team, 0, shared, "explain --arch sm_90 k.cu"), "the arch: 'sm_80' -> 'sm_90'");
    int fd = open(team, O_RDONLY | O_DIRECTORY);
    DIR *d = opendir(team);
    assert_non_null(d);
    size_t refused = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char why[256];
        if (strncmp(e->d_name, "keys-", 5) != 0) continue;
        char *text = asyncrt__side_read_at(fd, NULL, e->d_name, why, sizeof why);
        refused += !text && why[0];
        free(text);
    }
    closedir(d);
    close(fd);
    assert_int_equal(refused, 1);
    tool(f, team, 0, shared, "export export");
    assert_int_equal(records(f->out, "sm_80", NULL), 1);
    mkdir(f->other, 0700);
    tool(f, f->other, 0, "", "import export");
    must_hold(tool(f, f->other, 0, "", "explain --arch sm_90 k.cu"), "the arch: 'sm_80' -> 'sm_90'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(clear_deletes_the_records, setup, teardown),
        cmocka_unit_test_setup_teardown(eviction_drops_the_evicted_record, setup, teardown),
        cmocka_unit_test_setup_teardown(eviction_sweeps_another_names_records, setup, teardown),
        cmocka_unit_test_setup_teardown(a_record_whose_manifest_is_gone_is_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(a_removed_manifest_takes_its_record, setup, teardown),
        cmocka_unit_test_setup_teardown(export_and_import_carry_the_records, setup, teardown),
        cmocka_unit_test_setup_teardown(a_tampered_records_file_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_shared_caches_records_carry_the_team_mac, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
