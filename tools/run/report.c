/* Rendering a run_result. Text goes to `out` (stdout); errors are printed by
 * main to stderr. */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

void run_report_text(const run_cli *cli, const run_result *r, const run_buffer *buffers, FILE *out)
{
    if (r->exit_code != RUN_EXIT_OK && r->exit_code != RUN_EXIT_MISMATCH) return;
    if (cli->compile_only) {
        fprintf(out, "compiled %s for %s (%s, %zu bytes)\n", r->kernel, r->arch, r->is_ptx ? "PTX" : "CUBIN",
                r->image_bytes);
        return;
    }
    for (size_t i = 0; i < r->check_count; i++) text_check(&r->checks[i], &buffers[cli->expects[i].buffer], out);
    if (r->timed) {
        fprintf(out, "time: median %.4f ms, min %.4f ms, max %.4f ms over %u launches (warm-up %u)", r->median_ms,
                r->min_ms, r->max_ms, cli->repeat, cli->warmup);
        if (r->bytes) fprintf(out, "; %llu bytes: %.1f GB/s", (unsigned long long)r->bytes, r->gbps);
        fputc('\n', out);
    }
    if (r->exit_code == RUN_EXIT_OK)
        fprintf(out, "ok: %s on %s, grid %u,%u,%u block %u,%u,%u\n", r->kernel, r->arch, cli->grid[0], cli->grid[1],
                cli->grid[2], cli->block[0], cli->block[1], cli->block[2]);
}

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", out);
        else if (*p == '\t') fputs("\\t", out);
        else if (*p < 0x20) fprintf(out, "\\u%04x", *p);
        else fputc(*p, out);
    }
    fputc('"', out);
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

void run_report_json(const run_cli *cli, const run_result *r, const run_buffer *buffers, FILE *out)
{
    static const char *status[] = {"ok", "internal", "usage", "compile", "no-device", "cuda", "mismatch", "io"};
    fprintf(out, "{\"status\":\"%s\",\"exit_code\":%d", status[r->exit_code & 7], r->exit_code);
    if (r->error) {
        fputs(",\"error\":", out);
        json_string(out, r->error);
    }
    fputs(",\"source\":", out);
    json_string(out, cli->source);
    fputs(",\"kernel\":", out);
    json_string(out, r->kernel);
    if (r->lowered) {
        fputs(",\"lowered_name\":", out);
        json_string(out, r->lowered);
    }
    if (r->arch[0]) {
        fputs(",\"arch\":", out);
        json_string(out, r->arch);
        fputs(",\"arch_reason\":", out);
        json_string(out, r->arch_why);
        fprintf(out, ",\"image\":\"%s\",\"image_bytes\":%zu,\"origin\":\"%s\",\"compile_ms\":%.3f", r->is_ptx ? "ptx" : "cubin",
                r->image_bytes, r->origin ? r->origin : "", r->compile_ms);
    }
    if (r->load_ms > 0) fprintf(out, ",\"load_ms\":%.3f", r->load_ms);
    if (r->params_known) {
        fputs(",\"param_sizes\":[", out);
        for (size_t i = 0; i < r->param_count && i < RUN_MAX_ITEMS; i++) fprintf(out, "%s%zu", i ? "," : "", r->param_sizes[i]);
        fputc(']', out);
    }
    if (!cli->compile_only) {
        json_dim3(out, "grid", cli->grid);
        json_dim3(out, "block", cli->block);
        json_dim3(out, "cluster", cli->cluster);
        fprintf(out, ",\"smem\":%llu", (unsigned long long)cli->smem);
    }
    if (r->check_count) {
        fputs(",\"checks\":[", out);
        for (size_t i = 0; i < r->check_count; i++) {
            const run_check *c = &r->checks[i];
            fprintf(out, "%s{\"buffer\":", i ? "," : "");
            json_string(out, c->buffer);
            fputs(",\"file\":", out);
            json_string(out, c->path);
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
    if (r->timed) {
        fprintf(out, ",\"timing\":{\"repeat\":%u,\"warmup\":%u,\"median_ms\":%.6f,\"min_ms\":%.6f,\"max_ms\":%.6f",
                cli->repeat, cli->warmup, r->median_ms, r->min_ms, r->max_ms);
        if (r->bytes) fprintf(out, ",\"bytes\":%llu,\"gbps\":%.3f", (unsigned long long)r->bytes, r->gbps);
        fputc('}', out);
    }
    fputs("}\n", out);
}
