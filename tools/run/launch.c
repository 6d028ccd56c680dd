/* The GPU side of a run, through the asyncrt runtime. */
#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arch.h"
#include "cache_trust.h"
#include "context.h"
#include "program.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int library_fail(asyncrt_context *ctx, asyncrt_status s, run_result *r)
{
    return run_fail(r, run_exit_for_status(s), "%s", asyncrt_context_last_error(ctx));
}

/* Why this target: the library's own rule, re-asked for the report. */
static void explain_arch(asyncrt_context *ctx, const run_cli *cli, run_result *r)
{
    int supported[64];
    size_t count = asyncrt__nvrtc_supported_archs(supported, 64);
    const asyncrt_device_info *dev = asyncrt_context_device(ctx);
    asyncrt_arch arch;
    r->arch_why[0] = '\0';
    if (!count) return;
    if (!strcmp(cli->arch, "auto") && dev)
        asyncrt__arch_select_auto(dev->cc_major, dev->cc_minor, dev->driver_version, asyncrt_nvrtc_version(),
                                 supported, count, &arch, r->arch_why, sizeof r->arch_why);
    else if (asyncrt__arch_parse(cli->arch, &arch))
        asyncrt__arch_check(&arch, supported, count, r->arch_why, sizeof r->arch_why);
}

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
    int code = library_fail(ctx, s, r);
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

/* Writes the image of `program` if it has the wanted kind, else compiles the
 * sibling target (sm_XY <-> compute_XY) and writes that. */
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
    asyncrt_arch arch;
    char name[32];
    if (!asyncrt__arch_parse(asyncrt_program_arch(program), &arch))
        return run_fail(r, RUN_EXIT_INTERNAL, "cannot parse the program's arch '%s'", asyncrt_program_arch(program));
    arch.ptx = want_ptx;
    asyncrt__arch_format(&arch, name, sizeof name);
    opts.arch = name;
    asyncrt_program *sibling = NULL;
    double start = now_ms();
    asyncrt_status s = asyncrt_program_compile(ctx, source_name, source, &opts, &sibling);
    if (s != ASYNCRT_SUCCESS) return library_fail(ctx, s, r);
    if (verbose) {
        asyncrt_program_origin origin = asyncrt_program_origin_of(sibling);
        fprintf(stderr, "asyncrt-run: %s: a second compile, for %s: %s in %.1f ms\n",
                want_ptx ? "--emit-ptx" : "--emit-cubin", name,
                origin == ASYNCRT_ORIGIN_COMPILED          ? "cache miss, NVRTC compiled"
                : origin == ASYNCRT_ORIGIN_MEMORY_CACHE ? "memory cache hit"
                : origin == ASYNCRT_ORIGIN_REMOTE_CACHE ? "remote cache hit"
                                                          : "disk cache hit",
                now_ms() - start);
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
    const char *dir = asyncrt_context_cache_dir(ctx), *shared = getenv("ASYNCRT_CACHE_SHARED");
    uint8_t key[32];
    char why[512];
    if (!dir)
        fprintf(stderr, "asyncrt-run: no disk cache: caching is off (ASYNCRT_CACHE=0) or HOME is unset\n");
    else if (!asyncrt__cache_trust_dir(dir, shared && !strcmp(shared, "1"), key, why, sizeof why))
        fprintf(stderr, "asyncrt-run: no disk cache: %s was skipped: %s\n", dir, why);
}

int run_compile(asyncrt_context *ctx, const run_cli *cli, const char *source_name, const char *source,
                const char *source_dir, asyncrt_program **out, run_result *r)
{
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
        .arch = cli->arch, .std = cli->std,
        .include_dirs = includes, .include_dir_count = include_count,
        .defines = cli->defines, .define_count = cli->define_count,
        .options = cli->nvrtc_options, .option_count = cli->nvrtc_option_count,
        .name_expressions = names, .name_expression_count = name_count,
    };
    explain_arch(ctx, cli, r);
    double start = now_ms();
    asyncrt_status s = asyncrt_program_compile(ctx, source_name, source, &opts, out);
    r->compile_ms = now_ms() - start;
    if (s != ASYNCRT_SUCCESS) return compile_fail(ctx, s, r);
    static const char *origins[] = {"nvrtc", "memory-cache", "disk-cache", "remote-cache"};
    asyncrt_program_origin origin = asyncrt_program_origin_of(*out);
    r->origin = origin <= ASYNCRT_ORIGIN_REMOTE_CACHE ? origins[origin] : "?";
    snprintf(r->arch, sizeof r->arch, "%s", asyncrt_program_arch(*out));
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

