/* Rendering a run_result. Text goes to `out` (stdout); errors are printed by
 * main to stderr. */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "link_run.h"
#include "tool.h"

int run_fail(run_result *r, int code, const char *fmt, ...)
{
    if (r->exit_code != RUN_EXIT_OK) return r->exit_code;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    free(r->error);
    r->error = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (r->error) {
        va_start(ap, fmt);
        vsnprintf(r->error, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return r->exit_code = code;
}

int run_fail_library(run_result *r, const asyncrt_context *ctx, asyncrt_status s)
{
    return run_fail(r, tool_exit_for_status(s), "%s", asyncrt_context_last_error(ctx));
}

double run_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void text_check(const run_check *c, const run_buffer *b, FILE *out)
{
    if (!c->mismatches) {
        fprintf(out, "check %s: all %llu elements match %s (max |error| %.3Lg)\n", c->buffer,
                (unsigned long long)c->checked, c->path, c->max_abs_err);
        return;
    }
    fprintf(out, "check %s: %llu of %llu elements differ from %s (rtol %g, atol %g); first %zu:\n", c->buffer,
            (unsigned long long)c->mismatches, (unsigned long long)c->checked, c->path, c->rtol, c->atol, c->shown);
    for (size_t i = 0; i < c->shown; i++) {
        char idx[200];
        run_check_format_index(b, c->first[i].index, idx, sizeof idx);
        fprintf(out, "  %s%s: got %.9Lg, expected %.9Lg\n", c->buffer, idx, c->first[i].got, c->first[i].expected);
    }
}

static void text_timing(const run_cli *cli, const run_launch_result *l, size_t i, FILE *out)
{
    if (!l->timed) return;
    if (cli->launch_count > 1) fprintf(out, "launch %zu (%s) ", i + 1, l->kernel);
    fprintf(out, "time: median %.4f ms, min %.4f ms, max %.4f ms over %u launches (warm-up %u)", l->median_ms,
            l->min_ms, l->max_ms, cli->repeat, cli->warmup);
    if (cli->batch > 1) fprintf(out, ", each the mean of a batch of %u", cli->batch);
    if (l->bytes) fprintf(out, "; %llu bytes: %.1f GB/s", (unsigned long long)l->bytes, l->gbps);
    fputc('\n', out);
}

void run_report_text(const run_cli *cli, const run_result *r, const run_buffer *buffers, FILE *out)
{
    if (r->exit_code != RUN_EXIT_OK && r->exit_code != RUN_EXIT_MISMATCH) return;
    if (cli->emit_lib) {
        fprintf(out, "library %s for %s (%s, %zu bytes): %s\n", cli->source, r->arch,
                run_emit_lib_lto(cli->emit_lib) ? "LTO-IR" : "relocatable CUBIN", r->image_bytes, cli->emit_lib);
        return;
    }
    if (cli->compile_only) {
        for (size_t i = 0; i < r->launch_count; i++)
            fprintf(out, "compiled %s for %s (%s, %zu bytes)\n", r->launches[i].kernel, r->arch,
                    r->is_ptx ? "PTX" : "CUBIN", r->image_bytes);
        return;
    }
    for (size_t i = 0; i < r->check_count; i++) text_check(&r->checks[i], &buffers[cli->expects[i].buffer], out);
    for (size_t i = 0; i < r->launch_count; i++) text_timing(cli, &r->launches[i], i, out);
    if (r->graph_timed)
        fprintf(out, "graph: %zu launch%s captured once; per iteration, median of %u (warm-up %u): graph replay "
                "%.4f ms, stream launches %.4f ms (%.2fx)\n", cli->launch_count, cli->launch_count == 1 ? "" : "es",
                cli->graph, cli->warmup, r->graph_ms, r->stream_ms, r->graph_ms > 0 ? r->stream_ms / r->graph_ms : 0.0);
    if (r->exit_code != RUN_EXIT_OK) return;
    for (size_t i = 0; i < r->launch_count; i++) {
        const run_launch_spec *l = &cli->launches[i];
        fprintf(out, "ok: %s on %s, grid %u,%u,%u block %u,%u,%u%s%s\n", r->launches[i].kernel, r->arch, l->grid[0],
                l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->cooperative ? ", cooperative" : "",
                l->pdl ? ", PDL" : "");
    }
}

/* JSON has no NaN or infinity: those become strings. */
static void json_number(FILE *out, long double v)
{
    if (isnan(v)) fputs("\"nan\"", out);
    else if (isinf(v)) fputs(v > 0 ? "\"inf\"" : "\"-inf\"", out);
    else fprintf(out, "%.9Lg", v);
}

static void json_dim3(FILE *out, const char *key, const unsigned d[3])
{
    fprintf(out, ",\"%s\":[%u,%u,%u]", key, d[0], d[1], d[2]);
}

static void json_timing(FILE *out, const run_cli *cli, const run_launch_result *l)
{
    fprintf(out, ",\"timing\":{\"repeat\":%u,\"warmup\":%u,\"batch\":%u,\"median_ms\":%.6f,\"min_ms\":%.6f,"
            "\"max_ms\":%.6f", cli->repeat, cli->warmup, cli->batch, l->median_ms, l->min_ms, l->max_ms);
    if (l->bytes) fprintf(out, ",\"bytes\":%llu,\"gbps\":%.3f", (unsigned long long)l->bytes, l->gbps);
    fputc('}', out);
}

static void json_params(FILE *out, const run_launch_result *l)
{
    if (l->regs || l->max_threads)
        fprintf(out, ",\"attributes\":{\"regs\":%d,\"static_shared\":%d,\"local\":%d,\"max_threads\":%d}", l->regs,
                l->static_shared, l->local, l->max_threads);
    if (!l->params_known) return;
    fputs(",\"param_sizes\":[", out);
    for (size_t i = 0; i < l->param_count && i < RUN_MAX_ITEMS; i++) fprintf(out, "%s%zu", i ? "," : "", l->param_sizes[i]);
    fputc(']', out);
}

static void json_shape(FILE *out, const run_launch_spec *spec)
{
    json_dim3(out, "grid", spec->grid);
    json_dim3(out, "block", spec->block);
    json_dim3(out, "cluster", spec->cluster);
    fprintf(out, ",\"smem\":%llu", (unsigned long long)spec->smem);
}

static void json_launch(FILE *out, const run_cli *cli, const run_launch_spec *spec, const run_launch_result *l)
{
    fputs("{\"kernel\":", out);
    tool_json_string(out, l->kernel);
    if (l->lowered) {
        fputs(",\"lowered_name\":", out);
        tool_json_string(out, l->lowered);
    }
    json_params(out, l);
    if (!cli->compile_only) {
        json_shape(out, spec);
        fprintf(out, ",\"cooperative\":%s,\"pdl\":%s", spec->cooperative ? "true" : "false", spec->pdl ? "true" : "false");
        if (spec->has_priority) fprintf(out, ",\"priority\":%d", spec->priority);
    }
    if (l->timed) json_timing(out, cli, l);
    fputc('}', out);
}

static void json_checks(FILE *out, const run_cli *cli, const run_result *r, const run_buffer *buffers)
{
    fputs(",\"checks\":[", out);
    for (size_t i = 0; i < r->check_count; i++) {
        const run_check *c = &r->checks[i];
        fprintf(out, "%s{\"buffer\":", i ? "," : "");
        tool_json_string(out, c->buffer);
        fputs(",\"file\":", out);
        tool_json_string(out, c->path);
        fprintf(out, ",\"checked\":%llu,\"mismatches\":%llu,\"rtol\":%g,\"atol\":%g,\"max_abs_error\":",
                (unsigned long long)c->checked, (unsigned long long)c->mismatches, c->rtol, c->atol);
        json_number(out, c->max_abs_err);
        fputs(",\"first\":[", out);
        for (size_t j = 0; j < c->shown; j++) {
            char idx[200];
            run_check_format_index(&buffers[cli->expects[i].buffer], c->first[j].index, idx, sizeof idx);
            fprintf(out, "%s{\"index\":%s,\"got\":", j ? "," : "", idx);
            json_number(out, c->first[j].got);
            fputs(",\"expected\":", out);
            json_number(out, c->first[j].expected);
            fputc('}', out);
        }
        fputs("]}", out);
    }
    fputc(']', out);
}

void run_report_json(const run_cli *cli, const run_result *r, const run_buffer *buffers, FILE *out)
{
    static const char *status[] = {"ok", "internal", "usage", "compile", "no-device", "cuda", "mismatch", "io"};
    fprintf(out, "{\"status\":\"%s\",\"exit_code\":%d", status[r->exit_code & 7], r->exit_code);
    if (r->error) {
        fputs(",\"error\":", out);
        tool_json_string(out, r->error);
    }
    fputs(",\"source\":", out);
    tool_json_string(out, cli->source);
    /* The first launch's keys stay at the top level, as before --then. */
    const run_launch_result *first = &r->launches[0];
    fputs(",\"kernel\":", out);
    tool_json_string(out, first->kernel);
    if (first->lowered) {
        fputs(",\"lowered_name\":", out);
        tool_json_string(out, first->lowered);
    }
    if (r->arch[0]) {
        fputs(",\"arch\":", out);
        tool_json_string(out, r->arch);
        if (r->arch_why[0]) { /* the target's reason; omitted where there is none */
            fputs(",\"arch_reason\":", out);
            tool_json_string(out, r->arch_why);
        }
        fprintf(out, ",\"image\":\"%s\",\"image_bytes\":%zu,\"origin\":\"%s\",\"compile_ms\":%.3f",
                cli->emit_lib ? run_emit_lib_lto(cli->emit_lib) ? "ltoir" : "cubin" : r->is_ptx ? "ptx" : "cubin",
                r->image_bytes, r->origin ? r->origin : "", r->compile_ms);
        if (cli->emit_lib) {
            fputs(",\"library\":", out);
            tool_json_string(out, cli->emit_lib);
        }
    }
    if (r->load_ms > 0) fprintf(out, ",\"load_ms\":%.3f", r->load_ms);
    json_params(out, first);
    if (!cli->compile_only && !cli->emit_lib) json_shape(out, &cli->launches[0]);
    fputs(",\"launches\":[", out);
    for (size_t i = 0; i < r->launch_count; i++) {
        if (i) fputc(',', out);
        json_launch(out, cli, &cli->launches[i], &r->launches[i]);
    }
    fputc(']', out);
    if (r->check_count) json_checks(out, cli, r, buffers);
    if (first->timed) json_timing(out, cli, first);
    if (r->graph_timed)
        fprintf(out, ",\"graph\":{\"iterations\":%u,\"warmup\":%u,\"launches\":%zu,\"graph_median_ms\":%.6f,"
                "\"stream_median_ms\":%.6f}", cli->graph, cli->warmup, cli->launch_count, r->graph_ms, r->stream_ms);
    fputs("}\n", out);
}
