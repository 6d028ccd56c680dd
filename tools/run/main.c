/* asyncrt-run: compile and run one kernel from the shell. main() only
 * sequences the steps; each lives in its own file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/asyncrt.h"
#include "asyncrt/tensormap.h"
#include "buffers.h"
#include "check.h"
#include "cli.h"
#include "launch.h"
#include "npy.h"
#include "report.h"
#include "scan.h"
#include "tmap.h"

/* The whole of a file or of stdin, NUL-terminated. */
static char *read_all(FILE *f)
{
    size_t cap = 1 << 16, size = 0;
    char *data = malloc(cap);
    for (size_t n; data; size += n) {
        if (size + 1 >= cap) {
            char *grown = realloc(data, cap * 2);
            if (!grown) break;
            data = grown;
            cap *= 2;
        }
        if (!(n = fread(data + size, 1, cap - size - 1, f))) {
            if (ferror(f)) break;
            data[size] = '\0';
            return data;
        }
    }
    free(data);
    return NULL;
}

static int read_source(const run_cli *cli, char **source, char **dir, run_result *r)
{
    *dir = NULL;
    if (!strcmp(cli->source, "-")) {
        if (!(*source = read_all(stdin))) return run_fail(r, RUN_EXIT_IO, "cannot read the source from stdin");
        return RUN_EXIT_OK;
    }
    FILE *f = fopen(cli->source, "rb");
    if (!f) return run_fail(r, RUN_EXIT_IO, "cannot open %s: %s", cli->source, strerror(errno));
    *source = read_all(f);
    fclose(f);
    if (!*source) return run_fail(r, RUN_EXIT_IO, "cannot read %s", cli->source);
    const char *slash = strrchr(cli->source, '/');
    *dir = slash ? strndup(cli->source, (size_t)(slash - cli->source) + (slash == cli->source)) : strdup(".");
    return *dir ? RUN_EXIT_OK : run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
}

static int choose_kernel(const run_cli *cli, const char *source, run_result *r)
{
    if (cli->kernel) {
        snprintf(r->kernel, sizeof r->kernel, "%s", cli->kernel);
        return RUN_EXIT_OK;
    }
    run_found_kernel found[16];
    size_t n = run_scan_kernels(source, found, 16);
    if (n == 1 && !found[0].is_template) {
        snprintf(r->kernel, sizeof r->kernel, "%s", found[0].name);
        return RUN_EXIT_OK;
    }
    if (n == 0) return run_fail(r, RUN_EXIT_USAGE, "no __global__ function found in %s; name one with --kernel", cli->source);
    if (n == 1)
        return run_fail(r, RUN_EXIT_USAGE, "kernel '%s' is a template: name an instantiation, e.g. --kernel '%s<float>'",
                        found[0].name, found[0].name);
    char list[2048] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && i < 16 && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s%s", i ? ", " : "", found[i].name,
                                 found[i].is_template ? "<...>" : "");
    return run_fail(r, RUN_EXIT_USAGE, "%s has %zu kernels (%s%s); choose one with --kernel", cli->source, n, list,
                    n > 16 ? ", ..." : "");
}

static int open_device(asyncrt_context *ctx, const run_cli *cli, run_result *r)
{
    int count = 0;
    asyncrt_status s = asyncrt_device_count(ctx, &count);
    if (s == ASYNCRT_SUCCESS && cli->device >= count)
        return run_fail(r, RUN_EXIT_NO_DEVICE, "--device %d: this machine has %d CUDA device%s", cli->device, count,
                        count == 1 ? "" : "s");
    if (s == ASYNCRT_SUCCESS) s = asyncrt_context_open_device(ctx, cli->device);
    if (s != ASYNCRT_SUCCESS) return run_fail(r, run_exit_for_status(s), "%s", asyncrt_context_last_error(ctx));
    const asyncrt_device_info *d = asyncrt_context_device(ctx);
    if (cli->verbose)
        fprintf(stderr, "asyncrt-run: device %d: %s, compute capability %d.%d, driver CUDA %d.%d, NVRTC %d.%d\n",
                d->ordinal, d->name, d->cc_major, d->cc_minor, d->driver_version / 1000, d->driver_version % 1000 / 10,
                d->nvrtc_version / 1000, d->nvrtc_version % 1000 / 10);
    return RUN_EXIT_OK;
}

/* Pointers to every argument's value, and their sizes. */
typedef struct arg_values {
    uint64_t scalars[RUN_MAX_ITEMS];
    asyncrt_deviceptr pointers[RUN_MAX_ITEMS];
    asyncrt_tensor_map maps[RUN_MAX_ITEMS];
    void *args[RUN_MAX_ITEMS];
    size_t sizes[RUN_MAX_ITEMS];
} arg_values;

static void arg_sizes(const run_cli *cli, arg_values *v)
{
    for (size_t i = 0; i < cli->arg_count; i++) {
        const run_arg_spec *a = &cli->args[i];
        v->sizes[i] = a->kind == RUN_ARG_SCALAR ? run_dtype_size(a->dtype)
                      : a->kind == RUN_ARG_BUFFER ? sizeof(asyncrt_deviceptr) : sizeof(asyncrt_tensor_map);
    }
}

