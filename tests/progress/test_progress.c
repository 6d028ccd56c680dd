/* The progress callback (asyncrt/runtime.h, "progress"): what a compile, a
 * cache hit, a link, a bundle, a module build and a batch tell it, in
 * order, with the caller's pointer, on which threads, and never after the
 * call returns; a NULL callback, and options too old to hold one, compile
 * as before; the callback is in no cache key. Real NVRTC, on the fake
 * one-device driver (ASYNCRT_LIBCUDA) for the loads. */
#define _DEFAULT_SOURCE /* usleep */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncrt/bundle.h"
#include "asyncrt/link.h"
#include "test_support.h"

#define ARCH "sm_90"
#define MAX_EVENTS 64

typedef struct told {
    asyncrt_progress_phase phase;
    char source[160], arch[32];
    long long count;
    bool on_caller; /* told on the thread that made the call */
} told;

typedef struct recorder {
    pthread_mutex_t lock;
    pthread_t caller;
    size_t n;
    told events[MAX_EVENTS];
    int wrong_user; /* calls whose user pointer was not this recorder */
    int short_size; /* events whose size does not cover the struct */
} recorder;

static recorder *g_expected; /* the recorder a call was given: each call's user pointer must be it */

static void record(const asyncrt_progress_event *e, void *user)
{
    recorder *r = user;
    if (r != g_expected) { /* not ours: count it in the expected one, and stop */
        __atomic_add_fetch(&g_expected->wrong_user, 1, __ATOMIC_SEQ_CST);
        return;
    }
    pthread_mutex_lock(&r->lock); /* no assert here: a batch tells from its pool threads */
    r->short_size += e->size < sizeof *e;
    if (r->n < MAX_EVENTS) {
        told *t = &r->events[r->n++];
        t->phase = e->phase;
        snprintf(t->source, sizeof t->source, "%s", e->source_name);
        snprintf(t->arch, sizeof t->arch, "%s", e->arch);
        t->count = e->count;
        t->on_caller = pthread_equal(pthread_self(), r->caller);
    }
    pthread_mutex_unlock(&r->lock);
}

static void recorder_reset(recorder *r)
{
    pthread_mutex_lock(&r->lock);
    r->n = 0;
    r->wrong_user = r->short_size = 0;
    r->caller = pthread_self();
    pthread_mutex_unlock(&r->lock);
    g_expected = r;
}

/* The phases told, as letters: L(ookup) C(ompile) K (linK) O (lOad) H(eader). */
static const char *phases(recorder *r)
{
    static char text[MAX_EVENTS + 1];
    static const char letters[] = "LCKOH";
    size_t i = 0;
    for (; i < r->n; i++) text[i] = r->events[i].phase <= 4 ? letters[r->events[i].phase] : '?';
    text[i] = '\0';
    return text;
}

static void assert_phases(recorder *r, const char *want)
{
    if (strcmp(phases(r), want)) fail_msg("phases told: \"%s\", expected \"%s\"", phases(r), want);
    assert_int_equal(r->wrong_user, 0);
    assert_int_equal(r->short_size, 0);
}

/* Every event names `source` (a prefix, for a link's list) and `arch`, on the caller's thread. */
static void assert_all_about(recorder *r, const char *source, const char *arch)
{
    for (size_t i = 0; i < r->n; i++) {
        if (strncmp(r->events[i].source, source, strlen(source)) || strcmp(r->events[i].arch, arch))
            fail_msg("event %zu names %s for %s, expected %s for %s", i, r->events[i].source, r->events[i].arch,
                     source, arch);
        assert_true(r->events[i].on_caller);
        if (r->events[i].phase != ASYNCRT_PROGRESS_BUNDLE_HEADER) assert_int_equal(r->events[i].count, -1);
    }
}

static const char k_source[] = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] += 1.0f; }\n";

static asyncrt_compile_options told_options(recorder *r)
{
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    o.arch = ARCH;
    o.progress = record;
    o.progress_user = r;
    return o;
}

/* A miss: the lookup, then NVRTC; the same again: the lookup alone (a
 * memory hit); a fresh context on the same folder: the lookup alone (a disk
 * hit). The callback is not in the key: without it, the same program hits. */
