#include "jit_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_why.h"
#include "tool_format.h"

#define KERNELS 12
#define CHECK_N (1 << 16)


static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double jit_bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Kernel `index`: out[i] = (index + 2) * in[i], staged through shared memory
 * with cuda::memcpy_async on a cuda::barrier. `salt` makes the source (and
 * so every cache key, NVRTC's own included) new without changing the code. */
char *jit_bench_kernel_source(int index, int salt)
{
    return tool_format(
        "#include <cuda/barrier>\n"
        "#include <cuda/pipeline>\n"
        "#include <cooperative_groups.h>\n"
        "#define ASYNCRT_BENCH_SALT %d\n"
        "namespace cg = cooperative_groups;\n"
        "extern \"C\" __global__ void cold_%d(const float *in, float *out, int n) {\n"
        "    __shared__ float tile[256];\n"
        "    __shared__ cuda::barrier<cuda::thread_scope_block> bar;\n"
        "    auto block = cg::this_thread_block();\n"
        "    if (block.thread_rank() == 0) init(&bar, block.size());\n"
        "    block.sync();\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) cuda::memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float), bar);\n"
        "    bar.arrive_and_wait();\n"
        "    if (i < n) out[i] = %d.0f * tile[threadIdx.x];\n"
        "}\n",
        salt, index, index + 2);
}

/* ---- 12 kernels: one after another vs one batch ------------------------- */

static asyncrt_status fresh_context(asyncrt_context **out, int ordinal, const char *cache_dir)
{
    asyncrt_status s = asyncrt_context_create(out);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_context_set_cache_dir(*out, cache_dir);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_context_open_device(*out, ordinal);
    return s;
}

/* Runs kernel `index` of module m on fresh data and checks it on the CPU. */
static asyncrt_status check_kernel(asyncrt_context *ctx, asyncrt_module *m, int index, bool *ok)
{
    char name[32];
    snprintf(name, sizeof name, "cold_%d", index);
    float *in = malloc(CHECK_N * sizeof *in), *out = malloc(CHECK_N * sizeof *out);
    asyncrt_deviceptr d_in = 0, d_out = 0;
    asyncrt_kernel *k = NULL;
    asyncrt_status s = in && out ? ASYNCRT_SUCCESS : ASYNCRT_ERROR_OUT_OF_MEMORY;
    for (int i = 0; s == ASYNCRT_SUCCESS && i < CHECK_N; i++) in[i] = (float)(rand() % 2001 - 1000) / 7.0f;
    if (s == ASYNCRT_SUCCESS) s = asyncrt_module_get_kernel(m, name, &k);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_memory_alloc(ctx, CHECK_N * sizeof(float), &d_in);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_memory_alloc(ctx, CHECK_N * sizeof(float), &d_out);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_memory_to_device(ctx, d_in, in, CHECK_N * sizeof(float));
    if (s == ASYNCRT_SUCCESS) s = asyncrt_memory_fill(ctx, d_out, 0xff, CHECK_N * sizeof(float), NULL); /* NaN poison */
    int n = CHECK_N;
    void *args[] = {&d_in, &d_out, &n};
    size_t sizes[] = {sizeof d_in, sizeof d_out, sizeof n};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {CHECK_N / 256}, .block = {256}};
    if (s == ASYNCRT_SUCCESS) s = asyncrt_kernel_launch(k, &cfg, args, sizes, 3);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_synchronize(ctx);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_memory_to_host(ctx, out, d_out, CHECK_N * sizeof(float));
    for (int i = 0; s == ASYNCRT_SUCCESS && *ok && i < CHECK_N; i++)
        if (out[i] != (float)(index + 2) * in[i]) {
            fprintf(stderr, "asyncrt-bench: --jit: kernel cold_%d: out[%d] = %g, expected %g\n", index, i,
                    (double)out[i], (double)((float)(index + 2) * in[i]));
            *ok = false;
        }
    asyncrt_memory_free(ctx, d_in);
    asyncrt_memory_free(ctx, d_out);
    free(in);
    free(out);
    return s;
}

