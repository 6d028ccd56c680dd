/* The GPU side of a run, through the asyncrt runtime. */
#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arch.h"

int run_exit_for_status(asyncrt_status s)
{
    switch (s) {
    case ASYNCRT_SUCCESS: return RUN_EXIT_OK;
    case ASYNCRT_ERROR_INVALID_ARGUMENT:
    case ASYNCRT_ERROR_NOT_FOUND:
    case ASYNCRT_ERROR_ARGUMENT_MISMATCH:
    case ASYNCRT_ERROR_TENSORMAP_INVALID: return RUN_EXIT_USAGE;
    case ASYNCRT_ERROR_COMPILE:
    case ASYNCRT_ERROR_NVRTC:
    case ASYNCRT_ERROR_UNSUPPORTED_ARCH: return RUN_EXIT_COMPILE;
    case ASYNCRT_ERROR_NO_DRIVER:
    case ASYNCRT_ERROR_NO_DEVICE: return RUN_EXIT_NO_DEVICE;
    case ASYNCRT_ERROR_IO: return RUN_EXIT_IO;
    case ASYNCRT_ERROR_OUT_OF_MEMORY: return RUN_EXIT_INTERNAL;
    default: return RUN_EXIT_CUDA;
    }
}

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
    size_t count = asyncrt_nvrtc_supported_archs(supported, 64);
    const asyncrt_device_info *dev = asyncrt_context_device(ctx);
    asyncrt_arch arch;
    r->arch_why[0] = '\0';
    if (!count) return;
    if (!strcmp(cli->arch, "auto") && dev)
        asyncrt_arch_select_auto(dev->cc_major, dev->cc_minor, dev->driver_version, asyncrt_nvrtc_version(),
                                 supported, count, &arch, r->arch_why, sizeof r->arch_why);
    else if (asyncrt_arch_parse(cli->arch, &arch))
        asyncrt_arch_check(&arch, supported, count, r->arch_why, sizeof r->arch_why);
}

static bool write_file(const char *path, const void *data, size_t size, run_result *r)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, size, f) == size;
    if (f) ok = (fclose(f) == 0) && ok;
    if (!ok) run_fail(r, RUN_EXIT_IO, "cannot write %s: %s", path, strerror(errno));
    return ok;
}

/* Writes the image of `program` if it has the wanted kind, else compiles the
 * sibling target (sm_XY <-> compute_XY) and writes that. */
static int emit(asyncrt_context *ctx, const asyncrt_program *program, bool want_ptx, const char *path,
                const char *source_name, const char *source, asyncrt_compile_options opts, run_result *r)
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
    if (!asyncrt_arch_parse(asyncrt_program_arch(program), &arch))
        return run_fail(r, RUN_EXIT_INTERNAL, "cannot parse the program's arch '%s'", asyncrt_program_arch(program));
    arch.ptx = want_ptx;
    asyncrt_arch_format(&arch, name, sizeof name);
    opts.arch = name;
    asyncrt_program *sibling = NULL;
    asyncrt_status s = asyncrt_program_compile(ctx, source_name, source, &opts, &sibling);
    if (s != ASYNCRT_SUCCESS) return library_fail(ctx, s, r);
    image = asyncrt_program_image(sibling, &size);
    if (want_ptx && size && ((const char *)image)[size - 1] == '\0') size--;
    bool ok = write_file(path, image, size, r);
    asyncrt_program_destroy(sibling);
    return ok ? RUN_EXIT_OK : r->exit_code;
}

