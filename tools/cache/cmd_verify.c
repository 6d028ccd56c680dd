/* verify: every entry and manifest read and checked as the library would. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_manifest.h"
#include "cache_store.h"
#include "cache_trust.h"
#include "program.h"
#include "tool.h"

/* Checks one file; returns false (with why) when the library would refuse it. */
static bool check(const cache_tool *tool, const asyncrt_cache_file *f, size_t *stale_sets, char *why, size_t size)
{
    uint8_t key[32];
    if (!f->regular) {
        snprintf(why, size, "not a regular file");
        return false;
    }
    if (!tool_key_from_name(f->name, key)) {
        snprintf(why, size, "malformed name");
        return false;
    }
    char *path = malloc(strlen(tool->dir) + strlen(f->name) + 2);
    if (!path) {
        snprintf(why, size, "out of memory");
        return false;
    }
    sprintf(path, "%s/%s", tool->dir, f->name);
    size_t n = 0;
    unsigned char *data = asyncrt__cache_read_file(AT_FDCWD, path, ASYNCRT_CACHE_FILE_MAX, false, &n, why, size);
    free(path);
    if (!data) {
        if (!why[0]) snprintf(why, size, "vanished while verifying");
        return false;
    }
    const uint8_t *mac = tool->shared ? tool->mac_key : NULL;
    bool ok;
    if (f->kind == ASYNCRT_CACHE_ENTRY) {
        asyncrt_program *p = NULL;
        ok = asyncrt__program_decode_keyed(data, n, key, mac, &p, why, size) == ASYNCRT_SUCCESS;
        asyncrt_program_destroy(p);
    } else {
        asyncrt_manifest m;
        ok = asyncrt__manifest_decode(data, n, key, mac, &m, why, size);
        for (size_t s = 0; ok && s < m.count; s++) *stale_sets += !asyncrt__dep_set_valid(&m.sets[s]);
        if (ok) asyncrt__manifest_free(&m);
    }
    free(data);
    return ok;
}

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_verify;
    bool delete_bad = false, verbose = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--delete")) delete_bad = true;
        else if (!strcmp(argv[i], "--verbose")) verbose = true;
        else return tool_usage_error(&cmd_verify, "unknown option \"%s\"", argv[i]);
    }
    asyncrt_cache_listing l;
    if (!asyncrt__cache_scan(tool->dir, &l)) {
        fprintf(stderr, "asyncrt-cache verify: cannot read %s\n", tool->dir);
        return TOOL_NO_CACHE;
    }
    size_t checked = 0, bad = 0, stale = 0, undeleted = 0;
    for (size_t i = 0; i < l.count; i++) {
        const asyncrt_cache_file *f = &l.files[i];
        if (f->kind != ASYNCRT_CACHE_ENTRY && f->kind != ASYNCRT_CACHE_MANIFEST) continue;
        char why[256] = "";
        checked++;
        if (check(tool, f, &stale, why, sizeof why)) {
            if (verbose) printf("ok   %s\n", f->name);
            continue;
        }
        bad++;
        printf("BAD  %s: %s", f->name, why);
        if (delete_bad) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", tool->dir, f->name);
            bool gone = unlink(path) == 0;
            undeleted += !gone;
            printf(gone ? " (deleted)" : " (could not delete)");
        }
        printf("\n");
    }
    printf("%zu files verified: %zu bad%s; %zu dependency sets out of date (their headers changed: a miss, "
           "not damage)\n", checked, bad, delete_bad && bad ? (undeleted ? ", not all deleted" : ", deleted") : "",
           stale);
    asyncrt__cache_listing_free(&l);
    return bad && (!delete_bad || undeleted) ? TOOL_PROBLEM : TOOL_OK;
}

const cache_command cmd_verify = {
    "verify", "read and check every entry and manifest as the library would",
    "usage: asyncrt-cache [--dir DIR] verify [--delete] [--verbose]\n"
    "\n"
    "Reads every entry and manifest with the library's own checks (regular file,\n"
    "plausible size, header, key matching the name, SHA-256, or the team MAC with\n"
    "ASYNCRT_CACHE_SHARED=1) and names each one that fails. Also counts dependency\n"
    "sets whose headers have changed since (harmless: a lookup misses).\n"
    "\n"
    "  --delete   delete the bad files (the library would, on its next read)\n"
    "  --verbose  also list the good ones\n"
    "\n"
    "Exit codes: 0 all good (or every bad file deleted), 1 bad files found, 2 bad\n"
    "usage, 3 no usable cache directory.\n",
    true, run};
