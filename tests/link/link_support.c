#include "link_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

asyncrt_program *link_test_compile(asyncrt_context *ctx, const char *file, const char *arch, const char *mode)
{
    char path[256];
    snprintf(path, sizeof path, "tests/link/kernels/%s", file);
    char *source = test_read_source_file(path);
    const char *options[] = {mode};
    asyncrt_compile_options o = {.size = sizeof o, .arch = arch, .options = options, .option_count = mode ? 1 : 0};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, file, source, &o, &p));
    free(source);
    return p;
}

asyncrt_status link_test_programs(asyncrt_context *ctx, const char *arch, const char *option, asyncrt_program **out,
                                  ...)
{
    asyncrt_link *link = NULL;
    assert_ok(ctx, asyncrt_link_create(ctx, arch, &link));
    va_list ap;
    va_start(ap, out);
    for (const asyncrt_program *p; (p = va_arg(ap, const asyncrt_program *));)
        assert_ok(ctx, asyncrt_link_add_program(link, p));
    va_end(ap);
    if (option) assert_ok(ctx, asyncrt_link_add_option(link, option));
    asyncrt_status s = asyncrt_link_complete(link, out);
    asyncrt_link_destroy(link);
    return s;
}

char *link_test_single_source(void)
{
    char *util = test_read_source_file("tests/link/kernels/util.cu");
    char *main_cu = test_read_source_file("tests/link/kernels/main.cu");
    size_t size = strlen(util) + strlen(main_cu) + 1;
    char *both = malloc(size);
    assert_non_null(both);
    snprintf(both, size, "%s%s", util, main_cu); /* the externs then redeclare what util.cu defined */
    free(util);
    free(main_cu);
    return both;
}
