/* asyncrt-bench --tile-sweep: every variant x path x build of the tile
 * transpose and the 5-point stencil on one rows x cols f32 matrix of random
 * data, each checked once against a CPU reference (output poisoned first),
 * then timed (median of the settings' repeats after warm-up) as a share of
 * the same run's cuMemcpyDtoD; and a peer transpose (the classic 32 x 32
 * shared-memory tile with a padded column, 32 x 8 threads) compiled with
 * NVRTC, timed the same way. */
#include "tile_sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile_bench.h"

typedef struct sweep_config {
    asyncrt_tile_kind kind;
    asyncrt_op_path path; /* AUTO: what the dispatcher picks */
    const char *arch;      /* NULL: the device's own; "compute_80": the A100 build through the driver's JIT */
    const char *tune;      /* ASYNCRT_TILE_TUNE */
} sweep_config;

#define SWEEP_MAX 128

/* The configurations, in the table's order (at most SWEEP_MAX). */
static size_t sweep_configs(const asyncrt_device_info *dev, sweep_config *c)
{
    _Static_assert(2 * (1 + 3 + 2 * 2 * 12 + 1) <= SWEEP_MAX, "SWEEP_MAX: up to 12 tunings per op");
    /* "" is the path's default; blocks,minctas=0,l2=0 is the kernel before issue 16. */
    static const char *const transpose_tunes[] = {"", "variant=blocks,minctas=0,l2=0",
                                                  "variant=rows",             "variant=staged",
                                                  "variant=staged,minctas=0", "variant=staged,minctas=8",
                                                  "variant=rows,threads=128", "variant=staged,threads=128",
                                                  "variant=staged,threads=64", "variant=staged,l2=0",
                                                  "variant=staged,l2=256"};
    static const char *const stencil_tunes[] = {"", "opt=16", "opt=8", "opt=32", "threads=128", "threads=512",
                                                "threads=512,opt=32", "opt=16,minctas=6", "opt=32,minctas=4",
                                                "tw=256,opt=32",      "opt=32,l2=0", "threads=128,l2=0"};
    static const char *const builds[] = {NULL, "compute_80"};
    _Static_assert(sizeof transpose_tunes / sizeof *transpose_tunes <= 12 &&
                       sizeof stencil_tunes / sizeof *stencil_tunes <= 12,
                   "raise SWEEP_MAX with the tunings");
    size_t n = 0;
    for (int kind = ASYNCRT_TILE_TRANSPOSE; kind <= ASYNCRT_TILE_STENCIL; kind++) {
        bool stencil = kind == ASYNCRT_TILE_STENCIL;
        const char *const *tunes = stencil ? stencil_tunes : transpose_tunes;
        size_t tune_count = stencil ? sizeof stencil_tunes / sizeof *tunes : sizeof transpose_tunes / sizeof *tunes;
        c[n++] = (sweep_config){(asyncrt_tile_kind)kind, ASYNCRT_PATH_AUTO, NULL, ""};
        if (dev->features.tma) {
            c[n++] = (sweep_config){(asyncrt_tile_kind)kind, ASYNCRT_PATH_TMA, NULL, stencil ? "opt=16" : "threads=256"};
            c[n++] = (sweep_config){(asyncrt_tile_kind)kind, ASYNCRT_PATH_TMA, NULL, stencil ? "opt=32" : "threads=128"};
            if (stencil) c[n++] = (sweep_config){(asyncrt_tile_kind)kind, ASYNCRT_PATH_TMA, NULL, "threads=512"};
        }
        for (size_t b = 0; b < 2; b++) {
            if (b == 1 && dev->cc_major * 10 + dev->cc_minor < 80) break;
            for (asyncrt_op_path p = ASYNCRT_PATH_LDGSTS; p <= ASYNCRT_PATH_PLAIN; p++) {
                if (p == ASYNCRT_PATH_LDGSTS && !dev->features.ldgsts) continue;
                for (size_t t = 0; t < tune_count; t++)
                    c[n++] = (sweep_config){(asyncrt_tile_kind)kind, p, builds[b], tunes[t]};
            }
        }
        if (!stencil && dev->features.ldgsts) /* a persistent grid with a ring of stages, for comparison */
            c[n++] = (sweep_config){(asyncrt_tile_kind)kind, ASYNCRT_PATH_LDGSTS, NULL, "variant=staged,ctas=4,stages=3"};
    }
    return n;
}

