/* The built-in 2D tile ops (transpose, tile map, stencil): generates a kernel
 * from kernels_src/tile_*.cuh for the chosen path, compiles it through the
 * program cache, and launches it with tensor maps on the TMA path. The
 * geometry constants below mirror those of the templates. */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/tensormap.h"
#include "asyncrt/tile_ops.h"
#include "arch.h"
#include "context.h"
#include "op_util.h"

#define TILE_THREADS 256
#define TILE_MAX_STAGES 4
#define TILE_ALIGN_SLACK 1024           /* the kernels round the shared memory base up to 1 KiB */
#define STENCIL_TW 128
#define STENCIL_TH 32                   /* 16 rows per thread x TILE_THREADS / STENCIL_TW */

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
    asyncrt_context *ctx;
    asyncrt_tile_kind kind;
    asyncrt_map_path path;
    size_t esize;
    int radius, stages;
    unsigned box_w;     /* stencil, TMA: staged columns per row (tile_stencil_tma.cuh) */
    float weights[81];
    char *source;
    asyncrt_program *program;
    asyncrt_module *module;      /* NULL when compiled without a device */
    tile_kernel main, fallback;  /* fallback: the LDGSTS kernel of a TMA op */
    /* The tensor maps of the last TMA launch, reused while its arguments repeat. */
    bool maps_valid;
    size_t map_rows, map_cols;
    asyncrt_deviceptr map_in, map_out;
    asyncrt_tensor_map in_map, out_map;
};

asyncrt_map_path asyncrt_tile_path_of(const asyncrt_tile_op *op) { return op->path; }
const asyncrt_program *asyncrt_tile_program(const asyncrt_tile_op *op) { return op->program; }
const char *asyncrt_tile_source(const asyncrt_tile_op *op) { return op->source; }

static size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* ---- geometry (mirrors tile_transpose*.cuh and tile_stencil*.cuh) -------- */

/* Tile width and height in elements. */
static void tile_shape(const asyncrt_tile_op *op, size_t *tw, size_t *th)
{
    if (op->kind == ASYNCRT_TILE_STENCIL) {
        *tw = STENCIL_TW;
        *th = STENCIL_TH;
    } else {
        *tw = 128 / op->esize;               /* S */
        *th = TILE_THREADS / 64 * *tw;       /* H = K * S */
    }
}

/* Bytes of one stage, and of what the kernel needs besides its stages. */
static void stage_sizes(const asyncrt_tile_op *op, bool tma, size_t *stage, size_t *fixed)
{
    size_t e = op->esize, v = 16 / e;
    if (op->kind != ASYNCRT_TILE_STENCIL) {
        *stage = 65536 / e;                  /* TMA: H rows x 128 B; LDGSTS: V x threads x 16 B */
        *fixed = tma ? 2 * *stage + 8 * TILE_MAX_STAGES : 0;
    } else if (tma) {
        *stage = round_up(op->box_w * (STENCIL_TH + 2 * op->radius) * e, 1024);
        *fixed = 2 * STENCIL_TW * STENCIL_TH * e + 8 * TILE_MAX_STAGES;
    } else {
        *stage = round_up((STENCIL_TH + 2 * op->radius) * (STENCIL_TW + 2 * v) * e, 128);
        *fixed = 0;
    }
    *fixed += TILE_ALIGN_SLACK;
}

static void plan_kernel(const asyncrt_tile_op *op, asyncrt_map_path path, tile_kernel *k)
{
    size_t stage, fixed;
    stage_sizes(op, path == ASYNCRT_PATH_TMA, &stage, &fixed);
    k->shared_bytes = path == ASYNCRT_PATH_PLAIN && op->kind != ASYNCRT_TILE_STENCIL
                          ? 0
                          : (size_t)(path == ASYNCRT_PATH_PLAIN ? 1 : op->stages) * stage + fixed;
}

/* ---- validation --------------------------------------------------------- */

