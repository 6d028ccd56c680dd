/* The writers, fed with a fake report: the JSON is well-formed (checked by a
 * small JSON parser here) and complete, and the text table shows the same. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#include "output.h"

/* ---- a minimal JSON syntax checker (RFC 8259 grammar, no semantics) ---- */

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static const char *value(const char *p, int depth);

static const char *string(const char *p)
{
    if (*p++ != '"') return NULL;
    while (*p != '"') {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p++ == '\\') {
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i])) return NULL;
                p += 5;
            } else if (*p && strchr("\"\\/bfnrt", *p)) {
                p++;
            } else {
                return NULL;
            }
        }
    }
    return p + 1;
}

static const char *number(const char *p)
{
    if (*p == '-') p++;
    if (*p == '0')
        p++;
    else if (isdigit((unsigned char)*p))
        while (isdigit((unsigned char)*p)) p++;
    else
        return NULL;
    if (*p == '.') {
        if (!isdigit((unsigned char)*++p)) return NULL;
        while (isdigit((unsigned char)*p)) p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return NULL;
        while (isdigit((unsigned char)*p)) p++;
    }
    return p;
}

/* object or array: members separated by commas, no trailing comma */
static const char *compound(const char *p, int depth, char close, bool keys)
{
    p = ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
        if (keys) {
            if (!(p = string(p))) return NULL;
            p = ws(p);
            if (*p++ != ':') return NULL;
        }
        if (!(p = value(p, depth + 1))) return NULL;
        p = ws(p);
        if (*p == close) return p + 1;
        if (*p++ != ',') return NULL;
        p = ws(p);
    }
}

static const char *value(const char *p, int depth)
{
    if (depth > 64) return NULL;
    p = ws(p);
    switch (*p) {
    case '{': return compound(p, depth, '}', true);
    case '[': return compound(p, depth, ']', false);
    case '"': return string(p);
    case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
    case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
    case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
    default: return number(p);
    }
}

static bool json_valid(const char *text)
{
    const char *end = value(text, 0);
    return end && *ws(end) == '\0';
}

/* ---- the fake report ---------------------------------------------------- */

static char *render(const probe_report *r, void (*write)(FILE *, const probe_report *))
{
    FILE *f = tmpfile();
    assert_non_null(f);
    write(f, r);
    long size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    return text;
}

static void fake_device(probe_device_report *d, int ordinal, int major, int minor)
{
    memset(d, 0, sizeof *d);
    asyncrt_device_info *i = &d->info;
    i->ordinal = ordinal;
    snprintf(i->name, sizeof i->name, "Fake \"GPU\" %d\\x", ordinal); /* quotes and a backslash to escape */
    snprintf(i->uuid, sizeof i->uuid, "GPU-00000000-0000-0000-0000-00000000000%d", ordinal);
    i->cc_major = major;
    i->cc_minor = minor;
    i->sm_count = 132;
    i->total_memory_bytes = (size_t)80 << 30;
    i->shared_memory_per_block = 48 << 10;
    i->shared_memory_per_block_optin = 227 << 10;
    i->shared_memory_per_sm = 228 << 10;
    i->registers_per_block = i->registers_per_sm = 65536;
    i->l2_cache_bytes = 50 << 20;
    i->memory_clock_khz = 2619000;
    i->memory_bus_width_bits = 5120;
    i->max_threads_per_block = 1024;
    i->max_threads_per_sm = 2048;
    i->warp_size = 32;
    i->cluster_launch = major >= 9;
    i->driver_version = 13000;
    i->nvrtc_version = 13000;
    bool expected[PROBE_FEATURE_COUNT];
    probe_features_expected(major, minor, i->cluster_launch, expected);
    for (int f = 0; f < PROBE_FEATURE_COUNT; f++)
        d->features[f].status = expected[f] ? PROBE_STATUS_VERIFIED : PROBE_STATUS_NO;
}

static probe_arch_matrix matrix;