/* ---- data and references ------------------------------------------------ */

static uint32_t g_random = 0x2545f491u;
static float random_float(void)
{
    g_random ^= g_random << 13, g_random ^= g_random >> 17, g_random ^= g_random << 5;
    return (float)(g_random >> 8) / (float)(1u << 24) * 8.0f - 4.0f;
}

static void transpose_reference(const float *in, float *out, size_t rows, size_t cols)
{
    for (size_t y0 = 0; y0 < rows; y0 += 64)
        for (size_t x0 = 0; x0 < cols; x0 += 64)
            for (size_t y = y0; y < y0 + 64 && y < rows; y++)
                for (size_t x = x0; x < x0 + 64 && x < cols; x++) out[x * rows + y] = in[y * cols + x];
}

static const float k_five_point[9] = {0, 1, 0, 1, -4, 1, 0, 1, 0};

/* Row y of the 5-point stencil as the kernels compute it: the 3 x 3 terms in
 * row-major order with fmaf from 0, zeros outside the matrix. */
static void stencil_row(const float *in, float *out, size_t rows, size_t cols, size_t y)
{
    for (size_t x = 0; x < cols; x++) {
        float acc = 0.0f;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                long yy = (long)y + dy, xx = (long)x + dx;
                float v = yy >= 0 && yy < (long)rows && xx >= 0 && xx < (long)cols ? in[yy * (long)cols + xx] : 0.0f;
                acc = fmaf(k_five_point[(dy + 1) * 3 + dx + 1], v, acc);
            }
        out[x] = acc;
    }
}

/* Stencil rows checked value by value (the edges, and every 61st row, which
 * meets every row position of every tile height); every other element must
 * merely have been written (not the poison). */
static bool stencil_row_checked(size_t y, size_t rows)
{
    return y < 40 || y + 40 >= rows || y % 61 == 0;
}

/* ---- one configuration -------------------------------------------------- */

typedef struct sweep_data {
    asyncrt_context *ctx;
    const bench_settings *settings;
    size_t rows, cols, bytes;
    asyncrt_deviceptr in, out;
    float *host_in, *expect_t, *expect_s, *got; /* expect_s: the checked rows only, in order */
    double ceiling;                           /* GB/s of the D2D */
    bool csv;
} sweep_data;

/* Checks the output now in d->out; returns a short verdict. */
static const char *verify(sweep_data *d, asyncrt_tile_kind kind, char *detail, size_t detail_size)
{
    if (asyncrt_memory_to_host(d->ctx, d->got, d->out, d->bytes)) return "copy failed";
    size_t n = d->rows * d->cols;
    if (kind == ASYNCRT_TILE_TRANSPOSE) {
        for (size_t i = 0; i < n; i++)
            if (memcmp(&d->got[i], &d->expect_t[i], 4)) {
                snprintf(detail, detail_size, "out[%zu][%zu] differs", i / d->rows, i % d->rows);
                return "WRONG";
            }
        return "ok";
    }
    const float *expect = d->expect_s;
    for (size_t y = 0; y < d->rows; y++) {
        const float *row = d->got + y * d->cols;
        bool checked = stencil_row_checked(y, d->rows);
        for (size_t x = 0; x < d->cols; x++) {
            uint32_t bits;
            memcpy(&bits, &row[x], 4);
            if (bits == 0xFFFFFFFFu || (checked && memcmp(&row[x], &expect[x], 4))) {
                snprintf(detail, detail_size, "out[%zu][%zu] %s", y, x, bits == 0xFFFFFFFFu ? "not written" : "differs");
                return "WRONG";
            }
        }
        if (checked) expect += d->cols;
    }
    return "ok";
}

static void print_row(const sweep_data *d, const char *op, const char *path, const char *build, const char *tune,
                      const char *ran, double ms, const char *check)
{
    double gbs = ms > 0 ? 2.0 * (double)d->bytes / (ms * 1e6) : 0, pct = d->ceiling > 0 ? 100.0 * gbs / d->ceiling : 0;
    if (d->csv)
        printf("sweep,%s,%s,%s,%s,%s,%.6f,%.2f,%.2f,%s\n", op, path, build, tune, ran, ms, gbs, pct, check);
    else
        printf("%-10s %-7s %-9s %-31s %-7s %9.4f %8.1f %6.1f%% %s\n", op, path, build, tune, ran, ms, gbs, pct, check);
    fflush(stdout);
}

