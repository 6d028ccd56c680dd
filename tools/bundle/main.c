/* asyncrt-bundle: the headers a set of kernels needs, in one file, so that
 * a program compiles them where no CUDA toolkit is installed. */
#define _DEFAULT_SOURCE /* setenv, unsetenv */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncrt/asyncrt.h"
#include "base_internal.h"    /* settings, the embedded headers' names, SHA-256 */
#include "cache_internal.h"   /* manifests, checked reads, private folders */
#include "compile_internal.h" /* asyncrt__program_lookup, toolkit discovery, the bundle format */
#include "emit.h"
#include "names.h"
#include "tool.h"

#define TOOL "asyncrt-bundle"
#define MAX_ITEMS 256

static void usage(FILE *out)
{
    fprintf(out, "usage: " TOOL " SOURCE... [-I DIR]... [-D NAME[=VALUE]]... [--arch LIST] -o FILE\n"
                 "           [--format bin|c] [--symbol NAME] [--no-check]\n"
                 "\n"
                 "Compiles each SOURCE with NVRTC for each target of LIST, as the library would\n"
                 "with these -I and -D (the toolkit found as usual: CUDA_PATH, CUDA_HOME, the\n"
                 "build's toolkit, /usr/local/cuda), learns from NVRTC's time trace every header\n"
                 "it read, and writes them with the names they were included by, and a digest,\n"
                 "to FILE: a header bundle. A program given it (asyncrt_bundle_load_file, or\n"
                 "asyncrt-run --bundle) compiles these sources with no toolkit.\n"
                 "\n"
                 "  -I DIR         an include folder of the sources (as include_dirs)\n"
                 "  -D NAME[=V]    a macro (as defines)\n"
                 "  --arch LIST    targets, comma-separated (sm_90,sm_80, compute_80, auto);\n"
                 "                 default sm_90. What is read seldom differs between targets:\n"
                 "                 list every family the program is deployed to\n"
                 "  -o FILE        where to write the bundle (required): a new file, or a\n"
                 "                 regular file it replaces (never a link, device or FIFO)\n"
                 "  --format bin   the bundle file (default)\n"
                 "  --format c     a C source defining it as data, for embedding:\n"
                 "                   const unsigned char SYMBOL[]; const size_t SYMBOL_size;\n"
                 "                 pass both to asyncrt_bundle_load\n"
                 "  --symbol NAME  the C array's name (default asyncrt_bundle_data)\n"
                 "  --no-check     skip the check: by default every source is compiled again\n"
                 "                 from the bundle alone (no toolkit) and its image must equal\n"
                 "                 the toolkit compile's, byte for byte\n"
                 "  --version      asyncrt-bundle, libasyncrt and NVRTC versions\n"
                 "  -h, --help     this text\n"
                 "\n" TOOL_EXIT_CODES_HELP
                 "  " TOOL ": 2 also covers -o naming something other than a regular file;\n"
                 "  3 = a source did not compile (with the toolkit, or from the bundle\n"
                 "  in the check); 6 = the check found an image that differs from the toolkit's;\n"
                 "  7 = a source or header could not be read, no toolkit to bundle from, or FILE\n"
                 "  could not be written.\n");
}

typedef struct args {
    const char *sources[MAX_ITEMS], *dirs[MAX_ITEMS], *defines[MAX_ITEMS];
    size_t source_count, dir_count, define_count;
    const char *arch, *out, *symbol;
    bool c_format, check;
} args;

