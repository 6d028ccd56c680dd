/* .npy reading and writing: every dtype, shapes, version 2 headers, and
 * rejection of Fortran order, big-endian data, truncation and junk. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npy.h"
#include "test_support.h"

static char err[512];

/* A .npy image with the given header dict and `data_bytes` bytes of data. */
static size_t make(unsigned char *buf, int version, const char *dict, size_t data_bytes)
{
    size_t start = version == 1 ? 10 : 12, len = strlen(dict);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)version;
    buf[7] = 0;
    buf[8] = (unsigned char)(len & 0xff);
    buf[9] = (unsigned char)(len >> 8);
    if (version != 1) buf[10] = buf[11] = 0;
    memcpy(buf + start, dict, len);
    for (size_t i = 0; i < data_bytes; i++) buf[start + len + i] = (unsigned char)i;
    return start + len + data_bytes;
}

static void test_round_trip_every_dtype(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("npy");
    char path[4096];
    snprintf(path, sizeof path, "%s/a.npy", dir);
    for (int t = 0; t < RUN_DTYPE_COUNT; t++) {
        if (t == RUN_BF16) continue; /* no NumPy type: written as f32 by the tool */
        uint64_t shapes[3][3] = {{7, 0, 0}, {3, 5, 0}, {2, 3, 4}};
        for (int rank = 1; rank <= 3; rank++) {
            uint64_t count = 1;
            for (int i = 0; i < rank; i++) count *= shapes[rank - 1][i];
            size_t bytes = (size_t)count * run_dtype_size((run_dtype)t);
            unsigned char *data = malloc(bytes);
            for (size_t i = 0; i < bytes; i++) data[i] = (unsigned char)(test_random_u32());
            assert_true(run_npy_write(path, (run_dtype)t, shapes[rank - 1], rank, data, err, sizeof err));
            run_npy npy;
            void *storage;
            if (!run_npy_read(path, &npy, &storage, err, sizeof err)) fail_msg("%s", err);
            assert_int_equal(npy.dtype, t);
            assert_int_equal(npy.rank, rank);
            assert_int_equal(npy.count, count);
            for (int i = 0; i < rank; i++) assert_int_equal(npy.shape[i], shapes[rank - 1][i]);
            assert_memory_equal(npy.data, data, bytes);
            /* NumPy's own layout: header padded to 64 bytes, ending in '\n'. */
            size_t header = (size_t)((const unsigned char *)npy.data - (const unsigned char *)storage);
            assert_int_equal(header % 64, 0);
            assert_int_equal(((char *)storage)[header - 1], '\n');
            free(storage);
            free(data);
        }
    }
    uint64_t scalar_shape[1] = {0};
    float one = 1;
    assert_true(run_npy_write(path, RUN_F32, scalar_shape, 0, &one, err, sizeof err));
    run_npy npy;
    void *storage;
    assert_true(run_npy_read(path, &npy, &storage, err, sizeof err));
    assert_int_equal(npy.rank, 0);
    assert_int_equal(npy.count, 1);
    free(storage);
    test_remove_tree(dir);
    free(dir);
}

static void test_headers_numpy_writes(void **state)
{
    (void)state;
    unsigned char buf[512];
    run_npy npy;
    struct {
        const char *dict;
        run_dtype type;
        int rank;
        uint64_t count;
        int version;
    } ok[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", RUN_F32, 1, 3, 1},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }   \n", RUN_F64, 2, 4, 1},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (5,)}", RUN_U8, 1, 5, 2},
        {"{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", RUN_U8, 1, 4, 3},
        {"{'shape': (2, 3), 'fortran_order': False, 'descr': '<i8'}", RUN_I64, 2, 6, 1},
        {"{\"descr\": \"<f2\", \"fortran_order\": False, \"shape\": (1,)}", RUN_F16, 1, 1, 1},
        {"{'descr': '=i4', 'fortran_order': False, 'shape': (), }", RUN_I32, 0, 1, 1},
        {"{'descr': '<u8', 'fortran_order': False, 'shape': (0,), }", RUN_U64, 1, 0, 1},
        {"{'descr': '>u1', 'fortran_order': False, 'shape': (2L,), }", RUN_U8, 1, 2, 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t size = make(buf, ok[i].version, ok[i].dict, (size_t)ok[i].count * run_dtype_size(ok[i].type));
        if (!run_npy_parse(buf, size, &npy, err, sizeof err)) fail_msg("%s: %s", ok[i].dict, err);
        assert_int_equal(npy.dtype, ok[i].type);
        assert_int_equal(npy.rank, ok[i].rank);
        assert_int_equal(npy.count, ok[i].count);
    }
}