static void arg_pointers(const run_cli *cli, const run_buffer *buffers, arg_values *v)
{
    for (size_t i = 0; i < cli->arg_count; i++) {
        const run_arg_spec *a = &cli->args[i];
        if (a->kind == RUN_ARG_SCALAR) {
            run_value_store(a->dtype, a->value, &v->scalars[i]);
            v->args[i] = &v->scalars[i];
        } else if (a->kind == RUN_ARG_BUFFER) {
            v->pointers[i] = buffers[a->ref].dev;
            v->args[i] = &v->pointers[i];
        } else {
            v->args[i] = &v->maps[a->ref];
        }
    }
}

/* Bytes of the distinct buffers the arguments reach, for GB/s. */
static uint64_t derived_bytes(const run_cli *cli, const run_buffer *buffers)
{
    bool used[RUN_MAX_ITEMS] = {false};
    uint64_t total = 0;
    for (size_t i = 0; i < cli->arg_count; i++) {
        const run_arg_spec *a = &cli->args[i];
        int b = a->kind == RUN_ARG_BUFFER ? a->ref : a->kind == RUN_ARG_TMAP ? cli->tmaps[a->ref].buffer : -1;
        if (b >= 0 && !used[b]) {
            used[b] = true;
            total += buffers[b].bytes;
        }
    }
    return total;
}

static int write_outputs(const run_cli *cli, const run_buffer *buffers, run_result *r)
{
    char err[1024];
    for (size_t i = 0; i < cli->out_count; i++) {
        const run_buffer *b = &buffers[cli->outs[i].buffer];
        run_dtype t = b->dtype == RUN_BF16 ? RUN_F32 : b->dtype; /* numpy has no bfloat16 */
        void *data = b->host;
        float *widened = NULL;
        if (t != b->dtype) {
            if (!(widened = malloc(b->count * sizeof *widened + 1))) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
            for (uint64_t j = 0; j < b->count; j++) widened[j] = (float)run_value_load(RUN_BF16, (char *)b->host + 2 * j);
            data = widened;
        }
        bool ok = run_npy_write(cli->outs[i].path, t, b->shape, b->rank, data, err, sizeof err);
        free(widened);
        if (!ok) return run_fail(r, RUN_EXIT_IO, "--out %s: %s", b->name, err);
    }
    return RUN_EXIT_OK;
}

static int check_expectations(const run_cli *cli, const run_buffer *buffers, run_result *r)
{
    char err[1024];
    bool mismatch = false;
    for (size_t i = 0; i < cli->expect_count; i++) {
        const run_buffer *b = &buffers[cli->expects[i].buffer];
        run_npy npy;
        void *storage = NULL;
        if (!run_npy_read(cli->expects[i].path, &npy, &storage, err, sizeof err))
            return run_fail(r, RUN_EXIT_IO, "--expect %s: %s", b->name, err);
        if (npy.count != b->count) {
            free(storage);
            return run_fail(r, RUN_EXIT_MISMATCH, "--expect %s: %s holds %llu elements but the buffer has %llu", b->name,
                            cli->expects[i].path, (unsigned long long)npy.count, (unsigned long long)b->count);
        }
        double rtol, atol;
        run_check_default_tolerance(b->dtype, &rtol, &atol);
        if (cli->rtol >= 0) rtol = cli->rtol;
        if (cli->atol >= 0) atol = cli->atol;
        run_check *c = &r->checks[r->check_count++];
        c->buffer = b->name;
        c->path = cli->expects[i].path;
        run_check_compare(c, b->dtype, b->host, npy.dtype, npy.data, b->count, rtol, atol);
        free(storage);
        mismatch |= c->mismatches > 0;
    }
    if (mismatch) {
        char names[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < r->check_count && used < sizeof names; i++)
            if (r->checks[i].mismatches)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", r->checks[i].buffer);
        return run_fail(r, RUN_EXIT_MISMATCH, "--expect: %s differ%s from the expected values", names,
                        strchr(names, ',') ? "" : "s");
    }
    return RUN_EXIT_OK;
}

/* Everything after the source is compiled: buffers, tensor maps, launch,
 * read-back, outputs, checks, timing. */
