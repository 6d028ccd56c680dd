/* The PTX prune (runtime/compile/ptx_prune.h) on PTX written here: which
 * definitions go, which stay, placeholders, names, refusals, and that a
 * second prune changes nothing. test_compact_corpus holds it to NVRTC's PTX
 * of the parity corpus. */
#define _GNU_SOURCE /* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_prune.h"
#include "test_support.h"

#define HEAD        ".version 9.1\n.target sm_90\n.address_size 64\n\n"
#define LIB(x)      "_ZN4cuda3std3__41" #x "E"
#define ENTRY(body) ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .b64 \t%rd<3>;\n" body "\tret;\n}\n"

static asyncrt_ptx_prune prune_ok(const char *ptx)
{
    asyncrt_ptx_prune out;
    char why[256];
    if (!asyncrt__ptx_prune(ptx, strlen(ptx), &out, why, sizeof why)) fail_msg("refused: %s\n%s", why, ptx);
    return out;
}

/* A second prune of the output gives the same bytes and removes nothing. */
static void assert_stable(const asyncrt_ptx_prune *first)
{
    asyncrt_ptx_prune again = prune_ok(first->ptx);
    assert_int_equal(again.removed + again.placeholders, 0);
    assert_int_equal(again.size, first->size);
    assert_memory_equal(again.ptx, first->ptx, first->size);
    asyncrt__ptx_prune_free(&again);
}

static bool listed(const asyncrt_ptx_prune *p, const char *name, const char **placeholder)
{
    for (size_t i = 0; i < p->unreferenced_count; i++)
        if (strcmp(p->unreferenced[i], name) == 0) {
            if (placeholder) *placeholder = p->placeholders_of[i];
            return true;
        }
    return false;
}

static void unreferenced_globals_after_the_last_kept_one_go(void **state)
{
    (void)state;
    const char *ptx = HEAD
        "\t// .globl\tk\n"
        ".global .align 4 .u32 " LIB(B) " = 2;\n"
                                        ".global .align 1 .u8 " LIB(A) ";\n"
                                                                       ".global .align 8 .u64 " LIB(C) " = 7;\n" ENTRY(
                                                                           "\tmov.u64 \t%rd1, " LIB(B) ";\n");
    asyncrt_ptx_prune p = prune_ok(ptx);
    assert_int_equal(p.removed, 2);
    assert_int_equal(p.placeholders, 0);
    assert_int_equal(p.kept, 1);
    /* Their whole lines go; the rest is the input's bytes. */
    const char *want = HEAD "\t// .globl\tk\n"
                            ".global .align 4 .u32 " LIB(B) " = 2;\n" ENTRY("\tmov.u64 \t%rd1, " LIB(B) ";\n");
    assert_string_equal(p.ptx, want);
    assert_int_equal(p.size, strlen(want));
    const char *placeholder = "unset";
    assert_true(listed(&p, LIB(A), &placeholder));
    assert_null(placeholder);
    assert_true(listed(&p, LIB(C), NULL));
    assert_false(listed(&p, LIB(B), NULL));
    assert_string_equal(p.unreferenced[0], LIB(A)); /* sorted */
    assert_stable(&p);
    asyncrt__ptx_prune_free(&p);
}

