/* asyncrt-bench: how close the map op's paths come to the device's copy
 * bandwidth, and what compiling and launching cost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_why.h"
#include "jit_bench.h"
#include "asyncrt/ops.h"
#include "remote_bench.h"
#include "measure.h"
#include "tile_bench.h"
#include "tool.h"
#include "tile_sweep.h"

#define EXIT_USAGE TOOL_EXIT_USAGE
#define EXIT_NO_GPU TOOL_EXIT_NO_DEVICE
#define EXIT_FAILED TOOL_EXIT_CUDA
#define MAX_SIZES 32

static const char *k_usage =
    "usage: asyncrt-bench [options]\n"
    "Measures cuMemcpyDtoD bandwidth (the ceiling, read + write bytes) and each\n"
    "path of the map op for y = a*x + b (f32) and y = a*x + z (two inputs, f32),\n"
    "then the JIT: cold compile, warm (cache) load, launch overhead.\n"
    "  --sizes LIST    array sizes in MiB, comma-separated (default 1,4,16,64,256,1024,2048)\n"
    "  --paths LIST    map paths: tma,ldgsts,plain (default: those the device has)\n"
    "  --repeats N     timed runs per case, median reported (default 20, at least 1)\n"
    "  --warmup N      untimed runs first (default 3)\n"
    "  --device N      device ordinal (default 0)\n"
    "  --no-jit        skip the JIT and launch timings\n"
    "  --jit           only the JIT cold-start section: 12 CCCL kernels one by one (with and\n"
    "                  without precompiled headers) vs one batch, fresh processes from main to first kernel loaded (warmed cache vs\n"
    "                  image in memory; empty cache, arch auto, with and without overlap)\n"
    "  --jit-repeats N timed repeats of that section (default 3; processes run 2N+1 times)\n"
    "  --remote        only the remote cache across a fleet, on the CPU: --processes N (default\n"
    "                  16) with empty caches share one Redis (ASYNCRT_REMOTE_CACHE, else a\n"
    "                  redis-server it starts) compiling the 12 CCCL kernels for --arch A\n"
    "                  (default sm_90); remote vs disk hits; the server down\n"
    "  --json | --csv  machine-readable output instead of the table\n"
    "  --version       asyncrt-bench, libasyncrt and NVRTC versions\n"
    "  --tile-sweep    only the tile ops: every variant x path x build (native and\n"
    "                  compute_80 PTX), the dispatcher's pick and a peer transpose,\n"
    "                  each checked against a CPU reference (16384 x 16384 f32)\n"
    "  --sweep-filter TEXT  only sweep rows whose op/path/build/tune label has TEXT\n"
    "  --calibrate     measure each op's paths on this device and write the\n"
    "                  calibration file the dispatcher reads (in the cache dir)\n"
    "  --help          this text\n"
    "--json prints one document: the map rows, \"jit\", \"launch_us\" and \"tile_ops\"\n"
    "(transpose and stencil5 per path); when no device can be opened, one with\n"
    "\"error\" (why) and \"exit_code\" instead.\n"
    TOOL_EXIT_CODES_HELP
    "  asyncrt-bench: 5 = a measurement failed (its reason is printed on stderr).\n";

typedef enum { OUT_TABLE, OUT_JSON, OUT_CSV } out_format;

typedef struct options {
    size_t sizes_mib[MAX_SIZES];
    size_t size_count;
    bool paths[4]; /* indexed by asyncrt_op_path */
    bool paths_given;
    bench_settings settings;
    int device;
    bool jit;
    bool jit_section; /* --jit: the cold-start section only (jit_bench.c) */
    int jit_repeats;
    out_format format;
    bool tile_sweep, calibrate;
    const char *sweep_filter;
} options;

