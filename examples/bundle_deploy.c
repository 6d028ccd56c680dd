/* Compiling where only the driver is: the headers a kernel needs travel in a
 * bundle made beforehand on a machine with the toolkit, and the compile
 * searches no toolkit at all (asyncrt/bundle.h):
 *   asyncrt-bundle kernel.cu --arch sm_90 -o kernel.bundle      (with the toolkit)
 *   ASYNCRT_TOOLKIT=none bundle_deploy kernel.bundle kernel.cu  (driver and NVRTC only)
 * With a GPU the program is compiled for it and loaded; without one it is
 * compiled for ARCH (default sm_90), a target the bundle was made for.
 * Build: examples/CMakeLists.txt (find_package), or
 *   cc bundle_deploy.c $(pkg-config --cflags --libs asyncrt) -Wl,-rpath,$(pkg-config --variable=libdir asyncrt) */
#include <asyncrt/asyncrt.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(asyncrt_context *ctx, const char *what, asyncrt_status s)
{
    fprintf(stderr, "bundle_deploy: %s: %s: %s\n", what, asyncrt_status_string(s), asyncrt_context_last_error(ctx));
    asyncrt_context_destroy(ctx);
    return 1;
}

/* The whole of a source file, NUL-terminated; NULL if unreadable or over 1 MiB. */
static char *read_source(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc((1u << 20) + 1) : NULL;
    size_t n = text ? fread(text, 1, 1u << 20, f) : 0;
    bool whole = text && !ferror(f) && feof(f);
    if (f) fclose(f);
    if (!whole) {
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: bundle_deploy BUNDLE KERNEL.cu [ARCH]\n");
        return 2;
    }
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    char *source = read_source(argv[2]);
    if (!source) {
        fprintf(stderr, "bundle_deploy: cannot read %s (or it is over 1 MiB)\n", argv[2]);
        asyncrt_context_destroy(ctx);
        return 1;
    }
    asyncrt_bundle *bundle;
    asyncrt_status s = asyncrt_bundle_load_file(ctx, argv[1], &bundle);
    if (s != ASYNCRT_SUCCESS) {
        free(source);
        return fail(ctx, argv[1], s);
    }
    printf("bundle %s: %zu headers, digest %.16s...\n", argv[1], asyncrt_bundle_header_count(bundle),
           asyncrt_bundle_digest(bundle));

    asyncrt_compile_options opts = ASYNCRT_COMPILE_OPTIONS_INIT;
    opts.bundle = bundle; /* its headers, and no toolkit's */
    s = asyncrt_context_open_device(ctx, 0);
    bool gpu = s == ASYNCRT_SUCCESS;
    if (!gpu && s != ASYNCRT_ERROR_NO_DRIVER && s != ASYNCRT_ERROR_NO_DEVICE) {
        asyncrt_bundle_destroy(bundle);
        free(source);
        return fail(ctx, "open device 0", s);
    }
    if (!gpu) {
        printf("no GPU: %s\n", asyncrt_context_last_error(ctx));
        opts.arch = argc > 3 ? argv[3] : "sm_90";
    }
    asyncrt_program *program = NULL;
    asyncrt_module *module = NULL;
    s = asyncrt_program_compile(ctx, argv[2], source, &opts, &program);
    if (s == ASYNCRT_SUCCESS && gpu) s = asyncrt_module_load(ctx, program, &module);
    if (s == ASYNCRT_SUCCESS)
        printf("compiled %s for %s with the bundle's headers (%s)%s\n", argv[2], asyncrt_program_arch(program),
               asyncrt_program_origin_string(asyncrt_program_origin_of(program)),
               gpu ? ", loaded" : "; loading it needs a GPU");
    asyncrt_module_destroy(module);
    asyncrt_program_destroy(program);
    asyncrt_bundle_destroy(bundle); /* after the compiles that use it */
    free(source);
    if (s != ASYNCRT_SUCCESS) return fail(ctx, gpu ? "compile and load" : "compile", s);
    asyncrt_context_destroy(ctx);
    return 0;
}
