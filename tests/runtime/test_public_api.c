/* The public calls the tools use instead of the internals (issue 35 phase
 * B): targets, the NVRTC search, settings, a program around an image and the
 * driver's entry points, each with the bad input it refuses and the message
 * that names the value and the rule. Runs on the fake driver
 * (ASYNCRT_LIBCUDA=fake_device_libcuda) with this machine's NVRTC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/ops.h"
#include "test_support.h"

#define assert_says(ctx, words)                                                  \
    do {                                                                         \
        if (!strstr(asyncrt_context_last_error(ctx), (words)))                   \
            fail_msg("message '%s' lacks '%s'", asyncrt_context_last_error(ctx), (words)); \
    } while (0)

static void arch_parse_and_format(void **state)
{
    (void)state;
    asyncrt_arch a = ASYNCRT_ARCH_INIT;
    char buf[32];
    const char *good[] = {"sm_90", "sm_90a", "compute_80", "compute_100f"};
    for (size_t i = 0; i < 4; i++) {
        assert_true(asyncrt_arch_parse(good[i], &a));
        assert_int_equal(asyncrt_arch_format(&a, buf, sizeof buf), (int)strlen(good[i]));
        assert_string_equal(buf, good[i]);
    }
    assert_true(asyncrt_arch_parse("compute_100f", &a));
    assert_int_equal(a.number, 100);
    assert_int_equal(a.suffix, 'f');
    assert_true(a.ptx);
    const char *bad[] = {"auto", "", "sm_9", "sm_90b", "compute_", "SM_90"};
    for (size_t i = 0; i < 6; i++)
        if (asyncrt_arch_parse(bad[i], &a)) fail_msg("'%s' parsed", bad[i]);
    assert_false(asyncrt_arch_parse(NULL, &a));
    asyncrt_arch unsized = {0}; /* no size: refused, as every sized struct */
    assert_false(asyncrt_arch_parse("sm_90", &unsized));
    assert_int_equal(asyncrt_arch_format(&unsized, buf, sizeof buf), -1);
}

static void nvrtc_targets_and_auto(void **state)
{
    (void)state;
    size_t count = 0;
    if (asyncrt_nvrtc_supported_archs(NULL, 0, &count) == ASYNCRT_ERROR_NO_NVRTC) skip();
    assert_true(count > 0); /* capacity 0 still counts */
    int archs[256];
    size_t n = 0;
    assert_int_equal(asyncrt_nvrtc_supported_archs(archs, 256, &n), ASYNCRT_SUCCESS);
    assert_int_equal(n, count);
    for (size_t i = 1; i < n; i++) assert_true(archs[i - 1] < archs[i]);
    assert_int_equal(asyncrt_nvrtc_supported_archs(archs, 4, NULL), ASYNCRT_ERROR_INVALID_ARGUMENT);

    asyncrt_arch a = ASYNCRT_ARCH_INIT;
    char why[1024] = "", name[32];
    int v = asyncrt_nvrtc_version(); /* a driver of NVRTC's own version: a CUBIN for the device */
    assert_int_equal(asyncrt_arch_auto(9, 0, v, &a, why, sizeof why), ASYNCRT_SUCCESS);
    asyncrt_arch_format(&a, name, sizeof name);
    assert_string_equal(name, "sm_90");
    assert_non_null(strstr(why, "sm_90"));
    assert_int_equal(asyncrt_arch_auto(9, 0, v + 1000, &a, why, sizeof why), ASYNCRT_SUCCESS);
    /* A driver of an older major cannot load what this NVRTC builds: the rule says so. */
    assert_int_equal(asyncrt_arch_auto(9, 0, v - 2000, &a, why, sizeof why), ASYNCRT_ERROR_VERSION_MISMATCH);
    assert_true(why[0]);
    asyncrt_arch unsized = {0};
    assert_int_equal(asyncrt_arch_auto(9, 0, v, &unsized, why, sizeof why), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(why, "asyncrt_arch.size is 0"));
}

