/* The built-in map op: its steps (op_driver.h) generate a kernel from
 * kernels_src/map_*.cuh around the user's expression; it launches with the
 * body of the arrays aligned for 16-byte vectors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/ops.h"
#include "map_store.cuh" /* kernels_src/: the store modes, shared with the kernels */
#include "op_driver.h"
#include "op_util.h"

#define MAP_MAX_INPUTS 16
#define MAP_MAX_OUTPUTS 16
#define MAP_MAX_SCALARS 32
#define MAP_THREADS 256
#define MAP_DEFAULT_SMEM (100 << 10) /* per CTA, when compiling without a device */
#define MAP_PLAIN_TILE (16 << 10)     /* plain path: input bytes per tile (registers, not stages) */

/* How the async paths size and order their work; ASYNCRT_MAP_TUNE
 * ("ctas=1,stage=32768,stages=6,store=cs,order=tiles") overrides it. */
typedef struct map_tune {
    unsigned ctas_per_sm; /* stages are sized so this many CTAs share an SM */
    unsigned stage_bytes; /* input bytes per stage (target) */
    unsigned max_stages;
    unsigned store;       /* an ASYNCRT_MAP_STORE_* mode; BULK only on the TMA path */
    unsigned chunked;     /* 1: contiguous runs of tiles per CTA; 0: round-robin */
    unsigned per_tile;    /* 1: one CTA per tile (grid = tiles); 0: a persistent grid */
} map_tune;

/* ASYNCRT_MAP_TUNE's store=WORD, and the name the generated Op::store uses. */
static const struct {
    const char *word, *constant;
} store_modes[ASYNCRT_MAP_STORE_COUNT] = {
#define STORE_MODE(name, word) [ASYNCRT_MAP_STORE_##name] = {word, "ASYNCRT_MAP_STORE_" #name},
    ASYNCRT_MAP_STORE_MODES(STORE_MODE)
#undef STORE_MODE
};

static const struct dtype_info {
    const char *name, *storage, *compute;
    size_t size;
} dtypes[ASYNCRT_DTYPE_COUNT] = {
    [ASYNCRT_F32] = {"f32", "float", "float", 4},
    [ASYNCRT_F64] = {"f64", "double", "double", 8},
    [ASYNCRT_I32] = {"i32", "int", "int", 4},
    [ASYNCRT_U32] = {"u32", "unsigned", "unsigned", 4},
    [ASYNCRT_F16] = {"f16", "asyncrt_f16", "float", 2},
    [ASYNCRT_BF16] = {"bf16", "asyncrt_bf16", "float", 2},
};

struct asyncrt_map {
    asyncrt_op base; /* ctx, path, arch, source, program, module */
    size_t inputs, outputs, scalars;
    size_t sizes[MAP_MAX_INPUTS + MAP_MAX_OUTPUTS]; /* element bytes: inputs, then outputs */
    size_t scalar_sizes[MAP_MAX_SCALARS];
    unsigned pack;        /* elements per pack */
    unsigned tile;        /* packs per tile */
    unsigned stages;
    map_tune tune;
    size_t shared_bytes;  /* dynamic, per CTA */
    unsigned max_grid;
    size_t in_vecs[MAP_MAX_INPUTS], in_vec_total;    /* 16-byte vectors per pack */
    size_t out_vecs[MAP_MAX_OUTPUTS], out_vec_total;
    asyncrt_kernel *kernel;  /* NULL when compiled without a device */
};

const char *asyncrt_dtype_name(asyncrt_dtype dtype)
{
    return (unsigned)dtype < ASYNCRT_DTYPE_COUNT ? dtypes[dtype].name : NULL;
}

size_t asyncrt_dtype_size(asyncrt_dtype dtype)
{
    return (unsigned)dtype < ASYNCRT_DTYPE_COUNT ? dtypes[dtype].size : 0;
}