static void fake_report(probe_report *r, probe_device_report devices[2])
{
    fake_device(&devices[0], 0, 9, 0);
    fake_device(&devices[1], 1, 8, 0);
    /* a failure whose reason needs escaping */
    devices[0].features[PROBE_TMA_IM2COL].status = PROBE_STATUS_FAILED;
    snprintf(devices[0].features[PROBE_TMA_IM2COL].reason, sizeof devices[0].features[0].reason,
             "1 of 128 words wrong: \"got\"\n\tnext line");
    devices[1].features[PROBE_LDGSTS].status = PROBE_STATUS_NOT_VERIFIED;
    probe_bench *b = &devices[0].bench;
    b->ran = true;
    b->bytes = 256 << 20;
    b->runs = 9;
    b->d2d_gbs = 2800.5;
    for (int p = 0; p < PROBE_BENCH_PATH_COUNT; p++) b->paths[p] = (probe_bench_result){true, 2500.0 + p, 89.3, ""};
    snprintf(devices[1].bench.paths[PROBE_BENCH_LDGSTS].error, sizeof b->paths[0].error, "run: it broke");
    devices[1].bench.ran = true;
    memset(&matrix, 0, sizeof matrix);
    matrix.arch_count = 2;
    strcpy(matrix.archs[0], "sm_80");
    strcpy(matrix.archs[1], "sm_90");
    matrix.compiles[PROBE_LDGSTS][0] = matrix.compiles[PROBE_LDGSTS][1] = matrix.compiles[PROBE_TMA_TILE][1] = true;
    snprintf(devices[0].auto_target, sizeof devices[0].auto_target, "sm_90");
    snprintf(devices[0].auto_rule, sizeof devices[0].auto_rule, "sm_90: NVRTC 13.1 knows \"9.0\"");
    snprintf(devices[1].auto_rule, sizeof devices[1].auto_rule, "NVRTC 14.0 is newer");
    static asyncrt_nvrtc_candidate found[2];
    found[0] = (asyncrt_nvrtc_candidate){sizeof found[0], "/venv/nvidia/cu13/lib/libnvrtc.so.13", "13.1.115",
                                         "a wheel in $VIRTUAL_ENV", "its wheel's dist-info"};
    found[1] = (asyncrt_nvrtc_candidate){sizeof found[1], "libnvrtc.so.12", "12 (minor unknown)",
                                         "the dynamic loader", ""};
    *r = (probe_report){.nvrtc_version = 13000, .checked = true, .benched = true, .device_count = 2,
                        .devices = devices, .arch_matrix = &matrix, .nvrtc_path = found[0].path,
                        .nvrtc_why = "the version this build prefers", .compact_images = true,
                        .compact_why = "compact images on: nvPTXCompiler 13.1.115 (/x)", .nvrtc_candidates = found,
                        .nvrtc_candidate_count = 2, .nvrtc_chosen = 0};
}

static void assert_contains(const char *text, const char *needle)
{
    if (!strstr(text, needle)) fail_msg("output lacks %s:\n%s", needle, text);
}

static void test_checker_rejects_bad_json(void **state)
{
    (void)state;
    /* the checker itself must be able to fail */
    assert_true(json_valid("{\"a\": [1, -2.5e3, true, null, \"x\\n\"]}"));
    assert_false(json_valid("{\"a\": [1, 2,]}"));
    assert_false(json_valid("{\"a\" 1}"));
    assert_false(json_valid("{\"a\": \"line\nbreak\"}"));
    assert_false(json_valid("{\"a\": 1} x"));
    assert_false(json_valid("{\"a\": nan}"));
    assert_false(json_valid("[01]"));
}

