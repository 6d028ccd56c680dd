/* NVRTC compilation behind the program cache. */
#define _DEFAULT_SOURCE /* CLOCK_REALTIME_COARSE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "cache.h"
#include "cache_key.h"
#include "cache_trace.h"
#include "cache_trust.h"
#include "context.h"
#include "embedded.h"
#include "pch.h"
#include "program.h"
#include "remote_cache.h"
#include "sha256.h"
#include "speculate.h"

#ifndef ASYNCRT_TOOLKIT_INCLUDE
#define ASYNCRT_TOOLKIT_INCLUDE "/usr/local/cuda/include"
#endif

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
    char *path = asyncrt__format("%s/%s", dir, rel);
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

/* Built-in standard headers (kernels_src/std/): offered unless the caller
 * turned them off or provides its own of that name, in memory or as a file
 * in one of its -I directories (NVRTC would let the in-memory one win). */
static bool std_header_offered(const asyncrt_compile_options *o, const char *name)
{
    if (o->no_std_headers) return false;
    for (size_t i = 0; i < o->header_count; i++)
        if (strcmp(o->headers[i].name, name) == 0) return false;
    for (size_t i = 0; i < o->include_dir_count; i++)
        if (has_file(o->include_dirs[i], name)) return false;
    return true;
}

typedef struct compile_job {
    asyncrt_context *ctx;
    const char *source_name, *source;
    const asyncrt_compile_options *opts;
    asyncrt_arch arch;
    char arch_name[32];
    string_list options;       /* what NVRTC gets */
    char toolkit[4096];        /* the toolkit's include directory, "" if none */
    bool cacheable;
    uint8_t key[32];           /* key1: what is known before compiling */
    uint8_t pch_key[32];       /* key1 less the source: which PCH directory (pch.h) */
    bool prepared;             /* options and key are those of `arch` */
    bool looked_up;            /* the cache already missed for this key (a cache_only call) */
    bool claimed;              /* this job holds the key's in-flight claim (context.c) */
    bool leased;               /* and the remote cache's lease on it (remote_cache.h) */
    char trace_dir[64];        /* this compile's -fdevice-time-trace directory, "" if none */
} compile_job;

static void build_options(compile_job *job)
{
    const asyncrt_compile_options *o = job->opts;
    string_list *l = &job->options;
    list_push_owned(l, asyncrt__format("-arch=%s", job->arch_name));
    list_push_owned(l, asyncrt__format("-std=%s", o->std ? o->std : "c++17"));
    /* unannotated functions and variables are device ones, as jitify does
     * (README: "Headers kernels see" has the measurements) */
    if (!o->no_default_device) list_push_owned(l, strdup("-default-device"));
    char *toolkit = job->toolkit;
    if (find_toolkit_include(toolkit, sizeof job->toolkit)) {
        list_push_owned(l, asyncrt__format("-I%s", toolkit));
        if (has_file(toolkit, "cccl/cuda")) list_push_owned(l, asyncrt__format("-I%s/cccl", toolkit));
    } else {
        toolkit[0] = '\0';
        asyncrt__log(job->ctx, 1, "warning: no CUDA toolkit include directory found (set CUDA_PATH); "
                                 "<cuda/barrier> and similar headers will not resolve");
    }
    for (size_t i = 0; i < o->include_dir_count; i++)
        list_push_owned(l, asyncrt__format("-I%s", o->include_dirs[i]));
    for (size_t i = 0; i < o->define_count; i++)
        list_push_owned(l, asyncrt__format("-D%s", o->defines[i]));
    for (size_t i = 0; i < o->option_count; i++) list_push_owned(l, strdup(o->options[i]));
}

/* Why this compile cannot be keyed on what NVRTC reports it read, or NULL.
 * The time trace lists every header opened, but not __has_include probes
 * (a probe that failed and would now succeed leaves no trace) nor headers
 * that came from a precompiled header; and NVRTC before 12.8 has no trace. */