typedef struct batch_result {
    double sequential_ms, pch_ms, batch_ms, threads_only_ms;
    unsigned threads;
    bool outputs_ok;
} batch_result;

static char *make_dir(void);
static void remove_dir(const char *dir);

enum { ONE_BY_ONE_PCH, BATCH, BATCH_THREADS, ONE_BY_ONE, MODES };

/* Builds KERNELS salted kernels in a fresh context on an empty cache
 * directory: one by one with precompiled headers (as by default: from the
 * second compile), one batch, one batch with worker processes off, one by
 * one with ASYNCRT_PCH=0. Checks the outputs of what it built. */
static asyncrt_status build_set(asyncrt_context *ctx, int ordinal, int mode, int salt, double *ms, bool *ok)
{
    char *dir = make_dir(), *src[KERNELS] = {NULL};
    asyncrt_context *c = NULL;
    asyncrt_build_request reqs[KERNELS];
    asyncrt_module *mods[KERNELS] = {NULL};
    asyncrt_status s = dir ? ASYNCRT_SUCCESS : ASYNCRT_ERROR_IO;
    for (int i = 0; i < KERNELS; i++)
        if (!(src[i] = jit_bench_kernel_source(i, salt))) s = ASYNCRT_ERROR_OUT_OF_MEMORY;
    /* ASYNCRT_PCH and ASYNCRT_COMPILE_WORKER are the context's to read (no
     * other thread runs now): set before it is made, the worker's kept until
     * the batch has run, then put back as the library read it (env). */
    const char *worker = NULL;
    asyncrt_context_setting(ctx, "ASYNCRT_COMPILE_WORKER", &worker); /* as the library read it */
    if (mode == ONE_BY_ONE) setenv("ASYNCRT_PCH", "0", 1);
    if (mode == BATCH_THREADS) setenv("ASYNCRT_COMPILE_WORKER", "0", 1);
    if (s == ASYNCRT_SUCCESS) s = fresh_context(&c, ordinal, dir);
    unsetenv("ASYNCRT_PCH");
    double t0 = now_ms();
    if (s == ASYNCRT_SUCCESS && (mode == ONE_BY_ONE || mode == ONE_BY_ONE_PCH)) {
        for (int i = 0; s == ASYNCRT_SUCCESS && i < KERNELS; i++)
            s = asyncrt_module_build(c, "cold.cu", src[i], NULL, &mods[i]);
    } else if (s == ASYNCRT_SUCCESS) {
        for (int i = 0; i < KERNELS; i++) reqs[i] = (asyncrt_build_request){.source_name = "cold.cu", .source = src[i]};
        s = asyncrt_build_batch(c, reqs, KERNELS, 0, true);
        for (int i = 0; i < KERNELS; i++) mods[i] = reqs[i].module;
        asyncrt_build_batch_release(reqs, KERNELS);
    }
    *ms = now_ms() - t0;
    if (mode == BATCH_THREADS && worker) setenv("ASYNCRT_COMPILE_WORKER", worker, 1);
    else if (mode == BATCH_THREADS) unsetenv("ASYNCRT_COMPILE_WORKER");
    if (s != ASYNCRT_SUCCESS)
        bench_fail(s, "build mode %d: %s", mode, c ? asyncrt_context_last_error(c) : "");
    for (int i = 0; s == ASYNCRT_SUCCESS && i < KERNELS; i++)
        if ((s = check_kernel(c, mods[i], i, ok)))
            bench_fail(s, "checking cold_%d: %s", i, asyncrt_context_last_error(c));
    for (int i = 0; i < KERNELS; i++) {
        asyncrt_module_destroy(mods[i]);
        free(src[i]);
    }
    asyncrt_context_destroy(c);
    remove_dir(dir);
    free(dir);
    return s;
}