static void compile_then_hits(void **state)
{
    test_cache_fixture *f = *state;
    recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    asyncrt_compile_options o = told_options(&r);
    asyncrt_program *p = NULL;
    recorder_reset(&r);
    assert_ok(f->ctx, asyncrt_program_compile(f->ctx, "k.cu", k_source, &o, &p));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_COMPILED);
    assert_phases(&r, "LC");
    assert_all_about(&r, "k.cu", ARCH);
    asyncrt_program_destroy(p);

    recorder_reset(&r);
    assert_ok(f->ctx, asyncrt_program_compile(f->ctx, "k.cu", k_source, &o, &p));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_MEMORY_CACHE);
    assert_phases(&r, "L");
    assert_all_about(&r, "k.cu", ARCH);
    asyncrt_program_destroy(p);

    asyncrt_context *other = NULL;
    assert_ok(NULL, asyncrt_context_create(&other));
    assert_ok(other, asyncrt_context_set_cache_dir(other, f->dir));
    recorder_reset(&r);
    assert_ok(other, asyncrt_program_compile(other, "k.cu", k_source, &o, &p));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_DISK_CACHE);
    assert_phases(&r, "L");
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(other);

    /* No callback, or options built before it existed: the same key, nothing told. */
    asyncrt_compile_options plain = ASYNCRT_COMPILE_OPTIONS_INIT, old = ASYNCRT_COMPILE_OPTIONS_INIT;
    plain.arch = old.arch = ARCH;
    old.size = offsetof(asyncrt_compile_options, progress);
    old.progress = record, old.progress_user = &r; /* past the caller's size: never read */
    recorder_reset(&r);
    assert_ok(f->ctx, asyncrt_program_compile(f->ctx, "k.cu", k_source, &plain, &p));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_MEMORY_CACHE);
    asyncrt_program_destroy(p);
    assert_ok(f->ctx, asyncrt_program_compile(f->ctx, "k.cu", k_source, &old, &p));
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_MEMORY_CACHE);
    asyncrt_program_destroy(p);
    assert_phases(&r, "");
}

/* A compile error is told the same phases, and nothing after the call. */
static void failed_compile(void **state)
{
    test_cache_fixture *f = *state;
    recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    asyncrt_compile_options o = told_options(&r);
    asyncrt_program *p = NULL;
    recorder_reset(&r);
    assert_status(f->ctx, ASYNCRT_ERROR_COMPILE,
                  asyncrt_program_compile(f->ctx, "bad.cu", "__global__ void k() { undefined_name(); }", &o, &p));
    assert_phases(&r, "LC");
    assert_all_about(&r, "bad.cu", ARCH);
}

/* A link: the lookup, then nvJitLink, naming its inputs; again: the lookup alone. */
static void link_then_hit(void **state)
{
    test_cache_fixture *f = *state;
    static const char a[] = "extern __device__ float twice(float);\n"
                            "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n";
    static const char b[] = "__device__ float twice(float v) { return 2.0f * v; }\n";
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    o.arch = ARCH;
    o.options = (const char *[]){"-rdc=true"};
    o.option_count = 1;
    asyncrt_program *pa = NULL, *pb = NULL, *linked = NULL;
    assert_ok(f->ctx, asyncrt_program_compile(f->ctx, "a.cu", a, &o, &pa));
    assert_ok(f->ctx, asyncrt_program_compile(f->ctx, "b.cu", b, &o, &pb));
    recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    for (int round = 0; round < 2; round++) {
        asyncrt_link *l = NULL;
        assert_ok(f->ctx, asyncrt_link_create(f->ctx, ARCH, &l));
        assert_ok(f->ctx, asyncrt_link_add_program(l, pa));
        assert_ok(f->ctx, asyncrt_link_add_program(l, pb));
        assert_ok(f->ctx, asyncrt_link_set_progress(l, record, &r));
        recorder_reset(&r);
        assert_ok(f->ctx, asyncrt_link_complete(l, &linked));
        assert_phases(&r, round ? "L" : "LK");
        assert_all_about(&r, "a.cu b.cu", ARCH);
        asyncrt_program_destroy(linked);
        /* Switched off again: nothing told. */
        assert_ok(f->ctx, asyncrt_link_set_progress(l, NULL, &r));
        recorder_reset(&r);
        assert_ok(f->ctx, asyncrt_link_complete(l, &linked));
        assert_phases(&r, "");
        asyncrt_program_destroy(linked);
        asyncrt_link_destroy(l);
    }
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_link_set_progress(NULL, record, &r));
    asyncrt_program_destroy(pa);
    asyncrt_program_destroy(pb);
}

static void write_file(const char *dir, const char *name, const char *text, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fputs(text, file);
    assert_int_equal(fclose(file), 0);
    /* A header changed in the coarse clock tick of its compile is not recorded (it may still change). */
    usleep(50 * 1000);
}

/* A bundle: the recording compile (its lookup, NVRTC), each header read for
 * the first time with the count so far (two of them here), then the check's
 * compile; with no_check, no check. */
