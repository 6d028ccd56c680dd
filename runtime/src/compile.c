/* NVRTC compilation behind the program cache. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arch.h"
#include "cache.h"
#include "context.h"
#include "embedded.h"
#include "lean.h"
#include "program.h"
#include "sha256.h"

#ifndef ASYNCRT_TOOLKIT_INCLUDE
#define ASYNCRT_TOOLKIT_INCLUDE "/usr/local/cuda/include"
#endif

/* Limits on hashing user include directories; past them the compile is not
 * cached rather than cached under a key that ignores some files. */
#define INCLUDE_HASH_MAX_FILES 4096
#define INCLUDE_HASH_MAX_BYTES (64u << 20)

typedef struct string_list {
    char **items;
    size_t count, cap;
    bool failed;
} string_list;

static void list_push_owned(string_list *l, char *s)
{
    if (!s || l->failed) {
        l->failed = true;
        free(s);
        return;
    }
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **grown = realloc(l->items, cap * sizeof *grown);
        if (!grown) {
            l->failed = true;
            free(s);
            return;
        }
        l->items = grown;
        l->cap = cap;
    }
    l->items[l->count++] = s;
}

static void list_free(string_list *l)
{
    for (size_t i = 0; i < l->count; i++) free(l->items[i]);
    free(l->items);
}

static bool has_file(const char *dir, const char *rel)
{
    char *path = asyncrt_format("%s/%s", dir, rel);
    struct stat st;
    bool found = path && stat(path, &st) == 0;
    free(path);
    return found;
}

/* The toolkit's include directory, so <cuda/barrier> and friends resolve:
 * $CUDA_PATH, $CUDA_HOME, the toolkit found at build time, /usr/local/cuda. */
static bool find_toolkit_include(char *out, size_t size)
{
    const char *roots[] = {getenv("CUDA_PATH"), getenv("CUDA_HOME")};
    for (size_t i = 0; i < 2; i++) {
        if (!roots[i] || !*roots[i]) continue;
        snprintf(out, size, "%s/include", roots[i]);
        if (has_file(out, "cuda/barrier") || has_file(out, "cccl/cuda/barrier")) return true;
    }
    const char *fixed[] = {ASYNCRT_TOOLKIT_INCLUDE, "/usr/local/cuda/include"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(out, size, "%s", fixed[i]);
        if (has_file(out, "cuda/barrier") || has_file(out, "cccl/cuda/barrier")) return true;
    }
    return false;
}

