/* asyncrt-run's command line, kernel scan and value conversions: every form,
 * and malformed input getting a message and the usage exit code. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "launch.h"
#include "npy.h"
#include "check.h"
#include "cli.h"
#include "scan.h"
#include "test_support.h"
#include "tmap.h"
#include "tool.h"

static run_cli cli;
static char err[2048];
#define L0 cli.launches[0]

/* Parses a NULL-terminated list after "asyncrt-run". */
static int parse_list(const char *const *words)
{
    char *argv[64] = {"asyncrt-run"};
    int argc = 1;
    while (words[argc - 1]) {
        argv[argc] = (char *)words[argc - 1];
        argc++;
    }
    return run_cli_parse(argc, argv, &cli, err, sizeof err);
}
#define PARSE(...) parse_list((const char *const[]){__VA_ARGS__, NULL})

#define assert_usage_error(substring, ...)                                                        \
    do {                                                                                          \
        int rc_ = PARSE(__VA_ARGS__);                                                             \
        if (rc_ != RUN_EXIT_USAGE) fail_msg("accepted, expected an error about '%s'", substring); \
        if (!strstr(err, substring)) fail_msg("message '%s' lacks '%s'", err, substring);         \
    } while (0)

static void test_defaults(void **state)
{
    (void)state;
    assert_int_equal(PARSE("k.cu"), RUN_EXIT_OK);
    assert_string_equal(cli.source, "k.cu");
    assert_string_equal(cli.arch, "auto");
    assert_int_equal(cli.device, 0);
    assert_null(L0.kernel);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(L0.grid[i], 1);
        assert_int_equal(L0.block[i], 1);
        assert_int_equal(L0.cluster[i], 0);
    }
    assert_true(cli.rtol < 0 && cli.atol < 0);
    assert_int_equal(cli.repeat, 0);
    assert_int_equal(cli.warmup, 1);
    assert_int_equal(PARSE("-"), RUN_EXIT_OK);
    assert_string_equal(cli.source, "-");
    assert_int_equal(PARSE("--help"), RUN_EXIT_OK);
    assert_true(cli.help);
    assert_int_equal(PARSE("-h"), RUN_EXIT_OK);
    assert_true(cli.help);
    assert_non_null(strstr(run_cli_usage(), "Exit codes"));
}

static void test_compile_options(void **state)
{
    (void)state;
    assert_int_equal(PARSE("k.cu", "--arch", "sm_90a", "--device", "1", "-I", "inc", "-Iinc2", "-D", "N=4", "-DFAST",
                           "--std=c++20", "-Xnvrtc", "-lineinfo", "--nvrtc-opt", "--use_fast_math",
                           "--nvrtc-opt=-G", "--kernel", "scale<float>", "--emit-ptx", "a.ptx", "--emit-cubin=a.cubin",
                           "-v", "--json"),
                     RUN_EXIT_OK);
    assert_string_equal(cli.arch, "sm_90a");
    assert_int_equal(cli.device, 1);
    assert_int_equal(cli.include_count, 2);
    assert_string_equal(cli.includes[1], "inc2");
    assert_int_equal(cli.define_count, 2);
    assert_string_equal(cli.defines[0], "N=4");
    assert_string_equal(cli.defines[1], "FAST");
    assert_string_equal(cli.std, "c++20");
    assert_int_equal(cli.nvrtc_option_count, 3);
    assert_string_equal(cli.nvrtc_options[0], "-lineinfo");
    assert_string_equal(cli.nvrtc_options[2], "-G");
    assert_string_equal(L0.kernel, "scale<float>");
    assert_string_equal(cli.emit_ptx, "a.ptx");
    assert_string_equal(cli.emit_cubin, "a.cubin");
    assert_int_equal(cli.verbose, 1);
    assert_true(cli.json);
    assert_int_equal(PARSE("k.cu", "--compile-only", "--arch", "compute_80"), RUN_EXIT_OK);
    assert_true(cli.compile_only);
    assert_int_equal(PARSE("k.cu", "-vv"), RUN_EXIT_OK);
    assert_int_equal(cli.verbose, 2);
    assert_int_equal(PARSE("--", "-odd.cu"), RUN_EXIT_OK);
    assert_string_equal(cli.source, "-odd.cu");
}

static void test_launch_shape(void **state)
{
    (void)state;
    assert_int_equal(PARSE("k.cu", "--grid", "7,9", "--block=128", "--cluster", "2,1,1", "--smem", "3K"), RUN_EXIT_OK);
    assert_int_equal(L0.grid[0], 7);
    assert_int_equal(L0.grid[1], 9);
    assert_int_equal(L0.grid[2], 1);
    assert_int_equal(L0.block[0], 128);
    assert_int_equal(L0.cluster[0], 2);
    assert_int_equal(L0.smem, 3072);
    assert_int_equal(PARSE("k.cu", "--smem", "100KiB"), RUN_EXIT_OK);
    assert_int_equal(L0.smem, 102400);
    assert_int_equal(PARSE("k.cu", "--smem", "227k"), RUN_EXIT_OK);
    assert_int_equal(L0.smem, 227 * 1024);
    assert_int_equal(PARSE("k.cu", "--smem", "1000"), RUN_EXIT_OK);
    assert_int_equal(L0.smem, 1000);
    assert_int_equal(PARSE("k.cu", "--grid", "0x10"), RUN_EXIT_OK);
    assert_int_equal(L0.grid[0], 16);
}

static void test_buffers(void **state)
{
    (void)state;
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:1024", "--buf", "a=bf16:64x128:fill=1.5", "--buf",
                           "i=i32:4,5,6:iota", "--buf", "j=u8:10:iota=3,2", "--buf", "r=f64:8:rand=7",
                           "--buf", "s=i16:8:rand=9,-5,5", "--buf", "p=f16:4:poison", "--buf", "n=f32:16:npy=in:1.npy",
                           "--buf", "w=npy:w.npy", "--buf", "z=int:3:zeros"),
                     RUN_EXIT_OK);
    assert_int_equal(cli.buffer_count, 10);
    run_buffer_spec *b = cli.buffers;
    assert_string_equal(b[0].name, "x");
    assert_int_equal(b[0].dtype, RUN_F32);
    assert_int_equal(b[0].rank, 1);
    assert_int_equal(b[0].count, 1024);
    assert_int_equal(b[0].init, RUN_INIT_ZEROS);
    assert_int_equal(b[1].dtype, RUN_BF16);
    assert_int_equal(b[1].rank, 2);
    assert_int_equal(b[1].shape[0], 64);
    assert_int_equal(b[1].shape[1], 128);
    assert_int_equal(b[1].init, RUN_INIT_FILL);
    assert_true(b[1].a == 1.5L);
    assert_int_equal(b[2].rank, 3);
    assert_int_equal(b[2].count, 120);
    assert_int_equal(b[2].init, RUN_INIT_IOTA);
    assert_true(b[2].a == 0 && b[2].b == 1);
    assert_true(b[3].a == 3 && b[3].b == 2);
    assert_int_equal(b[4].init, RUN_INIT_RAND);
    assert_int_equal(b[4].seed, 7);
    assert_true(b[4].a == -1 && b[4].b == 1);
    assert_true(b[5].a == -5 && b[5].b == 5);
    assert_int_equal(b[6].init, RUN_INIT_POISON);
    assert_int_equal(b[7].init, RUN_INIT_NPY);
    assert_string_equal(b[7].path, "in:1.npy");
    assert_true(b[8].from_file);
    assert_string_equal(b[8].path, "w.npy");
    assert_int_equal(b[9].dtype, RUN_I32);
    /* Integer rand defaults to [0, 100). */
    assert_int_equal(PARSE("k.cu", "--buf", "q=u32:4:rand=1"), RUN_EXIT_OK);
    assert_true(cli.buffers[0].a == 0 && cli.buffers[0].b == 100);
}

