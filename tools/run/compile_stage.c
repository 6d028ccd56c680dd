/* asyncrt-run's compile stage: the source through asyncrt_program_compile,
 * what it says about itself (-v), --emit-ptx/--emit-cubin and --image. */
#include "compile_stage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncrt/bundle.h"
#include "asyncrt/cache.h"

static bool write_file(const char *path, const void *data, size_t size, run_result *r)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, size, f) == size;
    if (f) ok = (fclose(f) == 0) && ok;
    if (!ok) run_fail(r, RUN_EXIT_IO, "cannot write %s: %s", path, strerror(errno));
    return ok;
}

/* NVRTC reports a name expression it cannot resolve as errors in a file it
 * generates ("__nv_name_map(2): error: ..."), also after a real error in the
 * source made the template unusable. Those blocks (the line and its context
 * up to the next blank line) are dropped. When nothing else is left, the
 * caller gives a hint instead (r->name_error). */
static bool line_has(const char *line, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(line + i, needle, n)) return true;
    return false;
}

static char *without_name_map(const char *log, bool *other_errors)
{
    char *out = malloc(strlen(log) + 1);
    if (!out) return NULL;
    size_t n = 0;
    bool skipping = false;
    *other_errors = false;
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line + 1) : strlen(line);
        if (!strncmp(line, "__nv_name_map", 13)) skipping = true;
        else if (skipping && (len == 1 || (len == 2 && line[0] == '\r'))) {
            skipping = false;
            line += len;
            continue;
        }
        if (!skipping) {
            bool counted = line_has(line, len, "detected in the compilation of");
            if (!counted && line_has(line, len, "error")) *other_errors = true;
            if (!counted) memcpy(out + n, line, len), n += len; /* its count included the dropped errors */
        }
        line += len;
    }
    out[n] = '\0';
    return out;
}

static int compile_fail(asyncrt_context *ctx, asyncrt_status s, run_result *r)
{
    const char *msg = asyncrt_context_last_error(ctx);
    int code = run_fail_library(r, ctx, s);
    if (s == ASYNCRT_ERROR_COMPILE && strstr(msg, "__nv_name_map")) {
        bool other = false;
        char *filtered = without_name_map(msg, &other);
        if (filtered && other) {
            free(r->error);
            r->error = filtered;
            filtered = NULL;
        }
        r->name_error = !other;
        free(filtered);
    }
    /* ptxas refuses wgmma, setmaxnreg and friends for sm_90: they need sm_90a. */
    const char *target = strstr(msg, "not supported on .target '");
    if (target && r->error) {
        char arch[16] = "";
        sscanf(target + 26, "%15[a-z_0-9]", arch);
        size_t len = strlen(r->error);
        char *more = arch[0] && arch[strlen(arch) - 1] != 'a' ? realloc(r->error, len + 160) : NULL;
        if (more) {
            snprintf(more + len, 160, "\nhint: this instruction needs the architecture-specific target: "
                                      "use --arch %sa", arch);
            r->error = more;
        }
    }
    return code;
}

/* Writes the image of the kind asked for. The other kind is a second NVRTC
 * compile (a program keeps one image), cached like the first; -v says so. */
