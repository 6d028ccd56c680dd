/* asyncrt_link_* (issue 27) on the CPU: programs of two files, device
 * variables across files, undefined and duplicate symbols, libraries and
 * fatbins built by nvcc (skipped where there is none), a PTX file, the cache, mixed
 * arches, and the layout of a linked image (tests/parity's ELF reader): the
 * extern __shared__ __align__(128) buffer of main.cu must start 128 bytes
 * aligned through an LTO link, as in the single-file image. */
#define _GNU_SOURCE /* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cubin_elf.h"
#include "link_input.h"
#include "link_jit.h"
#include "link_support.h"

#define ARCH "sm_90"

static void kernel_facts(const asyncrt_program *p, const char *name, asyncrt_cubin_kernel *out)
{
    size_t size = 0;
    const void *image = asyncrt_program_image(p, &size);
    asyncrt_cubin_kernel k[16];
    char why[256];
    int n = asyncrt__cubin_kernels(image, size, k, 16, why, sizeof why);
    if (n < 0) fail_msg("linked image unreadable: %s", why);
    for (int i = 0; i < n && i < 16; i++)
        if (!strcmp(k[i].name, name)) {
            *out = k[i];
            return;
        }
    fail_msg("no kernel %s in the linked image", name);
}

/* A context with no cache that links in the worker ASYNCRT_COMPILE_WORKER
 * names, or in this process ("0"). */
static asyncrt_context *cacheless_context(const char *worker)
{
    setenv("ASYNCRT_COMPILE_WORKER", worker, 1);
    asyncrt_context *ctx;
    assert_ok(NULL, asyncrt_context_create(&ctx));
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, NULL));
    return ctx;
}

/* An extern __device__ function and a __device__ variable of util.cu, used by main.cu. */
static void two_files(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_program *main_p = link_test_compile(f->ctx, "main.cu", ARCH, "-rdc=true");
    asyncrt_program *util_p = link_test_compile(f->ctx, "util.cu", ARCH, "-rdc=true");
    asyncrt_program *linked = NULL;
    assert_ok(f->ctx, link_test_programs(f->ctx, ARCH, NULL, &linked, main_p, util_p, NULL));
    assert_string_equal(asyncrt_program_arch(linked), ARCH);
    assert_false(asyncrt_program_is_ptx(linked));
    assert_int_equal(asyncrt_program_origin_of(linked), ASYNCRT_ORIGIN_COMPILED);
    asyncrt_cubin_kernel k;
    kernel_facts(linked, "stage", &k);
    /* Relocatable code from NVRTC 13.0, or linked by nvJitLink 13.0, keeps no
     * __align__ of an extern __shared__ array (nvcc -dc with nvlink alike):
     * the log says so and names it. NVRTC and nvJitLink 13.1 keep it. */
    bool kept = asyncrt__jitlink_keeps_extern_shared_align(asyncrt_nvrtc_version());
    assert_int_equal(k.shared_align, kept ? 128 : 16);
    assert_int_equal(strstr(asyncrt_program_log(linked), "extern __shared__ smem (main.cu)") == NULL, kept);
    print_message("without LTO: static shared %llu, aligned %llu\n", (unsigned long long)k.shared_size,
                  (unsigned long long)k.shared_align);
    asyncrt_program_destroy(linked);
    asyncrt_program_destroy(main_p);
    asyncrt_program_destroy(util_p);
}