static asyncrt_status check_desc(asyncrt_context *ctx, const asyncrt_tile_desc *d)
{
    if ((unsigned)d->kind > ASYNCRT_TILE_STENCIL)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: kind %d is not an asyncrt_tile_kind",
                            (int)d->kind);
    if ((unsigned)d->dtype >= ASYNCRT_DTYPE_COUNT)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: dtype %d is not an asyncrt_dtype",
                            (int)d->dtype);
    if (!tile_dtypes[d->dtype].storage)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_UNSUPPORTED,
                            "tile: dtype %s is not supported; tile ops take f32, i32, u32, f16 or bf16",
                            asyncrt_dtype_name(d->dtype));
    if (d->expression && !*d->expression)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: the expression is empty (use NULL for the default)");
    if (d->kind == ASYNCRT_TILE_MAP && !d->expression)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: a MAP needs an expression that sets `out`");
    if (d->kind != ASYNCRT_TILE_STENCIL) return ASYNCRT_SUCCESS;
    if (d->radius < 1 || d->radius > ASYNCRT_TILE_MAX_RADIUS)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: stencil radius %d is outside 1..%d",
                            d->radius, ASYNCRT_TILE_MAX_RADIUS);
    if (!d->expression == !d->weights)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "tile: a stencil needs exactly one of weights and expression (%s given)",
                            d->weights ? "both" : "neither");
    if (d->weights && !tile_dtypes[d->dtype].is_float)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "tile: stencil weights need a float dtype (f32, f16, bf16), but the dtype is %s; "
                            "use an expression", asyncrt_dtype_name(d->dtype));
    return ASYNCRT_SUCCESS;
}

/* ---- source generation -------------------------------------------------- */

