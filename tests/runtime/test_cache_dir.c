/* asyncrt/cache.h's folder handles (asyncrt_cache_dir): opening the door and
 * judging it, the listing, each file's checks, remove, prune, clear,
 * transfer, push and pull's refusals, the tally, handing the door to a
 * context; and the bad input of each (NULL, an unset size, malformed names),
 * refused with a message naming the value and the rule. asyncrt-cache's own
 * tests (test_cache_tool*, tests/remote/test_remote_tool) drive the same
 * calls through the tool. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "asyncrt/cache.h"
#include "test_support.h"

static const char *k_source = "extern \"C\" __global__ void k(int *x) { x[0] = 7; }\n";

/* A program compiled into f's cache (compute_80: no device needed). */
static void compile_one(test_cache_fixture *f)
{
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    o.arch = "compute_80";
    asyncrt_program *p = NULL;
    assert_ok(f->ctx, asyncrt_program_compile(f->ctx, "k.cu", k_source, &o, &p));
    asyncrt_program_destroy(p);
}

static asyncrt_cache_dir *open_dir(asyncrt_context *ctx, const char *dir, asyncrt_cache_dir_role role, bool create)
{
    asyncrt_cache_dir_options o = ASYNCRT_CACHE_DIR_OPTIONS_INIT;
    o.dir = dir;
    o.role = role;
    o.create = create;
    asyncrt_cache_dir *d = NULL;
    assert_ok(ctx, asyncrt_cache_dir_open(ctx, &o, &d));
    assert_non_null(d);
    return d;
}

/* The name of the first file of `kind` in d. */
static char *first_of(asyncrt_cache_dir *d, asyncrt_cache_dir_file_kind kind)
{
    asyncrt_cache_dir_listing *l = NULL;
    assert_int_equal(asyncrt_cache_dir_scan(d, &l), ASYNCRT_SUCCESS);
    char *name = NULL;
    for (size_t i = 0; i < asyncrt_cache_dir_listing_count(l) && !name; i++) {
        asyncrt_cache_dir_file f = ASYNCRT_CACHE_DIR_FILE_INIT;
        assert_int_equal(asyncrt_cache_dir_listing_file(l, i, &f), ASYNCRT_SUCCESS);
        if (f.kind == kind && f.regular) name = strdup(f.name);
    }
    asyncrt_cache_dir_listing_free(l);
    assert_non_null(name);
    return name;
}

static asyncrt_cache_dir_totals totals_of(asyncrt_cache_dir *d)
{
    asyncrt_cache_dir_listing *l = NULL;
    asyncrt_cache_dir_totals t = ASYNCRT_CACHE_DIR_TOTALS_INIT;
    assert_int_equal(asyncrt_cache_dir_scan(d, &l), ASYNCRT_SUCCESS);
    assert_int_equal(asyncrt_cache_dir_listing_totals(l, &t), ASYNCRT_SUCCESS);
    asyncrt_cache_dir_listing_free(l);
    return t;
}

static void assert_error_says(asyncrt_context *ctx, const char *what)
{
    const char *e = asyncrt_context_last_error(ctx);
    if (!strstr(e, what)) fail_msg("the message \"%s\" does not say \"%s\"", e, what);
}

/* ---- open --------------------------------------------------------------- */

