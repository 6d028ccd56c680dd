/* The built-in 2D tile ops (transpose, tile map, stencil): their steps
 * (op_driver.h) generate a kernel from kernels_src/tile_*.cuh for the chosen
 * path; they launch with tensor maps on the TMA path. The geometry constants
 * below mirror those of the templates. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/tensormap.h"
#include "asyncrt/tile_ops.h"
#include "op_driver.h"
#include "op_util.h"

#define TILE_MAX_STAGES 4
#define TILE_ALIGN_SLACK 1024           /* the kernels round the shared memory base up to 1 KiB */

/* Variants of the plain and LDGSTS transpose/tile map (tile_transpose.cuh). */
enum { VARIANT_BLOCKS, VARIANT_ROWS, VARIANT_STAGED };
static const char *const k_variants[] = {"blocks", "rows", "staged"};

/* How the kernels are shaped; ASYNCRT_TILE_TUNE overrides (for measuring). */
typedef struct tile_tune {
    unsigned variant;  /* plain and LDGSTS transpose / tile map */
    unsigned threads;  /* per CTA */
    unsigned opt;      /* stencil: output rows per thread */
    unsigned tw;       /* stencil: tile width in elements (128, or 256 off the TMA path) */
    unsigned stages;   /* per CTA, used with a persistent grid */
    unsigned ctas;     /* CTAs per SM of a persistent grid; 0 = one CTA per tile */
    unsigned minctas;  /* __launch_bounds__' minimum CTAs per SM (caps registers); 0 = none */
    unsigned l2;       /* L2 prefetch hint of the plain/LDGSTS loads: 0, 128 or 256 bytes */
} tile_tune;

/* The kernels' one parameter, byte for byte (tile_common.cuh). */
typedef struct tile_params {
    asyncrt_tensor_map in_map, out_map;
    uint64_t in, out;
    int32_t rows, cols, tiles_x, tiles, vec_in, vec_out;
    float w[81];
} tile_params;
_Static_assert(offsetof(tile_params, in) == 256 && offsetof(tile_params, w) == 296 && sizeof(tile_params) == 640,
               "tile_params must match asyncrt_tile_params in kernels_src/tile_common.cuh");

static const struct tile_dtype {
    const char *storage, *compute;
    bool is_float;
} tile_dtypes[ASYNCRT_DTYPE_COUNT] = {
    [ASYNCRT_F32] = {"float", "float", true},
    [ASYNCRT_I32] = {"int", "int", false},
    [ASYNCRT_U32] = {"unsigned", "unsigned", false},
    [ASYNCRT_F16] = {"asyncrt_f16", "float", true},
    [ASYNCRT_BF16] = {"asyncrt_bf16", "float", true},
};

typedef struct tile_kernel {
    asyncrt_kernel *kernel;
    size_t shared_bytes;
} tile_kernel;

struct asyncrt_tile_op {
    asyncrt_op base; /* ctx, path, arch, source, program, module */
    asyncrt_tile_kind kind;
    size_t esize;
    int radius, stages;
    tile_tune tune;
    unsigned threads, th;  /* CTA size; tile height in elements */
    unsigned box_w;     /* stencil, TMA: staged columns per row (tile_stencil_tma.cuh) */
    float weights[81];
    tile_kernel main, fallback;  /* fallback: the LDGSTS kernel of a TMA op; no kernels without a device */
    /* The tensor maps of the last TMA launch, reused while its arguments repeat. */
    bool maps_valid;
    size_t map_rows, map_cols;
    asyncrt_deviceptr map_in, map_out;
    asyncrt_tensor_map in_map, out_map;
};

asyncrt_op_path asyncrt_tile_path_of(const asyncrt_tile_op *op) { return op->base.path; }
const asyncrt_program *asyncrt_tile_program(const asyncrt_tile_op *op) { return op->base.program; }
const char *asyncrt_tile_source(const asyncrt_tile_op *op) { return op->base.source; }

static size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* ---- geometry (mirrors tile_transpose*.cuh and tile_stencil*.cuh) -------- */

/* Tile width and height in elements. */
static void tile_shape(const asyncrt_tile_op *op, size_t *tw, size_t *th)
{
    *tw = op->kind == ASYNCRT_TILE_STENCIL ? op->tune.tw : 128 / op->esize; /* stencil TW; else S */
    *th = op->th;
}

