/* A program of libasyncrt's users, for check_abi.sh: built once with the
 * current headers and once with tests/abi/previous/ (structs smaller than
 * the library's, as a program built against an older header has), it must
 * run correctly against the current library either way.
 *
 * Each struct it hands the library ends where an unmapped page begins, so a
 * library that reads or writes past the size the caller gave crashes it.
 * It compiles for sm_90 with NVRTC (exit 77 without one) and opens the fake
 * one-device driver that ASYNCRT_LIBCUDA names (tests/runtime's
 * fake_device_libcuda), whose cuLaunchKernelEx fails but keeps what it was
 * asked, so the launch config can be checked on a machine without a GPU. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "asyncrt/runtime.h"

static int g_failed;

#define CHECK(cond, ...)                                \
    do {                                                \
        if (!(cond)) {                                  \
            fprintf(stderr, "consumer: FAILED: " #cond ": "); \
            fprintf(stderr, __VA_ARGS__);               \
            fputc('\n', stderr);                        \
            g_failed = 1;                               \
        }                                               \
    } while (0)

/* `size` zeroed bytes that end where an unmapped page begins. */
static void *at_page_end(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + page, page, PROT_NONE) != 0) {
        perror("consumer: mmap");
        exit(1);
    }
    return p + page - size;
}

static const char k_source[] = "#if ABI_MARK != 7\n"
                               "#error the define did not arrive\n"
                               "#endif\n"
                               "template <typename T> __global__ void abi_twice(T *x, int n)\n"
                               "{\n"
                               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "    if (i < n) x[i] *= 2;\n"
                               "}\n";

static asyncrt_compile_options *options(void)
{
    static const char *const defines[] = {"ABI_MARK=7"}, *const names[] = {"abi_twice<float>"};
    asyncrt_compile_options *o = at_page_end(sizeof *o);
    *o = (asyncrt_compile_options)ASYNCRT_COMPILE_OPTIONS_INIT;
    o->arch = "sm_90";
    o->defines = defines;
    o->define_count = 1;
    o->name_expressions = names;
    o->name_expression_count = 1;
    return o;
}

/* The launch the fake driver was asked for (fake_device_libcuda.c). */
static void check_launch(void)
{
    const char *path = getenv("ASYNCRT_LIBCUDA");
    void *fake = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    int (*last)(unsigned *, unsigned *, unsigned *, unsigned *) = NULL;
    if (fake) *(void **)&last = dlsym(fake, "fake_last_launch");
    CHECK(last != NULL, "ASYNCRT_LIBCUDA (%s) is not the fake driver", path ? path : "unset");
    if (!last) return;
    unsigned grid[3], block[3], shared, attrs;
    CHECK(last(grid, block, &shared, &attrs) == 1, "one launch");
    CHECK(grid[0] == 3 && grid[1] == 2 && grid[2] == 1, "grid %ux%ux%u", grid[0], grid[1], grid[2]);
    CHECK(block[0] == 64 && block[1] == 1 && block[2] == 1, "block %ux%ux%u", block[0], block[1], block[2]);
    CHECK(shared == 1024, "shared %u", shared);
    CHECK(attrs == 0, "%u launch attributes: the fields past this program's size must read as zero", attrs);
    dlclose(fake);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0); /* all of it, should a struct's guard page stop it */
    printf("consumer: built against asyncrt %s: compile_options %zu, launch_config %zu, cache_stats %zu "
           "bytes; running libasyncrt %s\n",
           ASYNCRT_VERSION_STRING, sizeof(asyncrt_compile_options), sizeof(asyncrt_launch_config),
           sizeof(asyncrt_cache_stats), asyncrt_version_string());
    unsigned v = asyncrt_version();
    CHECK(v / 10000 == ASYNCRT_VERSION_MAJOR && v >= ASYNCRT_VERSION_NUMBER, "library %u, header %d", v,
          ASYNCRT_VERSION_NUMBER);

    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt_compile_options *o = options();
    asyncrt_program *p = NULL;
    asyncrt_status s = asyncrt_program_compile(ctx, "abi.cu", k_source, o, &p);
    if (s == ASYNCRT_ERROR_NO_NVRTC) {
        printf("consumer: skipped, no NVRTC: %s\n", asyncrt_context_last_error(ctx));
        asyncrt_context_destroy(ctx);
        return 77;
    }
    CHECK(s == ASYNCRT_SUCCESS, "%s", asyncrt_context_last_error(ctx));
    CHECK(p && strcmp(asyncrt_program_arch(p), "sm_90") == 0, "arch %s", p ? asyncrt_program_arch(p) : "-");
    CHECK(p && asyncrt_program_lowered_name(p, "abi_twice<float>"), "the name expression was not registered");
    asyncrt_program_destroy(p);

    asyncrt_cache_stats *st = at_page_end(sizeof *st);
    *st = (asyncrt_cache_stats)ASYNCRT_CACHE_STATS_INIT;
    CHECK(asyncrt_context_cache_stats(ctx, st) == ASYNCRT_SUCCESS, "%s", asyncrt_context_last_error(ctx));
    CHECK(st->size == sizeof *st, "the library changed the size to %zu", st->size);
    CHECK(st->misses == 1 && st->stores == 1 && st->memory_hits == 0, "%llu misses, %llu stores, %llu hits",
          (unsigned long long)st->misses, (unsigned long long)st->stores, (unsigned long long)st->memory_hits);

    CHECK(asyncrt_context_open_device(ctx, 0) == ASYNCRT_SUCCESS, "%s", asyncrt_context_last_error(ctx));
    asyncrt_device_info *info = at_page_end(sizeof *info);
    *info = (asyncrt_device_info)ASYNCRT_DEVICE_INFO_INIT;
    CHECK(asyncrt_device_probe(ctx, 0, info) == ASYNCRT_SUCCESS, "%s", asyncrt_context_last_error(ctx));
    CHECK(strcmp(info->name, "Fake GPU") == 0 && info->cc_major == 9, "device %s, sm_%d%d", info->name,
          info->cc_major, info->cc_minor);

    asyncrt_module *m = NULL;
    asyncrt_kernel *k = NULL;
    CHECK(asyncrt_module_build(ctx, "abi.cu", k_source, o, &m) == ASYNCRT_SUCCESS, "%s",
          asyncrt_context_last_error(ctx));
    if (m) CHECK(asyncrt_module_get_kernel(m, "abi_twice<float>", &k) == ASYNCRT_SUCCESS, "%s",
                 asyncrt_context_last_error(ctx));
    if (k) {
        asyncrt_launch_config *c = at_page_end(sizeof *c);
        *c = (asyncrt_launch_config)ASYNCRT_LAUNCH_CONFIG_INIT;
        c->grid[0] = 3;
        c->grid[1] = 2;
        c->block[0] = 64;
        c->shared_bytes = 1024;
        asyncrt_deviceptr x = 0;
        int n = 0;
        void *args[] = {&x, &n};
        s = asyncrt_kernel_launch(k, c, args, NULL, 2);
        CHECK(s == ASYNCRT_ERROR_LAUNCH, "%s: %s (the fake driver runs nothing)", asyncrt_status_string(s),
              asyncrt_context_last_error(ctx));
        check_launch();
    }
    asyncrt_module_destroy(m);
    asyncrt_context_destroy(ctx);
    printf("consumer: %s\n", g_failed ? "FAILED" : "ok");
    return g_failed;
}