asyncrt_op_path asyncrt_map_path_of(const asyncrt_map *map) { return map->base.path; }
const asyncrt_program *asyncrt_map_program(const asyncrt_map *map) { return map->base.program; }
const char *asyncrt_map_source(const asyncrt_map *map) { return map->base.source; }
size_t asyncrt_map_tile_elements(const asyncrt_map *map) { return (size_t)map->tile * map->pack; }

/* ---- validation ---------------------------------------------------------- */

static bool is_identifier(const char *s)
{
    if (!s || !*s || strlen(s) > 64) return false;
    for (const char *c = s; *c; c++) {
        bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_';
        if (!alpha && !(c > s && *c >= '0' && *c <= '9')) return false;
    }
    return true;
}

static asyncrt_status check_list(asyncrt_context *ctx, const char *what, const asyncrt_map_arg *args,
                                 size_t count, size_t min, size_t max, const asyncrt_map_desc *d)
{
    if (count < min || count > max)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "map: %zu %s given; between %zu and %zu are allowed", count, what, min, max);
    if (count && !args)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "map: %s is NULL but its count is %zu",
                            what, count);
    for (size_t i = 0; i < count; i++) {
        const char *name = args[i].name;
        if (!is_identifier(name) || strncmp(name, "asyncrt", 7) == 0 || name[0] == '_')
            return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                                "map: %s %zu has the name '%s'; names must be C identifiers of at most "
                                "64 characters that do not start with '_' or 'asyncrt'",
                                what, i, name ? name : "(null)");
        if ((unsigned)args[i].dtype >= ASYNCRT_DTYPE_COUNT)
            return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                                "map: %s '%s' has dtype %d, which is not an asyncrt_dtype", what, name,
                                (int)args[i].dtype);
        /* Every name must be unique across inputs, outputs and scalars. */
        const asyncrt_map_arg *lists[3] = {d->inputs, d->outputs, d->scalars};
        size_t counts[3] = {d->input_count, d->output_count, d->scalar_count};
        for (int l = 0; l < 3; l++)
            for (size_t j = 0; j < counts[l]; j++)
                if (&lists[l][j] != &args[i] && lists[l][j].name && strcmp(lists[l][j].name, name) == 0)
                    return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                                        "map: the name '%s' is used twice; names must be unique", name);
    }
    return ASYNCRT_SUCCESS;
}

/* Step: the tuning (ASYNCRT_MAP_TUNE, from the context's settings). */
static asyncrt_status tune(asyncrt_op *op, const void *desc)
{
    (void)desc;
    asyncrt_map *m = (asyncrt_map *)op;
    map_tune *t = &m->tune;
    /* One CTA per 16 KiB tile, sized so 8 share an SM, with no persistent
     * loop, measured best on the H100 (asyncrt-bench, 1 GiB a*x+b, same-run
     * D2D ceiling): TMA 100.0%, LDGSTS 99.7%, plain 99.6%, against 96.4%,
     * 95.6% and 93.7% for the best persistent ring (1 CTA per SM, 6 x 32 KiB
     * stages). The hardware's block scheduler balances the tail better than a
     * grid-stride loop can. grid=persistent keeps the ring for other devices. */
    *t = (map_tune){.ctas_per_sm = 8, .stage_bytes = 16 << 10, .max_stages = 1, .store = ASYNCRT_MAP_STORE_CS, .chunked = 0,
                    .per_tile = 1};
    const char *env = op->ctx->settings.map_tune;
    if (!env || !*env) goto done;
    static const char *const orders[] = {"tiles", "chunks"}, *const grids[] = {"persistent", "tiles"};
    char key[16], value[16];
    unsigned long v;
    bool number;
    int more;
    for (const char *c = env; (more = asyncrt__tune_next(&c, key, value, &v, &number)) != 0;) {
        if (more < 0) goto bad;
        if (!strcmp(key, "ctas") && number && v >= 1 && v <= 32) t->ctas_per_sm = (unsigned)v;
        else if (!strcmp(key, "stage") && number && v >= 1024 && v <= (256u << 10)) t->stage_bytes = (unsigned)v;
        else if (!strcmp(key, "stages") && number && v >= 1 && v <= 8) t->max_stages = (unsigned)v;
        else if (!strcmp(key, "store")) {
            unsigned k = 0;
            while (k < ASYNCRT_MAP_STORE_COUNT && strcmp(value, store_modes[k].word)) k++;
            if (k == ASYNCRT_MAP_STORE_COUNT) goto bad;
            t->store = k;
        } else if (!strcmp(key, "order")) {
            unsigned k = 0;
            while (k < 2 && strcmp(value, orders[k])) k++;
            if (k == 2) goto bad;
            t->chunked = k;
        } else if (!strcmp(key, "grid")) {
            unsigned k = 0;
            while (k < 2 && strcmp(value, grids[k])) k++;
            if (k == 2) goto bad;
            t->per_tile = k;
        } else goto bad;
    }
done:
    if (t->store == ASYNCRT_MAP_STORE_BULK && op->path != ASYNCRT_PATH_TMA)
        t->store = ASYNCRT_MAP_STORE_CS; /* bulk stores are TMA's */
    return ASYNCRT_SUCCESS;
bad:
    return asyncrt__fail(op->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                        "ASYNCRT_MAP_TUNE='%s' is not a list of ctas=1..32, stage=1024..262144 (bytes), "
                        "stages=1..8, store=cs|wb|bulk, order=tiles|chunks, grid=persistent|tiles", env);
}