/* 0 to go on, else the exit code (help and version included: -1 is OK). */
static int parse(int argc, char **argv, args *a)
{
    *a = (args){.arch = "sm_90", .symbol = "asyncrt_bundle_data", .check = true};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *value = NULL;
        if (!strcmp(s, "-h") || !strcmp(s, "--help") || !strcmp(s, "--version")) {
            char version[160];
            tool_version_line(TOOL, version, sizeof version);
            printf("%s\n", version);
            if (s[2] != 'v') usage(stdout);
            return -1;
        }
        bool takes = !strcmp(s, "-I") || !strcmp(s, "-D") || !strcmp(s, "--arch") || !strcmp(s, "-o") ||
                     !strcmp(s, "--format") || !strcmp(s, "--symbol");
        if (takes && (i + 1 >= argc || !argv[i + 1][0])) return tool_usage_error(TOOL, "%s needs a value", s);
        if (takes) value = argv[++i];
        else if ((!strncmp(s, "-I", 2) || !strncmp(s, "-D", 2)) && s[2]) value = s + 2;
        const char **list = NULL;
        size_t *count = NULL;
        if (!strncmp(s, "-I", 2)) list = a->dirs, count = &a->dir_count;
        else if (!strncmp(s, "-D", 2)) list = a->defines, count = &a->define_count;
        else if (!strcmp(s, "--arch")) a->arch = value;
        else if (!strcmp(s, "-o")) a->out = value;
        else if (!strcmp(s, "--symbol")) a->symbol = value;
        else if (!strcmp(s, "--no-check")) a->check = false;
        else if (!strcmp(s, "--format")) {
            if (strcmp(value, "bin") && strcmp(value, "c"))
                return tool_usage_error(TOOL, "--format \"%s\": the formats are bin and c", value);
            a->c_format = !strcmp(value, "c");
        } else if (s[0] == '-' && s[1]) {
            return tool_usage_error(TOOL, "unknown option '%s'", s);
        } else {
            list = a->sources, count = &a->source_count, value = s;
        }
        if (list && *count == MAX_ITEMS) return tool_usage_error(TOOL, "more than %d of '%s'", MAX_ITEMS, s);
        if (list) list[(*count)++] = value;
    }
    if (!a->source_count) return tool_usage_error(TOOL, "no SOURCE given");
    if (!a->out) return tool_usage_error(TOOL, "no -o FILE given");
    int refused = emit_target_check(a->out); /* before any compile */
    if (refused) return refused;
    if (!emit_symbol_ok(a->symbol))
        return tool_usage_error(TOOL, "--symbol \"%s\" is not a C identifier (letters, digits, _; no leading digit)",
                                a->symbol);
    return 0;
}

/* Removes the private cache folder and its plain files. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlinkat(dirfd(d), e->d_name, 0);
    if (d) closedir(d);
    rmdir(dir);
}

typedef struct run {
    args a;
    char cache[64];
    asyncrt_context *ctx;
    char *arch_list, *arches[32];
    size_t arch_count;
    char *texts[MAX_ITEMS];       /* the sources */
    unsigned char *images[32 * MAX_ITEMS];
    size_t image_sizes[32 * MAX_ITEMS];
    bundle_names names;
    char why[1024];
} run;

static asyncrt_compile_options options_for(const run *r, const char *arch, const asyncrt_bundle *bundle)
{
    return (asyncrt_compile_options){.size = sizeof(asyncrt_compile_options),
                                     .arch = arch, .include_dirs = r->a.dirs, .include_dir_count = r->a.dir_count,
                                     .defines = r->a.defines, .define_count = r->a.define_count, .bundle = bundle};
}

/* Compiles every source for every target with the toolkit, keeping the
 * images, and adds what each compile read (its manifest) to r->names. */
