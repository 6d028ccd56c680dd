/* stats: what the directory holds against the cap. */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static void write_json(const cache_tool *tool, const asyncrt_cache_dir_totals *l, uint64_t cap, bool cap_ok,
                       const int64_t *oldest, const int64_t *newest, size_t odd)
{
    printf("{");
    cache_json_key("directory", true);
    tool_json_string(stdout, tool->dir);
    cache_json_key("shared", false);
    printf(tool->shared ? "true" : "false");
    cache_json_key("trusted", false);
    printf(tool->trusted ? "true" : "false");
    cache_json_key("entries", false);
    printf("%zu", l->entries);
    cache_json_key("entry_bytes", false);
    printf("%llu", (unsigned long long)l->entry_bytes);
    cache_json_key("manifests", false);
    printf("%zu", l->manifests);
    cache_json_key("manifest_bytes", false);
    printf("%llu", (unsigned long long)l->manifest_bytes);
    cache_json_key("cap_bytes", false);
    printf("%llu", (unsigned long long)cap);
    cache_json_key("cap_env_malformed", false); /* ASYNCRT_CACHE_MAX_BYTES: the default is shown */
    printf(cap_ok ? "false" : "true");
    cache_json_key("newest_used_s", false);
    if (newest) printf("%.0f", tool_age_seconds(*newest));
    else printf("null");
    cache_json_key("oldest_used_s", false);
    if (oldest) printf("%.0f", tool_age_seconds(*oldest));
    else printf("null");
    cache_json_key("temporaries", false);
    printf("%zu", l->temps);
    cache_json_key("odd", false);
    printf("%zu", odd);
    cache_remote_stats(tool);
    printf("\n}\n");
}

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_stats;
    if (argc > 1) return cache_usage_error(&cmd_stats, "unexpected argument \"%s\"", argv[1]);
    cache_files cf;
    if (!cache_list(tool->cache, &cf))
        return cache_fail(tool, "stats", TOOL_EXIT_IO, "cannot read %s", tool->dir);
    uint64_t cap = tool->cap;
    bool cap_ok = !tool->cap_malformed;
    const int64_t *oldest = NULL, *newest = NULL;
    const asyncrt_cache_dir_totals l = cf.totals;
    for (size_t i = 0; i < cf.count; i++) {
        const asyncrt_cache_dir_file *f = &cf.files[i];
        if (f->kind != ASYNCRT_CACHE_FILE_ENTRY || !f->regular) continue;
        if (!oldest || tool_age_seconds(f->used_ns) > tool_age_seconds(*oldest)) oldest = &f->used_ns;
        if (!newest || tool_age_seconds(f->used_ns) < tool_age_seconds(*newest)) newest = &f->used_ns;
    }
    size_t odd = l.odd;
    uint64_t total = l.entry_bytes + l.manifest_bytes;
    if (tool->json) {
        write_json(tool, &l, cap, cap_ok, oldest, newest, odd);
        cache_files_free(&cf);
        return cache_shown_code(tool);
    }
    char a[32], b[32], c[32], d[32];
    tool_format_bytes(l.entry_bytes, a, sizeof a);
    tool_format_bytes(l.manifest_bytes, b, sizeof b);
    tool_format_bytes(total, c, sizeof c);
    tool_format_bytes(cap, d, sizeof d);
    printf("directory  %s (%s, %s)\n", tool->dir, tool->shared ? "shared" : "private",
           tool->trusted ? "trusted" : "NOT used by the library");
    printf("entries    %zu (%s)\n", l.entries, a);
    printf("manifests  %zu (%s)\n", l.manifests, b);
    printf("total      %s of a %s cap (%.1f%%)%s\n", c, d, cap ? 100.0 * (double)total / (double)cap : 0.0,
           cap_ok ? "" : " (ASYNCRT_CACHE_MAX_BYTES is malformed; the default shown)");
    if (oldest) {
        tool_format_age(tool_age_seconds(*newest), a, sizeof a);
        tool_format_age(tool_age_seconds(*oldest), b, sizeof b);
        printf("used       newest %s ago, least recently %s ago\n", a, b);
    }
    if (l.temps) printf("temporary  %zu (writes in flight, or left by a process that died)\n", l.temps);
    if (odd) printf("odd        %zu entry names that are not regular files\n", odd);
    cache_remote_stats(tool);
    cache_files_free(&cf);
    return cache_shown_code(tool);
}

const cache_command cmd_stats = {
    "stats", "entry and manifest counts, bytes against the cap, recency",
    "usage: asyncrt-cache [--dir DIR] stats\n"
    "\n"
    "Counts the entries (compiled programs) and manifests (which files each compile\n"
    "read), their bytes against ASYNCRT_CACHE_MAX_BYTES (default 1 GiB), and how\n"
    "recently entries were used. Exit codes: 0 success, 2 bad usage, 7 no usable\n"
    "cache directory (also one the library would not use: it is shown, and why).\n",
    false, run};
