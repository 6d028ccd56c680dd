/* asyncrt-cache warm: fill the cache before the first user, e.g. at install
 * or image-build time. Every (source, target) pair is one request of one
 * asyncrt_build_batch, so the compiles run on all cores. A warmed entry is
 * found only by a compile with the same key: the same source name (the path
 * as given here), options, name expressions and target, and the source's own
 * directory as an include directory, which is what asyncrt-run does. The
 * name expressions are asyncrt-run's too (tools/run/scan.h): the file's one
 * kernel, or the --name list (as asyncrt-run's --kernel), less any extern "C"
 * kernel named plainly, which neither passes; such a file's entry is then
 * also the library's default compile (no name expressions). */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asyncrt/asyncrt.h"
#include "scan.h"
#include "tool.h"
#include "tool_progress.h"

#define WARM_MAX_ITEMS 64

static const char k_usage[] =
    "usage: asyncrt-cache [--dir DIR] warm [options] FILE.cu...\n"
    "Compiles each FILE for each target into the cache directory, in parallel.\n"
    "  --arch LIST      comma-separated targets: auto (device 0's), all (the auto target of\n"
    "                   every GPU of this machine), or sm_XY / sm_XYa / compute_XY (default auto)\n"
    "  -I DIR           include directory (repeatable); each FILE's own directory is added too\n"
    "  -D NAME[=VALUE]  define (repeatable)\n"
    "  --std STD        C++ dialect (default c++17)\n"
    "  --name EXPR      the kernel asyncrt-run is given with --kernel, e.g. 'scale<float>' (repeatable,\n"
    "                   in the same order); default: the file's one kernel, as asyncrt-run picks it\n"
    "  -Xnvrtc OPT      an NVRTC option passed as it is (repeatable)\n"
    "  --threads N      compile threads (default: the CPU count)\n"
    "  --quiet          print only failures, and no status line (on a terminal, a warm that\n"
    "                   takes over 0.5 s shows the compile it waits for and the time on\n"
    "                   stderr, one line cleared at the end; never on a pipe, nor with ASYNCRT_LOG)\n"
    "  --json           (before or after warm) one JSON document: the programs, the counts\n"
    "Exit codes: 0 all compiled, 2 bad usage (also a malformed target), 3 a source did\n"
    "not compile, 4 auto/all and no usable GPU, 7 a FILE unreadable or no usable\n"
    "cache directory; with several failures, the first's.\n";

typedef struct warm_args {
    const char *includes[WARM_MAX_ITEMS], *defines[WARM_MAX_ITEMS], *names[WARM_MAX_ITEMS],
        *nvrtc[WARM_MAX_ITEMS], *archs[WARM_MAX_ITEMS];
    size_t include_count, define_count, name_count, nvrtc_count, arch_count;
    const char *std, *arch_list;
    char **files;
    size_t file_count;
    unsigned threads;
    bool quiet;
} warm_args;

static bool push(const char **list, size_t *count, const char *value, const char *what)
{
    if (*count == WARM_MAX_ITEMS) {
        fprintf(stderr, "asyncrt-cache warm: more than %d %s\n", WARM_MAX_ITEMS, what);
        return false;
    }
    list[(*count)++] = value;
    return true;
}

