/* asyncrt-bundle: the headers a set of kernels needs, in one file, so that
 * a program compiles them where no CUDA toolkit is installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/asyncrt.h"
#include "emit.h"
#include "tool.h"
#include "tool_progress.h"

#define TOOL "asyncrt-bundle"
#define MAX_ITEMS 256

static void usage(FILE *out)
{
    fprintf(out, "usage: " TOOL " SOURCE... [-I DIR]... [-D NAME[=VALUE]]... [--arch LIST] -o FILE\n"
                 "           [--format bin|c] [--symbol NAME] [--no-check] [--quiet]\n"
                 "\n"
                 "Compiles each SOURCE with NVRTC for each target of LIST, as the library would\n"
                 "with these -I and -D (the toolkit found as usual: CUDA_PATH, CUDA_HOME, the\n"
                 "build's toolkit, /usr/local/cuda), learns from NVRTC's time trace every header\n"
                 "it read (and what those include outside any #if, which the trace can leave\n"
                 "out), and writes them with the names they were included by, and a digest,\n"
                 "to FILE: a header bundle. A program given it (asyncrt_bundle_load_file, or\n"
                 "asyncrt-run --bundle) compiles these sources with no toolkit.\n"
                 "\n"
                 "  -I DIR         an include folder of the sources (as include_dirs)\n"
                 "  -D NAME[=V]    a macro (as defines)\n"
                 "  --arch LIST    targets, comma-separated (sm_90,sm_80, compute_80, auto);\n"
                 "                 default sm_90. What is read seldom differs between targets:\n"
                 "                 list every family the program is deployed to\n"
                 "  -o FILE        where to write the bundle (required): a new file, or a\n"
                 "                 regular file it replaces (never a link, device or FIFO)\n"
                 "  --format bin   the bundle file (default)\n"
                 "  --format c     a C source defining it as data, for embedding:\n"
                 "                   const unsigned char SYMBOL[]; const size_t SYMBOL_size;\n"
                 "                 pass both to asyncrt_bundle_load\n"
                 "  --symbol NAME  the C array's name (default asyncrt_bundle_data)\n"
                 "  --no-check     skip the check: by default every source is compiled again\n"
                 "                 from the bundle alone (no toolkit) and its image must equal\n"
                 "                 the toolkit compile's, byte for byte\n"
                 "  --quiet        no status line: on a terminal, a bundle that takes over\n"
                 "                 0.5 s shows on stderr the compile it waits for, the headers\n"
                 "                 read so far and the time, one line cleared at the end (never\n"
                 "                 when stderr is not a terminal, nor with ASYNCRT_LOG)\n"
                 "  --version      asyncrt-bundle, libasyncrt and NVRTC versions\n"
                 "  -h, --help     this text\n"
                 "\n" TOOL_EXIT_CODES_HELP
                 "  " TOOL ": 2 also covers -o naming something other than a regular file;\n"
                 "  3 = a source did not compile (with the toolkit, or from the bundle\n"
                 "  in the check); 6 = the check found an image that differs from the toolkit's;\n"
                 "  7 = a source or header could not be read, no toolkit to bundle from, or FILE\n"
                 "  could not be written.\n");
}

typedef struct args {
    const char *sources[MAX_ITEMS], *dirs[MAX_ITEMS], *defines[MAX_ITEMS];
    size_t source_count, dir_count, define_count;
    const char *arch, *out, *symbol;
    bool c_format, check, quiet;
} args;

/* 0 to go on, else the exit code (help and version included: -1 is OK). */
static int parse(int argc, char **argv, args *a)
{
    *a = (args){.arch = "sm_90", .symbol = "asyncrt_bundle_data", .check = true};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *value = NULL;
        if (!strcmp(s, "-h") || !strcmp(s, "--help") || !strcmp(s, "--version")) {
            char version[160];
            tool_version_line(TOOL, version, sizeof version);
            printf("%s\n", version);
            if (s[2] != 'v') usage(stdout);
            return -1;
        }
        bool takes = !strcmp(s, "-I") || !strcmp(s, "-D") || !strcmp(s, "--arch") || !strcmp(s, "-o") ||
                     !strcmp(s, "--format") || !strcmp(s, "--symbol");
        if (takes && (i + 1 >= argc || !argv[i + 1][0])) return tool_usage_error(TOOL, "%s needs a value", s);
        if (takes) value = argv[++i];
        else if ((!strncmp(s, "-I", 2) || !strncmp(s, "-D", 2)) && s[2]) value = s + 2;
        const char **list = NULL;
        size_t *count = NULL;
        if (!strncmp(s, "-I", 2)) list = a->dirs, count = &a->dir_count;
        else if (!strncmp(s, "-D", 2)) list = a->defines, count = &a->define_count;
        else if (!strcmp(s, "--arch")) a->arch = value;
        else if (!strcmp(s, "-o")) a->out = value;
        else if (!strcmp(s, "--symbol")) a->symbol = value;
        else if (!strcmp(s, "--no-check")) a->check = false;
        else if (!strcmp(s, "--quiet")) a->quiet = true;
        else if (!strcmp(s, "--format")) {
            if (strcmp(value, "bin") && strcmp(value, "c"))
                return tool_usage_error(TOOL, "--format \"%s\": the formats are bin and c", value);
            a->c_format = !strcmp(value, "c");
        } else if (s[0] == '-' && s[1]) {
            return tool_usage_error(TOOL, "unknown option '%s'", s);
        } else {
            list = a->sources, count = &a->source_count, value = s;
        }
        if (list && *count == MAX_ITEMS) return tool_usage_error(TOOL, "more than %d of '%s'", MAX_ITEMS, s);
        if (list) list[(*count)++] = value;
    }
    if (!a->source_count) return tool_usage_error(TOOL, "no SOURCE given");
    if (!a->out) return tool_usage_error(TOOL, "no -o FILE given");
    int refused = emit_target_check(a->out); /* before any compile */
    if (refused) return refused;
    if (!emit_symbol_ok(a->symbol))
        return tool_usage_error(TOOL, "--symbol \"%s\" is not a C identifier (letters, digits, _; no leading digit)",
                                a->symbol);
    return 0;
}