static const char *uncacheable_reason(const compile_job *job, int nvrtc_version)
{
    const asyncrt_compile_options *o = job->opts;
    if (nvrtc_version < 12080) return "NVRTC older than 12.8 cannot say which headers it read";
    for (size_t i = 0; i < o->option_count; i++) {
        const char *opt = o->options[i] + strspn(o->options[i], "-");
        if (strncmp(opt, "pch", 3) == 0 || strncmp(opt, "use-pch", 7) == 0 || strncmp(opt, "create-pch", 10) == 0)
            return "precompiled headers hide which headers were read";
        if (strncmp(opt, "fdevice-time-trace", 18) == 0) return "the options already ask for a time trace";
    }
    if (strstr(job->source, "__has_include")) return "the source uses __has_include, which the trace cannot see";
    for (size_t i = 0; i < o->header_count; i++)
        if (strstr(o->headers[i].content, "__has_include"))
            return "an in-memory header uses __has_include, which the trace cannot see";
    return NULL;
}

/* key1: everything known before compiling. The files NVRTC reads go into
 * the manifest (cache_manifest.h), never into this key. */
/* The SHA-256 of each built-in file, computed once per process: key1 holds
 * these instead of ~150 KB of constant text, which cost a memory-cache hit
 * more than half its time. Built-in files never change while a process runs. */
static uint8_t g_embedded_digest[32];  /* kernels_src/ and <cuda.h>, always offered */
static uint8_t g_std_digests[64][32];  /* kernels_src/std/, one each */
static bool g_std_digested;            /* false: more files than slots, hash the text */
static pthread_once_t g_digests_once = PTHREAD_ONCE_INIT;

static void digest_builtins(void)
{
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    for (size_t i = 0; i < asyncrt__embedded_file_count; i++) {
        asyncrt__key_str(&h, asyncrt__embedded_files[i].name);
        asyncrt__key_str(&h, asyncrt__embedded_files[i].content);
    }
    asyncrt__key_str(&h, k_cuda_h.content);
    asyncrt__sha256_final(&h, g_embedded_digest);
    g_std_digested = asyncrt__std_header_file_count <= 64;
    for (size_t i = 0; g_std_digested && i < asyncrt__std_header_file_count; i++) {
        asyncrt__sha256_init(&h);
        asyncrt__key_str(&h, asyncrt__std_header_files[i].content);
        asyncrt__sha256_final(&h, g_std_digests[i]);
    }
}

/* Whether a quoted include could be looked for in the working directory
 * (the directory of a source given as a string, and of in-memory headers),
 * or in an include directory named relative to it. A lookup there that found
 * nothing leaves no trace, so the manifest alone would not see another
 * working directory's header of that name, which would win there. An
 * #include not followed by '<' counts (a macro may expand to a quoted name). */
static bool includes_search_cwd(const compile_job *job)
{
    const asyncrt_compile_options *o = job->opts;
    for (size_t i = 0; i < o->include_dir_count; i++)
        if (o->include_dirs[i][0] != '/') return true;
    for (size_t i = 0; i < o->option_count; i++) {
        const char *opt = o->options[i];
        const char *dir = strncmp(opt, "-I", 2) == 0               ? opt + 2
                          : strncmp(opt, "--include-path=", 15) == 0 ? opt + 15
                                                                     : NULL;
        if (dir && dir[0] != '/') return true; /* "-I" "dir" as two options counts too */
    }
    for (size_t i = 0; i <= o->header_count; i++) {
        const char *text = i ? o->headers[i - 1].content : job->source;
        for (const char *p = text; (p = strstr(p, "include"));) {
            size_t back = (size_t)(p - text);
            p += 7;
            while (back && (text[back - 1] == ' ' || text[back - 1] == '\t')) back--;
            if (!back || text[back - 1] != '#') continue;
            if (*p != ' ' && *p != '\t' && *p != '"' && *p != '<') continue; /* #include_next, #includes */
            p += strspn(p, " \t");
            if (*p != '<') return true;
        }
    }
    return false;
}

/* key1 = SHA-256 of the environment (below), the working directory where
 * includes may search it (above), and the source; the PCH key = SHA-256 of
 * the environment and the working directory (quoted includes resolve from
 * it), since NVRTC's PCH reuse depends on all but the source. */
