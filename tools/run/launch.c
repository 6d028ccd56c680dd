/* asyncrt-run's launch stage, all of it: loading the program, checking each
 * launch's arguments against its kernel, building the argument values
 * (buffers, tensor maps, scalars), streams, launching in order, and timing.
 * Only the library's public API. */
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmap.h"

/* What one launch needs: the kernel, its argument pointers and sizes, and
 * its stream (NULL: the default stream). */
typedef struct run_prepared {
    asyncrt_kernel *kernel;
    void **args;
    const size_t *sizes;
    asyncrt_stream stream;
} run_prepared;

/* Every argument's value for one launch, and its size. */
typedef struct arg_values {
    unsigned char *storage[RUN_MAX_ITEMS];
    void *args[RUN_MAX_ITEMS];
    size_t sizes[RUN_MAX_ITEMS];
} arg_values;

static void arg_sizes(const run_launch_spec *l, arg_values *v)
{
    for (size_t i = 0; i < l->arg_count; i++) v->sizes[i] = l->args[i].size;
}

/* buf:NAME+N must stay inside the buffer (its end is allowed, as in C). */
static int arg_offset(const run_arg_spec *a, const run_buffer *b, uint64_t *bytes, run_result *r)
{
    size_t elem = run_dtype_size(b->dtype);
    if (!a->offset_in_bytes && a->offset > UINT64_MAX / elem)
        return run_fail(r, RUN_EXIT_USAGE, "--arg %s: offset overflows", a->text);
    *bytes = a->offset_in_bytes ? a->offset : a->offset * elem;
    if (*bytes > b->bytes)
        return run_fail(r, RUN_EXIT_USAGE, "--arg %s: offset %llu bytes is past the end of buffer %s (%zu bytes)",
                        a->text, (unsigned long long)*bytes, b->name, b->bytes);
    return RUN_EXIT_OK;
}

static int arg_values_fill(const run_launch_spec *l, const run_buffer *buffers, const asyncrt_tensor_map *maps,
                           const asyncrt_deviceptr *map_ptrs, arg_values *v, run_result *r)
{
    for (size_t i = 0; i < l->arg_count; i++) {
        const run_arg_spec *a = &l->args[i];
        /* 64-byte aligned: a tensor map must be, and nothing needs more. */
        size_t bytes = (a->size + 63) / 64 * 64;
        if (!(v->storage[i] = aligned_alloc(64, bytes ? bytes : 64))) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
        memset(v->storage[i], 0, bytes ? bytes : 64);
        v->args[i] = v->storage[i];
        asyncrt_deviceptr ptr = 0;
        uint64_t offset = 0;
        switch (a->kind) {
        case RUN_ARG_SCALAR: run_value_store(a->dtype, a->value, v->storage[i]); break;
        case RUN_ARG_BUFFER:
            if (arg_offset(a, &buffers[a->ref], &offset, r) != RUN_EXIT_OK) return r->exit_code;
            ptr = buffers[a->ref].dev + offset;
            memcpy(v->storage[i], &ptr, sizeof ptr);
            break;
        case RUN_ARG_TMAP: memcpy(v->storage[i], &maps[a->ref], sizeof maps[a->ref]); break;
        case RUN_ARG_TMAP_PTR: memcpy(v->storage[i], &map_ptrs[a->ref], sizeof map_ptrs[a->ref]); break;
        case RUN_ARG_NULL: break;
        default: run_arg_encode(a, v->storage[i]); break;
        }
    }
    return RUN_EXIT_OK;
}

static void arg_values_free(arg_values *v)
{
    for (size_t i = 0; i < RUN_MAX_ITEMS; i++) free(v->storage[i]);
}

/* Bytes of the distinct buffers the arguments reach, for GB/s. */
static uint64_t derived_bytes(const run_cli *cli, const run_launch_spec *l, const run_buffer *buffers)
{
    bool used[RUN_MAX_ITEMS] = {false};
    uint64_t total = 0;
    for (size_t i = 0; i < l->arg_count; i++) {
        const run_arg_spec *a = &l->args[i];
        int b = a->kind == RUN_ARG_BUFFER ? a->ref
                : a->kind == RUN_ARG_TMAP || a->kind == RUN_ARG_TMAP_PTR ? cli->tmaps[a->ref].buffer : -1;
        if (b >= 0 && !used[b]) {
            used[b] = true;
            total += buffers[b].bytes;
        }
    }
    return total;
}

