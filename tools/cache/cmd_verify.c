/* verify: every entry and manifest read and checked as the library would. */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_verify;
    bool delete_bad = false, verbose = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--delete")) delete_bad = true;
        else if (!strcmp(argv[i], "--verbose")) verbose = true;
        else return cache_usage_error(&cmd_verify, "unknown option \"%s\"", argv[i]);
    }
    cache_files cf;
    char why[256] = "";
    if (!cache_list(tool->cache, &cf))
        return cache_fail(tool, "verify", TOOL_EXIT_IO, "cannot read %s", tool->dir);
    size_t checked = 0, bad = 0, stale = 0, undeleted = 0;
    if (tool->json) {
        printf("{");
        cache_json_key("bad", true);
        printf("[");
    }
    for (size_t i = 0; i < cf.count; i++) {
        const asyncrt_cache_dir_file *f = &cf.files[i];
        if (f->kind != ASYNCRT_CACHE_FILE_ENTRY && f->kind != ASYNCRT_CACHE_FILE_MANIFEST) continue;
        asyncrt_cache_dir_item x;
        checked++;
        bool ok = cache_check(tool, tool->cache, f->name, &x, why, sizeof why);
        if (ok && x.kind == ASYNCRT_CACHE_FILE_MANIFEST) stale += x.stale_sets;
        if (ok) {
            if (verbose && !tool->json) printf("ok   %s\n", f->name);
            continue;
        }
        bool gone = false;
        if (delete_bad) {
            gone = asyncrt_cache_dir_remove(tool->cache, f->name) == ASYNCRT_SUCCESS;
            undeleted += !gone;
        }
        if (tool->json) {
            printf("%s\n    {\"name\": ", bad ? "," : "");
            tool_json_string(stdout, f->name);
            printf(", \"why\": ");
            tool_json_string(stdout, why);
            printf(", \"deleted\": %s}", gone ? "true" : "false");
        } else {
            printf("BAD  %s: %s%s\n", f->name, why, !delete_bad ? "" : gone ? " (deleted)" : " (could not delete)");
        }
        bad++;
    }
    cache_files_free(&cf);
    int rc = undeleted ? TOOL_EXIT_IO : bad && !delete_bad ? TOOL_EXIT_CHECK : TOOL_EXIT_OK;
    if (tool->json) {
        printf("%s]", bad ? "\n  " : "");
        cache_json_key("checked", false);
        printf("%zu", checked);
        cache_json_key("stale_dependency_sets", false);
        printf("%zu", stale);
        cache_json_key("exit_code", false);
        printf("%d\n}\n", rc);
    } else {
        printf("%zu files verified: %zu bad%s; %zu dependency sets out of date (their headers changed: a miss, "
               "not damage)\n", checked, bad, delete_bad && bad ? (undeleted ? ", not all deleted" : ", deleted") : "",
               stale);
    }
    return rc;
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
    "Exit codes: 0 all good (or every bad file deleted), 2 bad usage, 6 bad files\n"
    "found, 7 no usable cache directory, or a bad file could not be deleted.\n",
    true, run};