static void compute_key(compile_job *job)
{
    pthread_once(&g_digests_once, digest_builtins);
    const asyncrt_compile_options *o = job->opts;
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    /* NVRTC's version (memo beside the cache) and file identity (stat): a hit opens no NVRTC. */
    asyncrt_nvrtc_facts nvrtc;
    int nvrtc_version = asyncrt__nvrtc_facts_get(job->ctx, &nvrtc, NULL, 0) == ASYNCRT_SUCCESS ? nvrtc.version : 0;
    char versions[64];
    snprintf(versions, sizeof versions, "asyncrt %s nvrtc %d key 3", ASYNCRT_VERSION_STRING, nvrtc_version);
    asyncrt__key_str(&h, versions);
    asyncrt_nvrtc_identity file = {0};
    if (asyncrt__nvrtc_identity_get(&file)) asyncrt__key_dir_identity(&h, file.path);
    asyncrt__key_dir_identity(&h, job->toolkit);
    for (size_t i = 0; i < job->options.count; i++) asyncrt__key_str(&h, job->options.items[i]);
    for (size_t i = 0; i < o->header_count; i++) {
        asyncrt__key_str(&h, o->headers[i].name);
        asyncrt__key_str(&h, o->headers[i].content);
    }
    asyncrt__sha256_update(&h, g_embedded_digest, sizeof g_embedded_digest);
    for (size_t i = 0; i < asyncrt__std_header_file_count; i++)
        if (std_header_offered(o, asyncrt__std_header_files[i].name)) {
            asyncrt__key_str(&h, asyncrt__std_header_files[i].name);
            if (g_std_digested) asyncrt__sha256_update(&h, g_std_digests[i], 32);
            else asyncrt__key_str(&h, asyncrt__std_header_files[i].content);
        }
    uint8_t environment[32];
    asyncrt__sha256_final(&h, environment);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
    asyncrt__sha256_init(&h);
    asyncrt__sha256_update(&h, environment, 32);
    asyncrt__key_str(&h, cwd);
    asyncrt__sha256_final(&h, job->pch_key);
    asyncrt__sha256_init(&h);
    asyncrt__sha256_update(&h, environment, 32);
    bool cwd_matters = includes_search_cwd(job);
    asyncrt__key_str(&h, cwd_matters ? cwd : "");
    asyncrt__key_str(&h, job->source_name);
    asyncrt__key_str(&h, job->source);
    for (size_t i = 0; i < o->name_expression_count; i++) asyncrt__key_str(&h, o->name_expressions[i]);
    asyncrt__sha256_final(&h, job->key);
    const char *why = job->ctx->memory_cache ? uncacheable_reason(job, nvrtc_version) : "";
    if (!why && cwd_matters && !cwd[0]) why = "includes may search the working directory, which cannot be read";
    job->cacheable = why == NULL;
    if (why && *why) asyncrt__log(job->ctx, 1, "not caching %s: %s", job->source_name, why);
}

/* Asks NVRTC for a time trace into a fresh private directory: the trace
 * file must not exist beforehand, and the name must not be guessable. */
static void add_trace_option(compile_job *job)
{
    if (!asyncrt__make_private_dir(job->trace_dir, sizeof job->trace_dir, "asyncrt-trace-")) {
        asyncrt__log(job->ctx, 1, "not caching %s: cannot create a trace directory in %s", job->source_name,
                    job->trace_dir);
        job->trace_dir[0] = '\0';
        job->cacheable = false;
        return;
    }
    list_push_owned(&job->options, asyncrt__format("-fdevice-time-trace=%s/trace", job->trace_dir));
}

/* Removes the trace's directory. */
static void remove_trace(compile_job *job)
{
    if (!job->trace_dir[0]) return;
    char *trace = asyncrt__format("%s/trace.json", job->trace_dir);
    if (trace) unlink(trace); /* a failed compile may still have written it */
    free(trace);
    rmdir(job->trace_dir);
    job->trace_dir[0] = '\0';
}

/* The file names of `#line N "name"` (and `# N "name"`) directives: NVRTC's
 * trace lists them like headers. */
static void add_line_names(string_list *names, const char *text)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *q = p + strspn(p, " \t");
        if (*q++ != '#') continue;
        q += strspn(q, " \t");
        if (strncmp(q, "line", 4) == 0) q += 4;
        q += strspn(q, " \t");
        size_t digits = strspn(q, "0123456789");
        if (!digits) continue;
        q += digits;
        q += strspn(q, " \t");
        if (*q++ != '"') continue;
        size_t n = strcspn(q, "\"\n");
        if (q[n] == '"') list_push_owned(names, asyncrt__format("%.*s", (int)n, q));
    }
}

/* What the compile read: its trace's files, and where it may have used a
 * precompiled header, the files the PCH directory's compiles read (its trace
 * then lacks them). False with why when that cannot be known. */
