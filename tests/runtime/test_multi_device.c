/* Many GPUs in one process, on the fake driver taught several devices
 * (ASYNCRT_LIBCUDA=fake_device_libcuda, FAKE_DEVICES=2) with this machine's
 * NVRTC: a peer context shares its base's cache and libraries, so a program
 * compiled once is one miss and loads on each device (one cuLibraryLoadData,
 * or one cuModuleLoadDataEx per device with $FAKE_NO_LIBRARY); devices of
 * two arches ($FAKE_CC1) compile once each; an ordinal out of range is
 * refused naming it and the count; a built-in op made for device 0 refuses
 * a stream of device 1 (the fake's stream 0x1000 + N is device N's). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/ops.h"
#include "test_support.h"

static int (*module_loads)(void);
static int (*library_loads)(void);

static const char *k_source = "extern \"C\" __global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }\n";

#define assert_says(ctx, words)                                                  \
    do {                                                                         \
        if (!strstr(asyncrt_context_last_error(ctx), (words)))                   \
            fail_msg("message '%s' lacks '%s'", asyncrt_context_last_error(ctx), (words)); \
    } while (0)

static bool mixed(void) { return getenv("FAKE_CC1") && strcmp(getenv("FAKE_CC1"), getenv("FAKE_CC") ? getenv("FAKE_CC") : "90"); }

static void one_miss_and_a_load_per_device(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_context *peer = NULL;
    assert_ok(f->ctx, asyncrt_context_open_device(f->ctx, 0));
    assert_ok(f->ctx, asyncrt_context_create_peer(f->ctx, 1, &peer));
    assert_true(asyncrt_context_shares_cache(f->ctx, peer));
    assert_int_equal(asyncrt_context_device(peer)->ordinal, 1);
    int modules = module_loads(), libraries = library_loads();
    asyncrt_context *ctxs[2] = {f->ctx, peer};
    asyncrt_program *programs[2] = {NULL, NULL};
    asyncrt_module *mods[2] = {NULL, NULL};
    asyncrt_cache_stats first = ASYNCRT_CACHE_STATS_INIT;
    for (int d = 0; d < 2; d++) {
        assert_ok(ctxs[d], asyncrt_program_compile(ctxs[d], "twice.cu", k_source, NULL, &programs[d]));
        if (d == 0) assert_ok(f->ctx, asyncrt_context_cache_stats(f->ctx, &first));
        assert_ok(ctxs[d], asyncrt_module_load(ctxs[d], programs[d], &mods[d]));
        asyncrt_kernel *k;
        assert_ok(ctxs[d], asyncrt_module_get_kernel(mods[d], "twice", &k));
        assert_non_null(asyncrt_kernel_function(k));
    }
    bool no_library = getenv("FAKE_NO_LIBRARY") != NULL;
    asyncrt_cache_stats s0 = ASYNCRT_CACHE_STATS_INIT, s1 = ASYNCRT_CACHE_STATS_INIT;
    assert_ok(f->ctx, asyncrt_context_cache_stats(f->ctx, &s0));
    assert_ok(peer, asyncrt_context_cache_stats(peer, &s1));
    assert_memory_equal(&s0, &s1, sizeof s0); /* one cache, read from either */
    assert_int_equal(first.stores, 1);        /* NVRTC ran once for device 0 */
    if (mixed()) { /* each arch its own image, each compiled once */
        assert_string_not_equal(asyncrt_program_arch(programs[0]), asyncrt_program_arch(programs[1]));
        assert_int_equal(s0.stores, 2);
        assert_true(s0.misses > first.misses);
        assert_int_equal(s0.memory_hits, 0);
    } else { /* device 1's compile is device 0's program, from memory */
        assert_string_equal(asyncrt_program_arch(programs[0]), asyncrt_program_arch(programs[1]));
        assert_int_equal(s0.stores, 1);
        assert_int_equal(s0.misses, first.misses);
        assert_int_equal(s0.memory_hits, first.memory_hits + 1);
    }
    assert_int_equal(s0.module_loads, 2);
    int images = no_library || mixed() ? 2 : 1;
    assert_int_equal(s0.image_loads, images);
    assert_int_equal(module_loads() - modules, 2);
    assert_int_equal(library_loads() - libraries, no_library ? 0 : images);
    /* A second module of the same image on device 0 takes the library again. */
    asyncrt_module *again = NULL;
    assert_ok(f->ctx, asyncrt_module_load(f->ctx, programs[0], &again));
    assert_ok(f->ctx, asyncrt_context_cache_stats(f->ctx, &s0));
    assert_int_equal(s0.image_loads, images + (no_library ? 1 : 0));
    asyncrt_module_destroy(again);
    for (int d = 0; d < 2; d++) {
        asyncrt_module_destroy(mods[d]);
        asyncrt_program_destroy(programs[d]);
    }
    asyncrt_context_destroy(peer);
}