/* -dlto and -lto: the layout of the single-file image, 128-byte alignment included. */
static void lto_keeps_layout(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_program *main_p = link_test_compile(f->ctx, "main.cu", ARCH, "-dlto");
    asyncrt_program *util_p = link_test_compile(f->ctx, "util.cu", ARCH, "-dlto");
    size_t main_size;
    const void *main_image = asyncrt_program_image(main_p, &main_size);
    assert_int_equal(asyncrt__link_sniff(main_image, main_size), ASYNCRT_JIT_LTOIR);
    asyncrt_program *linked = NULL;
    assert_ok(f->ctx, link_test_programs(f->ctx, ARCH, "-lto", &linked, main_p, util_p, NULL));
    assert_null(strstr(asyncrt_program_log(linked), "extern __shared__"));
    char *both = link_test_single_source();
    asyncrt_compile_options o = {.size = sizeof o, .arch = ARCH};
    asyncrt_program *single = NULL;
    assert_ok(f->ctx, asyncrt_program_compile(f->ctx, "single.cu", both, &o, &single));
    asyncrt_cubin_kernel k;
    kernel_facts(linked, "stage", &k);
    assert_int_equal(k.shared_align, 128);
    size_t a_size, b_size;
    const void *a = asyncrt_program_image(linked, &a_size), *b = asyncrt_program_image(single, &b_size);
    char report[4096];
    int differences = asyncrt__cubin_compare(a, a_size, b, b_size, ASYNCRT_CUBIN_LAYOUT, report, sizeof report);
    if (differences != 0) fail_msg("LTO link vs single file: %d differences:\n%s", differences, report);
    /* and the same resources: the call across files is inlined */
    differences = asyncrt__cubin_compare(a, a_size, b, b_size, ASYNCRT_CUBIN_RESOURCES, report, sizeof report);
    print_message("LTO vs single file, registers and stack: %d differences %s\n", differences, report);
    free(both);
    asyncrt_program_destroy(single);
    asyncrt_program_destroy(linked);
    asyncrt_program_destroy(main_p);
    asyncrt_program_destroy(util_p);
}

static void undefined_symbol(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_program *main_p = link_test_compile(f->ctx, "main.cu", ARCH, "-rdc=true");
    asyncrt_program *linked = (asyncrt_program *)1;
    assert_status(f->ctx, ASYNCRT_ERROR_COMPILE, link_test_programs(f->ctx, ARCH, NULL, &linked, main_p, NULL));
    assert_null(linked);
    const char *msg = asyncrt_context_last_error(f->ctx);
    print_message("%s\n", msg);
    assert_non_null(strstr(msg, "Undefined reference to '_Z5twicef' in 'main.cu'"));
    assert_non_null(strstr(msg, "Undefined reference to 'bias'"));
    asyncrt_program_destroy(main_p);
}

static void duplicate_symbol(void **state)
{
    test_cache_fixture *f = *state;
    const char *modes[] = {"-rdc=true", "-dlto"};
    for (size_t m = 0; m < 2; m++) {
        asyncrt_program *main_p = link_test_compile(f->ctx, "main.cu", ARCH, modes[m]);
        asyncrt_program *util_p = link_test_compile(f->ctx, "util.cu", ARCH, modes[m]);
        asyncrt_program *dup_p = link_test_compile(f->ctx, "util_dup.cu", ARCH, modes[m]);
        asyncrt_program *linked = NULL;
        assert_status(f->ctx, ASYNCRT_ERROR_COMPILE,
                      link_test_programs(f->ctx, ARCH, m ? "-lto" : NULL, &linked, main_p, util_p, dup_p, NULL));
        const char *msg = asyncrt_context_last_error(f->ctx);
        print_message("%s: %s\n", modes[m], msg);
        /* nvJitLink 13.0 itself links two CUBINs that define one symbol (it only prints it): asyncrt refuses */
        assert_non_null(strstr(msg, m ? "Linking globals named '_Z5twicef': symbol multiply defined"
                                      : "duplicate symbol '_Z5twicef', defined in util.cu and in util_dup.cu"));
        asyncrt_program_destroy(main_p);
        asyncrt_program_destroy(util_p);
        asyncrt_program_destroy(dup_p);
    }
}

static const char *nvcc_path(void)
{
    struct stat st;
    return ASYNCRT_TEST_NVCC[0] && stat(ASYNCRT_TEST_NVCC, &st) == 0 ? ASYNCRT_TEST_NVCC : NULL;
}

static void run(const char *cmd)
{
    if (system(cmd) != 0) fail_msg("failed: %s", cmd);
}

/* util.cu as nvcc builds device libraries: a host library (.a) of -rdc
 * objects, a fatbin, and an LTO fatbin. */
