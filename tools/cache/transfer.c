/* asyncrt-cache export / import: one build host warms many machines.
 *
 * export OUT copies every entry (<key2>.bin) and manifest (<key1>.mf) of the
 * cache that passes the library's checks into OUT, re-sealed with a plain
 * SHA-256 (a shared cache's team MAC stays home). import IN takes nothing on
 * trust: each file is read as a cache read would (no symlink, no FIFO, a
 * regular file of plausible size, checked with fstat before any read), must
 * be named by a key and decode under that key, and is then re-sealed for
 * this cache (its team MAC in shared mode) and written by the library's own
 * atomic write; an imported manifest is merged with the one already here.
 * Never a byte copy. A tampered, truncated, foreign or oddly typed file is
 * refused and named. What verification cannot prove is who compiled an
 * entry: importing a directory trusts whoever could write to it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"

/* Seals l for a cache with `mac` (NULL: plain) and writes name in the
 * directory dir_fd atomically. */
static bool save(int dir_fd, const char *name, const cache_loaded *l, const uint8_t *mac, mode_t mode)
{
    size_t size = 0;
    unsigned char *data = l->is_manifest ? asyncrt__manifest_encode(&l->manifest, l->key, mac, &size)
                                         : asyncrt__program_encode_keyed(l->program, mac, &size);
    bool ok = data && asyncrt__file_write(dir_fd, name, data, size, mode);
    free(data);
    return ok;
}

/* An imported manifest joins the dependency sets already recorded here
 * (newest first: ours, then theirs not already present), up to the limit. */
static bool merge_manifest(const cache_tool *tool, const char *name, cache_loaded *theirs)
{
    asyncrt_cache_file here = {.name = (char *)name, .kind = ASYNCRT_CACHE_MANIFEST, .regular = true};
    cache_loaded ours;
    char why[256];
    if (!cache_load(tool->dir_fd, &here, tool->shared ? tool->mac_key : NULL, &ours, why, sizeof why)) return true;
    asyncrt_dep_set *sets = calloc(ASYNCRT_MANIFEST_MAX_SETS, sizeof *sets);
    size_t count = 0;
    bool ok = sets != NULL;
    for (size_t i = 0; ok && i < ours.manifest.count && count < ASYNCRT_MANIFEST_MAX_SETS; i++)
        ok = asyncrt__dep_set_copy(&sets[count++], &ours.manifest.sets[i]);
    for (size_t i = 0; ok && i < theirs->manifest.count && count < ASYNCRT_MANIFEST_MAX_SETS; i++) {
        bool known = false;
        for (size_t j = 0; j < ours.manifest.count && !known; j++)
            known = !memcmp(ours.manifest.sets[j].result_key, theirs->manifest.sets[i].result_key, 32);
        if (!known) ok = asyncrt__dep_set_copy(&sets[count++], &theirs->manifest.sets[i]);
    }
    cache_loaded_free(&ours);
    if (!ok) {
        asyncrt_manifest m = {sets, count};
        asyncrt__manifest_free(&m);
        return false;
    }
    asyncrt__manifest_free(&theirs->manifest);
    theirs->manifest = (asyncrt_manifest){sets, count};
    return true;
}

/* What a transfer did; with --json, `problems` is streamed as they come. */
typedef struct transfer {
    const cache_tool *tool;
    const char *cmd;
    size_t moved, refused, unwritten;
} transfer;

static void transfer_begin(transfer *t)
{
    if (!t->tool->json) return;
    printf("{");
    cache_json_key("problems", true);
    printf("[");
}

/* A file not moved: refused by the checks (6), or not written (7). */
static void problem(transfer *t, bool unwritten, const char *name, const char *why)
{
    size_t before = t->refused + t->unwritten;
    if (unwritten) t->unwritten++;
    else t->refused++;
    const char *verb = !strcmp(t->cmd, "export") ? "skipping" : unwritten ? "not writing" : "refusing";
    fprintf(stderr, "asyncrt-cache %s: %s %s: %s\n", t->cmd, verb, name, why);
    if (!t->tool->json) return;
    printf("%s\n    {\"name\": ", before ? "," : "");
    tool_json_string(stdout, name);
    printf(", \"written\": false, \"checks_passed\": %s, \"why\": ", unwritten ? "true" : "false");
    tool_json_string(stdout, why);
    printf("}");
}

static int transfer_end(transfer *t, const char *from, const char *to)
{
    if (t->tool->json) {
        printf("%s]", t->refused + t->unwritten ? "\n  " : "");
        cache_json_key("from", false);
        tool_json_string(stdout, from);
        cache_json_key("to", false);
        tool_json_string(stdout, to);
        cache_json_key("moved", false);
        printf("%zu", t->moved);
        cache_json_key("refused", false);
        printf("%zu", t->refused);
        cache_json_key("not_written", false);
        printf("%zu\n}\n", t->unwritten);
    } else {
        bool out = !strcmp(t->cmd, "export");
        printf("%s %zu files from %s %s %s%s\n", out ? "exported" : "imported", t->moved, from, out ? "to" : "into", to,
               !(t->refused + t->unwritten) ? "" : out ? " (some skipped: see above)" : " (some refused: see above)");
    }
    return t->unwritten ? TOOL_EXIT_IO : t->refused ? TOOL_EXIT_CHECK : TOOL_EXIT_OK;
}