static bool parse_int(const char *text, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* True when `a` is option `name` with a good value in *out; a bad value
 * leaves *rc the usage error, which names the value and the range. */
static bool int_option(const char *a, const char *v, const char *name, long lo, long hi, long *out, int *rc)
{
    if (strcmp(a, name) != 0 || !v) return false;
    if (parse_int(v, lo, hi, out)) return true;
    *rc = tool_usage_error("asyncrt-bench", "%s '%s' is not a whole number from %ld to %ld", name, v, lo, hi);
    return false;
}

static int parse_args(int argc, char **argv, options *o)
{
    int rc = 0;
    static const size_t defaults[] = {1, 4, 16, 64, 256, 1024, 2048};
    memset(o, 0, sizeof *o);
    memcpy(o->sizes_mib, defaults, sizeof defaults);
    o->size_count = sizeof defaults / sizeof defaults[0];
    o->settings = (bench_settings){.warmup = 3, .repeats = 20};
    o->jit = true;
    o->jit_repeats = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "--version")) {
            char version[160];
            tool_version_line("asyncrt-bench", version, sizeof version);
            printf("%s\n", version);
            if (a[2] != 'v') fputs(k_usage, stdout);
            exit(0);
        } else if (!strcmp(a, "--json")) o->format = OUT_JSON;
        else if (!strcmp(a, "--csv")) o->format = OUT_CSV;
        else if (!strcmp(a, "--no-jit")) o->jit = false;
        else if (!strcmp(a, "--tile-sweep")) o->tile_sweep = true;
        else if (!strcmp(a, "--calibrate")) o->calibrate = true;
        else if (!strcmp(a, "--sweep-filter") && v) o->sweep_filter = v, o->tile_sweep = true, i++;
        else if (!strcmp(a, "--jit")) o->jit_section = true;
        else if (int_option(a, v, "--jit-repeats", 1, 1000, &n, &rc)) o->jit_repeats = (int)n, i++;
        else if (int_option(a, v, "--repeats", 1, 100000, &n, &rc)) o->settings.repeats = (int)n, i++;
        else if (int_option(a, v, "--warmup", 0, 100000, &n, &rc)) o->settings.warmup = (int)n, i++;
        else if (int_option(a, v, "--device", 0, 1024, &n, &rc)) o->device = (int)n, i++;
        else if (rc) return rc;
        else if (!strcmp(a, "--sizes") && v) {
            char *copy = strdup(v), *save = NULL;
            o->size_count = 0;
            for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
                if (o->size_count == MAX_SIZES || !parse_int(t, 1, 1 << 20, &n)) {
                    free(copy);
                    return tool_usage_error("asyncrt-bench", "bad --sizes '%s': up to %d sizes in MiB, each 1..1048576",
                                            v, MAX_SIZES);
                }
                o->sizes_mib[o->size_count++] = (size_t)n;
            }
            free(copy);
            if (!o->size_count) return tool_usage_error("asyncrt-bench", "--sizes is empty");
            i++;
        } else if (!strcmp(a, "--paths") && v) {
            char *copy = strdup(v), *save = NULL;
            o->paths_given = true;
            for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
                asyncrt_op_path p;
                if (!asyncrt_op_path_parse(t, &p) || p == ASYNCRT_PATH_AUTO) {
                    rc = tool_usage_error("asyncrt-bench", "unknown path '%s' in --paths; use tma, ldgsts, plain", t);
                    free(copy);
                    return rc;
                }
                o->paths[p] = true;
            }
            free(copy);
            i++;
        } else {
            return tool_usage_error("asyncrt-bench", "bad option '%s'%s", a, v ? "" : " (or its value is missing)");
        }
    }
    return 0;
}

/* ---- output ------------------------------------------------------------- */

typedef struct row {
    const char *op, *path;
    size_t mib;
    double ms, gbs, pct;
} row;

