/* Compact images on the parity corpus (tests/parity/{tricky,corpus}, issue
 * 37's CPU half). Every kernel file is compiled by NVRTC as asyncrt-run
 * would (its arch, its --kernel; PTX and CUBIN of one program), and:
 *   - the prune, checked by a count of whole words that shares nothing with
 *     the scanner: every name it lists occurs once in NVRTC's PTX (its
 *     definition) and never in the output; every library .global it kept
 *     occurs more than once; placeholders stand only before the last kept
 *     .global; a second prune changes nothing; two prunes give one output;
 *   - where tools/setup-ptxcompiler.sh built nvPTXCompiler of NVRTC's
 *     version beside it: NVRTC's PTX unpruned through it is NVRTC's CUBIN
 *     byte for byte, and the compact image of every kernel with something
 *     to prune is proven equal (compact.h); and the library's flow
 *     (asyncrt_program_compile with ASYNCRT_COMPACT_IMAGES=1, the same
 *     loader and NVRTC) comes to the same verdict, its image the compact
 *     one where the step kept one (a second NVRTC compile of each kernel
 *     with something to prune); else that half is skipped, saying why.
 * By default the sample of parity_sampled (tricky/, one in eight of
 * corpus/); ASYNCRT_TEST_FULL=1 (.ci/run) every file.
 * ASYNCRT_TEST_FILTER=word,word narrows the files (from all, not the sample). */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/asyncrt.h"
#include "compact.h"
#include "nvrtc_direct.h"
#include "parity_file.h"
#include "ptx_mirror.h"
#include "ptx_prune.h"
#include "test_support.h"

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/* Occurrences of `name` as a whole word, comments and all. */
static size_t count_word(const char *text, size_t n, const char *name)
{
    size_t len = strlen(name), count = 0;
    for (const char *p = text; (p = memmem(p, (size_t)(text + n - p), name, len)); p += len)
        count += (p == text || !word_char(p[-1])) && (p + len == text + n || !word_char(p[len]));
    return count;
}

/* The name a one-line ".global ..." definition defines (NVRTC writes one a line), or "". */
static void defined_name(const char *line, size_t len, char *out, size_t size)
{
    size_t end = 0;
    while (end < len && line[end] != '=' && line[end] != ';') end++;
    while (end && line[end - 1] == ' ') end--;
    while (end && line[end - 1] == ']') { /* [N], [N][M] */
        while (end && line[end - 1] != '[') end--;
        if (end) end--;
    }
    size_t start = end;
    while (start && word_char(line[start - 1])) start--;
    snprintf(out, size, "%.*s", (int)(end - start), line + start);
}

static bool is_placeholder_line(const char *line)
{
    const char *p = ".global .align 1 .b8 $";
    if (strncmp(line, p, strlen(p)) != 0) return false;
    const char *q = line + strlen(p) + 1;
    while (*q >= '0' && *q <= '9') q++;
    return strncmp(q, "[1];", 4) == 0 && q > line + strlen(p) + 1;
}