static int run_export(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_export;
    if (argc != 2 || argv[1][0] == '-') return cache_usage_error(&cmd_export, "one output directory is needed");
    const char *out = argv[1];
    char failed[512];
    int out_fd = tool_open_folder(out, true, failed, sizeof failed);
    if (out_fd < 0) return cache_fail(tool, "export", TOOL_EXIT_IO, "%s", failed);
    asyncrt_cache_listing l;
    if (!asyncrt__cache_scan_at(tool->dir_fd, &l)) {
        close(out_fd);
        return cache_fail(tool, "export", TOOL_EXIT_IO, "cannot read %s", tool->dir);
    }
    transfer t = {tool, "export", 0, 0, 0};
    transfer_begin(&t);
    for (size_t i = 0; i < l.count; i++) {
        const asyncrt_cache_file *f = &l.files[i];
        if (f->kind != ASYNCRT_CACHE_ENTRY && f->kind != ASYNCRT_CACHE_MANIFEST) continue;
        cache_loaded x;
        char why[256];
        if (!cache_load(tool->dir_fd, f, tool->shared ? tool->mac_key : NULL, &x, why, sizeof why))
            problem(&t, false, f->name, why);
        else if (!save(out_fd, f->name, &x, NULL, 0600))
            problem(&t, true, f->name, strerror(errno));
        else
            t.moved++;
        cache_loaded_free(&x);
    }
    asyncrt__cache_listing_free(&l);
    close(out_fd);
    return transfer_end(&t, tool->dir, out);
}

static int run_import(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_import;
    if (argc != 2 || argv[1][0] == '-') return cache_usage_error(&cmd_import, "one input directory is needed");
    const char *in = argv[1];
    char failed[512];
    int in_fd = tool_open_folder(in, false, failed, sizeof failed);
    if (in_fd < 0) return cache_fail(tool, "import", TOOL_EXIT_IO, "%s", failed);
    asyncrt_cache_listing l;
    if (!asyncrt__cache_scan_at(in_fd, &l)) {
        close(in_fd);
        return cache_fail(tool, "import", TOOL_EXIT_IO, "cannot read %s (%s)", in, strerror(errno));
    }
    const uint8_t *mac = tool->shared ? tool->mac_key : NULL;
    mode_t mode = tool->shared ? 0660 : 0600;
    transfer t = {tool, "import", 0, 0, 0};
    transfer_begin(&t);
    for (size_t i = 0; i < l.count; i++) {
        const asyncrt_cache_file *f = &l.files[i];
        if (f->name[0] == '.' && f->kind != ASYNCRT_CACHE_TEMP) continue; /* ".", "..", hidden files */
        cache_loaded x;
        char why[256];
        if (!cache_load(in_fd, f, NULL, &x, why, sizeof why)) problem(&t, false, f->name, why);
        else if (x.is_manifest && !merge_manifest(tool, f->name, &x))
            problem(&t, true, f->name, "out of memory merging manifests");
        else if (!save(tool->dir_fd, f->name, &x, mac, mode))
            problem(&t, true, f->name, strerror(errno));
        else
            t.moved++;
        cache_loaded_free(&x);
    }
    asyncrt__cache_listing_free(&l);
    close(in_fd);
    return transfer_end(&t, in, tool->dir);
}

const cache_command cmd_export = {
    "export", "copy every verified entry and manifest into a directory (for import elsewhere)",
    "usage: asyncrt-cache [--dir DIR] export OUT_DIR\n"
    "\n"
    "Copies every entry and manifest that passes the library's checks into OUT_DIR\n"
    "(created 0700; opened once, never through a symbolic link), sealed with a plain\n"
    "SHA-256 (a shared cache's MAC stays home).\n"
    "Exit codes: 0 all copied, 2 bad usage, 6 some failed the checks (named, not\n"
    "copied), 7 no usable cache directory, or OUT_DIR or a file in it not written.\n",
    true, run_export};

const cache_command cmd_import = {
    "import", "verify the entries and manifests of a directory and store them in the cache",
    "usage: asyncrt-cache [--dir DIR] import IN_DIR\n"
    "\n"
    "Reads each <key>.bin / <key>.mf of IN_DIR (opened once, never through a\n"
    "symbolic link) as a cache read would (no symlinks or FIFOs, regular files of\n"
    "plausible size, decoded and checked under the key the name claims), then writes\n"
    "it into the cache with the library's own atomic write (and this cache's team\n"
    "MAC in shared mode); manifests are merged with ours.\n"
    "A tampered, foreign or oddly typed file is refused and named.\n"
    "Exit codes: 0 all imported, 2 bad usage, 6 some refused (named), 7 IN_DIR\n"
    "unreadable, no usable cache directory, or a file not written.\n",
    true, run_import};
