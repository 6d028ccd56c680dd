/* The CPU half of the nvcc parity harness (issue 22): every kernel file under
 * tests/parity/ (tricky/, ours; corpus/, others') is compiled by asyncrt as
 * asyncrt-run would (default options, the file's arch and --kernel) and by
 * nvcc -cubin (ASYNCRT_NVCC, else the toolkit's; without nvcc this half is
 * skipped with a message), and the two CUBINs are held against each other
 * kernel by kernel from their ELF (cubin_elf.h). The memory layout a launch
 * depends on must be nvcc's: static shared size, the alignment where dynamic
 * shared memory starts, and the parameter bank. Registers, stack and code
 * are printed, not required: NVRTC's front end makes other PTX than nvcc's
 * for some kernels (bare NVRTC alike); the GPU half (run_parity.py) holds
 * results, speed and the driver's attributes to nvcc's, but for the NVRTC
 * version's known differences (its KNOWN table).
 * By default the sample of parity_sampled runs (tricky/, one in eight of
 * corpus/); ASYNCRT_TEST_FULL=1 (.ci/run) compares every file. */
#define _GNU_SOURCE /* strdup, asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cubin_elf.h"
#include "parity_file.h"
#include "test_support.h"

static char g_report[8192];

static const char *nvcc_path(void)
{
    static char path[4096];
    const char *env = getenv("ASYNCRT_NVCC");
    snprintf(path, sizeof path, "%s", env ? env : ASYNCRT_TEST_NVCC);
    struct stat st;
    return path[0] && stat(path, &st) == 0 ? path : NULL;
}

/* nvcc -cubin of `file` into a temporary file; NULL (and the log printed)
 * when nvcc fails. */
static void *nvcc_cubin(const char *nvcc, const char *file, const parity_file *pf, const char *dir, size_t *size)
{
    char *out = NULL, *cmd = NULL;
    if (asprintf(&out, "%s/nvcc.cubin", dir) < 0 ||
        asprintf(&cmd, "'%s' -cubin -arch=%s -std=c++17 %s -o '%s' '%s' 2>&1", nvcc, pf->arch, pf->nvcc_flags, out,
                 file) < 0)
        fail_msg("out of memory");
    int rc = system(cmd);
    void *image = rc == 0 ? parity_read_file(out, size) : NULL;
    if (rc != 0) print_message("nvcc failed (%d): %s\n", rc, cmd);
    unlink(out);
    free(out);
    free(cmd);
    return image;
}

static void kernel_files(void **state)
{
    asyncrt_context *ctx = *state;
    const char *nvcc = nvcc_path();
    if (!nvcc) print_message("no nvcc (set ASYNCRT_NVCC): the nvcc half of the comparison is skipped\n");
    char *dir = test_make_temp_dir("parity");
    int nvcc_differences = 0, files = 0, all = 0;
    static const char *const folders[] = {"tests/parity/tricky", "tests/parity/corpus"};
    for (size_t f = 0; f < 2; f++) {
        char **names = NULL;
        size_t count = parity_list(folders[f], &names);
        for (size_t i = 0; i < count; i++, all++) {
            if (!parity_sampled(folders[f], i, test_full())) {
                free(names[i]);
                continue;
            }
            files++;
            parity_file pf;
            char *source = NULL;
            char *path = parity_read(folders[f], names[i], &pf, &source);
            if (!path) fail_msg("%s/%s: %s", folders[f], names[i], pf.error);
            const char *expr[] = {pf.kernel};
            asyncrt_compile_options o = {.size = sizeof o,
                                         .arch = pf.arch, .name_expressions = expr,
                                         .name_expression_count = pf.kernel[0] ? 1 : 0};
            asyncrt_program *image = NULL;
            assert_ok(ctx, asyncrt_program_compile(ctx, names[i], source, &o, &image));
            if (nvcc) {
                size_t ns = 0, ls = 0;
                void *ni = nvcc_cubin(nvcc, path, &pf, dir, &ns);
                const void *li = asyncrt_program_image(image, &ls);
                int d = ni ? asyncrt__cubin_compare(li, ls, ni, ns, ASYNCRT_CUBIN_LAYOUT, g_report, sizeof g_report) : -1;
                if (d != 0) print_message("%s", g_report);
                int res = ni ? asyncrt__cubin_compare(li, ls, ni, ns, ASYNCRT_CUBIN_RESOURCES, g_report,
                                                      sizeof g_report) : -1;
                int code = ni ? asyncrt__cubin_compare(li, ls, ni, ns, ASYNCRT_CUBIN_ALL, NULL, 0) : -1;
                print_message("%-34s %-8s asyncrt %7zu B, nvcc %7zu B: %s; registers and stack %s; code %s\n",
                              names[i], pf.arch, ls, ns, d == 0 ? "same layout" : "DIFFERENT LAYOUT",
                              res == 0 ? "same" : "differ", code == 0 ? "identical" : "differs");
                if (d == 0 && res != 0) print_message("%s", g_report);
                nvcc_differences += d != 0;
                free(ni);
            }
            asyncrt_program_destroy(image);
            free(source);
            free(path);
            free(names[i]);
        }
        free(names);
    }
    test_remove_tree(dir);
    free(dir);
    print_message("%d files of %d%s: %d with a layout unlike nvcc's%s\n", files, all,
                  files < all ? " (a sample; ASYNCRT_TEST_FULL=1 compares all)" : "", nvcc_differences,
                  nvcc ? "" : " (not compared: no nvcc)");
    assert_true(files >= 9);
    assert_int_equal(nvcc_differences, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(kernel_files, test_setup_context, test_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