static bool read_dependencies(compile_job *job, const asyncrt_pch_use *pch, const struct timespec *start,
                              asyncrt_dep_set *deps, char *why, size_t why_size)
{
    const asyncrt_compile_options *o = job->opts;
    const asyncrt_dep_set *record = asyncrt__pch_record(pch);
    bool from_pch = record && record->count;
    char *trace = asyncrt__format("%s/trace.json", job->trace_dir);
    size_t size = 0;
    snprintf(why, why_size, "out of memory");
    unsigned char *json =
        trace ? asyncrt__cache_read_file(AT_FDCWD, trace, ASYNCRT_CACHE_FILE_MAX, false, &size, why, why_size) : NULL;
    if (!json && trace && !why[0]) snprintf(why, why_size, "NVRTC wrote no time trace");
    /* Names the trace may give that are not disk files: in-memory headers,
     * the source itself and #line names (the map op's "map expression"). */
    string_list memory = {0};
    list_push_owned(&memory, strdup(job->source_name));
    list_push_owned(&memory, strdup(k_cuda_h.name));
    add_line_names(&memory, job->source);
    for (size_t i = 0; i < o->header_count; i++) {
        list_push_owned(&memory, strdup(o->headers[i].name));
        add_line_names(&memory, o->headers[i].content);
    }
    for (size_t i = 0; i < asyncrt__embedded_file_count; i++) {
        list_push_owned(&memory, strdup(asyncrt__embedded_files[i].name));
        add_line_names(&memory, asyncrt__embedded_files[i].content);
    }
    for (size_t i = 0; i < asyncrt__std_header_file_count; i++)
        if (std_header_offered(o, asyncrt__std_header_files[i].name))
            list_push_owned(&memory, strdup(asyncrt__std_header_files[i].name));
    if (memory.failed) snprintf(why, why_size, "out of memory");
    asyncrt_trace_headers headers = {0};
    bool ok = json && !memory.failed &&
              asyncrt__trace_parse((const char *)json, size, from_pch, &headers, why, why_size);
    for (size_t i = 0; ok && from_pch && i < record->count; i++) /* what the PCH holds */
        if (!(ok = asyncrt__trace_headers_add(&headers, strdup(record->deps[i].path))))
            snprintf(why, why_size, "out of memory");
    ok = ok && asyncrt__dep_set_record(&headers, (const char *const *)memory.items, memory.count, job->toolkit,
                                      start, job->key, deps, why, why_size);
    asyncrt__trace_headers_free(&headers);
    list_free(&memory);
    free(json);
    if (trace) unlink(trace);
    free(trace);
    return ok;
}