static void print_rows(const options *o, const asyncrt_device_info *dev, const row *rows, size_t count,
                       const bench_jit *jit, double peak)
{
    if (o->format == OUT_CSV) {
        printf("op,path,size_mib,ms,gb_per_s,pct_of_d2d\n");
        for (size_t i = 0; i < count; i++)
            printf("%s,%s,%zu,%.6f,%.2f,%.2f\n", rows[i].op, rows[i].path, rows[i].mib, rows[i].ms, rows[i].gbs,
                   rows[i].pct);
        if (jit)
            printf("jit,cold_ms,%.3f\njit,disk_cache_ms,%.3f\njit,memory_cache_ms,%.3f\n"
                   "jit,barrier_cold_ms,%.3f\njit,barrier_disk_cache_ms,%.3f\n"
                   "launch,bare_us,%.3f\nlaunch,asyncrt_us,%.3f\nlaunch,map_us,%.3f\n",
                   jit->cold_ms, jit->disk_ms, jit->memory_ms, jit->barrier_cold_ms, jit->barrier_disk_ms,
                   jit->bare_launch_us, jit->launch_us, jit->map_launch_us);
        return;
    }
    if (o->format == OUT_JSON) {
        printf("{\n  \"device\": \"%s\", \"cc\": \"%d.%d\", \"sm_count\": %d, \"peak_gb_per_s\": %.1f,\n"
               "  \"repeats\": %d, \"results\": [\n",
               dev->name, dev->cc_major, dev->cc_minor, dev->sm_count, peak, o->settings.repeats);
        for (size_t i = 0; i < count; i++)
            printf("    {\"op\": \"%s\", \"path\": \"%s\", \"size_mib\": %zu, \"ms\": %.6f, \"gb_per_s\": %.2f, "
                   "\"pct_of_d2d\": %.2f}%s\n",
                   rows[i].op, rows[i].path, rows[i].mib, rows[i].ms, rows[i].gbs, rows[i].pct,
                   i + 1 < count ? "," : "");
        printf("  ]");
        if (jit)
            printf(",\n  \"jit\": {\"cold_ms\": %.3f, \"disk_cache_ms\": %.3f, \"memory_cache_ms\": %.3f, "
                   "\"barrier_cold_ms\": %.3f, \"barrier_disk_cache_ms\": %.3f},\n"
                   "  \"launch_us\": {\"bare\": %.3f, \"asyncrt\": %.3f, \"map\": %.3f}",
                   jit->cold_ms, jit->disk_ms, jit->memory_ms, jit->barrier_cold_ms, jit->barrier_disk_ms,
                   jit->bare_launch_us, jit->launch_us, jit->map_launch_us);
        return; /* main adds "tile_ops" and closes the document */
    }
    printf("%s (sm_%d%d, %d SMs), DRAM peak %.0f GB/s; median of %d runs after %d warm-up\n", dev->name,
           dev->cc_major, dev->cc_minor, dev->sm_count, peak, o->settings.repeats, o->settings.warmup);
    printf("%-10s %-7s %9s %11s %9s %8s\n", "op", "path", "size MiB", "ms", "GB/s", "% D2D");
    for (size_t i = 0; i < count; i++)
        printf("%-10s %-7s %9zu %11.4f %9.1f %7.1f%%\n", rows[i].op, rows[i].path, rows[i].mib, rows[i].ms,
               rows[i].gbs, rows[i].pct);
    if (jit)
        printf("\nJIT (map y = a*x + b): cold compile + load %.1f ms, disk cache + load %.2f ms, "
               "memory cache + load %.2f ms\n"
               "JIT (kernel including <cuda/barrier>, its ~385 headers checked on a hit): cold compile + load "
               "%.1f ms, disk cache + load %.2f ms (median of %d fresh contexts)\n"
               "launch (host time per call): cuLaunchKernelEx %.2f us, asyncrt_kernel_launch %.2f us "
               "(+%.2f us), asyncrt_map_launch %.2f us\n",
               jit->cold_ms, jit->disk_ms, jit->memory_ms, jit->barrier_cold_ms, jit->barrier_disk_ms, BENCH_BARRIER_HITS,
               jit->bare_launch_us, jit->launch_us, jit->launch_us - jit->bare_launch_us, jit->map_launch_us);
}

