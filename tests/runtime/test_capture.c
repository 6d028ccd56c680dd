/* CUDA graphs without surprises (issue 36 part 2), on the fake driver
 * (fake_device_libcuda: stream capture as the real driver does it, a load
 * during a capture invalidates it, functions load lazily). What would load a
 * module while a stream captures is refused with ASYNCRT_ERROR_CAPTURE,
 * naming the kernel and how to load it first, and the capture stays valid;
 * asyncrt_module_make_resident loads every function eagerly. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/asyncrt.h"
#include "test_support.h"

#define assert_says(ctx, words)                                                               \
    do {                                                                                      \
        if (!strstr(asyncrt_context_last_error(ctx), (words)))                                \
            fail_msg("message '%s' lacks '%s'", asyncrt_context_last_error(ctx), (words));    \
    } while (0)

/* The fake driver's own view, through dlsym (it is the process's libcuda). */
static int fake_int(const char *name)
{
    void *lib = dlopen(getenv("ASYNCRT_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib);
    int (*fn)(void) = (int (*)(void))dlsym(lib, name);
    assert_non_null(fn);
    int v = fn();
    dlclose(lib);
    return v;
}
#define CAPTURING 1

typedef struct fixture {
    asyncrt_context *ctx;
    asyncrt_stream stream;
    asyncrt_module *module;
    asyncrt_kernel *kernel;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || asyncrt_context_create(&f->ctx) != ASYNCRT_SUCCESS) return -1;
    if (asyncrt_context_open_device(f->ctx, 0) != ASYNCRT_SUCCESS) return -1;
    if (asyncrt_stream_create(f->ctx, &f->stream) != ASYNCRT_SUCCESS) return -1;
    static const unsigned char cubin[] = "\x7f" "ELF\x02\x01\x01 a fake cubin";
    asyncrt_program *p = NULL;
    if (asyncrt_program_from_image(f->ctx, cubin, sizeof cubin, "sm_90", &p) != ASYNCRT_SUCCESS) return -1;
    asyncrt_status s = asyncrt_module_load(f->ctx, p, &f->module);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_module_get_kernel(f->module, "scale", &f->kernel);
    /* what a capture will be asked to load */
    asyncrt_program_destroy(p);
    *state = f;
    unsetenv("FAKE_LOADING");
    return s == ASYNCRT_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    asyncrt_module_destroy(f->module);
    asyncrt_stream_destroy(f->ctx, f->stream);
    asyncrt_context_destroy(f->ctx);
    free(f);
    unsetenv("FAKE_LOADING");
    return 0;
}

/* Ends the capture: it must still be valid, and gives a graph. */
static void end_valid(fixture *f)
{
    asyncrt_graph *graph = NULL;
    assert_int_equal(fake_int("fake_capture_state"), CAPTURING);
    assert_ok(f->ctx, asyncrt_stream_capture_end(f->ctx, f->stream, &graph));
    assert_non_null(graph);
    assert_ok(f->ctx, asyncrt_graph_launch(graph, f->stream));
    asyncrt_graph_destroy(graph);
}

static asyncrt_status launch(fixture *f, bool pdl)
{
    asyncrt_launch_config c = ASYNCRT_LAUNCH_CONFIG_INIT;
    c.grid[0] = 4, c.block[0] = 128, c.stream = f->stream, c.programmatic_serialization = pdl;
    return asyncrt_kernel_launch(f->kernel, &c, NULL, NULL, 0);
}

static void load_during_capture_is_refused_and_the_capture_survives(void **state)
{
    fixture *f = *state;
    static const unsigned char cubin[] = "\x7f" "ELF\x02\x01\x01 another fake cubin";
    asyncrt_program *p = NULL;
    assert_ok(f->ctx, asyncrt_program_from_image(f->ctx, cubin, sizeof cubin, "sm_90", &p));
    int loads = fake_int("fake_module_loads");
    assert_ok(f->ctx, asyncrt_stream_capture_begin(f->ctx, f->stream));
    bool capturing = false;
    assert_ok(f->ctx, asyncrt_stream_capturing(f->ctx, f->stream, &capturing));
    assert_true(capturing);
    asyncrt_module *m = (asyncrt_module *)1;
    assert_status(f->ctx, ASYNCRT_ERROR_CAPTURE, asyncrt_module_load(f->ctx, p, &m));
    assert_null(m);
    assert_says(f->ctx, "loading module 'image' refused: stream");
    assert_says(f->ctx, "is capturing a CUDA graph");
    assert_says(f->ctx, "asyncrt_module_make_resident");
    assert_says(f->ctx, "the capture is still valid");
    assert_int_equal(fake_int("fake_module_loads"), loads); /* the driver was never asked */
    end_valid(f);
    /* after the capture the same load goes through */
    assert_ok(f->ctx, asyncrt_module_load(f->ctx, p, &m));
    asyncrt_module_destroy(m);
    asyncrt_program_destroy(p);
}

static void build_during_capture_is_refused_before_compiling(void **state)
{
    fixture *f = *state;
    assert_ok(f->ctx, asyncrt_stream_capture_begin(f->ctx, f->stream));
    asyncrt_module *m = NULL;
    /* a cold compile would take seconds, then break the capture at the load */
    assert_status(f->ctx, ASYNCRT_ERROR_CAPTURE,
                  asyncrt_module_build(f->ctx, "cold_kernel.cu", "extern \"C\" __global__ void k() {}", NULL, &m));
    assert_says(f->ctx, "building module 'cold_kernel.cu' refused");
    assert_null(m);
    end_valid(f);
}

static void lazy_kernel_launch_during_capture_is_refused(void **state)
{
    fixture *f = *state;
    assert_ok(f->ctx, asyncrt_stream_capture_begin(f->ctx, f->stream));
    assert_status(f->ctx, ASYNCRT_ERROR_CAPTURE, launch(f, false));
    assert_says(f->ctx, "launch of 'scale' refused");
    assert_says(f->ctx, "not loaded on device 0 yet");
    assert_says(f->ctx, "asyncrt_module_make_resident");
    end_valid(f);
}

static void make_resident_loads_eagerly_then_launches_are_captured(void **state)
{
    fixture *f = *state;
    int before = fake_int("fake_function_loads");
    assert_ok(f->ctx, asyncrt_module_make_resident(f->module));
    assert_int_equal(fake_int("fake_function_loads"), before + 2); /* both of the module's functions */
    assert_ok(f->ctx, asyncrt_stream_capture_begin(f->ctx, f->stream));
    assert_ok(f->ctx, launch(f, false));
    assert_ok(f->ctx, launch(f, true)); /* a PDL pair: the second overlaps the first */
    unsigned grid[3], block[3], shared, attrs;
    void *lib = dlopen(getenv("ASYNCRT_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
    int (*last)(unsigned *, unsigned *, unsigned *, unsigned *) =
        (int (*)(unsigned *, unsigned *, unsigned *, unsigned *))dlsym(lib, "fake_last_launch");
    assert_non_null(last);
    last(grid, block, &shared, &attrs);
    dlclose(lib);
    assert_int_equal(attrs, 1); /* the PDL attribute reached the captured launch */
    /* and making resident during a capture is a load too */
    assert_status(f->ctx, ASYNCRT_ERROR_CAPTURE, asyncrt_module_make_resident(f->module));
    end_valid(f);
}

static void eager_loading_needs_nothing_first(void **state)
{
    fixture *f = *state;
    setenv("FAKE_LOADING", "eager", 1);
    assert_ok(f->ctx, asyncrt_stream_capture_begin(f->ctx, f->stream));
    assert_ok(f->ctx, launch(f, false));
    end_valid(f);
}

static void the_default_stream_cannot_be_captured(void **state)
{
    fixture *f = *state;
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_stream_capture_begin(f->ctx, NULL));
    assert_says(f->ctx, "the default (NULL) stream cannot be captured");
    assert_string_equal(asyncrt_status_string(ASYNCRT_ERROR_CAPTURE), "ASYNCRT_ERROR_CAPTURE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(load_during_capture_is_refused_and_the_capture_survives, setup, teardown),
        cmocka_unit_test_setup_teardown(build_during_capture_is_refused_before_compiling, setup, teardown),
        cmocka_unit_test_setup_teardown(lazy_kernel_launch_during_capture_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(make_resident_loads_eagerly_then_launches_are_captured, setup, teardown),
        cmocka_unit_test_setup_teardown(eager_loading_needs_nothing_first, setup, teardown),
        cmocka_unit_test_setup_teardown(the_default_stream_cannot_be_captured, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
