/* Opening a TMA-capable device and building a test kernel, shared by the
 * tensor-map GPU tests. */
#ifndef ASYNCRT_TEST_TMA_TEST_OPEN_H
#define ASYNCRT_TEST_TMA_TEST_OPEN_H

#include <stdio.h>
#include <string.h>

#include "test_support.h"

/* 0 with *ctx and *module set; ASYNCRT_TEST_SKIP without a device with TMA
 * (said why); 1 when the kernel does not build (the log printed). */
static inline int tma_test_open(const char *test, const char *source_name, const char *source,
                                const char *const *defines, size_t define_count, asyncrt_context **ctx,
                                asyncrt_module **module)
{
    *ctx = test_open_device_or_skip(test);
    if (!*ctx) return ASYNCRT_TEST_SKIP;
    const asyncrt_device_info *info = asyncrt_context_device(*ctx);
    if (!info->features.tma) {
        printf("%s: skipped, %s (sm_%d%d) has no TMA\n", test, info->name, info->cc_major, info->cc_minor);
        asyncrt_context_destroy(*ctx);
        return ASYNCRT_TEST_SKIP;
    }
    test_seed_random(test);
    asyncrt_compile_options opts = ASYNCRT_COMPILE_OPTIONS_INIT;
    opts.defines = defines;
    opts.define_count = define_count;
    if (asyncrt_module_build(*ctx, source_name, source, &opts, module) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "%s: %s\n", test, asyncrt_context_last_error(*ctx));
        asyncrt_context_destroy(*ctx);
        return 1;
    }
    return 0;
}

#endif