static int run_kernel(asyncrt_context *ctx, const run_cli *cli, const asyncrt_program *program, run_buffer *buffers,
                      run_result *r)
{
    asyncrt_module *module = NULL;
    asyncrt_kernel *kernel = NULL;
    arg_values *v = calloc(1, sizeof *v);
    if (!v) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    char err[2048];
    int rc = run_load(ctx, program, &module, &kernel, r);
    if (rc == RUN_EXIT_OK && cli->verbose)
        fprintf(stderr, "asyncrt-run: loaded in %.1f ms; kernel %s is %s\n", r->load_ms, r->kernel,
                r->lowered ? r->lowered : r->kernel);
    arg_sizes(cli, v);
    if (rc == RUN_EXIT_OK) rc = run_check_params(kernel, cli, v->sizes, r);
    if (rc == RUN_EXIT_OK) {
        asyncrt_status s = run_buffers_upload(ctx, buffers, cli->buffer_count);
        if (s != ASYNCRT_SUCCESS) rc = run_fail(r, run_exit_for_status(s), "%s", asyncrt_context_last_error(ctx));
    }
    if (rc == RUN_EXIT_OK && (rc = run_tmaps_encode(ctx, cli, buffers, v->maps, err, sizeof err)) != RUN_EXIT_OK)
        run_fail(r, rc, "%s", err);
    if (rc == RUN_EXIT_OK) {
        arg_pointers(cli, buffers, v);
        rc = run_launch(ctx, kernel, cli, v->args, v->sizes, r);
    }
    if (rc == RUN_EXIT_OK) {
        asyncrt_status s = run_buffers_download(ctx, buffers, cli->buffer_count);
        if (s != ASYNCRT_SUCCESS) rc = run_fail(r, run_exit_for_status(s), "%s", asyncrt_context_last_error(ctx));
    }
    if (rc == RUN_EXIT_OK) rc = write_outputs(cli, buffers, r);
    int checked = rc == RUN_EXIT_OK ? check_expectations(cli, buffers, r) : rc;
    if ((checked == RUN_EXIT_OK || checked == RUN_EXIT_MISMATCH) && cli->repeat) {
        r->bytes = cli->bytes ? cli->bytes : derived_bytes(cli, buffers);
        int timed = run_time(ctx, kernel, cli, v->args, v->sizes, r);
        if (timed != RUN_EXIT_OK && checked == RUN_EXIT_OK) checked = timed;
    }
    asyncrt_module_destroy(module);
    free(v);
    return checked;
}

int main(int argc, char **argv)
{
    run_cli *cli = calloc(1, sizeof *cli);
    run_result *r = calloc(1, sizeof *r);
    run_buffer *buffers = calloc(RUN_MAX_ITEMS, sizeof *buffers);
    if (!cli || !r || !buffers) {
        fputs("asyncrt-run: out of memory\n", stderr);
        return RUN_EXIT_INTERNAL;
    }
    char err[2048];
    int rc = run_cli_parse(argc, argv, cli, err, sizeof err);
    if (rc != RUN_EXIT_OK) {
        fprintf(stderr, "asyncrt-run: error: %s\n(asyncrt-run --help lists the options)\n", err);
        free(cli), free(r), free(buffers);
        return rc;
    }
    if (cli->help || cli->version) {
        if (cli->help) fputs(run_cli_usage(), stdout);
        else printf("asyncrt-run %s (NVRTC %d)\n", ASYNCRT_VERSION_STRING, asyncrt_nvrtc_version());
        free(cli), free(r), free(buffers);
        return RUN_EXIT_OK;
    }
    char *source = NULL, *dir = NULL;
    asyncrt_context *ctx = NULL;
    asyncrt_program *program = NULL;
    rc = read_source(cli, &source, &dir, r);
    if (rc == RUN_EXIT_OK) rc = choose_kernel(cli, source, r);
    if (rc == RUN_EXIT_OK && !cli->compile_only && (rc = run_buffers_init(cli, buffers, err, sizeof err)) != RUN_EXIT_OK)
        run_fail(r, rc, "%s", err);
    /* Tensor maps are validated before the driver is needed: a map the driver
     * would refuse is a usage error on any machine, GPU or not. */
    asyncrt_tensormap_desc desc;
    for (size_t i = 0; rc == RUN_EXIT_OK && !cli->compile_only && i < cli->tmap_count; i++)
        if (!run_tmap_describe(&cli->tmaps[i], &buffers[cli->tmaps[i].buffer], &desc, err, sizeof err))
            rc = run_fail(r, RUN_EXIT_USAGE, "%s", err);
    if (rc == RUN_EXIT_OK && asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS)
        rc = run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    if (rc == RUN_EXIT_OK && cli->verbose >= 2) asyncrt_context_set_log_level(ctx, 2);
    if (rc == RUN_EXIT_OK && !cli->compile_only) rc = open_device(ctx, cli, r);
    const char *source_name = strcmp(cli->source, "-") ? cli->source : "stdin.cu";
    if (rc == RUN_EXIT_OK) rc = run_compile(ctx, cli, source_name, source, dir, &program, r);
    if (rc == RUN_EXIT_OK && !cli->compile_only) rc = run_kernel(ctx, cli, program, buffers, r);

    if (cli->json) run_report_json(cli, r, buffers, stdout);
    else run_report_text(cli, r, buffers, stdout);
    if (r->exit_code != RUN_EXIT_OK) fprintf(stderr, "asyncrt-run: error: %s\n", r->error ? r->error : "(no message)");
    fflush(stdout);
    rc = r->exit_code;
    asyncrt_program_destroy(program);
    run_buffers_free(ctx, buffers, cli->buffer_count);
    asyncrt_context_destroy(ctx);
    free(source);
    free(dir);
    free(r->error);
    free(cli), free(r), free(buffers);
    return rc;
}
