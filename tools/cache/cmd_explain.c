/* asyncrt-cache explain: why a compile misses (asyncrt_cache_explain). The
 * compile is described as asyncrt-run and warm describe it (the source name
 * is the path as given, its own directory an include directory, the name
 * expressions asyncrt-run passes), so the key is the one asyncrt-run
 * would use. Two keys compare two entries (asyncrt_cache_explain_keys);
 * asyncrt-run's link options explain its link too (explain_link.c). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/asyncrt.h"
#include "scan.h"
#include "tool.h"
#include "tool_io.h"

#include "explain.h"

static const char k_usage[] =
    "usage: asyncrt-cache [--dir DIR] explain [options] FILE.cu\n"
    "       asyncrt-cache [--dir DIR] explain [options] FILE.cu MORE.cu... [--link FILE] [--lto]\n"
    "       asyncrt-cache [--dir DIR] explain KEY_A KEY_B\n"
    "Computes the key asyncrt-run would use for FILE and says whether the cache holds it;\n"
    "on a miss, what differs from the nearest entry of the same source name: a header\n"
    "(path and digest), an option, the arch, NVRTC's identity, the working folder, the\n"
    "bundle, the source. KEY_A KEY_B (manifest names, .mf allowed) compare two entries.\n"
    "With asyncrt-run's link options (several sources, --link, --lto, -Xnvjitlink), each\n"
    "source's compile for linking is explained, then the link's: nvJitLink's identity\n"
    "(path, size, mtime, version), a link option, an input's content (its digests), the\n"
    "arch. The sources are compiled without the cache to know the link's inputs.\n"
    "  --arch ARCH      the target, as asyncrt-run's --arch (default auto: device 0's)\n"
    "  -I DIR           include directory (repeatable); FILE's own directory is added too\n"
    "  -D NAME[=VALUE]  define (repeatable)\n"
    "  --std STD        C++ dialect (default c++17)\n"
    "  --kernel EXPR    the kernel asyncrt-run is given, e.g. 'scale<float>' (repeatable)\n"
    "  -Xnvrtc OPT      an NVRTC option passed as it is (repeatable)\n"
    "  --bundle FILE    the header bundle the compile uses (asyncrt-run --bundle)\n"
    "  --link FILE      a device library or object asyncrt-run links (repeatable)\n"
    "  --lto            sources as LTO-IR (-dlto), linked with -lto, as asyncrt-run --lto\n"
    "  -Xnvjitlink OPT  an nvJitLink option, as asyncrt-run's (repeatable)\n"
    "  --remote         also ask the remote cache (ASYNCRT_REMOTE_CACHE) for the key, and\n"
    "                   compare with its key records of the source name where one is\n"
    "                   nearer than the local ones (the report says which tier: nearest\n"
    "                   KEY (a remote record), and a records line)\n"
    "  --json           (before or after explain) one JSON object: verdict, key, nearest,\n"
    "                   cause, differences [{input, name, was, now}], remote, nearest_tier,\n"
    "                   remote_records; linking: {\"compiles\": [one per source], \"link\": {...}}\n"
    "Verdicts: hit, miss, no-record (nothing of this source name to compare), uncacheable,\n"
    "no-cache. Exit codes: 0 a verdict was given (hit or not), 2 bad usage, 4 --arch auto\n"
    "and no usable GPU, 7 FILE or --bundle unreadable, or a key with no record here.\n";

/* 64 hex digits, ".mf" allowed: a key, not a source file. */
static bool key_like(const char *s)
{
    size_t n = strspn(s, "0123456789abcdefABCDEF");
    return n == 64 && (!s[n] || !strcmp(s + n, ".mf"));
}

static int parse(const cache_command *cmd, int argc, char **argv, explain_args *a)
{
    memset(a, 0, sizeof *a);
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--")) {
            i++;
            break;
        }
        if (!strcmp(o, "--remote") || !strcmp(o, "--lto")) {
            *(!strcmp(o, "--lto") ? &a->lto : &a->remote) = true;
            continue;
        }
        const char **list = !strcmp(o, "-I") ? a->includes : !strcmp(o, "-D") ? a->defines
                            : !strcmp(o, "--kernel") ? a->names : !strcmp(o, "-Xnvrtc") ? a->nvrtc
                            : !strcmp(o, "--link") ? a->links : !strcmp(o, "-Xnvjitlink") ? a->jitlink : NULL;
        size_t *count = !strcmp(o, "-I") ? &a->include_count : !strcmp(o, "-D") ? &a->define_count
                        : !strcmp(o, "--kernel") ? &a->name_count : !strcmp(o, "--link") ? &a->link_count
                        : !strcmp(o, "-Xnvjitlink") ? &a->jitlink_count : &a->nvrtc_count;
        const char **one = !strcmp(o, "--arch") ? &a->arch : !strcmp(o, "--std") ? &a->std
                           : !strcmp(o, "--bundle") ? &a->bundle : NULL;
        if (!list && !one) return cache_usage_error(cmd, "unknown option '%s'", o);
        if (!v) return cache_usage_error(cmd, "%s needs a value", o);
        if (list && *count == EXPLAIN_MAX) return cache_usage_error(cmd, "more than %d %s", EXPLAIN_MAX, o);
        if (list) list[(*count)++] = v;
        else *one = v;
        i++;
    }
    a->rest = argv + i;
    a->rest_count = (size_t)(argc - i);
    bool links = a->rest_count > 2 || a->link_count || a->lto || a->jitlink_count;
    if (a->rest_count == 2 && !links) /* two keys (one is enough: the other's error is told), or two sources */
        links = !(a->keys = key_like(a->rest[0]) || key_like(a->rest[1]));
    a->link = links;
    if (!a->rest_count || a->rest_count > EXPLAIN_MAX)
        return cache_usage_error(cmd, "give one source file (several to link, at most %d), or two keys", EXPLAIN_MAX);
    return 0;
}