/* Device copies of the tensor maps that tmapptr: arguments point at
 * (cudaMalloc-style allocations are 256-byte aligned; TMA needs 64). */
static int upload_map_copies(asyncrt_context *ctx, const run_cli *cli, const asyncrt_tensor_map *maps,
                             asyncrt_deviceptr *ptrs, run_result *r)
{
    for (size_t l = 0; l < cli->launch_count; l++)
        for (size_t i = 0; i < cli->launches[l].arg_count; i++) {
            const run_arg_spec *a = &cli->launches[l].args[i];
            if (a->kind != RUN_ARG_TMAP_PTR || ptrs[a->ref]) continue;
            asyncrt_status s = asyncrt_memory_alloc(ctx, sizeof maps[a->ref], &ptrs[a->ref]);
            if (s == ASYNCRT_SUCCESS) s = asyncrt_memory_to_device(ctx, ptrs[a->ref], &maps[a->ref], sizeof maps[a->ref]);
            if (s != ASYNCRT_SUCCESS) return run_fail_library(r, ctx, s);
        }
    return RUN_EXIT_OK;
}

/* GPU state of a run, freed in one place. */
struct run_gpu {
    asyncrt_module *module;
    asyncrt_kernel *kernels[RUN_MAX_LAUNCHES];
    arg_values values[RUN_MAX_LAUNCHES];
    run_prepared prepared[RUN_MAX_LAUNCHES];
    asyncrt_stream streams[RUN_MAX_LAUNCHES];
    asyncrt_tensor_map maps[RUN_MAX_ITEMS];
    asyncrt_deviceptr map_ptrs[RUN_MAX_ITEMS];
};

void run_launch_free(asyncrt_context *ctx, run_gpu *g)
{
    if (!g) return;
    for (size_t i = 0; i < RUN_MAX_LAUNCHES; i++) {
        arg_values_free(&g->values[i]);
        if (g->streams[i]) asyncrt_stream_destroy(ctx, g->streams[i]);
    }
    for (size_t i = 0; i < RUN_MAX_ITEMS; i++) asyncrt_memory_free(ctx, g->map_ptrs[i]);
    asyncrt_module_destroy(g->module);
    free(g);
}

/* One stream per distinct --priority; launches without one use the default stream. */
static int make_streams(asyncrt_context *ctx, const run_cli *cli, run_gpu *g, run_result *r)
{
    for (size_t i = 0; i < cli->launch_count; i++) {
        const run_launch_spec *l = &cli->launches[i];
        if (!l->has_priority) continue;
        for (size_t j = 0; j < i && !g->prepared[i].stream; j++)
            if (cli->launches[j].has_priority && cli->launches[j].priority == l->priority)
                g->prepared[i].stream = g->prepared[j].stream;
        if (!g->prepared[i].stream) {
            asyncrt_status s = asyncrt_stream_create_with_priority(ctx, l->priority, &g->streams[i]);
            if (s != ASYNCRT_SUCCESS) return run_fail_library(r, ctx, s);
            g->prepared[i].stream = g->streams[i];
        }
    }
    return RUN_EXIT_OK;
}