/* Step: the pack (16 bytes of the smallest element, so every array moves
 * in whole 16-byte vectors), then tile and stage sizes from the shared
 * memory one CTA may use when tune.ctas_per_sm share an SM. A stage holds a
 * tile's inputs and, for bulk stores, its outputs. */
static void plan(asyncrt_op *op, const void *desc, const asyncrt_device_info *dev)
{
    const asyncrt_map_desc *d = desc;
    asyncrt_map *m = (asyncrt_map *)op;
    m->inputs = d->input_count;
    m->outputs = d->output_count;
    m->scalars = d->scalar_count;
    size_t smallest = 8;
    for (size_t k = 0; k < m->inputs + m->outputs; k++) {
        asyncrt_dtype dt = k < m->inputs ? d->inputs[k].dtype : d->outputs[k - m->inputs].dtype;
        m->sizes[k] = dtypes[dt].size;
        if (m->sizes[k] < smallest) smallest = m->sizes[k];
    }
    for (size_t k = 0; k < m->scalars; k++) m->scalar_sizes[k] = dtypes[d->scalars[k].dtype].size;
    m->pack = (unsigned)(16 / smallest);
    for (size_t k = 0; k < m->inputs; k++) m->in_vec_total += m->in_vecs[k] = m->pack * m->sizes[k] / 16;
    for (size_t k = 0; k < m->outputs; k++)
        m->out_vec_total += m->out_vecs[k] = m->pack * m->sizes[m->inputs + k] / 16;
    size_t in_vec_total = m->in_vec_total, out_vec_total = m->out_vec_total;

    const map_tune *t = &m->tune;
    size_t pack_bytes = in_vec_total * 16;
    size_t stage_pack = (in_vec_total + (t->store == ASYNCRT_MAP_STORE_BULK ? out_vec_total : 0)) * 16;
    unsigned target = op->path == ASYNCRT_PATH_PLAIN ? MAP_PLAIN_TILE : t->stage_bytes;
    unsigned ppt = (unsigned)(target / (MAP_THREADS * pack_bytes));
    if (ppt < 1) ppt = 1;
    if (ppt > 16) ppt = 16;
    size_t budget = MAP_DEFAULT_SMEM;
    if (dev) {
        /* 1 KiB per CTA is reserved by the system; 256 bytes cover the mbarriers. */
        budget = (size_t)dev->shared_memory_per_sm / t->ctas_per_sm - 1024 - 256;
        if (budget > (size_t)dev->shared_memory_per_block_optin - 256)
            budget = (size_t)dev->shared_memory_per_block_optin - 256;
    }
    m->stages = 1;
    if (op->path != ASYNCRT_PATH_PLAIN) {
        while (ppt > 1 && budget < 2 * (size_t)MAP_THREADS * ppt * stage_pack) ppt /= 2;
        size_t stage = (size_t)MAP_THREADS * ppt * stage_pack;
        size_t fit = budget / stage;
        unsigned least = t->per_tile ? 1 : 2; /* a persistent CTA needs two stages to overlap */
        m->stages = fit < least ? least : fit > t->max_stages ? t->max_stages : (unsigned)fit;
        m->shared_bytes = m->stages * stage;
    }
    m->tile = MAP_THREADS * ppt;
    int sms = dev ? dev->sm_count : 1;
    int per_sm = (int)t->ctas_per_sm;
    if (op->path == ASYNCRT_PATH_PLAIN && dev) per_sm = dev->max_threads_per_sm / MAP_THREADS;
    m->max_grid = t->per_tile ? 0x7fffffffu : (unsigned)(sms * (per_sm > 0 ? per_sm : 1));
}