/* ---- the run ------------------------------------------------------------- */

static asyncrt_map *make_map(asyncrt_context *ctx, asyncrt_op_path path, bool two_inputs)
{
    static const asyncrt_map_arg in[] = {{"x", ASYNCRT_F32}, {"z", ASYNCRT_F32}}, out = {"y", ASYNCRT_F32};
    static const asyncrt_map_arg sc[] = {{"a", ASYNCRT_F32}, {"b", ASYNCRT_F32}};
    asyncrt_map_desc d = {.size = sizeof d,
                          .inputs = in, .input_count = two_inputs ? 2 : 1, .outputs = &out, .output_count = 1,
                          .scalars = sc, .scalar_count = two_inputs ? 1 : 2,
                          .expression = two_inputs ? "y = a * x + z;" : "y = a * x + b;", .path = path};
    asyncrt_map *m = NULL;
    if (asyncrt_map_create(ctx, &d, &m) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "asyncrt-bench: map (%s path): %s\n", asyncrt_op_path_name(path),
                asyncrt_context_last_error(ctx));
        return NULL;
    }
    return m;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], JIT_BENCH_CHILD_FLAG)) return jit_bench_child(argc, argv);
    if (argc > 1 && !strcmp(argv[1], REMOTE_BENCH_CHILD_FLAG)) return remote_bench_child(argc, argv);
    for (int i = 1; i < argc; i++) /* needs no GPU: before the device is opened */
        if (!strcmp(argv[i], REMOTE_BENCH_FLAG)) return remote_bench_main(argc, argv);
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc;
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "asyncrt-bench: out of memory\n");
        return 1;
    }
    asyncrt_status s = asyncrt_context_open_device(ctx, o.device);
    if (s != ASYNCRT_SUCCESS) {
        /* The library's message already says "no CUDA driver" or "no device N". */
        bool no_gpu = s == ASYNCRT_ERROR_NO_DRIVER || s == ASYNCRT_ERROR_NO_DEVICE;
        char why[1024];
        if (no_gpu) snprintf(why, sizeof why, "%s", asyncrt_context_last_error(ctx));
        else snprintf(why, sizeof why, "cannot open device %d: %s", o.device, asyncrt_context_last_error(ctx));
        fprintf(stderr, "asyncrt-bench: error: %s\n", why);
        if (o.format == OUT_JSON) tool_json_error(stdout, "asyncrt-bench", why, no_gpu ? EXIT_NO_GPU : EXIT_FAILED);
        asyncrt_context_destroy(ctx);
        return no_gpu ? EXIT_NO_GPU : EXIT_FAILED;
    }
    if (o.jit_section) {
        rc = jit_bench_run(ctx, o.device, o.jit_repeats, o.format == OUT_JSON);
        asyncrt_context_destroy(ctx);
        return rc ? EXIT_FAILED : 0;
    }
    const asyncrt_device_info *dev = asyncrt_context_device(ctx);
    if (o.tile_sweep || o.calibrate) { /* these modes only */
        rc = o.calibrate ? bench_calibrate(ctx, &o.settings) : 0;
        if (o.tile_sweep && !rc) rc = tile_sweep_run(ctx, &o.settings, 16384, 16384, o.sweep_filter, o.format == OUT_CSV);
        asyncrt_context_destroy(ctx);
        return rc ? EXIT_FAILED : 0;
    }
    if (!o.paths_given) {
        o.paths[ASYNCRT_PATH_TMA] = dev->features.bulk_copy;
        o.paths[ASYNCRT_PATH_LDGSTS] = dev->features.ldgsts;
        o.paths[ASYNCRT_PATH_PLAIN] = true;
    }

    asyncrt_map *maps[4][2] = {{NULL}};
    for (int p = ASYNCRT_PATH_TMA; p <= ASYNCRT_PATH_PLAIN; p++)
        for (int two = 0; two < 2 && o.paths[p]; two++)
            if (!(maps[p][two] = make_map(ctx, (asyncrt_op_path)p, two))) rc = EXIT_FAILED;

    size_t largest = 0;
    for (size_t i = 0; i < o.size_count; i++) largest = o.sizes_mib[i] > largest ? o.sizes_mib[i] : largest;
    asyncrt_deviceptr x = 0, z = 0, y = 0;
    if (!rc && ((s = asyncrt_memory_alloc(ctx, largest << 20, &x)) || (s = asyncrt_memory_alloc(ctx, largest << 20, &z)) ||
                (s = asyncrt_memory_alloc(ctx, largest << 20, &y)) ||
                (s = asyncrt_memory_fill(ctx, x, 0x3c, largest << 20, NULL)) ||
                (s = asyncrt_memory_fill(ctx, z, 0x3d, largest << 20, NULL)))) {
        fprintf(stderr, "asyncrt-bench: %s\n", asyncrt_context_last_error(ctx));
        rc = EXIT_FAILED;
    }

    row rows[MAX_SIZES * 7];
    size_t count = 0;
    float a = 1.5f, b = 0.25f;
    const void *scalars[] = {&a, &b};
    asyncrt_deviceptr ins[] = {x, z};
    for (size_t i = 0; !rc && i < o.size_count; i++) {
        size_t bytes = o.sizes_mib[i] << 20, n = bytes / 4;
        double ms, ceiling;
        if ((s = bench_copy(ctx, &o.settings, y, x, bytes, &ms))) break;
        ceiling = 2.0 * bytes / (ms * 1e6);
        rows[count++] = (row){"copy", "d2d", o.sizes_mib[i], ms, ceiling, 100.0};
        for (int p = ASYNCRT_PATH_TMA; !s && p <= ASYNCRT_PATH_PLAIN; p++)
            for (int two = 0; !s && two < 2 && maps[p][two]; two++) {
                if ((s = bench_map(ctx, &o.settings, maps[p][two], n, ins, &y, scalars, &ms))) break;
                double gbs = (two ? 3.0 : 2.0) * bytes / (ms * 1e6);
                rows[count++] = (row){two ? "a*x+z" : "a*x+b", asyncrt_op_path_name((asyncrt_op_path)p),
                                      o.sizes_mib[i], ms, gbs, 100.0 * gbs / ceiling};
            }
    }
    if (!rc && s) {
        fprintf(stderr, "asyncrt-bench: %s\n", asyncrt_context_last_error(ctx));
        rc = EXIT_FAILED;
    }
    bench_jit jit;
    bool have_jit = false;
    if (!rc && o.jit) {
        if ((s = bench_jit_costs(ctx, o.device, &jit))) {
            fprintf(stderr, "asyncrt-bench: %s\n", bench_why(ctx));
            rc = EXIT_FAILED;
        } else {
            have_jit = true;
        }
    }
    if (!rc) print_rows(&o, dev, rows, count, have_jit ? &jit : NULL, asyncrt_device_peak_bandwidth_gbs(dev));
    if (!rc) { /* the tile ops: transpose and 5-point stencil, 16384 x 16384 f32 */
        tile_bench_format f = o.format == OUT_JSON ? TILE_BENCH_JSON : o.format == OUT_CSV ? TILE_BENCH_CSV : TILE_BENCH_TABLE;
        rc = tile_bench_run(ctx, &o.settings, o.paths, 16384, 16384, f) ? EXIT_FAILED : 0;
        if (o.format == OUT_JSON) printf("\n}\n");
    }

    asyncrt_memory_free(ctx, x);
    asyncrt_memory_free(ctx, z);
    asyncrt_memory_free(ctx, y);
    for (int p = 0; p < 4; p++)
        for (int two = 0; two < 2; two++) asyncrt_map_destroy(maps[p][two]);
    asyncrt_context_destroy(ctx);
    return rc;
}
