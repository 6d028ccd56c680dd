/* The program cache under concurrency and damage: 8 processes compile the
 * same and different sources into one cache directory at once, 50 rounds
 * each, each round in a fresh context (so every hit comes from disk), while a
 * ninth process truncates, overwrites, garbles and deletes entries at random.
 * Every program a process gets must be byte-for-byte the image a fresh
 * compile (no cache) produced, whether it came from NVRTC or the disk: a
 * partially written or damaged entry that got through decoding would differ.
 * The GPU variant (argument "gpu") also loads each program, launches its
 * kernel on fresh random data with the output poisoned, and checks every
 * element against a CPU reference.
 *
 * A second test (CPU only) evicts under the same concurrency with a small
 * cap: see test_eviction_under_concurrency.
 *
 * No device is opened in the parent: CUDA is not fork-safe, so only the
 * children touch the driver (a probe child decides whether the GPU variant
 * skips). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_support.h"

#define WORKERS 8
#define ROUNDS 50 /* 5 under a sanitizer (ASYNCRT_UNDER_SANITIZER: gpu-check.sh, valgrind-cpu-tests.sh) */
#define SOURCES 4        /* of the damage test */
#define EVICT_SOURCES 20 /* of the eviction test: sources 0..19 */
#define EVICT_ROUNDS 200 /* 20 under a sanitizer */
#define N 1000

/* Source s computes y = x * 2^(s+1) + i: exact in float, FMA or not. */
static char g_source[EVICT_SOURCES][512];
static unsigned char *g_ref[EVICT_SOURCES];
static size_t g_ref_size[EVICT_SOURCES];
static bool g_gpu;
static int g_rounds = ROUNDS;
static char *g_dir;
/* PTX loads on any sm_80+ device, and compiles without one; but not from an
 * NVRTC newer than the driver: the GPU variant then takes the device's own
 * CUBIN (probe_device says so), its subject being the cache, not the JIT. */
static char k_arch[16] = "compute_80";

/* Lock-free atomics are address-free, so they work across the processes that map them. */
typedef struct counters {
    atomic_long compiled, disk_hits, memory_hits, launches, damaged;
    atomic_long evictions, max_bytes_seen, monitor_samples;
} counters;
static counters *g_count; /* shared between the processes */

static void make_sources(void)
{
    for (int s = 0; s < EVICT_SOURCES; s++)
        snprintf(g_source[s], sizeof g_source[s],
                 "extern \"C\" __global__ void k(const float *x, float *y, int n) {\n"
                 "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "    if (i < n) y[i] = x[i] * %d.0f + (float)i;\n"
                 "}\n",
                 2 << s);
}

static asyncrt_program *compile(asyncrt_context *ctx, int s)
{
    asyncrt_compile_options o = {.size = sizeof o, .arch = k_arch};
    asyncrt_program *p = NULL;
    char name[32];
    snprintf(name, sizeof name, "stress%d.cu", s);
    if (asyncrt_program_compile(ctx, name, g_source[s], &o, &p) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "compile of source %d failed: %s\n", s, asyncrt_context_last_error(ctx));
        return NULL;
    }
    return p;
}

/* The reference images: fresh compiles with both caches off, made in a child
 * process. On a machine with a driver, NVRTC 13 loads and initialises libcuda
 * while it compiles (seen on the H100 with LD_DEBUG), and CUDA does not
 * survive fork(): had this process compiled anything, no worker could use the
 * GPU (cuInit: CUDA_ERROR_NOT_INITIALIZED). */