static void check_prune(const char *kernel, const char *ptx, size_t size, const asyncrt_ptx_prune *p)
{
    for (size_t i = 0; i < p->unreferenced_count; i++) {
        size_t before = count_word(ptx, size, p->unreferenced[i]);
        size_t after = count_word(p->ptx, p->size, p->unreferenced[i]);
        if (before != 1 || after != 0)
            fail_msg("%s: %s occurs %zu times in NVRTC's PTX, %zu after the prune", kernel, p->unreferenced[i], before,
                     after);
        if (i && strcmp(p->unreferenced[i - 1], p->unreferenced[i]) >= 0) fail_msg("%s: not sorted", kernel);
    }
    /* Kept library globals are mentioned; placeholders come before the last kept .global. */
    size_t kept = 0, placeholders = 0, line_no = 0, last_kept = 0, last_placeholder = 0;
    for (const char *line = p->ptx; line < p->ptx + p->size; line_no++) {
        const char *end = memchr(line, '\n', (size_t)(p->ptx + p->size - line));
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (is_placeholder_line(line)) {
            placeholders++, last_placeholder = line_no;
        } else if (strncmp(line, ".global ", 8) == 0 || strncmp(line, ".visible .global ", 17) == 0) {
            char name[1024];
            defined_name(line, len, name, sizeof name);
            last_kept = line_no;
            if (strncmp(line, ".global ", 8) == 0 && asyncrt__ptx_library_name(name, strlen(name))) {
                kept++;
                if (count_word(ptx, size, name) < 2) fail_msg("%s: %s was kept, and nothing mentions it", kernel, name);
            }
        }
        line = end ? end + 1 : line + len;
    }
    assert_int_equal(kept, p->kept);
    assert_int_equal(placeholders, p->placeholders);
    if (placeholders && last_placeholder > last_kept) fail_msg("%s: a placeholder after the last kept .global", kernel);
    /* Stable: again, and on its own output. */
    asyncrt_ptx_prune again, twice;
    char why[256];
    assert_true(asyncrt__ptx_prune(ptx, size, &again, why, sizeof why));
    assert_true(again.size == p->size && memcmp(again.ptx, p->ptx, p->size) == 0);
    assert_true(asyncrt__ptx_prune(p->ptx, p->size, &twice, why, sizeof why));
    if (twice.removed + twice.placeholders || twice.size != p->size || memcmp(twice.ptx, p->ptx, p->size))
        fail_msg("%s: a second prune changed the output", kernel);
    asyncrt__ptx_prune_free(&again);
    asyncrt__ptx_prune_free(&twice);
}

static bool wanted(const char *name)
{
    const char *filter = getenv("ASYNCRT_TEST_FILTER");
    if (!filter || !*filter) return true;
    char *copy = strdup(filter), *save = NULL;
    bool hit = false;
    for (char *w = strtok_r(copy, ",", &save); w && !hit; w = strtok_r(NULL, ",", &save)) hit = strstr(name, w);
    free(copy);
    return hit;
}

/* The flow's image of the kernel, with compact images on in ctx: its verdict
 * must be the step's (kept: compact, smaller than NVRTC's). */
static void check_flow(asyncrt_context *ctx, const char *name, const char *source, const parity_file *pf,
                       const asyncrt_compact *c)
{
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    const char *kernel = pf->kernel;
    o.arch = pf->arch;
    o.name_expressions = &kernel;
    o.name_expression_count = kernel[0] ? 1 : 0;
    asyncrt_program *p = NULL;
    if (asyncrt_program_compile(ctx, name, source, &o, &p) != ASYNCRT_SUCCESS)
        fail_msg("%s: %s", name, asyncrt_context_last_error(ctx));
    asyncrt_program_image_info info = ASYNCRT_PROGRAM_IMAGE_INFO_INIT;
    assert_int_equal(asyncrt_program_image_info_of(ctx, p, &info), ASYNCRT_SUCCESS);
    if (info.compact != (c->image != NULL))
        fail_msg("%s: the flow says \"%s\", the step \"%s\"", name, info.reason, c->why);
    if (info.compact && (info.image_bytes >= info.nvrtc_image_bytes || strncmp(info.reason, "compact image: ", 15)))
        fail_msg("%s: %zu bytes for NVRTC's %zu: %s", name, info.image_bytes, info.nvrtc_image_bytes, info.reason);
    if (!info.compact && info.image_bytes != info.nvrtc_image_bytes)
        fail_msg("%s: NVRTC's image of %zu bytes, but %zu: %s", name, info.nvrtc_image_bytes, info.image_bytes,
                 info.reason);
    asyncrt_program_destroy(p);
}

