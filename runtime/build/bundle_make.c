/* asyncrt_bundle_make (asyncrt/bundle.h): compiles the sources with the
 * toolkit in a context of its own (no precompiled header, which would hide
 * what it holds from the trace; a private cache, so that the records are
 * this call's own), reads each compile's manifest for the headers NVRTC
 * read, names them (bundle_names.c), encodes the bundle (compile/bundle.h)
 * and, unless told not to, compiles every source again from it alone. It
 * sits above compile/ because it compiles and reads the cache's records;
 * asyncrt-bundle is its command line. */
#define _DEFAULT_SOURCE /* dirfd */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncrt/bundle.h"
#include "bundle.h"
#include "bundle_names.h"
#include "cache_manifest.h"
#include "compile.h"
#include "context.h"
#include "embedded.h"
#include "progress.h"
#include "safe_io.h"
#include "sha256.h"
#include "toolkit.h"

typedef struct maker {
    asyncrt_context *ctx;     /* the caller's: the messages */
    asyncrt_bundle_make_options o;
    const char *default_arch; /* o.archs when none were given */
    char cache[64];           /* the private cache of the records */
    asyncrt_context *rec;     /* compiles with the toolkit into it */
    char **texts;             /* the sources */
    unsigned char **images;   /* [target * source_count + source] */
    size_t *image_sizes;
    asyncrt_bundle_names names;
    const char *dirs[2 + 256];
    char include[4096], cccl[4200];
    char why[1024];
} maker;

static const char *arch_of(const maker *m, size_t t) { return m->o.arch_count ? m->o.archs[t] : m->default_arch; }
static size_t arch_count(const maker *m) { return m->o.arch_count ? m->o.arch_count : 1; }

static asyncrt_compile_options options_for(const maker *m, size_t t, const asyncrt_bundle *bundle)
{
    return (asyncrt_compile_options){.size = sizeof(asyncrt_compile_options), .arch = arch_of(m, t),
                                     .include_dirs = m->o.include_dirs, .include_dir_count = m->o.include_dir_count,
                                     .defines = m->o.defines, .define_count = m->o.define_count, .bundle = bundle,
                                     .progress = m->o.progress, .progress_user = m->o.progress_user};
}