static void bundle_tells_each_header(void **state)
{
    test_cache_fixture *f = *state;
    char src[4096], path[4096];
    write_file(f->dir, "one.cuh", "#include \"two.cuh\"\n__device__ float one(float v) { return two(v) + 1.0f; }\n",
               path, sizeof path);
    write_file(f->dir, "two.cuh", "__device__ float two(float v) { return 2.0f * v; }\n", path, sizeof path);
    write_file(f->dir, "b.cu",
               "#include \"one.cuh\"\nextern \"C\" __global__ void k(float *x) { x[threadIdx.x] = one(x[0]); }\n",
               src, sizeof src);
    recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    for (int no_check = 0; no_check < 2; no_check++) {
        asyncrt_bundle_make_options o = ASYNCRT_BUNDLE_MAKE_OPTIONS_INIT;
        const char *sources[] = {src};
        const char *dirs[] = {f->dir};
        o.sources = sources, o.source_count = 1;
        o.include_dirs = dirs, o.include_dir_count = 1;
        o.no_check = no_check;
        o.progress = record, o.progress_user = &r;
        void *data = NULL;
        size_t size = 0;
        recorder_reset(&r);
        assert_ok(f->ctx, asyncrt_bundle_make(f->ctx, &o, &data, &size));
        assert_phases(&r, no_check ? "LCHH" : "LCHHLC");
        assert_all_about(&r, src, ARCH);
        assert_int_equal(r.events[2].count, 1);
        assert_int_equal(r.events[3].count, 2);
        assert_non_null(strstr(r.events[2].source, "b.cu"));
        free(data);
    }
    /* Options of the first layout: made as before, nothing told. */
    asyncrt_bundle_make_options old = ASYNCRT_BUNDLE_MAKE_OPTIONS_INIT;
    const char *sources[] = {src};
    old.size = offsetof(asyncrt_bundle_make_options, progress);
    const char *dirs[] = {f->dir};
    old.sources = sources, old.source_count = 1, old.no_check = true;
    old.include_dirs = dirs, old.include_dir_count = 1;
    void *data = NULL;
    size_t size = 0;
    recorder_reset(&r);
    assert_ok(f->ctx, asyncrt_bundle_make(f->ctx, &old, &data, &size));
    assert_phases(&r, "");
    free(data);
}

/* asyncrt_module_build on the fake device: the lookup, NVRTC, the load;
 * again: the lookup and the load. */
static void module_build_tells_the_load(void **state)
{
    test_cache_fixture *f = *state;
    assert_ok(f->ctx, asyncrt_context_open_device(f->ctx, 0));
    recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    asyncrt_compile_options o = told_options(&r);
    o.arch = NULL; /* the device's */
    for (int round = 0; round < 2; round++) {
        asyncrt_module *m = NULL;
        recorder_reset(&r);
        assert_ok(f->ctx, asyncrt_module_build(f->ctx, "k.cu", k_source, &o, &m));
        assert_phases(&r, round ? "LO" : "LCO");
        assert_all_about(&r, "k.cu", ARCH);
        asyncrt_module_destroy(m);
    }
}

/* A batch tells from its pool threads: each request's compile once (in a
 * worker or here), after a lookup; with load, each request's load (a
 * duplicate's too); everything before the batch returns. */
static void batch_tells_every_request(void **state)
{
    test_cache_fixture *f = *state;
    assert_ok(f->ctx, asyncrt_context_open_device(f->ctx, 0));
    recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    asyncrt_compile_options o = told_options(&r);
    o.arch = NULL;
    static const char *const names[] = {"b0.cu", "b1.cu", "b2.cu"};
    char sources[3][128];
    asyncrt_build_request reqs[4];
    for (int i = 0; i < 3; i++) {
        snprintf(sources[i], sizeof sources[i], "extern \"C\" __global__ void k(float *x) { x[0] = %d.0f; }\n", i);
        reqs[i] = (asyncrt_build_request){.source_name = names[i], .source = sources[i], .opts = &o};
    }
    reqs[3] = reqs[2]; /* a duplicate: built once, loaded twice */
    recorder_reset(&r);
    assert_ok(f->ctx, asyncrt_build_batch(f->ctx, reqs, 4, 2, true));
    size_t at_return = r.n;
    for (int i = 0; i < 3; i++) {
        int lookups = 0, compiles = 0, loads = 0;
        bool looked_first = false;
        for (size_t e = 0; e < r.n; e++) {
            if (strcmp(r.events[e].source, names[i])) continue;
            assert_string_equal(r.events[e].arch, ARCH);
            lookups += r.events[e].phase == ASYNCRT_PROGRESS_CACHE_LOOKUP;
            if (r.events[e].phase == ASYNCRT_PROGRESS_COMPILE) looked_first = lookups > 0, compiles++;
            loads += r.events[e].phase == ASYNCRT_PROGRESS_LOAD;
        }
        if (compiles != 1 || !looked_first || lookups < 1 || loads != (i == 2 ? 2 : 1))
            fail_msg("%s: %d lookups, %d compiles (after a lookup: %d), %d loads; told: %s", names[i], lookups,
                     compiles, looked_first, loads, phases(&r));
    }
    assert_int_equal(r.wrong_user, 0);
    for (int i = 0; i < 4; i++) asyncrt_module_destroy(reqs[i].module);
    asyncrt_build_batch_release(reqs, 4);
    usleep(50 * 1000); /* a straggler thread would tell now */
    assert_int_equal(r.n, at_return);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(compile_then_hits, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(failed_compile, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(link_then_hit, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(bundle_tells_each_header, test_setup_cache_context,
                                        test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(module_build_tells_the_load, test_setup_cache_context,
                                        test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(batch_tells_every_request, test_setup_cache_context,
                                        test_teardown_cache_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