int run_compile(asyncrt_context *ctx, const run_cli *cli, const char *source_name, const char *source,
                const char *source_dir, asyncrt_program **out, run_result *r)
{
    const char *includes[RUN_MAX_ITEMS + 1];
    size_t include_count = 0;
    for (size_t i = 0; i < cli->include_count; i++) includes[include_count++] = cli->includes[i];
    if (source_dir) includes[include_count++] = source_dir;
    const char *names[1] = {r->kernel};
    asyncrt_compile_options opts = {
        .arch = cli->arch, .std = cli->std,
        .include_dirs = includes, .include_dir_count = include_count,
        .defines = cli->defines, .define_count = cli->define_count,
        .options = cli->nvrtc_options, .option_count = cli->nvrtc_option_count,
        .name_expressions = names, .name_expression_count = 1,
    };
    explain_arch(ctx, cli, r);
    double start = now_ms();
    asyncrt_status s = asyncrt_program_compile(ctx, source_name, source, &opts, out);
    r->compile_ms = now_ms() - start;
    if (s != ASYNCRT_SUCCESS) return library_fail(ctx, s, r);
    static const char *origins[] = {"nvrtc", "memory-cache", "disk-cache"};
    asyncrt_program_origin origin = asyncrt_program_origin_of(*out);
    r->origin = origin <= ASYNCRT_ORIGIN_DISK_CACHE ? origins[origin] : "?";
    snprintf(r->arch, sizeof r->arch, "%s", asyncrt_program_arch(*out));
    r->is_ptx = asyncrt_program_is_ptx(*out);
    asyncrt_program_image(*out, &r->image_bytes);
    r->lowered = asyncrt_program_lowered_name(*out, r->kernel);
    if (cli->verbose) {
        fprintf(stderr, "asyncrt-run: target %s\n", r->arch_why[0] ? r->arch_why : r->arch);
        fprintf(stderr, "asyncrt-run: %s: %s in %.1f ms (%s %s, %zu bytes)\n", source_name,
                origin == ASYNCRT_ORIGIN_COMPILED ? "cache miss, NVRTC compiled"
                : origin == ASYNCRT_ORIGIN_MEMORY_CACHE ? "memory cache hit" : "disk cache hit, no NVRTC call",
                r->compile_ms, r->arch, r->is_ptx ? "PTX" : "CUBIN", r->image_bytes);
        const char *log = asyncrt_program_log(*out);
        if (log && *log) fprintf(stderr, "asyncrt-run: NVRTC log:\n%s\n", log);
    }
    int rc = RUN_EXIT_OK;
    if (cli->emit_ptx) rc = emit(ctx, *out, true, cli->emit_ptx, source_name, source, opts, r);
    if (rc == RUN_EXIT_OK && cli->emit_cubin) rc = emit(ctx, *out, false, cli->emit_cubin, source_name, source, opts, r);
    return rc;
}

int run_load(asyncrt_context *ctx, const asyncrt_program *program, asyncrt_module **module,
             asyncrt_kernel **kernel, run_result *r)
{
    double start = now_ms();
    asyncrt_status s = asyncrt_module_load(ctx, program, module);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_module_get_kernel(*module, r->kernel, kernel);
    r->load_ms = now_ms() - start;
    if (s != ASYNCRT_SUCCESS) return library_fail(ctx, s, r);
    return RUN_EXIT_OK;
}

static void format_sizes(char *buf, size_t size, const size_t *sizes, size_t count)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%zu", i ? ", " : "", sizes[i]);
}

int run_check_params(asyncrt_kernel *kernel, const run_cli *cli, const size_t *sizes, run_result *r)
{
    asyncrt_status s = asyncrt_kernel_param_sizes(kernel, r->param_sizes, RUN_MAX_ITEMS, &r->param_count);
    if (s == ASYNCRT_ERROR_UNSUPPORTED) {
        if (cli->verbose) fprintf(stderr, "asyncrt-run: the driver cannot list parameters; arguments unchecked\n");
        return RUN_EXIT_OK;
    }
    if (s != ASYNCRT_SUCCESS) return run_fail(r, RUN_EXIT_CUDA, "cuFuncGetParamInfo failed for %s", r->kernel);
    r->params_known = true;
    bool same = r->param_count == cli->arg_count;
    for (size_t i = 0; same && i < cli->arg_count; i++) same = r->param_sizes[i] == sizes[i];
    if (same) return RUN_EXIT_OK;
    char want[1024], given[2048] = "";
    format_sizes(want, sizeof want, r->param_sizes, r->param_count < RUN_MAX_ITEMS ? r->param_count : RUN_MAX_ITEMS);
    size_t used = 0;
    for (size_t i = 0; i < cli->arg_count && used < sizeof given; i++)
        used += (size_t)snprintf(given + used, sizeof given - used, "%s%s (%zu)", i ? ", " : "", cli->args[i].text,
                                 sizes[i]);
    return run_fail(r, RUN_EXIT_USAGE,
                    "kernel '%s' takes %zu parameter%s of sizes (%s) bytes, but the command line gives %zu "
                    "argument%s%s%s (pointers are 8 bytes, tensor maps 128)",
                    r->kernel, r->param_count, r->param_count == 1 ? "" : "s", want, cli->arg_count,
                    cli->arg_count == 1 ? "" : "s", cli->arg_count ? ": " : "", given);
}

