/* asyncrt-run: compile and run one kernel from the shell. main() only
 * sequences the steps; each lives in its own file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "asyncrt/asyncrt.h"
#include "asyncrt/tensormap.h"
#include "buffers.h"
#include "check.h"
#include "graph.h"
#include "cli.h"
#include "compile_stage.h"
#include "launch.h"
#include "link_run.h"
#include "npy.h"
#include "report.h"
#include "scan.h"
#include "tmap.h"
#include "tool.h"

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

/* Why a template kernel needs its arguments, with its real parameter list. */
static int template_hint(run_result *r, const run_found_kernel *k, const char *given)
{
    char example[RUN_SCAN_NAME_MAX + 64];
    run_scan_example(k, example, sizeof example);
    char params[RUN_SCAN_NAME_MAX + 16] = "";
    if (k->template_params[0]) snprintf(params, sizeof params, " <%s>", k->template_params);
    return run_fail(r, RUN_EXIT_USAGE, "kernel '%s' is a template%s%s%s: name an instantiation, e.g. --kernel '%s'",
                    k->name, params, given ? "; --kernel " : "", given ? given : "", example);
}

/* Fills each launch's kernel name (the file's only kernel where --kernel is
 * not given) and the parameter count the source declares. */
static int choose_kernels(const run_cli *cli, const char *source, run_result *r)
{
    if (cli->emit_lib) return RUN_EXIT_OK; /* a library: no kernel, no launch */
    run_found_kernel *found = calloc(64, sizeof *found);
    if (!found) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    size_t n = run_scan_kernels(source, found, 64);
    int rc = RUN_EXIT_OK;
    r->launch_count = cli->launch_count;
    for (size_t i = 0; rc == RUN_EXIT_OK && i < cli->launch_count; i++) {
        run_launch_result *l = &r->launches[i];
        const char *given = cli->launches[i].kernel;
        const run_found_kernel *k = given ? run_scan_find(found, n < 64 ? n : 64, given) : n == 1 ? &found[0] : NULL;
        l->declared_params = k ? k->param_count : -1;
        if (given) {
            /* A template named without its arguments: NVRTC would say only
             * "cannot determine which instance". */
            if (k && k->is_template && !strchr(given, '<')) rc = template_hint(r, k, given);
            snprintf(l->kernel, sizeof l->kernel, "%s", given);
        } else if (n == 1 && !found[0].is_template) {
            snprintf(l->kernel, sizeof l->kernel, "%s", found[0].name);
        } else if (n == 0) {
            rc = run_fail(r, RUN_EXIT_USAGE, "no __global__ function found in %s; name one with --kernel", cli->source);
        } else if (n == 1) {
            rc = template_hint(r, &found[0], NULL);
        } else {
            char list[2048] = "";
            size_t used = 0;
            for (size_t j = 0; j < n && j < 64 && used < sizeof list; j++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s%s", j ? ", " : "", found[j].name,
                                         found[j].is_template ? "<...>" : "");
            rc = run_fail(r, RUN_EXIT_USAGE, "%s has %zu kernels (%s%s); choose one with --kernel%s", cli->source, n,
                          list, n > 64 ? ", ..." : "", cli->launch_count > 1 ? " in every launch" : "");
        }
    }
    /* Kept for the hint after a compile that could not resolve a name. */
    if (rc == RUN_EXIT_OK) r->scan = found, r->scan_count = n < 64 ? n : 64;
    else free(found);
    return rc;
}

/* Device `ordinal` on ctx: opened here for the first, a peer of the first's
 * context (one cache: the compile is a memory hit) for the others of --devices all. */