#define assert_rejected(substring, buf, size)                                                   \
    do {                                                                                        \
        run_npy npy_;                                                                           \
        if (run_npy_parse(buf, size, &npy_, err, sizeof err)) fail_msg("accepted: %s", substring); \
        if (!strstr(err, substring)) fail_msg("message '%s' lacks '%s'", err, substring);       \
    } while (0)

static void test_rejections(void **state)
{
    (void)state;
    unsigned char buf[512];
    size_t n;
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16);
    assert_rejected("Fortran (column-major) order", buf, n);
    n = make(buf, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8);
    assert_rejected("big-endian", buf, n);
    n = make(buf, 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16);
    assert_rejected("'<c8' is not supported", buf, n);
    n = make(buf, 1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", 4);
    assert_rejected("bfloat16", buf, n);
    n = make(buf, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8);
    assert_rejected("structured", buf, n);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 12);
    assert_rejected("truncated data: shape needs 16 bytes, the file holds 12", buf, n);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 20);
    assert_rejected("4 bytes follow", buf, n);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16);
    assert_rejected("truncated header", buf, 40);
    assert_rejected("no \\x93NUMPY magic", "hello world", 11);
    assert_rejected("no \\x93NUMPY magic", buf, 5);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16);
    buf[6] = 9;
    assert_rejected("unknown .npy format version 9", buf, n);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False}", 0);
    assert_rejected("lacks 'shape'", buf, n);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}", 4);
    assert_rejected("True or False", buf, n);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, x)}", 4);
    assert_rejected("'shape' holds", buf, n);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': 5}", 4);
    assert_rejected("not a tuple", buf, n);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", 4);
    assert_rejected("rank above 8", buf, n);
    n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999)}", 4);
    assert_rejected("too large", buf, n);
    n = make(buf, 1, "{'descr': '<f4', 'colour': 'red', 'fortran_order': False, 'shape': (1,)}", 4);
    assert_rejected("unknown header key 'colour'", buf, n);
    n = make(buf, 1, "['descr']", 0);
    assert_rejected("not a dict", buf, n);
}

static void test_fuzz(void **state)
{
    (void)state;
    unsigned char buf[256];
    size_t base = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 48);
    run_npy npy;
    for (int round = 0; round < 50000; round++) {
        unsigned char copy[256];
        memcpy(copy, buf, base);
        int flips = 1 + (int)(test_random_u32() % 4);
        for (int f = 0; f < flips; f++) copy[test_random_u32() % base] = (unsigned char)test_random_u32();
        size_t size = test_random_u32() % 8 ? base : test_random_u32() % (base + 1);
        if (run_npy_parse(copy, size, &npy, err, sizeof err)) {
            assert_true((const unsigned char *)npy.data + npy.count * run_dtype_size(npy.dtype) <= copy + size);
        } else {
            assert_true(strlen(err) > 0);
        }
    }
}

static void test_file_errors(void **state)
{
    (void)state;
    run_npy npy;
    void *storage;
    assert_false(run_npy_read("/nonexistent/dir/a.npy", &npy, &storage, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/dir/a.npy"));
    uint64_t shape[1] = {1};
    float v = 0;
    assert_false(run_npy_write("/nonexistent/dir/a.npy", RUN_F32, shape, 1, &v, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/dir/a.npy"));
    assert_false(run_npy_write("/tmp/x.npy", RUN_BF16, shape, 1, &v, err, sizeof err));
}

/* Outputs are written to a temporary file and renamed: the target is either
 * the old file or the whole new one, and no temporary is left behind. */
static void test_atomic_write(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("npy-atomic");
    char path[4096], sub[4096];
    snprintf(path, sizeof path, "%s/out.npy", dir);
    uint64_t shape[1] = {3};
    float a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
    assert_true(run_npy_write(path, RUN_F32, shape, 1, a, err, sizeof err));
    assert_true(run_npy_write(path, RUN_F32, shape, 1, b, err, sizeof err));
    run_npy npy;
    void *storage;
    assert_true(run_npy_read(path, &npy, &storage, err, sizeof err));
    assert_memory_equal(npy.data, b, sizeof b);
    free(storage);
    /* A target that cannot be replaced (a directory) fails and leaves only itself. */
    snprintf(sub, sizeof sub, "%s/adir", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_false(run_npy_write(sub, RUN_F32, shape, 1, a, err, sizeof err));
    DIR *d = opendir(dir);
    assert_non_null(d);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (strstr(e->d_name, ".tmp.")) fail_msg("temporary file %s left behind", e->d_name);
        entries++;
    }
    closedir(d);
    assert_int_equal(entries, 2);
    test_remove_tree(dir);
    free(dir);
}

int main(void)
{
    test_seed_random("test_run_npy");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_dtype), cmocka_unit_test(test_headers_numpy_writes),
        cmocka_unit_test(test_rejections),             cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_file_errors),            cmocka_unit_test(test_atomic_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