static int run_config(sweep_data *d, const sweep_config *c)
{
    const char *op_name = c->kind == ASYNCRT_TILE_STENCIL ? "stencil5" : "transpose";
    const char *build = c->arch ? "sm80-ptx" : "native";
    if (asyncrt_context_set_setting(d->ctx, "ASYNCRT_TILE_TUNE", c->tune) != ASYNCRT_SUCCESS) return 1;
    asyncrt_tile_desc desc = {.size = sizeof desc,
                              .kind = c->kind, .dtype = ASYNCRT_F32, .path = c->path, .arch = c->arch};
    if (c->kind == ASYNCRT_TILE_STENCIL) desc.radius = 1, desc.weights = k_five_point;
    asyncrt_tile_op *op = NULL;
    asyncrt_status st = asyncrt_tile_create(d->ctx, &desc, &op);
    asyncrt_context_set_setting(d->ctx, "ASYNCRT_TILE_TUNE", NULL);
    const char *path = c->path == ASYNCRT_PATH_AUTO ? "auto" : asyncrt_op_path_name(c->path);
    char detail[96] = "";
    if (st) {
        fprintf(stderr, "asyncrt-bench: sweep %s %s %s '%s': %s\n", op_name, path, build, c->tune,
                asyncrt_context_last_error(d->ctx));
        return 1;
    }
    const char *ran = asyncrt_op_path_name(asyncrt_tile_launch_path(op, d->rows, d->cols, d->in, d->out));
    const char *check = "launch failed";
    double ms = 0;
    if (!(st = asyncrt_memory_fill(d->ctx, d->out, 0xFF, d->bytes, NULL)) &&
        !(st = asyncrt_tile_launch(op, d->rows, d->cols, d->in, d->out, NULL)) && !(st = asyncrt_synchronize(d->ctx)))
        check = verify(d, c->kind, detail, sizeof detail);
    if (!st) st = bench_tile(d->ctx, d->settings, op, d->rows, d->cols, d->in, d->out, &ms);
    if (st) fprintf(stderr, "asyncrt-bench: sweep %s %s: %s\n", op_name, path, asyncrt_context_last_error(d->ctx));
    if (*detail) fprintf(stderr, "asyncrt-bench: sweep %s %s %s '%s': %s\n", op_name, path, build, c->tune, detail);
    char tune[48];
    snprintf(tune, sizeof tune, "%s", *c->tune ? c->tune : "(default)");
    if (c->path == ASYNCRT_PATH_AUTO) ran = asyncrt_op_path_name(asyncrt_tile_path_of(op)); /* the pick */
    print_row(d, op_name, path, build, tune, ran, ms, check);
    asyncrt_tile_destroy(op);
    return st || strcmp(check, "ok") ? 1 : 0;
}

/* ---- the peer transpose --------------------------------------------------- */

/* The well-known shared-memory transpose: a 32 x 32 tile with one padding
 * column (so reading a column hits 32 different banks), 32 x 8 threads each
 * moving 4 elements in and 4 out, 4-byte accesses. */
static const char k_peer_source[] =
    "#define TILE 32\n"
    "#define STEP 8\n"
    "extern \"C\" __global__ void __launch_bounds__(TILE * STEP)\n"
    "peer_transpose(float *out, const float *in, int rows, int cols)\n"
    "{\n"
    "    __shared__ float tile[TILE][TILE + 1];\n"
    "    int col = blockIdx.x * TILE + threadIdx.x, row = blockIdx.y * TILE + threadIdx.y;\n"
    "    for (int k = 0; k < TILE; k += STEP)\n"
    "        if (col < cols && row + k < rows) tile[threadIdx.y + k][threadIdx.x] = in[(size_t)(row + k) * cols + col];\n"
    "    __syncthreads();\n"
    "    int ocol = blockIdx.y * TILE + threadIdx.x, orow = blockIdx.x * TILE + threadIdx.y;\n"
    "    for (int k = 0; k < TILE; k += STEP)\n"
    "        if (ocol < rows && orow + k < cols) out[(size_t)(orow + k) * rows + ocol] = tile[threadIdx.x][threadIdx.y + k];\n"
    "}\n";