static void hash_str(asyncrt_sha256 *h, const char *s)
{
    uint64_t n = strlen(s);
    asyncrt_sha256_update(h, &n, sizeof n); /* length-prefixed: "a","bc" != "ab","c" */
    asyncrt_sha256_update(h, s, n);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Hashes every regular file under dir (names and contents, sorted). Returns
 * false when the directory is too large to key on. */
static bool hash_tree(asyncrt_sha256 *h, const char *dir, size_t *files, size_t *bytes, int depth)
{
    if (depth > 16) return false;
    DIR *d = opendir(dir);
    if (!d) return true; /* a missing -I directory changes nothing NVRTC sees */
    string_list names = {0};
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) list_push_owned(&names, strdup(e->d_name));
    closedir(d);
    bool ok = !names.failed;
    if (ok) qsort(names.items, names.count, sizeof(char *), compare_names);
    for (size_t i = 0; ok && i < names.count; i++) {
        char *path = asyncrt_format("%s/%s", dir, names.items[i]);
        struct stat st;
        if (!path) ok = false;
        else if (stat(path, &st) != 0) {
        } else if (S_ISDIR(st.st_mode)) {
            hash_str(h, path);
            ok = hash_tree(h, path, files, bytes, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            *files += 1;
            *bytes += (size_t)st.st_size;
            ok = *files <= INCLUDE_HASH_MAX_FILES && *bytes <= INCLUDE_HASH_MAX_BYTES;
            FILE *f = ok ? fopen(path, "rb") : NULL;
            hash_str(h, path);
            if (f) {
                char buf[65536];
                size_t n;
                while ((n = fread(buf, 1, sizeof buf, f)) > 0) asyncrt_sha256_update(h, buf, n);
                fclose(f);
            }
        }
        free(path);
    }
    list_free(&names);
    return ok;
}

/* The <cuda.h> device code sees. The real header needs the C library, which
 * NVRTC lacks, yet NVIDIA's TMA examples include it for CUtensorMap: this
 * gives them that type, with the real header's layout, and CUDA_VERSION. */
#define ASYNCRT_STR2(x) #x
#define ASYNCRT_STR(x) ASYNCRT_STR2(x)
static const asyncrt_header k_cuda_h = {
    "cuda.h",
    "#pragma once\n"
    "#ifndef CUDA_VERSION\n#define CUDA_VERSION " ASYNCRT_STR(CUDA_VERSION) "\n#endif\n"
    "#ifndef CU_TENSOR_MAP_NUM_QWORDS\n#define CU_TENSOR_MAP_NUM_QWORDS 16\n"
    "typedef struct CUtensorMap_st {\n"
    "    alignas(128) unsigned long long opaque[CU_TENSOR_MAP_NUM_QWORDS];\n"
    "} CUtensorMap;\n"
    "#endif\n"};

/* The caller's own cuda.h, if it gave one, wins. */
static bool caller_has_cuda_h(const asyncrt_compile_options *o)
{
    for (size_t i = 0; i < o->header_count; i++)
        if (strcmp(o->headers[i].name, "cuda.h") == 0) return true;
    return false;
}

typedef struct compile_job {
    asyncrt_context *ctx;
    const char *source_name, *source;
    const asyncrt_compile_options *opts;
    asyncrt_arch arch;
    char arch_name[32];
    string_list options;       /* what NVRTC gets */
    bool cacheable;
    uint8_t key[32];
} compile_job;

static void build_options(compile_job *job)
{
    const asyncrt_compile_options *o = job->opts;
    string_list *l = &job->options;
    list_push_owned(l, asyncrt_format("-arch=%s", job->arch_name));
    list_push_owned(l, asyncrt_format("-std=%s", o->std ? o->std : "c++17"));
    char toolkit[4096];
    if (find_toolkit_include(toolkit, sizeof toolkit)) {
        list_push_owned(l, asyncrt_format("-I%s", toolkit));
        if (has_file(toolkit, "cccl/cuda")) list_push_owned(l, asyncrt_format("-I%s/cccl", toolkit));
    } else {
        asyncrt_log(job->ctx, 1, "warning: no CUDA toolkit include directory found (set CUDA_PATH); "
                                 "<cuda/barrier> and similar headers will not resolve");
    }
    for (size_t i = 0; i < o->include_dir_count; i++)
        list_push_owned(l, asyncrt_format("-I%s", o->include_dirs[i]));
    for (size_t i = 0; i < o->define_count; i++)
        list_push_owned(l, asyncrt_format("-D%s", o->defines[i]));
    for (size_t i = 0; i < o->option_count; i++) list_push_owned(l, strdup(o->options[i]));
}

static void compute_key(compile_job *job)
{
    const asyncrt_compile_options *o = job->opts;
    asyncrt_sha256 h;
    asyncrt_sha256_init(&h);
    /* NVRTC's version (memo beside the cache) and file identity (stat): a hit opens no NVRTC. */
    asyncrt_nvrtc_facts nvrtc;
    asyncrt_nvrtc_identity file = {0};
    asyncrt_nvrtc_identity_get(&file);
    char versions[4200];
    snprintf(versions, sizeof versions, "asyncrt %s nvrtc %d %s %lld %lld", ASYNCRT_VERSION_STRING,
             asyncrt_nvrtc_facts_get(job->ctx->cache_dir, &nvrtc, NULL, 0) == ASYNCRT_SUCCESS ? nvrtc.version : 0,
             file.path, (long long)file.size, (long long)file.mtime_ns);
    hash_str(&h, versions);
    if (asyncrt_lean_enabled()) hash_str(&h, "lean images"); /* ASYNCRT_LEAN changes the image */
    hash_str(&h, job->source_name);
    hash_str(&h, job->source);
    for (size_t i = 0; i < job->options.count; i++) hash_str(&h, job->options.items[i]);
    for (size_t i = 0; i < o->header_count; i++) {
        hash_str(&h, o->headers[i].name);
        hash_str(&h, o->headers[i].content);
    }
    for (size_t i = 0; i < asyncrt_embedded_file_count; i++) {
        hash_str(&h, asyncrt_embedded_files[i].name);
        hash_str(&h, asyncrt_embedded_files[i].content);
    }
    hash_str(&h, k_cuda_h.content);
    for (size_t i = 0; i < o->name_expression_count; i++) hash_str(&h, o->name_expressions[i]);
    size_t files = 0, bytes = 0;
    job->cacheable = true;
    for (size_t i = 0; job->cacheable && i < o->include_dir_count; i++)
        job->cacheable = hash_tree(&h, o->include_dirs[i], &files, &bytes, 0);
    if (!job->cacheable)
        asyncrt_log(job->ctx, 1, "not caching %s: its include directories hold more than %d files "
                                 "or %u MiB", job->source_name, INCLUDE_HASH_MAX_FILES,
                    INCLUDE_HASH_MAX_BYTES >> 20);
    asyncrt_sha256_final(&h, job->key);
}

/* Runs NVRTC; on success *out holds a fresh program. */
static asyncrt_status run_nvrtc(compile_job *job, asyncrt_program **out)
{
    asyncrt_context *ctx = job->ctx;
    const asyncrt_compile_options *o = job->opts;
    size_t header_count = o->header_count + asyncrt_embedded_file_count + 1;
    const char **contents = calloc(header_count + 1, sizeof(char *));
    const char **names = calloc(header_count + 1, sizeof(char *));
    asyncrt_program *p = calloc(1, sizeof *p);
    nvrtcProgram prog = NULL;
    char *log = NULL;
    const asyncrt_nvrtc *nv = NULL;
    asyncrt_status status = ASYNCRT_ERROR_OUT_OF_MEMORY;
    if (!contents || !names || !p) goto done;
    if ((status = asyncrt_require_nvrtc(ctx, &nv)) != ASYNCRT_SUCCESS) goto done;
    status = ASYNCRT_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < o->header_count; i++) {
        names[i] = o->headers[i].name;
        contents[i] = o->headers[i].content;
    }
    for (size_t i = 0; i < asyncrt_embedded_file_count; i++) {
        names[o->header_count + i] = asyncrt_embedded_files[i].name;
        contents[o->header_count + i] = asyncrt_embedded_files[i].content;
    }
    if (caller_has_cuda_h(o)) header_count--;
    else {
        names[header_count - 1] = k_cuda_h.name;
        contents[header_count - 1] = k_cuda_h.content;
    }
    nvrtcResult r = nv->nvrtcCreateProgram(&prog, job->source, job->source_name, (int)header_count,
                                       contents, names);
    if (r != NVRTC_SUCCESS) {
        status = asyncrt_fail(ctx, ASYNCRT_ERROR_NVRTC, "nvrtcCreateProgram(%s) failed: %s",
                              job->source_name, nv->nvrtcGetErrorString(r));
        prog = NULL;
        goto done;
    }
    for (size_t i = 0; i < o->name_expression_count; i++) {
        if ((r = nv->nvrtcAddNameExpression(prog, o->name_expressions[i])) != NVRTC_SUCCESS) {
            status = asyncrt_fail(ctx, ASYNCRT_ERROR_NVRTC, "nvrtcAddNameExpression(\"%s\") failed: %s",
                                  o->name_expressions[i], nv->nvrtcGetErrorString(r));
            goto done;
        }
    }
    nvrtcResult compiled = asyncrt_fault_hit(ctx, "nvrtcCompileProgram")
                               ? NVRTC_ERROR_INTERNAL_ERROR
                               : nv->nvrtcCompileProgram(prog, (int)job->options.count,
                                                     (const char *const *)job->options.items);
    size_t log_size = 0;
    if (nv->nvrtcGetProgramLogSize(prog, &log_size) != NVRTC_SUCCESS || !(log = calloc(1, log_size + 1)) ||
        nv->nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) {
        status = asyncrt_fail(ctx, ASYNCRT_ERROR_NVRTC, "cannot read NVRTC's log for %s", job->source_name);
        goto done;
    }
    if (compiled != NVRTC_SUCCESS) {
        /* A bad option is the caller's mistake as much as bad source is. */
        status = compiled == NVRTC_ERROR_COMPILATION ? ASYNCRT_ERROR_COMPILE
                 : compiled == NVRTC_ERROR_INVALID_OPTION ? ASYNCRT_ERROR_INVALID_ARGUMENT
                                                          : ASYNCRT_ERROR_NVRTC;
        status = asyncrt_fail(ctx, status, "compiling %s for %s failed (%s):\n%s", job->source_name,
                              job->arch_name, nv->nvrtcGetErrorString(compiled), log);
        goto done;
    }

    p->ptx = job->arch.ptx;
    snprintf(p->arch, sizeof p->arch, "%s", job->arch_name);
    memcpy(p->key, job->key, sizeof p->key);
    p->log = log;
    log = NULL;
    r = p->ptx ? nv->nvrtcGetPTXSize(prog, &p->image_size) : nv->nvrtcGetCUBINSize(prog, &p->image_size);
    if (r == NVRTC_SUCCESS && !(p->image = malloc(p->image_size))) goto done;
    if (r == NVRTC_SUCCESS)
        r = p->ptx ? nv->nvrtcGetPTX(prog, (char *)p->image) : nv->nvrtcGetCUBIN(prog, (char *)p->image);
    if (r != NVRTC_SUCCESS) {
        status = asyncrt_fail(ctx, ASYNCRT_ERROR_NVRTC, "reading the %s image of %s failed: %s",
                              p->ptx ? "PTX" : "CUBIN", job->source_name, nv->nvrtcGetErrorString(r));
        goto done;
    }
    if (!asyncrt_lean_enabled()) { /* lean.h says why and when */
    } else if (p->ptx)
        p->image_size = asyncrt_lean_prune_ptx((char *)p->image) ? strlen((char *)p->image) + 1 : p->image_size;
    else if (asyncrt_lean_options_allow(o->options, o->option_count))
        asyncrt_lean_apply(ctx, nv, prog, job->arch_name, &p->image, &p->image_size);
    p->expressions = calloc(o->name_expression_count + 1, sizeof(char *));
    p->lowered = calloc(o->name_expression_count + 1, sizeof(char *));
    if (!p->expressions || !p->lowered) goto done;
    for (size_t i = 0; i < o->name_expression_count; i++, p->name_count++) {
        const char *lowered = NULL;
        if ((r = nv->nvrtcGetLoweredName(prog, o->name_expressions[i], &lowered)) != NVRTC_SUCCESS) {
            status = asyncrt_fail(ctx, ASYNCRT_ERROR_NVRTC, "nvrtcGetLoweredName(\"%s\") failed: %s",
                                  o->name_expressions[i], nv->nvrtcGetErrorString(r));
            goto done;
        }
        p->expressions[i] = strdup(o->name_expressions[i]);
        p->lowered[i] = strdup(lowered);
        if (!p->expressions[i] || !p->lowered[i]) {
            p->name_count++;
            goto done;
        }
    }
    p->origin = ASYNCRT_ORIGIN_COMPILED;
    *out = p;
    p = NULL;
    status = ASYNCRT_SUCCESS;
done:
    if (status == ASYNCRT_ERROR_OUT_OF_MEMORY)
        asyncrt_fail(ctx, status, "out of memory compiling %s", job->source_name);
    if (prog) nv->nvrtcDestroyProgram(&prog);
    asyncrt_program_destroy(p);
    free(log);
    free(contents);
    free(names);
    return status;
}

