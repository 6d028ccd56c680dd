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

#include "cache_manifest.h"
#include "cache_store.h"
#include "cache_trust.h"
#include "context.h" /* asyncrt__format */
#include "program.h"
#include "tool.h"

/* A verified file, decoded: exactly one of program / manifest is set. */
typedef struct loaded {
    uint8_t key[32];
    asyncrt_program *program;
    asyncrt_manifest manifest;
    bool is_manifest;
} loaded;

static void loaded_free(loaded *l)
{
    asyncrt_program_destroy(l->program);
    if (l->is_manifest) asyncrt__manifest_free(&l->manifest);
}

/* Reads and verifies dir/name with the library's checks; mac NULL = plain. */
static bool load(const char *dir, const asyncrt_cache_file *f, const uint8_t *mac, loaded *out, char *why,
                 size_t size)
{
    memset(out, 0, sizeof *out);
    if (f->kind != ASYNCRT_CACHE_ENTRY && f->kind != ASYNCRT_CACHE_MANIFEST) {
        snprintf(why, size, "not named <64 hex digits>.bin or .mf");
        return false;
    }
    if (!f->regular || !tool_key_from_name(f->name, out->key)) {
        snprintf(why, size, f->regular ? "malformed name" : "not a regular file");
        return false;
    }
    char *path = asyncrt__format("%s/%s", dir, f->name);
    size_t n = 0;
    why[0] = '\0';
    unsigned char *data = path ? asyncrt__cache_read_file(AT_FDCWD, path, ASYNCRT_CACHE_FILE_MAX, false, &n, why, size) : NULL;
    free(path);
    if (!data) {
        if (!why[0]) snprintf(why, size, "vanished while reading");
        return false;
    }
    bool ok;
    if (f->kind == ASYNCRT_CACHE_ENTRY) {
        ok = asyncrt__program_decode_keyed(data, n, out->key, mac, &out->program, why, size) == ASYNCRT_SUCCESS;
    } else {
        ok = out->is_manifest = asyncrt__manifest_decode(data, n, out->key, mac, &out->manifest, why, size);
    }
    free(data);
    return ok;
}

/* Seals l for a cache with `mac` (NULL: plain) and writes dir/name atomically. */
static bool save(const char *dir, const char *name, const loaded *l, const uint8_t *mac, mode_t mode)
{
    size_t size = 0;
    unsigned char *data = l->is_manifest ? asyncrt__manifest_encode(&l->manifest, l->key, mac, &size)
                                         : asyncrt__program_encode_keyed(l->program, mac, &size);
    char *path = asyncrt__format("%s/%s", dir, name);
    bool ok = data && path && asyncrt__cache_write_file(AT_FDCWD, path, data, size, mode);
    free(data);
    free(path);
    return ok;
}

/* An imported manifest joins the dependency sets already recorded here
 * (newest first: ours, then theirs not already present), up to the limit. */
static bool merge_manifest(const cache_tool *tool, const char *name, loaded *theirs)
{
    asyncrt_cache_file here = {.name = (char *)name, .kind = ASYNCRT_CACHE_MANIFEST, .regular = true};
    loaded ours;
    char why[256];
    if (!load(tool->dir, &here, tool->shared ? tool->mac_key : NULL, &ours, why, sizeof why)) return true;
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
    loaded_free(&ours);
    if (!ok) {
        asyncrt_manifest m = {sets, count};
        asyncrt__manifest_free(&m);
        return false;
    }
    asyncrt__manifest_free(&theirs->manifest);
    theirs->manifest = (asyncrt_manifest){sets, count};
    return true;
}

typedef struct transfer_counts {
    size_t moved, refused;
} transfer_counts;

static void refuse(transfer_counts *c, const char *cmd, const char *verb, const char *name, const char *why)
{
    c->refused++;
    fprintf(stderr, "asyncrt-cache %s: %s %s: %s\n", cmd, verb, name, why);
}