static int parse(int argc, char **argv, warm_args *a)
{
    memset(a, 0, sizeof *a);
    a->arch_list = "auto";
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--")) {
            i++;
            break;
        }
        if (!strcmp(o, "--quiet")) {
            a->quiet = true;
            continue;
        }
        if (!v) {
            fprintf(stderr, "asyncrt-cache warm: %s needs a value\n%s", o, k_usage);
            return TOOL_EXIT_USAGE;
        }
        bool ok = true;
        if (!strcmp(o, "--arch")) a->arch_list = v;
        else if (!strcmp(o, "-I")) ok = push(a->includes, &a->include_count, v, "-I");
        else if (!strcmp(o, "-D")) ok = push(a->defines, &a->define_count, v, "-D");
        else if (!strcmp(o, "--name")) ok = push(a->names, &a->name_count, v, "--name");
        else if (!strcmp(o, "-Xnvrtc")) ok = push(a->nvrtc, &a->nvrtc_count, v, "-Xnvrtc");
        else if (!strcmp(o, "--std")) a->std = v;
        else if (!strcmp(o, "--threads")) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 1024) {
                fprintf(stderr, "asyncrt-cache warm: --threads '%s' must be 1..1024\n", v);
                return TOOL_EXIT_USAGE;
            }
            a->threads = (unsigned)n;
        } else {
            fprintf(stderr, "asyncrt-cache warm: unknown option '%s'\n%s", o, k_usage);
            return TOOL_EXIT_USAGE;
        }
        if (!ok) return TOOL_EXIT_USAGE;
        i++;
    }
    a->files = argv + i;
    a->file_count = (size_t)(argc - i);
    if (!a->file_count) {
        fprintf(stderr, "asyncrt-cache warm: no source files given\n%s", k_usage);
        return TOOL_EXIT_USAGE;
    }
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 65536, n = 0;
    char *s = malloc(cap + 1);
    for (size_t got; s && (got = fread(s + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *grown = realloc(s, 2 * cap + 1);
            if (!grown) {
                free(s);
                s = NULL;
                break;
            }
            s = grown;
            cap *= 2;
        }
    }
    bool failed = ferror(f);
    fclose(f);
    if (!s || failed) {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    return s;
}

/* The target of `auto` for device `ordinal`, as the library would choose it. */
static int auto_target(int ordinal, char *out, size_t size)
{
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return TOOL_EXIT_INTERNAL;
    asyncrt_status s = asyncrt_context_open_device(ctx, ordinal);
    asyncrt_program *p = NULL;
    /* The cheapest way to ask the library's own rule: compile nothing for auto. */
    if (s == ASYNCRT_SUCCESS) {
        asyncrt_context_set_cache_dir(ctx, NULL);
        s = asyncrt_program_compile(ctx, "probe.cu", "", NULL, &p);
    }
    if (s == ASYNCRT_SUCCESS) snprintf(out, size, "%s", asyncrt_program_arch(p));
    else fprintf(stderr, "asyncrt-cache warm: device %d: %s\n", ordinal, asyncrt_context_last_error(ctx));
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    return tool_exit_for_status(s);
}

static bool add_target(warm_args *a, char (*names)[32], const char *name)
{
    for (size_t i = 0; i < a->arch_count; i++)
        if (!strcmp(a->archs[i], name)) return true;
    if (a->arch_count == WARM_MAX_ITEMS) {
        fprintf(stderr, "asyncrt-cache warm: more than %d targets\n", WARM_MAX_ITEMS);
        return false;
    }
    snprintf(names[a->arch_count], 32, "%s", name);
    a->archs[a->arch_count] = names[a->arch_count];
    a->arch_count++;
    return true;
}

/* Expands --arch into distinct explicit targets. */
static int resolve_targets(warm_args *a, char (*names)[32])
{
    char *copy = strdup(a->arch_list), *save = NULL;
    int rc = copy ? 0 : TOOL_EXIT_INTERNAL;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && !rc; t = strtok_r(NULL, ",", &save)) {
        char name[32];
        if (!strcmp(t, "auto")) {
            if (!(rc = auto_target(0, name, sizeof name)) && !add_target(a, names, name)) rc = TOOL_EXIT_USAGE;
        } else if (!strcmp(t, "all")) {
            asyncrt_context *ctx = NULL;
            int count = 0;
            if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) rc = TOOL_EXIT_INTERNAL;
            else if (asyncrt_device_count(ctx, &count) != ASYNCRT_SUCCESS || count == 0) {
                fprintf(stderr, "asyncrt-cache warm: --arch all: no GPU: %s\n",
                        count ? asyncrt_context_last_error(ctx) : "the driver reports no device");
                rc = TOOL_EXIT_NO_DEVICE;
            }
            asyncrt_context_destroy(ctx);
            for (int d = 0; !rc && d < count; d++)
                if (!(rc = auto_target(d, name, sizeof name)) && !add_target(a, names, name)) rc = TOOL_EXIT_USAGE;
        } else if (strlen(t) >= sizeof name || !add_target(a, names, t)) {
            fprintf(stderr, "asyncrt-cache warm: bad target '%s'\n", t);
            rc = TOOL_EXIT_USAGE;
        }
    }
    free(copy);
    return rc;
}