static char *generate(const asyncrt_tile_desc *d, const asyncrt_tile_op *op)
{
    static const char *const path_file[] = {"", "tma", "ldgsts", "plain"};
    const struct tile_dtype *t = &tile_dtypes[d->dtype];
    bool stencil = d->kind == ASYNCRT_TILE_STENCIL, tma = op->path == ASYNCRT_PATH_TMA;
    asyncrt_strbuf b = {0};
    asyncrt_sb_printf(&b, "// asyncrt tile op, %s, %s path (generated)\n",
                      stencil ? "stencil" : d->kind == ASYNCRT_TILE_MAP ? "map" : "transpose", path_file[op->path]);
    asyncrt_sb_printf(&b, "#include <asyncrt/tile_%s%s.cuh>\n\n", stencil ? "stencil" : "transpose", tma ? "_tma" : "");

    const char *expression = d->expression ? d->expression : "out = v;";
    if (stencil && d->expression) {
        asyncrt_sb_printf(&b, "__device__ __forceinline__ void asyncrt_tile_body(%s &out, const asyncrt_stencil_in<%s> &in, "
                              "const int y, const int x, const int rows, const int cols)\n",
                          t->compute, t->storage);
    } else if (!stencil) {
        asyncrt_sb_printf(&b, "__device__ __forceinline__ void asyncrt_tile_body(%s &out, const %s v, const int y, "
                              "const int x, const int rows, const int cols)\n",
                          t->compute, t->compute);
    }
    if (!stencil || d->expression) {
        asyncrt_sb_printf(&b, "{\n#line 1 \"tile expression\"\n%s\n", expression);
        asyncrt_sb_printf(&b, "#line %u \"asyncrt_tile.cu\"\n}\n\n", asyncrt_sb_lines(&b) + 1);
    }

    asyncrt_sb_printf(&b, "struct asyncrt_tile_op {\n    typedef %s T;\n    typedef %s C;\n", t->storage, t->compute);
    asyncrt_sb_printf(&b, "    static constexpr int threads = %d, stages = %d;\n", TILE_THREADS, op->stages);
    if (stencil) {
        asyncrt_sb_printf(&b, "    static constexpr int radius = %d, box_w = %u;\n    static constexpr bool weights = %s;\n",
                          op->radius, op->box_w, d->weights ? "true" : "false");
        if (d->expression)
            asyncrt_sb_printf(&b, "    static __device__ __forceinline__ C eval(const asyncrt_stencil_in<T> &in, int y, "
                                  "int x, int rows, int cols)\n    {\n        C out = 0;\n"
                                  "        asyncrt_tile_body(out, in, y, x, rows, cols);\n        return out;\n    }\n");
    } else {
        asyncrt_sb_printf(&b, "    static constexpr bool transpose = %s;\n",
                          d->kind == ASYNCRT_TILE_TRANSPOSE ? "true" : "false");
        asyncrt_sb_printf(&b, "    static __device__ __forceinline__ C apply(C v, int y, int x, int rows, int cols)\n"
                              "    {\n        C out = 0;\n        asyncrt_tile_body(out, v, y, x, rows, cols);\n"
                              "        return out;\n    }\n");
    }
    asyncrt_sb_printf(&b, "};\n\n");

    /* The main kernel, and for TMA the LDGSTS kernel of matrices TMA cannot map. */
    const char *bodies[2];
    if (stencil) {
        bodies[0] = tma ? "asyncrt_stencil_tma<asyncrt_tile_op>"
                  : op->path == ASYNCRT_PATH_LDGSTS ? "asyncrt_stencil_staged<asyncrt_tile_op, true>"
                                                     : "asyncrt_stencil_staged<asyncrt_tile_op, false>";
        bodies[1] = "asyncrt_stencil_staged<asyncrt_tile_op, true>";
    } else {
        bodies[0] = tma ? "asyncrt_tile_transpose_tma<asyncrt_tile_op>"
                  : op->path == ASYNCRT_PATH_LDGSTS ? "asyncrt_tile_transpose_ldgsts<asyncrt_tile_op>"
                                                     : "asyncrt_tile_transpose_plain<asyncrt_tile_op>";
        bodies[1] = "asyncrt_tile_transpose_ldgsts<asyncrt_tile_op>";
    }
    for (int k = 0; k < (tma ? 2 : 1); k++)
        asyncrt_sb_printf(&b, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
                              "asyncrt_tile_kernel%s(const __grid_constant__ asyncrt_tile_params p)\n{\n    %s(p);\n}\n",
                          TILE_THREADS, k ? "_fallback" : "", bodies[k]);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

/* ---- create ------------------------------------------------------------- */

void asyncrt_tile_destroy(asyncrt_tile_op *op)
{
    if (!op) return;
    asyncrt_module_destroy(op->module);
    asyncrt_program_destroy(op->program);
    free(op->source);
    free(op);
}

asyncrt_status asyncrt_tile_create(asyncrt_context *ctx, const asyncrt_tile_desc *d, asyncrt_tile_op **out)
{
    ASYNCRT_ENTER(ctx);
    if (!out) return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: out is NULL");
    *out = NULL;
    if (!d) return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "tile: the description is NULL");
    asyncrt_status s;
    if ((s = check_desc(ctx, d))) return s;
    asyncrt_arch arch;
    char arch_name[32];
    asyncrt_map_path path;
    if ((s = asyncrt_op_select(ctx, "tile", d->path, d->arch, &arch, arch_name, sizeof arch_name, &path))) return s;

    asyncrt_tile_op *op = calloc(1, sizeof *op);
    if (!op) return asyncrt_fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "tile: out of memory");
    op->ctx = ctx;
    op->kind = d->kind;
    op->path = path;
    op->esize = asyncrt_dtype_size(d->dtype);
    if (d->kind == ASYNCRT_TILE_STENCIL) {
        op->radius = d->radius;
        op->box_w = (unsigned)(STENCIL_TW + 2 * (16 / op->esize)); /* a 16-byte vector of halo each side */
        if (d->weights) memcpy(op->weights, d->weights, sizeof(float) * (size_t)(2 * d->radius + 1) * (2 * d->radius + 1));
    }
    const asyncrt_device_info *dev = asyncrt_context_device(ctx);
    /* One CTA per tile, each with a single stage. On the H100 (16384 x 16384
     * f32, asyncrt-bench, same-run D2D ceiling) that beat a persistent grid with
     * a ring of 2-4 stages on every path: transpose TMA 93.7% against 90.1%,
     * 5-point stencil TMA 93.6% against 86.2%, LDGSTS and plain gaining as much
     * (the block scheduler balances the tail better than a grid-stride loop). */
    op->stages = 1;
    plan_kernel(op, path, &op->main);
    if (path == ASYNCRT_PATH_TMA) plan_kernel(op, ASYNCRT_PATH_LDGSTS, &op->fallback);

    if (!(op->source = generate(d, op))) {
        s = asyncrt_fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "tile: out of memory");
        goto fail;
    }
    asyncrt_compile_options opts = {.arch = arch_name};
    if ((s = asyncrt_program_compile(ctx, "asyncrt_tile.cu", op->source, &opts, &op->program))) goto fail;
    if (dev) {
        if ((s = asyncrt_module_load(ctx, op->program, &op->module)) ||
            (s = asyncrt_module_get_kernel(op->module, "asyncrt_tile_kernel", &op->main.kernel)) ||
            (path == ASYNCRT_PATH_TMA &&
             (s = asyncrt_module_get_kernel(op->module, "asyncrt_tile_kernel_fallback", &op->fallback.kernel))))
            goto fail;
    }
    asyncrt_log(ctx, 1, "tile: %s path for %s, one CTA per tile, %zu bytes of shared memory",
                asyncrt_map_path_name(path), arch_name, op->main.shared_bytes);
    *out = op;
    return ASYNCRT_SUCCESS;
