/* GPU: maps encoded by asyncrt drive TMA 2D and 3D tile loads and stores in
 * a JIT-compiled kernel (tma_tile_kernel.h). The tensors have padded rows
 * (and planes) and sizes that are not multiples of the box, so edge boxes are
 * partial: their out-of-bounds part must read as zero (even though padding
 * bytes with random data lie there in memory) and must not be written by the
 * store (the output's padding keeps its poison), except for the rest of the
 * 16-byte granule where a row ends, which the H100's TMA store does write. Every element is checked
 * against the CPU on fresh random data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "tma_test_open.h"
#include "tma_tile_kernel.h"

static asyncrt_context *g_ctx;
static asyncrt_module *g_module;

/* A tensor of `elem` bytes per element, dims innermost first, padded pitches. */
typedef struct tensor {
    uint32_t rank, elem;
    uint64_t dim[3], pitch[3]; /* pitch in elements: pitch[0] = 1 */
    size_t count;              /* elements including padding */
} tensor;

static tensor make_tensor(uint32_t rank, uint32_t elem, const uint64_t *dim, const uint64_t *padded)
{
    tensor t = {rank, elem, {1, 1, 1}, {1, 1, 1}, 0};
    uint64_t p = 1;
    for (uint32_t i = 0; i < rank; i++) {
        t.dim[i] = dim[i];
        t.pitch[i] = p;
        p *= padded[i];
    }
    t.count = (size_t)p;
    return t;
}

static asyncrt_tensormap_desc map_of(const tensor *t, asyncrt_tensormap_dtype dtype,
                                     asyncrt_deviceptr address, const uint32_t *box)
{
    asyncrt_tensormap_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dtype;
    d.rank = t->rank;
    d.address = address;
    for (uint32_t i = 0; i < t->rank; i++) {
        d.global_dim[i] = t->dim[i];
        d.box_dim[i] = box[i];
        d.element_stride[i] = 1;
        if (i > 0) d.global_stride[i - 1] = t->pitch[i] * t->elem;
    }
    return d;
}

static uint64_t element(const void *data, uint32_t elem, size_t i)
{
    return elem == 4 ? ((const uint32_t *)data)[i] : ((const uint16_t *)data)[i];
}