static void base_destroyed_before_its_peer(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_context *base = NULL, *peer = NULL;
    assert_int_equal(asyncrt_context_create(&base), ASYNCRT_SUCCESS);
    assert_ok(base, asyncrt_context_set_cache_dir(base, f->dir));
    assert_ok(base, asyncrt_context_create_peer(base, 1, &peer));
    assert_false(asyncrt_context_shares_cache(f->ctx, peer));
    asyncrt_context_destroy(base); /* the peer keeps the cache */
    asyncrt_program *p = NULL;
    asyncrt_module *m = NULL;
    assert_ok(peer, asyncrt_program_compile(peer, "twice.cu", k_source, NULL, &p));
    assert_ok(peer, asyncrt_module_load(peer, p, &m));
    asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
    assert_ok(peer, asyncrt_context_cache_stats(peer, &s));
    assert_int_equal(s.module_loads, 1);
    asyncrt_module_destroy(m);
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(peer);
}

static void ordinal_out_of_range_is_refused(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_context *peer = (asyncrt_context *)f; /* must come back NULL */
    assert_status(f->ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_context_create_peer(f->ctx, 2, &peer));
    assert_null(peer);
    assert_says(f->ctx, "device 2 does not exist");
    assert_says(f->ctx, "2 devices");
    assert_status(f->ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_context_create_peer(f->ctx, -1, &peer));
    assert_says(f->ctx, "device -1 does not exist");
    assert_int_equal(asyncrt_context_create_peer(NULL, 0, &peer), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_context_create_peer(f->ctx, 0, NULL));
}

static void op_refuses_another_devices_stream(void **state)
{
    test_cache_fixture *f = *state;
    assert_ok(f->ctx, asyncrt_context_open_device(f->ctx, 0));
    asyncrt_map_arg x = {"x", ASYNCRT_F32}, y = {"y", ASYNCRT_F32};
    asyncrt_map_desc desc = ASYNCRT_MAP_DESC_INIT;
    desc.inputs = &x, desc.input_count = 1, desc.outputs = &y, desc.output_count = 1;
    desc.expression = "y = 2 * x;";
    desc.path = ASYNCRT_PATH_PLAIN;
    asyncrt_map *map = NULL;
    assert_ok(f->ctx, asyncrt_map_create(f->ctx, &desc, &map));
    asyncrt_deviceptr in = 0x10000, out = 0x20000;
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                  asyncrt_map_launch(map, 256, &in, &out, NULL, (asyncrt_stream)(uintptr_t)0x1001));
    assert_says(f->ctx, "made for device 0");
    assert_says(f->ctx, "is device 1's");
    /* device 0's own stream passes the check (the fake then refuses to launch anything) */
    assert_status(f->ctx, ASYNCRT_ERROR_LAUNCH,
                  asyncrt_map_launch(map, 256, &in, &out, NULL, (asyncrt_stream)(uintptr_t)0x1000));
    asyncrt_map_destroy(map);
}

int main(void)
{
    const char *lib = getenv("ASYNCRT_LIBCUDA");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        fprintf(stderr, "test_multi_device: set ASYNCRT_LIBCUDA to fake_device_libcuda\n");
        return 1;
    }
    *(void **)&module_loads = dlsym(h, "fake_module_loads");
    *(void **)&library_loads = dlsym(h, "fake_library_loads");
    if (!module_loads || !library_loads) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(one_miss_and_a_load_per_device, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(base_destroyed_before_its_peer, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(ordinal_out_of_range_is_refused, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(op_refuses_another_devices_stream, test_setup_cache_context, test_teardown_cache_context),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    dlclose(h);
    return rc;
}