/* ---- source generation ---------------------------------------------------- */

typedef asyncrt_strbuf strbuf;
#define sb_printf asyncrt__sb_printf
#define sb_lines asyncrt__sb_lines

static void scalar_decls(strbuf *b, const asyncrt_map_desc *d)
{
    for (size_t k = 0; k < d->scalar_count; k++) {
        const struct dtype_info *t = &dtypes[d->scalars[k].dtype];
        sb_printf(b, "        const %s s%zu = asyncrt_conv<%s>::bits(p.scalar[%zu]);\n", t->compute, k,
                  t->storage, k);
    }
}

/* Step: the kernel's source, around the expression. */
static char *generate(const asyncrt_op *op, const void *desc)
{
    const asyncrt_map_desc *d = desc;
    const asyncrt_map *m = (const asyncrt_map *)op;
    size_t pack = m->pack, in_vec_total = m->in_vec_total, out_vec_total = m->out_vec_total;
    const size_t *in_vecs = m->in_vecs, *out_vecs = m->out_vecs;
    const char *template = asyncrt_op_path_name(op->path); /* map_<path>.cuh */
    strbuf b = {0};
    size_t pointers = d->input_count + d->output_count;
    size_t scalar_slots = d->scalar_count ? d->scalar_count : 1;
    sb_printf(&b, "// asyncrt map, %s path (generated)\n#include <asyncrt/map_%s.cuh>\n\n",
              template, template);

    /* The expression, in a function of its own, under its own file name. */
    sb_printf(&b, "__device__ __forceinline__ void asyncrt_map_body(");
    for (size_t k = 0; k < d->output_count; k++)
        sb_printf(&b, "%s%s &%s", k ? ", " : "", dtypes[d->outputs[k].dtype].compute, d->outputs[k].name);
    for (size_t k = 0; k < d->input_count; k++)
        sb_printf(&b, ", const %s %s", dtypes[d->inputs[k].dtype].compute, d->inputs[k].name);
    for (size_t k = 0; k < d->scalar_count; k++)
        sb_printf(&b, ", const %s %s", dtypes[d->scalars[k].dtype].compute, d->scalars[k].name);
    sb_printf(&b, ")\n{\n#line 1 \"map expression\"\n%s\n", d->expression);
    sb_printf(&b, "#line %u \"asyncrt_map.cu\"\n}\n\n", sb_lines(&b) + 1);

    sb_printf(&b, "struct asyncrt_map_op {\n");
    sb_printf(&b, "    typedef asyncrt_map_params_t<%zu, %zu> params;\n", pointers, scalar_slots);
    sb_printf(&b, "    static constexpr int pack = %zu, inputs = %zu, in_vec_total = %zu;\n", pack,
              d->input_count, in_vec_total);
    sb_printf(&b, "    static constexpr int in_size[%zu] = {", d->input_count);
    for (size_t k = 0; k < d->input_count; k++) sb_printf(&b, "%s%zu", k ? ", " : "", m->sizes[k]);
    sb_printf(&b, "};\n    static constexpr int in_vecs[%zu] = {", d->input_count);
    for (size_t k = 0; k < d->input_count; k++) sb_printf(&b, "%s%zu", k ? ", " : "", in_vecs[k]);
    sb_printf(&b, "};\n    static constexpr int outputs = %zu, out_vec_total = %zu;\n", d->output_count,
              out_vec_total);
    sb_printf(&b, "    static constexpr int out_size[%zu] = {", d->output_count);
    for (size_t k = 0; k < d->output_count; k++) sb_printf(&b, "%s%zu", k ? ", " : "", m->sizes[d->input_count + k]);
    sb_printf(&b, "};\n    static constexpr int out_vecs[%zu] = {", d->output_count);
    for (size_t k = 0; k < d->output_count; k++) sb_printf(&b, "%s%zu", k ? ", " : "", out_vecs[k]);
    sb_printf(&b, "};\n    static constexpr int threads = %d, packs_per_thread = %u, stages = %u;\n", MAP_THREADS,
              m->tile / MAP_THREADS, m->stages);
    sb_printf(&b, "    static constexpr int store = %s;\n    static constexpr bool chunked = %s;\n\n",
              store_modes[m->tune.store].constant, m->tune.chunked ? "true" : "false");

    /* One pack from registers: inputs at v, outputs stored at element e. */
    sb_printf(&b, "    template <class Sink>\n    static __device__ __forceinline__ void compute_store(const params &p, "
                  "const uint4 *v, unsigned long long e, const Sink &sink)\n    {\n");
    scalar_decls(&b, d);
    for (size_t k = 0; k < d->output_count; k++)
        sb_printf(&b, "        uint4 r%zu[%zu];\n", k, pack * m->sizes[d->input_count + k] / 16);
    sb_printf(&b, "#pragma unroll\n        for (int q = 0; q < pack; q++) {\n");
    for (size_t k = 0; k < d->output_count; k++)
        sb_printf(&b, "            %s o%zu = 0;\n", dtypes[d->outputs[k].dtype].compute, k);
    sb_printf(&b, "            asyncrt_map_body(");
    size_t offset = 0;
    for (size_t k = 0; k < d->output_count; k++) sb_printf(&b, "%so%zu", k ? ", " : "", k);
    for (size_t k = 0; k < d->input_count; k++) {
        sb_printf(&b, ", asyncrt_map_get<%s>(v + %zu, q)", dtypes[d->inputs[k].dtype].storage, offset);
        offset += in_vecs[k];
    }
    for (size_t k = 0; k < d->scalar_count; k++) sb_printf(&b, ", s%zu", k);
    sb_printf(&b, ");\n");
    for (size_t k = 0; k < d->output_count; k++)
        sb_printf(&b, "            asyncrt_map_put<%s>(r%zu, q, o%zu);\n", dtypes[d->outputs[k].dtype].storage, k, k);
    sb_printf(&b, "        }\n");
    for (size_t k = 0; k < d->output_count; k++)
        sb_printf(&b, "        sink.template put<%zu, %zu, %s>(p.ptr[%zu], e, r%zu);\n", k, out_vecs[k],
                  dtypes[d->outputs[k].dtype].storage, d->input_count + k, k);
    sb_printf(&b, "    }\n\n");

    /* One element straight from global memory, for the head and the tail. */
    sb_printf(&b, "    static __device__ __forceinline__ void scalar(const params &p, unsigned long long i)\n"
                  "    {\n");
    scalar_decls(&b, d);
    for (size_t k = 0; k < d->output_count; k++)
        sb_printf(&b, "        %s o%zu = 0;\n", dtypes[d->outputs[k].dtype].compute, k);
    sb_printf(&b, "        asyncrt_map_body(");
    for (size_t k = 0; k < d->output_count; k++) sb_printf(&b, "%so%zu", k ? ", " : "", k);
    for (size_t k = 0; k < d->input_count; k++) {
        const char *t = dtypes[d->inputs[k].dtype].storage;
        sb_printf(&b, ", asyncrt_conv<%s>::in(reinterpret_cast<const %s *>(p.ptr[%zu])[i])", t, t, k);
    }
    for (size_t k = 0; k < d->scalar_count; k++) sb_printf(&b, ", s%zu", k);
    sb_printf(&b, ");\n");
    for (size_t k = 0; k < d->output_count; k++) {
        const char *t = dtypes[d->outputs[k].dtype].storage;
        sb_printf(&b, "        reinterpret_cast<%s *>(p.ptr[%zu])[i] = asyncrt_conv<%s>::out(o%zu);\n", t,
                  d->input_count + k, t, k);
    }
    sb_printf(&b, "    }\n};\n\n");

    sb_printf(&b, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
                  "asyncrt_map_kernel(const __grid_constant__ asyncrt_map_op::params p)\n{\n"
                  "    asyncrt_map_%s<asyncrt_map_op>(p);\n}\n",
              MAP_THREADS, template);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

/* ---- the table of steps, create / launch ---------------------------------- */

/* Step: the description's rules. */
static asyncrt_status check(asyncrt_context *ctx, const void *desc)
{
    const asyncrt_map_desc *d = desc;
    ASYNCRT_TRY(check_list(ctx, "inputs", d->inputs, d->input_count, 1, MAP_MAX_INPUTS, d));
    ASYNCRT_TRY(check_list(ctx, "outputs", d->outputs, d->output_count, 1, MAP_MAX_OUTPUTS, d));
    ASYNCRT_TRY(check_list(ctx, "scalars", d->scalars, d->scalar_count, 0, MAP_MAX_SCALARS, d));
    if (!d->expression || !*d->expression)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "map: the expression is empty");
    return ASYNCRT_SUCCESS;
}

