/* asyncrt-cache export / import: one build host warms many machines.
 *
 * export OUT copies every entry (<key2>.bin) and manifest (<key1>.mf) of the
 * cache that passes the library's checks, and the key records (keys-*), into OUT, re-sealed with a plain
 * SHA-256 (a shared cache's team MAC stays home). import IN takes nothing on
 * trust: each file is read as a cache read would (no symlink, no FIFO, a
 * regular file of plausible size, checked with fstat before any read), must
 * be named by a key and decode under that key, and is then re-sealed for
 * this cache (its team MAC in shared mode) and written by the library's own
 * atomic write; an imported manifest is merged with the one already here.
 * Never a byte copy. A tampered, truncated, foreign or oddly typed file is
 * refused and named. What verification cannot prove is who compiled an
 * entry: importing a directory trusts whoever could write to it. */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

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

/* A key records side file's name: "keys-" and 16 hex digits (the library
 * checks it again, and what it holds). */
static bool key_records(const char *name)
{
    return !strncmp(name, "keys-", 5) && strlen(name) == 21 && strspn(name + 5, "0123456789abcdef") == 16;
}

/* One file moved from `from` to `to` by the library (checked, re-sealed,
 * written atomically), or a problem: refused by the checks, or not written. */
static void move(transfer *t, asyncrt_cache_dir *from, asyncrt_cache_dir *to, const char *name)
{
    asyncrt_status s = asyncrt_cache_dir_transfer(from, to, name);
    if (s == ASYNCRT_SUCCESS) t->moved++;
    else problem(t, s != ASYNCRT_ERROR_CORRUPT, name, asyncrt_context_last_error(t->tool->ctx));
}

/* export (the cache to OUT) or import (IN to the cache): FOLDER opened once,
 * then every file of `from` that may be one moved by the library. */
static int run(cache_tool *tool, const cache_command *cmd, int argc, char **argv)
{
    bool out = cmd->name[0] == 'e';
    if (argc != 2 || argv[1][0] == '-')
        return cache_usage_error(cmd, "one %s directory is needed", out ? "output" : "input");
    char failed[512];
    asyncrt_cache_dir *folder = tool_open_folder(tool, argv[1], out, failed, sizeof failed);
    if (!folder) return cache_fail(tool, cmd->name, TOOL_EXIT_IO, "%s", failed);
    asyncrt_cache_dir *from = out ? tool->cache : folder, *to = out ? folder : tool->cache;
    cache_files cf;
    if (!cache_list(from, &cf)) {
        int rc = out ? cache_fail(tool, cmd->name, TOOL_EXIT_IO, "cannot read %s", tool->dir)
                     : cache_fail(tool, cmd->name, TOOL_EXIT_IO, "%s", asyncrt_context_last_error(tool->ctx));
        asyncrt_cache_dir_close(folder);
        return rc;
    }
    transfer t = {tool, cmd->name, 0, 0, 0};
    transfer_begin(&t);
    /* The key records last: into a cache, a record is kept only where its
     * entry's manifest is (one refused takes its record with it). */
    for (int records = 0; records < 2; records++) {
        for (size_t i = 0; i < cf.count; i++) {
            const asyncrt_cache_dir_file *f = &cf.files[i];
            bool wanted = out ? f->kind == ASYNCRT_CACHE_FILE_ENTRY || f->kind == ASYNCRT_CACHE_FILE_MANIFEST ||
                                    key_records(f->name)
                              : f->name[0] != '.' || f->kind == ASYNCRT_CACHE_FILE_TEMP; /* not ".", "..", hidden */
            if (wanted && key_records(f->name) == (records == 1)) move(&t, from, to, f->name);
        }
    }
    cache_files_free(&cf);
    asyncrt_cache_dir_close(folder);
    return out ? transfer_end(&t, tool->dir, argv[1]) : transfer_end(&t, argv[1], tool->dir);
}

static int run_export(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_export;
    return run(tool, &cmd_export, argc, argv);
}

static int run_import(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_import;
    return run(tool, &cmd_import, argc, argv);
}

const cache_command cmd_export = {
    "export", "copy every verified entry and manifest into a directory (for import elsewhere)",
    "usage: asyncrt-cache [--dir DIR] export OUT_DIR\n"
    "\n"
    "Copies every entry and manifest that passes the library's checks, and the key\n"
    "records explain keeps (keys-*, those of entries still here), into OUT_DIR\n"
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
    "MAC in shared mode); manifests are merged with ours. Key records files\n"
    "(keys-*) come last, checked the same way, and are merged with ours, keeping\n"
    "those whose entry's manifest the cache holds.\n"
    "A tampered, foreign or oddly typed file is refused and named.\n"
    "Exit codes: 0 all imported, 2 bad usage, 6 some refused (named), 7 IN_DIR\n"
    "unreadable, no usable cache directory, or a file not written.\n",
    true, run_import};