static void test_json_is_well_formed_and_complete(void **state)
{
    (void)state;
    probe_device_report devices[2];
    probe_report r;
    fake_report(&r, devices);
    char *json = render(&r, probe_write_json);
    if (!json_valid(json)) fail_msg("not valid JSON:\n%s", json);
    static const char *const keys[] = {
        "\"schema\": \"asyncrt-probe/1\"", "\"asyncrt_version\"", "\"nvrtc_version\": 13000", "\"checked\": true",
        "\"benched\": true", "\"devices\"", "\"ordinal\": 1", "\"name\": \"Fake \\\"GPU\\\" 0\\\\x\"", "\"uuid\"",
        "\"compute_capability\": {\"major\": 9, \"minor\": 0}", "\"sm_count\": 132", "\"total_memory_bytes\"",
        "\"shared_memory_per_block_bytes\": 49152", "\"shared_memory_per_block_optin_bytes\"",
        "\"shared_memory_per_sm_bytes\"", "\"registers_per_block\"", "\"registers_per_sm\"", "\"l2_cache_bytes\"",
        "\"memory_clock_khz\"", "\"memory_bus_width_bits\"", "\"peak_bandwidth_gbs\"", "\"max_threads_per_block\"",
        "\"max_threads_per_sm\"", "\"warp_size\"", "\"cluster_launch\": true", "\"cluster_launch\": false",
        "\"driver_version\": 13000", "\"features\"", "\"status\": \"verified\"", "\"status\": \"no\"",
        "\"status\": \"not_verified\"", "\"status\": \"failed\", \"reason\": \"1 of 128 words wrong: \\\"got\\\"\\n\\u0009next line\"",
        "\"bench\"", "\"d2d_gbs\": 2800.50", "\"percent_of_d2d\": 89.30", "\"error\": \"run: it broke\"",
        "\"arch_matrix\"", "\"archs\": [\"sm_80\", \"sm_90\"]", "\"ldgsts\": {\"sm_80\": true, \"sm_90\": true}",
        "\"tma_tile\": {\"sm_80\": false, \"sm_90\": true}",
        "\"auto_target\": \"sm_90\"", "\"auto_rule\": \"sm_90: NVRTC 13.1 knows \\\"9.0\\\"\"",
        "\"auto_target\": null", "\"auto_rule\": \"NVRTC 14.0 is newer\"",
        "\"nvrtc_choice\": \"the version this build prefers\"", "\"compact_images\": true",
        "\"compact_images_why\": \"compact images on: nvPTXCompiler 13.1.115 (/x)\"",
        "{\"path\": \"/venv/nvidia/cu13/lib/libnvrtc.so.13\", \"version\": \"13.1.115\", \"found_by\": \"a wheel in "
        "$VIRTUAL_ENV\", \"version_from\": \"its wheel's dist-info\", \"chosen\": true}",
        "{\"path\": \"libnvrtc.so.12\", \"version\": \"12 (minor unknown)\", \"found_by\": \"the dynamic loader\", "
        "\"version_from\": null, \"chosen\": false}",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) assert_contains(json, keys[i]);
    for (int f = 0; f < PROBE_FEATURE_COUNT; f++) {
        char key[64];
        snprintf(key, sizeof key, "\"%s\": {\"label\"", probe_feature_get(f)->key);
        assert_contains(json, key);
        snprintf(key, sizeof key, "\"needs\": \"%s\"", probe_feature_get(f)->needs);
        assert_contains(json, key);
    }
    for (int p = 0; p < PROBE_BENCH_PATH_COUNT; p++) {
        char key[32];
        snprintf(key, sizeof key, "\"%s\": ", probe_bench_path_key(p));
        assert_contains(json, key);
    }
    free(json);

    /* without devices, bench or matrix: still one valid document */
    probe_report empty = {.nvrtc_version = 13000};
    json = render(&empty, probe_write_json);
    if (!json_valid(json)) fail_msg("not valid JSON:\n%s", json);
    assert_contains(json, "\"devices\": [\n  ]");
    assert_contains(json, "\"arch_matrix\": null");
    assert_contains(json, "\"nvrtc_candidates\": []");
    free(json);
}

static void test_text_shows_the_same(void **state)
{
    (void)state;
    probe_device_report devices[2];
    probe_report r;
    fake_report(&r, devices);
    char *text = render(&r, probe_write_text);
    static const char *const needles[] = {
        "Fake \"GPU\" 0", "Fake \"GPU\" 1", "9.0 (sm_90)", "8.0 (sm_80)", "yes (verified)", "yes (not verified)",
        "FAILED: 1 of 128 words wrong", "LDGSTS (cp.async) [sm_80]", "sm_90a (wgmma) [sm_90a]", "2800 GB/s",
        "89% of D2D", "run: it broke", "compiles for", "sm_80  sm_90",
        "NVRTC: /venv/nvidia/cu13/lib/libnvrtc.so.13 (the version this build prefers)",
        "compact images on: nvPTXCompiler 13.1.115 (/x)",
        "  * 13.1.115 /venv/nvidia/cu13/lib/libnvrtc.so.13 (a wheel in $VIRTUAL_ENV; version from its wheel's dist-info)",
        "    12 (minor unknown) libnvrtc.so.12 (the dynamic loader)",
        "arch auto on device 0: sm_90: NVRTC 13.1 knows \"9.0\"", "arch auto on device 1: NVRTC 14.0 is newer",
    };
    for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++) assert_contains(text, needles[i]);
    /* devices are columns: both names on the one "name" row */
    const char *row = strstr(text, "\nname ");
    assert_non_null(row);
    const char *end = strchr(row + 1, '\n');
    const char *second = strstr(row, "Fake \"GPU\" 1");
    assert_true(second && second < end);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checker_rejects_bad_json),
        cmocka_unit_test(test_json_is_well_formed_and_complete),
        cmocka_unit_test(test_text_shows_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