static asyncrt_status measure_batch(asyncrt_context *ctx, int ordinal, int repeats, batch_result *r)
{
    double *t[MODES];
    asyncrt_status s = ASYNCRT_SUCCESS;
    for (int m = 0; m < MODES; m++)
        if (!(t[m] = calloc((size_t)repeats, sizeof(double)))) s = ASYNCRT_ERROR_OUT_OF_MEMORY;
    r->threads = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
    r->outputs_ok = true;
    static int salt = 1000;
    /* New salts and empty caches: every build runs NVRTC; the order rotates
     * so drift (clocks, page cache) is shared. */
    for (int rep = 0; s == ASYNCRT_SUCCESS && rep < repeats; rep++)
        for (int k = 0; s == ASYNCRT_SUCCESS && k < MODES; k++) {
            int mode = (k + rep) % MODES;
            s = build_set(ctx, ordinal, mode, salt++, &t[mode][rep], &r->outputs_ok);
        }
    if (s == ASYNCRT_SUCCESS) {
        r->sequential_ms = jit_bench_median(t[ONE_BY_ONE], repeats);
        r->pch_ms = jit_bench_median(t[ONE_BY_ONE_PCH], repeats);
        r->batch_ms = jit_bench_median(t[BATCH], repeats);
        r->threads_only_ms = jit_bench_median(t[BATCH_THREADS], repeats);
    }
    for (int m = 0; m < MODES; m++) free(t[m]);
    return s;
}

/* ---- fresh processes ------------------------------------------------------ */

typedef struct child_times {
    double total_ms, compile_ms;
    int origin;
} child_times;

/* Runs this binary as a child with the given arguments; parses its one line. */
static bool run_child(const char *args, child_times *t)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return false;
    self[n] = '\0';
    char *cmd = tool_format("'%s' " JIT_BENCH_CHILD_FLAG " %s", self, args);
    FILE *p = cmd ? popen(cmd, "r") : NULL; /* fork + exec at once: nothing CUDA crosses */
    free(cmd);
    if (!p) return false;
    char line[512] = "";
    bool ok = false;
    while (fgets(line, sizeof line, p))
        if (sscanf(line, "JIT_CHILD total_ms=%lf compile_ms=%lf origin=%d", &t->total_ms, &t->compile_ms,
                   &t->origin) == 3)
            ok = true;
    return pclose(p) == 0 && ok;
}

static char *make_dir(void)
{
    char tmpl[] = "/tmp/asyncrt-jitbench-XXXXXX";
    return mkdtemp(tmpl) ? strdup(tmpl) : NULL;
}

static void remove_dir(const char *dir)
{
    char *cmd = dir ? tool_format("rm -rf '%s'", dir) : NULL;
    if (cmd && system(cmd) != 0) fprintf(stderr, "asyncrt-bench: could not remove %s\n", dir);
    free(cmd);
}

typedef struct process_result {
    double cached_ms, memory_ms, hit_call_ms;     /* main to first kernel loaded */
    double sequential_ms, overlapped_ms;          /* empty cache, arch auto */
    double sequential_rest_ms, overlapped_rest_ms; /* the same less the compile call (waits included) */
} process_result;