static void wants(const void *desc, asyncrt_dispatch_op *ranking, asyncrt_op_path *path, const char **arch)
{
    const asyncrt_map_desc *d = desc;
    *ranking = ASYNCRT_DISPATCH_MAP;
    *path = d->path;
    *arch = d->arch;
}

static size_t kernels(asyncrt_op *op, const char *names[ASYNCRT_OP_MAX_KERNELS],
                      asyncrt_kernel **slots[ASYNCRT_OP_MAX_KERNELS])
{
    names[0] = "asyncrt_map_kernel";
    slots[0] = &((asyncrt_map *)op)->kernel;
    return 1;
}

static void report(const asyncrt_op *op, const char *arch_name)
{
    const asyncrt_map *m = (const asyncrt_map *)op;
    asyncrt__log(op->ctx, 1, "map: %s path for %s, pack %u, tile %u packs, %u stages, %zu bytes of shared memory, "
                "grid <= %u, store %u, %s", asyncrt_op_path_name(op->path), arch_name, m->pack, m->tile, m->stages,
                m->shared_bytes, m->max_grid, m->tune.store, m->tune.chunked ? "chunks" : "tiles");
}

static const asyncrt_op_module k_map_module = {
    .name = "map", .source_name = "asyncrt_map.cu", .size = sizeof(asyncrt_map),
    .check = check, .wants = wants, .tune = tune, .plan = plan, .generate = generate,
    .kernels = kernels, .report = report,
};