static void nvrtc_search(void **state)
{
    (void)state;
    asyncrt_nvrtc_info info = ASYNCRT_NVRTC_INFO_INIT;
    assert_int_equal(asyncrt_nvrtc_info_get(false, &info), ASYNCRT_SUCCESS);
    assert_non_null(info.why);
    assert_non_null(info.searched);
    assert_null(info.path); /* not opened */
    assert_int_equal(info.version, 0);
    for (size_t i = 0; i < info.candidate_count; i++) {
        asyncrt_nvrtc_candidate c = ASYNCRT_NVRTC_CANDIDATE_INIT;
        assert_int_equal(asyncrt_nvrtc_candidate_get(i, &c), ASYNCRT_SUCCESS);
        assert_true(c.path && c.path[0] && c.version && c.found_by && c.version_from);
    }
    asyncrt_nvrtc_candidate c = ASYNCRT_NVRTC_CANDIDATE_INIT;
    assert_int_equal(asyncrt_nvrtc_candidate_get(info.candidate_count, &c), ASYNCRT_ERROR_INVALID_ARGUMENT);
    asyncrt_nvrtc_info unsized = {0};
    assert_int_equal(asyncrt_nvrtc_info_get(false, &unsized), ASYNCRT_ERROR_INVALID_ARGUMENT);
    asyncrt_status s = asyncrt_nvrtc_info_get(true, &info);
    if (s == ASYNCRT_SUCCESS) {
        assert_int_equal(info.version, asyncrt_nvrtc_version());
        assert_true(info.path && info.path[0]);
        assert_true(info.chosen >= 0);
    } else {
        assert_int_equal(s, ASYNCRT_ERROR_NO_NVRTC);
        assert_true(info.why && info.why[0]);
    }
}

static void settings(void **state)
{
    asyncrt_context *ctx = *state;
    const char *v = NULL;
    assert_ok(ctx, asyncrt_context_setting(ctx, "ASYNCRT_CACHE_DIR", &v));
    assert_string_equal(v, getenv("ASYNCRT_CACHE_DIR"));
    assert_ok(ctx, asyncrt_context_setting(ctx, "ASYNCRT_TILE_TUNE", &v));
    assert_null(v);
    assert_ok(ctx, asyncrt_context_set_setting(ctx, "ASYNCRT_TILE_TUNE", "64x64"));
    assert_ok(ctx, asyncrt_context_setting(ctx, "ASYNCRT_TILE_TUNE", &v));
    assert_string_equal(v, "64x64");
    assert_ok(ctx, asyncrt_context_set_setting(ctx, "ASYNCRT_TILE_TUNE", NULL));
    assert_ok(ctx, asyncrt_context_setting(ctx, "ASYNCRT_TILE_TUNE", &v));
    assert_null(v);
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_context_setting(ctx, "ASYNCRT_NOPE", &v));
    assert_says(ctx, "setting 'ASYNCRT_NOPE' is not a variable the library reads");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_context_set_setting(ctx, "PATH", "/bin"));
    assert_says(ctx, "setting 'PATH' is not a variable the library reads");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_context_set_setting(ctx, "ASYNCRT_CACHE_DIR", "/x"));
    assert_says(ctx, "setting ASYNCRT_CACHE_DIR has its own call: use asyncrt_context_set_cache_dir");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                  asyncrt_context_set_setting(ctx, "ASYNCRT_REMOTE_CACHE_KEY_FILE", "/k"));
    assert_says(ctx, "use asyncrt_context_set_remote_cache");
}