static asyncrt_status measure_processes(int ordinal, int runs, process_result *r)
{
    char *dir = make_dir();
    if (!dir) return bench_fail(ASYNCRT_ERROR_IO, "cannot make a temporary directory");
    double *cached = calloc((size_t)runs, sizeof(double)), *memory = calloc((size_t)runs, sizeof(double));
    double *hit = calloc((size_t)runs, sizeof(double)), *seq = calloc((size_t)runs, sizeof(double));
    double *ovl = calloc((size_t)runs, sizeof(double));
    double *seq_rest = calloc((size_t)runs, sizeof(double)), *ovl_rest = calloc((size_t)runs, sizeof(double));
    asyncrt_status s = cached && memory && hit && seq && ovl && seq_rest && ovl_rest ? ASYNCRT_SUCCESS
                                                                                     : ASYNCRT_ERROR_OUT_OF_MEMORY;

    /* Fill a cache as `asyncrt-cache warm` does (a batch), keep the image too. */
    char *cache = tool_format("%s/warm", dir), *image_path = tool_format("%s/image", dir);
    asyncrt_context *filler = NULL;
    char *src = jit_bench_kernel_source(0, 1);
    asyncrt_build_request req = {.source_name = "cold.cu", .source = src};
    if (s == ASYNCRT_SUCCESS) s = fresh_context(&filler, ordinal, cache);
    if (s == ASYNCRT_SUCCESS && (s = asyncrt_build_batch(filler, &req, 1, 0, false)))
        bench_fail(s, "filling the cache: %s", asyncrt_context_last_error(filler));
    char arch[32] = "";
    if (s == ASYNCRT_SUCCESS) {
        size_t size;
        const void *image = asyncrt_program_image(req.program, &size);
        snprintf(arch, sizeof arch, "%s", asyncrt_program_arch(req.program));
        FILE *f = fopen(image_path, "wb");
        if (!f || fwrite(image, 1, size, f) != size) s = bench_fail(ASYNCRT_ERROR_IO, "cannot write %s", image_path);
        if (f) fclose(f);
    }
    asyncrt_build_batch_release(&req, 1);
    asyncrt_context_destroy(filler);
    free(src);

    for (int i = 0; s == ASYNCRT_SUCCESS && i < runs; i++) {
        child_times a, b, c, d;
        char *args_cached = tool_format("cached %d '%s'", ordinal, cache);
        char *args_memory = tool_format("memory %d '%s' %s", ordinal, image_path, arch);
        /* Empty caches that know only the device's target (as after any run). */
        char *empty1 = tool_format("%s/empty-%d-a", dir, i), *empty2 = tool_format("%s/empty-%d-b", dir, i);
        asyncrt_context *hint = NULL;
        for (int e = 0; e < 2 && s == ASYNCRT_SUCCESS; e++) {
            if (mkdir(e ? empty2 : empty1, 0700) != 0) s = bench_fail(ASYNCRT_ERROR_IO, "cannot create a cache directory");
            if (s == ASYNCRT_SUCCESS) s = fresh_context(&hint, ordinal, e ? empty2 : empty1); /* opening records the target */
            asyncrt_context_destroy(hint);
        }
        char *args_seq = tool_format("sequential %d '%s' %d", ordinal, empty1, 100 + 2 * i);
        char *args_ovl = tool_format("overlapped %d '%s' %d", ordinal, empty2, 101 + 2 * i);
        bool ok = s == ASYNCRT_SUCCESS && args_cached && args_memory && args_seq && args_ovl;
        if (i % 2) { /* alternate the order */
            ok = ok && run_child(args_memory, &b) && run_child(args_cached, &a);
            ok = ok && run_child(args_ovl, &d) && run_child(args_seq, &c);
        } else {
            ok = ok && run_child(args_cached, &a) && run_child(args_memory, &b);
            ok = ok && run_child(args_seq, &c) && run_child(args_ovl, &d);
        }
        if (ok && a.origin != ASYNCRT_ORIGIN_DISK_CACHE) {
            ok = false;
            bench_fail(ASYNCRT_ERROR_IO, "the warmed child did not hit the disk cache (origin %d)", a.origin);
        } else if (!ok && s == ASYNCRT_SUCCESS) {
            s = bench_fail(ASYNCRT_ERROR_IO, "a child run of the JIT section failed (see its stderr)");
        }
        if (ok) {
            cached[i] = a.total_ms;
            hit[i] = a.compile_ms;
            memory[i] = b.total_ms;
            seq[i] = c.total_ms;
            ovl[i] = d.total_ms;
            seq_rest[i] = c.total_ms - c.compile_ms;
            ovl_rest[i] = d.total_ms - d.compile_ms;
        } else if (s == ASYNCRT_SUCCESS) {
            s = ASYNCRT_ERROR_IO;
        }
        free(args_cached), free(args_memory), free(args_seq), free(args_ovl), free(empty1), free(empty2);
    }
    if (s == ASYNCRT_SUCCESS) {
        r->cached_ms = jit_bench_median(cached, runs);
        r->memory_ms = jit_bench_median(memory, runs);
        r->hit_call_ms = jit_bench_median(hit, runs);
        r->sequential_ms = jit_bench_median(seq, runs);
        r->overlapped_ms = jit_bench_median(ovl, runs);
        r->sequential_rest_ms = jit_bench_median(seq_rest, runs);
        r->overlapped_rest_ms = jit_bench_median(ovl_rest, runs);
    }
    free(cached), free(memory), free(hit), free(seq), free(ovl), free(seq_rest), free(ovl_rest), free(cache),
        free(image_path);
    remove_dir(dir);
    free(dir);
    return s;
}