typedef struct peer_arg {
    asyncrt_kernel *kernel;
    asyncrt_launch_config cfg;
    void *args[4];
    size_t sizes[4];
} peer_arg;

static asyncrt_status run_peer(void *arg)
{
    peer_arg *a = arg;
    return asyncrt_kernel_launch(a->kernel, &a->cfg, a->args, a->sizes, 4);
}

static int run_peer_config(sweep_data *d, const char *arch, double *ms)
{
    asyncrt_compile_options opts = {.size = sizeof opts, .arch = arch};
    asyncrt_module *module = NULL;
    peer_arg a = {0};
    int rows = (int)d->rows, cols = (int)d->cols;
    asyncrt_deviceptr out = d->out, in = d->in;
    a.args[0] = &out, a.args[1] = &in, a.args[2] = &rows, a.args[3] = &cols;
    a.sizes[0] = a.sizes[1] = sizeof(asyncrt_deviceptr), a.sizes[2] = a.sizes[3] = sizeof(int);
    a.cfg = (asyncrt_launch_config){.size = sizeof(asyncrt_launch_config),
                                    .grid = {(unsigned)((d->cols + 31) / 32), (unsigned)((d->rows + 31) / 32), 1},
                                    .block = {32, 8, 1}};
    const char *check = "launch failed";
    char detail[96] = "";
    *ms = 0;
    asyncrt_status st = asyncrt_module_build(d->ctx, "peer_transpose.cu", k_peer_source, &opts, &module);
    if (!st) st = asyncrt_module_get_kernel(module, "peer_transpose", &a.kernel);
    if (!st && !(st = asyncrt_memory_fill(d->ctx, d->out, 0xFF, d->bytes, NULL)) && !(st = run_peer(&a)) &&
        !(st = asyncrt_synchronize(d->ctx)))
        check = verify(d, ASYNCRT_TILE_TRANSPOSE, detail, sizeof detail);
    if (!st) st = bench_timed(d->ctx, d->settings, run_peer, &a, ms);
    if (st) fprintf(stderr, "asyncrt-bench: peer transpose: %s\n", asyncrt_context_last_error(d->ctx));
    if (*detail) fprintf(stderr, "asyncrt-bench: peer transpose: %s\n", detail);
    print_row(d, "transpose", "peer", arch ? "sm80-ptx" : "native", "32x32 smem tile, +1 pad, 32x8", "cuda", *ms, check);
    asyncrt_module_destroy(module);
    return st || strcmp(check, "ok") ? 1 : 0;
}

/* ---- the run -------------------------------------------------------------- */

static asyncrt_status measure_ceiling(sweep_data *d, double *ms)
{
    asyncrt_status st = bench_copy(d->ctx, d->settings, d->out, d->in, d->bytes, ms);
    if (!st) d->ceiling = 2.0 * (double)d->bytes / (*ms * 1e6);
    return st;
}