static asyncrt_status parse_tune(asyncrt_context *ctx, bool stencil, asyncrt_op_path path, int target, tile_tune *t)
{
    const char *env = ctx->settings.tile_tune;
    /* The defaults: one CTA per tile (measured fastest on the H100 on every
     * path, see asyncrt_tile_create), 256 threads, the staged variant (both
     * directions whole-sector and coalesced; tile_transpose.cuh says why),
     * its registers capped for 6 CTAs per SM (40 instead of 54, no spills:
     * 6 x 16 KiB of loads in flight per SM instead of 4). Off the TMA path,
     * loads ask for a 256-byte L2 prefetch, and the stencil takes 32 rows per
     * thread on LDGSTS and 128 threads on the plain path, whose prefetch only
     * the compute_80 build gains from: the best of `asyncrt-bench
     * --tile-sweep` on the H100 (16384^2 f32, random, same-run D2D; sm_90 and
     * compute_80 builds: transpose LDGSTS 94.1/94.1%, plain 93.1/93.5%;
     * stencil LDGSTS 96.1/95.5%, plain 94.4/96.6% (sm_90 with the prefetch:
     * 89.9%); against transpose 93.3/92.1% and stencil 91.2/90.1% before). */
    bool plain_stencil_sm90 = stencil && path == ASYNCRT_PATH_PLAIN && target >= 90;
    *t = (tile_tune){.variant = VARIANT_STAGED, .threads = 256, .opt = 16, .tw = 128, .stages = 1, .ctas = 0,
                     .minctas = stencil ? 0 : 6, .l2 = path == ASYNCRT_PATH_TMA || plain_stencil_sm90 ? 0 : 256};
    if (stencil && path == ASYNCRT_PATH_LDGSTS) t->opt = 32;
    bool threads_given = false;
    if (!env) env = "";
    char key[16], value[16];
    unsigned long v;
    bool number;
    int more;
    for (const char *c = env; (more = asyncrt__tune_next(&c, key, value, &v, &number)) != 0;) {
        if (more < 0) goto bad;
        if (!strcmp(key, "variant")) {
            unsigned k = 0;
            while (k < 3 && strcmp(value, k_variants[k])) k++;
            if (k == 3) goto bad;
            t->variant = k;
        } else if (!strcmp(key, "threads") && number && (v == 64 || v == 128 || v == 192 || v == 256 || v == 512)) {
            t->threads = (unsigned)v;
            threads_given = true;
        } else if (!strcmp(key, "opt") && number && (v == 8 || v == 16 || v == 32)) {
            t->opt = (unsigned)v;
        } else if (!strcmp(key, "tw") && number && (v == 128 || v == 256)) {
            t->tw = (unsigned)v;
        } else if (!strcmp(key, "stages") && number && v >= 1 && v <= TILE_MAX_STAGES) {
            t->stages = (unsigned)v;
        } else if (!strcmp(key, "ctas") && number && v <= 32) {
            t->ctas = (unsigned)v;
        } else if (!strcmp(key, "minctas") && number && v <= 16) {
            t->minctas = (unsigned)v;
        } else if (!strcmp(key, "l2") && number && (v == 0 || v == 128 || v == 256)) {
            t->l2 = (unsigned)v;
        } else goto bad;
    }
    if (stencil && path == ASYNCRT_PATH_PLAIN && !threads_given && t->tw == 128) t->threads = 128;
    /* threads: transpose/map 64..256 in 64s, stencil 128, 256 or 512. */
    if (stencil ? t->threads % t->tw != 0 : t->threads > 256) goto bad;
    if (t->minctas * t->threads > 2048) goto bad; /* an SM holds at most 2048 threads */
    return ASYNCRT_SUCCESS;
bad:
    return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                        "ASYNCRT_TILE_TUNE='%s' is not a list of variant=blocks|rows|staged, threads=64|128|192|256 "
                        "(transpose, map) or 128|256|512 (stencil; a multiple of tw), opt=8|16|32 (stencil rows per thread), "
                        "tw=128|256 (stencil tile width), "
                        "stages=1..%d, ctas=0..32 (CTAs per SM; 0: one per tile), minctas=0..16 (launch bounds; x threads <= 2048), "
                        "l2=0|128|256 (L2 prefetch bytes)", env,
                        TILE_MAX_STAGES);
}