static void nvcc_libraries(void **state)
{
    test_cache_fixture *f = *state;
    const char *nvcc = nvcc_path();
    if (!nvcc) {
        print_message("no nvcc here: nvcc-built libraries not tested\n");
        return;
    }
    char *src = NULL, *cmd = NULL;
    assert_true(asprintf(&src, "%s/tests/link/kernels/util.cu", getenv("ASYNCRT_TEST_SOURCE_DIR")) > 0);
    assert_true(asprintf(&cmd, "cd '%s' && '%s' -arch=" ARCH " -rdc=true -c '%s' -o util.o && ar rcs libutil.a util.o && "
                         "'%s' -arch=" ARCH " -rdc=true -fatbin '%s' -o util.fatbin && "
                         "'%s' -arch=" ARCH " -dlto -rdc=true -fatbin '%s' -o util_lto.fatbin && "
                         "'%s' -arch=sm_80 -rdc=true -cubin '%s' -o util80.cubin",
                         f->dir, nvcc, src, nvcc, src, nvcc, src, nvcc, src) > 0);
    run(cmd);
    static const char *const files[] = {"libutil.a", "util.fatbin", "util.o", "util_lto.fatbin"};
    for (size_t i = 0; i < 4; i++) {
        bool lto = strstr(files[i], "lto") != NULL;
        asyncrt_program *main_p = link_test_compile(f->ctx, "main.cu", ARCH, lto ? "-dlto" : "-rdc=true");
        asyncrt_link *link;
        assert_ok(f->ctx, asyncrt_link_create(f->ctx, ARCH, &link));
        assert_ok(f->ctx, asyncrt_link_add_program(link, main_p));
        char *path = NULL;
        assert_true(asprintf(&path, "%s/%s", f->dir, files[i]) > 0);
        assert_ok(f->ctx, asyncrt_link_add_file(link, path, ASYNCRT_LINK_ANY));
        if (lto) assert_ok(f->ctx, asyncrt_link_add_option(link, "-lto"));
        asyncrt_program *linked = NULL;
        assert_ok(f->ctx, asyncrt_link_complete(link, &linked));
        asyncrt_cubin_kernel k;
        kernel_facts(linked, "stage", &k);
        if (lto) assert_int_equal(k.shared_align, 128);
        asyncrt_program_destroy(linked);
        asyncrt_link_destroy(link);
        asyncrt_program_destroy(main_p);
        free(path);
    }
    /* a CUBIN for another arch, named */
    asyncrt_link *link;
    assert_ok(f->ctx, asyncrt_link_create(f->ctx, ARCH, &link));
    char *path = NULL;
    assert_true(asprintf(&path, "%s/util80.cubin", f->dir) > 0);
    assert_status(f->ctx, ASYNCRT_ERROR_UNSUPPORTED_ARCH, asyncrt_link_add_file(link, path, ASYNCRT_LINK_ANY));
    assert_non_null(strstr(asyncrt_context_last_error(f->ctx), "util80.cubin (CUBIN) is built for sm_80, this link for sm_90"));
    asyncrt_link_destroy(link);
    free(path);
    free(src);
    free(cmd);
}

/* A PTX file as asyncrt-run --emit-ptx writes it (no NUL at its end), first
 * of the inputs, linked in the worker and in this process: nvJitLink reads
 * PTX's size + 1 bytes, so each PTX input needs a NUL after its bytes (an
 * exact-size buffer from the file was a heap-buffer-overflow READ of
 * size + 1 in nvJitLinkAddData under ASan, in this process; in the worker,
 * the byte after was the next input's, issue 33). */
