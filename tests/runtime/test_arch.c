/* Arch selection against imaginary machines: the choice is a pure function. */
#include <string.h>

#include "arch.h"
#include "target.h"
#include "test_support.h"

static const int k_nvrtc13[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
#define N13 (sizeof k_nvrtc13 / sizeof k_nvrtc13[0])

static void parse_accepts_the_documented_forms(void **state)
{
    (void)state;
    const struct {
        const char *text;
        int number;
        char suffix;
        bool ptx;
    } ok[] = {{"sm_90", 90, 0, false},      {"sm_90a", 90, 'a', false}, {"compute_80", 80, 0, true},
              {"compute_90a", 90, 'a', true}, {"sm_100f", 100, 'f', false}, {"sm_120", 120, 0, false}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        asyncrt__arch a;
        assert_true(asyncrt__arch_parse(ok[i].text, &a));
        assert_int_equal(a.number, ok[i].number);
        assert_int_equal(a.suffix, ok[i].suffix);
        assert_int_equal(a.ptx, ok[i].ptx);
        char back[32];
        asyncrt__arch_format(&a, back, sizeof back);
        assert_string_equal(back, ok[i].text);
    }
    const char *bad[] = {"", "sm", "sm_", "sm_9", "sm_09", "sm_90b", "sm_90aa", "SM_90", "compute",
                         "compute_", "sm_1000", "sm_90 ", "arch=sm_90", "sm_-90", "auto"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        asyncrt__arch a;
        if (asyncrt__arch_parse(bad[i], &a)) fail_msg("'%s' parsed as an arch", bad[i]);
    }
}

/* The version matrix, as a pure function: NVRTC of an older major, the same
 * version, a newer minor and a newer major than the driver (CUDA 13.0), each
 * with the device known to NVRTC (9.0) and unknown (8.5, between its 80 and
 * 86), then the edges. Every row states the sentence's key words. */
static void auto_selection_table(void **state)
{
    (void)state;
    const struct {
        const char *what;
        int cc_major, cc_minor, driver, nvrtc;
        asyncrt_status status;
        const char *arch;
        const char *reason; /* words the explanation must contain */
        const char *also;
    } rows[] = {
        {"older major, known", 9, 0, 13000, 12080, ASYNCRT_SUCCESS, "sm_90", "older major version than the driver (CUDA 13.0), so a CUBIN", "NVRTC 12.8"},
        {"older major, unknown", 8, 5, 13000, 12080, ASYNCRT_SUCCESS, "compute_80", "does not know compute capability 8.5", "not newer than the driver"},
        {"same version, known", 9, 0, 13000, 13000, ASYNCRT_SUCCESS, "sm_90", "of the driver's major version (CUDA 13.0), so a CUBIN", "NVRTC 13.0"},
        {"same version, unknown", 8, 5, 13000, 13000, ASYNCRT_SUCCESS, "compute_80", "so PTX for the newest arch below it", "not newer"},
        {"newer minor, known", 9, 0, 13000, 13050, ASYNCRT_SUCCESS, "sm_90", "NVRTC 13.5 knows compute capability 9.0 and is of the driver's major version (CUDA 13.0), so a CUBIN", "whatever the minor"},
        {"newer minor, unknown", 8, 5, 13000, 13050, ASYNCRT_ERROR_VERSION_MISMATCH, NULL, "NVRTC 13.5 does not know sm_85 (it knows 75 80 86", "install NVRTC 13.0 or older (pip install 'nvidia-cuda-nvrtc==13.0.*'"},
        {"newer major, known", 9, 0, 13000, 14000, ASYNCRT_ERROR_VERSION_MISMATCH, NULL, "NVRTC 14.0 is of a newer major version than the driver (CUDA 13.0)", "install an NVRTC 13.x (pip install 'nvidia-cuda-nvrtc==13.*'"},
        {"newer major, unknown", 8, 5, 13000, 14000, ASYNCRT_ERROR_VERSION_MISMATCH, NULL, "newer major version", "a driver for CUDA 14 or newer"},
        {"CUDA 12 driver, NVRTC 13", 9, 0, 12080, 13000, ASYNCRT_ERROR_VERSION_MISMATCH, NULL, "(CUDA 12.8)", "nvidia-cuda-nvrtc-cu12==12.*"},
        {"A100, newer driver", 8, 0, 13010, 13000, ASYNCRT_SUCCESS, "sm_80", "CUBIN", "driver's major"},
        {"device newer than NVRTC", 12, 5, 13050, 13000, ASYNCRT_SUCCESS, "compute_121", "does not know", "PTX"},
        {"device far newer, older major", 15, 0, 15000, 13000, ASYNCRT_SUCCESS, "compute_121", "does not know", "PTX"},
        {"Volta, older than all", 7, 0, 13000, 13000, ASYNCRT_ERROR_UNSUPPORTED_ARCH, NULL, "older than every", "NVRTC 13.0"},
        {"Pascal", 6, 1, 13000, 13000, ASYNCRT_ERROR_UNSUPPORTED_ARCH, NULL, "75 80 86", "6.1"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        asyncrt__arch a;
        char why[768];
        asyncrt_status s = asyncrt__arch_select_auto(rows[i].cc_major, rows[i].cc_minor, rows[i].driver,
                                                    rows[i].nvrtc, k_nvrtc13, N13, &a, why, sizeof why);
        if (s != rows[i].status) fail_msg("%s: status %s (%s)", rows[i].what, asyncrt_status_string(s), why);
        if (rows[i].arch) {
            char name[32];
            asyncrt__arch_format(&a, name, sizeof name);
            if (strcmp(name, rows[i].arch) != 0) fail_msg("%s: chose %s, expected %s", rows[i].what, name, rows[i].arch);
        }
        if (!strstr(why, rows[i].reason)) fail_msg("%s: explanation '%s' lacks '%s'", rows[i].what, why, rows[i].reason);
        if (!strstr(why, rows[i].also)) fail_msg("%s: explanation '%s' lacks '%s'", rows[i].what, why, rows[i].also);
    }
}

static void explicit_targets_are_checked_against_nvrtc(void **state)
{
    (void)state;
    const struct {
        const char *text;
        asyncrt_status status;
        const char *message;
    } rows[] = {
        {"sm_90", ASYNCRT_SUCCESS, "explicit"},
        {"sm_90a", ASYNCRT_SUCCESS, "explicit"},
        {"compute_80", ASYNCRT_SUCCESS, "explicit"},
        {"sm_91", ASYNCRT_ERROR_UNSUPPORTED_ARCH, "75 80 86 87 88 89 90 100 103 110 120 121"},
        {"sm_70", ASYNCRT_ERROR_UNSUPPORTED_ARCH, "not supported"},
        {"sm_80a", ASYNCRT_ERROR_UNSUPPORTED_ARCH, "start at sm_90a"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        asyncrt__arch a;
        char why[512];
        assert_true(asyncrt__arch_parse(rows[i].text, &a));
        asyncrt_status s = asyncrt__arch_check(&a, k_nvrtc13, N13, why, sizeof why);
        if (s != rows[i].status || !strstr(why, rows[i].message))
            fail_msg("%s: %s '%s'", rows[i].text, asyncrt_status_string(s), why);
    }
}

/* The load rule (asyncrt__arch_check_load) on imaginary machines: every
 * refusal names both versions and what to do, with the ISA versions where
 * known, an older NVRTC found, or what to install. */
static void targets_to_load_follow_the_driver(void **state)
{
    (void)state;
    static const char toolkit[] = "/usr/local/cuda/lib64/libnvrtc.so.13";
    const struct {
        const char *target;
        int cc, driver, nvrtc;
        const char *older; /* an NVRTC found not newer than the driver (13.0) */
        asyncrt_status status;
        const char *words;
    } rows[] = {
        {"compute_80", 90, 13000, 13000, NULL, ASYNCRT_SUCCESS, "the driver (CUDA 13.0) JIT-compiles its PTX"},
        {"compute_80", 90, 13010, 13000, NULL, ASYNCRT_SUCCESS, "NVRTC 13.0 is not newer than it"},
        {"compute_80", 90, 13000, 12080, NULL, ASYNCRT_SUCCESS, "NVRTC 12.8 is not newer"},
        {"sm_90", 90, 13000, 13050, NULL, ASYNCRT_SUCCESS, ""},
        {"compute_80", 90, 0, 13050, NULL, ASYNCRT_SUCCESS, ""}, /* no driver: nothing to hold it to */
        {"compute_80", 90, 13000, 13010, toolkit, ASYNCRT_ERROR_VERSION_MISMATCH,
         "compute_80 cannot be loaded: NVRTC 13.1 is newer than the driver (CUDA 13.0), which JIT-compiles only "
         "PTX from a compiler not newer than itself (NVRTC 13.1 writes PTX ISA 9.1; the driver reads up to 9.0): "
         "build sm_90 instead (a CUBIN for this device, compute capability 9.0; a CUBIN of any NVRTC 13.x loads "
         "on this driver), or use an NVRTC not newer than the driver, "
         "ASYNCRT_NVRTC=/usr/local/cuda/lib64/libnvrtc.so.13 (NVRTC 13.0, found here)"},
        {"compute_80", 90, 13000, 13060, NULL, ASYNCRT_ERROR_VERSION_MISMATCH,
         "than itself (the driver reads PTX ISA up to 9.0): build sm_90"}, /* 13.6: ISA not in the table */
        {"compute_90a", 90, 12080, 12090, NULL, ASYNCRT_ERROR_VERSION_MISMATCH,
         "(NVRTC 12.9 writes PTX ISA 8.8; the driver reads up to 8.7): build sm_90a instead (a CUBIN that runs"},
        {"compute_80", 86, 13000, 13050, NULL, ASYNCRT_ERROR_VERSION_MISMATCH, "build sm_80 instead (a CUBIN that runs"},
        {"compute_80", 85, 13000, 13050, NULL, ASYNCRT_ERROR_VERSION_MISMATCH, "build sm_80 instead"},
        {"compute_86", 85, 13000, 13050, NULL, ASYNCRT_ERROR_VERSION_MISMATCH, /* NVRTC knows no sm_85 */
         "9.0): use an NVRTC not newer than the driver, NVRTC 13.0 or older"},
        {"compute_80", 90, 12080, 13000, NULL, ASYNCRT_ERROR_VERSION_MISMATCH,
         "NVRTC 13.0 is of a newer major version than the driver (CUDA 12.8), which loads neither its CUBINs nor "
         "its PTX: use an NVRTC of the driver's major version, an NVRTC 12.x (pip install "
         "'nvidia-cuda-nvrtc-cu12==12.*', or a CUDA 12 toolkit), named by ASYNCRT_NVRTC"},
        {"sm_90", 90, 12080, 13000, NULL, ASYNCRT_ERROR_VERSION_MISMATCH, "sm_90 cannot be loaded: NVRTC 13.0"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        asyncrt__arch a;
        char why[1024];
        assert_true(asyncrt__arch_parse(rows[i].target, &a));
        asyncrt_load_facts f = {.cc_major = rows[i].cc / 10, .cc_minor = rows[i].cc % 10,
                                .driver_version = rows[i].driver, .nvrtc_version = rows[i].nvrtc,
                                .supported = k_nvrtc13, .count = N13, .older_nvrtc = rows[i].older,
                                .older_version = rows[i].older ? 13000 : 0};
        asyncrt_status s = asyncrt__arch_check_load(&a, &f, why, sizeof why);
        if (s != rows[i].status || !strstr(why, rows[i].words) || (!*rows[i].words && *why))
            fail_msg("row %zu, %s: %s '%s'", i, rows[i].target, asyncrt_status_string(s), why);
    }
}

static void real_nvrtc_lists_what_we_target(void **state)
{
    (void)state;
    int archs[64];
    size_t n = asyncrt__nvrtc_supported_archs(archs, 64);
    assert_true(n > 0);
    for (size_t i = 1; i < n; i++) assert_true(archs[i] > archs[i - 1]);
    assert_true(asyncrt_nvrtc_version() >= 12000);
}

static void resolve_reports_malformed_and_deviceless_auto(void **state)
{
    (void)state;
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    asyncrt__arch a;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt__arch_resolve(ctx, "sm90", &a));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "'sm90' is malformed"));
    assert_status(ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt__arch_resolve(ctx, "auto", &a));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "name a target"));
    assert_status(ctx, ASYNCRT_ERROR_UNSUPPORTED_ARCH, asyncrt__arch_resolve(ctx, "sm_12", &a));
    assert_ok(ctx, asyncrt__arch_resolve(ctx, "sm_90a", &a));
    asyncrt_context_destroy(ctx);
}

