/* list: every file with its kind, size and age, most recently used first,
 * and what each entry was compiled from (its stored description). */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static int newest_first(const void *a, const void *b)
{
    const asyncrt_cache_dir_file *x = a, *y = b;
    if (x->used_ns != y->used_ns) return x->used_ns > y->used_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

static const char *kind_name(const asyncrt_cache_dir_file *f)
{
    if (!f->regular) return "odd";
    switch (f->kind) {
    case ASYNCRT_CACHE_FILE_ENTRY: return "entry";
    case ASYNCRT_CACHE_FILE_MANIFEST: return "manifest";
    case ASYNCRT_CACHE_FILE_TEMP: return "temp";
    default: return "other";
    }
}

/* The line under an entry or manifest: what it is for, or why it cannot be read. */
static void describe_text(const asyncrt_cache_dir_item *x, bool ok, const char *why)
{
    if (!ok) {
        printf("%34s(cannot be read: %s)\n", "", why);
    } else if (x->kind == ASYNCRT_CACHE_FILE_MANIFEST) {
        printf("%34s%zu dependency set%s, %zu files read", "", x->dependency_sets, x->dependency_sets == 1 ? "" : "s",
               x->files_read);
        if (x->newest_entry) printf("; the newest is entry %.16s...\n", x->newest_entry);
        else printf("\n");
    } else {
        printf("%34s%s for %s (%s)", "", x->source_name ? x->source_name : "(source not recorded)", x->arch,
               x->ptx ? "PTX" : "CUBIN");
        for (size_t i = 0; i < x->name_expression_count; i++)
            printf("%s%s", i ? ", " : "; names ", x->name_expressions[i]);
        if (x->options) printf("; options %s", *x->options ? x->options : "(none)");
        printf("\n");
    }
}

static void describe_json(const asyncrt_cache_dir_item *x, bool ok, const char *why)
{
    if (!ok) {
        printf(", \"error\": ");
        tool_json_string(stdout, why);
    } else if (x->kind == ASYNCRT_CACHE_FILE_MANIFEST) {
        printf(", \"dependency_sets\": %zu, \"files_read\": %zu, \"newest_entry\": ", x->dependency_sets,
               x->files_read);
        if (x->newest_entry) printf("\"%s\"", x->newest_entry);
        else printf("null");
    } else {
        printf(", \"source\": ");
        if (x->source_name) tool_json_string(stdout, x->source_name);
        else printf("null");
        printf(", \"arch\": ");
        tool_json_string(stdout, x->arch);
        printf(", \"ptx\": %s, \"names\": [", x->ptx ? "true" : "false");
        for (size_t i = 0; i < x->name_expression_count; i++) {
            printf("%s", i ? ", " : "");
            tool_json_string(stdout, x->name_expressions[i]);
        }
        printf("], \"options\": ");
        if (x->options) tool_json_string(stdout, x->options);
        else printf("null");
    }
}

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_list;
    if (argc > 1) return cache_usage_error(&cmd_list, "unexpected argument \"%s\"", argv[1]);
    cache_files cf;
    char why[256] = "";
    if (!cache_list(tool->cache, &cf))
        return cache_fail(tool, "list", TOOL_EXIT_IO, "cannot read %s", tool->dir);
    if (cf.count) qsort(cf.files, cf.count, sizeof *cf.files, newest_first);
    if (tool->json) {
        printf("{");
        cache_json_key("directory", true);
        tool_json_string(stdout, tool->dir);
        cache_json_key("files", false);
        printf("[");
    } else {
        printf("%-8s %12s %10s  %s\n", "kind", "size", "used", "name, then what it is for");
    }
    for (size_t i = 0; i < cf.count; i++) {
        const asyncrt_cache_dir_file *f = &cf.files[i];
        bool described =
            f->regular && (f->kind == ASYNCRT_CACHE_FILE_ENTRY || f->kind == ASYNCRT_CACHE_FILE_MANIFEST);
        asyncrt_cache_dir_item x;
        bool ok = described && cache_check(tool, tool->cache, f->name, &x, why, sizeof why);
        double age = tool_age_seconds(f->used_ns);
        if (tool->json) {
            printf("%s\n    {\"kind\": \"%s\", \"name\": ", i ? "," : "", kind_name(f));
            tool_json_string(stdout, f->name);
            printf(", \"size\": %llu, \"used_s_ago\": %.0f", (unsigned long long)f->bytes, age < 0 ? 0 : age);
            if (described) describe_json(&x, ok, why);
            printf("}");
        } else {
            char size[32], ago[32];
            tool_format_bytes(f->bytes, size, sizeof size);
            tool_format_age(age, ago, sizeof ago);
            printf("%-8s %12s %6s ago  %s\n", kind_name(f), size, ago, f->name);
            if (described) describe_text(&x, ok, why);
        }
    }
    if (tool->json) {
        printf("%s]", cf.count ? "\n  " : "");
        cache_json_key("entries", false);
        printf("%zu", cf.totals.entries);
        cache_json_key("manifests", false);
        printf("%zu", cf.totals.manifests);
        cache_json_key("bytes", false);
        printf("%llu\n}\n", (unsigned long long)(cf.totals.entry_bytes + cf.totals.manifest_bytes));
    } else {
        char total[32];
        tool_format_bytes(cf.totals.entry_bytes + cf.totals.manifest_bytes, total, sizeof total);
        printf("%zu entries, %zu manifests, %s\n", cf.totals.entries, cf.totals.manifests, total);
    }
    cache_files_free(&cf);
    return cache_shown_code(tool);
}

const cache_command cmd_list = {
    "list", "every file with its kind, size, last use and what it was compiled from",
    "usage: asyncrt-cache [--dir DIR] list\n"
    "\n"
    "One line per file, most recently used first: kind (entry, manifest, temp,\n"
    "other, odd = not a regular file), size, time since last use (a hit refreshes\n"
    "it; eviction removes the least recently used first), name. Under each entry,\n"
    "what it was compiled from, as stored in it: the source name, target, name\n"
    "expressions and NVRTC options (but -arch and the toolkit's -I); entries\n"
    "written before asyncrt recorded them say \"source not recorded\". Under each\n"
    "manifest, its dependency sets. A file the library would refuse says why.\n"
    "Exit codes: 0 success, 2 bad usage, 7 no usable cache directory (also one\n"
    "the library would not use: it is listed, and why).\n",
    false, run};