static void open_refuses_bad_arguments(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_cache_dir *d = (asyncrt_cache_dir *)1;
    asyncrt_cache_dir_options o = ASYNCRT_CACHE_DIR_OPTIONS_INIT;
    assert_int_equal(asyncrt_cache_dir_open(NULL, &o, &d), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(asyncrt_cache_dir_open(f->ctx, &o, NULL), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "out is NULL");
    assert_int_equal(asyncrt_cache_dir_open(f->ctx, NULL, &d), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_null(d);
    assert_error_says(f->ctx, "cache dir options: the struct is NULL");
    asyncrt_cache_dir_options unset = {0};
    assert_int_equal(asyncrt_cache_dir_open(f->ctx, &unset, &d), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "asyncrt_cache_dir_options.size is 0");
    assert_error_says(f->ctx, "ASYNCRT_CACHE_DIR_OPTIONS_INIT");
    o.role = (asyncrt_cache_dir_role)7;
    assert_int_equal(asyncrt_cache_dir_open(f->ctx, &o, &d), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "role 7");
    o.role = ASYNCRT_CACHE_DIR_CACHE;
    o.dir = "";
    assert_int_equal(asyncrt_cache_dir_open(f->ctx, &o, &d), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "dir is \"\"");
    asyncrt_cache_dir_close(NULL); /* fine */
}

static void open_judges_what_it_opened(void **state)
{
    test_cache_fixture *f = *state;
    char path[512];
    asyncrt_cache_dir_options o = ASYNCRT_CACHE_DIR_OPTIONS_INIT;
    asyncrt_cache_dir *d = NULL;
    snprintf(path, sizeof path, "%s/missing", f->dir);
    o.dir = path;
    assert_int_equal(asyncrt_cache_dir_open(f->ctx, &o, &d), ASYNCRT_ERROR_NOT_FOUND);
    assert_error_says(f->ctx, path);
    assert_int_equal(symlink(f->dir, path), 0);
    assert_int_equal(asyncrt_cache_dir_open(f->ctx, &o, &d), ASYNCRT_ERROR_NOT_FOUND);
    assert_error_says(f->ctx, "symbolic link");
    assert_null(d);

    /* NULL dir: the context's; create makes it 0700. */
    snprintf(path, sizeof path, "%s/made", f->dir);
    assert_ok(f->ctx, asyncrt_context_set_cache_dir(f->ctx, path));
    o.dir = NULL;
    o.create = true;
    assert_ok(f->ctx, asyncrt_cache_dir_open(f->ctx, &o, &d));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    asyncrt_cache_info info = ASYNCRT_CACHE_INFO_INIT;
    assert_ok(f->ctx, asyncrt_cache_dir_info(d, &info));
    assert_string_equal(info.dir, path);
    assert_true(info.used);
    assert_string_equal(info.why, "");
    asyncrt_cache_info unset = {0};
    assert_int_equal(asyncrt_cache_dir_info(d, &unset), ASYNCRT_ERROR_INVALID_ARGUMENT);
    asyncrt_cache_dir_close(d);

    /* No directory at all: caching off and none named. */
    assert_ok(f->ctx, asyncrt_context_set_cache_dir(f->ctx, NULL));
    assert_int_equal(asyncrt_cache_dir_open(f->ctx, &o, &d), ASYNCRT_ERROR_IO);
    assert_error_says(f->ctx, "no cache directory");
}

/* A folder the library would not use still opens, for a report of it; what
 * would change or trust it is refused with the reason. */
static void an_untrusted_folder_is_shown_not_used(void **state)
{
    test_cache_fixture *f = *state;
    compile_one(f);
    assert_int_equal(chmod(f->dir, 0777), 0);
    asyncrt_cache_dir *d = open_dir(f->ctx, f->dir, ASYNCRT_CACHE_DIR_CACHE, false);
    asyncrt_cache_info info = ASYNCRT_CACHE_INFO_INIT;
    assert_ok(f->ctx, asyncrt_cache_dir_info(d, &info));
    assert_false(info.used);
    assert_non_null(strstr(info.why, "writable by others"));
    char *entry = first_of(d, ASYNCRT_CACHE_FILE_ENTRY);
    asyncrt_cache_dir_prune_result pr = ASYNCRT_CACHE_DIR_PRUNE_RESULT_INIT;
    assert_int_equal(asyncrt_cache_dir_prune(d, 0, &pr), ASYNCRT_ERROR_IO);
    assert_error_says(f->ctx, "writable by others");
    assert_int_equal(asyncrt_cache_dir_clear(d, NULL), ASYNCRT_ERROR_IO);
    assert_int_equal(asyncrt_cache_dir_remove(d, entry), ASYNCRT_ERROR_IO);
    assert_int_equal(asyncrt_context_use_cache_dir(f->ctx, d), ASYNCRT_ERROR_IO);
    asyncrt_remote_cache_stats tally = ASYNCRT_REMOTE_CACHE_STATS_INIT;
    uint64_t kept = 9;
    assert_ok(f->ctx, asyncrt_cache_dir_remote_tally(d, &tally, &kept));
    assert_int_equal(tally.stores, 0);
    assert_int_equal(kept, 0);
    assert_int_equal(chmod(f->dir, 0700), 0);
    asyncrt_cache_dir_totals t = totals_of(d);
    assert_int_equal(t.entries + t.manifests, 2); /* still there: nothing was removed */
    free(entry);
    asyncrt_cache_dir_close(d);
}

/* The door: after the open, the name may point elsewhere; the handle does not follow it. */
static void the_handle_never_goes_by_the_name_again(void **state)
{
    test_cache_fixture *f = *state;
    compile_one(f);
    asyncrt_cache_dir *d = open_dir(f->ctx, f->dir, ASYNCRT_CACHE_DIR_CACHE, false);
    char moved[512];
    snprintf(moved, sizeof moved, "%s.moved", f->dir);
    assert_int_equal(rename(f->dir, moved), 0);
    assert_int_equal(mkdir(f->dir, 0700), 0); /* an empty folder at the name */
    asyncrt_cache_dir_totals t = totals_of(d);
    assert_int_equal(t.entries, 1);
    assert_int_equal(t.manifests, 1);
    assert_int_equal(asyncrt_cache_dir_clear(d, NULL), ASYNCRT_SUCCESS);
    asyncrt_cache_dir_close(d);
    test_remove_tree(moved);
}

/* ---- listing and checks --------------------------------------------------- */

static void the_listing_counts_and_describes_the_files(void **state)
{
    test_cache_fixture *f = *state;
    compile_one(f);
    char link_path[512];
    snprintf(link_path, sizeof link_path, "%s/%064d.bin", f->dir, 0);
    assert_int_equal(symlink("/etc/passwd", link_path), 0); /* odd: an entry's name, not a regular file */
    asyncrt_cache_dir *d = open_dir(f->ctx, f->dir, ASYNCRT_CACHE_DIR_CACHE, false);
    asyncrt_cache_dir_listing *l = NULL;
    assert_int_equal(asyncrt_cache_dir_scan(d, &l), ASYNCRT_SUCCESS);
    size_t n = asyncrt_cache_dir_listing_count(l);
    assert_true(n >= 3);
    asyncrt_cache_dir_totals t = ASYNCRT_CACHE_DIR_TOTALS_INIT;
    assert_int_equal(asyncrt_cache_dir_listing_totals(l, &t), ASYNCRT_SUCCESS);
    assert_int_equal(t.entries, 1);
    assert_int_equal(t.manifests, 1);
    assert_int_equal(t.odd, 1);
    assert_true(t.entry_bytes > 0 && t.manifest_bytes > 0);
    asyncrt_cache_dir_file file = ASYNCRT_CACHE_DIR_FILE_INIT;
    assert_int_equal(asyncrt_cache_dir_listing_file(l, n, &file), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "is past the listing");
    asyncrt_cache_dir_file unset = {0};
    assert_int_equal(asyncrt_cache_dir_listing_file(l, 0, &unset), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "asyncrt_cache_dir_file.size is 0");
    assert_int_equal(asyncrt_cache_dir_listing_count(NULL), 0);
    asyncrt_cache_dir_listing_free(l);
    asyncrt_cache_dir_listing_free(NULL);

    char *entry = first_of(d, ASYNCRT_CACHE_FILE_ENTRY), *manifest = first_of(d, ASYNCRT_CACHE_FILE_MANIFEST);
    asyncrt_cache_dir_item item = ASYNCRT_CACHE_DIR_ITEM_INIT;
    assert_ok(f->ctx, asyncrt_cache_dir_check(d, entry, &item));
    assert_int_equal(item.kind, ASYNCRT_CACHE_FILE_ENTRY);
    assert_string_equal(item.arch, "compute_80");
    assert_true(item.ptx);
    assert_string_equal(item.source_name, "k.cu");
    assert_ok(f->ctx, asyncrt_cache_dir_check(d, manifest, &item));
    assert_int_equal(item.kind, ASYNCRT_CACHE_FILE_MANIFEST);
    assert_int_equal(item.dependency_sets, 1);
    assert_int_equal(item.stale_sets, 0);
    assert_string_equal(item.newest_entry, entry);
    assert_int_equal(asyncrt_cache_dir_check(d, link_path + strlen(f->dir) + 1, &item), ASYNCRT_ERROR_CORRUPT);
    assert_error_says(f->ctx, "not a regular file");
    free(entry);
    free(manifest);
    asyncrt_cache_dir_close(d);
}

static void check_refuses_bad_names_and_damaged_files(void **state)
{
    test_cache_fixture *f = *state;
    compile_one(f);
    asyncrt_cache_dir *d = open_dir(f->ctx, f->dir, ASYNCRT_CACHE_DIR_CACHE, false);
    asyncrt_cache_dir_item item = ASYNCRT_CACHE_DIR_ITEM_INIT;
    const char *bad[] = {NULL, "", ".", "..", "../x.bin", "sub/a.mf"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(asyncrt_cache_dir_check(d, bad[i], &item), ASYNCRT_ERROR_INVALID_ARGUMENT);
        assert_error_says(f->ctx, "must be a plain file name");
        assert_int_equal(asyncrt_cache_dir_remove(d, bad[i]), ASYNCRT_ERROR_INVALID_ARGUMENT);
    }
    assert_int_equal(asyncrt_cache_dir_check(d, "../x.bin", &item), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "\"../x.bin\"");
    assert_int_equal(asyncrt_cache_dir_check(d, "notes.txt", &item), ASYNCRT_ERROR_CORRUPT);
    assert_error_says(f->ctx, "not named <64 hex digits>.bin or .mf");
    asyncrt_cache_dir_item unset = {0};
    char *entry = first_of(d, ASYNCRT_CACHE_FILE_ENTRY);
    assert_int_equal(asyncrt_cache_dir_check(d, entry, &unset), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "asyncrt_cache_dir_item.size is 0");

    /* One byte flipped in the middle: the seal fails. */
    char path[512];
    snprintf(path, sizeof path, "%s/%s", f->dir, entry);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    off_t size = lseek(fd, 0, SEEK_END);
    unsigned char byte;
    assert_int_equal(pread(fd, &byte, 1, size / 2), 1);
    byte ^= 0x40;
    assert_int_equal(pwrite(fd, &byte, 1, size / 2), 1);
    close(fd);
    assert_int_equal(asyncrt_cache_dir_check(d, entry, &item), ASYNCRT_ERROR_CORRUPT);
    assert_true(asyncrt_context_last_error(f->ctx)[0] != '\0');
    assert_ok(f->ctx, asyncrt_cache_dir_remove(d, entry));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(asyncrt_cache_dir_remove(d, entry), ASYNCRT_ERROR_IO); /* gone already */
    assert_error_says(f->ctx, entry);
    free(entry);
    asyncrt_cache_dir_close(d);
}

/* ---- prune, clear ----------------------------------------------------------- */

static void prune_keeps_the_newest_and_clear_empties(void **state)
{
    test_cache_fixture *f = *state;
    compile_one(f);
    asyncrt_cache_dir *d = open_dir(f->ctx, f->dir, ASYNCRT_CACHE_DIR_CACHE, false);
    asyncrt_cache_dir_prune_result r = ASYNCRT_CACHE_DIR_PRUNE_RESULT_INIT;
    assert_int_equal(asyncrt_cache_dir_prune(d, 1, &r), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_true(r.refused_below > 1);
    assert_int_equal(r.evicted, 0);
    assert_error_says(f->ctx, "max_bytes 1 is smaller than the newest entry");
    assert_ok(f->ctx, asyncrt_cache_dir_prune(d, (uint64_t)1 << 30, &r));
    assert_int_equal(r.evicted, 0);
    asyncrt_cache_dir_prune_result unset = {0};
    assert_int_equal(asyncrt_cache_dir_prune(d, 1, &unset), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "asyncrt_cache_dir_prune_result.size is 0");
    size_t removed = 0;
    assert_ok(f->ctx, asyncrt_cache_dir_clear(d, &removed));
    assert_int_equal(removed, 3); /* the entry, its manifest, its source name's key records */
    asyncrt_cache_dir_close(d);
}

static void parse_size_reads_as_the_cache_does(void **state)
{
    (void)state;
    uint64_t v = 5;
    assert_true(asyncrt_cache_parse_size("512M", &v));
    assert_true(v == (uint64_t)512 << 20);
    assert_true(asyncrt_cache_parse_size("4096", &v));
    assert_true(v == 4096);
    v = 5;
    assert_false(asyncrt_cache_parse_size("lots", &v));
    assert_false(asyncrt_cache_parse_size("-1", &v));
    assert_false(asyncrt_cache_parse_size(NULL, &v));
    assert_false(asyncrt_cache_parse_size("1G", NULL));
    assert_true(v == 5); /* untouched */
}

/* ---- transfer, the context's door, push and pull ------------------------------ */

static void export_then_import_moves_checked_files(void **state)
{
    test_cache_fixture *f = *state;
    compile_one(f);
    char out[512], other[512];
    snprintf(out, sizeof out, "%s/out", f->dir);
    snprintf(other, sizeof other, "%s.other", f->dir);
    asyncrt_cache_dir *cache = open_dir(f->ctx, f->dir, ASYNCRT_CACHE_DIR_CACHE, false);
    asyncrt_cache_dir *export = open_dir(f->ctx, out, ASYNCRT_CACHE_DIR_EXPORT, true);
    char *entry = first_of(cache, ASYNCRT_CACHE_FILE_ENTRY), *manifest = first_of(cache, ASYNCRT_CACHE_FILE_MANIFEST);
    assert_ok(f->ctx, asyncrt_cache_dir_transfer(cache, export, entry));
    assert_ok(f->ctx, asyncrt_cache_dir_transfer(cache, export, manifest));
    assert_int_equal(asyncrt_cache_dir_transfer(cache, export, "notes.txt"), ASYNCRT_ERROR_CORRUPT);
    assert_int_equal(asyncrt_cache_dir_transfer(cache, export, "a/b"), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(asyncrt_cache_dir_transfer(cache, NULL, entry), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "`to` is NULL");
    assert_int_equal(asyncrt_context_use_cache_dir(f->ctx, export), ASYNCRT_ERROR_IO);
    assert_error_says(f->ctx, "export folder");

    /* Into a fresh cache of another context: then that context hits it. */
    asyncrt_context *ctx2 = NULL;
    assert_int_equal(asyncrt_context_create(&ctx2), ASYNCRT_SUCCESS);
    asyncrt_cache_dir *fresh = open_dir(ctx2, other, ASYNCRT_CACHE_DIR_CACHE, true);
    assert_int_equal(asyncrt_cache_dir_transfer(export, fresh, entry), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "different contexts");
    asyncrt_cache_dir *in = open_dir(ctx2, out, ASYNCRT_CACHE_DIR_EXPORT, false);
    assert_ok(ctx2, asyncrt_cache_dir_transfer(in, fresh, entry));
    assert_ok(ctx2, asyncrt_cache_dir_transfer(in, fresh, manifest));
    assert_ok(ctx2, asyncrt_context_use_cache_dir(ctx2, fresh));
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    o.arch = "compute_80";
    asyncrt_program *p = NULL;
    assert_ok(ctx2, asyncrt_program_compile(ctx2, "k.cu", k_source, &o, &p));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_DISK_CACHE);
    asyncrt_program_destroy(p);

    /* push and pull need a remote, and pull the context's door. */
    assert_int_equal(asyncrt_cache_dir_push(fresh, entry, NULL), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(ctx2, "is not a manifest's name");
    assert_int_equal(asyncrt_cache_dir_push(fresh, manifest, NULL), ASYNCRT_ERROR_IO);
    asyncrt_cache_dir_pull_result pulled = ASYNCRT_CACHE_DIR_PULL_RESULT_INIT;
    assert_int_equal(asyncrt_cache_dir_pull(cache, &pulled), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_error_says(f->ctx, "asyncrt_context_use_cache_dir");
    assert_int_equal(asyncrt_cache_dir_pull(fresh, &pulled), ASYNCRT_ERROR_IO);
    assert_error_says(ctx2, "no usable remote cache");
    asyncrt_cache_dir_pull_result unset = {0};
    assert_int_equal(asyncrt_cache_dir_pull(fresh, &unset), ASYNCRT_ERROR_INVALID_ARGUMENT);

    free(entry);
    free(manifest);
    asyncrt_cache_dir_close(in);
    asyncrt_cache_dir_close(fresh);
    asyncrt_cache_dir_close(export);
    asyncrt_cache_dir_close(cache);
    asyncrt_context_destroy(ctx2);
    test_remove_tree(other);
}

int main(void)
{
#define CASE(name) cmocka_unit_test_setup_teardown(name, test_setup_cache_context, test_teardown_cache_context)
    const struct CMUnitTest tests[] = {
        CASE(open_refuses_bad_arguments),
        CASE(open_judges_what_it_opened),
        CASE(an_untrusted_folder_is_shown_not_used),
        CASE(the_handle_never_goes_by_the_name_again),
        CASE(the_listing_counts_and_describes_the_files),
        CASE(check_refuses_bad_names_and_damaged_files),
        CASE(prune_keeps_the_newest_and_clear_empties),
        cmocka_unit_test(parse_size_reads_as_the_cache_does),
        CASE(export_then_import_moves_checked_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