/* Bytes of one stage, and of what the kernel needs besides its stages. */
static void stage_sizes(const asyncrt_tile_op *op, bool tma, size_t *stage, size_t *fixed)
{
    size_t e = op->esize, v = 16 / e, th = op->th;
    if (op->kind != ASYNCRT_TILE_STENCIL) {
        *stage = th * 128;                   /* H rows x 128 B (= V x threads x 16 B) */
        *fixed = tma ? 2 * *stage + 8 * TILE_MAX_STAGES : 0;
    } else if (tma) {
        *stage = round_up(op->box_w * (th + 2 * op->radius) * e, 1024);
        *fixed = 2 * op->tune.tw * th * e + 8 * TILE_MAX_STAGES;
    } else {
        *stage = round_up((th + 2 * op->radius) * (op->tune.tw + 2 * v) * e, 128);
        *fixed = 0;
    }
    *fixed += TILE_ALIGN_SLACK;
}

static void plan_kernel(const asyncrt_tile_op *op, asyncrt_op_path path, tile_kernel *k)
{
    size_t stage, fixed;
    stage_sizes(op, path == ASYNCRT_PATH_TMA, &stage, &fixed);
    k->shared_bytes = path == ASYNCRT_PATH_PLAIN && op->kind != ASYNCRT_TILE_STENCIL &&
                              op->tune.variant == VARIANT_BLOCKS
                          ? 0
                          : (size_t)(path == ASYNCRT_PATH_PLAIN ? 1 : op->stages) * stage + fixed;
}

/* ---- validation --------------------------------------------------------- */

/* Step: the description's rules. */
static asyncrt_status check_desc(asyncrt_context *ctx, const void *desc)
{
    const asyncrt_tile_desc *d = desc;
    if ((unsigned)d->kind > ASYNCRT_TILE_STENCIL)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: kind %d is not an asyncrt_tile_kind",
                            (int)d->kind);
    if ((unsigned)d->dtype >= ASYNCRT_DTYPE_COUNT)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: dtype %d is not an asyncrt_dtype",
                            (int)d->dtype);
    if (!tile_dtypes[d->dtype].storage)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_UNSUPPORTED,
                            "tile: dtype %s is not supported; tile ops take f32, i32, u32, f16 or bf16",
                            asyncrt_dtype_name(d->dtype));
    if (d->expression && !*d->expression)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: the expression is empty (use NULL for the default)");
    if (d->kind == ASYNCRT_TILE_MAP && !d->expression)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: a MAP needs an expression that sets `out`");
    if (d->kind != ASYNCRT_TILE_STENCIL) return ASYNCRT_SUCCESS;
    if (d->radius < 1 || d->radius > ASYNCRT_TILE_MAX_RADIUS)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: stencil radius %d is outside 1..%d",
                            d->radius, ASYNCRT_TILE_MAX_RADIUS);
    if (!d->expression == !d->weights)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "tile: a stencil needs exactly one of weights and expression (%s given)",
                            d->weights ? "both" : "neither");
    if (d->weights && !tile_dtypes[d->dtype].is_float)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "tile: stencil weights need a float dtype (f32, f16, bf16), but the dtype is %s; "
                            "use an expression", asyncrt_dtype_name(d->dtype));
    return ASYNCRT_SUCCESS;
}

/* ---- source generation -------------------------------------------------- */

