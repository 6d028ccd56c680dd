#include "link_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile_stage.h"
#include "scan.h"

bool run_link_wanted(const run_cli *cli)
{
    return cli->more_source_count || cli->link_file_count || cli->lto || cli->link_option_count;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && !strcmp(s + n - m, suffix);
}

bool run_emit_lib_lto(const char *path)
{
    return ends_with(path, ".ltoir");
}

/* --emit-lib: one source, an explicit sm_XY, a name that says the kind, and nothing of a run. */
static bool emit_lib_check(const run_cli *cli, char *err, size_t err_size)
{
    const char *lib = cli->emit_lib, *why = NULL;
    bool lto = run_emit_lib_lto(lib), launch = cli->launch_count > 1 || cli->launches[0].kernel ||
                                                  cli->launches[0].arg_count;
    if (!lto && !ends_with(lib, ".cubin") && !ends_with(lib, ".o"))
        why = "the name chooses the kind: FILE.ltoir for LTO-IR (-dlto, linked with --lto), FILE.cubin or FILE.o "
              "for a relocatable CUBIN (-rdc=true)";
    else if (strncmp(cli->arch, "sm_", 3))
        why = "needs --arch sm_XY (e.g. sm_90): a library is for the one target every input of a link shares";
    else if (cli->more_source_count || cli->link_file_count || cli->link_option_count)
        why = "builds a library of one source (give the others to the link that uses it)";
    else if (cli->lto && !lto)
        why = "--lto: the name chooses the kind (FILE.ltoir for LTO-IR)";
    else if (cli->emit_ptx || cli->emit_cubin || cli->image || cli->bundle)
        why = "writes the library only: not with --emit-ptx, --emit-cubin, --image or --bundle";
    else if (launch || cli->buffer_count || cli->tmap_count || cli->out_count || cli->expect_count || cli->repeat)
        why = "runs no kernel: --kernel, --then, --buf, --tmap, --arg, --out, --expect and --repeat do not apply";
    if (why) snprintf(err, err_size, "--emit-lib %s: %s", lib, why);
    return !why;
}

bool run_link_check(const run_cli *cli, char *err, size_t err_size)
{
    const char *why = NULL;
    if (cli->emit_lib) return emit_lib_check(cli, err, err_size);
    if (!run_link_wanted(cli)) return true;
    bool stdin_used = cli->source && !strcmp(cli->source, "-");
    for (size_t i = 0; i < cli->more_source_count; i++) stdin_used |= !strcmp(cli->more_sources[i], "-");
    if (stdin_used && cli->more_source_count) why = "'-' (stdin) can only be the one source: name files to link several";
    else if (cli->emit_ptx) why = "--emit-ptx: a linked image is a CUBIN (--emit-cubin writes it)";
    if (why) snprintf(err, err_size, "%s", why);
    return !why;
}

static char *read_text(const char *path, run_result *r)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long n = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1)) && fread(text, 1, (size_t)n, f) == (size_t)n)
        text[n] = '\0';
    else if (text)
        free(text), text = NULL;
    if (!text) run_fail(r, RUN_EXIT_IO, "cannot read %s: %s", path, f ? "read failed" : strerror(errno));
    if (f) fclose(f);
    return text;
}