static int emit(asyncrt_context *ctx, const asyncrt_program *program, bool want_ptx, const char *path,
                const char *source_name, const char *source, asyncrt_compile_options opts, int verbose,
                run_result *r)
{
    size_t size = 0;
    const void *image;
    if (asyncrt_program_is_ptx(program) == want_ptx) {
        image = asyncrt_program_image(program, &size);
        /* PTX images carry their terminating NUL; the file should not. */
        if (want_ptx && size && ((const char *)image)[size - 1] == '\0') size--;
        return write_file(path, image, size, r) ? RUN_EXIT_OK : r->exit_code;
    }
    /* The sibling target: sm_XY <-> compute_XY, suffix kept. */
    const char *arch = asyncrt_program_arch(program), *number = strchr(arch, '_');
    char name[32];
    if (!number) return run_fail(r, RUN_EXIT_INTERNAL, "cannot parse the program's arch '%s'", arch);
    snprintf(name, sizeof name, "%s%s", want_ptx ? "compute" : "sm", number);
    opts.arch = name;
    asyncrt_program *sibling = NULL;
    double start = run_now_ms();
    tool_progress_begin(r->progress);
    asyncrt_status s = asyncrt_program_compile(ctx, source_name, source, &opts, &sibling);
    tool_progress_end(r->progress);
    if (s != ASYNCRT_SUCCESS) return run_fail_library(r, ctx, s);
    if (verbose) {
        asyncrt_program_origin origin = asyncrt_program_origin_of(sibling);
        fprintf(stderr, "asyncrt-run: %s: a second compile, for %s: %s in %.1f ms\n",
                want_ptx ? "--emit-ptx" : "--emit-cubin", name,
                origin == ASYNCRT_ORIGIN_COMPILED          ? "cache miss, NVRTC compiled"
                : origin == ASYNCRT_ORIGIN_MEMORY_CACHE ? "memory cache hit"
                : origin == ASYNCRT_ORIGIN_REMOTE_CACHE ? "remote cache hit"
                                                          : "disk cache hit",
                run_now_ms() - start);
    }
    image = asyncrt_program_image(sibling, &size);
    if (want_ptx && size && ((const char *)image)[size - 1] == '\0') size--;
    bool ok = write_file(path, image, size, r);
    asyncrt_program_destroy(sibling);
    return ok ? RUN_EXIT_OK : r->exit_code;
}

/* -v: a cache directory the library skipped (its warning is a -vv line),
 * through the library's own trust check. */
static void explain_disk_cache(const asyncrt_context *ctx)
{
    asyncrt_cache_info info = ASYNCRT_CACHE_INFO_INIT;
    if (asyncrt_context_cache_info(ctx, &info) != ASYNCRT_SUCCESS) return;
    if (!info.dir)
        fprintf(stderr, "asyncrt-run: no disk cache: caching is off (ASYNCRT_CACHE=0) or HOME is unset\n");
    else if (!info.used)
        fprintf(stderr, "asyncrt-run: no disk cache: %s was skipped: %s\n", info.dir, info.why);
}

/* -v: the remote cache the library used, or why it is off (a refused key
 * file, a server that is down or switched off), and its counters, with the
 * last value it refused (another key file, damage) and why. */
static void explain_remote_cache(const asyncrt_context *ctx)
{
    asyncrt_remote_cache_stats st = ASYNCRT_REMOTE_CACHE_STATS_INIT;
    if (asyncrt_context_remote_cache_stats(ctx, &st) != ASYNCRT_SUCCESS ||
        strncmp(st.state, "off: no remote cache configured", 31) == 0)
        return;
    if (!st.enabled) {
        fprintf(stderr, "asyncrt-run: remote cache %s\n", st.state);
        return;
    }
    fprintf(stderr,
            "asyncrt-run: remote cache: %llu hits, %llu misses, %llu errors, %llu rejected, %llu stores; %s\n",
            (unsigned long long)st.hits, (unsigned long long)st.misses, (unsigned long long)st.errors,
            (unsigned long long)st.rejected, (unsigned long long)st.stores, st.state);
    if (st.rejected)
        fprintf(stderr, "asyncrt-run: remote cache: a value it refused stays on the server (this machine never "
                        "overwrites one it cannot verify); a MAC mismatch means machines with other key files: "
                        "give the fleet one ASYNCRT_REMOTE_CACHE_KEY_FILE\n");
}

/* -v: which NVRTC the library's search chose among those it found, and why
 * (by stat alone: a cache hit still opens none). */