void asyncrt_map_destroy(asyncrt_map *map) { asyncrt__op_destroy(map ? &map->base : NULL); }

asyncrt_status asyncrt_map_create(asyncrt_context *ctx, const asyncrt_map_desc *d, asyncrt_map **out)
{
    asyncrt_map_desc full; /* the caller's, read by its size */
    if (out) *out = NULL;
    if (d) ASYNCRT_TRY(asyncrt__sized_take(ctx, ASYNCRT_SIZED_MAP_DESC, d, &full, "map"));
    asyncrt_op *op = NULL;
    asyncrt_status s = asyncrt__op_create(ctx, &k_map_module, d ? &full : NULL, out ? &op : NULL);
    if (out) *out = (asyncrt_map *)op;
    return s;
}

/* The first element at which every array is 16-byte aligned, or n when no
 * element is (then the whole range goes element by element). */
static size_t common_head(const asyncrt_map *m, const asyncrt_deviceptr *ptrs, size_t n)
{
    for (size_t h = 0; h < 16 && h < n; h++) {
        bool aligned = true;
        for (size_t k = 0; aligned && k < m->inputs + m->outputs; k++)
            aligned = (ptrs[k] + h * m->sizes[k]) % 16 == 0;
        if (aligned) return h;
    }
    return n;
}