static void every_parity_kernel(void **state)
{
    (void)state;
    const asyncrt_nvrtc *nv = NULL;
    char why[1024];
    if (asyncrt__nvrtc_load(&nv, why, sizeof why) != ASYNCRT_SUCCESS) fail_msg("%s", why);
    asyncrt_ptxcompiler *pc = NULL;
    asyncrt_context *ctx = NULL;
    bool tried = false;
    size_t files = 0, all = 0, pruned = 0, compact = 0, nvrtc_bytes = 0, compact_bytes = 0;
    static const char *const folders[] = {"tests/parity/tricky", "tests/parity/corpus"};
    for (size_t f = 0; f < 2; f++) {
        char **names = NULL;
        size_t count = parity_list(folders[f], &names);
        for (size_t i = 0; i < count; free(names[i++])) {
            if (!wanted(names[i])) continue;
            all++;
            if (!parity_sampled(folders[f], i, test_full() || getenv("ASYNCRT_TEST_FILTER"))) continue;
            parity_file pf;
            char *source = NULL;
            char *path = parity_read(folders[f], names[i], &pf, &source);
            if (!path) fail_msg("%s/%s: %s", folders[f], names[i], pf.error);
            nvrtc_options o;
            nvrtc_default_options(pf.arch, &o);
            nvrtc_out out = {0};
            if (!nvrtc_compile(nv, names[i], source, o.items, o.count, pf.kernel, &out))
                fail_msg("%s: %s", names[i], out.error);
            asyncrt_ptx_prune p;
            if (!asyncrt__ptx_prune(out.ptx, out.ptx_size, &p, why, sizeof why)) fail_msg("%s: %s", names[i], why);
            check_prune(names[i], out.ptx, out.ptx_size, &p);
            files++;
            pruned += p.removed + p.placeholders > 0;
            if (!tried) {
                pc = nvrtc_ptxcompiler(nv, out.ptx, out.ptx_size);
                tried = true;
                if (pc) { /* the flow, with this loader and this NVRTC */
                    setenv("ASYNCRT_COMPACT_IMAGES", "1", 1);
                    setenv("ASYNCRT_PTXCOMPILER", asyncrt__ptxcompiler_file(pc), 1);
                    setenv("ASYNCRT_CACHE", "0", 1);
                    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
                }
            }
            if (pc) {
                char **mirrored = NULL;
                size_t n = 0, size = 0;
                void *cubin = NULL;
                assert_true(asyncrt__ptx_mirror_options(o.items, o.count, &mirrored, &n, why, sizeof why));
                if (!asyncrt__ptx_assemble(pc, out.ptx, out.ptx_size, (const char *const *)mirrored, n, &cubin, &size,
                                           why, sizeof why))
                    fail_msg("%s: %s", names[i], why);
                if (size != out.cubin_size || memcmp(cubin, out.cubin, size) != 0)
                    fail_msg("%s: NVRTC's PTX through nvPTXCompiler is not NVRTC's CUBIN", names[i]);
                asyncrt_compact c;
                asyncrt__compact(pc, out.cubin, out.cubin_size, out.ptx, out.ptx_size, o.items, o.count, &c);
                if (!c.image && (p.removed + p.placeholders) && !strstr(c.why, "no smaller"))
                    fail_msg("%s: %s", names[i], c.why);
                if (p.removed + p.placeholders) check_flow(ctx, names[i], source, &pf, &c); /* the rest: nothing */
                print_message("%-40s %7zu -> %7zu bytes (%s)\n", names[i], out.cubin_size,
                              c.image ? c.size : out.cubin_size, c.image ? "compact" : "NVRTC's");
                compact += c.image != NULL;
                nvrtc_bytes += out.cubin_size;
                compact_bytes += c.image ? c.size : out.cubin_size;
                asyncrt__compact_free(&c);
                asyncrt__ptx_options_free(mirrored);
                free(cubin);
            }
            asyncrt__ptx_prune_free(&p);
            nvrtc_out_free(&out);
            free(path);
            free(source);
        }
        free(names);
    }
    print_message("%zu kernel files of %zu%s, %zu with something to prune; %s\n", files, all,
                  files < all ? " (a sample; ASYNCRT_TEST_FULL=1 takes all)" : "", pruned,
                  pc ? "nvPTXCompiler: every unpruned image NVRTC's, every compact one proven, the flow's verdicts "
                       "the same"
                     : "no nvPTXCompiler");
    if (pc)
        print_message("%zu compact images; all images %zu bytes, compact where proven %zu\n", compact, nvrtc_bytes,
                      compact_bytes);
    assert_true(files > 0);
    asyncrt_context_destroy(ctx);
    asyncrt__ptxcompiler_close(pc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_parity_kernel)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
