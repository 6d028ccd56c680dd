/* The proof of compact images (runtime/compile/image_equal.h): NVRTC's CUBIN
 * of a small CCCL kernel (NVRTC runs on the CPU) is equal to itself, and each
 * difference a compact image could have is refused, naming it: code,
 * registers, shared memory, kernel attributes, ELF header, ptxas's options,
 * a global's bytes, a bank-4 slot, a symbol; lists the prune could not have
 * made; every truncation. Where the real nvPTXCompiler of NVRTC's version is
 * beside NVRTC (tools/setup-ptxcompiler.sh), the compact image of the same
 * compile is proven equal, and refused once its list or slots are tampered
 * with. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact.h"
#include "format.h"
#include "image_elf.h"
#include "image_equal.h"
#include "nvrtc_direct.h"
#include "ptx_prune.h"
#include "test_support.h"

/* A library global the code takes the address of (kept, with its bytes), ~1,000 it does not, static shared memory. */
static const char *k_source =
    "#include <cuda/std/type_traits>\n"
    "#include <cuda/std/limits>\n"
    "extern \"C\" __global__ void k(float *x, unsigned long long *p) {\n"
    "    __shared__ __align__(16) float tile[64];\n"
    "    tile[threadIdx.x % 64] = x[threadIdx.x];\n"
    "    __syncthreads();\n"
    "    x[threadIdx.x] = tile[(threadIdx.x + 1) % 64] * 2.0f + cuda::std::numeric_limits<int>::max();\n"
    "    if (threadIdx.x == 0) p[0] = (unsigned long long)&cuda::std::integral_constant<int, 7>::value;\n"
    "}\n";

static nvrtc_out g_out;
static const asyncrt_nvrtc *g_nv;

