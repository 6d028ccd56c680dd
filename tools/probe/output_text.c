/* The report as aligned tables. */
#include "output.h"

#include <stdio.h>

#include "table.h"
#include "tool.h"

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * 1024.0 * 1024.0)

/* One row: a label, then one cell per device from `cell`. */
typedef void (*device_cell)(probe_table *t, size_t row, size_t col, const probe_device_report *d, int arg);

static void add_row(probe_table *t, const probe_report *r, const char *label, device_cell cell, int arg)
{
    size_t row = table_add_row(t);
    table_set(t, row, 0, "%s", label);
    for (size_t i = 0; i < r->device_count; i++) cell(t, row, i + 1, &r->devices[i], arg);
}

static void blank_row(probe_table *t)
{
    table_add_row(t);
}

static void cell_attr(probe_table *t, size_t row, size_t col, const probe_device_report *d, int which)
{
    const asyncrt_device_info *i = &d->info;
    char drv[16], nvrtc[16];
    switch (which) {
    case 0: table_set(t, row, col, "%d", i->ordinal); break;
    case 1: table_set(t, row, col, "%s", i->name); break;
    case 2: table_set(t, row, col, "%s", i->uuid); break;
    case 3: table_set(t, row, col, "%d.%d (sm_%d%d)", i->cc_major, i->cc_minor, i->cc_major, i->cc_minor); break;
    case 4: table_set(t, row, col, "%d", i->sm_count); break;
    case 5: table_set(t, row, col, "%.1f GiB", (double)i->total_memory_bytes / GIB); break;
    case 6:
        table_set(t, row, col, "%.0f KiB (opt-in %.0f KiB)", i->shared_memory_per_block / KIB,
                  i->shared_memory_per_block_optin / KIB);
        break;
    case 7: table_set(t, row, col, "%.0f KiB", i->shared_memory_per_sm / KIB); break;
    case 8: table_set(t, row, col, "%.1f MiB", i->l2_cache_bytes / MIB); break;
    case 9:
        table_set(t, row, col, "%d MHz, %d-bit bus (%.0f GB/s peak)", i->memory_clock_khz / 1000,
                  i->memory_bus_width_bits, asyncrt_device_peak_bandwidth_gbs(i));
        break;
    case 10: table_set(t, row, col, "%d / %d", i->registers_per_block, i->registers_per_sm); break;
    case 11:
        table_set(t, row, col, "%d / %d (warp %d)", i->max_threads_per_block, i->max_threads_per_sm, i->warp_size);
        break;
    case 12: table_set(t, row, col, "%s", i->cluster_launch ? "yes" : "no"); break;
    case 13:
        probe_format_version(i->driver_version, drv, sizeof drv);
        probe_format_version(i->nvrtc_version, nvrtc, sizeof nvrtc);
        table_set(t, row, col, "%s / %s", drv, nvrtc);
        break;
    }
}

static void cell_feature(probe_table *t, size_t row, size_t col, const probe_device_report *d, int f)
{
    const probe_feature_result *r = &d->features[f];
    switch (r->status) {
    case PROBE_STATUS_NO: table_set(t, row, col, "no"); break;
    case PROBE_STATUS_NOT_VERIFIED: table_set(t, row, col, "yes (not verified)"); break;
    case PROBE_STATUS_VERIFIED: table_set(t, row, col, "yes (verified)"); break;
    case PROBE_STATUS_FAILED: table_set(t, row, col, "FAILED: %s", r->reason); break;
    }
}

static void cell_bench(probe_table *t, size_t row, size_t col, const probe_device_report *d, int p)
{
    const probe_bench *b = &d->bench;
    if (!b->ran) {
        table_set(t, row, col, "%s", p < 0 && b->error[0] ? b->error : "-");
    } else if (p < 0) {
        table_set(t, row, col, "%.0f GB/s (%.0f MiB, median of %d)", b->d2d_gbs, (double)b->bytes / MIB, b->runs);
    } else if (b->paths[p].ran) {
        table_set(t, row, col, "%.0f GB/s (%.0f%% of D2D)", b->paths[p].gbs, b->paths[p].percent);
    } else {
        table_set(t, row, col, "%s", b->paths[p].error[0] ? b->paths[p].error : "-");
    }
}