static int record(run *r)
{
    for (size_t t = 0; t < r->arch_count; t++)
        for (size_t s = 0; s < r->a.source_count; s++) {
            const char *source = r->a.sources[s];
            asyncrt_compile_options o = options_for(r, r->arches[t], NULL);
            asyncrt_program *p = NULL;
            uint8_t key[32];
            asyncrt_status st = asyncrt_program_compile(r->ctx, source, r->texts[s], &o, &p);
            if (st != ASYNCRT_SUCCESS) {
                fprintf(stderr, TOOL ": %s for %s: %s\n", source, r->arches[t], asyncrt_context_last_error(r->ctx));
                return tool_exit_for_status(st);
            }
            size_t size;
            const void *image = asyncrt_program_image(p, &size);
            size_t k = t * r->a.source_count + s;
            r->images[k] = malloc(size);
            if (r->images[k]) memcpy(r->images[k], image, r->image_sizes[k] = size);
            asyncrt_program_destroy(p);
            p = NULL;
            st = asyncrt__program_lookup(r->ctx, source, r->texts[s], &o, &p, key, NULL);
            asyncrt_program_destroy(p);
            char name[80];
            asyncrt__sha256_hex(key, name);
            strcat(name, ".mf");
            int dir = open(r->cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            size_t mf_size = 0;
            r->why[0] = '\0';
            unsigned char *mf = dir >= 0 ? asyncrt__file_read(dir, name, ASYNCRT_FILE_MAX, false,
                                                                    &mf_size, r->why, sizeof r->why)
                                         : NULL;
            if (dir >= 0) close(dir);
            asyncrt_manifest m = {0};
            if (!r->images[k] || !mf || st != ASYNCRT_SUCCESS ||
                !asyncrt__manifest_decode(mf, mf_size, key, NULL, &m, r->why, sizeof r->why) || m.count != 1) {
                fprintf(stderr, TOOL ": %s for %s: %s\n", source, r->arches[t],
                        !r->images[k] ? "out of memory"
                                      : "the library kept no record of the headers it read (ASYNCRT_LOG=1 says "
                                        "why: a header that uses __has_include outside the toolkit, for one)");
                free(mf);
                asyncrt__manifest_free(&m);
                return r->images[k] ? TOOL_EXIT_IO : TOOL_EXIT_INTERNAL;
            }
            free(mf);
            bool ok = true;
            for (size_t i = 0; ok && i < m.sets[0].count; i++)
                ok = bundle_names_add_file(&r->names, m.sets[0].deps[i].path, m.sets[0].deps[i].sha, r->why,
                                           sizeof r->why);
            asyncrt__manifest_free(&m);
            if (!ok) {
                fprintf(stderr, TOOL ": %s\n", r->why);
                return strcmp(r->why, "out of memory") ? TOOL_EXIT_IO : TOOL_EXIT_INTERNAL;
            }
        }
    return 0;
}

/* Compiles every source again from the bundle alone; each image must be the toolkit's. */
static int check(run *r, const unsigned char *bundle_bytes, size_t bundle_size)
{
    asyncrt_context *ctx = NULL;
    asyncrt_bundle *b = NULL;
    asyncrt_status st = asyncrt_context_create(&ctx);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_context_set_cache_dir(ctx, NULL);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_bundle_load(ctx, bundle_bytes, bundle_size, &b);
    int code = st == ASYNCRT_SUCCESS ? 0 : TOOL_EXIT_INTERNAL;
    if (code) fprintf(stderr, TOOL ": %s\n", ctx ? asyncrt_context_last_error(ctx) : "out of memory");
    for (size_t t = 0; !code && t < r->arch_count; t++)
        for (size_t s = 0; !code && s < r->a.source_count; s++) {
            asyncrt_compile_options o = options_for(r, r->arches[t], b);
            asyncrt_program *p = NULL;
            size_t k = t * r->a.source_count + s, size = 0;
            st = asyncrt_program_compile(ctx, r->a.sources[s], r->texts[s], &o, &p);
            const void *image = p ? asyncrt_program_image(p, &size) : NULL;
            if (st != ASYNCRT_SUCCESS) {
                fprintf(stderr, TOOL ": check: %s for %s does not compile from the bundle alone: %s\n",
                        r->a.sources[s], r->arches[t], asyncrt_context_last_error(ctx));
                code = tool_exit_for_status(st);
            } else if (size != r->image_sizes[k] || memcmp(image, r->images[k], size) != 0) {
                fprintf(stderr, TOOL ": check: %s for %s compiles from the bundle to another image than from the "
                                "toolkit (%zu vs %zu bytes): a header resolved otherwise (a __has_include probe?); "
                                "--no-check writes the bundle anyway\n",
                        r->a.sources[s], r->arches[t], size, r->image_sizes[k]);
                code = TOOL_EXIT_CHECK;
            }
            asyncrt_program_destroy(p);
        }
    asyncrt_bundle_destroy(b);
    asyncrt_context_destroy(ctx);
    return code;
}

/* The names NVRTC is given in memory anyway: never bundled. */
static const char **memory_names(size_t *count)
{
    size_t n = asyncrt__embedded_file_count + asyncrt__std_header_file_count + 1;
    const char **names = calloc(n, sizeof *names);
    if (!names) return NULL;
    *count = 0;
    for (size_t i = 0; i < asyncrt__embedded_file_count; i++) names[(*count)++] = asyncrt__embedded_files[i].name;
    for (size_t i = 0; i < asyncrt__std_header_file_count; i++) names[(*count)++] = asyncrt__std_header_files[i].name;
    names[(*count)++] = "cuda.h";
    return names;
}

static int make(run *r, int argc, char **argv)
{
    char include[4096], cccl[4200];
    const char *dirs[MAX_ITEMS + 2];
    size_t dir_count = 0;
    bool has_cccl = false;
    asyncrt_settings settings; /* as a context reads them: the toolkit, TMPDIR */
    if (!asyncrt__settings_read(&settings)) return TOOL_EXIT_INTERNAL;
    bool found = asyncrt__toolkit_find(&settings, include, sizeof include, &has_cccl, r->why, sizeof r->why);
    bool made = found && asyncrt__private_dir_make(settings.tmpdir, r->cache, sizeof r->cache, "asyncrt-bundle-");
    asyncrt__settings_free(&settings);
    if (!found) {
        fprintf(stderr, TOOL ": the toolkit whose headers it bundles is needed here: %s\n", r->why);
        return TOOL_EXIT_IO;
    }
    if (!made) {
        fprintf(stderr, TOOL ": cannot create a private folder %s for NVRTC's records\n", r->cache);
        r->cache[0] = '\0';
        return TOOL_EXIT_IO;
    }
    snprintf(cccl, sizeof cccl, "%s/cccl", include);
    dirs[dir_count++] = include; /* key.c's order: the toolkit, then the caller's */
    if (has_cccl) dirs[dir_count++] = cccl;
    for (size_t i = 0; i < r->a.dir_count; i++) dirs[dir_count++] = r->a.dirs[i];
    r->names.dirs = dirs;
    r->names.dir_count = dir_count;
    r->names.memory = memory_names(&r->names.memory_count);
    if (!r->names.memory) return TOOL_EXIT_INTERNAL;
    for (size_t s = 0; s < r->a.source_count; s++) {
        size_t size = 0;
        r->why[0] = '\0';
        char *data = (char *)asyncrt__file_read(AT_FDCWD, r->a.sources[s], ASYNCRT_FILE_MAX, false,
                                                      &size, r->why, sizeof r->why);
        if (data && (r->texts[s] = realloc(data, size + 1))) r->texts[s][size] = '\0';
        else free(data);
        if (!r->texts[s]) {
            fprintf(stderr, TOOL ": cannot read %s: %s\n", r->a.sources[s], r->why[0] ? r->why : "no such file");
            return TOOL_EXIT_IO;
        }
    }
    if (!(r->arch_list = strdup(r->a.arch))) return TOOL_EXIT_INTERNAL;
    for (char *save = NULL, *t = strtok_r(r->arch_list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (r->arch_count == 32) return tool_usage_error(TOOL, "--arch lists more than 32 targets");
        r->arches[r->arch_count++] = t;
    }
    if (!r->arch_count) return tool_usage_error(TOOL, "--arch \"%s\" names no target", r->a.arch);
    if (asyncrt_context_create(&r->ctx) != ASYNCRT_SUCCESS) return TOOL_EXIT_INTERNAL;
    if (asyncrt_context_set_cache_dir(r->ctx, r->cache) != ASYNCRT_SUCCESS) {
        fprintf(stderr, TOOL ": %s\n", asyncrt_context_last_error(r->ctx));
        return TOOL_EXIT_IO;
    }
    int code = record(r);
    if (code) return code;
    if (!bundle_names_resolve(&r->names, r->a.sources, r->a.source_count, r->why, sizeof r->why)) {
        fprintf(stderr, TOOL ": %s\n", r->why);
        return strcmp(r->why, "out of memory") ? TOOL_EXIT_IO : TOOL_EXIT_INTERNAL;
    }
    size_t size = 0;
    unsigned char *bytes = emit_bundle(&r->names, argc, argv, &size);
    if (!bytes) return TOOL_EXIT_INTERNAL;
    code = r->a.check ? check(r, bytes, size) : 0;
    if (!code) code = emit_write(r->a.out, bytes, size, r->a.c_format, r->a.symbol);
    if (!code) {
        asyncrt_bundle *b = NULL;
        asyncrt_bundle_load(r->ctx, bytes, size, &b);
        printf("%s: %zu headers under %zu names, %zu bytes%s, digest %s%s\n", r->a.out, r->names.file_count,
               r->names.name_count, size, r->a.c_format ? " of data" : "", asyncrt_bundle_digest(b),
               r->a.check ? "; checked: each source compiles from it alone to the toolkit's image" : "");
        asyncrt_bundle_destroy(b);
    }
    free(bytes);
    return code;
}

int main(int argc, char **argv)
{
    run *r = calloc(1, sizeof *r);
    if (!r) return TOOL_EXIT_INTERNAL;
    int code = parse(argc, argv, &r->a);
    if (code == 0) {
        /* A precompiled header would hide what it holds from the trace, and
         * the records must be this run's own. */
        setenv("ASYNCRT_PCH", "0", 1);
        setenv("ASYNCRT_CACHE", "1", 1);
        unsetenv("ASYNCRT_CACHE_SHARED");
        code = make(r, argc, argv);
    }
    asyncrt_context_destroy(r->ctx);
    if (r->cache[0]) remove_dir(r->cache);
    for (size_t i = 0; i < r->a.source_count; i++) free(r->texts[i]);
    for (size_t i = 0; i < 32 * MAX_ITEMS; i++) free(r->images[i]);
    free((void *)r->names.memory);
    free(r->arch_list);
    bundle_names_free(&r->names);
    free(r);
    return code < 0 ? TOOL_EXIT_OK : code;
}