/* Step: the kernel's source, and for TMA its LDGSTS fallback. */
static char *generate(const asyncrt_op *base, const void *desc)
{
    const asyncrt_tile_desc *d = desc;
    const asyncrt_tile_op *op = (const asyncrt_tile_op *)base;
    const struct tile_dtype *t = &tile_dtypes[d->dtype];
    bool stencil = d->kind == ASYNCRT_TILE_STENCIL, tma = base->path == ASYNCRT_PATH_TMA;
    asyncrt_strbuf b = {0};
    asyncrt__sb_printf(&b, "// asyncrt tile op, %s, %s path (generated)\n",
                      stencil ? "stencil" : d->kind == ASYNCRT_TILE_MAP ? "map" : "transpose",
                      asyncrt_op_path_name(base->path));
    asyncrt__sb_printf(&b, "#include <asyncrt/tile_%s%s.cuh>\n\n", stencil ? "stencil" : "transpose", tma ? "_tma" : "");

    const char *expression = d->expression ? d->expression : "out = v;";
    if (stencil && d->expression) {
        asyncrt__sb_printf(&b, "__device__ __forceinline__ void asyncrt_tile_body(%s &out, const asyncrt_stencil_in<%s> &in, "
                              "const int y, const int x, const int rows, const int cols)\n",
                          t->compute, t->storage);
    } else if (!stencil) {
        asyncrt__sb_printf(&b, "__device__ __forceinline__ void asyncrt_tile_body(%s &out, const %s v, const int y, "
                              "const int x, const int rows, const int cols)\n",
                          t->compute, t->compute);
    }
    if (!stencil || d->expression) {
        asyncrt__sb_printf(&b, "{\n#line 1 \"tile expression\"\n%s\n", expression);
        asyncrt__sb_printf(&b, "#line %u \"asyncrt_tile.cu\"\n}\n\n", asyncrt__sb_lines(&b) + 1);
    }

    asyncrt__sb_printf(&b, "struct asyncrt_tile_op {\n    typedef %s T;\n    typedef %s C;\n", t->storage, t->compute);
    asyncrt__sb_printf(&b, "    static constexpr int threads = %u, stages = %d, variant = %u, opt = %u, l2 = %u;\n",
                      op->threads, op->stages, op->tune.variant, op->tune.opt, op->tune.l2);
    if (stencil) {
        asyncrt__sb_printf(&b, "    static constexpr int radius = %d, box_w = %u, tw = %u;\n"
                              "    static constexpr bool weights = %s;\n",
                          op->radius, op->box_w, op->tune.tw, d->weights ? "true" : "false");
        if (d->expression)
            asyncrt__sb_printf(&b, "    static __device__ __forceinline__ C eval(const asyncrt_stencil_in<T> &in, int y, "
                                  "int x, int rows, int cols)\n    {\n        C out = 0;\n"
                                  "        asyncrt_tile_body(out, in, y, x, rows, cols);\n        return out;\n    }\n");
    } else {
        asyncrt__sb_printf(&b, "    static constexpr bool transpose = %s;\n",
                          d->kind == ASYNCRT_TILE_TRANSPOSE ? "true" : "false");
        asyncrt__sb_printf(&b, "    static __device__ __forceinline__ C apply(C v, int y, int x, int rows, int cols)\n"
                              "    {\n        C out = 0;\n        asyncrt_tile_body(out, v, y, x, rows, cols);\n"
                              "        return out;\n    }\n");
    }
    asyncrt__sb_printf(&b, "};\n\n");

    /* The main kernel, and for TMA the LDGSTS kernel of matrices TMA cannot map. */
    const char *bodies[2];
    if (stencil) {
        bodies[0] = tma ? "asyncrt_stencil_tma<asyncrt_tile_op>"
                  : base->path == ASYNCRT_PATH_LDGSTS ? "asyncrt_stencil_staged<asyncrt_tile_op, true>"
                                                     : "asyncrt_stencil_staged<asyncrt_tile_op, false>";
        bodies[1] = "asyncrt_stencil_staged<asyncrt_tile_op, true>";
    } else {
        bool blocks = op->tune.variant == VARIANT_BLOCKS;
        const char *ldgsts = blocks ? "asyncrt_tile_transpose_ldgsts<asyncrt_tile_op>"
                                    : "asyncrt_tile_transpose_rows<asyncrt_tile_op, true>";
        bodies[0] = tma ? "asyncrt_tile_transpose_tma<asyncrt_tile_op>"
                  : base->path == ASYNCRT_PATH_LDGSTS ? ldgsts
                  : blocks ? "asyncrt_tile_transpose_plain<asyncrt_tile_op>"
                           : "asyncrt_tile_transpose_rows<asyncrt_tile_op, false>";
        bodies[1] = ldgsts;
    }
    char bounds[32];
    snprintf(bounds, sizeof bounds, op->tune.minctas ? "%u, %u" : "%u", op->threads, op->tune.minctas);
    for (int k = 0; k < (tma ? 2 : 1); k++)
        asyncrt__sb_printf(&b, "extern \"C\" __global__ void __launch_bounds__(%s)\n"
                              "asyncrt_tile_kernel%s(const __grid_constant__ asyncrt_tile_params p)\n{\n    %s(p);\n}\n",
                          bounds, k ? "_fallback" : "", bodies[k]);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

/* ---- the table of steps, create ---------------------------------------- */

static void wants(const void *desc, asyncrt_dispatch_op *ranking, asyncrt_op_path *path, const char **arch)
{
    const asyncrt_tile_desc *d = desc;
    *ranking = d->kind == ASYNCRT_TILE_STENCIL ? ASYNCRT_DISPATCH_STENCIL
               : d->kind == ASYNCRT_TILE_MAP   ? ASYNCRT_DISPATCH_TILE_MAP
                                               : ASYNCRT_DISPATCH_TRANSPOSE;
    *path = d->path;
    *arch = d->arch;
}

/* Step: the tuning (ASYNCRT_TILE_TUNE, from the context's settings) and what
 * follows from it and the description. */
static asyncrt_status tune(asyncrt_op *base, const void *desc)
{
    const asyncrt_tile_desc *d = desc;
    asyncrt_tile_op *op = (asyncrt_tile_op *)base;
    op->kind = d->kind;
    op->esize = asyncrt_dtype_size(d->dtype);
    ASYNCRT_TRY(parse_tune(base->ctx, d->kind == ASYNCRT_TILE_STENCIL, base->path, base->arch.number, &op->tune));
    if (d->kind == ASYNCRT_TILE_STENCIL && base->path == ASYNCRT_PATH_TMA && op->tune.tw + 16 / op->esize * 2 > 256)
        return asyncrt__fail(base->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "ASYNCRT_TILE_TUNE tw=%u: the TMA stencil loads boxes of tw + 2 x %zu columns, and a "
                            "tensor map's box is at most 256 wide; use tw=128 or the plain or LDGSTS path",
                            op->tune.tw, 16 / op->esize);
    if (d->kind == ASYNCRT_TILE_STENCIL) {
        op->radius = d->radius;
        op->box_w = (unsigned)(op->tune.tw + 2 * (16 / op->esize)); /* a 16-byte vector of halo each side */
        if (d->weights) memcpy(op->weights, d->weights, sizeof(float) * (size_t)(2 * d->radius + 1) * (2 * d->radius + 1));
    }
    return ASYNCRT_SUCCESS;
}

/* Step: the CTA and tile shape, the stages and each kernel's shared memory. */
static void plan(asyncrt_op *base, const void *desc, const asyncrt_device_info *dev)
{
    (void)desc, (void)dev;
    asyncrt_tile_op *op = (asyncrt_tile_op *)base;
    op->threads = op->tune.threads;
    op->th = op->kind == ASYNCRT_TILE_STENCIL ? op->tune.opt * op->threads / op->tune.tw
                                              : op->threads / 64 * (unsigned)(128 / op->esize); /* H = K * S */
    /* One CTA per tile, each with a single stage. On the H100 (16384 x 16384
     * f32, asyncrt-bench, same-run D2D ceiling) that beat a persistent grid with
     * a ring of 2-4 stages on every path: transpose TMA 93.7% against 90.1%,
     * 5-point stencil TMA 93.6% against 86.2%, LDGSTS and plain gaining as much
     * (the block scheduler balances the tail better than a grid-stride loop).
     * ASYNCRT_TILE_TUNE=ctas=N,stages=M brings the persistent ring back. */
    op->stages = op->tune.ctas ? (int)op->tune.stages : 1;
    plan_kernel(op, base->path, &op->main);
    if (base->path == ASYNCRT_PATH_TMA) plan_kernel(op, ASYNCRT_PATH_LDGSTS, &op->fallback);
}

static size_t kernels(asyncrt_op *base, const char *names[ASYNCRT_OP_MAX_KERNELS],
                      asyncrt_kernel **slots[ASYNCRT_OP_MAX_KERNELS])
{
    asyncrt_tile_op *op = (asyncrt_tile_op *)base;
    names[0] = "asyncrt_tile_kernel";
    slots[0] = &op->main.kernel;
    names[1] = "asyncrt_tile_kernel_fallback";
    slots[1] = &op->fallback.kernel;
    return base->path == ASYNCRT_PATH_TMA ? 2 : 1;
}

static void report(const asyncrt_op *base, const char *arch_name)
{
    const asyncrt_tile_op *op = (const asyncrt_tile_op *)base;
    asyncrt__log(base->ctx, 1, "tile: %s path for %s, variant %s, %u threads, %u-row tiles, %s, %d stage(s), %zu bytes of "
                "shared memory", asyncrt_op_path_name(base->path), arch_name, k_variants[op->tune.variant], op->threads,
                op->th, op->tune.ctas ? "persistent grid" : "one CTA per tile", op->stages, op->main.shared_bytes);
}

static const asyncrt_op_module k_tile_module = {
    .name = "tile", .source_name = "asyncrt_tile.cu", .size = sizeof(asyncrt_tile_op),
    .check = check_desc, .wants = wants, .tune = tune, .plan = plan, .generate = generate,
    .kernels = kernels, .report = report,
};

void asyncrt_tile_destroy(asyncrt_tile_op *op) { asyncrt__op_destroy(op ? &op->base : NULL); }

asyncrt_status asyncrt_tile_create(asyncrt_context *ctx, const asyncrt_tile_desc *d, asyncrt_tile_op **out)
{
    asyncrt_tile_desc full; /* the caller's, read by its size */
    if (out) *out = NULL;
    if (d) ASYNCRT_TRY(asyncrt__sized_take(ctx, ASYNCRT_SIZED_TILE_DESC, d, &full, "tile"));
    asyncrt_op *op = NULL;
    asyncrt_status s = asyncrt__op_create(ctx, &k_tile_module, d ? &full : NULL, out ? &op : NULL);
    if (out) *out = (asyncrt_tile_op *)op;
    return s;
}

/* ---- launch ------------------------------------------------------------- */

/* Rows of in and out (out_cols elements each) start on 16-byte boundaries. */
static bool rows_aligned(const asyncrt_tile_op *op, asyncrt_deviceptr p, size_t cols)
{
    return p % 16 == 0 && cols * op->esize % 16 == 0;
}

static size_t out_cols_of(const asyncrt_tile_op *op, size_t rows, size_t cols)
{
    return op->kind == ASYNCRT_TILE_TRANSPOSE ? rows : cols;
}

asyncrt_op_path asyncrt_tile_launch_path(const asyncrt_tile_op *op, size_t rows, size_t cols, asyncrt_deviceptr in,
                                          asyncrt_deviceptr out)
{
    if (op->base.path != ASYNCRT_PATH_TMA) return op->base.path;
    bool ok = rows_aligned(op, in, cols) && rows_aligned(op, out, out_cols_of(op, rows, cols));
    return ok ? ASYNCRT_PATH_TMA : ASYNCRT_PATH_LDGSTS;
}

/* One 2D map of a rows x cols matrix at p with box {box_cols, box_rows}. */
static asyncrt_status encode(asyncrt_tile_op *op, asyncrt_deviceptr p, size_t rows, size_t cols, uint32_t box_rows,
                             uint32_t box_cols, asyncrt_tensormap_swizzle swizzle, asyncrt_tensor_map *out)
{
    asyncrt_tensormap_desc d;
    uint64_t shape[2] = {rows, cols};
    uint32_t box[2] = {box_rows, box_cols};
    /* The element size is all a copy needs: pick the unsigned type of that size. */
    asyncrt_tensormap_dtype t = op->esize == 4 ? ASYNCRT_TENSORMAP_DTYPE_U32 : ASYNCRT_TENSORMAP_DTYPE_U16;
    ASYNCRT_TRY(asyncrt_tensormap_describe_dense(&d, t, p, 2, shape, box));
    d.swizzle = swizzle;
    return asyncrt_tensormap_encode(op->base.ctx, &d, out);
}

static asyncrt_status encode_maps(asyncrt_tile_op *op, size_t rows, size_t cols, asyncrt_deviceptr in,
                                  asyncrt_deviceptr out, tile_params *p)
{
    if (!(op->maps_valid && op->map_rows == rows && op->map_cols == cols && op->map_in == in && op->map_out == out)) {
        op->maps_valid = false;
        if (op->kind == ASYNCRT_TILE_STENCIL) {
            ASYNCRT_TRY(encode(op, in, rows, cols, op->th + 2 * (uint32_t)op->radius, op->box_w,
                               ASYNCRT_TENSORMAP_SWIZZLE_NONE, &op->in_map));
            ASYNCRT_TRY(encode(op, out, rows, cols, op->th, op->tune.tw, ASYNCRT_TENSORMAP_SWIZZLE_NONE, &op->out_map));
        } else {
            size_t tw, th;
            tile_shape(op, &tw, &th);
            bool tr = op->kind == ASYNCRT_TILE_TRANSPOSE;
            ASYNCRT_TRY(encode(op, in, rows, cols, (uint32_t)th, (uint32_t)tw, ASYNCRT_TENSORMAP_SWIZZLE_128B, &op->in_map));
            ASYNCRT_TRY(encode(op, out, tr ? cols : rows, tr ? rows : cols, (uint32_t)tw, (uint32_t)tw,
                               ASYNCRT_TENSORMAP_SWIZZLE_128B, &op->out_map));
        }
        op->maps_valid = true;
        op->map_rows = rows;
        op->map_cols = cols;
        op->map_in = in;
        op->map_out = out;
    }
    p->in_map = op->in_map;
    p->out_map = op->out_map;
    return ASYNCRT_SUCCESS;
}

static asyncrt_status tile_launch(asyncrt_tile_op *op, size_t rows, size_t cols, asyncrt_deviceptr in,
                                  asyncrt_deviceptr out, asyncrt_stream stream)
{
    asyncrt_context *ctx = op->base.ctx;
    if (!op->main.kernel)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_NO_DEVICE,
                            "tile: compiled without an open device, so it cannot be launched; open the device "
                            "before asyncrt_tile_create");
    if (rows > INT_MAX || cols > INT_MAX)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "tile: the matrix is %zu x %zu; rows and cols must be at most %d", rows, cols, INT_MAX);
    if (!in || !out || in % op->esize || out % op->esize)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "tile: in (0x%llx) and out (0x%llx) must be device pointers aligned to the element "
                            "size (%zu bytes)", (unsigned long long)in, (unsigned long long)out, op->esize);
    if (rows == 0 || cols == 0) return ASYNCRT_SUCCESS;
    ASYNCRT_TRY(asyncrt__op_check_stream(&op->base, stream));

    size_t tw, th;
    tile_shape(op, &tw, &th);
    size_t tiles_x = (cols + tw - 1) / tw, tiles = tiles_x * ((rows + th - 1) / th);
    if (tiles > INT_MAX)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "tile: the matrix is %zu x %zu, which is %zu tiles; at most %d are allowed", rows, cols,
                            tiles, INT_MAX);
    tile_params p;
    memset(&p, 0, sizeof p);
    p.in = in;
    p.out = out;
    p.rows = (int32_t)rows;
    p.cols = (int32_t)cols;
    p.tiles_x = (int32_t)tiles_x;
    p.tiles = (int32_t)tiles;
    p.vec_in = rows_aligned(op, in, cols);
    p.vec_out = rows_aligned(op, out, out_cols_of(op, rows, cols));
    memcpy(p.w, op->weights, sizeof p.w);

    const tile_kernel *k = &op->main;
    if (op->base.path == ASYNCRT_PATH_TMA) {
        if (asyncrt_tile_launch_path(op, rows, cols, in, out) == ASYNCRT_PATH_TMA) {
            ASYNCRT_TRY(encode_maps(op, rows, cols, in, out, &p));
        } else {
            k = &op->fallback;
        }
    }
    size_t grid = tiles;
    const asyncrt_device_info *dev = asyncrt_context_device(ctx);
    if (op->tune.ctas && dev && (size_t)dev->sm_count * op->tune.ctas < grid) grid = (size_t)dev->sm_count * op->tune.ctas;
    asyncrt_launch_config cfg = {.size = sizeof cfg,
                                 .grid = {(unsigned)grid, 1, 1},
                                 .block = {op->threads, 1, 1},
                                 .shared_bytes = k->shared_bytes,
                                 .stream = stream};
    void *args[] = {&p};
    size_t sizes[] = {sizeof p};
    return asyncrt_kernel_launch(k->kernel, &cfg, args, sizes, 1);
}

asyncrt_status asyncrt_tile_launch(asyncrt_tile_op *op, size_t rows, size_t cols, asyncrt_deviceptr in,
                                   asyncrt_deviceptr out, asyncrt_stream stream)
{
    asyncrt__enter(op->base.ctx);
    return asyncrt__leave(op->base.ctx, tile_launch(op, rows, cols, in, out, stream));
}