static int load(asyncrt_context *ctx, const asyncrt_program *program, size_t launch_count, asyncrt_module **module,
             asyncrt_kernel **kernels, run_result *r)
{
    double start = run_now_ms();
    asyncrt_status s = asyncrt_module_load(ctx, program, module);
    for (size_t i = 0; s == ASYNCRT_SUCCESS && i < launch_count; i++) {
        /* --image: the image holds no name expressions; the compiled program
         * has each C++ name's mangled one, which the image's kernel bears */
        const char *name = r->launches[i].kernel;
        const char *lowered = r->named ? asyncrt_program_lowered_name(r->named, name) : NULL;
        s = asyncrt_module_get_kernel(*module, lowered ? lowered : name, &kernels[i]);
    }
    r->load_ms = run_now_ms() - start;
    if (s != ASYNCRT_SUCCESS) return run_fail_library(r, ctx, s);
    for (size_t i = 0; i < launch_count; i++) {
        asyncrt_kernel_resources k = ASYNCRT_KERNEL_RESOURCES_INIT;
        run_launch_result *l = &r->launches[i];
        asyncrt_kernel_resources_of(kernels[i], &k);
        l->regs = k.registers, l->static_shared = k.static_shared_bytes, l->local = k.local_bytes;
        l->max_threads = k.max_threads;
    }
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

static int check_params(asyncrt_kernel *kernel, const run_cli *cli, size_t launch, const size_t *sizes, run_result *r)
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

int run_check_without_device(const run_cli *cli, const run_buffer *buffers, run_result *r)
{
    bool describes_run = cli->buffer_count || cli->tmap_count;
    for (size_t l = 0; l < cli->launch_count; l++) describes_run |= cli->launches[l].arg_count > 0;
    for (size_t l = 0; describes_run && l < cli->launch_count; l++) {
        arg_values v = {0};
        arg_sizes(&cli->launches[l], &v);
        for (size_t i = 0; i < cli->launches[l].arg_count; i++) {
            const run_arg_spec *a = &cli->launches[l].args[i];
            uint64_t offset;
            if (a->kind == RUN_ARG_BUFFER && arg_offset(a, &buffers[a->ref], &offset, r) != RUN_EXIT_OK)
                return r->exit_code;
        }
        if (run_check_declared(cli, l, v.sizes, r) != RUN_EXIT_OK) return r->exit_code;
    }
    return RUN_EXIT_OK;
}

int run_launch_prepare(asyncrt_context *ctx, const run_cli *cli, const asyncrt_program *program,
                       run_buffer *buffers, run_gpu **out, run_result *r)
{
    run_gpu *g = *out = calloc(1, sizeof *g);
    if (!g) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    char err[2048];
    int rc = load(ctx, program, cli->launch_count, &g->module, g->kernels, r);
    if (rc == RUN_EXIT_OK && cli->verbose)
        for (size_t i = 0; i < cli->launch_count; i++)
            fprintf(stderr, "asyncrt-run: loaded in %.1f ms; kernel %s is %s (%d registers, %d B static shared, "
                    "%d B local, at most %d threads)\n", r->load_ms, r->launches[i].kernel,
                    r->launches[i].lowered ? r->launches[i].lowered : r->launches[i].kernel, r->launches[i].regs,
                    r->launches[i].static_shared, r->launches[i].local, r->launches[i].max_threads);
    for (size_t i = 0; rc == RUN_EXIT_OK && i < cli->launch_count; i++) {
        arg_sizes(&cli->launches[i], &g->values[i]);
        rc = check_params(g->kernels[i], cli, i, g->values[i].sizes, r);
    }
    if (rc == RUN_EXIT_OK) {
        asyncrt_status s = run_buffers_upload(ctx, buffers, cli->buffer_count);
        if (s != ASYNCRT_SUCCESS) rc = run_fail_library(r, ctx, s);
    }
    if (rc == RUN_EXIT_OK && (rc = run_tmaps_encode(ctx, cli, buffers, g->maps, err, sizeof err)) != RUN_EXIT_OK)
        run_fail(r, rc, "%s", err);
    if (rc == RUN_EXIT_OK) rc = upload_map_copies(ctx, cli, g->maps, g->map_ptrs, r);
    if (rc == RUN_EXIT_OK) rc = make_streams(ctx, cli, g, r);
    for (size_t i = 0; rc == RUN_EXIT_OK && i < cli->launch_count; i++) {
        rc = arg_values_fill(&cli->launches[i], buffers, g->maps, g->map_ptrs, &g->values[i], r);
        g->prepared[i].kernel = g->kernels[i];
        g->prepared[i].args = g->values[i].args;
        g->prepared[i].sizes = g->values[i].sizes;
    }
    return rc;
}

static asyncrt_launch_config config_of(const run_launch_spec *l, asyncrt_stream stream)
{
    asyncrt_launch_config c = {.size = sizeof c,
                               .shared_bytes = (size_t)l->smem, .stream = stream, .cooperative = l->cooperative,
                               .programmatic_serialization = l->pdl};
    for (int i = 0; i < 3; i++) {
        c.grid[i] = l->grid[i];
        c.block[i] = l->block[i];
        c.cluster[i] = l->cluster[i];
    }
    return c;
}

static int launch_once(const run_cli *cli, size_t i, const run_prepared *p)
{
    asyncrt_launch_config config = config_of(&cli->launches[i], p->stream);
    return asyncrt_kernel_launch(p->kernel, &config, p->args, p->sizes, cli->launches[i].arg_count);
}

asyncrt_status run_launch_all(const run_cli *cli, const run_gpu *g, asyncrt_stream stream)
{
    asyncrt_status s = ASYNCRT_SUCCESS;
    for (size_t i = 0; s == ASYNCRT_SUCCESS && i < cli->launch_count; i++) {
        asyncrt_launch_config config = config_of(&cli->launches[i], stream);
        const run_prepared *p = &g->prepared[i];
        s = asyncrt_kernel_launch(p->kernel, &config, p->args, p->sizes, cli->launches[i].arg_count);
    }
    return s;
}

asyncrt_stream run_launch_stream(const run_gpu *g) { return g->prepared[0].stream; }
asyncrt_module *run_launch_module(const run_gpu *g) { return g->module; }

int run_launch_sequence(asyncrt_context *ctx, const run_cli *cli, const run_gpu *g, run_result *r)
{
    for (size_t i = 0; i < cli->launch_count; i++) {
        const run_launch_spec *l = &cli->launches[i];
        if (cli->verbose)
            fprintf(stderr, "asyncrt-run: launch %zu: %s grid %u,%u,%u block %u,%u,%u cluster %u,%u,%u smem %llu%s%s\n",
                    i + 1, r->launches[i].kernel, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                    l->block[2], l->cluster[0], l->cluster[1], l->cluster[2], (unsigned long long)l->smem,
                    l->cooperative ? " cooperative" : "", l->pdl ? " pdl" : "");
        asyncrt_status s = launch_once(cli, i, &g->prepared[i]);
        bool next_overlaps = i + 1 < cli->launch_count && cli->launches[i + 1].pdl;
        if (s == ASYNCRT_SUCCESS && !next_overlaps) s = asyncrt_synchronize(ctx);
        if (s != ASYNCRT_SUCCESS) {
            int code = run_fail_library(r, ctx, s);
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

static int time_one(asyncrt_context *ctx, const run_cli *cli, size_t i, const run_prepared *p, run_result *r)
{
    asyncrt_timer *timer = NULL;
    float *ms = calloc(cli->repeat, sizeof *ms);
    if (!ms) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    asyncrt_status s = asyncrt_timer_create(ctx, &timer);
    for (unsigned k = 0; s == ASYNCRT_SUCCESS && k < cli->warmup; k++) s = launch_once(cli, i, p);
    /* A sample is one event pair around --batch back-to-back launches: a
     * kernel of a few microseconds is then timed, not the events' jitter. */
    for (unsigned k = 0; s == ASYNCRT_SUCCESS && k < cli->repeat; k++) {
        s = asyncrt_timer_start(timer, p->stream);
        for (unsigned b = 0; s == ASYNCRT_SUCCESS && b < cli->batch; b++) s = launch_once(cli, i, p);
        if (s == ASYNCRT_SUCCESS) s = asyncrt_timer_stop(timer, p->stream);
        if (s == ASYNCRT_SUCCESS) s = asyncrt_timer_elapsed_ms(timer, &ms[k]);
        ms[k] /= (float)cli->batch;
    }
    if (s == ASYNCRT_SUCCESS) s = asyncrt_synchronize(ctx);
    asyncrt_timer_destroy(timer);
    if (s != ASYNCRT_SUCCESS) {
        free(ms);
        return run_fail_library(r, ctx, s);
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

int run_launch_time(asyncrt_context *ctx, const run_cli *cli, const run_gpu *g, const run_buffer *buffers,
                    run_result *r)
{
    for (size_t i = 0; cli->repeat && i < cli->launch_count; i++) {
        r->launches[i].bytes = cli->bytes ? cli->bytes : derived_bytes(cli, &cli->launches[i], buffers);
        int rc = time_one(ctx, cli, i, &g->prepared[i], r);
        if (rc != RUN_EXIT_OK) return rc;
    }
    return RUN_EXIT_OK;
}