static void test_args_and_tmaps(void **state)
{
    (void)state;
    assert_int_equal(PARSE("k.cu", "--arg", "tmap:t", "--arg", "buf:x", "--arg", "i8:-128", "--arg", "u64:0xffffffffffffffff",
                           "--arg", "f16:0.5", "--arg", "bf16:-2", "--arg", "f64:nan", "--arg", "float:2.5", "--buf",
                           "x=f32:64x64", "--tmap", "t=x:box=32,16:swizzle=128b:l2=256b:oob=nan:interleave=none",
                           "--tmap", "u=x:box=8:dims=4096:estrides=2:dtype=tf32", "--tmap",
                           "v=x:box=16,16:dims=64,64:strides=256"),
                     RUN_EXIT_OK);
    assert_int_equal(L0.arg_count, 8);
    assert_int_equal(L0.args[0].kind, RUN_ARG_TMAP);
    assert_int_equal(L0.args[0].ref, 0);
    assert_int_equal(L0.args[1].kind, RUN_ARG_BUFFER);
    assert_int_equal(L0.args[1].ref, 0);
    assert_int_equal(L0.args[2].kind, RUN_ARG_SCALAR);
    assert_int_equal(L0.args[2].dtype, RUN_I8);
    assert_true(L0.args[2].value == -128);
    assert_true(L0.args[3].value == 18446744073709551615.0L);
    assert_int_equal(L0.args[4].dtype, RUN_F16);
    assert_int_equal(L0.args[5].dtype, RUN_BF16);
    assert_true(isnan(L0.args[6].value));
    assert_int_equal(L0.args[7].dtype, RUN_F32);
    assert_int_equal(cli.tmap_count, 3);
    run_tmap_spec *t = cli.tmaps;
    assert_int_equal(t[0].rank, 2);
    assert_int_equal(t[0].box[0], 32);
    assert_int_equal(t[0].box[1], 16);
    assert_int_equal(t[0].swizzle, ASYNCRT_TENSORMAP_SWIZZLE_128B);
    assert_int_equal(t[0].l2, ASYNCRT_TENSORMAP_L2_PROMOTION_256B);
    assert_int_equal(t[0].oob, ASYNCRT_TENSORMAP_OOB_FILL_NAN);
    assert_false(t[0].has_dtype);
    assert_int_equal(t[1].dims_rank, 1);
    assert_int_equal(t[1].estrides[0], 2);
    assert_true(t[1].has_dtype);
    assert_int_equal(t[1].dtype, ASYNCRT_TENSORMAP_DTYPE_TF32);
    assert_int_equal(t[2].strides_rank, 1);
    assert_int_equal(t[2].strides[0], 256);
}

static void test_results_and_timing(void **state)
{
    (void)state;
    assert_int_equal(PARSE("k.cu", "--buf", "y=f32:4", "--out", "y=o.npy", "--expect", "y=e.npy", "--rtol", "1e-3",
                           "--atol=0", "--repeat", "100", "--warmup", "5", "--bytes", "1M"),
                     RUN_EXIT_OK);
    assert_int_equal(cli.out_count, 1);
    assert_int_equal(cli.outs[0].buffer, 0);
    assert_string_equal(cli.outs[0].path, "o.npy");
    assert_string_equal(cli.expects[0].path, "e.npy");
    assert_true(cli.rtol == 1e-3 && cli.atol == 0);
    assert_int_equal(cli.repeat, 100);
    assert_int_equal(cli.warmup, 5);
    assert_int_equal(cli.batch, 1);
    assert_int_equal(cli.bytes, 1 << 20);
    /* --batch: launches per timed sample, only with --repeat. */
    assert_int_equal(PARSE("k.cu", "--repeat", "10", "--batch", "200"), RUN_EXIT_OK);
    assert_int_equal(cli.batch, 200);
    assert_usage_error("--batch only applies", "k.cu", "--batch", "200");
    assert_usage_error("--batch '0'", "k.cu", "--repeat", "3", "--batch", "0");
    /* --graph N: the sequence captured once and replayed N times; --warmup applies to it too */
    assert_int_equal(PARSE("k.cu", "--graph", "50", "--warmup", "3", "--then", "--pdl"), RUN_EXIT_OK);
    assert_int_equal(cli.graph, 50);
    assert_int_equal(cli.warmup, 3);
    assert_usage_error("--graph '0'", "k.cu", "--graph", "0");
    assert_usage_error("--graph captures one stream: launch 2's --priority differs", "k.cu", "--graph", "5",
                       "--priority", "-1", "--then");
}

/* Several sources, --link, --lto, -Xnvjitlink (issue 27). */
static void test_link_options(void **state)
{
    (void)state;
    assert_int_equal(PARSE("main.cu", "util.cu", "--link", "lib.a", "--link=x.ltoir", "--lto", "-Xnvjitlink", "-O3"),
                     RUN_EXIT_OK);
    assert_string_equal(cli.source, "main.cu");
    assert_int_equal(cli.more_source_count, 1);
    assert_string_equal(cli.more_sources[0], "util.cu");
    assert_int_equal(cli.link_file_count, 2);
    assert_string_equal(cli.link_files[1], "x.ltoir");
    assert_true(cli.lto);
    assert_int_equal(cli.link_option_count, 1);
    assert_string_equal(cli.link_options[0], "-O3");
    assert_int_equal(PARSE("k.cu"), RUN_EXIT_OK);
    assert_false(cli.lto || cli.more_source_count || cli.link_file_count);
    assert_usage_error("--link needs a value", "k.cu", "--link");
}