static int open_device(asyncrt_context *ctx, const run_cli *cli, int ordinal, run_result *r)
{
    int count = 0;
    asyncrt_status s = asyncrt_device_count(ctx, &count);
    if (s == ASYNCRT_SUCCESS && ordinal >= count)
        return run_fail(r, RUN_EXIT_NO_DEVICE, "--device %d: this machine has %d CUDA device%s", ordinal, count,
                        count == 1 ? "" : "s");
    if (s == ASYNCRT_SUCCESS && !asyncrt_context_device(ctx)) s = asyncrt_context_open_device(ctx, ordinal);
    if (s == ASYNCRT_ERROR_NO_DRIVER)
        return run_fail(r, RUN_EXIT_NO_DEVICE, "%s\nhint: without a GPU, compile only: asyncrt-run %s --compile-only "
                        "--arch sm_XY (e.g. sm_90; add --emit-cubin FILE to keep the image)",
                        asyncrt_context_last_error(ctx), cli->source);
    if (s != ASYNCRT_SUCCESS) return run_fail_library(r, ctx, s);
    const asyncrt_device_info *d = asyncrt_context_device(ctx);
    char driver[16], nvrtc[16];
    tool_format_cuda_version(d->driver_version, driver, sizeof driver);
    tool_format_cuda_version(d->nvrtc_version, nvrtc, sizeof nvrtc);
    if (cli->verbose)
        fprintf(stderr, "asyncrt-run: device %d: %s, compute capability %d.%d, driver CUDA %s, NVRTC %s\n",
                d->ordinal, d->name, d->cc_major, d->cc_minor, driver, nvrtc);
    return RUN_EXIT_OK;
}

/* --devices all: how many there are (none is NO_DEVICE, as --device 0 would be). */
static int count_devices(asyncrt_context *ctx, int *devices, run_result *r)
{
    asyncrt_status s = asyncrt_device_count(ctx, devices);
    bool none = s == ASYNCRT_SUCCESS && *devices < 1;
    if (s != ASYNCRT_SUCCESS || none) *devices = 1; /* the one report, of the failure */
    if (s == ASYNCRT_ERROR_NO_DRIVER || s == ASYNCRT_ERROR_NO_DEVICE || none)
        return run_fail(r, RUN_EXIT_NO_DEVICE, "--devices all: %s",
                        none ? "this machine has no CUDA device" : asyncrt_context_last_error(ctx));
    return s == ASYNCRT_SUCCESS ? RUN_EXIT_OK : run_fail_library(r, ctx, s);
}

static const char *device_label(int d)
{
    static char label[32]; /* one thread; used at once */
    snprintf(label, sizeof label, "device %d: ", d);
    return label;
}

/* --devices all, device d > 0: the result as it stood before device 0 ran
 * (the kernels chosen, the source scanned), fresh buffers from the same
 * command line, and a peer context sharing ctx's cache. */