static void make_references(void)
{
    char *dir = test_make_temp_dir("asyncrt-stress-ref");
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        asyncrt_context *ctx = NULL;
        int bad = asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS ||
                  asyncrt_context_set_cache_dir(ctx, NULL) != ASYNCRT_SUCCESS;
        for (int s = 0; !bad && s < EVICT_SOURCES; s++) {
            asyncrt_program *p = compile(ctx, s);
            size_t size = 0;
            const void *image = p ? asyncrt_program_image(p, &size) : NULL;
            char path[512];
            snprintf(path, sizeof path, "%s/%d.bin", dir, s);
            FILE *f = image ? fopen(path, "wb") : NULL;
            bad = !f || fwrite(image, 1, size, f) != size;
            if (f && fclose(f) != 0) bad = 1;
            asyncrt_program_destroy(p);
        }
        asyncrt_context_destroy(ctx);
        _exit(bad);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int s = 0; s < EVICT_SOURCES; s++) {
        free(g_ref[s]);
        char path[512];
        snprintf(path, sizeof path, "%s/%d.bin", dir, s);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        g_ref_size[s] = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        g_ref[s] = malloc(g_ref_size[s]);
        assert_non_null(g_ref[s]);
        assert_int_equal(fread(g_ref[s], 1, g_ref_size[s], f), g_ref_size[s]);
        fclose(f);
    }
    test_remove_tree(dir);
    free(dir);
}

/* Loads p, runs k on random data into a poisoned output, checks every element. */
static int launch_and_verify(asyncrt_context *ctx, const asyncrt_program *p, int s, unsigned *rng)
{
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)(rand_r(rng) % 2001 - 1000) / 64.0f;
    memset(y, 0xFF, sizeof y);
    asyncrt_module *module = NULL;
    asyncrt_kernel *kernel = NULL;
    asyncrt_deviceptr dx = 0, dy = 0;
    int bad = 0;
    asyncrt_status st = asyncrt_module_load(ctx, p, &module);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_module_get_kernel(module, "k", &kernel);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_memory_alloc(ctx, sizeof x, &dx);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_memory_alloc(ctx, sizeof y, &dy);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_memory_to_device(ctx, dx, x, sizeof x);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_memory_to_device(ctx, dy, y, sizeof y);
    int n = N;
    void *args[] = {&dx, &dy, &n};
    size_t sizes[] = {sizeof dx, sizeof dy, sizeof n};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {(N + 127) / 128, 1, 1}, .block = {128, 1, 1}};
    if (st == ASYNCRT_SUCCESS) st = asyncrt_kernel_launch(kernel, &cfg, args, sizes, 3);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_memory_to_host(ctx, y, dy, sizeof y);
    if (st != ASYNCRT_SUCCESS) {
        fprintf(stderr, "source %d: %s: %s\n", s, asyncrt_status_string(st), asyncrt_context_last_error(ctx));
        bad = 1;
    }
    for (int i = 0; !bad && i < N; i++) {
        float want = x[i] * (float)(2 << s) + (float)i;
        if (memcmp(&y[i], &want, sizeof want) != 0) {
            fprintf(stderr, "source %d: y[%d] = %g, expected %g\n", s, i, (double)y[i], (double)want);
            bad = 1;
        }
    }
    asyncrt_memory_free(ctx, dx);
    asyncrt_memory_free(ctx, dy);
    asyncrt_module_destroy(module);
    if (!bad) atomic_fetch_add_explicit(&g_count->launches, 1, memory_order_relaxed);
    return bad;
}

/* One worker: even rounds the shared source 0, odd rounds one that depends
 * on the worker and the round. Returns the number of bad rounds. */
