/* compile.c's flow as states (compile_job.h), and its entry for a target
 * already resolved (compile.h). CPU only: NVRTC runs here, no device. */
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "compile.h"
#include "compile_job.h"
#include "test_support.h"

typedef test_cache_fixture fixture;

static const char *k_kernel = "extern \"C\" __global__ void k(int *x) { x[0] = 7; }\n";

/* What batch.c reads from a lookup-only flow. */
static void lookup_answers_follow_the_state(void **state)
{
    (void)state;
    assert_int_equal(asyncrt__compile_lookup_status(ASYNCRT_COMPILE_HIT), ASYNCRT_SUCCESS);
    assert_int_equal(asyncrt__compile_lookup_status(ASYNCRT_COMPILE_MISSED), ASYNCRT_ERROR_NOT_FOUND);
    assert_int_equal(asyncrt__compile_lookup_status(ASYNCRT_COMPILE_UNCACHEABLE), ASYNCRT_ERROR_UNSUPPORTED);
}

/* NEW -> KEYED -> CLAIMED (a miss) -> STORED; then a second job for the same
 * key: KEYED -> HIT. A source the trace cannot follow: UNCACHEABLE, which
 * the lookup leaves alone, and COMPILED, not stored. */
static void a_job_walks_its_states(void **state)
{
    fixture *f = *state;
    asyncrt__arch arch;
    assert_true(asyncrt__arch_parse("compute_80", &arch));
    const asyncrt_compile_options none = ASYNCRT_COMPILE_OPTIONS_INIT;
    asyncrt_program *p = NULL;
    asyncrt_compile_job job;
    asyncrt__job_init(&job, f->ctx, "k.cu", k_kernel, &none, &arch);
    assert_int_equal(job.state, ASYNCRT_COMPILE_NEW);
    assert_ok(f->ctx, asyncrt__job_headers(&job));
    assert_ok(f->ctx, asyncrt__job_key(&job));
    assert_int_equal(job.state, ASYNCRT_COMPILE_KEYED);
    asyncrt__job_lookup(&job, true, &p);
    assert_int_equal(job.state, ASYNCRT_COMPILE_CLAIMED);
    asyncrt_status s = asyncrt__job_nvrtc(&job, &p);
    assert_ok(f->ctx, s);
    asyncrt_dep_set deps = {0};
    char why[512];
    assert_true(asyncrt__job_deps(&job, s, &deps, why, sizeof why));
    asyncrt__job_store(&job, s, p, &deps, why);
    assert_int_equal(job.state, ASYNCRT_COMPILE_STORED);
    asyncrt__dep_set_free(&deps);
    asyncrt__job_free(&job);
    asyncrt_program_destroy(p);

    asyncrt__job_init(&job, f->ctx, "k.cu", k_kernel, &none, &arch);
    assert_ok(f->ctx, asyncrt__job_headers(&job));
    assert_ok(f->ctx, asyncrt__job_key(&job));
    p = NULL;
    asyncrt__job_lookup(&job, false, &p);
    assert_int_equal(job.state, ASYNCRT_COMPILE_HIT);
    assert_non_null(p);
    asyncrt_program_destroy(p);
    asyncrt__job_free(&job);

    const char *probe = "#if __has_include(<nothing.h>)\n#endif\nextern \"C\" __global__ void k() {}\n";
    asyncrt__job_init(&job, f->ctx, "probe.cu", probe, &none, &arch);
    assert_ok(f->ctx, asyncrt__job_headers(&job));
    assert_ok(f->ctx, asyncrt__job_key(&job));
    assert_int_equal(job.state, ASYNCRT_COMPILE_UNCACHEABLE);
    p = NULL;
    asyncrt__job_lookup(&job, true, &p);
    assert_int_equal(job.state, ASYNCRT_COMPILE_UNCACHEABLE);
    s = asyncrt__job_nvrtc(&job, &p);
    assert_ok(f->ctx, s);
    assert_false(asyncrt__job_deps(&job, s, &deps, why, sizeof why));
    asyncrt__job_store(&job, s, p, NULL, why);
    assert_int_equal(job.state, ASYNCRT_COMPILE_COMPILED);
    asyncrt__job_free(&job);
    asyncrt_program_destroy(p);
}

/* A resolved target is compiled for as given: opts->arch is not read again
 * (here it would not even parse), and the lookup hands back what it resolved. */
static void a_resolved_target_is_not_parsed_again(void **state)
{
    fixture *f = *state;
    asyncrt__arch arch, back = {0};
    assert_true(asyncrt__arch_parse("compute_80", &arch));
    asyncrt_compile_options o = {.size = sizeof o, .arch = "not an arch"};
    asyncrt_program *p = NULL;
    assert_ok(f->ctx, asyncrt__program_compile_arch(f->ctx, "k.cu", k_kernel, &o, &arch, &p));
    assert_string_equal(asyncrt_program_arch(p), "compute_80");
    asyncrt_program_destroy(p);
    o.arch = "compute_80";
    uint8_t key[32];
    assert_ok(f->ctx, asyncrt__program_lookup(f->ctx, "k.cu", k_kernel, &o, &p, key, &back));
    assert_true(back.number == 80 && back.ptx && !back.suffix);
    asyncrt_program_destroy(p);
}

/* A miss's cause is the compile's own lookup's to log (compile.c), at
 * ASYNCRT_LOG=1: a lookup-only probe (build/batch.c's) says nothing; the
 * compile that follows says it once. */
static void only_the_compile_says_why_it_missed(void **state)
{
    fixture *f = *state;
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    o.arch = "compute_80";
    asyncrt_context_set_log_level(f->ctx, 1);
    asyncrt_program *p = NULL;
    uint8_t key[32];
    asyncrt__arch back;
    test_capture_begin();
    asyncrt_status s = asyncrt__program_lookup(f->ctx, "k.cu", k_kernel, &o, &p, key, &back);
    char *probe = test_capture_end();
    assert_int_equal(s, ASYNCRT_ERROR_NOT_FOUND);
    if (strstr(probe, "cache miss")) fail_msg("the probe said why it missed:\n%s", probe);
    test_capture_begin();
    s = asyncrt_program_compile(f->ctx, "k.cu", k_kernel, &o, &p);
    char *compiled = test_capture_end();
    assert_ok(f->ctx, s);
    const char *line = "k.cu: cache miss for compute_80: ", *said = strstr(compiled, line);
    if (!said || strstr(said + strlen(line), "cache miss")) fail_msg("the compile's miss not said once:\n%s", compiled);
    asyncrt_program_destroy(p);
    free(probe);
    free(compiled);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lookup_answers_follow_the_state),
        cmocka_unit_test_setup_teardown(a_job_walks_its_states, test_setup_cache_context,
                                        test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(a_resolved_target_is_not_parsed_again, test_setup_cache_context,
                                        test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(only_the_compile_says_why_it_missed, test_setup_cache_context,
                                        test_teardown_cache_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