void run_explain_nvrtc(void)
{
    asyncrt_nvrtc_info found = ASYNCRT_NVRTC_INFO_INIT;
    asyncrt_nvrtc_candidate candidates[32];
    asyncrt_nvrtc_info_get(false, &found);
    size_t count = tool_nvrtc_candidates(candidates, sizeof candidates / sizeof candidates[0]);
    fprintf(stderr, "asyncrt-run: NVRTC %s (%s); found:\n",
            found.chosen >= 0 && (size_t)found.chosen < count ? candidates[found.chosen].path : "none", found.why);
    tool_print_nvrtc_candidates(stderr, "asyncrt-run:   ", candidates, count, found.chosen);
}

int run_compile(asyncrt_context *ctx, const run_cli *cli, const char *source_name, const char *source,
                const char *source_dir, asyncrt_program **out, run_result *r)
{
    if (cli->verbose) run_explain_nvrtc();
    const char *includes[RUN_MAX_ITEMS + 1];
    size_t include_count = 0;
    for (size_t i = 0; i < cli->include_count; i++) includes[include_count++] = cli->includes[i];
    if (source_dir) includes[include_count++] = source_dir;
    /* Each distinct kernel once, where it needs a name expression. */
    const char *names[RUN_MAX_LAUNCHES];
    size_t name_count = 0;
    for (size_t i = 0; i < r->launch_count; i++) {
        bool seen = !run_scan_needs_name(r->scan, r->scan_count, r->launches[i].kernel);
        for (size_t j = 0; j < name_count; j++) seen |= !strcmp(names[j], r->launches[i].kernel);
        if (!seen) names[name_count++] = r->launches[i].kernel;
    }
    asyncrt_compile_options opts = {
        .size = sizeof opts,
        .arch = cli->arch, .std = cli->std,
        .include_dirs = includes, .include_dir_count = include_count,
        .defines = cli->defines, .define_count = cli->define_count,
        .options = cli->nvrtc_options, .option_count = cli->nvrtc_option_count,
        .name_expressions = names, .name_expression_count = name_count,
    };
    if (cli->bundle) { /* kept in r for --emit-*'s second compile */
        asyncrt_status s = asyncrt_bundle_load_file(ctx, cli->bundle, &r->bundle);
        if (s != ASYNCRT_SUCCESS) return run_fail_library(r, ctx, s);
        opts.bundle = r->bundle;
    }
    /* -v: why a miss missed, asked before the compile stores it (asyncrt-cache explain's answer) */
    asyncrt_cache_explanation why = ASYNCRT_CACHE_EXPLANATION_INIT;
    bool explained = cli->verbose && asyncrt_cache_explain(ctx, source_name, source, &opts, 0, &why) == ASYNCRT_SUCCESS;
    double start = run_now_ms();
    /* A run loads it: a target the driver cannot load is refused before compiling. Not so with
     * --compile-only, --image (its CUBIN is loaded instead) or --emit-ptx's second compile: those
     * images may be for another machine. */
    opts.for_load = !cli->compile_only && !cli->image;
    opts.progress = tool_progress_fn(r->progress), opts.progress_user = r->progress;
    tool_progress_begin(r->progress);
    asyncrt_status s = asyncrt_program_compile(ctx, source_name, source, &opts, out);
    tool_progress_end(r->progress);
    r->compile_ms = run_now_ms() - start;
    if (explained && s == ASYNCRT_SUCCESS && asyncrt_program_origin_of(*out) == ASYNCRT_ORIGIN_COMPILED &&
        why.verdict != ASYNCRT_CACHE_VERDICT_HIT)
        fprintf(stderr, "asyncrt-run: %s: why the cache missed: %s\n", source_name, why.cause);
    asyncrt_cache_explanation_free(&why);
    if (s != ASYNCRT_SUCCESS) return compile_fail(ctx, s, r);
    static const char *origins[] = {"nvrtc", "memory-cache", "disk-cache", "remote-cache"};
    asyncrt_program_origin origin = asyncrt_program_origin_of(*out);
    r->origin = origin <= ASYNCRT_ORIGIN_REMOTE_CACHE ? origins[origin] : "?";
    snprintf(r->arch, sizeof r->arch, "%s", asyncrt_program_arch(*out));
    snprintf(r->arch_why, sizeof r->arch_why, "%s", asyncrt_program_arch_reason(*out)); /* the library's own */
    r->is_ptx = asyncrt_program_is_ptx(*out);
    asyncrt_program_image(*out, &r->image_bytes);
    for (size_t i = 0; i < r->launch_count; i++) { /* an extern "C" kernel named plainly: that is its symbol */
        const char *lowered = asyncrt_program_lowered_name(*out, r->launches[i].kernel);
        r->launches[i].lowered = lowered ? lowered : r->launches[i].kernel;
    }
    if (cli->verbose) {
        explain_disk_cache(ctx);
        fprintf(stderr, "asyncrt-run: target %s\n", r->arch_why[0] ? r->arch_why : r->arch);
        fprintf(stderr, "asyncrt-run: %s: %s in %.1f ms (%s %s, %zu bytes)\n", source_name,
                origin == ASYNCRT_ORIGIN_COMPILED ? "cache miss, NVRTC compiled"
                : origin == ASYNCRT_ORIGIN_MEMORY_CACHE ? "memory cache hit"
                : origin == ASYNCRT_ORIGIN_REMOTE_CACHE ? "remote cache hit, no NVRTC call"
                                                        : "disk cache hit, no NVRTC call",
                r->compile_ms, r->arch, r->is_ptx ? "PTX" : "CUBIN", r->image_bytes);
        asyncrt_program_image_info info = ASYNCRT_PROGRAM_IMAGE_INFO_INIT; /* compact images' verdict */
        if (!r->is_ptx && asyncrt_program_image_info_of(ctx, *out, &info) == ASYNCRT_SUCCESS && info.reason[0])
            fprintf(stderr, "asyncrt-run: image: %s\n", info.reason);
        explain_remote_cache(ctx);
    }
    /* Warnings are shown as nvcc shows them; -v shows any other log too. */
    const char *log = asyncrt_program_log(*out);
    if (log && (strstr(log, "warning") || (cli->verbose && strspn(log, " \t\r\n") < strlen(log))))
        fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
    int rc = RUN_EXIT_OK;
    if (cli->emit_ptx) rc = emit(ctx, *out, true, cli->emit_ptx, source_name, source, opts, cli->verbose, r);
    if (rc == RUN_EXIT_OK && cli->emit_cubin)
        rc = emit(ctx, *out, false, cli->emit_cubin, source_name, source, opts, cli->verbose, r);
    return rc;
}