/* Each program's fate (text or --json) and the exit code: the first failure's. */
static int report(const cache_tool *tool, const warm_args *a, const asyncrt_build_request *reqs,
                  const asyncrt_compile_options *opts, size_t n, double ms, const char *dir)
{
    size_t failed = 0, compiled = 0;
    int rc = TOOL_EXIT_OK;
    if (tool->json) {
        printf("{");
        cache_json_key("programs", true);
        printf("[");
    }
    for (size_t r = 0; r < n; r++) {
        bool ok = reqs[r].status == ASYNCRT_SUCCESS;
        bool fresh = ok && asyncrt_program_origin_of(reqs[r].program) == ASYNCRT_ORIGIN_COMPILED;
        const char *arch = ok ? asyncrt_program_arch(reqs[r].program) : opts[r].arch;
        const char *message = reqs[r].message ? reqs[r].message : "";
        compiled += fresh;
        if (!ok) {
            failed++;
            if (!rc) rc = tool_exit_for_status(reqs[r].status);
            fprintf(stderr, "asyncrt-cache warm: %s for %s: %s: %s\n", reqs[r].source_name, opts[r].arch,
                    asyncrt_status_string(reqs[r].status), message);
        }
        if (tool->json) {
            printf("%s\n    {\"source\": ", r ? "," : "");
            tool_json_string(stdout, reqs[r].source_name);
            printf(", \"arch\": ");
            tool_json_string(stdout, arch);
            printf(", \"result\": \"%s\"", !ok ? "failed" : fresh ? "compiled" : "cached");
            if (!ok) {
                printf(", \"status\": \"%s\", \"error\": ", asyncrt_status_string(reqs[r].status));
                tool_json_string(stdout, message);
            }
            printf("}");
        } else if (ok && !a->quiet) {
            printf("%-8s %-12s %s\n", fresh ? "compiled" : "cached", arch, reqs[r].source_name);
        }
    }
    if (tool->json) {
        printf("%s]", n ? "\n  " : "");
        cache_json_key("compiled", false);
        printf("%zu", compiled);
        cache_json_key("cached", false);
        printf("%zu", n - compiled - failed);
        cache_json_key("failed", false);
        printf("%zu", failed);
        cache_json_key("ms", false);
        printf("%.0f", ms);
        cache_json_key("directory", false);
        tool_json_string(stdout, dir);
        cache_json_key("exit_code", false);
        printf("%d\n}\n", rc);
    } else if (!a->quiet) {
        printf("%zu program%s (%zu compiled, %zu already cached, %zu failed) in %.0f ms into %s\n", n,
               n == 1 ? "" : "s", compiled, n - compiled - failed, failed, ms, dir);
    }
    return rc;
}

/* The name expressions asyncrt-run passes for `source`, into out (at most
 * name_count or 1): --name's, or the file's one kernel as asyncrt-run picks
 * it without --kernel; never a plain extern "C" name (run_scan_needs_name).
 * *owned: a copy of the picked kernel's name, for the caller to free. */
static size_t file_names(const warm_args *a, const char *source, run_found_kernel *found, const char **out,
                         char **owned)
{
    size_t n = run_scan_kernels(source, found, WARM_MAX_ITEMS), count = 0;
    n = n < WARM_MAX_ITEMS ? n : WARM_MAX_ITEMS;
    *owned = NULL;
    if (!a->name_count) {
        if (n == 1 && !found[0].is_template && run_scan_needs_name(found, n, found[0].name) &&
            (*owned = strdup(found[0].name)))
            out[count++] = *owned;
        return count;
    }
    for (size_t i = 0; i < a->name_count; i++) {
        bool skip = !run_scan_needs_name(found, n, a->names[i]);
        for (size_t j = 0; j < count; j++) skip |= !strcmp(out[j], a->names[i]);
        if (!skip) out[count++] = a->names[i];
    }
    return count;
}