static int worker(int w, int rounds)
{
    unsigned rng = (unsigned)(w * 7919 + getpid());
    int bad = 0;
    for (int r = 0; r < rounds; r++) {
        int s = r % 2 == 0 ? 0 : (w + r) % SOURCES;
        asyncrt_context *ctx = NULL;
        if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return rounds;
        asyncrt_status st = asyncrt_context_set_cache_dir(ctx, g_dir);
        if (st == ASYNCRT_SUCCESS && g_gpu) st = asyncrt_context_open_device(ctx, 0);
        asyncrt_program *p = st == ASYNCRT_SUCCESS ? compile(ctx, s) : NULL;
        if (!p) {
            fprintf(stderr, "worker %d round %d: %s\n", w, r, asyncrt_context_last_error(ctx));
            bad++;
        } else {
            size_t size = 0;
            const void *image = asyncrt_program_image(p, &size);
            asyncrt_program_origin origin = asyncrt_program_origin_of(p);
            if (size != g_ref_size[s] || memcmp(image, g_ref[s], size) != 0) {
                fprintf(stderr, "worker %d round %d: source %d's image (%zu bytes, origin %d) differs from a fresh "
                        "compile's (%zu bytes)\n", w, r, s, size, (int)origin, g_ref_size[s]);
                bad++;
            } else if (g_gpu) {
                bad += launch_and_verify(ctx, p, s, &rng);
            }
            atomic_long *c = origin == ASYNCRT_ORIGIN_COMPILED     ? &g_count->compiled
                             : origin == ASYNCRT_ORIGIN_DISK_CACHE ? &g_count->disk_hits
                                                                   : &g_count->memory_hits;
            atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
            asyncrt_program_destroy(p);
        }
        asyncrt_context_destroy(ctx);
    }
    return bad;
}

/* Damages a random file of the cache directory (entries and the temporary
 * files of writes in flight alike), every few milliseconds, until killed. */