int run_link_join_sources(const run_cli *cli, const char *first, char **joined, run_result *r)
{
    size_t size = strlen(first) + 2;
    char *all = malloc(size);
    if (!all) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    snprintf(all, size, "%s\n", first);
    for (size_t i = 0; i < cli->more_source_count; i++) {
        char *text = read_text(cli->more_sources[i], r);
        char *grown = text ? realloc(all, (size += strlen(text) + 1)) : NULL;
        if (grown) strcat(strcat(grown, text), "\n"), all = grown;
        free(text);
        if (!grown) {
            free(all);
            return r->exit_code ? r->exit_code : run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
        }
    }
    *joined = all;
    return RUN_EXIT_OK;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Warnings and notes as run_compile shows NVRTC's (its lines name the file); -v shows any log. */
static void show_log(const char *prefix, const char *log, int verbose)
{
    if (log && (strstr(log, "warning") || strstr(log, "note:") || (verbose && strspn(log, " \t\r\n") < strlen(log))))
        fprintf(stderr, "%s%s%s", prefix, log, log[strlen(log) - 1] == '\n' ? "" : "\n");
}

/* -v: why p (NULL: nothing to say) missed the cache, asked before it was made; frees why's strings. */
static void missed_because(const asyncrt_program *p, const char *what, asyncrt_cache_explanation *why)
{
    if (p && asyncrt_program_origin_of(p) == ASYNCRT_ORIGIN_COMPILED && why->verdict != ASYNCRT_CACHE_VERDICT_HIT)
        fprintf(stderr, "asyncrt-run: %s: why the cache missed: %s\n", what, why->cause);
    asyncrt_cache_explanation_free(why);
}

/* One source for the link (mode "-rdc=true" or "-dlto"; NULL: as a single
 * source): with `with_names`, the launches' kernels it declares are its name
 * expressions. -v describes it where it is for linking. */
static int compile_one(asyncrt_context *ctx, const run_cli *cli, const char *path, const char *text, const char *mode,
                       bool with_names, asyncrt_program **out, run_result *r)
{
    run_found_kernel *found = calloc(64, sizeof *found);
    char *dir = NULL;
    const char *slash = strrchr(path, '/');
    dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
    if (!found || !dir) {
        free(found), free(dir);
        return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    }
    size_t n = run_scan_kernels(text, found, 64);
    n = n < 64 ? n : 64;
    const char *names[RUN_MAX_LAUNCHES];
    size_t name_count = 0;
    for (size_t i = 0; with_names && i < r->launch_count; i++) {
        const char *k = r->launches[i].kernel;
        bool seen = !run_scan_find(found, n, k) || !run_scan_needs_name(found, n, k);
        for (size_t j = 0; j < name_count; j++) seen |= !strcmp(names[j], k);
        if (!seen) names[name_count++] = k;
    }
    const char *includes[RUN_MAX_ITEMS + 1], *options[RUN_MAX_ITEMS + 1];
    size_t include_count = 0, option_count = 0;
    for (size_t i = 0; i < cli->include_count; i++) includes[include_count++] = cli->includes[i];
    includes[include_count++] = dir;
    for (size_t i = 0; i < cli->nvrtc_option_count; i++) options[option_count++] = cli->nvrtc_options[i];
    if (mode) options[option_count++] = mode;
    asyncrt_compile_options opts = {
        .size = sizeof opts,
        .arch = cli->arch, .std = cli->std,
        .include_dirs = includes, .include_dir_count = include_count,
        .defines = cli->defines, .define_count = cli->define_count,
        .options = options, .option_count = option_count,
        .name_expressions = names, .name_expression_count = name_count,
    };
    opts.progress = tool_progress_fn(r->progress), opts.progress_user = r->progress;
    double start = now_ms();
    asyncrt_cache_explanation why = ASYNCRT_CACHE_EXPLANATION_INIT; /* -v: asked before the compile stores it */
    bool explained = cli->verbose && mode && asyncrt_cache_explain(ctx, path, text, &opts, 0, &why) == ASYNCRT_SUCCESS;
    tool_progress_begin(r->progress);
    asyncrt_status s = asyncrt_program_compile(ctx, path, text, &opts, out);
    tool_progress_end(r->progress);
    missed_because(explained && s == ASYNCRT_SUCCESS ? *out : NULL, path, &why);
    if (s == ASYNCRT_SUCCESS && cli->verbose && mode)
        fprintf(stderr, "asyncrt-run: %s: %s in %.1f ms (%s for linking, %s)\n", path,
                asyncrt_program_origin_string(asyncrt_program_origin_of(*out)), now_ms() - start,
                asyncrt_program_arch(*out), strcmp(mode, "-dlto") ? "relocatable" : "LTO-IR");
    if (s == ASYNCRT_SUCCESS) show_log("", asyncrt_program_log(*out), cli->verbose);
    free(found);
    free(dir);
    return s == ASYNCRT_SUCCESS ? RUN_EXIT_OK : run_fail(r, run_exit_for_status(s), "%s", asyncrt_context_last_error(ctx));
}

static int write_image(const char *path, const asyncrt_program *p, run_result *r)
{
    FILE *f = fopen(path, "wb");
    size_t size = 0;
    const void *image = asyncrt_program_image(p, &size);
    bool ok = f && fwrite(image, 1, size, f) == size;
    if (f) ok = fclose(f) == 0 && ok;
    return ok ? RUN_EXIT_OK : run_fail(r, RUN_EXIT_IO, "cannot write %s: %s", path, strerror(errno));
}

int run_compile_errors(asyncrt_context *ctx, const run_cli *cli, const char *first, run_result *r)
{
    if (cli->bundle) return r->exit_code; /* compile_one has no bundle: its errors would not be the run's */
    int verdict = r->exit_code;
    char *why = r->error;
    const char *mode = run_link_wanted(cli) ? cli->lto ? "-dlto" : "-rdc=true" : NULL;
    r->error = NULL;
    r->exit_code = RUN_EXIT_OK;
    /* auto reads the device: open it quietly (without one the verdict stands; a run says why later) */
    if (!strcmp(cli->arch, "auto") && !cli->compile_only) (void)asyncrt_context_open_device(ctx, cli->device);
    for (size_t i = 0; i <= cli->more_source_count && r->exit_code == RUN_EXIT_OK; i++) {
        const char *path = i ? cli->more_sources[i - 1] : strcmp(cli->source, "-") ? cli->source : "stdin.cu";
        char *text = i ? read_text(path, r) : (char *)first;
        asyncrt_program *p = NULL;
        if (text) compile_one(ctx, cli, path, text, mode, false, &p, r);
        asyncrt_program_destroy(p);
        if (i) free(text);
    }
    if (r->exit_code == RUN_EXIT_COMPILE) {
        free(why);
        return r->exit_code;
    }
    free(r->error); /* it compiles, or cannot be compiled here (no --arch, no device): the verdict stands */
    r->error = why;
    return r->exit_code = verdict;
}

int run_emit_lib(asyncrt_context *ctx, const run_cli *cli, const char *source_name, const char *source, run_result *r)
{
    bool lto = run_emit_lib_lto(cli->emit_lib);
    asyncrt_program *p = NULL;
    double start = now_ms();
    int rc = compile_one(ctx, cli, source_name, source, lto ? "-dlto" : "-rdc=true", false, &p, r);
    r->compile_ms = now_ms() - start;
    if (rc == RUN_EXIT_OK) {
        static const char *origins[] = {"nvrtc", "memory-cache", "disk-cache", "remote-cache"};
        asyncrt_program_origin origin = asyncrt_program_origin_of(p);
        r->origin = origin <= ASYNCRT_ORIGIN_REMOTE_CACHE ? origins[origin] : "?";
        snprintf(r->arch, sizeof r->arch, "%s", asyncrt_program_arch(p));
        snprintf(r->arch_why, sizeof r->arch_why, "%s", asyncrt_program_arch_reason(p));
        r->is_ptx = false;
        asyncrt_program_image(p, &r->image_bytes);
        rc = write_image(cli->emit_lib, p, r);
    }
    asyncrt_program_destroy(p);
    return rc;
}

int run_link_compile(asyncrt_context *ctx, const run_cli *cli, const char *first, asyncrt_program **out,
                     run_result *r)
{
    size_t count = 1 + cli->more_source_count;
    asyncrt_program **programs = calloc(count, sizeof *programs);
    asyncrt_link *link = NULL;
    if (!programs) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    double start = now_ms();
    int rc = RUN_EXIT_OK;
    if (cli->verbose) run_explain_nvrtc();
    for (size_t i = 0; rc == RUN_EXIT_OK && i < count; i++) {
        const char *path = i ? cli->more_sources[i - 1] : cli->source;
        char *text = i ? read_text(path, r) : (char *)first;
        rc = text ? compile_one(ctx, cli, path, text, cli->lto ? "-dlto" : "-rdc=true", true, &programs[i], r)
                  : r->exit_code;
        if (i) free(text);
    }
    asyncrt_status s = ASYNCRT_SUCCESS;
    if (rc == RUN_EXIT_OK) s = asyncrt_link_create(ctx, cli->arch, &link);
    for (size_t i = 0; s == ASYNCRT_SUCCESS && i < count; i++) s = asyncrt_link_add_program(link, programs[i]);
    for (size_t i = 0; s == ASYNCRT_SUCCESS && i < cli->link_file_count; i++)
        s = asyncrt_link_add_file(link, cli->link_files[i], ASYNCRT_LINK_ANY);
    if (s == ASYNCRT_SUCCESS && cli->lto) s = asyncrt_link_add_option(link, "-lto");
    for (size_t i = 0; s == ASYNCRT_SUCCESS && i < cli->link_option_count; i++)
        s = asyncrt_link_add_option(link, cli->link_options[i]);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_link_set_progress(link, tool_progress_fn(r->progress), r->progress);
    double linked_at = now_ms();
    asyncrt_cache_explanation why = ASYNCRT_CACHE_EXPLANATION_INIT; /* -v, as a compile's */
    bool explained = s == ASYNCRT_SUCCESS && cli->verbose && asyncrt_link_explain(link, 0, &why) == ASYNCRT_SUCCESS;
    tool_progress_begin(r->progress);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_link_complete(link, out);
    tool_progress_end(r->progress);
    missed_because(explained && s == ASYNCRT_SUCCESS ? *out : NULL, "link", &why);
    if (rc == RUN_EXIT_OK && s != ASYNCRT_SUCCESS)
        rc = run_fail(r, run_exit_for_status(s), "%s", asyncrt_context_last_error(ctx));
    r->compile_ms = now_ms() - start;
    if (rc == RUN_EXIT_OK) {
        asyncrt_program_origin origin = asyncrt_program_origin_of(*out);
        static const char *origins[] = {"nvrtc", "memory-cache", "disk-cache"};
        r->origin = origin <= ASYNCRT_ORIGIN_DISK_CACHE ? origins[origin] : "?";
        snprintf(r->arch, sizeof r->arch, "%s", asyncrt_program_arch(*out));
        snprintf(r->arch_why, sizeof r->arch_why, "%s", asyncrt_program_arch_reason(*out)); /* the link's target */
        r->is_ptx = false;
        asyncrt_program_image(*out, &r->image_bytes);
        for (size_t i = 0; i < r->launch_count; i++) {
            const char *lowered = asyncrt_program_lowered_name(*out, r->launches[i].kernel);
            r->launches[i].lowered = lowered ? lowered : r->launches[i].kernel;
        }
        if (cli->verbose)
            fprintf(stderr, "asyncrt-run: link of %zu source%s and %zu file%s%s: %s in %.1f ms (%s CUBIN, %zu bytes)\n",
                    count, count == 1 ? "" : "s", cli->link_file_count, cli->link_file_count == 1 ? "" : "s",
                    cli->lto ? " with LTO" : "",
                    origin == ASYNCRT_ORIGIN_COMPILED ? "cache miss, nvJitLink linked"
                    : origin == ASYNCRT_ORIGIN_MEMORY_CACHE ? "memory cache hit" : "disk cache hit, no nvJitLink call",
                    now_ms() - linked_at, r->arch, r->image_bytes);
        show_log("asyncrt-run: link: ", asyncrt_program_log(*out), cli->verbose);
    }
    if (rc == RUN_EXIT_OK && cli->emit_cubin) rc = write_image(cli->emit_cubin, *out, r);
    asyncrt_link_destroy(link);
    for (size_t i = 0; i < count; i++) asyncrt_program_destroy(programs[i]);
    free(programs);
    return rc;
}
