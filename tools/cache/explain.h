/* asyncrt-cache explain's parts: cmd_explain.c (the command, one compile,
 * two keys) and explain_link.c (asyncrt-run's link options: each source's
 * compile for linking, then the link). */
#ifndef ASYNCRT_CACHE_TOOL_EXPLAIN_H
#define ASYNCRT_CACHE_TOOL_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/asyncrt.h"
#include "tool.h"

#define EXPLAIN_MAX 64

typedef struct explain_args {
    const char *includes[EXPLAIN_MAX], *defines[EXPLAIN_MAX], *names[EXPLAIN_MAX], *nvrtc[EXPLAIN_MAX];
    const char *links[EXPLAIN_MAX], *jitlink[EXPLAIN_MAX]; /* --link FILE, -Xnvjitlink OPT */
    size_t include_count, define_count, name_count, nvrtc_count, link_count, jitlink_count;
    const char *arch, *std, *bundle;
    bool remote, lto;
    bool keys, link; /* two keys compared; asyncrt-run's link explained */
    char **rest;
    size_t rest_count;
} explain_args;

/* The name expressions asyncrt-run passes for `source` (*owned: one picked, malloc'd). */
size_t explain_names_for(const explain_args *a, const char *source, const char **out, char **owned);
/* FILE's text, read as the library reads files (tool_io.h); NULL with why. */
char *explain_read_source(const char *path, char *why, size_t size);
/* Prints e (text or --json) and frees its strings; TOOL_EXIT_OK. */
int explain_print(const cache_tool *tool, asyncrt_cache_explanation *e);
/* explain_link.c: the sources' compiles and the link explained; the exit code. */
int explain_link(cache_tool *tool, asyncrt_context *ctx, const explain_args *a);

#endif
