/* asyncrt-cache explain with asyncrt-run's link options (explain.h): each
 * source's compile for linking (-rdc=true, or -dlto with --lto) explained as
 * asyncrt-run would compile it, then the link of those programs, the --link
 * files and the options (asyncrt_link_explain). The link's key holds its
 * inputs' bytes, so the sources are compiled, in a context without a cache:
 * explaining stores nothing and refreshes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

/* The explanations so far, text or JSON, printed at the end. */
typedef struct said {
    char *parts[EXPLAIN_MAX + 1];
    size_t count;
} said;

static void keep(said *s, const cache_tool *tool, asyncrt_cache_explanation *e)
{
    s->parts[s->count++] = tool->json ? e->json : e->text;
    if (tool->json) free(e->text);
    else free(e->json);
    e->text = e->json = NULL;
}

/* Source i's compile for linking, explained into s and compiled (cacheless) into *out. */
static int one_source(cache_tool *tool, asyncrt_context *ctx, asyncrt_context *plain, const explain_args *a,
                      const char *path, said *s, asyncrt_program **out)
{
    char why[256] = "", *picked = NULL;
    char *source = explain_read_source(path, why, sizeof why);
    if (!source) return cache_fail(tool, "explain", TOOL_EXIT_IO, "cannot read %s: %s", path, why);
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
    const char *includes[EXPLAIN_MAX + 1], *options[EXPLAIN_MAX + 1], *names[EXPLAIN_MAX];
    memcpy(includes, a->includes, a->include_count * sizeof *includes);
    includes[a->include_count] = dir;
    memcpy(options, a->nvrtc, a->nvrtc_count * sizeof *options);
    options[a->nvrtc_count] = a->lto ? "-dlto" : "-rdc=true"; /* asyncrt-run's compile for linking */
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    o.arch = a->arch, o.std = a->std;
    o.include_dirs = includes, o.include_dir_count = a->include_count + (dir ? 1 : 0);
    o.defines = a->defines, o.define_count = a->define_count;
    o.options = options, o.option_count = a->nvrtc_count + 1;
    o.name_expressions = names, o.name_expression_count = explain_names_for(a, source, names, &picked);
    asyncrt_cache_explanation e = ASYNCRT_CACHE_EXPLANATION_INIT;
    asyncrt_status st = asyncrt_cache_explain(ctx, path, source, &o, a->remote ? ASYNCRT_CACHE_EXPLAIN_REMOTE : 0, &e);
    int rc = st == ASYNCRT_SUCCESS ? TOOL_EXIT_OK
                                   : cache_fail(tool, "explain", tool_exit_for_status(st), "%s",
                                                asyncrt_context_last_error(ctx));
    if (rc == TOOL_EXIT_OK) keep(s, tool, &e);
    if (rc == TOOL_EXIT_OK && (st = asyncrt_program_compile(plain, path, source, &o, out)) != ASYNCRT_SUCCESS)
        rc = cache_fail(tool, "explain", tool_exit_for_status(st), "compiling %s for the link: %s", path,
                        asyncrt_context_last_error(plain));
    free(picked);
    free(dir);
    free(source);
    return rc;
}

/* The link asyncrt-run would make of programs, explained into s. */
static int the_link(cache_tool *tool, asyncrt_context *ctx, const explain_args *a, asyncrt_program **programs,
                    said *s)
{
    asyncrt_link *link = NULL;
    asyncrt_status st = asyncrt_link_create(ctx, a->arch, &link);
    for (size_t i = 0; st == ASYNCRT_SUCCESS && i < a->rest_count; i++) st = asyncrt_link_add_program(link, programs[i]);
    for (size_t i = 0; st == ASYNCRT_SUCCESS && i < a->link_count; i++)
        st = asyncrt_link_add_file(link, a->links[i], ASYNCRT_LINK_ANY);
    if (st == ASYNCRT_SUCCESS && a->lto) st = asyncrt_link_add_option(link, "-lto");
    for (size_t i = 0; st == ASYNCRT_SUCCESS && i < a->jitlink_count; i++) st = asyncrt_link_add_option(link, a->jitlink[i]);
    asyncrt_cache_explanation e = ASYNCRT_CACHE_EXPLANATION_INIT;
    if (st == ASYNCRT_SUCCESS) st = asyncrt_link_explain(link, a->remote ? ASYNCRT_CACHE_EXPLAIN_REMOTE : 0, &e);
    int rc = st == ASYNCRT_SUCCESS ? TOOL_EXIT_OK
                                   : cache_fail(tool, "explain", tool_exit_for_status(st), "the link: %s",
                                                asyncrt_context_last_error(ctx));
    if (rc == TOOL_EXIT_OK) keep(s, tool, &e);
    asyncrt_link_destroy(link);
    return rc;
}

int explain_link(cache_tool *tool, asyncrt_context *ctx, const explain_args *a)
{
    if (a->bundle)
        return cache_fail(tool, "explain", TOOL_EXIT_USAGE,
                          "--bundle with a link: asyncrt-run compiles the sources it links without a bundle");
    asyncrt_context *plain = NULL;
    asyncrt_program *programs[EXPLAIN_MAX] = {0};
    said s = {0};
    int rc = TOOL_EXIT_OK;
    asyncrt_status st = asyncrt_context_create(&plain);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_context_set_cache_dir(plain, NULL);
    if (st == ASYNCRT_SUCCESS && (!a->arch || !strcmp(a->arch, "auto"))) /* the device's arch, as asyncrt-run */
        if ((st = asyncrt_context_open_device(ctx, 0)) == ASYNCRT_SUCCESS) st = asyncrt_context_open_device(plain, 0);
    if (st != ASYNCRT_SUCCESS)
        rc = cache_fail(tool, "explain", tool_exit_for_status(st), "%s",
                        asyncrt_context_last_error(plain ? plain : ctx));
    for (size_t i = 0; rc == TOOL_EXIT_OK && i < a->rest_count; i++)
        rc = one_source(tool, ctx, plain, a, a->rest[i], &s, &programs[i]);
    if (rc == TOOL_EXIT_OK) rc = the_link(tool, ctx, a, programs, &s);
    if (rc == TOOL_EXIT_OK && tool->json) {
        printf("{\"compiles\": [");
        for (size_t i = 0; i + 1 < s.count; i++) printf("%s%s", i ? ", " : "", s.parts[i]);
        printf("], \"link\": %s}\n", s.parts[s.count - 1]);
    }
    for (size_t i = 0; rc == TOOL_EXIT_OK && !tool->json && i < s.count; i++) fputs(s.parts[i], stdout);
    for (size_t i = 0; i < s.count; i++) free(s.parts[i]);
    for (size_t i = 0; i < a->rest_count; i++) asyncrt_program_destroy(programs[i]);
    asyncrt_context_destroy(plain);
    return rc;
}