int tile_sweep_run(asyncrt_context *ctx, const bench_settings *s, size_t rows, size_t cols, const char *filter,
                   bool csv)
{
    const asyncrt_device_info *dev = asyncrt_context_device(ctx);
    sweep_data d = {.ctx = ctx, .settings = s, .rows = rows, .cols = cols, .bytes = rows * cols * 4, .csv = csv};
    size_t n = rows * cols, checked_rows = 0;
    for (size_t y = 0; y < rows; y++) checked_rows += stencil_row_checked(y, rows);
    d.host_in = malloc(d.bytes), d.expect_t = malloc(d.bytes), d.got = malloc(d.bytes);
    d.expect_s = malloc(checked_rows * cols * 4);
    int failures = 0;
    asyncrt_status st = ASYNCRT_SUCCESS;
    double before = 0, after = 0;
    if (!d.host_in || !d.expect_t || !d.got || !d.expect_s) {
        fprintf(stderr, "asyncrt-bench: sweep: out of host memory for %zu x %zu\n", rows, cols);
        failures = 1;
        goto done;
    }
    for (size_t i = 0; i < n; i++) d.host_in[i] = random_float();
    transpose_reference(d.host_in, d.expect_t, rows, cols);
    for (size_t y = 0, k = 0; y < rows; y++)
        if (stencil_row_checked(y, rows)) stencil_row(d.host_in, d.expect_s + k++ * cols, rows, cols, y);
    if ((st = asyncrt_memory_alloc(ctx, d.bytes, &d.in)) || (st = asyncrt_memory_alloc(ctx, d.bytes, &d.out)) ||
        (st = asyncrt_memory_to_device(ctx, d.in, d.host_in, d.bytes)) || (st = measure_ceiling(&d, &before)))
        goto done;
    if (csv) printf("sweep,op,path,build,tune,ran,ms,gb_per_s,pct_of_d2d,check\n");
    else
        printf("\nTile sweep, %zu x %zu f32 (%zu MiB, random), %s (sm_%d%d); cuMemcpyDtoD of the same bytes "
               "%.4f ms = %.1f GB/s (100%%); median of %d runs after %d warm-up\n"
               "%-10s %-7s %-9s %-31s %-7s %9s %8s %7s %s\n",
               rows, cols, d.bytes >> 20, dev->name, dev->cc_major, dev->cc_minor, before, d.ceiling, s->repeats,
               s->warmup, "op", "path", "build", "tune", "ran", "ms", "GB/s", "% D2D", "check");

    /* The sm80-ptx build is PTX, which a driver older than NVRTC refuses (docs/library.md, "Arch selection"):
     * those rows are skipped, with the rule's sentence, rather than failed. */
    bool ptx_loads = asyncrt_context_check_target(ctx, "compute_80") == ASYNCRT_SUCCESS;
    if (!ptx_loads)
        fprintf(csv ? stderr : stdout, "sweep: the sm80-ptx rows are skipped: %s\n", asyncrt_context_last_error(ctx));
    sweep_config configs[SWEEP_MAX];
    size_t count = sweep_configs(dev, configs);
    double peer_ms[2] = {0, 0}, best_ms = 0;
    for (size_t i = 0; i < count; i++) {
        char label[128];
        snprintf(label, sizeof label, "%s/%s/%s/%s", configs[i].kind == ASYNCRT_TILE_STENCIL ? "stencil" : "transpose",
                 asyncrt_op_path_name(configs[i].path), configs[i].arch ? "sm80-ptx" : "native",
                 *configs[i].tune ? configs[i].tune : "(default)");
        if ((filter && !strstr(label, filter)) || (configs[i].arch && !ptx_loads)) continue;
        failures += run_config(&d, &configs[i]);
    }
    for (int b = 0; b < 2 && (!filter || strstr("transpose/peer", filter)); b++) {
        if (b == 1 && (dev->cc_major * 10 + dev->cc_minor < 80 || !ptx_loads)) break;
        failures += run_peer_config(&d, b ? "compute_80" : NULL, &peer_ms[b]);
    }
    /* The default transpose against the peer, same run. */
    asyncrt_context_set_setting(ctx, "ASYNCRT_TILE_TUNE", NULL); /* the defaults */
    asyncrt_tile_desc auto_t = {.size = sizeof auto_t, .kind = ASYNCRT_TILE_TRANSPOSE, .dtype = ASYNCRT_F32};
    asyncrt_tile_op *op = NULL;
    if (peer_ms[0] > 0 && !asyncrt_tile_create(ctx, &auto_t, &op) &&
        !bench_tile(ctx, s, op, rows, cols, d.in, d.out, &best_ms) && best_ms > 0 && !csv)
        printf("peer ratio: the peer transpose takes %.2fx the time of asyncrt's default (%s) transpose\n",
               peer_ms[0] / best_ms, asyncrt_op_path_name(asyncrt_tile_path_of(op)));
    asyncrt_tile_destroy(op);
    if (!measure_ceiling(&d, &after) && !csv)
        printf("cuMemcpyDtoD again after the sweep: %.4f ms (%+.1f%% against the start)\n", after,
               100.0 * (before - after) / after);
done:
    if (st) {
        fprintf(stderr, "asyncrt-bench: sweep: %s\n", asyncrt_context_last_error(ctx));
        failures++;
    }
    asyncrt_memory_free(ctx, d.in);
    asyncrt_memory_free(ctx, d.out);
    free(d.host_in);
    free(d.expect_t);
    free(d.expect_s);
    free(d.got);
    if (failures && !csv) printf("sweep: %d configuration(s) failed (see stderr)\n", failures);
    return failures ? 1 : 0;
}
