/* push / pull: copy between this cache directory and the remote cache of
 * ASYNCRT_REMOTE_CACHE (issue 26), and the remote lines of stats. Both go
 * through the library's remote tier: push signs the newest dependency set
 * of each manifest with its entry; pull verifies every value (HMAC, bounds,
 * seals) and installs only those whose headers hold the same content here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

/* The tool's context on the door, with the remote of the environment; false (said) without one. */
static bool remote_context(cache_tool *tool, const char *cmd)
{
    asyncrt_remote_cache_stats st = ASYNCRT_REMOTE_CACHE_STATS_INIT;
    if (!cache_use_door(tool, cmd)) return false;
    if (asyncrt_context_remote_cache_stats(tool->ctx, &st) != ASYNCRT_SUCCESS || !st.enabled) {
        cache_fail(tool, cmd, TOOL_EXIT_IO, "no remote cache: %s", st.state);
        return false;
    }
    return true;
}

/* "what: N name, ..." or its JSON object; returns rc. */
static int finish(cache_tool *tool, const char *what, const size_t *counts, const char *const *names, size_t n,
                  int rc)
{
    if (tool->json) {
        printf("{");
        cache_json_key("command", true);
        tool_json_string(stdout, what);
        for (size_t i = 0; i < n; i++) {
            char key[32];
            snprintf(key, sizeof key, "%s", names[i]);
            for (char *c = key; *c; c++) *c = *c == ' ' ? '_' : *c;
            cache_json_key(key, false);
            printf("%zu", counts[i]);
        }
        printf("\n}\n");
    } else {
        printf("%s:", what);
        for (size_t i = 0; i < n; i++) printf("%s %zu %s", i ? "," : "", counts[i], names[i]);
        printf("\n");
    }
    return rc;
}

static int run_push(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_push;
    if (argc > 1) return cache_usage_error(&cmd_push, "unexpected argument \"%s\"", argv[1]);
    if (!remote_context(tool, "push")) return TOOL_EXIT_IO;
    cache_files cf;
    if (!cache_list(tool->cache, &cf))
        return cache_fail(tool, "push", TOOL_EXIT_IO, "cannot read %s", tool->dir);
    size_t counts[4] = {0}; /* pushed, already there (kept as it is), refused (checks), failed (server) */
    for (size_t i = 0; i < cf.count; i++) {
        const char *name = cf.files[i].name;
        if (cf.files[i].kind != ASYNCRT_CACHE_FILE_MANIFEST) continue;
        bool kept = false;
        asyncrt_status s = asyncrt_cache_dir_push(tool->cache, name, &kept);
        const char *message = asyncrt_context_last_error(tool->ctx);
        if (s == ASYNCRT_ERROR_CORRUPT) { /* the manifest, or its entry ("its entry NAME: ...") */
            fprintf(stderr, "asyncrt-cache push: skipping %s: %s\n", name, message);
            counts[2]++;
        } else if (s != ASYNCRT_SUCCESS) {
            fprintf(stderr, "asyncrt-cache push: %s not pushed: %s\n", name, message);
            counts[3]++;
        } else {
            counts[kept ? 1 : 0]++; /* SET NX found a value there: kept as it is, not ours */
        }
    }
    cache_files_free(&cf);
    static const char *const names[4] = {"pushed", "already there", "refused", "failed"};
    return finish(tool, "push", counts, names, 4,
                  counts[3] ? TOOL_EXIT_IO : counts[2] ? TOOL_EXIT_CHECK : TOOL_EXIT_OK);
}

static int run_pull(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_pull;
    if (argc > 1) return cache_usage_error(&cmd_pull, "unexpected argument \"%s\"", argv[1]);
    if (!remote_context(tool, "pull")) return TOOL_EXIT_IO;
    asyncrt_cache_dir_pull_result r = ASYNCRT_CACHE_DIR_PULL_RESULT_INIT;
    if (asyncrt_cache_dir_pull(tool->cache, &r) != ASYNCRT_SUCCESS)
        return cache_fail(tool, "pull", TOOL_EXIT_IO, "the remote cache failed: %s",
                          asyncrt_context_last_error(tool->ctx));
    /* Newly installed, then what this cache held already (a repeated pull:
     * "0 installed, 5 already here", not "installed 5" again). */
    size_t counts[5] = {r.installed, r.already_here, r.refused, r.not_for_this_machine, r.key_records};
    static const char *const names[5] = {"installed", "already here", "refused", "not for this machine",
                                         "key records"};
    return finish(tool, "pull", counts, names, 5, counts[2] ? TOOL_EXIT_CHECK : TOOL_EXIT_OK);
}