fail:
    asyncrt_tile_destroy(op);
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

asyncrt_map_path asyncrt_tile_launch_path(const asyncrt_tile_op *op, size_t rows, size_t cols, asyncrt_deviceptr in,
                                          asyncrt_deviceptr out)
{
    if (op->path != ASYNCRT_PATH_TMA) return op->path;
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
    asyncrt_status s = asyncrt_tensormap_describe_dense(&d, t, p, 2, shape, box);
    if (s) return s;
    d.swizzle = swizzle;
    return asyncrt_tensormap_encode(op->ctx, &d, out);
}

static asyncrt_status encode_maps(asyncrt_tile_op *op, size_t rows, size_t cols, asyncrt_deviceptr in,
                                  asyncrt_deviceptr out, tile_params *p)
{
    if (!(op->maps_valid && op->map_rows == rows && op->map_cols == cols && op->map_in == in && op->map_out == out)) {
        op->maps_valid = false;
        asyncrt_status s;
        if (op->kind == ASYNCRT_TILE_STENCIL) {
            if ((s = encode(op, in, rows, cols, STENCIL_TH + 2 * (uint32_t)op->radius, op->box_w,
                            ASYNCRT_TENSORMAP_SWIZZLE_NONE, &op->in_map)) ||
                (s = encode(op, out, rows, cols, STENCIL_TH, STENCIL_TW, ASYNCRT_TENSORMAP_SWIZZLE_NONE, &op->out_map)))
                return s;
        } else {
            size_t tw, th;
            tile_shape(op, &tw, &th);
            bool tr = op->kind == ASYNCRT_TILE_TRANSPOSE;
            if ((s = encode(op, in, rows, cols, (uint32_t)th, (uint32_t)tw, ASYNCRT_TENSORMAP_SWIZZLE_128B, &op->in_map)) ||
                (s = encode(op, out, tr ? cols : rows, tr ? rows : cols, (uint32_t)tw, (uint32_t)tw,
                            ASYNCRT_TENSORMAP_SWIZZLE_128B, &op->out_map)))
                return s;
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

asyncrt_status asyncrt_tile_launch(asyncrt_tile_op *op, size_t rows, size_t cols, asyncrt_deviceptr in,
                                   asyncrt_deviceptr out, asyncrt_stream stream)
{
    ASYNCRT_ENTER(op->ctx);
    asyncrt_context *ctx = op->ctx;
    if (!op->main.kernel)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_NO_DEVICE,
                            "tile: compiled without an open device, so it cannot be launched; open the device "
                            "before asyncrt_tile_create");
    if (rows > INT_MAX || cols > INT_MAX)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "tile: the matrix is %zu x %zu; rows and cols must be at most %d", rows, cols, INT_MAX);
    if (!in || !out || in % op->esize || out % op->esize)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "tile: in (0x%llx) and out (0x%llx) must be device pointers aligned to the element "
                            "size (%zu bytes)", (unsigned long long)in, (unsigned long long)out, op->esize);
    if (rows == 0 || cols == 0) return ASYNCRT_SUCCESS;

    size_t tw, th;
    tile_shape(op, &tw, &th);
    size_t tiles_x = (cols + tw - 1) / tw, tiles = tiles_x * ((rows + th - 1) / th);
    if (tiles > INT_MAX)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
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
    if (op->path == ASYNCRT_PATH_TMA) {
        if (asyncrt_tile_launch_path(op, rows, cols, in, out) == ASYNCRT_PATH_TMA) {
            asyncrt_status s = encode_maps(op, rows, cols, in, out, &p);
            if (s) return s;
        } else {
            k = &op->fallback;
        }
    }
    asyncrt_launch_config cfg = {.grid = {(unsigned)tiles, 1, 1},
                                 .block = {TILE_THREADS, 1, 1},
                                 .shared_bytes = k->shared_bytes,
                                 .stream = stream};
    void *args[] = {&p};
    size_t sizes[] = {sizeof p};
    return asyncrt_kernel_launch(k->kernel, &cfg, args, sizes, 1);
}