/* Runs one kernel over every box of `t` and checks tiles and output. */
static void run_tiles(const char *kernel_name, const tensor *t, asyncrt_tensormap_dtype dtype,
                      const uint32_t *box, bool replace_output_address)
{
    size_t bytes = t->count * t->elem;
    unsigned grid[3] = {1, 1, 1};
    size_t box_elems = 1;
    for (uint32_t i = 0; i < t->rank; i++) {
        grid[i] = (unsigned)((t->dim[i] + box[i] - 1) / box[i]);
        box_elems *= box[i];
    }
    size_t tiles = (size_t)grid[0] * grid[1] * grid[2];
    size_t tile_bytes = tiles * box_elems * t->elem;

    /* Random input everywhere, padding included: OOB must still read as zero. */
    unsigned char *input = malloc(bytes), *output = malloc(bytes), *tile_out = malloc(tile_bytes);
    assert_non_null(input);
    assert_non_null(output);
    assert_non_null(tile_out);
    for (size_t i = 0; i < bytes; i++) input[i] = (unsigned char)test_random_u32();
    uint32_t key = t->elem == 4 ? 0x5A5A5A5Au : 0xA5A5u; /* tiled TMA copies bits, any bits */

    asyncrt_deviceptr d_in, d_out, d_tiles, d_decoy = 0;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, bytes, &d_in));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, bytes, &d_out));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, tile_bytes, &d_tiles));
    assert_ok(g_ctx, asyncrt_memory_to_device(g_ctx, d_in, input, bytes));
    assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, d_out, 0xFF, bytes, NULL));
    assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, d_tiles, 0xFF, tile_bytes, NULL));

    asyncrt_tensormap_desc in_desc = map_of(t, dtype, d_in, box);
    asyncrt_tensormap_desc out_desc = map_of(t, dtype, d_out, box);
    if (replace_output_address) { /* encode for a decoy buffer, then move the map */
        assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, bytes, &d_decoy));
        assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, d_decoy, 0xFF, bytes, NULL));
        out_desc.address = d_decoy;
    }
    char msg[512];
    assert_int_equal(asyncrt_tensormap_validate(&in_desc, msg, sizeof msg), ASYNCRT_SUCCESS);
    asyncrt_tensor_map in_map, out_map;
    assert_ok(g_ctx, asyncrt_tensormap_encode(g_ctx, &in_desc, &in_map));
    assert_ok(g_ctx, asyncrt_tensormap_encode(g_ctx, &out_desc, &out_map));
    if (replace_output_address)
        assert_ok(g_ctx, asyncrt_tensormap_replace_address(g_ctx, &out_map, d_out));

    asyncrt_kernel *kernel;
    assert_ok(g_ctx, asyncrt_module_get_kernel(g_module, kernel_name, &kernel));
    asyncrt_launch_config config = ASYNCRT_LAUNCH_CONFIG_INIT;
    memcpy(config.grid, grid, sizeof grid);
    config.block[0] = 128;
    config.block[1] = config.block[2] = 1;
    uint16_t key16 = (uint16_t)key;
    void *args[] = {&in_map, &out_map, &d_tiles, t->elem == 4 ? (void *)&key : (void *)&key16};
    size_t sizes[] = {sizeof in_map, sizeof out_map, sizeof d_tiles, t->elem};
    assert_ok(g_ctx, asyncrt_kernel_launch(kernel, &config, args, sizes, 4));
    assert_ok(g_ctx, asyncrt_synchronize(g_ctx));
    assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, output, d_out, bytes));
    assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, tile_out, d_tiles, tile_bytes));

    /* Tiles: the box as TMA loaded it, zeros outside the tensor. */
    size_t bad = 0;
    for (size_t tile = 0; tile < tiles; tile++) {
        uint64_t box_z = t->rank == 3 ? box[2] : 1;
        uint64_t origin[3] = {tile % grid[0] * box[0], tile / grid[0] % grid[1] * box[1],
                              tile / grid[0] / grid[1] * box_z};
        for (size_t e = 0; e < box_elems; e++) {
            uint64_t c[3] = {e % box[0], e / box[0] % box[1], t->rank == 3 ? e / box[0] / box[1] : 0};
            bool inside = true;
            size_t src = 0;
            for (uint32_t i = 0; i < t->rank; i++) {
                uint64_t g = origin[i] + c[i];
                inside = inside && g < t->dim[i];
                src += g * t->pitch[i];
            }
            uint64_t want = inside ? element(input, t->elem, src) : 0;
            uint64_t got = element(tile_out, t->elem, tile * box_elems + e);
            if (got != want && bad++ < 8)
                print_error("%s tile %zu element %zu (%s): got 0x%llx, want 0x%llx\n", kernel_name,
                            tile, e, inside ? "inside" : "out of bounds", (unsigned long long)got,
                            (unsigned long long)want);
        }
    }
    /* Output: input ^ key inside the tensor, poison in the padding. One
     * exception: the H100 clips a TMA store to dimension 0 at 16-byte
     * granularity of the row (observed; also triton-lang/triton#11583), so
     * the elements from dim[0] up to the next 16-byte boundary of a row that
     * is otherwise inside may hold what the box had there: the load's zero
     * fill ^ key. Beyond that boundary, and in padding rows, only poison. */
    uint64_t poison = t->elem == 4 ? 0xFFFFFFFFu : 0xFFFFu;
    uint64_t row_tail_end = (t->dim[0] * t->elem + 15) / 16 * 16 / t->elem;
    size_t tail_written = 0;
    for (size_t i = 0; i < t->count; i++) {
        bool inside = true, tail = false;
        for (uint32_t d = 0; d < t->rank; d++) {
            uint64_t extent = d + 1 < t->rank ? t->pitch[d + 1] / t->pitch[d] : UINT64_MAX;
            uint64_t c = (i / t->pitch[d]) % extent;
            if (d == 0 && c >= t->dim[0] && c < row_tail_end) tail = true;
            else inside = inside && c < t->dim[d];
        }
        uint64_t got = element(output, t->elem, i);
        if (inside && tail && got == key) { /* 0 ^ key: the store's 16-byte granule */
            tail_written++;
            continue;
        }
        inside = inside && !tail;
        uint64_t want = inside ? element(input, t->elem, i) ^ key : poison;
        if (got != want && bad++ < 16)
            print_error("%s output element %zu (%s): got 0x%llx, want 0x%llx\n", kernel_name, i,
                        inside ? "inside" : "padding", (unsigned long long)got,
                        (unsigned long long)want);
    }
    if (tail_written)
        printf("%s: the store wrote %zu elements between dim[0] and the row's next 16-byte boundary "
               "(with the load's zero fill ^ key)\n", kernel_name, tail_written);
    if (replace_output_address) { /* the map no longer points at the decoy */
        assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, output, d_decoy, bytes));
        for (size_t i = 0; i < bytes; i++)
            if (output[i] != 0xFF && bad++ < 16) print_error("decoy byte %zu was written\n", i);
    }
    assert_int_equal(bad, 0);

    assert_ok(g_ctx, asyncrt_memory_free(g_ctx, d_in));
    assert_ok(g_ctx, asyncrt_memory_free(g_ctx, d_out));
    assert_ok(g_ctx, asyncrt_memory_free(g_ctx, d_tiles));
    assert_ok(g_ctx, asyncrt_memory_free(g_ctx, d_decoy));
    free(input);
    free(output);
    free(tile_out);
}