static void ptx_file_links(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_program *util_p = link_test_compile(f->ctx, "util.cu", "compute_90", "-rdc=true");
    size_t size = 0;
    const char *ptx = asyncrt_program_image(util_p, &size);
    assert_true(asyncrt_program_is_ptx(util_p));
    if (size && ptx[size - 1] == '\0') size--; /* the file holds the text only */
    char *path = NULL;
    assert_true(asprintf(&path, "%s/util.ptx", f->dir) > 0);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(ptx, 1, size, out), size);
    assert_int_equal(fclose(out), 0);
    asyncrt_program *main_p = link_test_compile(f->ctx, "main.cu", ARCH, "-rdc=true");
    char *worker = strdup(getenv("ASYNCRT_COMPILE_WORKER"));
    for (int i = 0; i < 2; i++) {
        asyncrt_context *ctx = cacheless_context(i ? "0" : worker);
        asyncrt_link *link;
        assert_ok(ctx, asyncrt_link_create(ctx, ARCH, &link));
        assert_ok(ctx, asyncrt_link_add_file(link, path, ASYNCRT_LINK_PTX));
        assert_ok(ctx, asyncrt_link_add_program(link, main_p));
        asyncrt_program *linked = NULL;
        assert_ok(ctx, asyncrt_link_complete(link, &linked));
        asyncrt_cubin_kernel k;
        kernel_facts(linked, "stage", &k);
        asyncrt_program_destroy(linked);
        asyncrt_link_destroy(link);
        asyncrt_context_destroy(ctx);
    }
    setenv("ASYNCRT_COMPILE_WORKER", worker, 1);
    free(worker);
    asyncrt_program_destroy(main_p);
    asyncrt_program_destroy(util_p);
    free(path);
}

/* NVIDIA's libmathdx made a cuFFTDx FFT as LTO-IR (tests/link/mathdx, made
 * where PyPI is reachable, not checked in): it links with fft_main.cu. */
static void mathdx_ltoir_links(void **state)
{
    test_cache_fixture *f = *state;
    char *ltoir = NULL;
    assert_true(asprintf(&ltoir, "%s/tests/link/mathdx/fft64_c2c_f32_sm90.ltoir", getenv("ASYNCRT_TEST_SOURCE_DIR")) > 0);
    struct stat st;
    if (stat(ltoir, &st) != 0) {
        print_message("no %s (tests/link/mathdx/make_fft_ltoir.sh makes it): not linked\n", ltoir);
        free(ltoir);
        return;
    }
    asyncrt_program *main_p = link_test_compile(f->ctx, "fft_main.cu", ARCH, "-dlto");
    asyncrt_link *link;
    assert_ok(f->ctx, asyncrt_link_create(f->ctx, ARCH, &link));
    assert_ok(f->ctx, asyncrt_link_add_program(link, main_p));
    assert_ok(f->ctx, asyncrt_link_add_file(link, ltoir, ASYNCRT_LINK_ANY));
    asyncrt_program *linked = NULL;
    /* LTO-IR needs -lto: nvJitLink says so */
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_link_complete(link, &linked));
    assert_ok(f->ctx, asyncrt_link_add_option(link, "-lto"));
    assert_ok(f->ctx, asyncrt_link_complete(link, &linked));
    asyncrt_cubin_kernel k;
    kernel_facts(linked, "fft64", &k);
    print_message("fft64 linked with cuFFTDx's LTO-IR: %u registers, %llu bytes static shared\n", k.regs,
                  (unsigned long long)k.shared_size);
    asyncrt_program_destroy(linked);
    asyncrt_link_destroy(link);
    asyncrt_program_destroy(main_p);
    free(ltoir);
}