/* What the driver says of a loaded kernel (-1 where it cannot say). */
static void kernel_attributes(asyncrt_context *ctx, const asyncrt_kernel *k, run_launch_result *l)
{
    static const CUfunction_attribute which[] = {CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                                 CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                                 CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK};
    int *to[] = {&l->regs, &l->static_shared, &l->local, &l->max_threads};
    for (size_t i = 0; i < 4; i++)
        if (ctx->drv->cuFuncGetAttribute(to[i], which[i], (CUfunction)asyncrt_kernel_function(k)) != CUDA_SUCCESS)
            *to[i] = -1;
}

int run_load(asyncrt_context *ctx, const asyncrt_program *program, size_t launch_count, asyncrt_module **module,
             asyncrt_kernel **kernels, run_result *r)
{
    double start = now_ms();
    asyncrt_status s = asyncrt_module_load(ctx, program, module);
    for (size_t i = 0; s == ASYNCRT_SUCCESS && i < launch_count; i++)
        s = asyncrt_module_get_kernel(*module, r->launches[i].kernel, &kernels[i]);
    r->load_ms = now_ms() - start;
    if (s != ASYNCRT_SUCCESS) return library_fail(ctx, s, r);
    for (size_t i = 0; i < launch_count; i++) kernel_attributes(ctx, kernels[i], &r->launches[i]);
    return RUN_EXIT_OK;
}

int run_use_image(const char *path, asyncrt_program **program, run_result *r)
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
    /* In place: the launches' lowered names point into the program. */
    free((*program)->image);
    (*program)->image = data; /* the same names: Itanium mangling is nvcc's too */
    (*program)->image_size = (size_t)n;
    (*program)->ptx = false;
    r->is_ptx = false;
    r->image_bytes = (size_t)n;
    return RUN_EXIT_OK;
}

static void format_sizes(char *buf, size_t size, const size_t *sizes, size_t count)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%zu", i ? ", " : "", sizes[i]);
}

static void format_given(char *buf, size_t size, const run_launch_spec *l, const size_t *sizes)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < l->arg_count && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s (%zu)", i ? ", " : "", l->args[i].text, sizes[i]);
}

int run_check_declared(const run_cli *cli, size_t launch, const size_t *sizes, run_result *r)
{
    /* No cuFuncGetParamInfo: the count the source declares still catches a
     * missing or extra --arg, which would make the launch read garbage. */
    const run_launch_spec *l = &cli->launches[launch];
    const run_launch_result *lr = &r->launches[launch];
    char given[2048];
    if (lr->declared_params < 0 || (size_t)lr->declared_params == l->arg_count) {
        if (cli->verbose)
            fprintf(stderr, "asyncrt-run: %s; %s\n",
                    cli->compile_only ? "--compile-only: no driver to list parameters" : "the driver cannot list parameters",
                    lr->declared_params < 0 ? "arguments unchecked" : "only their number was checked");
        return RUN_EXIT_OK;
    }
    format_given(given, sizeof given, l, sizes);
    return run_fail(r, RUN_EXIT_USAGE,
                    "kernel '%s' declares %d parameter%s in the source, but the command line gives %zu argument%s%s%s "
                    "(%s, so only the count was checked)",
                    lr->kernel, lr->declared_params, lr->declared_params == 1 ? "" : "s", l->arg_count,
                    l->arg_count == 1 ? "" : "s", l->arg_count ? ": " : "", given,
                    cli->compile_only ? "--compile-only asks no driver for parameter sizes"
                                      : "this driver cannot report parameter sizes");
}

int run_check_params(asyncrt_kernel *kernel, const run_cli *cli, size_t launch, const size_t *sizes, run_result *r)
{
    const run_launch_spec *l = &cli->launches[launch];
    run_launch_result *lr = &r->launches[launch];
    char want[1024], given[2048];
    asyncrt_status s = asyncrt_kernel_param_sizes(kernel, lr->param_sizes, RUN_MAX_ITEMS, &lr->param_count);
    if (s == ASYNCRT_ERROR_UNSUPPORTED) return run_check_declared(cli, launch, sizes, r);
    if (s != ASYNCRT_SUCCESS) return run_fail(r, RUN_EXIT_CUDA, "cuFuncGetParamInfo failed for %s", lr->kernel);
    lr->params_known = true;
    bool same = lr->param_count == l->arg_count;
    for (size_t i = 0; same && i < l->arg_count; i++) same = lr->param_sizes[i] == sizes[i];
    if (same) return RUN_EXIT_OK;
    format_sizes(want, sizeof want, lr->param_sizes, lr->param_count < RUN_MAX_ITEMS ? lr->param_count : RUN_MAX_ITEMS);
    format_given(given, sizeof given, l, sizes);
    return run_fail(r, RUN_EXIT_USAGE,
                    "kernel '%s' takes %zu parameter%s of sizes (%s) bytes, but the command line gives %zu "
                    "argument%s%s%s (pointers are 8 bytes, tensor maps 128)",
                    lr->kernel, lr->param_count, lr->param_count == 1 ? "" : "s", want, l->arg_count,
                    l->arg_count == 1 ? "" : "s", l->arg_count ? ": " : "", given);
}