static void features_follow_compute_capability(void **state)
{
    (void)state;
    asyncrt_features f = asyncrt_features_from_cc(7, 5, false);
    assert_false(f.ldgsts || f.mbarrier || f.tma || f.clusters || f.sm90a);
    f = asyncrt_features_from_cc(8, 6, false);
    assert_true(f.ldgsts && f.mbarrier);
    assert_false(f.mbarrier_tx || f.bulk_copy || f.tma || f.clusters);
    f = asyncrt_features_from_cc(9, 0, true);
    assert_true(f.ldgsts && f.mbarrier_tx && f.bulk_copy && f.tma && f.clusters && f.sm90a);
    assert_false(f.sm100a);
    f = asyncrt_features_from_cc(9, 0, false);
    assert_false(f.clusters);
    f = asyncrt_features_from_cc(10, 0, true);
    assert_true(f.tma && f.sm100a);
    assert_false(f.sm90a);
    f = asyncrt_features_from_cc(12, 0, true);
    assert_true(f.tma);
    assert_false(f.sm90a || f.sm100a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_accepts_the_documented_forms),
        cmocka_unit_test(auto_selection_table),
        cmocka_unit_test(explicit_targets_are_checked_against_nvrtc),
        cmocka_unit_test(targets_to_load_follow_the_driver),
        cmocka_unit_test(real_nvrtc_lists_what_we_target),
        cmocka_unit_test(resolve_reports_malformed_and_deviceless_auto),
        cmocka_unit_test(features_follow_compute_capability),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