static void unreferenced_globals_before_a_kept_one_leave_a_placeholder(void **state)
{
    (void)state;
    /* A's and C's bank-4 slots come before B's and $str's: they keep one byte each, under short names. */
    const char *ptx = HEAD ".global .align 4 .u32 " LIB(
        A) " = 1;\n"
           ".global .align 4 .u32 " LIB(B) " = 2;\n"
                                           ".global .align 8 .u64 " LIB(
                                               C) ";\n"
                                                  ".global .align 1 .b8 $str[3] = {72, 105, 0};\n" ENTRY(
                                                      "\tmov.u64 \t%rd1, " LIB(B) ";\n\tmov.u64 \t%rd2, $str;\n");
    asyncrt_ptx_prune p = prune_ok(ptx);
    assert_int_equal(p.removed, 0);
    assert_int_equal(p.placeholders, 2);
    assert_non_null(strstr(p.ptx, ".global .align 1 .b8 $a0[1];\n.global .align 4 .u32 " LIB(B)));
    assert_non_null(strstr(p.ptx, ".global .align 1 .b8 $a1[1];\n.global .align 1 .b8 $str"));
    assert_null(strstr(p.ptx, LIB(A)));
    const char *placeholder = NULL;
    assert_true(listed(&p, LIB(A), &placeholder));
    assert_string_equal(placeholder, "$a0");
    assert_true(listed(&p, LIB(C), &placeholder));
    assert_string_equal(placeholder, "$a1");
    assert_stable(&p);
    asyncrt__ptx_prune_free(&p);
}

static void placeholder_names_avoid_every_name_of_the_input(void **state)
{
    (void)state;
    /* $a... and $b... are taken (in a comment, too): the placeholders are $c0, $c1 ... */
    const char *ptx = HEAD "// $b is mentioned here\n.global .align 4 .u32 " LIB(
        A) ";\n"
           ".global .align 4 .u32 $abc = 1;\n" ENTRY("\tmov.u64 \t%rd1, $abc;\n");
    asyncrt_ptx_prune p = prune_ok(ptx);
    assert_int_equal(p.placeholders, 1);
    assert_string_equal(p.placeholders_of[0], "$c0");
    assert_non_null(strstr(p.ptx, ".global .align 1 .b8 $c0[1];"));
    asyncrt__ptx_prune_free(&p);
}

static void other_spaces_linkages_and_user_names_are_never_touched(void **state)
{
    (void)state;
    /* Each is unreferenced and would go if it were a plain library .global. */
    const char *ptx = HEAD ".const .align 4 .u32 " LIB(
        K) " = 3;\n"
           ".shared .align 4 .u32 " LIB(
               S) ";\n"
                  ".visible .global .align 4 .u32 " LIB(
                      V) ";\n"
                         ".extern .global .align 4 .u32 " LIB(
                             X) ";\n"
                                ".weak .global .align 4 .u32 " LIB(
                                    W) ";\n"
                                       ".common .global .align 4 .u32 " LIB(
                                           M) ";\n"
                                              ".global .align 4 .u32 _ZN5mylib5valueE = 1;\n"
                                              ".global .align 4 .u32 user_counter;\n"
                                              ".global .align 1 .b8 $str[2] = {65, 0};\n" ENTRY("");
    asyncrt_ptx_prune p = prune_ok(ptx);
    assert_int_equal(p.removed + p.placeholders, 0);
    assert_string_equal(p.ptx, ptx);
    asyncrt__ptx_prune_free(&p);
}

static void a_global_another_kept_one_points_to_stays(void **state)
{
    (void)state;
    /* P is used by the kernel and points to Q: Q stays. R points to S and nothing uses R: both go. */
    const char *ptx = HEAD ".global .align 4 .u32 " LIB(
        Q) " = 5;\n"
           ".global .align 8 .u64 " LIB(P) " = generic(" LIB(
               Q) ");\n"
                  ".global .align 4 .u32 " LIB(S) ";\n"
                                                  ".global .align 8 .u64 " LIB(R) "[2] = {generic(" LIB(
                                                      S) "), 0};\n" ENTRY("\tld.global.u64 \t%rd1, [" LIB(P) "];\n");
    asyncrt_ptx_prune p = prune_ok(ptx);
    assert_int_equal(p.kept, 2);
    assert_int_equal(p.removed, 2);
    assert_non_null(strstr(p.ptx, LIB(Q) " = 5;"));
    assert_null(strstr(p.ptx, LIB(R)));
    assert_null(strstr(p.ptx, LIB(S)));
    assert_stable(&p);
    asyncrt__ptx_prune_free(&p);
}

