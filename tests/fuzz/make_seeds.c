/* Writes the seeds that need the library's own types: tensor-map descriptors
 * (a leading sm byte, then an asyncrt_tensormap_im2col_desc's bytes) and
 * cache entries of real NVRTC compiles (no GPU needed: explicit arch).
 *   make_seeds CORPUS_DIR     (run once; the seeds are committed) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/tensormap.h"
#include "codec.h"
#include "cache_manifest.h"
#include "program.h"

static int write_file(const char *dir, const char *name, const void *a, size_t na, const void *b, size_t nb)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    fwrite(a, 1, na, f);
    if (nb) fwrite(b, 1, nb, f);
    return fclose(f) != 0;
}

static int tmap_seed(const char *dir, const char *name, unsigned char sm, const asyncrt_tensormap_im2col_desc *d)
{
    return write_file(dir, name, &sm, 1, d, sizeof *d);
}

/* cache_files seeds (fuzz_cache_files.c): mode 3 (both sealed by the
 * harness), a manifest payload with one set (no dependencies, then one on a
 * file whose stat will not match), the entry's payload; and a time trace. */
static int files_seed(const char *corpus, const char *arch, const unsigned char *entry, size_t entry_size)
{
    char dir[2048];
    snprintf(dir, sizeof dir, "%.2000s/cache_files", corpus);
    int failed = 0;
    for (int with_dep = 0; with_dep < 2; with_dep++) {
        asyncrt_dep dep = {.path = (char *)"/etc/hostname", .size = 7, .ino = 1, .dev = 1};
        asyncrt_dep_set set = {.cwd = (char *)"", .count = (size_t)with_dep, .deps = &dep};
        memset(set.result_key, 0x11, 32);
        asyncrt_manifest m = {&set, 1};
        uint8_t key1[32] = {0};
        size_t mf_size = 0;
        unsigned char *mf = asyncrt__manifest_encode(&m, key1, NULL, &mf_size);
        if (!mf) return 1;
        size_t payload = mf_size - ASYNCRT_SEAL_HEADER_SIZE;
        unsigned char head[3] = {3, (unsigned char)(payload & 0xFF), (unsigned char)(payload >> 8)};
        unsigned char *input = malloc(3 + payload + entry_size);
        if (!input) return 1;
        memcpy(input, head, 3);
        memcpy(input + 3, mf + ASYNCRT_SEAL_HEADER_SIZE, payload);
        memcpy(input + 3 + payload, entry + ASYNCRT_SEAL_HEADER_SIZE, entry_size - ASYNCRT_SEAL_HEADER_SIZE);
        char name[64];
        snprintf(name, sizeof name, "%s_%s", with_dep ? "dep" : "nodep", arch);
        failed |= write_file(dir, name, input, 3 + payload + entry_size - ASYNCRT_SEAL_HEADER_SIZE, NULL, 0);
        free(input);
        free(mf);
    }
    static const char trace[] =
        "{\"otherData\" : {\"isNVRTC\": 1}, \"traceEvents\" : [ {}, "
        "{\"args\":{\"detail\":\"__nv_nvrtc_builtin_header.h\"},\"dur\":1,\"name\":\"Processing Header File\","
        "\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1},"
        "{\"args\":{\"detail\":\"sub/../inc/a\\u0041.h\"},\"dur\":2,\"name\":\"Processing Header File\","
        "\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":2.5e1},"
        "{\"args\":{\"detail\":\"k(int *)\"},\"name\":\"Scanning Function Body\",\"x\":[true,false,null,-1]}]}";
    failed |= write_file(dir, "trace", trace, sizeof trace - 1, NULL, 0);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    char dir[4096];
    int failed = 0;
    asyncrt_tensormap_im2col_desc im;

    snprintf(dir, sizeof dir, "%s/tensormap", argv[1]);
    memset(&im, 0, sizeof im);
    uint64_t shape2[2] = {64, 128};
    uint32_t box2[2] = {16, 32};
    asyncrt_tensormap_describe_dense(&im.tiled, ASYNCRT_TENSORMAP_DTYPE_F32, 0x10000, 2, shape2, box2);
    failed |= tmap_seed(dir, "dense_f32_2d", 90, &im);
    im.tiled.swizzle = ASYNCRT_TENSORMAP_SWIZZLE_128B;
    failed |= tmap_seed(dir, "dense_f32_2d_swizzle128", 90, &im);
    uint64_t shape1[1] = {4096};
    uint32_t box1[1] = {256};
    memset(&im, 0, sizeof im);
    asyncrt_tensormap_describe_dense(&im.tiled, ASYNCRT_TENSORMAP_DTYPE_U8, 0x10000, 1, shape1, box1);
    failed |= tmap_seed(dir, "dense_u8_1d", 0, &im);
    uint64_t shape5[5] = {2, 3, 4, 8, 32};
    uint32_t box5[5] = {1, 1, 2, 4, 8};
    memset(&im, 0, sizeof im);
    asyncrt_tensormap_describe_dense(&im.tiled, ASYNCRT_TENSORMAP_DTYPE_F16, 0x20000, 5, shape5, box5);
    im.tiled.interleave = ASYNCRT_TENSORMAP_INTERLEAVE_32B;
    failed |= tmap_seed(dir, "f16_5d_interleave32", 100, &im);
    /* Rows of 100 bytes: valid, with warning row_bytes16. */
    uint64_t rows100[2] = {16, 50};
    uint32_t box100[2] = {4, 8};
    memset(&im, 0, sizeof im);
    asyncrt_tensormap_describe_dense(&im.tiled, ASYNCRT_TENSORMAP_DTYPE_U16, 0x10000, 2, rows100, box100);
    im.tiled.global_stride[0] = 112;
    failed |= tmap_seed(dir, "u16_rows100_warning", 90, &im);
    /* im2col NHWC: C=64, W=16, H=16, N=2 */
    uint64_t nhwc[4] = {2, 16, 16, 64};
    uint32_t boxn[4] = {1, 1, 1, 64};
    memset(&im, 0, sizeof im);
    asyncrt_tensormap_describe_dense(&im.tiled, ASYNCRT_TENSORMAP_DTYPE_BF16, 0x40000, 4, nhwc, boxn);
    im.lower_corner[0] = im.lower_corner[1] = -1;
    im.upper_corner[0] = im.upper_corner[1] = 1;
    im.channels_per_pixel = 64;
    im.pixels_per_column = 128;
    failed |= tmap_seed(dir, "im2col_bf16_nhwc", 90, &im);
    {
        char msg[512];
        if (asyncrt_tensormap_validate_im2col(&im, msg, sizeof msg) != ASYNCRT_SUCCESS)
            fprintf(stderr, "note: im2col seed is invalid: %s\n", msg);
    }

    snprintf(dir, sizeof dir, "%s/cache_entry", argv[1]);
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt_context_set_cache_dir(ctx, NULL);
    static const char *arches[] = {"sm_90", "compute_80"};
    const char *source = "template <typename T> __global__ void scale(T *x, T s, int n) {\n"
                         "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= s; }\n";
    const char *names[] = {"scale<float>", "scale<int>"};
    for (int i = 0; i < 2; i++) {
        asyncrt_compile_options o = {.size = sizeof o,
                                     .arch = arches[i], .name_expressions = names, .name_expression_count = 2};
        asyncrt_program *p = NULL;
        if (asyncrt_program_compile(ctx, "scale.cu", source, &o, &p) != ASYNCRT_SUCCESS) {
            fprintf(stderr, "compile: %s\n", asyncrt_context_last_error(ctx));
            return 1;
        }
        size_t size = 0;
        unsigned char *entry = asyncrt__program_encode(p, &size);
        unsigned char raw = 0, wrapped = 1;
        char name[64];
        snprintf(name, sizeof name, "entry_%s", arches[i]);
        failed |= write_file(dir, name, &raw, 1, entry, size);
        /* The same payload for the wrapping mode (header 88 bytes). */
        snprintf(name, sizeof name, "payload_%s", arches[i]);
        failed |= write_file(dir, name, &wrapped, 1, entry + 88, size - 88);
        failed |= files_seed(argv[1], arches[i], entry, size);
        free(entry);
        asyncrt_program_destroy(p);
    }
    asyncrt_context_destroy(ctx);
    return failed;
}