static void damager(void)
{
    unsigned rng = (unsigned)getpid();
    for (;;) {
        struct timespec pause = {0, (long)(2 + rand_r(&rng) % 15) * 1000000L};
        nanosleep(&pause, NULL);
        DIR *dir = opendir(g_dir);
        if (!dir) continue;
        char names[64][128];
        int n = 0;
        struct dirent *e;
        while ((e = readdir(dir)) != NULL && n < 64)
            if (e->d_name[0] != '.' && strlen(e->d_name) < sizeof names[0]) strcpy(names[n++], e->d_name);
        closedir(dir);
        if (n == 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", g_dir, names[rand_r(&rng) % n]);
        int fd = open(path, O_WRONLY);
        if (fd < 0) continue;
        off_t size = lseek(fd, 0, SEEK_END);
        unsigned char junk[64];
        for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rand_r(&rng);
        bool done = true;
        switch (rand_r(&rng) % 4) {
        case 0: done = ftruncate(fd, size > 0 ? rand_r(&rng) % size : 0) == 0; break;      /* truncated */
        case 1: done = size > 0 && pwrite(fd, junk, 1, rand_r(&rng) % size) == 1; break;  /* one byte */
        case 2: done = ftruncate(fd, 0) == 0 && write(fd, junk, sizeof junk) > 0; break;  /* garbage */
        default: done = unlink(path) == 0; break;                                          /* gone */
        }
        close(fd);
        if (done) atomic_fetch_add_explicit(&g_count->damaged, 1, memory_order_relaxed);
    }
}

/* 0 when a device can be opened, 77 when none: in a child, see above. Also
 * sets k_arch: compute_80 where this driver loads its PTX, else the
 * device's sm_XY. */
static int probe_device(void)
{
    char *arch = mmap(NULL, sizeof k_arch, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (arch == MAP_FAILED) return 1;
    snprintf(arch, sizeof k_arch, "%s", k_arch);
    pid_t pid = fork();
    if (pid == 0) {
        asyncrt_context *ctx = test_open_device_or_skip("test_cache_stress_gpu");
        const char *why = ctx ? test_unloadable_reason(ctx, k_arch) : NULL;
        if (why) {
            const asyncrt_device_info *d = asyncrt_context_device(ctx);
            snprintf(arch, sizeof k_arch, "sm_%d%d", d->cc_major, d->cc_minor);
            printf("test_cache_stress_gpu: %s instead of %s: %s\n", arch, k_arch, why);
        }
        asyncrt_context_destroy(ctx);
        fflush(stdout);
        _exit(ctx ? 0 : ASYNCRT_TEST_SKIP);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    snprintf(k_arch, sizeof k_arch, "%s", arch);
    munmap(arch, sizeof k_arch);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* A fresh cache directory and zeroed shared counters, then `background`
 * (killed at the end) and WORKERS processes running worker_fn(w, rounds);
 * returns how many workers failed. */
static int run_processes(const char *prefix, void (*background)(void), int (*worker_fn)(int, int), int rounds)
{
    g_dir = test_make_temp_dir(prefix);
    g_count = mmap(NULL, sizeof *g_count, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(g_count != MAP_FAILED);
    memset((void *)g_count, 0, sizeof *g_count);
    fflush(NULL);
    pid_t helper = fork();
    assert_true(helper >= 0);
    if (helper == 0) background();
    pid_t pids[WORKERS];
    for (int w = 0; w < WORKERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) _exit(worker_fn(w, rounds) ? 1 : 0);
    }
    int failed = 0;
    for (int w = 0; w < WORKERS; w++) {
        int status = 0;
        waitpid(pids[w], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "worker %d failed (status 0x%x)\n", w, status);
            failed++;
        }
    }
    kill(helper, SIGKILL);
    waitpid(helper, NULL, 0);
    return failed;
}

static void test_cache_under_damage(void **state)
{
    (void)state;
    make_references();
    int failed = run_processes("asyncrt-cache-stress", damager, worker, g_rounds);
    printf("%d processes x %d rounds: %ld compiled, %ld from disk, %ld from memory, %ld launches verified; "
           "%ld entries damaged meanwhile\n",
           WORKERS, g_rounds, g_count->compiled, g_count->disk_hits, g_count->memory_hits, g_count->launches,
           g_count->damaged);
    assert_int_equal(failed, 0);
    assert_int_equal(g_count->compiled + g_count->disk_hits + g_count->memory_hits, WORKERS * g_rounds);
    /* Both paths and the damage must actually have happened for the test to
     * mean anything (in the short run under a sanitizer they may not). */
    if (g_rounds == ROUNDS) {
        assert_true(g_count->disk_hits > 0);
        assert_true(g_count->compiled > SOURCES);
        assert_true(g_count->damaged > 0);
    }
    if (g_gpu) assert_int_equal(g_count->launches, WORKERS * g_rounds);
    test_remove_tree(g_dir);
    free(g_dir);
    munmap((void *)g_count, sizeof *g_count);
}

/* ---- eviction under concurrency ----------------------------------------
 * 8 processes x 200 lookups, each in a fresh context, over 20 cheap sources
 * (7 in 8 lookups go to 4 hot ones) with a cap that holds about 6 compiles:
 * entries are evicted while other processes read and write them. Every
 * program must equal a fresh compile's, no lookup may fail, and the
 * directory must end at most one entry over the cap. A monitor samples the
 * size meanwhile: between one process's store and its eviction pass the
 * directory may hold up to one entry per concurrent writer over the cap. */

static uint64_t directory_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    uint64_t bytes = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        bool counted = (n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0) || (n > 3 && strcmp(e->d_name + n - 3, ".mf") == 0);
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (counted && lstat(path, &st) == 0) bytes += (uint64_t)st.st_size;
    }
    closedir(d);
    return bytes;
}

static int evict_worker(int w, int rounds)
{
    unsigned rng = (unsigned)(w * 7919 + getpid());
    int bad = 0;
    for (int r = 0; r < rounds; r++) {
        int s = rand_r(&rng) % 8 != 0 ? rand_r(&rng) % 4 : 4 + rand_r(&rng) % (EVICT_SOURCES - 4);
        asyncrt_context *ctx = NULL;
        if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return rounds;
        asyncrt_program *p = asyncrt_context_set_cache_dir(ctx, g_dir) == ASYNCRT_SUCCESS ? compile(ctx, s) : NULL;
        size_t size = 0;
        const void *image = p ? asyncrt_program_image(p, &size) : NULL;
        if (!image || size != g_ref_size[s] || memcmp(image, g_ref[s], size) != 0) {
            fprintf(stderr, "worker %d round %d: source %d: %s\n", w, r, s,
                    p ? "image differs from a fresh compile's" : asyncrt_context_last_error(ctx));
            bad++;
        } else {
            asyncrt_program_origin origin = asyncrt_program_origin_of(p);
            atomic_fetch_add_explicit(origin == ASYNCRT_ORIGIN_COMPILED ? &g_count->compiled : &g_count->disk_hits,
                                      1, memory_order_relaxed);
        }
        asyncrt_cache_stats stats = ASYNCRT_CACHE_STATS_INIT;
        asyncrt_context_cache_stats(ctx, &stats);
        atomic_fetch_add_explicit(&g_count->evictions, (long)stats.evictions, memory_order_relaxed);
        asyncrt_program_destroy(p);
        asyncrt_context_destroy(ctx);
    }
    return bad;
}

static void monitor(void)
{
    for (;;) {
        long bytes = (long)directory_bytes(g_dir);
        if (bytes > g_count->max_bytes_seen) g_count->max_bytes_seen = bytes;
        g_count->monitor_samples++;
        struct timespec pause = {0, 2000000L};
        nanosleep(&pause, NULL);
    }
}

static void test_eviction_under_concurrency(void **state)
{
    (void)state;
    make_references();
    size_t largest = 0;
    for (int s = 0; s < EVICT_SOURCES; s++) largest = g_ref_size[s] > largest ? g_ref_size[s] : largest;
    /* An entry is the image plus ~200 bytes, its manifest ~150 (no headers read). */
    const uint64_t one = largest + 512, cap = 6 * one;
    char cap_text[32];
    snprintf(cap_text, sizeof cap_text, "%llu", (unsigned long long)cap);
    setenv("ASYNCRT_CACHE_MAX_BYTES", cap_text, 1);
    int rounds = getenv("ASYNCRT_UNDER_SANITIZER") ? EVICT_ROUNDS / 10 : EVICT_ROUNDS;
    int failed = run_processes("asyncrt-cache-evict", monitor, evict_worker, rounds);
    uint64_t final_bytes = directory_bytes(g_dir);
    printf("eviction: %d processes x %d lookups, cap %llu bytes: %ld compiled, %ld from disk, %ld files evicted; "
           "%llu bytes at the end, at most %ld seen in %ld samples\n",
           WORKERS, rounds, (unsigned long long)cap, g_count->compiled, g_count->disk_hits, g_count->evictions,
           (unsigned long long)final_bytes, g_count->max_bytes_seen, g_count->monitor_samples);
    unsetenv("ASYNCRT_CACHE_MAX_BYTES");
    assert_int_equal(failed, 0);
    assert_int_equal(g_count->compiled + g_count->disk_hits, WORKERS * rounds);
    assert_true(final_bytes <= cap + one);
    assert_true((uint64_t)g_count->max_bytes_seen <= cap + WORKERS * one);
    if (rounds == EVICT_ROUNDS) {
        assert_true(g_count->evictions > 0);
        assert_true(g_count->disk_hits > 0);
    }
    test_remove_tree(g_dir);
    free(g_dir);
    munmap((void *)g_count, sizeof *g_count);
}

int main(int argc, char **argv)
{
    g_gpu = argc > 1 && strcmp(argv[1], "gpu") == 0;
    if (getenv("ASYNCRT_UNDER_SANITIZER")) g_rounds = 5;
    if (g_gpu) {
        int probe = probe_device();
        if (probe != 0) return probe;
    }
    make_sources();
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cache_under_damage),
                                       cmocka_unit_test(test_eviction_under_concurrency)};
    /* The GPU variant runs the damage test only: eviction needs no device. */
    int rc = _cmocka_run_group_tests("test_cache_stress", tests, g_gpu ? 1 : 2, NULL, NULL);
    for (int s = 0; s < EVICT_SOURCES; s++) free(g_ref[s]);
    return rc;
}