static int run(cache_tool *tool, int argc, char **argv)
{
    warm_args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc;
    char target_names[WARM_MAX_ITEMS][32];
    if ((rc = resolve_targets(&a, target_names))) return rc;

    size_t n = a.file_count * a.arch_count;
    char **sources = calloc(a.file_count, sizeof *sources);
    char **dirs = calloc(a.file_count, sizeof *dirs);
    const char **includes = calloc(a.file_count * (a.include_count + 1), sizeof *includes);
    size_t names_per_file = a.name_count ? a.name_count : 1;
    const char **names = calloc(a.file_count * names_per_file, sizeof *names);
    char **picked = calloc(a.file_count, sizeof *picked);
    run_found_kernel *found = calloc(WARM_MAX_ITEMS, sizeof *found);
    asyncrt_compile_options *opts = calloc(n, sizeof *opts);
    asyncrt_build_request *reqs = calloc(n, sizeof *reqs);
    asyncrt_context *ctx = NULL;
    if (!sources || !dirs || !includes || !names || !picked || !found || !opts || !reqs ||
        asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "asyncrt-cache warm: out of memory\n");
        rc = TOOL_EXIT_INTERNAL;
        goto done;
    }
    /* The tool's door, not the name: the compiles land in the directory main checked. */
    if (asyncrt_context_use_cache_dir(ctx, tool->cache) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "asyncrt-cache warm: %s\n", asyncrt_context_last_error(ctx));
        rc = TOOL_EXIT_INTERNAL;
        goto done;
    }
    for (size_t f = 0; f < a.file_count; f++) {
        if (!(sources[f] = read_text(a.files[f]))) {
            rc = cache_fail(tool, "warm", TOOL_EXIT_IO, "cannot read %s (%s)", a.files[f], strerror(errno));
            goto done;
        }
        char *copy = strdup(a.files[f]);
        dirs[f] = copy ? strdup(dirname(copy)) : NULL;
        free(copy);
        const char **inc = includes + f * (a.include_count + 1);
        memcpy(inc, a.includes, a.include_count * sizeof *inc);
        inc[a.include_count] = dirs[f];
        const char **file_name_list = names + f * names_per_file;
        size_t name_count = file_names(&a, sources[f], found, file_name_list, &picked[f]);
        for (size_t t = 0; t < a.arch_count; t++) {
            size_t r = f * a.arch_count + t;
            opts[r] = (asyncrt_compile_options){
                .size = sizeof(asyncrt_compile_options),
                .arch = a.archs[t], .std = a.std,
                .include_dirs = inc, .include_dir_count = a.include_count + (dirs[f] ? 1 : 0),
                .defines = a.defines, .define_count = a.define_count,
                .options = a.nvrtc, .option_count = a.nvrtc_count,
                .name_expressions = file_name_list, .name_expression_count = name_count};
            reqs[r] = (asyncrt_build_request){.source_name = a.files[f], .source = sources[f], .opts = &opts[r]};
        }
    }
    /* The status line: the batch tells it from its pool threads (tool_progress.h is thread-safe). */
    tool_progress *progress = tool_progress_new(ctx, "warm: ", a.quiet || tool->quiet);
    for (size_t r = 0; r < n; r++) opts[r].progress = tool_progress_fn(progress), opts[r].progress_user = progress;
    double start = now_ms();
    tool_progress_begin(progress);
    asyncrt_build_batch(ctx, reqs, n, a.threads, false);
    tool_progress_free(progress);
    rc = report(tool, &a, reqs, opts, n, now_ms() - start, asyncrt_context_cache_dir(ctx));
done:
    if (reqs) asyncrt_build_batch_release(reqs, n);
    for (size_t f = 0; sources && f < a.file_count; f++) free(sources[f]);
    for (size_t f = 0; dirs && f < a.file_count; f++) free(dirs[f]);
    free(sources);
    free(dirs);
    free(includes);
    for (size_t f = 0; picked && f < a.file_count; f++) free(picked[f]);
    free(picked);
    free(names);
    free(found);
    free(opts);
    free(reqs);
    asyncrt_context_destroy(ctx);
    return rc;
}

const cache_command cmd_warm = {
    "warm", "compile sources for targets into the cache, in parallel (before the first user)",
    k_usage, true, run};