static void write_devices(FILE *f, const probe_report *r)
{
    static const char *const attrs[] = {
        "device", "name", "uuid", "compute capability", "SMs", "global memory", "shared memory per block",
        "shared memory per SM", "L2 cache", "memory", "registers per block / SM", "threads per block / SM",
        "cluster launch", "driver / NVRTC",
    };
    probe_table t;
    table_init(&t, r->device_count + 1);
    for (int a = 0; a < (int)(sizeof attrs / sizeof attrs[0]); a++) add_row(&t, r, attrs[a], cell_attr, a);
    blank_row(&t);
    size_t head = table_add_row(&t);
    table_set(&t, head, 0, "feature [needs]");
    for (int i = 0; i < PROBE_FEATURE_COUNT; i++) {
        const probe_feature_desc *d = probe_feature_get(i);
        char label[96];
        snprintf(label, sizeof label, "%s [%s]", d->label, d->needs);
        add_row(&t, r, label, cell_feature, i);
    }
    if (r->benched) {
        static const char *const labels[PROBE_BENCH_PATH_COUNT] = {"plain copy", "LDGSTS copy", "TMA bulk copy"};
        blank_row(&t);
        add_row(&t, r, "bench: cuMemcpyDtoD", cell_bench, -1);
        for (int p = 0; p < PROBE_BENCH_PATH_COUNT; p++) add_row(&t, r, labels[p], cell_bench, p);
    }
    table_print(&t, f);
    table_free(&t);
}

static void write_arch_matrix(FILE *f, const probe_arch_matrix *m)
{
    probe_table t;
    table_init(&t, m->arch_count + 1);
    size_t head = table_add_row(&t);
    table_set(&t, head, 0, "compiles for");
    for (size_t a = 0; a < m->arch_count; a++) table_set(&t, head, a + 1, "%s", m->archs[a]);
    for (int i = 0; i < PROBE_FEATURE_COUNT; i++) {
        size_t row = table_add_row(&t);
        table_set(&t, row, 0, "%s", probe_feature_get(i)->label);
        for (size_t a = 0; a < m->arch_count; a++) table_set(&t, row, a + 1, "%s", m->compiles[i][a] ? "yes" : "-");
    }
    table_print(&t, f);
    table_free(&t);
}

static const char *yes_no(int v) { return v < 0 ? "?" : v ? "yes" : "no"; }

/* The peer matrix: one row per ordered pair. */
static void write_peers(FILE *f, const probe_report *r)
{
    probe_table t;
    table_init(&t, 7);
    size_t head = table_add_row(&t);
    const char *titles[] = {"peer", "can access", "perf rank", "access", "atomics", "CUDA arrays", "copy GB/s"};
    for (size_t c = 0; c < 7; c++) table_set(&t, head, c, "%s", titles[c]);
    for (size_t i = 0; i < r->peer_count; i++) {
        const probe_peer *p = &r->peers[i];
        size_t row = table_add_row(&t);
        table_set(&t, row, 0, "%d -> %d", p->src, p->dst);
        table_set(&t, row, 1, "%s", yes_no(p->can_access));
        if (p->performance_rank < 0) table_set(&t, row, 2, "?");
        else table_set(&t, row, 2, "%d", p->performance_rank);
        table_set(&t, row, 3, "%s", yes_no(p->access_supported));
        table_set(&t, row, 4, "%s", yes_no(p->native_atomics));
        table_set(&t, row, 5, "%s", yes_no(p->cuda_array_access));
        if (p->measured) table_set(&t, row, 6, "%.1f", p->copy_gbs);
        else table_set(&t, row, 6, "not measured: %s", p->error);
    }
    table_print(&t, f);
    table_free(&t);
}

/* The arch rule that applies to each device, in the library's words. */
static void write_auto_rules(FILE *f, const probe_report *r)
{
    for (size_t i = 0; i < r->device_count; i++)
        fprintf(f, "arch auto on device %d: %s\n", r->devices[i].info.ordinal, r->devices[i].auto_rule);
}

void probe_write_text(FILE *f, const probe_report *r)
{
    char nvrtc[16];
    probe_format_version(r->nvrtc_version, nvrtc, sizeof nvrtc);
    fprintf(f, "asyncrt-probe %s (NVRTC %s)\n", ASYNCRT_VERSION_STRING, nvrtc);
    if (r->nvrtc_why)
        fprintf(f, "NVRTC: %s (%s)\n", r->nvrtc_path ? r->nvrtc_path : "none", r->nvrtc_why);
    if (r->compact_why) fprintf(f, "%s\n", r->compact_why); /* "compact images on: ..." or why off */
    tool_print_nvrtc_candidates(f, "  ", r->nvrtc_candidates, r->nvrtc_candidate_count, r->nvrtc_chosen);
    fputc('\n', f);
    if (r->device_count) write_devices(f, r);
    if (r->device_count && !r->arch_matrix) write_auto_rules(f, r);
    if (r->peer_count) {
        fputc('\n', f);
        write_peers(f, r);
    }
    if (r->device_count && r->arch_matrix) fputc('\n', f);
    if (r->arch_matrix) {
        write_arch_matrix(f, r->arch_matrix);
        write_auto_rules(f, r);
    }
}