static asyncrt_status map_launch(asyncrt_map *m, size_t n, const asyncrt_deviceptr *inputs,
                                 const asyncrt_deviceptr *outputs, const void *const *scalars,
                                 asyncrt_stream stream)
{
    asyncrt_context *ctx = m->base.ctx;
    if (!m->kernel)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_NO_DEVICE,
                            "map: compiled without an open device, so it cannot be launched; open the "
                            "device before asyncrt_map_create");
    if (!inputs || !outputs || (m->scalars && !scalars))
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "map: inputs, outputs and (with %zu scalars) scalars must not be NULL", m->scalars);
    if (n == 0) return ASYNCRT_SUCCESS;
    ASYNCRT_TRY(asyncrt__op_check_stream(&m->base, stream));

    uint64_t params[3 + MAP_MAX_INPUTS + MAP_MAX_OUTPUTS + MAP_MAX_SCALARS] = {0};
    uint64_t *ptrs = params + 3;
    for (size_t k = 0; k < m->inputs + m->outputs; k++) {
        ptrs[k] = k < m->inputs ? inputs[k] : outputs[k - m->inputs];
        if (!ptrs[k] || ptrs[k] % m->sizes[k])
            return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                                "map: %s %zu is 0x%llx; it must be a device pointer aligned to its "
                                "element size (%zu bytes)", k < m->inputs ? "input" : "output",
                                k < m->inputs ? k : k - m->inputs, (unsigned long long)ptrs[k], m->sizes[k]);
    }
    uint64_t *slots = ptrs + m->inputs + m->outputs;
    for (size_t k = 0; k < m->scalars; k++) {
        if (!scalars[k])
            return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "map: scalar %zu is NULL", k);
        memcpy(&slots[k], scalars[k], m->scalar_sizes[k]); /* low bytes on a little-endian host */
    }
    size_t head = common_head(m, ptrs, n);
    size_t packs = (n - head) / m->pack;
    params[0] = n;
    params[1] = head;
    params[2] = packs;

    size_t tiles = (packs + m->tile - 1) / m->tile;
    size_t edges = n - packs * m->pack;
    size_t want = tiles ? tiles : (edges + MAP_THREADS - 1) / MAP_THREADS;
    asyncrt_launch_config cfg = {.size = sizeof cfg,
                                 .grid = {(unsigned)(want < m->max_grid ? want : m->max_grid), 1, 1},
                                 .block = {MAP_THREADS, 1, 1},
                                 .shared_bytes = m->shared_bytes,
                                 .stream = stream};
    void *args[] = {params};
    return asyncrt_kernel_launch(m->kernel, &cfg, args, NULL, 1);
}

asyncrt_status asyncrt_map_launch(asyncrt_map *m, size_t n, const asyncrt_deviceptr *inputs,
                                  const asyncrt_deviceptr *outputs, const void *const *scalars,
                                  asyncrt_stream stream)
{
    asyncrt__enter(m->base.ctx);
    return asyncrt__leave(m->base.ctx, map_launch(m, n, inputs, outputs, scalars, stream));
}