static asyncrt_launch_config config_of(const run_launch_spec *l, asyncrt_stream stream)
{
    asyncrt_launch_config c = {.shared_bytes = (size_t)l->smem, .stream = stream, .cooperative = l->cooperative,
                               .programmatic_serialization = l->pdl};
    for (int i = 0; i < 3; i++) {
        c.grid[i] = l->grid[i];
        c.block[i] = l->block[i];
        c.cluster[i] = l->cluster[i];
    }
    return c;
}

int run_priority_stream(asyncrt_context *ctx, int priority, asyncrt_stream *out, run_result *r)
{
    asyncrt_status s = asyncrt_stream_create_with_priority(ctx, priority, out);
    return s == ASYNCRT_SUCCESS ? RUN_EXIT_OK : library_fail(ctx, s, r);
}

static int launch_once(const run_cli *cli, size_t i, const run_prepared *p)
{
    asyncrt_launch_config config = config_of(&cli->launches[i], p->stream);
    return asyncrt_kernel_launch(p->kernel, &config, p->args, p->sizes, cli->launches[i].arg_count);
}

int run_sequence(asyncrt_context *ctx, const run_cli *cli, const run_prepared *launches, run_result *r)
{
    for (size_t i = 0; i < cli->launch_count; i++) {
        const run_launch_spec *l = &cli->launches[i];
        if (cli->verbose)
            fprintf(stderr, "asyncrt-run: launch %zu: %s grid %u,%u,%u block %u,%u,%u cluster %u,%u,%u smem %llu%s%s\n",
                    i + 1, r->launches[i].kernel, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                    l->block[2], l->cluster[0], l->cluster[1], l->cluster[2], (unsigned long long)l->smem,
                    l->cooperative ? " cooperative" : "", l->pdl ? " pdl" : "");
        asyncrt_status s = launch_once(cli, i, &launches[i]);
        bool next_overlaps = i + 1 < cli->launch_count && cli->launches[i + 1].pdl;
        if (s == ASYNCRT_SUCCESS && !next_overlaps) s = asyncrt_synchronize(ctx);
        if (s != ASYNCRT_SUCCESS) {
            int code = library_fail(ctx, s, r);
            if (cli->launch_count > 1) {
                char *why = r->error;
                r->error = NULL;
                r->exit_code = RUN_EXIT_OK;
                run_fail(r, code, "launch %zu (%s%s): %s", i + 1, r->launches[i].kernel,
                         i > 0 && l->pdl ? ", or the launch before it" : "", why ? why : "");
                free(why);
            }
            return code;
        }
    }
    return RUN_EXIT_OK;
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int run_time(asyncrt_context *ctx, const run_cli *cli, size_t i, const run_prepared *p, run_result *r)
{
    asyncrt_timer *timer = NULL;
    float *ms = calloc(cli->repeat, sizeof *ms);
    if (!ms) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    asyncrt_status s = asyncrt_timer_create(ctx, &timer);
    for (unsigned k = 0; s == ASYNCRT_SUCCESS && k < cli->warmup; k++) s = launch_once(cli, i, p);
    for (unsigned k = 0; s == ASYNCRT_SUCCESS && k < cli->repeat; k++) {
        s = asyncrt_timer_start(timer, p->stream);
        if (s == ASYNCRT_SUCCESS) s = launch_once(cli, i, p);
        if (s == ASYNCRT_SUCCESS) s = asyncrt_timer_stop(timer, p->stream);
        if (s == ASYNCRT_SUCCESS) s = asyncrt_timer_elapsed_ms(timer, &ms[k]);
    }
    if (s == ASYNCRT_SUCCESS) s = asyncrt_synchronize(ctx);
    asyncrt_timer_destroy(timer);
    if (s != ASYNCRT_SUCCESS) {
        free(ms);
        return library_fail(ctx, s, r);
    }
    qsort(ms, cli->repeat, sizeof *ms, compare_floats);
    unsigned n = cli->repeat;
    run_launch_result *l = &r->launches[i];
    l->timed = true;
    l->min_ms = ms[0];
    l->max_ms = ms[n - 1];
    l->median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    if (l->bytes && l->median_ms > 0) l->gbps = (double)l->bytes / (l->median_ms * 1e-3) / 1e9;
    free(ms);
    return RUN_EXIT_OK;
}