static void test_malformed(void **state)
{
    (void)state;
    assert_usage_error("no source file", "--grid", "1");
    assert_usage_error("unknown option '--frobnicate'", "k.cu", "--frobnicate");
    assert_usage_error("'-' (stdin) can only be the one source", "a.cu", "-");
    assert_usage_error("--emit-ptx: a linked image is a CUBIN", "a.cu", "--lto", "--emit-ptx", "a.ptx");
    assert_usage_error("--grid needs a value", "k.cu", "--grid");
    assert_usage_error("--grid '0'", "k.cu", "--grid", "0");
    assert_usage_error("--block '1,2,3,4'", "k.cu", "--block", "1,2,3,4");
    assert_usage_error("--block '1,,2'", "k.cu", "--block", "1,,2");
    assert_usage_error("--grid '-1'", "k.cu", "--grid", "-1");
    assert_usage_error("--grid '99999999999'", "k.cu", "--grid", "99999999999");
    assert_usage_error("--smem '12Q'", "k.cu", "--smem", "12Q");
    assert_usage_error("--smem '5G'", "k.cu", "--smem", "5G");
    assert_usage_error("--arch 'sm90'", "k.cu", "--arch", "sm90");
    assert_usage_error("needs an explicit --arch", "k.cu", "--compile-only");
    /* --compile-only keeps what needs a run, to check it (README: "--compile-only"). */
    assert_int_equal(PARSE("k.cu", "--compile-only", "--arch", "sm_90", "--buf", "y=f32:4", "--expect", "y=e.npy",
                           "--out", "y=o.npy", "--repeat", "3"), RUN_EXIT_OK);
    assert_usage_error("--warmup only applies", "k.cu", "--warmup", "3");
    assert_usage_error("--repeat '0'", "k.cu", "--repeat", "0");
    assert_usage_error("--device 'x'", "k.cu", "--device", "x");
    assert_usage_error("--rtol '-1'", "k.cu", "--rtol", "-1");
    assert_usage_error("--atol 'abc'", "k.cu", "--atol", "abc");
    assert_usage_error("-I needs a value", "k.cu", "-I");
    assert_usage_error("--kernel needs a name", "k.cu", "--kernel=");
    /* --buf */
    assert_usage_error("expected NAME=DTYPE:SHAPE", "k.cu", "--buf", "x");
    assert_usage_error("not an identifier", "k.cu", "--buf", "9x=f32:4");
    assert_usage_error("not an identifier", "k.cu", "--buf", "=f32:4");
    assert_usage_error("DTYPE one of", "k.cu", "--buf", "x=f33:4");
    assert_usage_error("DTYPE one of", "k.cu", "--buf", "x=f32");
    assert_usage_error("shape ''", "k.cu", "--buf", "x=f32:");
    assert_usage_error("shape '0'", "k.cu", "--buf", "x=f32:0");
    assert_usage_error("shape '4x'", "k.cu", "--buf", "x=f32:4x");
    assert_usage_error("shape '1x2x3x4x5x6x7x8x9'", "k.cu", "--buf", "x=f32:1x2x3x4x5x6x7x8x9");
    assert_usage_error("more than 2^40", "k.cu", "--buf", "x=f32:1048576x1048576x2");
    assert_usage_error("unknown initialiser 'ones'", "k.cu", "--buf", "x=f32:4:ones");
    assert_usage_error("fill value", "k.cu", "--buf", "x=i8:4:fill=300");
    assert_usage_error("fill value", "k.cu", "--buf", "x=u8:4:fill=-1");
    assert_usage_error("fill value", "k.cu", "--buf", "x=f32:4:fill=abc");
    assert_usage_error("iota=START", "k.cu", "--buf", "x=f32:4:iota=a");
    assert_usage_error("rand=SEED", "k.cu", "--buf", "x=f32:4:rand=");
    assert_usage_error("rand=SEED", "k.cu", "--buf", "x=f32:4:rand=1,2");
    assert_usage_error("rand=SEED", "k.cu", "--buf", "x=f32:4:rand=-3");
    assert_usage_error("is empty", "k.cu", "--buf", "x=f32:4:rand=1,5,5");
    assert_usage_error("unknown initialiser 'npy='", "k.cu", "--buf", "x=f32:4:npy=");
    assert_usage_error("npy: needs a file", "k.cu", "--buf", "x=npy:");
    assert_usage_error("defined twice", "k.cu", "--buf", "x=f32:4", "--buf", "x=f32:8");
    /* --arg */
    assert_usage_error("expected TYPE:VALUE", "k.cu", "--arg", "5");
    assert_usage_error("unknown type 'f31'", "k.cu", "--arg", "f31:5");
    assert_usage_error("out of range for i8", "k.cu", "--arg", "i8:128");
    assert_usage_error("out of range for u32", "k.cu", "--arg", "u32:-1");
    assert_usage_error("out of range for i64", "k.cu", "--arg", "i64:9223372036854775808");
    assert_usage_error("not a i32 integer", "k.cu", "--arg", "i32:1.5");
    assert_usage_error("not a i32 integer", "k.cu", "--arg", "i32: 1");
    assert_usage_error("empty f32 value", "k.cu", "--arg", "f32:");
    assert_usage_error("no --buf named 'y'", "k.cu", "--arg", "buf:y");
    assert_usage_error("no --tmap named 't'", "k.cu", "--arg", "tmap:t");
    assert_usage_error("not an identifier", "k.cu", "--arg", "buf:");
    /* --tmap */
    assert_usage_error("expected NAME=BUFFER:box", "k.cu", "--tmap", "t=x");
    assert_usage_error("box=... is required", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:swizzle=none");
    assert_usage_error("no --buf named 'x'", "k.cu", "--tmap", "t=x:box=4");
    assert_usage_error("box: expected", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=1,2,3,4,5,6");
    assert_usage_error("box: expected", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=");
    assert_usage_error("given twice", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4:box=4");
    assert_usage_error("KEY one of", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4:colour=red");
    assert_usage_error("KEY one of", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4:");
    assert_usage_error("swizzle '256b' is unknown: use one of none, 32b", "k.cu", "--buf", "x=f32:4", "--tmap",
                       "t=x:box=4:swizzle=256b");
    assert_usage_error("dtype 'f8' is unknown", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4:dtype=f8");
    assert_usage_error("oob 'inf' is unknown", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4:oob=inf");
    assert_usage_error("l2 '32b' is unknown", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4:l2=32b");
    assert_usage_error("interleave '64b' is unknown", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4:interleave=64b");
    assert_usage_error("dims has 1 entries but box has 2", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4,4:dims=4");
    assert_usage_error("strides needs 1 entries", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4,4:strides=16,16");
    assert_usage_error("estrides has 1 entries", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4,4:estrides=1");
    assert_usage_error("defined twice", "k.cu", "--buf", "x=f32:4", "--tmap", "t=x:box=4", "--tmap", "t=x:box=4");
    /* --out / --expect */
    assert_usage_error("expected BUFFER=FILE.npy", "k.cu", "--out", "y");
    assert_usage_error("expected BUFFER=FILE.npy", "k.cu", "--expect", "y=");
    assert_usage_error("no --buf named 'y'", "k.cu", "--out", "y=a.npy");
    assert_usage_error("no --buf named 'q'", "k.cu", "--expect", "q=a.npy");
}

/* A hostile argv must end in a message, never a crash: a crude fuzz over
 * random bytes and random mixes of option fragments. */
static void test_fuzz(void **state)
{
    (void)state;
    static const char *pieces[] = {"--buf", "--arg", "--tmap", "x=f32:4", "buf:x", "tmap:t", "t=x:box=4", "=",
                                   ":", ",", "--grid", "1,2,3", "--smem", "K", "-I", "-D", "--", "-", "k.cu",
                                   "x=npy:", "f32:", "rand=1,2,3", "box=", "--expect", "x=e.npy", "--out",
                                   "--then", "--pdl", "--cooperative", "--priority", "null", "struct:f32:1,i8:2",
                                   "bytes:0a", "tmapptr:t", "buf:x+4", "buf:x+8B", "x=e.npy:rtol=1", ":exact"};
    char storage[16][64];
    char *argv[17];
    test_seed_random("test_run_cli fuzz");
    for (int round = 0; round < 20000; round++) {
        int argc = 1 + (int)(test_random_u32() % 16);
        argv[0] = "asyncrt-run";
        for (int i = 1; i < argc; i++) {
            if (test_random_u32() % 3) {
                snprintf(storage[i], sizeof storage[i], "%s", pieces[test_random_u32() % (sizeof pieces / sizeof pieces[0])]);
            } else {
                int n = (int)(test_random_u32() % 20);
                for (int j = 0; j < n; j++) storage[i][j] = (char)(1 + test_random_u32() % 255);
                storage[i][n] = '\0';
            }
            argv[i] = storage[i];
        }
        int rc = run_cli_parse(argc, argv, &cli, err, sizeof err);
        assert_true(rc == RUN_EXIT_OK || rc == RUN_EXIT_USAGE);
        if (rc == RUN_EXIT_USAGE) assert_true(strlen(err) > 0);
    }
}

static void test_scan(void **state)
{
    (void)state;
    run_found_kernel k[8];
    const char *one = "// __global__ void commented(int);\n"
                      "#define K __global__ void macro_kernel()\n"
                      "const char *s = \"__global__ void in_string()\";\n"
                      "extern \"C\" __global__ void __launch_bounds__(256, 2) saxpy(float a, float *x) { }\n";
    assert_int_equal(run_scan_kernels(one, k, 8), 1);
    assert_string_equal(k[0].name, "saxpy");
    assert_true(k[0].is_extern_c);
    assert_false(k[0].is_template);

    const char *tmpl = "template <typename T, int N>\n__global__ void scale(T *d) {}\n"
                       "template <typename T> __global__ void scale(T *d);\n";
    assert_int_equal(run_scan_kernels(tmpl, k, 8), 1);
    assert_true(k[0].is_template);

    const char *several = "namespace ops { namespace inner {\n__global__ void a() {}\n} }\n"
                          "extern \"C\" { __global__ void b(int x); __global__ void b(int x) { } }\n"
                          "static __global__ void c() { }\n"
                          "/* unterminated comment is fine: __global__ void d() */\n"
                          "__global__ void __cluster_dims__(2, 1, 1) e(const __grid_constant__ int m) {}\n";
    assert_int_equal(run_scan_kernels(several, k, 8), 4);
    assert_string_equal(k[0].name, "ops::inner::a");
    assert_false(k[0].is_extern_c);
    assert_string_equal(k[1].name, "b");
    assert_true(k[1].is_extern_c);
    assert_string_equal(k[2].name, "c");
    assert_string_equal(k[3].name, "e");
    /* Capacity smaller than the count still reports the count. */
    assert_int_equal(run_scan_kernels(several, k, 2), 4);
    assert_int_equal(run_scan_kernels("", k, 8), 0);
    assert_int_equal(run_scan_kernels("__global__", k, 8), 0);
    assert_int_equal(run_scan_kernels("__global__ void f(", k, 8), 1);
    assert_int_equal(run_scan_kernels("R\"x(__global__ void raw())x\" __global__ void real() {}", k, 8), 1);
    assert_string_equal(k[0].name, "real");
    assert_int_equal(run_scan_kernels("\"unterminated __global__ void f()", k, 8), 0);
    assert_int_equal(run_scan_kernels("/* unterminated __global__ void f()", k, 8), 0);
    /* Random bytes never crash the scanner. */
    char junk[512];
    for (int round = 0; round < 2000; round++) {
        for (size_t i = 0; i + 1 < sizeof junk; i++) {
            static const char alphabet[] = "_global(){}<>;:\"'/*#\\\n Rtemplatexn";
            junk[i] = test_random_u32() % 4 ? alphabet[test_random_u32() % (sizeof alphabet - 1)] : (char)(1 + test_random_u32() % 255);
        }
        junk[sizeof junk - 1] = '\0';
        run_scan_kernels(junk, k, 8);
    }
}

static void test_values(void **state)
{
    (void)state;
    /* Half and bfloat16 conversions: exact values, rounding, specials. */
    assert_int_equal(run_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(run_f32_to_f16(-2.0f), 0xc000);
    assert_int_equal(run_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(run_f32_to_f16(65520.0f), 0x7c00); /* rounds to inf */
    assert_int_equal(run_f32_to_f16(5.9604645e-8f), 0x0001); /* smallest subnormal */
    assert_int_equal(run_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00); /* tie to even */
    assert_int_equal(run_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);
    assert_int_equal(run_f32_to_f16(INFINITY), 0x7c00);
    assert_true((run_f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (run_f32_to_f16(NAN) & 0x3ff));
    for (uint32_t h = 0; h < 0x7c00; h++) /* every finite half round-trips */
        assert_int_equal(run_f32_to_f16(run_f16_to_f32((uint16_t)h)), h);
    assert_int_equal(run_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(run_f32_to_bf16(1.00390625f), 0x3f80); /* tie to even */
    assert_int_equal(run_f32_to_bf16(1.01171875f), 0x3f82);
    assert_true(run_bf16_to_f32(0xc0a0) == -5.0f);

    /* Integer stores saturate; loads are exact. */
    unsigned char bytes[8];
    run_value_store(RUN_I8, 300, bytes);
    assert_true(run_value_load(RUN_I8, bytes) == 127);
    run_value_store(RUN_U16, -5, bytes);
    assert_true(run_value_load(RUN_U16, bytes) == 0);
    run_value_store(RUN_U64, 18446744073709551615.0L, bytes);
    assert_true(run_value_load(RUN_U64, bytes) == 18446744073709551615.0L);
    run_value_store(RUN_I64, -9223372036854775807.0L - 1, bytes);
    assert_true(run_value_load(RUN_I64, bytes) == -9223372036854775807.0L - 1);
    run_value_store(RUN_I32, NAN, bytes);
    assert_true(run_value_load(RUN_I32, bytes) == 0);
    run_value_store(RUN_F64, 0.1L, bytes);
    assert_true(run_value_load(RUN_F64, bytes) == (long double)0.1);

    /* rand= is reproducible and inside [0, 1). */
    for (uint64_t i = 0; i < 10000; i++) {
        double u = run_random_unit(7, i);
        assert_true(u >= 0 && u < 1);
        assert_true(u == run_random_unit(7, i));
    }
    assert_true(run_random_unit(7, 0) != run_random_unit(8, 0));
}

static void test_buffer_init(void **state)
{
    (void)state;
    run_buffer b[4];
    assert_int_equal(PARSE("k.cu", "--buf", "a=i16:2x3:iota=10,-2", "--buf", "r=u8:1000:rand=5,10,20", "--buf",
                           "f=bf16:3:fill=0.1", "--buf", "p=f32:2:poison"),
                     RUN_EXIT_OK);
    assert_int_equal(run_buffers_init(&cli, b, err, sizeof err), RUN_EXIT_OK);
    assert_int_equal(b[0].bytes, 12);
    for (int i = 0; i < 6; i++) assert_true(run_value_load(RUN_I16, (char *)b[0].host + 2 * i) == 10 - 2 * i);
    bool seen_lo = false, seen_hi = false;
    for (int i = 0; i < 1000; i++) {
        long double v = run_value_load(RUN_U8, (char *)b[1].host + i);
        assert_true(v >= 10 && v < 20);
        seen_lo |= v == 10;
        seen_hi |= v == 19;
    }
    assert_true(seen_lo && seen_hi);
    assert_int_equal(((uint16_t *)b[2].host)[1], run_f32_to_bf16(0.1f));
    assert_int_equal(((uint32_t *)b[3].host)[1], 0xffffffffu);
    run_buffers_free(NULL, b, 4);
    /* A missing .npy is an I/O error naming the file. */
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:4:npy=/nonexistent/x.npy"), RUN_EXIT_OK);
    assert_int_equal(run_buffers_init(&cli, b, err, sizeof err), RUN_EXIT_IO);
    assert_non_null(strstr(err, "/nonexistent/x.npy"));
    run_buffers_free(NULL, b, 1);
}

static void test_tmap_describe(void **state)
{
    (void)state;
    run_buffer b = {.name = "x", .dtype = RUN_F32, .rank = 2, .shape = {130, 200}, .count = 26000, .bytes = 104000,
                    .dev = 0x10000};
    asyncrt_tensormap_desc d;
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:130x200", "--tmap", "t=x:box=32,16:swizzle=128b:l2=128b"), RUN_EXIT_OK);
    assert_true(run_tmap_describe(&cli.tmaps[0], &b, &d, err, sizeof err));
    assert_int_equal(d.rank, 2);
    assert_int_equal(d.dtype, ASYNCRT_TENSORMAP_DTYPE_F32);
    assert_int_equal(d.global_dim[0], 200);
    assert_int_equal(d.global_dim[1], 130);
    assert_int_equal(d.global_stride[0], 800);
    assert_int_equal(d.box_dim[0], 32);
    assert_int_equal(d.box_dim[1], 16);
    assert_int_equal(d.element_stride[0], 1);
    assert_int_equal(d.swizzle, ASYNCRT_TENSORMAP_SWIZZLE_128B);
    assert_int_equal(d.l2_promotion, ASYNCRT_TENSORMAP_L2_PROMOTION_128B);
    assert_int_equal(d.address, 0x10000);
    /* A rule broken: the tensormap module's message. */
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:130x200", "--tmap", "t=x:box=10,16"), RUN_EXIT_OK);
    assert_false(run_tmap_describe(&cli.tmaps[0], &b, &d, err, sizeof err));
    assert_non_null(strstr(err, "box_dim[0]"));
    assert_non_null(strstr(err, "--tmap t"));
    /* Another view of the same bytes; and one that reaches past them. */
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:130x200", "--tmap", "t=x:box=64:dims=26000"), RUN_EXIT_OK);
    assert_true(run_tmap_describe(&cli.tmaps[0], &b, &d, err, sizeof err));
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:130x200", "--tmap", "t=x:box=16,16:dims=200,131"), RUN_EXIT_OK);
    assert_false(run_tmap_describe(&cli.tmaps[0], &b, &d, err, sizeof err));
    assert_non_null(strstr(err, "buffer x holds 104000"));
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:130x200", "--tmap", "t=x:box=16"), RUN_EXIT_OK);
    assert_false(run_tmap_describe(&cli.tmaps[0], &b, &d, err, sizeof err));
    assert_non_null(strstr(err, "give dims="));
}

static void test_compare(void **state)
{
    (void)state;
    float got[5] = {1, 2, NAN, INFINITY, 5.0001f};
    double want[5] = {1, 2.5, NAN, INFINITY, 5};
    run_check c;
    run_check_compare(&c, RUN_F32, got, RUN_F64, want, 5, 1e-3, 0);
    assert_int_equal(c.checked, 5);
    assert_int_equal(c.mismatches, 1);
    assert_int_equal(c.shown, 1);
    assert_int_equal(c.first[0].index, 1);
    run_check_compare(&c, RUN_F32, got, RUN_F64, want, 5, 0, 0);
    assert_int_equal(c.mismatches, 2);
    run_buffer b = {.rank = 2, .shape = {3, 4}};
    char idx[64];
    run_check_format_index(&b, 7, idx, sizeof idx);
    assert_string_equal(idx, "[1,3]");
    double rtol, atol;
    run_check_default_tolerance(RUN_I32, &rtol, &atol);
    assert_true(rtol == 0 && atol == 0);
}

/* Numbers are decimal or 0x hex everywhere: a leading zero never means octal. */
static void test_decimal_numbers(void **state)
{
    (void)state;
    assert_int_equal(PARSE("k.cu", "--grid", "010", "--block", "08,09", "--device", "010", "--repeat", "010",
                           "--warmup", "007", "--buf", "x=f32:010", "--arg", "i32:010", "--arg", "i32:-010", "--arg",
                           "u8:0x0a", "--smem", "010K"),
                     RUN_EXIT_OK);
    assert_int_equal(L0.grid[0], 10);
    assert_int_equal(L0.block[0], 8);
    assert_int_equal(L0.block[1], 9);
    assert_int_equal(cli.device, 10);
    assert_int_equal(cli.repeat, 10);
    assert_int_equal(cli.warmup, 7);
    assert_int_equal(cli.buffers[0].count, 10);
    assert_true(L0.args[0].value == 10 && L0.args[1].value == -10 && L0.args[2].value == 10);
    assert_int_equal(L0.smem, 10 * 1024);
    uint64_t v;
    assert_true(run_parse_u64("0x1F", 4, &v) && v == 31);
    assert_true(run_parse_u64("18446744073709551615", 20, &v) && v == UINT64_MAX);
    assert_false(run_parse_u64("18446744073709551616", 20, &v));
    assert_false(run_parse_u64("0x", 2, &v));
    assert_false(run_parse_u64("0b1", 3, &v));
    assert_false(run_parse_u64("1e3", 3, &v));
    assert_usage_error("--grid '0x'", "k.cu", "--grid", "0x");
    assert_usage_error("not a i32 integer", "k.cu", "--arg", "i32:0o10");
}

static void test_new_arguments(void **state)
{
    (void)state;
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:1024", "--tmap", "t=x:box=32", "--arg", "null", "--arg", "buf:x+256",
                           "--arg", "buf:x+16B", "--arg", "buf:x+0x10", "--arg", "tmapptr:t", "--arg", "tmap:t", "--arg",
                           "bytes:0102_0304", "--arg", "struct:f32:1.5,i32:3", "--arg", "struct:i8:1,f64:2", "--arg",
                           "struct:i8:1,i16:-2,i8:3", "--arg", "bytes:0xff"),
                     RUN_EXIT_OK);
    const run_arg_spec *a = L0.args;
    assert_int_equal(L0.arg_count, 11);
    assert_int_equal(a[0].kind, RUN_ARG_NULL);
    assert_int_equal(a[0].size, 8);
    assert_int_equal(a[1].kind, RUN_ARG_BUFFER);
    assert_int_equal(a[1].offset, 256);
    assert_false(a[1].offset_in_bytes);
    assert_int_equal(a[2].offset, 16);
    assert_true(a[2].offset_in_bytes);
    assert_int_equal(a[3].offset, 16);
    assert_false(a[3].offset_in_bytes);
    assert_int_equal(a[4].kind, RUN_ARG_TMAP_PTR);
    assert_int_equal(a[4].size, 8);
    assert_int_equal(a[4].ref, 0);
    assert_int_equal(a[5].size, 128);
    unsigned char buf[64];
    assert_int_equal(a[6].kind, RUN_ARG_BYTES);
    assert_int_equal(a[6].size, 4);
    run_arg_encode(&a[6], buf);
    assert_memory_equal(buf, "\x01\x02\x03\x04", 4);
    /* struct {float; int;}: 8 bytes, no padding */
    assert_int_equal(a[7].kind, RUN_ARG_STRUCT);
    assert_int_equal(a[7].size, 8);
    memset(buf, 0xee, sizeof buf);
    run_arg_encode(&a[7], buf);
    float f = 1.5f;
    int32_t i = 3;
    assert_memory_equal(buf, &f, 4);
    assert_memory_equal(buf + 4, &i, 4);
    assert_int_equal(buf[8], 0xee); /* nothing written past the size */
    /* struct {int8_t; double;}: the double at 8, 16 bytes, zeroed padding */
    assert_int_equal(a[8].size, 16);
    assert_int_equal(a[8].align, 8);
    memset(buf, 0xee, sizeof buf);
    run_arg_encode(&a[8], buf);
    double d = 2;
    assert_int_equal(buf[0], 1);
    for (int k = 1; k < 8; k++) assert_int_equal(buf[k], 0);
    assert_memory_equal(buf + 8, &d, 8);
    /* struct {int8_t; int16_t; int8_t;}: 0, 2, 4; 6 bytes */
    assert_int_equal(a[9].size, 6);
    run_arg_encode(&a[9], buf);
    int16_t s = -2;
    assert_int_equal(buf[0], 1);
    assert_memory_equal(buf + 2, &s, 2);
    assert_int_equal(buf[4], 3);
    assert_int_equal(a[10].size, 1);
    /* malformed */
    assert_usage_error("even, non-zero count of hex digits", "k.cu", "--arg", "bytes:123");
    assert_usage_error("even, non-zero count of hex digits", "k.cu", "--arg", "bytes:");
    assert_usage_error("'z' is not a hex digit", "k.cu", "--arg", "bytes:zz");
    assert_usage_error("field 'q:1'", "k.cu", "--arg", "struct:q:1");
    assert_usage_error("field ''", "k.cu", "--arg", "struct:");
    assert_usage_error("field '5'", "k.cu", "--arg", "struct:i32:1,5");
    assert_usage_error("out of range for i8", "k.cu", "--arg", "struct:i8:300");
    static char big[8 + 513 * 6 + 1] = "struct:"; /* 513 doubles: 4104 bytes */
    for (int k = 0; k < 513; k++) strcat(big, k ? ",f64:1" : "f64:1");
    assert_usage_error("more than 4096 bytes", "k.cu", "--arg", big);
    static char hex[8 + 2 * 4097 + 1] = "bytes:";
    for (int k = 0; k < 4097; k++) strcat(hex, "ab");
    assert_usage_error("more than 4096 bytes", "k.cu", "--arg", hex);
    assert_usage_error("offset 'abc'", "k.cu", "--buf", "x=f32:4", "--arg", "buf:x+abc");
    assert_usage_error("offset ''", "k.cu", "--buf", "x=f32:4", "--arg", "buf:x+");
    assert_usage_error("offset 'B'", "k.cu", "--buf", "x=f32:4", "--arg", "buf:x+B");
    assert_usage_error("no --tmap named 'm'", "k.cu", "--arg", "tmapptr:m");
    assert_usage_error("expected TYPE:VALUE", "k.cu", "--arg", "NULL");
    /* Scalars the type cannot hold. */
    assert_usage_error("out of range for i8", "k.cu", "--arg", "i8:300");
    assert_usage_error("overflows f16 (largest finite value 65504)", "k.cu", "--arg", "f16:1e6");
    assert_usage_error("overflows f16", "k.cu", "--arg", "f16:65520");
    assert_usage_error("overflows bf16", "k.cu", "--arg", "bf16:1e39");
    assert_usage_error("overflows f32", "k.cu", "--arg", "f32:1e39");
    assert_usage_error("overflows f64", "k.cu", "--arg", "f64:1e309");
    assert_int_equal(PARSE("k.cu", "--arg", "f16:65519", "--arg", "f16:inf", "--arg", "f32:-inf", "--arg", "f64:nan"),
                     RUN_EXIT_OK);
    /* Generated values too. */
    assert_usage_error("iota would produce 199 is out of range for i8", "k.cu", "--buf", "x=i8:200:iota");
    assert_usage_error("iota would produce", "k.cu", "--buf", "x=f16:4:iota=0,1e5");
    assert_usage_error("rand would produce 299 is out of range for u8", "k.cu", "--buf", "x=u8:4:rand=1,0,300");
    assert_int_equal(PARSE("k.cu", "--buf", "x=i8:4:rand=1,-128,128", "--buf", "y=i8:128:iota=-1,-1"), RUN_EXIT_OK);
}

static void test_value_fits(void **state)
{
    (void)state;
    char why[200];
    assert_true(run_value_fits(RUN_I8, -128, why, sizeof why));
    assert_false(run_value_fits(RUN_I8, -129, why, sizeof why));
    assert_false(run_value_fits(RUN_U32, NAN, why, sizeof why));
    assert_non_null(strstr(why, "cannot be stored in u32"));
    assert_false(run_value_fits(RUN_I64, INFINITY, why, sizeof why));
    assert_true(run_value_fits(RUN_U64, 18446744073709551615.0L, why, sizeof why));
    assert_true(run_value_fits(RUN_F16, NAN, why, sizeof why));
    assert_true(run_value_fits(RUN_BF16, -INFINITY, why, sizeof why));
    assert_false(run_value_fits(RUN_F16, -70000, why, sizeof why));
    assert_true(run_value_fits(RUN_F32, 3.4e38L, why, sizeof why));
}

static void test_launch_sequences(void **state)
{
    (void)state;
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:64", "--buf", "p=f32:4", "--kernel", "block_sum", "--grid", "4",
                           "--block", "16", "--arg", "buf:x", "--arg", "buf:p", "--arg", "i32:64", "--priority", "-2",
                           "--then", "--kernel", "block_sum", "--block", "4", "--arg", "buf:p", "--arg", "buf:p+0",
                           "--arg", "i32:4", "--pdl", "--priority", "-2", "--then", "--cooperative", "--grid", "8",
                           "--kernel", "k<float>", "--out", "p=p.npy"),
                     RUN_EXIT_OK);
    assert_int_equal(cli.launch_count, 3);
    const run_launch_spec *l = cli.launches;
    assert_string_equal(l[0].kernel, "block_sum");
    assert_int_equal(l[0].grid[0], 4);
    assert_int_equal(l[0].block[0], 16);
    assert_int_equal(l[0].arg_count, 3);
    assert_true(l[0].has_priority && l[0].priority == -2);
    assert_false(l[0].pdl);
    assert_int_equal(l[1].grid[0], 1); /* each launch starts from the defaults */
    assert_int_equal(l[1].block[0], 4);
    assert_int_equal(l[1].arg_count, 3);
    assert_int_equal(l[1].args[0].ref, 1);
    assert_true(l[1].pdl);
    assert_true(l[2].cooperative);
    assert_int_equal(l[2].grid[0], 8);
    assert_int_equal(l[2].arg_count, 0);
    assert_string_equal(l[2].kernel, "k<float>");
    assert_usage_error("the first launch has no launch before it", "k.cu", "--pdl");
    assert_usage_error("give both the same --priority", "k.cu", "--then", "--pdl", "--priority", "1");
    assert_usage_error("no cooperative cluster launch", "k.cu", "--cooperative", "--cluster", "2");
    assert_usage_error("--priority 'x'", "k.cu", "--priority", "x");
    assert_usage_error("--priority '2000'", "k.cu", "--priority", "2000");
    assert_usage_error("no --buf named 'q'", "k.cu", "--then", "--arg", "buf:q");
    const char *many[40] = {"k.cu"};
    for (int i = 1; i <= 16; i++) many[i] = "--then";
    assert_int_equal(parse_list(many), RUN_EXIT_USAGE);
    assert_non_null(strstr(err, "more than 16 launches"));
}

static void test_expect_tolerances_and_files(void **state)
{
    (void)state;
    assert_int_equal(PARSE("k.cu", "--buf", "y=f32:4", "--buf", "n=i32:4", "--expect", "y=e.npy:rtol=1e-3,atol=0.5",
                           "--expect", "n=n.npy:exact", "--expect", "y=a:b.npy", "--expect", "y=f.npy:atol=2",
                           "--out", "y=out.npy"),
                     RUN_EXIT_OK);
    assert_string_equal(cli.expects[0].path, "e.npy");
    assert_true(cli.expects[0].rtol == 1e-3 && cli.expects[0].atol == 0.5);
    assert_string_equal(cli.expects[1].path, "n.npy");
    assert_true(cli.expects[1].rtol == 0 && cli.expects[1].atol == 0);
    assert_string_equal(cli.expects[2].path, "a:b.npy");
    assert_true(cli.expects[2].rtol < 0 && cli.expects[2].atol < 0);
    assert_true(cli.expects[3].rtol < 0 && cli.expects[3].atol == 2);
    assert_usage_error("expected rtol=R and/or atol=A", "k.cu", "--buf", "y=f32:4", "--expect", "y=e.npy:rtol=x");
    assert_usage_error("expected rtol=R and/or atol=A", "k.cu", "--buf", "y=f32:4", "--expect", "y=e.npy:atol=-1");
    assert_usage_error("expected rtol=R and/or atol=A", "k.cu", "--buf", "y=f32:4", "--expect", "y=e.npy:rtol=1,exact");
    assert_usage_error("expected BUFFER=FILE.npy", "k.cu", "--buf", "y=f32:4", "--expect", "y=:exact");
    /* --out over an --expect reference: refused before anything runs. */
    assert_usage_error("would overwrite the --expect reference", "k.cu", "--buf", "y=f32:4", "--out", "y=r.npy",
                       "--expect", "y=r.npy");
    assert_usage_error("would overwrite the --expect reference", "k.cu", "--buf", "y=f32:4", "--buf", "z=f32:4",
                       "--out", "z=r.npy", "--expect", "y=r.npy:exact");
    assert_usage_error("two buffers are written to o.npy", "k.cu", "--buf", "y=f32:4", "--buf", "z=f32:4", "--out",
                       "y=o.npy", "--out", "z=o.npy");
}

static void test_scan_signatures(void **state)
{
    (void)state;
    run_found_kernel k[8];
    const char *src = "template <typename T, int N, template <class> class W>\n"
                      "__global__ void __launch_bounds__(128) t(T *d, W<int> w, int n) {}\n"
                      "template __global__ void t<float, 4, Box>(float *, Box<int>, int);\n"
                      "__global__ void none() {}\n__global__ void only_void(void) {}\n"
                      "__global__ void defaults(const float *a = nullptr, int (*f)(int, int) = 0, "
                      "Pair<int, long> p = {1, 2}) {}\n"
                      "template <typename... Ts> __global__ void pack(Ts... args) {}\n"
                      "__global__ void over(int a); __global__ void over(int a, int b);\n";
    size_t n = run_scan_kernels(src, k, 8);
    assert_int_equal(n, 6);
    assert_string_equal(k[0].name, "t"); /* the explicit instantiation is no kernel named 'float' */
    assert_true(k[0].is_template);
    assert_int_equal(k[0].param_count, 3);
    assert_string_equal(k[0].template_params, "typename T, int N, template <class> class W");
    assert_string_equal(k[0].instantiation, "float, 4, Box");
    assert_int_equal(k[1].param_count, 0);
    assert_int_equal(k[2].param_count, 0);
    assert_string_equal(k[3].name, "defaults");
    assert_int_equal(k[3].param_count, 3);
    assert_int_equal(k[4].param_count, -1); /* a pack */
    assert_int_equal(k[5].param_count, -1); /* overloads disagree */
    char example[300];
    run_scan_example(&k[0], example, sizeof example);
    assert_string_equal(example, "t<float, 4, Box>");
    run_found_kernel no_inst = k[0];
    no_inst.instantiation[0] = '\0';
    run_scan_example(&no_inst, example, sizeof example);
    assert_string_equal(example, "t<float, 1, float>");
    assert_ptr_equal(run_scan_find(k, n, "t<float, 4, Box>"), &k[0]);
    assert_ptr_equal(run_scan_find(k, n, "::defaults"), &k[3]);
    assert_null(run_scan_find(k, n, "nosuch"));
    /* Only explicit instantiation in a file with the template elsewhere: never named by its type. */
    assert_int_equal(run_scan_kernels("template __global__ void scale<float>(float *, int);", k, 8), 1);
    assert_string_equal(k[0].name, "scale");
}

static void test_declared_count_fallback(void **state)
{
    (void)state;
    static run_result r;
    size_t sizes[2] = {8, 4};
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:4", "--arg", "buf:x", "--arg", "i32:4"), RUN_EXIT_OK);
    memset(&r, 0, sizeof r);
    snprintf(r.launches[0].kernel, sizeof r.launches[0].kernel, "k");
    r.launches[0].declared_params = 3;
    assert_int_equal(run_check_declared(&cli, 0, sizes, &r), RUN_EXIT_USAGE);
    assert_non_null(strstr(r.error, "declares 3 parameters in the source, but the command line gives 2"));
    free(r.error);
    memset(&r, 0, sizeof r);
    r.launches[0].declared_params = 2;
    assert_int_equal(run_check_declared(&cli, 0, sizes, &r), RUN_EXIT_OK);
    r.launches[0].declared_params = -1; /* unknown: nothing to check */
    assert_int_equal(run_check_declared(&cli, 0, sizes, &r), RUN_EXIT_OK);
}

static void test_tmap_interleave_bounds(void **state)
{
    (void)state;
    run_buffer b = {.name = "x", .dtype = RUN_F32, .rank = 3, .shape = {8, 4, 4}, .count = 128, .bytes = 512,
                    .dev = 0x10000};
    asyncrt_tensormap_desc d;
    /* Interleaved maps used to skip the bounds check: 9 planes of 64 bytes reach 576. */
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:8x4x4", "--tmap", "t=x:box=4,4,4:dims=4,4,9:interleave=16b"),
                     RUN_EXIT_OK);
    assert_false(run_tmap_describe(&cli.tmaps[0], &b, &d, err, sizeof err));
    assert_non_null(strstr(err, "reach 576 bytes but buffer x holds 512"));
    assert_int_equal(PARSE("k.cu", "--buf", "x=f32:8x4x4", "--tmap", "t=x:box=4,4,4:dims=4,4,8:interleave=16b"),
                     RUN_EXIT_OK);
    assert_true(run_tmap_describe(&cli.tmaps[0], &b, &d, err, sizeof err));
}

static void test_json_strings(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "\"plain\""},
        {"q\"b\\n\nt\t", "\"q\\\"b\\\\n\\nt\\u0009\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""}, /* valid UTF-8 kept */
        {"a\xff" "b", "\"a\\ufffdb\""},                 /* a byte that starts nothing */
        {"\x80", "\"\\ufffd\""},                        /* a stray continuation byte */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},             /* overlong '/' */
        {"\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""},  /* overlong, 3 bytes */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},  /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* above U+10FFFF */
        {"x\xe2\x82", "\"x\\ufffd\\ufffd\""},           /* truncated at the end */
        {"\x7f\x01", "\"\\u007f\\u0001\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        tool_json_string(f, cases[i].in);
        fclose(f);
        if (strcmp(text, cases[i].out)) fail_msg("case %zu: got %s, want %s", i, text, cases[i].out);
        free(text);
    }
}

static void test_npy_inputs_hardened(void **state)
{
    (void)state;
    run_npy npy;
    void *storage;
    assert_false(run_npy_read("/dev/zero", &npy, &storage, err, sizeof err));
    assert_non_null(strstr(err, "not a regular file"));
    assert_false(run_npy_read("/dev/null", &npy, &storage, err, sizeof err));
    assert_non_null(strstr(err, "not a regular file"));
    assert_true(run_npy_max_bytes() > 0 && run_npy_max_bytes() <= RUN_NPY_MAX_BYTES);
    /* Junk between the header dict and the padding. */
    char bytes[128 + 16];
    memcpy(bytes, "\x93NUMPY\x01\x00\x76\x00", 10);
    snprintf(bytes + 10, 119, "%-117s", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } junk");
    bytes[127] = '\n';
    memset(bytes + 128, 0, 16);
    assert_false(run_npy_parse(bytes, sizeof bytes, &npy, err, sizeof err));
    assert_non_null(strstr(err, "junk after the header dict"));
    snprintf(bytes + 10, 119, "%-117s", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }");
    bytes[127] = '\n';
    assert_true(run_npy_parse(bytes, sizeof bytes, &npy, err, sizeof err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),       cmocka_unit_test(test_compile_options),
        cmocka_unit_test(test_launch_shape),   cmocka_unit_test(test_buffers),
        cmocka_unit_test(test_args_and_tmaps), cmocka_unit_test(test_results_and_timing),
        cmocka_unit_test(test_malformed),      cmocka_unit_test(test_link_options),      cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_scan),           cmocka_unit_test(test_values),
        cmocka_unit_test(test_buffer_init),    cmocka_unit_test(test_tmap_describe),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_decimal_numbers),  cmocka_unit_test(test_new_arguments),
        cmocka_unit_test(test_value_fits),       cmocka_unit_test(test_launch_sequences),
        cmocka_unit_test(test_expect_tolerances_and_files), cmocka_unit_test(test_scan_signatures),
        cmocka_unit_test(test_declared_count_fallback),     cmocka_unit_test(test_tmap_interleave_bounds),
        cmocka_unit_test(test_json_strings),     cmocka_unit_test(test_npy_inputs_hardened),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