int jit_bench_run(asyncrt_context *ctx, int ordinal, int repeats, bool json)
{
    batch_result b = {0};
    process_result p = {0};
    srand((unsigned)time(NULL));
    bench_why_clear();
    asyncrt_status s = measure_batch(ctx, ordinal, repeats, &b);
    if (s == ASYNCRT_SUCCESS) s = measure_processes(ordinal, 2 * repeats + 1, &p);
    if (s != ASYNCRT_SUCCESS) {
        fprintf(stderr, "asyncrt-bench: --jit: %s\n", bench_why(ctx));
        return 1;
    }
    double pct = 100.0 * b.batch_ms / b.sequential_ms;
    if (json) {
        printf("{\n  \"jit_cold_start\": {\n"
               "    \"kernels\": %d, \"cpus\": %u, \"repeats\": %d,\n"
               "    \"sequential_ms\": %.1f, \"batch_ms\": %.1f, \"batch_pct_of_sequential\": %.1f,\n"
               "    \"sequential_pch_ms\": %.1f, \"sequential_pch_pct_of_sequential\": %.1f,\n"
               "    \"batch_threads_only_ms\": %.1f,\n"
               "    \"batch_outputs_match_cpu\": %s,\n"
               "    \"fresh_process_warm_cache_ms\": %.2f, \"fresh_process_image_in_memory_ms\": %.2f,\n"
               "    \"warm_cache_extra_ms\": %.2f, \"cache_hit_call_ms\": %.3f,\n"
               "    \"empty_cache_sequential_ms\": %.1f, \"empty_cache_overlapped_ms\": %.1f,\n"
               "    \"overlap_saving_ms\": %.1f,\n"
               "    \"empty_cache_sequential_outside_compile_ms\": %.1f,\n"
               "    \"empty_cache_overlapped_outside_compile_ms\": %.1f\n  }\n}\n",
               KERNELS, b.threads, repeats, b.sequential_ms, b.batch_ms, pct, b.pch_ms,
               100.0 * b.pch_ms / b.sequential_ms, b.threads_only_ms,
               b.outputs_ok ? "true" : "false",
               p.cached_ms, p.memory_ms, p.cached_ms - p.memory_ms, p.hit_call_ms, p.sequential_ms,
               p.overlapped_ms, p.sequential_ms - p.overlapped_ms, p.sequential_rest_ms, p.overlapped_rest_ms);
    } else {
        printf("JIT cold start (%d CCCL kernels, %u CPUs, medians of %d / %d runs)\n", KERNELS, b.threads,
               repeats, 2 * repeats + 1);
        printf("  build 12 kernels one by one      %9.1f ms  (ASYNCRT_PCH=0)\n", b.sequential_ms);
        printf("  one by one, precompiled headers  %9.1f ms  (%.1f%% of sequential; the default from the second "
               "compile)\n", b.pch_ms, 100.0 * b.pch_ms / b.sequential_ms);
        printf("  build 12 kernels in one batch    %9.1f ms  (%.1f%% of sequential; goal <= 20%%)%s\n",
               b.batch_ms, pct, b.outputs_ok ? "" : "  OUTPUTS WRONG");
        printf("  the batch, threads only          %9.1f ms  (no worker processes: NVRTC runs one compile at a "
               "time per process)\n", b.threads_only_ms);
        printf("  fresh process, warmed cache      %9.2f ms  main to first kernel loaded\n", p.cached_ms);
        printf("  fresh process, image in memory   %9.2f ms  (cache costs %+.2f ms; goal within 5 ms; the hit "
               "call itself %.3f ms)\n", p.memory_ms, p.cached_ms - p.memory_ms, p.hit_call_ms);
        printf("  empty cache, auto: open, compile %9.1f ms\n", p.sequential_ms);
        printf("  empty cache, auto: overlapped    %9.1f ms  (saves %.1f ms)\n", p.overlapped_ms,
               p.sequential_ms - p.overlapped_ms);
        printf("  the same, outside the compile    %9.1f ms vs %.1f ms  (device start-up and load not hidden vs "
               "hidden; NVRTC's own time varies more between processes)\n", p.sequential_rest_ms,
               p.overlapped_rest_ms);
    }
    return b.outputs_ok ? 0 : 1;
}