/* The exit code for the maker's status: a check that found another image is 6. */

static int make(const args *a, int argc, char **argv)
{
    char *arch_list = strdup(a->arch), *note = emit_note(argc, argv);
    const char *arches[32];
    size_t arch_count = 0;
    int code = arch_list && note ? 0 : TOOL_EXIT_INTERNAL;
    for (char *save = NULL, *t = arch_list ? strtok_r(arch_list, ",", &save) : NULL; !code && t;
         t = strtok_r(NULL, ",", &save)) {
        if (arch_count == 32) code = tool_usage_error(TOOL, "--arch lists more than 32 targets");
        else arches[arch_count++] = t;
    }
    if (!code && !arch_count) code = tool_usage_error(TOOL, "--arch \"%s\" names no target", a->arch);
    asyncrt_context *ctx = NULL;
    if (!code && asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) code = TOOL_EXIT_INTERNAL;
    asyncrt_bundle_make_options o = ASYNCRT_BUNDLE_MAKE_OPTIONS_INIT;
    o.sources = a->sources, o.source_count = a->source_count;
    o.include_dirs = a->dirs, o.include_dir_count = a->dir_count;
    o.defines = a->defines, o.define_count = a->define_count;
    o.archs = arches, o.arch_count = arch_count;
    o.no_check = !a->check;
    o.note = note;
    tool_progress *progress = code ? NULL : tool_progress_new(ctx, "bundle: ", a->quiet);
    o.progress = tool_progress_fn(progress), o.progress_user = progress;
    void *bytes = NULL;
    size_t size = 0;
    tool_progress_begin(progress);
    asyncrt_status s = code ? ASYNCRT_SUCCESS : asyncrt_bundle_make(ctx, &o, &bytes, &size);
    tool_progress_free(progress); /* the line cleared before any message */
    if (s != ASYNCRT_SUCCESS) {
        fprintf(stderr, TOOL ": %s\n", asyncrt_context_last_error(ctx));
        code = tool_exit_for_status(s);
    }
    if (!code) code = emit_write(a->out, bytes, size, a->c_format, a->symbol);
    if (!code) {
        asyncrt_bundle *b = NULL;
        asyncrt_bundle_load(ctx, bytes, size, &b);
        printf("%s: %zu headers under %zu names, %zu bytes%s, digest %s%s\n", a->out, asyncrt_bundle_text_count(b),
               asyncrt_bundle_header_count(b), size, a->c_format ? " of data" : "", asyncrt_bundle_digest(b),
               a->check ? "; checked: each source compiles from it alone to the toolkit's image" : "");
        asyncrt_bundle_destroy(b);
    }
    free(bytes);
    free(note);
    free(arch_list);
    asyncrt_context_destroy(ctx);
    return code;
}

int main(int argc, char **argv)
{
    args a;
    int code = parse(argc, argv, &a);
    if (code == 0) code = make(&a, argc, argv);
    return code < 0 ? TOOL_EXIT_OK : code;
}
