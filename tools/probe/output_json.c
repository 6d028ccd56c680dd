/* The report as one JSON document (keys documented in README.md). */
#include "output.h"

#include <math.h>

#include "tool.h"

/* A string, or null when empty. */
static void json_string_or_null(FILE *f, const char *s)
{
    if (s[0])
        tool_json_string(f, s);
    else
        fputs("null", f);
}

static void json_number(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.2f", x);
    else
        fputs("null", f);
}

static void write_features(FILE *f, const probe_device_report *d)
{
    fputs("      \"features\": {\n", f);
    for (int i = 0; i < PROBE_FEATURE_COUNT; i++) {
        const probe_feature_desc *desc = probe_feature_get(i);
        const probe_feature_result *r = &d->features[i];
        fprintf(f, "        \"%s\": {\"label\": ", desc->key);
        tool_json_string(f, desc->label);
        fprintf(f, ", \"needs\": \"%s\", \"status\": \"%s\", \"reason\": ", desc->needs, probe_status_key(r->status));
        json_string_or_null(f, r->status == PROBE_STATUS_FAILED ? r->reason : "");
        fprintf(f, "}%s\n", i + 1 < PROBE_FEATURE_COUNT ? "," : "");
    }
    fputs("      },\n", f);
}

static void write_bench(FILE *f, const probe_report *r, const probe_bench *b)
{
    fputs("      \"bench\": ", f);
    if (!r->benched) {
        fputs("null\n", f);
        return;
    }
    fprintf(f, "{\n        \"bytes\": %zu, \"runs\": %d, \"d2d_gbs\": ", b->bytes, b->runs);
    if (b->ran)
        json_number(f, b->d2d_gbs);
    else
        fputs("null", f);
    fputs(", \"error\": ", f);
    json_string_or_null(f, b->error);
    fputs(",\n        \"paths\": {\n", f);
    for (int p = 0; p < PROBE_BENCH_PATH_COUNT; p++) {
        const probe_bench_result *pr = &b->paths[p];
        fprintf(f, "          \"%s\": ", probe_bench_path_key(p));
        if (pr->ran) {
            fputs("{\"gbs\": ", f);
            json_number(f, pr->gbs);
            fputs(", \"percent_of_d2d\": ", f);
            json_number(f, pr->percent);
            fputs(", \"error\": null}", f);
        } else if (pr->error[0]) {
            fputs("{\"gbs\": null, \"percent_of_d2d\": null, \"error\": ", f);
            tool_json_string(f, pr->error);
            fputc('}', f);
        } else {
            fputs("null", f);
        }
        fprintf(f, "%s\n", p + 1 < PROBE_BENCH_PATH_COUNT ? "," : "");
    }
    fputs("        }\n      }\n", f);
}

static void write_device(FILE *f, const probe_report *r, const probe_device_report *d, bool last)
{
    const asyncrt_device_info *i = &d->info;
    fprintf(f, "    {\n      \"ordinal\": %d,\n      \"name\": ", i->ordinal);
    tool_json_string(f, i->name);
    fputs(",\n      \"uuid\": ", f);
    tool_json_string(f, i->uuid);
    fprintf(f,
            ",\n      \"compute_capability\": {\"major\": %d, \"minor\": %d},\n"
            "      \"sm_count\": %d,\n"
            "      \"total_memory_bytes\": %zu,\n"
            "      \"shared_memory_per_block_bytes\": %d,\n"
            "      \"shared_memory_per_block_optin_bytes\": %d,\n"
            "      \"shared_memory_per_sm_bytes\": %d,\n"
            "      \"registers_per_block\": %d,\n"
            "      \"registers_per_sm\": %d,\n"
            "      \"l2_cache_bytes\": %d,\n"
            "      \"memory_clock_khz\": %d,\n"
            "      \"memory_bus_width_bits\": %d,\n"
            "      \"peak_bandwidth_gbs\": ",
            i->cc_major, i->cc_minor, i->sm_count, i->total_memory_bytes, i->shared_memory_per_block,
            i->shared_memory_per_block_optin, i->shared_memory_per_sm, i->registers_per_block, i->registers_per_sm,
            i->l2_cache_bytes, i->memory_clock_khz, i->memory_bus_width_bits);
    json_number(f, asyncrt_device_peak_bandwidth_gbs(i));
    fprintf(f,
            ",\n      \"max_threads_per_block\": %d,\n"
            "      \"max_threads_per_sm\": %d,\n"
            "      \"warp_size\": %d,\n"
            "      \"cluster_launch\": %s,\n"
            "      \"driver_version\": %d,\n"
            "      \"nvrtc_version\": %d,\n",
            i->max_threads_per_block, i->max_threads_per_sm, i->warp_size, i->cluster_launch ? "true" : "false",
            i->driver_version, i->nvrtc_version);
    fputs("      \"auto_target\": ", f);
    json_string_or_null(f, d->auto_target);
    fputs(",\n      \"auto_rule\": ", f);
    tool_json_string(f, d->auto_rule);
    fputs(",\n", f);
    write_features(f, d);
    write_bench(f, r, &d->bench);
    fprintf(f, "    }%s\n", last ? "" : ",");
}