static void a_reference_from_a_debug_section_or_declaration_keeps_a_global(void **state)
{
    (void)state;
    const char *ptx = HEAD ".global .align 4 .u32 " LIB(
        D) ";\n"
           ".global .align 4 .u32 " LIB(E) ";\n"
                                           ".extern .func (.param .b32 r) f(.param .b64 " LIB(E) "_param)\n;\n" ENTRY(
                                               "") "\t.section\t.debug_info\n\t{\n.b64 " LIB(D) "\n\t}\n";
    asyncrt_ptx_prune p = prune_ok(ptx);
    /* E's name inside another identifier (E_param) is no reference: E goes; D stays. */
    assert_int_equal(p.removed, 1);
    assert_true(listed(&p, LIB(E), NULL));
    assert_non_null(strstr(p.ptx, ".global .align 4 .u32 " LIB(D) ";"));
    asyncrt__ptx_prune_free(&p);
}

static void names_in_comments_and_strings_are_no_references(void **state)
{
    (void)state;
    const char *ptx =
        HEAD "\t.file\t1 \"" LIB(F) ".cu\"\n"
                                    ".global .align 4 .u32 " LIB(F) ";\n"
                                                                    "/* " LIB(F) " */\n" ENTRY("\t// " LIB(F) "\n");
    asyncrt_ptx_prune p = prune_ok(ptx);
    assert_int_equal(p.removed, 1);
    asyncrt__ptx_prune_free(&p);
}

static void a_statement_that_shares_its_line_goes_alone(void **state)
{
    (void)state;
    const char *ptx = HEAD ".global .align 4 .u32 " LIB(A) "; // a comment that stays\n" ENTRY("");
    asyncrt_ptx_prune p = prune_ok(ptx);
    assert_int_equal(p.removed, 1);
    assert_string_equal(p.ptx, HEAD " // a comment that stays\n" ENTRY(""));
    asyncrt__ptx_prune_free(&p);
}

static void nvrtc_trailing_nul_is_accepted(void **state)
{
    (void)state;
    const char ptx[] = HEAD ".global .align 4 .u32 " LIB(A) ";\n" ENTRY("");
    asyncrt_ptx_prune p;
    char why[256];
    assert_true(asyncrt__ptx_prune(ptx, sizeof ptx, &p, why, sizeof why)); /* sizeof: with its NUL */
    assert_int_equal(p.removed, 1);
    assert_int_equal(p.size, strlen(p.ptx));
    asyncrt__ptx_prune_free(&p);
}