int run_use_image(asyncrt_context *ctx, const char *path, asyncrt_program **program, run_result *r)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    long n = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    bool ok = n > 4 && fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)n)) && fread(data, 1, (size_t)n, f) == (size_t)n;
    if (f) fclose(f);
    if (!ok || memcmp(data, "\x7f" "ELF", 4) != 0) {
        free(data);
        return run_fail(r, ok ? RUN_EXIT_USAGE : RUN_EXIT_IO, "--image %s: %s", path,
                        ok ? "not a CUBIN (an ELF file, as nvcc -cubin writes)" : strerror(errno ? errno : EIO));
    }
    /* The CUBIN for the compiled target (a CUBIN of compute_XY is sm_XY's); the launches' lowered
     * names point into the compiled program, kept in r (the same names: Itanium mangling is nvcc's too). */
    asyncrt_arch arch = ASYNCRT_ARCH_INIT;
    char target[32] = "";
    if (asyncrt_arch_parse(asyncrt_program_arch(*program), &arch)) {
        arch.ptx = false;
        asyncrt_arch_format(&arch, target, sizeof target);
    }
    asyncrt_program *image = NULL;
    asyncrt_status s = asyncrt_program_from_image(ctx, data, (size_t)n, target, &image);
    free(data);
    if (s != ASYNCRT_SUCCESS) return run_fail_library(r, ctx, s);
    r->named = *program;
    *program = image;
    r->is_ptx = false;
    r->image_bytes = (size_t)n;
    return RUN_EXIT_OK;
}