/* The name expressions asyncrt-run passes (warm.c's rule): --kernel's, or the
 * file's one non-template kernel that needs one; never a plain extern "C" name. */
size_t explain_names_for(const explain_args *a, const char *source, const char **out, char **owned)
{
    run_found_kernel *found = calloc(EXPLAIN_MAX, sizeof *found);
    size_t n = found ? run_scan_kernels(source, found, EXPLAIN_MAX) : 0, count = 0;
    n = n < EXPLAIN_MAX ? n : EXPLAIN_MAX;
    *owned = NULL;
    if (!a->name_count && n == 1 && !found[0].is_template && run_scan_needs_name(found, n, found[0].name) &&
        (*owned = strdup(found[0].name)))
        out[count++] = *owned;
    for (size_t i = 0; found && i < a->name_count; i++) {
        bool skip = !run_scan_needs_name(found, n, a->names[i]);
        for (size_t j = 0; j < count; j++) skip |= !strcmp(out[j], a->names[i]);
        if (!skip) out[count++] = a->names[i];
    }
    free(found);
    return count;
}

/* FILE's text, read as the library reads files (tool_io.h). */
char *explain_read_source(const char *path, char *why, size_t size)
{
    size_t n = 0;
    unsigned char *data = tool_file_read(AT_FDCWD, path, TOOL_FILE_MAX, false, &n, why, size);
    char *text = data ? malloc(n + 1) : NULL;
    if (text) memcpy(text, data, n), text[n] = '\0';
    if (data && !text) snprintf(why, size, "out of memory");
    if (!data && !why[0]) snprintf(why, size, "%s", strerror(ENOENT));
    free(data);
    return text;
}

int explain_print(const cache_tool *tool, asyncrt_cache_explanation *e)
{
    if (tool->json) printf("%s\n", e->json);
    else fputs(e->text, stdout);
    asyncrt_cache_explanation_free(e);
    return TOOL_EXIT_OK;
}

static int run(cache_tool *tool, int argc, char **argv);
const cache_command cmd_explain = {
    "explain", "say why a compile or link misses: what differs from the nearest entry (or compare two keys)", k_usage,
    true, run};

static int run(cache_tool *tool, int argc, char **argv)
{
    explain_args a;
    int rc = parse(&cmd_explain, argc, argv, &a);
    if (rc) return rc;
    asyncrt_context *ctx = NULL;
    asyncrt_bundle *bundle = NULL;
    char *source = NULL, *dir = NULL, *picked = NULL, why[256] = "";
    const char *includes[EXPLAIN_MAX + 1], *names[EXPLAIN_MAX];
    asyncrt_cache_explanation e = ASYNCRT_CACHE_EXPLANATION_INIT;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return cache_fail(tool, "explain", TOOL_EXIT_INTERNAL, "out of memory");
    /* The tool's door, not the name: the folder main checked is the one explained. */
    asyncrt_status s = asyncrt_context_use_cache_dir(ctx, tool->cache);
    if (s != ASYNCRT_SUCCESS) {
        rc = cache_fail(tool, "explain", TOOL_EXIT_IO, "%s", asyncrt_context_last_error(ctx));
    } else if (a.link) {
        rc = explain_link(tool, ctx, &a);
    } else if (a.keys) {
        s = asyncrt_cache_explain_keys(ctx, a.rest[0], a.rest[1], &e);
        rc = s == ASYNCRT_SUCCESS ? explain_print(tool, &e)
                                  : cache_fail(tool, "explain", s == ASYNCRT_ERROR_INVALID_ARGUMENT ? TOOL_EXIT_USAGE
                                                                                                    : TOOL_EXIT_IO,
                                               "%s", asyncrt_context_last_error(ctx));
    } else if (!(source = explain_read_source(a.rest[0], why, sizeof why))) {
        rc = cache_fail(tool, "explain", TOOL_EXIT_IO, "cannot read %s: %s", a.rest[0], why);
    } else if (a.bundle && asyncrt_bundle_load_file(ctx, a.bundle, &bundle) != ASYNCRT_SUCCESS) {
        rc = cache_fail(tool, "explain", TOOL_EXIT_IO, "--bundle %s: %s", a.bundle, asyncrt_context_last_error(ctx));
    } else {
        char *copy = strdup(a.rest[0]);
        dir = copy ? strdup(dirname(copy)) : NULL;
        free(copy);
        memcpy(includes, a.includes, a.include_count * sizeof *includes);
        includes[a.include_count] = dir;
        asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
        o.arch = a.arch, o.std = a.std, o.bundle = bundle;
        o.include_dirs = includes, o.include_dir_count = a.include_count + (dir ? 1 : 0);
        o.defines = a.defines, o.define_count = a.define_count;
        o.options = a.nvrtc, o.option_count = a.nvrtc_count;
        o.name_expressions = names, o.name_expression_count = explain_names_for(&a, source, names, &picked);
        s = asyncrt_cache_explain(ctx, a.rest[0], source, &o, a.remote ? ASYNCRT_CACHE_EXPLAIN_REMOTE : 0, &e);
        rc = s == ASYNCRT_SUCCESS ? explain_print(tool, &e)
                                  : cache_fail(tool, "explain", tool_exit_for_status(s), "%s",
                                               asyncrt_context_last_error(ctx));
    }
    free(picked);
    free(dir);
    free(source);
    asyncrt_bundle_destroy(bundle);
    asyncrt_context_destroy(ctx);
    return rc;
}