/* Runs NVRTC; on success *out holds a fresh program. */
static asyncrt_status run_nvrtc(compile_job *job, asyncrt_program **out)
{
    asyncrt_context *ctx = job->ctx;
    const asyncrt_compile_options *o = job->opts;
    size_t header_count = o->header_count + asyncrt__embedded_file_count + asyncrt__std_header_file_count + 1;
    const char **contents = calloc(header_count + 1, sizeof(char *));
    const char **names = calloc(header_count + 1, sizeof(char *));
    asyncrt_program *p = calloc(1, sizeof *p);
    nvrtcProgram prog = NULL;
    char *log = NULL;
    const asyncrt_nvrtc *nv = NULL;
    asyncrt_status status = ASYNCRT_ERROR_OUT_OF_MEMORY;
    if (!contents || !names || !p) goto done;
    if ((status = asyncrt__require_nvrtc(ctx, &nv)) != ASYNCRT_SUCCESS) goto done;
    status = ASYNCRT_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < o->header_count; i++) {
        names[i] = o->headers[i].name;
        contents[i] = o->headers[i].content;
    }
    for (size_t i = 0; i < asyncrt__embedded_file_count; i++) {
        names[o->header_count + i] = asyncrt__embedded_files[i].name;
        contents[o->header_count + i] = asyncrt__embedded_files[i].content;
    }
    header_count = o->header_count + asyncrt__embedded_file_count;
    for (size_t i = 0; i < asyncrt__std_header_file_count; i++)
        if (std_header_offered(o, asyncrt__std_header_files[i].name)) {
            names[header_count] = asyncrt__std_header_files[i].name;
            contents[header_count++] = asyncrt__std_header_files[i].content;
        }
    if (!caller_has_cuda_h(o)) {
        names[header_count] = k_cuda_h.name;
        contents[header_count++] = k_cuda_h.content;
    }
    nvrtcResult r = nv->nvrtcCreateProgram(&prog, job->source, job->source_name, (int)header_count,
                                       contents, names);
    if (r != NVRTC_SUCCESS) {
        status = asyncrt__fail(ctx, ASYNCRT_ERROR_NVRTC, "nvrtcCreateProgram(%s) failed: %s",
                              job->source_name, nv->nvrtcGetErrorString(r));
        prog = NULL;
        goto done;
    }
    for (size_t i = 0; i < o->name_expression_count; i++) {
        if ((r = nv->nvrtcAddNameExpression(prog, o->name_expressions[i])) != NVRTC_SUCCESS) {
            status = asyncrt__fail(ctx, ASYNCRT_ERROR_NVRTC, "nvrtcAddNameExpression(\"%s\") failed: %s",
                                  o->name_expressions[i], nv->nvrtcGetErrorString(r));
            goto done;
        }
    }
    nvrtcResult compiled = asyncrt__fault_hit(ctx, "nvrtcCompileProgram")
                               ? NVRTC_ERROR_INTERNAL_ERROR
                               : nv->nvrtcCompileProgram(prog, (int)job->options.count,
                                                     (const char *const *)job->options.items);
    size_t log_size = 0;
    if (nv->nvrtcGetProgramLogSize(prog, &log_size) != NVRTC_SUCCESS || !(log = calloc(1, log_size + 1)) ||
        nv->nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) {
        status = asyncrt__fail(ctx, ASYNCRT_ERROR_NVRTC, "cannot read NVRTC's log for %s", job->source_name);
        goto done;
    }
    if (compiled != NVRTC_SUCCESS) {
        /* A bad option is the caller's mistake as much as bad source is. */
        status = compiled == NVRTC_ERROR_COMPILATION ? ASYNCRT_ERROR_COMPILE
                 : compiled == NVRTC_ERROR_INVALID_OPTION ? ASYNCRT_ERROR_INVALID_ARGUMENT
                                                          : ASYNCRT_ERROR_NVRTC;
        status = asyncrt__fail(ctx, status, "compiling %s for %s failed (%s):\n%s", job->source_name,
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
        status = asyncrt__fail(ctx, ASYNCRT_ERROR_NVRTC, "reading the %s image of %s failed: %s",
                              p->ptx ? "PTX" : "CUBIN", job->source_name, nv->nvrtcGetErrorString(r));
        goto done;
    }
    p->expressions = calloc(o->name_expression_count + 1, sizeof(char *));
    p->lowered = calloc(o->name_expression_count + 1, sizeof(char *));
    if (!p->expressions || !p->lowered) goto done;
    for (size_t i = 0; i < o->name_expression_count; i++, p->name_count++) {
        const char *lowered = NULL;
        if ((r = nv->nvrtcGetLoweredName(prog, o->name_expressions[i], &lowered)) != NVRTC_SUCCESS) {
            status = asyncrt__fail(ctx, ASYNCRT_ERROR_NVRTC, "nvrtcGetLoweredName(\"%s\") failed: %s",
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
        asyncrt__fail(ctx, status, "out of memory compiling %s", job->source_name);
    if (prog) nv->nvrtcDestroyProgram(&prog);
    asyncrt_program_destroy(p);
    free(log);
    free(contents);
    free(names);
    return status;
}

/* What a fresh program was compiled from, for asyncrt-cache list: the
 * source name and NVRTC's options up to `count` (the rest are the PCH's and
 * the trace's), less -arch (the program says it) and the toolkit's -I (implied).
 * Left unknown if memory runs out: it is in no key. */
static void describe(const compile_job *job, size_t count, asyncrt_program *p)
{
    size_t size = 1;
    for (size_t i = 0; i < count; i++) size += strlen(job->options.items[i]) + 1;
    char *text = malloc(size), *at = text;
    char toolkit[4200], cccl[4200];
    snprintf(toolkit, sizeof toolkit, "-I%s", job->toolkit);
    snprintf(cccl, sizeof cccl, "-I%s/cccl", job->toolkit);
    for (size_t i = 0; text && i < count; i++) {
        const char *o = job->options.items[i];
        if (strncmp(o, "-arch=", 6) == 0 || (job->toolkit[0] && (!strcmp(o, toolkit) || !strcmp(o, cccl)))) continue;
        at += sprintf(at, "%s%s", at == text ? "" : " ", o);
    }
    if (text) *at = '\0';
    p->options = text;
    p->source_name = strdup(job->source_name);
}

/* Threads: one compile per key at a time. A claiming lookup that misses
 * keeps the key claimed until the compile that follows has stored its
 * result, so a duplicate request waits in its own lookup, then hits: one
 * lookup, one count, per request. A job holds at most one claim. */
static void release_claim(compile_job *job)
{
    if (!job->claimed) return;
    asyncrt__inflight_leave(job->ctx, job->key);
    job->claimed = false;
}

/* Compiles for job->arch: from the cache, else with NVRTC (then cached).
 * With cache_only a miss leaves *out NULL and returns success; `claim` then
 * keeps the key claimed for the compile that follows. */
static asyncrt_status compile_target(compile_job *job, bool cache_only, bool claim, asyncrt_program **out)
{
    asyncrt_context *ctx = job->ctx;
    *out = NULL;
    double start = asyncrt__now_ms();
    if (!job->prepared) {
        release_claim(job);
        asyncrt__arch_format(&job->arch, job->arch_name, sizeof job->arch_name);
        list_free(&job->options);
        memset(&job->options, 0, sizeof job->options);
        build_options(job);
        if (job->options.failed)
            return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory compiling %s", job->source_name);
        compute_key(job);
        job->prepared = true;
        job->looked_up = false;
    }
    if (job->cacheable && !job->looked_up) {
        if (claim || !cache_only) {
            asyncrt__inflight_enter(ctx, job->key);
            job->claimed = true;
        }
        asyncrt_program *p = asyncrt__cache_find(ctx, job->key);
        if (!p) p = asyncrt__remote_find(ctx, job->key);
        job->looked_up = !p;
        if (p) {
            release_claim(job);
            asyncrt__log(ctx, 2, "%s: %s hit for %s, no NVRTC call (%.2f ms)", job->source_name,
                        asyncrt_program_origin_string(p->origin), p->arch, asyncrt__now_ms() - start);
            *out = p;
            return ASYNCRT_SUCCESS;
        }
    }
    if (cache_only) return ASYNCRT_SUCCESS;
    asyncrt_program *p = job->cacheable ? asyncrt__remote_claim(ctx, job->key, &job->leased) : NULL;
    if (p) { /* another process of the fleet compiled it meanwhile */
        release_claim(job);
        *out = p;
        return ASYNCRT_SUCCESS;
    }
    size_t base = job->options.count; /* the options serve a retry too: what is added here goes after */
    /* The coarse clock is the one file timestamps come from: a header
     * written after this instant (so after the PCH check below) has an mtime
     * at or after it, and the compile is not recorded. */
    struct timespec began;
    clock_gettime(CLOCK_REALTIME_COARSE, &began);
    asyncrt_pch_use pch = {0};
    char note[512];
    if (job->cacheable) { /* a PCH only where the trace tells what it holds */
        if (asyncrt__pch_begin(ctx->pch, job->pch_key, &pch, note, sizeof note)) {
            list_push_owned(&job->options, strdup("-pch"));
            list_push_owned(&job->options, strdup(pch.option));
            list_push_owned(&job->options, strdup("--pch-messages=false"));
            list_push_owned(&job->options, strdup("-diag-suppress=630")); /* "not compatible with the PCH" */
        }
        if (*note) asyncrt__log(ctx, 1, "%s: %s", job->source_name, note);
        add_trace_option(job);
    }
    asyncrt_status s = job->options.failed ? asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY,
                                                          "out of memory compiling %s", job->source_name)
                                           : run_nvrtc(job, &p);
    if (s == ASYNCRT_SUCCESS) describe(job, base, p);
    if (s == ASYNCRT_SUCCESS)
        asyncrt__log(ctx, 2, "%s: NVRTC compiled %s %s (%zu bytes) in %.1f ms%s", job->source_name, p->arch,
                    p->ptx ? "PTX" : "CUBIN", p->image_size, asyncrt__now_ms() - start,
                    pch.dir ? " (precompiled headers on)" : "");
    if (job->trace_dir[0] && (s == ASYNCRT_SUCCESS || pch.dir)) {
        asyncrt_dep_set deps = {0};
        char why[512];
        bool known = read_dependencies(job, &pch, &began, &deps, why, sizeof why);
        if (s == ASYNCRT_SUCCESS && known) {
            memcpy(p->key, deps.result_key, sizeof p->key);
            asyncrt__cache_store(ctx, job->key, &deps, p);
            asyncrt__remote_store(ctx, job->key, &deps, p);
        } else if (s == ASYNCRT_SUCCESS) {
            asyncrt__log(ctx, 1, "not caching %s: %s", job->source_name, why);
        }
        asyncrt__pch_end(&pch, known ? &deps : NULL, note, sizeof note);
        if (*note) asyncrt__log(ctx, 1, "%s: %s", job->source_name, note);
        asyncrt__dep_set_free(&deps);
    }
    if (pch.dir) { /* no trace: what a PCH made holds is unknown */
        asyncrt__pch_end(&pch, NULL, note, sizeof note);
        asyncrt__log(ctx, 1, "%s: %s", job->source_name, note);
    }
    remove_trace(job);
    while (!job->options.failed && job->options.count > base) free(job->options.items[--job->options.count]);
    asyncrt__remote_release(ctx, job->key, &job->leased);
    release_claim(job);
    *out = p;
    return s;
}

/* `auto` builds sm_XY for the exact device; a kernel using arch-specific
 * instructions (wgmma, setmaxnreg) fails there in ptxas and is retried once
 * with sm_XYa. An explicit target gets a hint instead. A retry that
 * succeeded is found in the cache under sm_XYa's key next time, so the
 * failing compile is not repeated. */
static asyncrt_status compile_auto_aware(compile_job *job, bool from_auto, asyncrt_program **out)
{
    asyncrt_context *ctx = job->ctx;
    asyncrt_arch first = job->arch, retry = first;
    retry.suffix = 'a';
    bool may_retry = from_auto && !first.ptx && !first.suffix && first.number >= 90;
    asyncrt_status s = compile_target(job, true, true, out);
    if (s == ASYNCRT_SUCCESS && !*out && may_retry) { /* a retry of an earlier run, cached? */
        compile_job alt = *job;
        memset(&alt.options, 0, sizeof alt.options);
        alt.arch = retry;
        alt.prepared = false;
        alt.claimed = false;
        s = compile_target(&alt, true, false, out);
        list_free(&alt.options);
        if (*out) {
            release_claim(job);
            asyncrt__log(ctx, 1, "target %s: cached from an earlier retry (the kernel needs it)", (*out)->arch);
        }
    }
    if (s != ASYNCRT_SUCCESS || *out) return s;
    s = compile_target(job, false, true, out); /* first's options and key are still prepared */
    if (s != ASYNCRT_ERROR_COMPILE) return s;
    int supported[64]; /* only now: a cache hit must not load NVRTC */
    size_t count = asyncrt__nvrtc_supported_archs(supported, 64);
    char hint[512];
    char *first_error = strdup(asyncrt_context_last_error(ctx));
    if (!first_error) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    if (asyncrt__arch_after_failure(&first, from_auto, supported, count, first_error, &retry, hint,
                                   sizeof hint)) {
        char name[32], first_name[32];
        asyncrt__arch_format(&retry, name, sizeof name);
        asyncrt__arch_format(&first, first_name, sizeof first_name);
        asyncrt__log(ctx, 1, "target %s: ptxas says %s lacks instructions %s uses; retrying with %s",
                    name, job->arch_name, job->source_name, name);
        job->arch = retry;
        job->prepared = false;
        s = compile_target(job, false, true, out);
        if (s == ASYNCRT_ERROR_COMPILE) {
            char *second = strdup(asyncrt_context_last_error(ctx));
            asyncrt__arch_after_failure(&retry, true, supported, count, second, &retry, hint, sizeof hint);
            s = asyncrt__fail(ctx, s, "%s\n(arch auto: %s was tried after ptxas said %s lacks "
                             "instructions the kernel uses)%s%s", second ? second : "", name,
                             first_name, *hint ? "\n" : "", hint);
            free(second);
        }
    } else if (*hint) {
        s = asyncrt__fail(ctx, s, "%s\n%s", first_error, hint);
    }
    free(first_error);
    return s;
}

/* "auto" while asyncrt_context_open_device_async still opens the device:
 * compile for the target remembered for it (speculate.h) meanwhile. True
 * when *status (and *out) is the answer (the device's failure to open
 * included); false when the caller must compile as usual (no guess, or a
 * wrong one), the device then open. A wrong guess is never returned. */
static bool speculative_compile(asyncrt_context *ctx, const char *source_name, const char *source,
                                 const asyncrt_compile_options *opts, asyncrt_program **out,
                                 asyncrt_status *status)
{
    char guess[32];
    if (!ctx->memory_cache || !asyncrt__speculation_guess(ctx, ctx->open_ordinal, guess, sizeof guess)) {
        *status = asyncrt__wait_device(ctx); /* a failed open is the answer: "auto" has none */
        return *status != ASYNCRT_SUCCESS;
    }
    double start = asyncrt__now_ms();
    asyncrt_compile_options o = opts ? *opts : (asyncrt_compile_options){0};
    o.arch = guess;
    asyncrt_program *p = NULL;
    asyncrt_status s = asyncrt_program_compile(ctx, source_name, source, &o, &p);
    double compiled = asyncrt__now_ms();
    asyncrt_status w = asyncrt__wait_device(ctx);
    asyncrt_arch real;
    char name[32];
    if (w == ASYNCRT_SUCCESS) w = asyncrt__arch_resolve(ctx, NULL, &real);
    if (w != ASYNCRT_SUCCESS) { /* no device: "auto" has no answer, whatever was guessed */
        asyncrt_program_destroy(p);
        *status = w;
        return true;
    }
    asyncrt__arch_format(&real, name, sizeof name);
    if (strcmp(name, guess) != 0) {
        asyncrt__log(ctx, 1, "%s: speculative target %s was wrong, the device needs %s: compiling again",
                    source_name ? source_name : "kernel.cu", guess, name);
        asyncrt_program_destroy(p);
        return false;
    }
    asyncrt__log(ctx, 2, "%s: speculative target %s was right; %.1f ms of compile overlapped the "
                        "device's start-up, %.1f ms waited for it after",
                source_name ? source_name : "kernel.cu", guess, compiled - start, asyncrt__now_ms() - compiled);
    *out = p;
    *status = s;
    return true;
}

/* The whole flow; lookup_only stops after the cache lookup (batch.c asks
 * which requests miss before farming them out to worker processes). */
static asyncrt_status compile_flow(asyncrt_context *ctx, const char *source_name, const char *source,
                                   const asyncrt_compile_options *opts, asyncrt_program **out,
                                   bool lookup_only, uint8_t *key_out)
{
    ASYNCRT_ENTER(ctx);
    static const asyncrt_compile_options no_options = {0};
    *out = NULL;
    if (!source)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "source is NULL");
    compile_job job = {.ctx = ctx,
                       .source_name = source_name && *source_name ? source_name : "kernel.cu",
                       .source = source,
                       .opts = opts ? opts : &no_options};
    /* "auto" while the device opens on another thread: try the remembered target. */
    bool is_auto = !job.opts->arch || strcmp(job.opts->arch, "auto") == 0;
    asyncrt_status s;
    if (!lookup_only && is_auto && asyncrt__device_pending(ctx) &&
        speculative_compile(ctx, source_name, source, opts, out, &s))
        return s;
    if (is_auto) ASYNCRT_TRY(asyncrt__wait_device(ctx)); /* "auto" needs the device */
    ASYNCRT_TRY(asyncrt__arch_resolve(ctx, job.opts->arch, &job.arch));
    if (lookup_only) {
        s = compile_target(&job, true, false, out);
        if (key_out) memcpy(key_out, job.key, 32);
        list_free(&job.options);
        if (s != ASYNCRT_SUCCESS) return s;
        return *out ? ASYNCRT_SUCCESS : job.cacheable ? ASYNCRT_ERROR_NOT_FOUND : ASYNCRT_ERROR_UNSUPPORTED;
    }
    s = compile_auto_aware(&job, is_auto, out);
    release_claim(&job); /* an error before the compile may leave it */
    list_free(&job.options);
    return s;
}

asyncrt_status asyncrt_program_compile(asyncrt_context *ctx, const char *source_name,
                                       const char *source, const asyncrt_compile_options *opts,
                                       asyncrt_program **out)
{
    return compile_flow(ctx, source_name, source, opts, out, false, NULL);
}

asyncrt_status asyncrt__program_lookup(asyncrt_context *ctx, const char *source_name, const char *source,
                                      const asyncrt_compile_options *opts, asyncrt_program **out,
                                      uint8_t key[32])
{
    return compile_flow(ctx, source_name, source, opts, out, true, key);
}