static void library_names_by_namespace(void **state)
{
    (void)state;
    static const char *const yes[] = {
        LIB(A),
        "_ZN3cub6detail5valueE",
        "_ZN6thrust6detail5valueE",
        "_ZN2nv6target5valueE",
        "_ZN18cooperative_groups4__v17details5valueE",
        "_ZN6nvcuda4wmma5valueE",
        "_ZN3std5valueE",
        "_ZNSt17integral_constantIbLb0EE5valueE",
        "_ZSt7nothrow",
        "_ZZN4cuda3std3__44funcEvE1x",
        "_ZN47_INTERNAL_00000000_19_barrier_align128_cu_stage4cuda3ptx3__411sem_acq_relE"};
    static const char *const no[] = {"_ZN5mylib5valueE",
                                     "user",
                                     "$str",
                                     "_Z4cuda",
                                     "_ZN3nvX",
                                     "_ZN12_GLOBAL__N_15valueE",
                                     "_ZN47_INTERNAL_00000000_19_barrier_align128_cu_stage5mylib1xE",
                                     "_ZN4cuda",
                                     "_ZN",
                                     "_ZZ5stageE4bars",
                                     "_ZTVN4cuda3std3__45errorE"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!asyncrt__ptx_library_name(yes[i], strlen(yes[i]))) fail_msg("%s: not a library name", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (asyncrt__ptx_library_name(no[i], strlen(no[i]))) fail_msg("%s: taken for a library name", no[i]);
}

/* Each: input, a phrase of the reason. */
static void refusals_name_what_was_not_understood(void **state)
{
    (void)state;
    static const struct {
        const char *ptx, *why;
    } cases[] = {
        {"no version;\n", "starts with no directive"},
        {".target sm_90\n", "no .version directive"},
        {HEAD ".global .align 4 .u32 " LIB(A) " = ge\n.version 9.1\n.target sm_90\n;\n",
         ".version inside another statement (from line 5)"}, /* fuzz_ptx_prune found it */
        {HEAD "/* never closed\n", "comment that never ends"},
        {HEAD "\t.file\t1 \"never closed\n", "string that never ends"},
        {HEAD ENTRY("") "}\n", "closes nothing"},
        {HEAD ".visible .entry k()\n{\n\tret;\n", "ends inside a statement (line 5)"},
        {HEAD ".global .align 4 .u32 " LIB(A) "\n", "ends inside a statement"},
        {HEAD ".frobnicate 3;\n", "does not know: .frobnicate"},
        {HEAD "mystery;\n", "starts with no directive"},
        {HEAD ".global .align 4 .u32 " LIB(A) ";\n.global .align 4 .u32 " LIB(A) ";\n", "defined twice"},
        {HEAD ".global .align 4 .u32 " LIB(A) ", " LIB(B) ";\n", "2 names in one definition"},
        {HEAD ".global .align 4 .u32 = 1;\n", "without a name"},
        {HEAD ".global .shared .u32 " LIB(A) ";\n", ".shared in a statement that is already another"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        asyncrt_ptx_prune p;
        char why[256] = "";
        if (asyncrt__ptx_prune(cases[i].ptx, strlen(cases[i].ptx), &p, why, sizeof why))
            fail_msg("case %zu accepted:\n%s", i, cases[i].ptx);
        if (!strstr(why, cases[i].why)) fail_msg("case %zu: \"%s\" does not say \"%s\"", i, why, cases[i].why);
        assert_null(p.ptx);
        assert_null(p.unreferenced);
        asyncrt__ptx_prune_free(&p);
    }
    /* A NUL inside the text. */
    const char nul[] = HEAD ".global .align 4 .u32 x;\0\n.global .align 4 .u32 y;\n";
    asyncrt_ptx_prune p;
    char why[256];
    assert_false(asyncrt__ptx_prune(nul, sizeof nul - 1, &p, why, sizeof why));
    assert_non_null(strstr(why, "NUL byte"));
    /* fuzz_ptx_prune found it: the output must be text. */
    const char nul_in_comment[] = HEAD "// a \0 in a comment\n.global .align 4 .u32 " LIB(A) ";\n";
    assert_false(asyncrt__ptx_prune(nul_in_comment, sizeof nul_in_comment - 1, &p, why, sizeof why));
    assert_non_null(strstr(why, "a NUL byte inside the PTX, at byte 50"));
    assert_false(asyncrt__ptx_prune(NULL, 0, &p, why, sizeof why));
    asyncrt__ptx_prune_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unreferenced_globals_after_the_last_kept_one_go),
        cmocka_unit_test(unreferenced_globals_before_a_kept_one_leave_a_placeholder),
        cmocka_unit_test(placeholder_names_avoid_every_name_of_the_input),
        cmocka_unit_test(other_spaces_linkages_and_user_names_are_never_touched),
        cmocka_unit_test(a_global_another_kept_one_points_to_stays),
        cmocka_unit_test(a_reference_from_a_debug_section_or_declaration_keeps_a_global),
        cmocka_unit_test(names_in_comments_and_strings_are_no_references),
        cmocka_unit_test(a_statement_that_shares_its_line_goes_alone),
        cmocka_unit_test(nvrtc_trailing_nul_is_accepted),
        cmocka_unit_test(library_names_by_namespace),
        cmocka_unit_test(refusals_name_what_was_not_understood),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