asyncrt_status asyncrt_program_compile(asyncrt_context *ctx, const char *source_name,
                                       const char *source, const asyncrt_compile_options *opts,
                                       asyncrt_program **out)
{
    ASYNCRT_ENTER(ctx);
    static const asyncrt_compile_options no_options = {0};
    *out = NULL;
    if (!source)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "source is NULL");
    compile_job job = {.ctx = ctx,
                       .source_name = source_name && *source_name ? source_name : "kernel.cu",
                       .source = source,
                       .opts = opts ? opts : &no_options};
    asyncrt_status s = asyncrt_arch_resolve(ctx, job.opts->arch, &job.arch);
    if (s != ASYNCRT_SUCCESS) return s;
    asyncrt_arch_format(&job.arch, job.arch_name, sizeof job.arch_name);

    double start = asyncrt_now_ms();
    build_options(&job);
    if (job.options.failed) {
        list_free(&job.options);
        return asyncrt_fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory compiling %s", job.source_name);
    }
    compute_key(&job);
    asyncrt_program *p = job.cacheable ? asyncrt_cache_find(ctx, job.key) : NULL;
    if (p) {
        asyncrt_log(ctx, 2, "%s: %s cache hit for %s, no NVRTC call (%.2f ms)", job.source_name,
                    p->origin == ASYNCRT_ORIGIN_MEMORY_CACHE ? "memory" : "disk", p->arch,
                    asyncrt_now_ms() - start);
    } else {
        s = run_nvrtc(&job, &p);
        if (s == ASYNCRT_SUCCESS) {
            asyncrt_log(ctx, 2, "%s: NVRTC compiled %s %s (%zu bytes) in %.1f ms", job.source_name,
                        p->arch, p->ptx ? "PTX" : "CUBIN", p->image_size, asyncrt_now_ms() - start);
            if (job.cacheable) asyncrt_cache_store(ctx, p);
        }
    }
    list_free(&job.options);
    *out = p;
    return s;
}