/* ---- the child ------------------------------------------------------------ */

static void *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = n > 0 ? malloc((size_t)n + 1) : NULL;
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* argv: [self, --jit-child, mode, ordinal, dir-or-image, arch-or-salt].
 * The clock starts first thing: "from main". */
int jit_bench_child(int argc, char **argv)
{
    double t0 = now_ms();
    if (argc < 5) return 2;
    const char *mode = argv[2], *path = argv[4];
    int ordinal = atoi(argv[3]);
    bool memory = !strcmp(mode, "memory"), overlapped = !strcmp(mode, "overlapped");
    asyncrt_program *program = NULL;
    void *image = NULL;
    size_t image_size = 0;
    if (memory) { /* the image a program would embed: read before the clock restarts */
        if (argc < 6) return 2;
        if (!(image = read_all(path, &image_size))) return 1;
        t0 = now_ms();
    }
    asyncrt_context *ctx = NULL;
    asyncrt_module *module = NULL;
    asyncrt_kernel *kernel = NULL;
    asyncrt_status s = asyncrt_context_create(&ctx);
    /* As a program that embeds it: a program around the bytes (a copy), once there is a context. */
    if (s == ASYNCRT_SUCCESS && memory) s = asyncrt_program_from_image(ctx, image, image_size, argv[5], &program);
    free(image);
    if (s == ASYNCRT_SUCCESS && !memory) s = asyncrt_context_set_cache_dir(ctx, path);
    if (s == ASYNCRT_SUCCESS) s = overlapped ? asyncrt_context_open_device_async(ctx, ordinal)
                                             : asyncrt_context_open_device(ctx, ordinal);
    double c0 = now_ms(), c1 = c0;
    if (s == ASYNCRT_SUCCESS && !memory) {
        int salt = argc > 5 ? atoi(argv[5]) : 1;
        char *src = jit_bench_kernel_source(0, salt);
        s = src ? asyncrt_program_compile(ctx, "cold.cu", src, NULL, &program) : ASYNCRT_ERROR_OUT_OF_MEMORY;
        c1 = now_ms();
        free(src);
    }
    if (s == ASYNCRT_SUCCESS) s = asyncrt_module_load(ctx, program, &module);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_module_get_kernel(module, "cold_0", &kernel);
    double t1 = now_ms();
    if (s != ASYNCRT_SUCCESS) fprintf(stderr, "asyncrt-bench child %s: %s\n", mode, asyncrt_context_last_error(ctx));
    else printf("JIT_CHILD total_ms=%.3f compile_ms=%.3f origin=%d\n", t1 - t0, c1 - c0,
                memory ? -1 : (int)asyncrt_program_origin_of(program));
    asyncrt_module_destroy(module);
    asyncrt_program_destroy(program);
    asyncrt_context_destroy(ctx);
    return s == ASYNCRT_SUCCESS ? 0 : 1;
}