/* Any input, option or library file changed: a miss; the same again: a hit. */
static void cache_misses_on_change(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_program *main_p = link_test_compile(f->ctx, "main.cu", ARCH, "-rdc=true");
    asyncrt_program *util_p = link_test_compile(f->ctx, "util.cu", ARCH, "-rdc=true");
    char *lib = NULL;
    assert_true(asprintf(&lib, "%s/util.cubin", f->dir) > 0);
    size_t size;
    const void *image = asyncrt_program_image(util_p, &size);
    FILE *out = fopen(lib, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(image, 1, size, out), size);
    fclose(out);
    struct { const asyncrt_program *input; const char *file; const char *option; asyncrt_program_origin want; } steps[] = {
        {NULL, lib, NULL, ASYNCRT_ORIGIN_COMPILED},            /* first */
        {NULL, lib, NULL, ASYNCRT_ORIGIN_MEMORY_CACHE},        /* again */
        {NULL, lib, "-O3", ASYNCRT_ORIGIN_COMPILED},           /* an option */
        {util_p, NULL, NULL, ASYNCRT_ORIGIN_COMPILED},         /* the same bytes, another input name */
    };
    for (size_t i = 0; i < 4; i++) {
        asyncrt_link *link;
        assert_ok(f->ctx, asyncrt_link_create(f->ctx, ARCH, &link));
        assert_ok(f->ctx, asyncrt_link_add_program(link, main_p));
        if (steps[i].input) assert_ok(f->ctx, asyncrt_link_add_program(link, steps[i].input));
        if (steps[i].file) assert_ok(f->ctx, asyncrt_link_add_file(link, steps[i].file, ASYNCRT_LINK_CUBIN));
        if (steps[i].option) assert_ok(f->ctx, asyncrt_link_add_option(link, steps[i].option));
        asyncrt_program *linked = NULL;
        assert_ok(f->ctx, asyncrt_link_complete(link, &linked));
        if (asyncrt_program_origin_of(linked) != steps[i].want)
            fail_msg("step %zu: %s, expected %s", i, asyncrt_program_origin_string(asyncrt_program_origin_of(linked)),
                     asyncrt_program_origin_string(steps[i].want));
        asyncrt_program_destroy(linked);
        asyncrt_link_destroy(link);
    }
    /* A fresh context on the same directory: a disk hit; then the library file changes: a miss. */
    for (int round = 0; round < 3; round++) {
        asyncrt_context *ctx;
        assert_ok(NULL, asyncrt_context_create(&ctx));
        assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, f->dir));
        if (round == 1) { /* another library of the same name: another bias */
            asyncrt_compile_options o = {.size = sizeof o,
                                         .arch = ARCH, .options = (const char *[]){"-rdc=true"}, .option_count = 1};
            asyncrt_program *util2 = NULL;
            assert_ok(ctx, asyncrt_program_compile(ctx, "util2.cu", "__device__ float bias = 2.0f;\n"
                                                   "__device__ float twice(float x) { return 2.0f * x; }\n", &o, &util2));
            const void *other = asyncrt_program_image(util2, &size);
            out = fopen(lib, "wb");
            assert_int_equal(fwrite(other, 1, size, out), size);
            fclose(out);
            asyncrt_program_destroy(util2);
        }
        asyncrt_link *link;
        assert_ok(ctx, asyncrt_link_create(ctx, ARCH, &link));
        assert_ok(ctx, asyncrt_link_add_program(link, main_p));
        assert_ok(ctx, asyncrt_link_add_file(link, lib, ASYNCRT_LINK_CUBIN));
        asyncrt_program *linked = NULL;
        assert_ok(ctx, asyncrt_link_complete(link, &linked));
        asyncrt_program_origin want = round == 1 ? ASYNCRT_ORIGIN_COMPILED : ASYNCRT_ORIGIN_DISK_CACHE;
        if (asyncrt_program_origin_of(linked) != want)
            fail_msg("round %d: %s, expected %s", round, asyncrt_program_origin_string(asyncrt_program_origin_of(linked)),
                     asyncrt_program_origin_string(want));
        asyncrt_program_destroy(linked);
        asyncrt_link_destroy(link);
        asyncrt_context_destroy(ctx);
    }
    free(lib);
    asyncrt_program_destroy(main_p);
    asyncrt_program_destroy(util_p);
}

static void mixed_arch_refused(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_program *main_p = link_test_compile(f->ctx, "main.cu", ARCH, "-rdc=true");
    asyncrt_program *util80 = link_test_compile(f->ctx, "util.cu", "sm_80", "-rdc=true");
    asyncrt_link *link;
    assert_ok(f->ctx, asyncrt_link_create(f->ctx, ARCH, &link));
    assert_ok(f->ctx, asyncrt_link_add_program(link, main_p));
    assert_status(f->ctx, ASYNCRT_ERROR_UNSUPPORTED_ARCH, asyncrt_link_add_program(link, util80));
    assert_non_null(strstr(asyncrt_context_last_error(f->ctx), "util.cu is compiled for sm_80, this link for sm_90"));
    /* the same bytes as a blob: the ELF header says sm_80 */
    size_t size;
    const void *image = asyncrt_program_image(util80, &size);
    assert_status(f->ctx, ASYNCRT_ERROR_UNSUPPORTED_ARCH, asyncrt_link_add_data(link, image, size, ASYNCRT_LINK_ANY, "util80"));
    assert_non_null(strstr(asyncrt_context_last_error(f->ctx), "util80 (CUBIN) is built for sm_80"));
    asyncrt_link_destroy(link);
    asyncrt_program_destroy(main_p);
    asyncrt_program_destroy(util80);
}