static void program_from_image(void **state)
{
    asyncrt_context *ctx = *state;
    static const unsigned char cubin[] = "\x7f" "ELF\x02\x01\x01 not really a cubin";
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_from_image(ctx, cubin, sizeof cubin, "sm_90a", &p));
    size_t size = 0;
    const void *image = asyncrt_program_image(p, &size);
    assert_int_equal(size, sizeof cubin);
    assert_memory_equal(image, cubin, sizeof cubin);
    assert_string_equal(asyncrt_program_arch(p), "sm_90a");
    assert_false(asyncrt_program_is_ptx(p));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_IMAGE);
    assert_string_equal(asyncrt_program_origin_string(ASYNCRT_ORIGIN_IMAGE), "image");
    assert_string_equal(asyncrt_program_log(p), "");
    assert_null(asyncrt_program_lowered_name(p, "k"));
    asyncrt_program_destroy(p);

    static const char ptx[] = ".version 9.0\n.target sm_80\n";
    assert_ok(ctx, asyncrt_program_from_image(ctx, ptx, strlen(ptx), "compute_80", &p));
    image = asyncrt_program_image(p, &size);
    assert_int_equal(size, strlen(ptx) + 1); /* the NUL added */
    assert_string_equal(image, ptx);
    assert_true(asyncrt_program_is_ptx(p));
    asyncrt_program_destroy(p);

    p = (asyncrt_program *)1;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_program_from_image(ctx, ptx, strlen(ptx), "sm_90", &p));
    assert_null(p);
    assert_says(ctx, "image for sm_90: 27 bytes that are not a CUBIN (an sm_XY target takes an ELF file");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                  asyncrt_program_from_image(ctx, cubin, sizeof cubin, "compute_90", &p));
    assert_says(ctx, "image for compute_90: not PTX text (an ELF file");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_program_from_image(ctx, "a\0b", 3, "compute_90", &p));
    assert_says(ctx, "a NUL byte before its end");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_program_from_image(ctx, cubin, 8, "sm_9x", &p));
    assert_says(ctx, "image arch 'sm_9x' is malformed: it must be sm_XY[a|f] (a CUBIN) or compute_XY[a|f]");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_program_from_image(ctx, cubin, 0, "sm_90", &p));
    assert_says(ctx, "image is empty: size is 0");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_program_from_image(ctx, cubin, 8, "auto", &p));
    assert_says(ctx, "image arch 'auto' is malformed");
}

static void check_target_without_a_device(void **state)
{
    asyncrt_context *ctx = *state;
    assert_ok(ctx, asyncrt_context_check_target(ctx, NULL));
    assert_ok(ctx, asyncrt_context_check_target(ctx, "auto"));
    assert_ok(ctx, asyncrt_context_check_target(ctx, "compute_80")); /* no device: nothing to refuse */
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_context_check_target(ctx, "sm90"));
    assert_says(ctx, "arch 'sm90' is malformed");
}

static void driver_entry_points(void **state)
{
    asyncrt_context *ctx = *state;
    void *fn = (void *)1;
    assert_ok(ctx, asyncrt_context_driver_proc(ctx, "cuLaunchKernelEx", 11060, &fn));
    assert_non_null(fn);
    assert_status(ctx, ASYNCRT_ERROR_NOT_FOUND, asyncrt_context_driver_proc(ctx, "cuFuncGetParamInfo", 12040, &fn));
    assert_null(fn);
    assert_says(ctx, "the CUDA driver has no entry point cuFuncGetParamInfo at CUDA 12.4's ABI");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_context_driver_proc(ctx, "cuInit", 0, &fn));
    assert_says(ctx, "cuda_version 0 for cuInit: it must be a CUDA version as the driver numbers them");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_context_driver_proc(ctx, "", 12000, &fn));
    assert_says(ctx, "the entry point's name is empty");
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_context_driver_proc(ctx, "cuInit", 2000, NULL));
}

static void op_paths_and_calibration(void **state)
{
    asyncrt_context *ctx = *state;
    const char *names[] = {"auto", "tma", "ldgsts", "plain"};
    for (size_t i = 0; i < 4; i++) {
        asyncrt_op_path p = ASYNCRT_PATH_PLAIN;
        assert_true(asyncrt_op_path_parse(names[i], &p));
        assert_string_equal(asyncrt_op_path_name(p), names[i]);
    }
    asyncrt_op_path p;
    assert_false(asyncrt_op_path_parse("TMA", &p));
    assert_false(asyncrt_op_path_parse("", &p));
    assert_false(asyncrt_op_path_parse(NULL, &p));
    char *path = (char *)1, *text = (char *)1;
    assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_calibrate(ctx, NULL, &path, &text));
    assert_null(path);
    assert_null(text);
    assert_says(ctx, "calibration: no device is open");
    asyncrt_calibrate_options unsized = {0};
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_calibrate(ctx, &unsized, NULL, NULL));
    assert_says(ctx, "asyncrt_calibrate_options.size is 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arch_parse_and_format),
        cmocka_unit_test(nvrtc_targets_and_auto),
        cmocka_unit_test(nvrtc_search),
        cmocka_unit_test_setup_teardown(settings, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(program_from_image, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(check_target_without_a_device, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(driver_entry_points, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(op_paths_and_calibration, test_setup_context, test_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