static asyncrt_launch_config config_of(const run_cli *cli)
{
    asyncrt_launch_config c = {.shared_bytes = (size_t)cli->smem};
    for (int i = 0; i < 3; i++) {
        c.grid[i] = cli->grid[i];
        c.block[i] = cli->block[i];
        c.cluster[i] = cli->cluster[i];
    }
    return c;
}

int run_launch(asyncrt_context *ctx, asyncrt_kernel *kernel, const run_cli *cli, void **args,
               const size_t *sizes, run_result *r)
{
    asyncrt_launch_config config = config_of(cli);
    if (cli->verbose)
        fprintf(stderr, "asyncrt-run: launch %s grid %u,%u,%u block %u,%u,%u cluster %u,%u,%u smem %llu\n",
                r->kernel, cli->grid[0], cli->grid[1], cli->grid[2], cli->block[0], cli->block[1], cli->block[2],
                cli->cluster[0], cli->cluster[1], cli->cluster[2], (unsigned long long)cli->smem);
    asyncrt_status s = asyncrt_kernel_launch(kernel, &config, args, sizes, cli->arg_count);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_synchronize(ctx);
    return s == ASYNCRT_SUCCESS ? RUN_EXIT_OK : library_fail(ctx, s, r);
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int run_time(asyncrt_context *ctx, asyncrt_kernel *kernel, const run_cli *cli, void **args, const size_t *sizes,
             run_result *r)
{
    asyncrt_launch_config config = config_of(cli);
    asyncrt_timer *timer = NULL;
    float *ms = calloc(cli->repeat, sizeof *ms);
    if (!ms) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    asyncrt_status s = asyncrt_timer_create(ctx, &timer);
    for (unsigned i = 0; s == ASYNCRT_SUCCESS && i < cli->warmup; i++)
        s = asyncrt_kernel_launch(kernel, &config, args, sizes, cli->arg_count);
    for (unsigned i = 0; s == ASYNCRT_SUCCESS && i < cli->repeat; i++) {
        s = asyncrt_timer_start(timer, NULL);
        if (s == ASYNCRT_SUCCESS) s = asyncrt_kernel_launch(kernel, &config, args, sizes, cli->arg_count);
        if (s == ASYNCRT_SUCCESS) s = asyncrt_timer_stop(timer, NULL);
        if (s == ASYNCRT_SUCCESS) s = asyncrt_timer_elapsed_ms(timer, &ms[i]);
    }
    if (s == ASYNCRT_SUCCESS) s = asyncrt_synchronize(ctx);
    asyncrt_timer_destroy(timer);
    if (s != ASYNCRT_SUCCESS) {
        free(ms);
        return library_fail(ctx, s, r);
    }
    qsort(ms, cli->repeat, sizeof *ms, compare_floats);
    unsigned n = cli->repeat;
    r->timed = true;
    r->min_ms = ms[0];
    r->max_ms = ms[n - 1];
    r->median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    if (r->bytes && r->median_ms > 0) r->gbps = (double)r->bytes / (r->median_ms * 1e-3) / 1e9;
    free(ms);
    return RUN_EXIT_OK;
}