static void test_tma_2d_f32_partial_tiles(void **state)
{
    (void)state;
    /* 100 x 37 floats in rows of 112: the last box column and row are partial. */
    const uint64_t dim[2] = {100, 37}, padded[2] = {112, 37};
    const uint32_t box[2] = {TMA_BOX2_X, TMA_BOX2_Y};
    tensor t = make_tensor(2, 4, dim, padded);
    run_tiles("tile2d", &t, ASYNCRT_TENSORMAP_DTYPE_F32, box, false);
}

static void test_tma_3d_u16_partial_tiles_replaced_address(void **state)
{
    (void)state;
    /* 50 x 13 x 7 u16 in rows of 64 and planes of 15 rows: partial boxes on every axis. */
    const uint64_t dim[3] = {50, 13, 7}, padded[3] = {64, 15, 7};
    const uint32_t box[3] = {TMA_BOX3_X, TMA_BOX3_Y, TMA_BOX3_Z};
    tensor t = make_tensor(3, 2, dim, padded);
    run_tiles("tile3d", &t, ASYNCRT_TENSORMAP_DTYPE_U16, box, true);
}

static void test_encode_reports_the_rule(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d;
    const uint64_t shape[2] = {64, 64};
    const uint32_t box[2] = {16, 10}; /* 10 floats = 40 bytes */
    assert_int_equal(asyncrt_tensormap_describe_dense(&d, ASYNCRT_TENSORMAP_DTYPE_F32, 0x10000, 2,
                                                      shape, box),
                     ASYNCRT_SUCCESS);
    asyncrt_tensor_map map;
    assert_status(g_ctx, ASYNCRT_ERROR_TENSORMAP_INVALID, asyncrt_tensormap_encode(g_ctx, &d, &map));
    assert_non_null(strstr(asyncrt_context_last_error(g_ctx),
                           "box_dim[0] (10) x 4 bytes = 40 bytes: must be a multiple of 16"));
}

int main(void)
{
    int rc = tma_test_open("test_tensormap_gpu", "tma_tile_kernel.cu", tma_tile_kernel_source,
                           tma_tile_kernel_defines,
                           sizeof tma_tile_kernel_defines / sizeof *tma_tile_kernel_defines, &g_ctx, &g_module);
    if (rc != 0) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tma_2d_f32_partial_tiles),
        cmocka_unit_test(test_tma_3d_u16_partial_tiles_replaced_address),
        cmocka_unit_test(test_encode_reports_the_rule),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    asyncrt_module_destroy(g_module);
    asyncrt_context_destroy(g_ctx);
    return failed;
}