void cache_remote_stats(const cache_tool *tool)
{
    /* The tally is a side file of the door's directory; a directory the
     * library would not use is not read (the tally shows zeros). */
    asyncrt_remote_cache_stats now = ASYNCRT_REMOTE_CACHE_STATS_INIT, tally = ASYNCRT_REMOTE_CACHE_STATS_INIT;
    uint64_t kept = 0;
    asyncrt_context_remote_cache_stats(tool->ctx, &now);
    asyncrt_cache_dir_remote_tally(tool->cache, &tally, &kept);
    const uint64_t v[] = {tally.hits, tally.misses, tally.errors, tally.rejected, tally.stores, kept,
                          tally.lease_waits, tally.bytes_read, tally.bytes_written};
    static const char *names[] = {"hits", "misses", "errors", "rejected", "stores", "kept", "lease_waits",
                                  "bytes_read", "bytes_written"};
    if (tool->json) {
        cache_json_key("remote", false);
        printf("{");
        cache_json_key("state", true);
        tool_json_string(stdout, now.state);
        for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
            cache_json_key(names[i], false);
            printf("%llu", (unsigned long long)v[i]);
        }
        cache_json_key("time_ms", false);
        printf("%.1f}", tally.time_ms);
        return;
    }
    char in[32], out[32];
    tool_format_bytes(tally.bytes_read, in, sizeof in);
    tool_format_bytes(tally.bytes_written, out, sizeof out);
    printf("remote     %s\n", now.state);
    printf("           %llu hits, %llu misses, %llu errors, %llu rejected, %llu stores, %llu kept, %llu lease waits; "
           "%s read, %s written, %.1f ms (all processes that used this directory)\n",
           (unsigned long long)tally.hits, (unsigned long long)tally.misses, (unsigned long long)tally.errors,
           (unsigned long long)tally.rejected, (unsigned long long)tally.stores, (unsigned long long)kept,
           (unsigned long long)tally.lease_waits, in, out, tally.time_ms);
}

const cache_command cmd_push = {
    "push", "copy this cache's entries to the remote cache (ASYNCRT_REMOTE_CACHE)",
    "usage: asyncrt-cache [--dir DIR] push\n"
    "\n"
    "Signs the newest compile of each manifest (its dependency set and entry, both\n"
    "checked first) with ASYNCRT_REMOTE_CACHE_KEY_FILE's key and stores it in the\n"
    "remote cache named by ASYNCRT_REMOTE_CACHE (see docs/cache.md),\n"
    "where its key holds no value yet: one already there is left as it is and\n"
    "counted \"already there\", not pushed.\n"
    "Exit codes: 0 success, 2 bad usage, 6 a local file failed its checks (named,\n"
    "not pushed), 7 no usable cache directory or remote cache, or a value not stored.\n",
    true, run_push};

const cache_command cmd_pull = {
    "pull", "install the remote cache's entries that fit this machine",
    "usage: asyncrt-cache [--dir DIR] pull\n"
    "\n"
    "Reads every value of the remote cache (ASYNCRT_REMOTE_CACHE, all shards),\n"
    "checks its HMAC, bounds and seals, and installs those whose headers hold the\n"
    "same content here (re-hashed) into this cache; those it holds already are\n"
    "counted \"already here\", the others not for this machine. Then the key records\n"
    "(explain's) of the entries this cache holds and has none of, from the remote's,\n"
    "verified as values are (\"key records\": how many written; records refused are\n"
    "warned of and not counted). Exit codes: 0 success, 2 bad usage, 6 a value failed its\n"
    "checks (counted, not installed), 7 no usable cache directory or remote cache,\n"
    "or a server that failed (a SCAN, or a value's GET: named).\n",
    true, run_pull};
