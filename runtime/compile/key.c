/* The key step (compile_job.h): NVRTC's options for the target, and key1,
 * the cache key over everything known before compiling. The files NVRTC
 * reads go into the manifest (cache_manifest.h), never into this key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "cache_key.h"
#include "compact_use.h"
#include "compile_job.h"
#include "key_record.h"
#include "nvrtc_facts.h"
#include "sha256.h"

static void build_options(asyncrt_compile_job *job)
{
    const asyncrt_compile_options *o = job->opts;
    asyncrt_string_list *l = &job->options;
    asyncrt__list_push(l, asyncrt__format("-arch=%s", job->arch_name));
    asyncrt__list_push(l, asyncrt__format("-std=%s", o->std ? o->std : "c++17"));
    /* unannotated functions and variables are device ones, as jitify does
     * (docs/library.md, "Headers kernels see" has the measurements) */
    if (!o->no_default_device) asyncrt__list_push(l, strdup("-default-device"));
    if (job->toolkit[0]) asyncrt__list_push(l, asyncrt__format("-I%s", job->toolkit));
    if (job->toolkit_cccl) asyncrt__list_push(l, asyncrt__format("-I%s/cccl", job->toolkit));
    for (size_t i = 0; i < o->include_dir_count; i++)
        asyncrt__list_push(l, asyncrt__format("-I%s", o->include_dirs[i]));
    for (size_t i = 0; i < o->define_count; i++) asyncrt__list_push(l, asyncrt__format("-D%s", o->defines[i]));
    for (size_t i = 0; i < o->option_count; i++) asyncrt__list_push(l, strdup(o->options[i]));
}

/* Why this compile cannot be keyed on what NVRTC reports it read, or NULL.
 * The time trace lists every header opened, but not __has_include probes
 * (a probe that failed and would now succeed leaves no trace) nor headers
 * that came from a precompiled header; and NVRTC before 12.8 has no trace. */
static const char *uncacheable_reason(const asyncrt_compile_job *job, int nvrtc_version)
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
    asyncrt__key_str(&h, asyncrt__cuda_h.content);
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
static bool includes_search_cwd(const asyncrt_compile_job *job)
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
/* A digest's hex into a record (key_record.h), as name "<label> <hex>" or name "<hex>". */
static void note_digest(asyncrt_string_list *r, const char *name, const char *label, const uint8_t d[32])
{
    char hex[65];
    asyncrt__sha256_hex(d, hex);
    char *v = label ? asyncrt__format("%s %s", label, hex) : NULL;
    asyncrt__key_note(r, name, label ? v : hex);
    free(v);
}

static void note_text_digest(asyncrt_string_list *r, const char *name, const char *label, const char *text)
{
    uint8_t d[32];
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    asyncrt__sha256_update(&h, text, strlen(text));
    asyncrt__sha256_final(&h, d);
    note_digest(r, name, label, d);
}

/* Every input below is also noted, by name, in job->record (key_record.h):
 * what explains a miss. A new input of the key gets its note here too. */
static void compute_key(asyncrt_compile_job *job)
{
    pthread_once(&g_digests_once, digest_builtins);
    const asyncrt_compile_options *o = job->opts;
    asyncrt_string_list *r = &job->record;
    asyncrt__list_free(r);
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    /* NVRTC's version (memo beside the cache) and file identity (stat): a hit opens no NVRTC. */
    asyncrt_nvrtc_facts nvrtc;
    int nvrtc_version = asyncrt__nvrtc_facts_get(job->ctx, &nvrtc, NULL, 0) == ASYNCRT_SUCCESS ? nvrtc.version : 0;
    char versions[64];
    snprintf(versions, sizeof versions, "asyncrt %s nvrtc %d key 4", ASYNCRT_VERSION_STRING, nvrtc_version);
    asyncrt__key_str(&h, versions);
    asyncrt__key_note(r, "version", versions);
    /* A CUBIN may be the compact image: whether they are on, and which nvPTXCompiler (compact_use.h). */
    if (!job->arch.ptx) asyncrt__key_str(&h, asyncrt__compact_key(job->ctx));
    if (!job->arch.ptx) asyncrt__key_note(r, "compact", asyncrt__compact_key(job->ctx));
    asyncrt_nvrtc_identity file = {0};
    char identity[4200];
    if (asyncrt__nvrtc_identity_get(&file)) asyncrt__key_dir_identity(&h, file.path);
    if (file.path[0]) asyncrt__key_identity_text(file.path, identity, sizeof identity);
    asyncrt__key_note(r, "nvrtc", file.path[0] ? identity : "(none found)");
    asyncrt__key_dir_identity(&h, job->toolkit);
    asyncrt__key_note(r, "toolkit", job->toolkit);
    asyncrt__key_note(r, "arch", job->arch_name);
    for (size_t i = 0; i < job->options.count; i++) asyncrt__key_str(&h, job->options.items[i]);
    for (size_t i = 0; i < job->options.count; i++)
        if (strncmp(job->options.items[i], "-arch=", 6) != 0) asyncrt__key_note(r, "option", job->options.items[i]);
    for (size_t i = 0; i < o->header_count; i++) {
        asyncrt__key_str(&h, o->headers[i].name);
        asyncrt__key_str(&h, o->headers[i].content);
        note_text_digest(r, "header", o->headers[i].name, o->headers[i].content);
    }
    asyncrt__bundle_key(&h, o->bundle); /* its digest: a hit checks no bundled file */
    asyncrt__key_note(r, "bundle", o->bundle ? asyncrt_bundle_digest(o->bundle) : "(none)");
    asyncrt__sha256_update(&h, g_embedded_digest, sizeof g_embedded_digest);
    note_digest(r, "builtins", NULL, g_embedded_digest);
    for (size_t i = 0; i < asyncrt__std_header_file_count; i++)
        if (job->std_offered[i]) {
            asyncrt__key_str(&h, asyncrt__std_header_files[i].name);
            asyncrt__key_note(r, "std header", asyncrt__std_header_files[i].name);
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
    asyncrt__key_note(r, "cwd", cwd_matters ? cwd : "(not searched)");
    asyncrt__key_note(r, "source name", job->source_name);
    note_text_digest(r, "source", NULL, job->source);
    for (size_t i = 0; i < o->name_expression_count; i++) asyncrt__key_note(r, "name expression", o->name_expressions[i]);
    asyncrt__sha256_final(&h, job->key);
    const char *why = asyncrt__cache_enabled(job->ctx->cache) ? uncacheable_reason(job, nvrtc_version) : "";
    if (!why && cwd_matters && !cwd[0]) why = "includes may search the working directory, which cannot be read";
    job->state = why ? ASYNCRT_COMPILE_UNCACHEABLE : ASYNCRT_COMPILE_KEYED;
    if (why && *why) asyncrt__log(job->ctx, 1, "not caching %s: %s", job->source_name, why);
    if (why && *why) asyncrt__key_note(r, "uncacheable", why); /* for explain: such a record is never stored */
}

asyncrt_status asyncrt__job_key(asyncrt_compile_job *job)
{
    job->start_ms = asyncrt__now_ms();
    build_options(job);
    if (job->options.failed) {
        job->state = ASYNCRT_COMPILE_FAILED;
        return asyncrt__fail(job->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory compiling %s", job->source_name);
    }
    job->keyed_options = job->options.count;
    compute_key(job);
    return ASYNCRT_SUCCESS;
}