static int run_export(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_export;
    if (argc != 2 || argv[1][0] == '-') return tool_usage_error(&cmd_export, "one output directory is needed");
    const char *out = argv[1];
    if (mkdir(out, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "asyncrt-cache export: cannot create %s (%s)\n", out, strerror(errno));
        return TOOL_PROBLEM;
    }
    asyncrt_cache_listing l;
    if (!asyncrt__cache_scan(tool->dir, &l)) {
        fprintf(stderr, "asyncrt-cache export: cannot read %s\n", tool->dir);
        return TOOL_NO_CACHE;
    }
    transfer_counts c = {0};
    for (size_t i = 0; i < l.count; i++) {
        const asyncrt_cache_file *f = &l.files[i];
        if (f->kind != ASYNCRT_CACHE_ENTRY && f->kind != ASYNCRT_CACHE_MANIFEST) continue;
        loaded x;
        char why[256];
        if (!load(tool->dir, f, tool->shared ? tool->mac_key : NULL, &x, why, sizeof why))
            refuse(&c, "export", "skipping", f->name, why);
        else if (!save(out, f->name, &x, NULL, 0600))
            refuse(&c, "export", "skipping", f->name, strerror(errno));
        else
            c.moved++;
        loaded_free(&x);
    }
    asyncrt__cache_listing_free(&l);
    printf("exported %zu files from %s to %s%s\n", c.moved, tool->dir, out, c.refused ? " (some skipped: see above)" : "");
    return c.refused ? TOOL_PROBLEM : TOOL_OK;
}

static int run_import(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_import;
    if (argc != 2 || argv[1][0] == '-') return tool_usage_error(&cmd_import, "one input directory is needed");
    const char *in = argv[1];
    asyncrt_cache_listing l;
    if (!asyncrt__cache_scan(in, &l)) {
        fprintf(stderr, "asyncrt-cache import: cannot read %s\n", in);
        return TOOL_PROBLEM;
    }
    const uint8_t *mac = tool->shared ? tool->mac_key : NULL;
    mode_t mode = tool->shared ? 0660 : 0600;
    transfer_counts c = {0};
    for (size_t i = 0; i < l.count; i++) {
        const asyncrt_cache_file *f = &l.files[i];
        if (f->name[0] == '.' && f->kind != ASYNCRT_CACHE_TEMP) continue; /* ".", "..", hidden files */
        loaded x;
        char why[256];
        if (!load(in, f, NULL, &x, why, sizeof why)) refuse(&c, "import", "refusing", f->name, why);
        else if (x.is_manifest && !merge_manifest(tool, f->name, &x))
            refuse(&c, "import", "refusing", f->name, "out of memory merging manifests");
        else if (!save(tool->dir, f->name, &x, mac, mode))
            refuse(&c, "import", "not writing", f->name, strerror(errno));
        else
            c.moved++;
        loaded_free(&x);
    }
    asyncrt__cache_listing_free(&l);
    printf("imported %zu files from %s into %s%s\n", c.moved, in, tool->dir, c.refused ? " (some refused: see above)" : "");
    return c.refused ? TOOL_PROBLEM : TOOL_OK;
}

const cache_command cmd_export = {
    "export", "copy every verified entry and manifest into a directory (for import elsewhere)",
    "usage: asyncrt-cache [--dir DIR] export OUT_DIR\n"
    "\n"
    "Copies every entry and manifest that passes the library's checks into OUT_DIR\n"
    "(created 0700), sealed with a plain SHA-256 (a shared cache's MAC stays home).\n"
    "Exit codes: 0 all copied, 1 some skipped (named), 2 bad usage, 3 no usable cache\n"
    "directory.\n",
    true, run_export};

const cache_command cmd_import = {
    "import", "verify the entries and manifests of a directory and store them in the cache",
    "usage: asyncrt-cache [--dir DIR] import IN_DIR\n"
    "\n"
    "Reads each <key>.bin / <key>.mf of IN_DIR as a cache read would (no symlinks or\n"
    "FIFOs, regular files of plausible size, decoded and checked under the key the\n"
    "name claims), then writes it into the cache with the library's own atomic write\n"
    "(and this cache's team MAC in shared mode); manifests are merged with ours.\n"
    "A tampered, foreign or oddly typed file is refused and named.\n"
    "Exit codes: 0 all imported, 1 some refused, 2 bad usage, 3 no usable cache\n"
    "directory.\n",
    true, run_import};