static int next_device(asyncrt_context *ctx, const run_cli *cli, int d, const run_result *start, run_buffer *buffers,
                       asyncrt_context **peer, run_result *r)
{
    free(r->error);
    asyncrt_bundle_destroy(r->bundle);
    asyncrt_program_destroy(r->named);
    *r = *start;
    char err[1024];
    int rc = run_buffers_init(cli, buffers, err, sizeof err);
    if (rc != RUN_EXIT_OK) return run_fail(r, rc, "%s", err);
    asyncrt_status s = asyncrt_context_create_peer(ctx, d, peer);
    return s == ASYNCRT_SUCCESS ? RUN_EXIT_OK : run_fail_library(r, ctx, s);
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

/* --expect i's reference, read and sized against its buffer; *storage to free. */
static int read_expected(const run_cli *cli, size_t i, const run_buffer *buffers, run_npy *npy, void **storage,
                         run_result *r)
{
    char err[1024];
    const run_buffer *b = &buffers[cli->expects[i].buffer];
    *storage = NULL;
    if (!run_npy_read(cli->expects[i].path, npy, storage, err, sizeof err))
        return run_fail(r, RUN_EXIT_IO, "--expect %s: %s", b->name, err);
    if (npy->count != b->count) {
        /* The same code as --buf NAME=...:npy=FILE with a wrong count: the file does not fit. */
        free(*storage);
        *storage = NULL;
        return run_fail(r, RUN_EXIT_USAGE, "--expect %s: %s holds %llu elements but the buffer has %llu", b->name,
                        cli->expects[i].path, (unsigned long long)npy->count, (unsigned long long)b->count);
    }
    return RUN_EXIT_OK;
}

static int check_expectations(const run_cli *cli, const run_buffer *buffers, run_result *r)
{
    bool mismatch = false;
    for (size_t i = 0; i < cli->expect_count; i++) {
        const run_buffer *b = &buffers[cli->expects[i].buffer];
        run_npy npy;
        void *storage = NULL;
        if (read_expected(cli, i, buffers, &npy, &storage, r) != RUN_EXIT_OK) return r->exit_code;
        double rtol, atol;
        run_check_default_tolerance(b->dtype, &rtol, &atol);
        if (cli->rtol >= 0) rtol = cli->rtol;
        if (cli->atol >= 0) atol = cli->atol;
        if (cli->expects[i].rtol >= 0) rtol = cli->expects[i].rtol;
        if (cli->expects[i].atol >= 0) atol = cli->expects[i].atol;
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

/* Before anything runs: each --out goes into a writable directory, and
 * does not name an --expect reference under another spelling (./x, a link:
 * compared by file identity). */
static int check_out_files(const run_cli *cli, run_result *r)
{
    for (size_t i = 0; i < cli->out_count; i++) {
        const char *path = cli->outs[i].path, *slash = strrchr(path, '/');
        char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
        int writable = dir ? access(dir, W_OK | X_OK) : -1, why = errno;
        if (!dir) return run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
        if (writable != 0) {
            run_fail(r, RUN_EXIT_IO, "--out %s: cannot write into %s (%s)", path, dir, strerror(why));
            free(dir);
            return r->exit_code;
        }
        free(dir);
        struct stat o, e;
        if (stat(path, &o) != 0) continue;
        for (size_t j = 0; j < cli->expect_count; j++)
            if (stat(cli->expects[j].path, &e) == 0 && o.st_dev == e.st_dev && o.st_ino == e.st_ino)
                return run_fail(r, RUN_EXIT_USAGE, "--out %s and --expect %s are the same file: the result would "
                                "overwrite the reference", cli->outs[i].path, cli->expects[j].path);
    }
    return RUN_EXIT_OK;
}

/* --compile-only: the arguments as launch.c checks them without a device,
 * and each --expect reference readable and of its buffer's size. */
static int check_without_device(const run_cli *cli, const run_buffer *buffers, run_result *r)
{
    if (run_check_without_device(cli, buffers, r) != RUN_EXIT_OK) return r->exit_code;
    for (size_t i = 0; i < cli->expect_count; i++) {
        run_npy npy;
        void *storage;
        int rc = read_expected(cli, i, buffers, &npy, &storage, r);
        free(storage);
        if (rc != RUN_EXIT_OK) return rc;
    }
    return RUN_EXIT_OK;
}

/* Everything after the source is compiled: the launch stage (launch.c),
 * then read-back, outputs, checks and timing. */
static int run_kernels(asyncrt_context *ctx, const run_cli *cli, const asyncrt_program *program, run_buffer *buffers,
                       run_result *r)
{
    run_gpu *g = NULL;
    run_graph *graph = NULL;
    int rc = run_launch_prepare(ctx, cli, program, buffers, &g, r);
    /* --graph: the checked run is the captured graph's first replay */
    if (rc == RUN_EXIT_OK) rc = cli->graph ? run_graph_first(ctx, cli, g, &graph, r) : run_launch_sequence(ctx, cli, g, r);
    if (rc == RUN_EXIT_OK) {
        asyncrt_status s = run_buffers_download(ctx, buffers, cli->buffer_count);
        if (s != ASYNCRT_SUCCESS) rc = run_fail_library(r, ctx, s);
    }
    if (rc == RUN_EXIT_OK) rc = write_outputs(cli, buffers, r);
    int checked = rc == RUN_EXIT_OK ? check_expectations(cli, buffers, r) : rc;
    if (checked == RUN_EXIT_OK || checked == RUN_EXIT_MISMATCH) {
        int timed = run_launch_time(ctx, cli, g, buffers, r);
        if (timed != RUN_EXIT_OK && checked == RUN_EXIT_OK) checked = timed;
        timed = cli->graph ? run_graph_time(ctx, cli, g, graph, r) : RUN_EXIT_OK;
        if (timed != RUN_EXIT_OK && checked == RUN_EXIT_OK) checked = timed;
    }
    run_graph_free(ctx, graph);
    run_launch_free(ctx, g);
    return checked;
}

/* After a compile that failed only because NVRTC could not resolve a
 * --kernel name: say which kernels the file has instead of NVRTC's
 * "__nv_name_map" errors. */
static void name_hint(const run_cli *cli, run_result *r)
{
    if (!r->name_error) return;
    char list[1024] = "";
    size_t used = 0;
    for (size_t j = 0; j < r->scan_count && used < sizeof list; j++) {
        char example[RUN_SCAN_NAME_MAX + 64];
        if (r->scan[j].is_template) run_scan_example(&r->scan[j], example, sizeof example);
        else snprintf(example, sizeof example, "%s", r->scan[j].name);
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", j ? ", " : "", example);
    }
    /* NVRTC's own words, without the generated file's name: "error: identifier ... is undefined". */
    char nvrtc[512] = "";
    const char *line = r->error ? strstr(r->error, "__nv_name_map") : NULL;
    const char *what = line ? strstr(line, "error: ") : NULL;
    if (what) snprintf(nvrtc, sizeof nvrtc, "%.*s", (int)strcspn(what + 7, "\n"), what + 7);
    free(r->error);
    r->error = NULL;
    r->exit_code = RUN_EXIT_OK;
    char names[512] = "";
    size_t n = 0;
    for (size_t i = 0; i < r->launch_count && n < sizeof names; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", r->launches[i].kernel);
    run_fail(r, RUN_EXIT_USAGE, "--kernel %s: NVRTC cannot resolve %s%s%s%s; %s has: %s", names,
             r->launch_count > 1 ? "one of them" : "it", nvrtc[0] ? " (" : "", nvrtc, nvrtc[0] ? ")" : "", cli->source,
             list[0] ? list : "no __global__ function");
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
        if (rc == RUN_EXIT_USAGE) tool_usage_error("asyncrt-run", "%s", err);
        else fprintf(stderr, "asyncrt-run: error: %s\n", err);
        free(cli), free(r), free(buffers);
        return rc;
    }
    if (cli->help || cli->version) {
        char version[160];
        tool_version_line("asyncrt-run", version, sizeof version);
        if (cli->help) printf("%s\n%s", version, run_cli_usage());
        else printf("%s\n", version);
        free(cli), free(r), free(buffers);
        return RUN_EXIT_OK;
    }
    char *source = NULL, *dir = NULL;
    asyncrt_context *ctx = NULL;
    asyncrt_program *program = NULL;
    char *all_sources = NULL; /* several: their texts joined, for the kernel scan (link_run.h) */
    rc = read_source(cli, &source, &dir, r);
    if (rc == RUN_EXIT_OK && cli->more_source_count) rc = run_link_join_sources(cli, source, &all_sources, r);
    if (rc == RUN_EXIT_OK) rc = choose_kernels(cli, all_sources ? all_sources : source, r);
    /* A source that does not compile says so before any verdict on its kernels. */
    if (rc == RUN_EXIT_USAGE && asyncrt_context_create(&ctx) == ASYNCRT_SUCCESS)
        rc = run_compile_errors(ctx, cli, source, r);
    if (rc == RUN_EXIT_OK && (rc = run_buffers_init(cli, buffers, err, sizeof err)) != RUN_EXIT_OK)
        run_fail(r, rc, "%s", err);
    if (rc == RUN_EXIT_OK) rc = check_out_files(cli, r);
    /* Tensor maps are validated before the driver is needed: a map the driver
     * would refuse is a usage error on any machine, GPU or not. */
    asyncrt_tensormap_desc desc;
    for (size_t i = 0; rc == RUN_EXIT_OK && i < cli->tmap_count; i++)
        if (!run_tmap_describe(&cli->tmaps[i], &buffers[cli->tmaps[i].buffer], &desc, err, sizeof err))
            rc = run_fail(r, RUN_EXIT_USAGE, "%s", err);
    if (rc == RUN_EXIT_OK && cli->compile_only) rc = check_without_device(cli, buffers, r);
    if (rc == RUN_EXIT_OK && asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS)
        rc = run_fail(r, RUN_EXIT_INTERNAL, "out of memory");
    if (rc == RUN_EXIT_OK && cli->verbose >= 2) asyncrt_context_set_log_level(ctx, 2);
    if (rc == RUN_EXIT_OK) r->progress = tool_progress_new(ctx, "", cli->quiet || cli->verbose >= 2);
    int devices = 1;
    if (rc == RUN_EXIT_OK && cli->all_devices) rc = count_devices(ctx, &devices, r);
    const run_result start = *r; /* what each device's run starts from (--devices all) */
    if (cli->json && cli->all_devices) fputs("[", stdout);
    for (int d = 0; d < devices; d++) {
        asyncrt_context *here = ctx, *peer = NULL;
        if (d > 0 && rc == RUN_EXIT_OK) rc = next_device(ctx, cli, d, &start, buffers, &peer, r);
        if (peer) here = peer;
        int ordinal = cli->all_devices ? d : cli->device;
        if (cli->all_devices && !cli->json && rc == RUN_EXIT_OK) printf("device %d of %d\n", d, devices);
        if (rc == RUN_EXIT_OK && !cli->compile_only && !cli->emit_lib) rc = open_device(here, cli, ordinal, r);
        const char *source_name = strcmp(cli->source, "-") ? cli->source : "stdin.cu";
        if (rc == RUN_EXIT_OK && cli->emit_lib) rc = run_emit_lib(here, cli, source_name, source, r);
        else if (rc == RUN_EXIT_OK && run_link_wanted(cli)) rc = run_link_compile(here, cli, source, &program, r);
        else if (rc == RUN_EXIT_OK && (rc = run_compile(here, cli, source_name, source, dir, &program, r)) != RUN_EXIT_OK)
            name_hint(cli, r);
        if (rc == RUN_EXIT_OK && cli->image) rc = run_use_image(here, cli->image, &program, r);
        if (rc == RUN_EXIT_OK && !cli->compile_only && !cli->emit_lib) rc = run_kernels(here, cli, program, buffers, r);

        if (cli->json) run_report_json(cli, r, buffers, stdout);
        else run_report_text(cli, r, buffers, stdout);
        if (r->exit_code != RUN_EXIT_OK)
            fprintf(stderr, "asyncrt-run: error: %s%s\n", devices > 1 ? device_label(d) : "",
                    r->error ? r->error : "(no message)");
        rc = r->exit_code;
        asyncrt_program_destroy(program);
        program = NULL;
        run_buffers_free(here, buffers, cli->buffer_count);
        asyncrt_context_destroy(peer);
        if (rc != RUN_EXIT_OK) break; /* the first device that fails ends the run */
        if (cli->json && d + 1 < devices) fputs(",", stdout);
    }
    if (cli->json && cli->all_devices) fputs("]\n", stdout);
    fflush(stdout);
    asyncrt_context_destroy(ctx);
    free(source);
    free(all_sources);
    free(dir);
    free(r->error);
    free(r->scan);
    asyncrt_bundle_destroy(r->bundle);
    asyncrt_program_destroy(r->named);
    tool_progress_free(r->progress);
    free(cli), free(r), free(buffers);
    return rc;
}