static void write_arch_matrix(FILE *f, const probe_arch_matrix *m)
{
    fputs("{\n    \"archs\": [", f);
    for (size_t a = 0; a < m->arch_count; a++) fprintf(f, "%s\"%s\"", a ? ", " : "", m->archs[a]);
    fputs("],\n    \"features\": {\n", f);
    for (int i = 0; i < PROBE_FEATURE_COUNT; i++) {
        fprintf(f, "      \"%s\": {", probe_feature_get(i)->key);
        for (size_t a = 0; a < m->arch_count; a++)
            fprintf(f, "%s\"%s\": %s", a ? ", " : "", m->archs[a], m->compiles[i][a] ? "true" : "false");
        fprintf(f, "}%s\n", i + 1 < PROBE_FEATURE_COUNT ? "," : "");
    }
    fputs("    }\n  }", f);
}

static void write_int_or_null(FILE *f, const char *key, int v)
{
    if (v < 0) fprintf(f, ", \"%s\": null", key);
    else fprintf(f, ", \"%s\": %d", key, v);
}

static void write_bool_or_null(FILE *f, const char *key, int v)
{
    fprintf(f, ", \"%s\": %s", key, v < 0 ? "null" : v ? "true" : "false");
}

/* Every ordered pair: the driver's answers (null: unknown) and the copy. */
static void write_peers(FILE *f, const probe_report *r)
{
    fputs(",\n  \"peers\": [", f);
    for (size_t i = 0; i < r->peer_count; i++) {
        const probe_peer *p = &r->peers[i];
        fprintf(f, "%s\n    {\"src\": %d, \"dst\": %d", i ? "," : "", p->src, p->dst);
        write_bool_or_null(f, "can_access_peer", p->can_access);
        write_int_or_null(f, "performance_rank", p->performance_rank);
        write_bool_or_null(f, "access_supported", p->access_supported);
        write_bool_or_null(f, "native_atomics", p->native_atomics);
        write_bool_or_null(f, "cuda_array_access", p->cuda_array_access);
        if (p->measured)
            fprintf(f, ", \"copy_gbs\": %.3f, \"copy_bytes\": %zu, \"copy_runs\": %d, \"copy_error\": null",
                    p->copy_gbs, p->copy_bytes, p->copy_runs);
        else {
            fputs(", \"copy_gbs\": null, \"copy_bytes\": 0, \"copy_runs\": 0, \"copy_error\": ", f);
            tool_json_string(f, p->error);
        }
        fputc('}', f);
    }
    fputs(r->peer_count ? "\n  ]" : "]", f);
}

void probe_write_json(FILE *f, const probe_report *r)
{
    fprintf(f,
            "{\n  \"schema\": \"asyncrt-probe/1\",\n  \"asyncrt_version\": \"%s\",\n  \"nvrtc_version\": %d,\n"
            "  \"checked\": %s,\n  \"benched\": %s,\n",
            ASYNCRT_VERSION_STRING, r->nvrtc_version, r->checked ? "true" : "false", r->benched ? "true" : "false");
    /* Also without a driver the document is printed, saying why it is empty. */
    fprintf(f, "  \"exit_code\": %d,\n  \"error\": ", r->exit_code);
    if (r->error) tool_json_string(f, r->error);
    else fputs("null", f);
    fputs(",\n  \"devices\": [\n", f);
    for (size_t i = 0; i < r->device_count; i++) write_device(f, r, &r->devices[i], i + 1 == r->device_count);
    fputs("  ],\n  \"nvrtc_path\": ", f);
    json_string_or_null(f, r->nvrtc_path ? r->nvrtc_path : "");
    fputs(",\n  \"nvrtc_choice\": ", f);
    json_string_or_null(f, r->nvrtc_why ? r->nvrtc_why : "");
    fprintf(f, ",\n  \"compact_images\": %s,\n  \"compact_images_why\": ", r->compact_images ? "true" : "false");
    json_string_or_null(f, r->compact_why ? r->compact_why : "");
    fputs(",\n  \"nvrtc_candidates\": [", f);
    for (size_t i = 0; i < r->nvrtc_candidate_count; i++) {
        const asyncrt_nvrtc_candidate *c = &r->nvrtc_candidates[i];
        fputs(i ? ",\n    {\"path\": " : "\n    {\"path\": ", f);
        tool_json_string(f, c->path);
        fputs(", \"version\": ", f);
        tool_json_string(f, c->version);
        fputs(", \"found_by\": ", f);
        tool_json_string(f, c->found_by);
        fputs(", \"version_from\": ", f);
        json_string_or_null(f, c->version_from);
        fprintf(f, ", \"chosen\": %s}", (int)i == r->nvrtc_chosen ? "true" : "false");
    }
    fputs(r->nvrtc_candidate_count ? "\n  ]" : "]", f);
    fputs(",\n  \"arch_matrix\": ", f);
    if (r->arch_matrix)
        write_arch_matrix(f, r->arch_matrix);
    else
        fputs("null", f);
    write_peers(f, r);
    fputs("\n}\n", f);
}