static int setup(void **state)
{
    (void)state;
    char why[1024];
    if (asyncrt__nvrtc_load(&g_nv, why, sizeof why) != ASYNCRT_SUCCESS) {
        print_message("no NVRTC: %s\n", why);
        return -1;
    }
    nvrtc_options o;
    nvrtc_default_options("sm_90", &o);
    if (!nvrtc_compile(g_nv, "k.cu", k_source, o.items, o.count, "", &g_out)) {
        print_message("%s\n", g_out.error);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    nvrtc_out_free(&g_out);
    return 0;
}

static uint8_t *copy(void)
{
    uint8_t *c = malloc(g_out.cubin_size);
    memcpy(c, g_out.cubin, g_out.cubin_size);
    return c;
}

/* The 64-byte header of section `name` in an image. */
static uint8_t *header_of(uint8_t *image, const char *name)
{
    asyncrt_elf e;
    char why[256];
    if (!asyncrt__elf_read(image, g_out.cubin_size, &e, why, sizeof why)) fail_msg("%s", why);
    const asyncrt_elf_section *s = asyncrt__elf_section(&e, name);
    if (!s) fail_msg("NVRTC's image has no section %s", name);
    uint8_t *h = image + asyncrt__elf_u(image + 0x28, 8) + 64 * (size_t)(s - e.sections);
    asyncrt__elf_free(&e);
    return h;
}

static uint8_t *data_of(uint8_t *image, const char *name, size_t *size)
{
    uint8_t *h = header_of(image, name);
    *size = asyncrt__elf_u(h + 0x20, 8);
    return image + asyncrt__elf_u(h + 0x18, 8);
}

static void put_u(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void refused(const uint8_t *compact, size_t size, const char *const *list, const char *const *placeholders,
                    size_t count, const char *phrase)
{
    char why[640] = "";
    if (asyncrt__image_equal(g_out.cubin, g_out.cubin_size, compact, size, list, placeholders, count, why, sizeof why))
        fail_msg("accepted; expected a refusal saying \"%s\"", phrase);
    if (!strstr(why, phrase)) fail_msg("\"%s\" does not say \"%s\"", why, phrase);
}

static void an_image_equals_itself(void **state)
{
    (void)state;
    char why[640];
    assert_true(asyncrt__image_equal(g_out.cubin, g_out.cubin_size, g_out.cubin, g_out.cubin_size, NULL, NULL, 0, why,
                                     sizeof why));
}

static void each_difference_is_refused_by_name(void **state)
{
    (void)state;
    size_t n = g_out.cubin_size, size;
    uint8_t *c = copy(), *p;
    (p = data_of(c, ".text.k", &size))[size / 2] ^= 0x10;
    refused(c, n, NULL, NULL, 0, "section .text.k: differs from byte");
    free(c), c = copy();
    p = header_of(c, ".text.k") + 8; /* sh_flags: the register count in bits 24-31 */
    put_u(p, asyncrt__elf_u(p, 8) + (1u << 24), 8);
    refused(c, n, NULL, NULL, 0, "section .text.k: type, flags (registers");
    free(c), c = copy();
    p = header_of(c, ".nv.shared.k") + 0x20;
    put_u(p, asyncrt__elf_u(p, 8) + 16, 8);
    refused(c, n, NULL, NULL, 0, "section .nv.shared.k: ");
    free(c), c = copy();
    p = header_of(c, ".nv.shared.k") + 0x30;
    put_u(p, 8, 8);
    refused(c, n, NULL, NULL, 0, "alignment 16/8");
    free(c), c = copy();
    (p = data_of(c, ".nv.info.k", &size))[size - 1] ^= 1;
    refused(c, n, NULL, NULL, 0, ".nv.info.k: other records");
    free(c), c = copy();
    c[0x30] ^= 1; /* e_flags: the arch */
    refused(c, n, NULL, NULL, 0, "the ELF headers differ");
    free(c), c = copy();
    (p = data_of(c, ".note.nv.tkinfo", &size))[size - 8] ^= 1;
    refused(c, n, NULL, NULL, 0, "section .note.nv.tkinfo: differs");
    free(c), c = copy();
    (p = data_of(c, ".nv.constant0.k", &size))[0] ^= 1;
    refused(c, n, NULL, NULL, 0, "section .nv.constant0.k: differs");
    free(c), c = copy();
    /* Two bank-4 slots swap their globals. */
    p = data_of(c, ".rela.nv.constant4", &size);
    assert_true(size >= 48);
    uint8_t info[8];
    memcpy(info, p + 8, 8), memcpy(p + 8, p + 32, 8), memcpy(p + 32, info, 8);
    refused(c, n, NULL, NULL, 0, "bank 4: slot");
    free(c);
}

/* The kept global's initial bytes, and a symbol's binding. */
static void a_kept_global_and_a_symbol_are_compared(void **state)
{
    (void)state;
    size_t n = g_out.cubin_size;
    uint8_t *c = copy();
    asyncrt_elf e;
    char why[256];
    assert_true(asyncrt__elf_read(c, n, &e, why, sizeof why));
    const asyncrt_elf_section *symtab = asyncrt__elf_section(&e, ".symtab");
    const char *seven = "_ZN4cuda3std3__417integral_constantIiLi7EE5valueE";
    bool found = false;
    for (size_t i = 0; i < e.symbol_count; i++) {
        const asyncrt_elf_symbol *y = &e.symbols[i];
        uint8_t *entry = (uint8_t *)symtab->data + 24 * i;
        if (!strcmp(y->name, seven)) {
            const asyncrt_elf_section *init = &e.sections[y->shndx];
            assert_string_equal(init->name, ".nv.global.init");
            assert_int_equal(init->data[y->value], 7);
            ((uint8_t *)init->data)[y->value] = 8;
            refused(c, n, NULL, NULL, 0, "global _ZN4cuda3std3__417integral_constantIiLi7EE5valueE: other initial");
            ((uint8_t *)init->data)[y->value] = 7;
            found = true;
        }
        if (!strcmp(y->name, "k")) {
            entry[4] ^= 0x10; /* STB_GLOBAL <-> STB_LOCAL/WEAK */
            refused(c, n, NULL, NULL, 0, "symbol k: other binding");
            entry[4] ^= 0x10;
        }
    }
    assert_true(found);
    asyncrt__elf_free(&e);
    free(c);
}

static void lists_the_prune_could_not_make_are_refused(void **state)
{
    (void)state;
    const char *unsorted[] = {"b", "a"}, *kernel[] = {"k"};
    refused((const uint8_t *)g_out.cubin, g_out.cubin_size, unsorted, NULL, 2, "not sorted");
    refused((const uint8_t *)g_out.cubin, g_out.cubin_size, kernel, NULL, 1, "no global variable");
    const char *two[] = {"_ZN4cuda1aE", "_ZN4cuda1bE"}, *same[] = {"$a0", "$a0"};
    refused((const uint8_t *)g_out.cubin, g_out.cubin_size, two, same, 2, "stands for two globals");
}

static void truncated_or_foreign_images_are_refused(void **state)
{
    (void)state;
    char why[640];
    for (size_t n = 0; n < g_out.cubin_size; n += 1 + n / 64) {
        uint8_t *c = malloc(n + 1); /* exactly n bytes readable, for ASan */
        memcpy(c, g_out.cubin, n);
        assert_false(asyncrt__image_equal(g_out.cubin, g_out.cubin_size, c, n, NULL, NULL, 0, why, sizeof why));
        free(c);
    }
    refused((const uint8_t *)g_out.ptx, g_out.ptx_size, NULL, NULL, 0, "the compact image: not a 64-bit");
    /* One byte changed anywhere: no crash, and a refusal or an acceptance. */
    test_seed_random("test_image_equal");
    uint8_t *c = copy();
    for (int i = 0; i < 3000; i++) {
        size_t at = (size_t)rand() % g_out.cubin_size;
        uint8_t was = c[at];
        c[at] = (uint8_t)rand();
        (void)asyncrt__image_equal(g_out.cubin, g_out.cubin_size, c, g_out.cubin_size, NULL, NULL, 0, why, sizeof why);
        c[at] = was;
    }
    free(c);
}

/* ---- the real compact image --------------------------------------------- */

static void the_compact_image_is_proven_and_tampering_refused(void **state)
{
    (void)state;
    asyncrt_ptxcompiler *pc = nvrtc_ptxcompiler(g_nv, g_out.ptx, g_out.ptx_size);
    if (!pc) skip();
    nvrtc_options o;
    nvrtc_default_options("sm_90", &o);
    asyncrt_compact c;
    asyncrt__compact(pc, g_out.cubin, g_out.cubin_size, g_out.ptx, g_out.ptx_size, o.items, o.count, &c);
    if (!c.image) fail_msg("%s", c.why);
    print_message("%zu bytes for NVRTC's %zu: %s\n", c.size, g_out.cubin_size, c.why);
    assert_true(c.removed > 0 && c.placeholders > 0); /* the source is made for both */
    asyncrt_ptx_prune p;
    char why[640];
    assert_true(asyncrt__ptx_prune(g_out.ptx, g_out.ptx_size, &p, why, sizeof why));
    const char *const *names = (const char *const *)p.unreferenced;
    const char *const *holders = (const char *const *)p.placeholders_of;
    assert_true(asyncrt__image_equal(g_out.cubin, g_out.cubin_size, c.image, c.size, names, holders,
                                     p.unreferenced_count, why, sizeof why));
    /* A name the prune did not list: its symbol is missing. */
    size_t removed_at = 0, held_at = 0, other_held = 0;
    for (size_t i = 0; i < p.unreferenced_count; i++) {
        if (!p.placeholders_of[i])
            removed_at = i;
        else if (!held_at)
            held_at = i;
        else
            other_held = i;
    }
    char **shorter = malloc(p.unreferenced_count * sizeof *shorter);
    char **shorter_holders = malloc(p.unreferenced_count * sizeof *shorter);
    size_t m = 0;
    for (size_t i = 0; i < p.unreferenced_count; i++)
        if (i != removed_at) shorter[m] = p.unreferenced[i], shorter_holders[m++] = p.placeholders_of[i];
    char *lost = asyncrt__format("symbol %s of NVRTC's image is missing", p.unreferenced[removed_at]);
    refused(c.image, c.size, (const char *const *)shorter, (const char *const *)shorter_holders, m, lost);
    free(lost);
    /* Two placeholders that stand for each other's globals: their slots hold other addresses. */
    char *swap = p.placeholders_of[held_at];
    p.placeholders_of[held_at] = p.placeholders_of[other_held];
    p.placeholders_of[other_held] = swap;
    refused(c.image, c.size, names, holders, p.unreferenced_count, "bank 4: slot");
    /* No placeholders named: they are symbols NVRTC's image has not. */
    refused(c.image, c.size, names, NULL, p.unreferenced_count, "is not in NVRTC's image");
    free(shorter);
    free(shorter_holders);
    asyncrt__ptx_prune_free(&p);
    asyncrt__compact_free(&c);
    asyncrt__ptxcompiler_close(pc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_image_equals_itself),
        cmocka_unit_test(each_difference_is_refused_by_name),
        cmocka_unit_test(a_kept_global_and_a_symbol_are_compared),
        cmocka_unit_test(lists_the_prune_could_not_make_are_refused),
        cmocka_unit_test(truncated_or_foreign_images_are_refused),
        cmocka_unit_test(the_compact_image_is_proven_and_tampering_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