/* Inputs and options that cannot be: each refused with a message naming it. */
static void bad_inputs(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_program *whole = link_test_compile(f->ctx, "util.cu", ARCH, NULL);
    asyncrt_link *link;
    assert_ok(f->ctx, asyncrt_link_create(f->ctx, ARCH, &link));
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_link_add_program(link, whole));
    assert_non_null(strstr(asyncrt_context_last_error(f->ctx), "util.cu is whole-program code: compile it with -rdc=true"));
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_link_add_data(link, "hello", 5, ASYNCRT_LINK_ANY, "hello.txt"));
    assert_non_null(strstr(asyncrt_context_last_error(f->ctx), "hello.txt: not a CUBIN, PTX"));
    size_t size;
    const void *image = asyncrt_program_image(whole, &size);
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_link_add_data(link, image, size, ASYNCRT_LINK_LTOIR, "x.ltoir"));
    assert_non_null(strstr(asyncrt_context_last_error(f->ctx), "x.ltoir was given as LTO-IR but its bytes are CUBIN"));
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_link_add_option(link, "-arch=sm_80"));
    assert_status(f->ctx, ASYNCRT_ERROR_IO, asyncrt_link_add_file(link, "/nonexistent/lib.a", ASYNCRT_LINK_ANY));
    assert_non_null(strstr(asyncrt_context_last_error(f->ctx), "/nonexistent/lib.a"));
    asyncrt_program *linked = (asyncrt_program *)1;
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_link_complete(link, &linked));
    assert_null(linked);
    assert_ok(f->ctx, asyncrt_link_add_option(link, "-no-such-option"));
    asyncrt_program *util_p = link_test_compile(f->ctx, "util.cu", ARCH, "-rdc=true");
    assert_ok(f->ctx, asyncrt_link_add_program(link, util_p));
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_link_complete(link, &linked));
    assert_non_null(strstr(asyncrt_context_last_error(f->ctx), "UNRECOGNIZED_OPTION"));
    asyncrt_link_destroy(link);
    asyncrt_program_destroy(whole);
    asyncrt_program_destroy(util_p);
}

/* The worker and this process make the same image. */
static void worker_and_in_process_agree(void **state)
{
    test_cache_fixture *f = *state;
    asyncrt_program *main_p = link_test_compile(f->ctx, "main.cu", ARCH, "-rdc=true");
    asyncrt_program *util_p = link_test_compile(f->ctx, "util.cu", ARCH, "-rdc=true");
    asyncrt_program *linked[2] = {NULL, NULL};
    char *worker = strdup(getenv("ASYNCRT_COMPILE_WORKER"));
    for (int i = 0; i < 2; i++) {
        asyncrt_context *ctx = cacheless_context(i ? "0" : worker);
        asyncrt_context_set_log_level(ctx, 2);
        test_capture_begin();
        asyncrt_status s = link_test_programs(ctx, ARCH, NULL, &linked[i], main_p, util_p, NULL);
        char *log = test_capture_end();
        assert_ok(ctx, s);
        assert_int_equal(strstr(log, "linking in this process") != NULL, i == 1);
        free(log);
        asyncrt_context_destroy(ctx);
    }
    setenv("ASYNCRT_COMPILE_WORKER", worker, 1);
    size_t a_size, b_size;
    const void *a = asyncrt_program_image(linked[0], &a_size), *b = asyncrt_program_image(linked[1], &b_size);
    assert_int_equal(a_size, b_size);
    assert_memory_equal(a, b, a_size);
    free(worker);
    asyncrt_program_destroy(linked[0]);
    asyncrt_program_destroy(linked[1]);
    asyncrt_program_destroy(main_p);
    asyncrt_program_destroy(util_p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(two_files, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(lto_keeps_layout, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(undefined_symbol, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(duplicate_symbol, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(nvcc_libraries, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(ptx_file_links, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(cache_misses_on_change, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(mixed_arch_refused, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(bad_inputs, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(mathdx_ltoir_links, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(worker_and_in_process_agree, test_setup_cache_context, test_teardown_cache_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