/* What the compile with key `key` read: its manifest in the private cache, added to m->names. */
static asyncrt_status add_what_it_read(maker *m, const char *source, const char *arch, const uint8_t *key)
{
    if (!key)
        return asyncrt__fail(m->ctx, ASYNCRT_ERROR_IO,
                             "%s for %s: the library kept no record of the headers it read (ASYNCRT_LOG=1 says "
                             "why: a header that uses __has_include outside the toolkit, for one)", source, arch);
    char name[80];
    asyncrt__sha256_hex(key, name);
    strcat(name, ".mf");
    int dir = open(m->cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    size_t size = 0;
    m->why[0] = '\0';
    unsigned char *mf = dir >= 0 ? asyncrt__file_read(dir, name, ASYNCRT_FILE_MAX, false, &size, m->why,
                                                      sizeof m->why)
                                 : NULL;
    if (dir >= 0) close(dir);
    asyncrt_manifest man = {0};
    bool ok = mf && asyncrt__manifest_decode(mf, size, key, NULL, &man, m->why, sizeof m->why) && man.count == 1;
    free(mf);
    if (!ok) {
        asyncrt__manifest_free(&man);
        return add_what_it_read(m, source, arch, NULL);
    }
    for (size_t i = 0, had = m->names.file_count; ok && i < man.sets[0].count; i++, had = m->names.file_count) {
        ok = asyncrt__bundle_names_add_file(&m->names, man.sets[0].deps[i].path, man.sets[0].deps[i].sha, m->why,
                                            sizeof m->why);
        if (m->names.file_count > had) /* a header read for the first time */
            asyncrt__progress(m->o.progress, m->o.progress_user, ASYNCRT_PROGRESS_BUNDLE_HEADER, source, arch,
                              (long long)m->names.file_count);
    }
    asyncrt__manifest_free(&man);
    if (ok) return ASYNCRT_SUCCESS;
    return asyncrt__fail(m->ctx, strcmp(m->why, "out of memory") ? ASYNCRT_ERROR_IO : ASYNCRT_ERROR_OUT_OF_MEMORY,
                         "%s", m->why);
}

/* Compiles every source for every target with the toolkit, keeping the
 * images, and adds what each compile read to m->names. */
static asyncrt_status record(maker *m)
{
    for (size_t t = 0; t < arch_count(m); t++)
        for (size_t s = 0; s < m->o.source_count; s++) {
            const char *source = m->o.sources[s];
            asyncrt_compile_options o = options_for(m, t, NULL);
            asyncrt_program *p = NULL;
            uint8_t key[32];
            asyncrt_status st = asyncrt_program_compile(m->rec, source, m->texts[s], &o, &p);
            if (st != ASYNCRT_SUCCESS)
                return asyncrt__fail(m->ctx, st, "%s for %s: %s", source, arch_of(m, t),
                                     asyncrt_context_last_error(m->rec));
            size_t size, k = t * m->o.source_count + s;
            const void *image = asyncrt_program_image(p, &size);
            if ((m->images[k] = malloc(size))) memcpy(m->images[k], image, m->image_sizes[k] = size);
            asyncrt_program_destroy(p);
            p = NULL;
            o.progress = NULL; /* only for its key: nothing the caller waits for */
            st = asyncrt__program_lookup(m->rec, source, m->texts[s], &o, &p, key, NULL);
            asyncrt_program_destroy(p);
            if (!m->images[k])
                return asyncrt__fail(m->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "%s for %s: out of memory", source,
                                     arch_of(m, t));
            ASYNCRT_TRY(add_what_it_read(m, source, arch_of(m, t), st == ASYNCRT_SUCCESS ? key : NULL));
        }
    return ASYNCRT_SUCCESS;
}

/* Compiles every source again from the bundle alone; each image must be the toolkit's. */
static asyncrt_status check(maker *m, const unsigned char *bytes, size_t bundle_size)
{
    static const char *const names[] = {"ASYNCRT_PCH"}, *const values[] = {"0"};
    asyncrt_context *ctx = NULL;
    asyncrt_bundle *b = NULL;
    asyncrt_status st = asyncrt__context_create_with(names, values, 1, &ctx);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_context_set_cache_dir(ctx, NULL);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_bundle_load(ctx, bytes, bundle_size, &b);
    if (st != ASYNCRT_SUCCESS)
        st = asyncrt__fail(m->ctx, st == ASYNCRT_ERROR_OUT_OF_MEMORY ? st : ASYNCRT_ERROR_OUT_OF_MEMORY, "%s",
                           ctx ? asyncrt_context_last_error(ctx) : "out of memory");
    for (size_t t = 0; st == ASYNCRT_SUCCESS && t < arch_count(m); t++)
        for (size_t s = 0; st == ASYNCRT_SUCCESS && s < m->o.source_count; s++) {
            asyncrt_compile_options o = options_for(m, t, b);
            asyncrt_program *p = NULL;
            size_t k = t * m->o.source_count + s, size = 0;
            st = asyncrt_program_compile(ctx, m->o.sources[s], m->texts[s], &o, &p);
            const void *image = p ? asyncrt_program_image(p, &size) : NULL;
            if (st != ASYNCRT_SUCCESS)
                asyncrt__fail(m->ctx, st, "check: %s for %s does not compile from the bundle alone: %s",
                              m->o.sources[s], arch_of(m, t), asyncrt_context_last_error(ctx));
            else if (size != m->image_sizes[k] || memcmp(image, m->images[k], size) != 0)
                st = asyncrt__fail(m->ctx, ASYNCRT_ERROR_CORRUPT,
                                   "check: %s for %s compiles from the bundle to another image than from the "
                                   "toolkit (%zu vs %zu bytes): a header resolved otherwise (a __has_include "
                                   "probe?); --no-check writes the bundle anyway",
                                   m->o.sources[s], arch_of(m, t), size, m->image_sizes[k]);
            asyncrt_program_destroy(p);
        }
    asyncrt_bundle_destroy(b);
    asyncrt_context_destroy(ctx);
    return st;
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

/* The toolkit, the private cache, the sources, the recording context. */
static asyncrt_status prepare(maker *m)
{
    /* No precompiled header, and records of this call's own (a cache of its own, not shared). */
    static const char *const names[] = {"ASYNCRT_PCH", "ASYNCRT_CACHE", "ASYNCRT_CACHE_SHARED"};
    static const char *const values[] = {"0", "1", NULL};
    ASYNCRT_TRY(asyncrt__context_create_with(names, values, 3, &m->rec));
    bool has_cccl = false;
    if (!asyncrt__toolkit_find(&m->rec->settings, m->include, sizeof m->include, &has_cccl, m->why, sizeof m->why))
        return asyncrt__fail(m->ctx, ASYNCRT_ERROR_IO, "the toolkit whose headers it bundles is needed here: %s",
                             m->why);
    if (!asyncrt__private_dir_make(m->rec->settings.tmpdir, m->cache, sizeof m->cache, "asyncrt-bundle-")) {
        asyncrt__fail(m->ctx, ASYNCRT_ERROR_IO, "cannot create a private folder %s for NVRTC's records", m->cache);
        m->cache[0] = '\0';
        return ASYNCRT_ERROR_IO;
    }
    size_t n = 0;
    snprintf(m->cccl, sizeof m->cccl, "%s/cccl", m->include);
    m->dirs[n++] = m->include; /* key.c's order: the toolkit, then the caller's */
    if (has_cccl) m->dirs[n++] = m->cccl;
    for (size_t i = 0; i < m->o.include_dir_count; i++) m->dirs[n++] = m->o.include_dirs[i];
    m->names.dirs = m->dirs;
    m->names.dir_count = n;
    m->names.memory = memory_names(&m->names.memory_count);
    size_t images = arch_count(m) * m->o.source_count;
    m->texts = calloc(m->o.source_count, sizeof *m->texts);
    m->images = calloc(images, sizeof *m->images);
    m->image_sizes = calloc(images, sizeof *m->image_sizes);
    if (!m->names.memory || !m->texts || !m->images || !m->image_sizes)
        return asyncrt__fail(m->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    for (size_t s = 0; s < m->o.source_count; s++) {
        size_t size = 0;
        m->why[0] = '\0';
        char *data = (char *)asyncrt__file_read(AT_FDCWD, m->o.sources[s], ASYNCRT_FILE_MAX, false, &size, m->why,
                                                sizeof m->why);
        if (data && (m->texts[s] = realloc(data, size + 1))) m->texts[s][size] = '\0';
        else free(data);
        if (!m->texts[s])
            return asyncrt__fail(m->ctx, ASYNCRT_ERROR_IO, "cannot read %s: %s", m->o.sources[s],
                                 m->why[0] ? m->why : "no such file");
    }
    if (asyncrt_context_set_cache_dir(m->rec, m->cache) != ASYNCRT_SUCCESS)
        return asyncrt__fail(m->ctx, ASYNCRT_ERROR_IO, "%s", asyncrt_context_last_error(m->rec));
    return ASYNCRT_SUCCESS;
}

static asyncrt_status make(maker *m, void **data, size_t *size)
{
    ASYNCRT_TRY(prepare(m));
    ASYNCRT_TRY(record(m));
    if (!asyncrt__bundle_names_resolve(&m->names, m->o.sources, m->o.source_count, m->why, sizeof m->why))
        return asyncrt__fail(m->ctx, strcmp(m->why, "out of memory") ? ASYNCRT_ERROR_IO : ASYNCRT_ERROR_OUT_OF_MEMORY,
                             "%s", m->why);
    const asyncrt_bundle_names *b = &m->names;
    const char **texts = calloc(b->file_count + 1, sizeof *texts), **list = calloc(b->name_count + 1, sizeof *list);
    size_t *text_of = calloc(b->name_count + 1, sizeof *text_of);
    unsigned char *bytes = NULL;
    if (texts && list && text_of) {
        for (size_t i = 0; i < b->file_count; i++) texts[i] = b->files[i].text;
        for (size_t i = 0; i < b->name_count; i++) list[i] = b->names[i].name, text_of[i] = b->names[i].file;
        bytes = asyncrt__bundle_encode(m->o.note ? m->o.note : "", texts, b->file_count, list, text_of,
                                       b->name_count, size);
    }
    free(texts), free(list), free(text_of);
    if (!bytes) return asyncrt__fail(m->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    asyncrt_status s = m->o.no_check ? ASYNCRT_SUCCESS : check(m, bytes, *size);
    if (s == ASYNCRT_SUCCESS) *data = bytes;
    else free(bytes);
    return s;
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

asyncrt_status asyncrt_bundle_make(asyncrt_context *ctx, const asyncrt_bundle_make_options *opts, void **data,
                                   size_t *size)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (data) *data = NULL;
    if (size) *size = 0;
    maker *m = calloc(1, sizeof *m);
    if (!m) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    m->ctx = ctx;
    m->default_arch = "sm_90";
    asyncrt__enter(ctx);
    asyncrt_status s = asyncrt__sized_take(ctx, ASYNCRT_SIZED_BUNDLE_MAKE_OPTIONS, opts, &m->o, "bundle make options");
    if (s == ASYNCRT_SUCCESS && (!data || !size))
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "bundle make: %s is NULL", data ? "size" : "data");
    else if (s == ASYNCRT_SUCCESS && (!m->o.source_count || !m->o.sources))
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "bundle make: no sources given (source_count is 0)");
    else if (s == ASYNCRT_SUCCESS && m->o.include_dir_count > 256)
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                          "bundle make: %zu include_dirs: at most 256", m->o.include_dir_count);
    else if (s == ASYNCRT_SUCCESS && m->o.arch_count && !m->o.archs)
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "bundle make: archs is NULL with arch_count %zu",
                          m->o.arch_count);
    if (s == ASYNCRT_SUCCESS) s = make(m, data, size);
    asyncrt_context_destroy(m->rec);
    if (m->cache[0]) remove_dir(m->cache);
    for (size_t i = 0; m->texts && i < m->o.source_count; i++) free(m->texts[i]);
    for (size_t i = 0; m->images && i < arch_count(m) * m->o.source_count; i++) free(m->images[i]);
    free(m->texts), free(m->images), free(m->image_sizes);
    free((void *)m->names.memory);
    asyncrt__bundle_names_free(&m->names);
    free(m);
    if (s != ASYNCRT_SUCCESS && size) *size = 0;
    return asyncrt__leave(ctx, s);
}
