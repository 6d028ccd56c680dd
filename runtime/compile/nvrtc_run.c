/* The NVRTC step (compile_job.h): the options only this compile gets (a
 * precompiled header, a time trace), NVRTC itself, and what the program was
 * compiled from, for asyncrt-cache list. */
#define _DEFAULT_SOURCE /* CLOCK_REALTIME_COARSE */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compact_use.h"
#include "compile_job.h"
#include "nvtx.h"
#include "progress.h"
#include "safe_io.h"

/* Asks NVRTC for a time trace into a fresh private directory: the trace
 * file must not exist beforehand, and the name must not be guessable. */
static void add_trace_option(asyncrt_compile_job *job)
{
    if (!asyncrt__private_dir_make(job->ctx->settings.tmpdir, job->trace_dir, sizeof job->trace_dir,
                                   "asyncrt-trace-")) {
        asyncrt__log(job->ctx, 1, "not caching %s: cannot create a trace directory in %s", job->source_name,
                     job->trace_dir);
        job->trace_dir[0] = '\0'; /* no trace, so nothing to store: store.c sees it */
        return;
    }
    asyncrt__list_push(&job->options, asyncrt__format("-fdevice-time-trace=%s/trace", job->trace_dir));
}

/* A precompiled header and the trace, only where the trace tells what the
 * compile read (a cacheable one). */
static void add_run_options(asyncrt_compile_job *job)
{
    asyncrt_context *ctx = job->ctx;
    char note[512];
    job->pch = (asyncrt_pch_use){0};
    if (job->state == ASYNCRT_COMPILE_UNCACHEABLE) return;
    if (asyncrt__pch_begin(asyncrt__pch_of(ctx), job->pch_key, &job->pch, note, sizeof note)) {
        asyncrt__list_push(&job->options, strdup("-pch"));
        asyncrt__list_push(&job->options, strdup(job->pch.option));
        asyncrt__list_push(&job->options, strdup("--pch-messages=false"));
        asyncrt__list_push(&job->options, strdup("-diag-suppress=630")); /* "not compatible with the PCH" */
    }
    if (*note) asyncrt__log(ctx, 1, "%s: %s", job->source_name, note);
    add_trace_option(job);
}

/* A name NVRTC is given in memory besides a bundle's: the caller's headers,
 * the built-in kernels_src/ files, the built-in standard headers offered,
 * and <cuda.h>. */
static bool given_in_memory(const asyncrt_compile_job *job, const char *name)
{
    const asyncrt_compile_options *o = job->opts;
    for (size_t i = 0; i < o->header_count; i++)
        if (strcmp(o->headers[i].name, name) == 0) return true;
    for (size_t i = 0; i < asyncrt__embedded_file_count; i++)
        if (strcmp(asyncrt__embedded_files[i].name, name) == 0) return true;
    for (size_t i = 0; i < asyncrt__std_header_file_count; i++)
        if (job->std_offered[i] && strcmp(asyncrt__std_header_files[i].name, name) == 0) return true;
    return strcmp(name, asyncrt__cuda_h.name) == 0;
}

/* The headers NVRTC is given in memory, names[i] with contents[i], *count
 * of them: the caller's, a bundle's (where nothing else of that name is
 * given: NVRTC refuses a name twice, and the caller's and the built-ins
 * win), kernels_src/'s, the built-in standard headers offered and <cuda.h>.
 * False when out of memory. */
static bool in_memory_headers(const asyncrt_compile_job *job, const char ***names, const char ***contents,
                              size_t *count)
{
    const asyncrt_compile_options *o = job->opts;
    size_t bundled = asyncrt__bundle_count(o->bundle);
    size_t most = o->header_count + bundled + asyncrt__embedded_file_count + asyncrt__std_header_file_count + 1;
    *names = calloc(most + 1, sizeof(char *));
    *contents = calloc(most + 1, sizeof(char *));
    if (!*names || !*contents) return false;
    size_t n = 0;
    for (size_t i = 0; i < o->header_count; i++, n++) {
        (*names)[n] = o->headers[i].name;
        (*contents)[n] = o->headers[i].content;
    }
    for (size_t i = 0; i < bundled; i++) {
        const char *name = asyncrt__bundle_name(o->bundle, i);
        if (given_in_memory(job, name)) continue;
        (*names)[n] = name;
        (*contents)[n++] = asyncrt__bundle_content(o->bundle, i);
    }
    for (size_t i = 0; i < asyncrt__embedded_file_count; i++, n++) {
        (*names)[n] = asyncrt__embedded_files[i].name;
        (*contents)[n] = asyncrt__embedded_files[i].content;
    }
    for (size_t i = 0; i < asyncrt__std_header_file_count; i++)
        if (job->std_offered[i]) {
            (*names)[n] = asyncrt__std_header_files[i].name;
            (*contents)[n++] = asyncrt__std_header_files[i].content;
        }
    if (asyncrt__job_offers_cuda_h(job)) {
        (*names)[n] = asyncrt__cuda_h.name;
        (*contents)[n++] = asyncrt__cuda_h.content;
    }
    *count = n;
    return true;
}

/* nvrtcCreateProgram over the source and those headers, with the caller's
 * name expressions added. */
static asyncrt_status create_program(const asyncrt_compile_job *job, const asyncrt_nvrtc *nv, nvrtcProgram *prog)
{
    const asyncrt_compile_options *o = job->opts;
    const char **names = NULL, **contents = NULL;
    size_t count = 0;
    asyncrt_status status = ASYNCRT_SUCCESS;
    *prog = NULL;
    if (!in_memory_headers(job, &names, &contents, &count)) {
        status = asyncrt__fail(job->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory compiling %s", job->source_name);
    } else {
        nvrtcResult r = nv->nvrtcCreateProgram(prog, job->source, job->source_name, (int)count, contents, names);
        if (r != NVRTC_SUCCESS) {
            *prog = NULL;
            status = asyncrt__fail(job->ctx, ASYNCRT_ERROR_NVRTC, "nvrtcCreateProgram(%s) failed: %s",
                                   job->source_name, nv->nvrtcGetErrorString(r));
        }
    }
    free(contents);
    free(names);
    for (size_t i = 0; status == ASYNCRT_SUCCESS && i < o->name_expression_count; i++) {
        nvrtcResult r = nv->nvrtcAddNameExpression(*prog, o->name_expressions[i]);
        if (r != NVRTC_SUCCESS)
            status = asyncrt__fail(job->ctx, ASYNCRT_ERROR_NVRTC, "nvrtcAddNameExpression(\"%s\") failed: %s",
                                   o->name_expressions[i], nv->nvrtcGetErrorString(r));
    }
    return status;
}

/* nvrtcCompileProgram with the job's options, and NVRTC's log into *log
 * (malloc'd). A failed compile's message holds the log and, where a header
 * could not be opened, what to do about it. */
static asyncrt_status compile_program(const asyncrt_compile_job *job, const asyncrt_nvrtc *nv, nvrtcProgram prog,
                                      char **log)
{
    asyncrt_context *ctx = job->ctx;
    nvrtcResult compiled = asyncrt__fault_hit(ctx, "nvrtcCompileProgram")
                               ? NVRTC_ERROR_INTERNAL_ERROR
                               : nv->nvrtcCompileProgram(prog, (int)job->options.count,
                                                         (const char *const *)job->options.items);
    size_t log_size = 0;
    if (nv->nvrtcGetProgramLogSize(prog, &log_size) != NVRTC_SUCCESS || !(*log = calloc(1, log_size + 1)) ||
        nv->nvrtcGetProgramLog(prog, *log) != NVRTC_SUCCESS)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_NVRTC, "cannot read NVRTC's log for %s", job->source_name);
    if (compiled == NVRTC_SUCCESS) return ASYNCRT_SUCCESS;
    /* A bad option is the caller's mistake as much as bad source is. */
    asyncrt_status status = compiled == NVRTC_ERROR_COMPILATION        ? ASYNCRT_ERROR_COMPILE
                            : compiled == NVRTC_ERROR_INVALID_OPTION ? ASYNCRT_ERROR_INVALID_ARGUMENT
                                                                     : ASYNCRT_ERROR_NVRTC;
    const asyncrt_bundle *bundle = job->opts->bundle;
    char *hint = asyncrt__bundle_missing_hint(bundle, *log, job->toolkit[0] ? NULL : job->toolkit_why);
    status = asyncrt__fail(ctx, status, "compiling %s for %s failed (%s):\n%s%s%s", job->source_name,
                           job->arch_name, nv->nvrtcGetErrorString(compiled), *log, hint ? "\n" : "",
                           hint ? hint : "");
    free(hint);
    return status;
}

/* When NVRTC's options ask for LTO-IR (-dlto, --dlink-time-opt, -gen-lto),
 * takes it into *image (malloc'd) with *result NVRTC's answer, and returns
 * true; false leaves everything to the CUBIN or PTX path. (nvrtcGetLTOIR is
 * looked up here, not in NVRTC's table: only linking needs it.) */
static bool take_ltoir(const asyncrt_nvrtc *nv, nvrtcProgram prog, const asyncrt_string_list *options,
                       unsigned char **image, size_t *size, nvrtcResult *result)
{
    bool wanted = false;
    for (size_t i = 0; i < options->count; i++) {
        const char *o = options->items[i];
        wanted |= !strcmp(o, "-dlto") || !strcmp(o, "--dlink-time-opt") || !strcmp(o, "-dlink-time-opt") ||
                  !strcmp(o, "-gen-lto");
    }
    if (!wanted) return false;
    nvrtcResult (*get_size)(nvrtcProgram, size_t *) =
        (nvrtcResult(*)(nvrtcProgram, size_t *))dlsym(nv->handle, "nvrtcGetLTOIRSize");
    nvrtcResult (*get)(nvrtcProgram, char *) = (nvrtcResult(*)(nvrtcProgram, char *))dlsym(nv->handle, "nvrtcGetLTOIR");
    *image = NULL;
    *size = 0;
    *result = !get_size || !get ? NVRTC_ERROR_INVALID_INPUT : get_size(prog, size);
    if (*result == NVRTC_SUCCESS && !*size) *result = NVRTC_ERROR_INVALID_INPUT; /* no LTO-IR came out */
    if (*result == NVRTC_SUCCESS && !(*image = malloc(*size))) *result = NVRTC_ERROR_OUT_OF_MEMORY;
    if (*result == NVRTC_SUCCESS) *result = get(prog, (char *)*image);
    return true;
}

/* The image NVRTC made into p: LTO-IR when asked for (link.h; *ltoir), else
 * PTX or CUBIN as the target says. */
static asyncrt_status read_image(const asyncrt_compile_job *job, const asyncrt_nvrtc *nv, nvrtcProgram prog,
                                 asyncrt_program *p, bool *ltoir_out)
{
    nvrtcResult r;
    bool ltoir = *ltoir_out = take_ltoir(nv, prog, &job->options, &p->image, &p->image_size, &r);
    if (!ltoir)
        r = p->ptx ? nv->nvrtcGetPTXSize(prog, &p->image_size) : nv->nvrtcGetCUBINSize(prog, &p->image_size);
    if (!ltoir && r == NVRTC_SUCCESS && !(p->image = malloc(p->image_size)))
        return asyncrt__fail(job->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory compiling %s", job->source_name);
    if (!ltoir && r == NVRTC_SUCCESS)
        r = p->ptx ? nv->nvrtcGetPTX(prog, (char *)p->image) : nv->nvrtcGetCUBIN(prog, (char *)p->image);
    p->ptx &= !ltoir;
    if (r == NVRTC_SUCCESS) return ASYNCRT_SUCCESS;
    return asyncrt__fail(job->ctx, ASYNCRT_ERROR_NVRTC, "reading the %s image of %s failed: %s",
                         p->ptx ? "PTX" : "CUBIN", job->source_name, nv->nvrtcGetErrorString(r));
}

/* The lowered name of each name expression into p. */
static asyncrt_status read_names(const asyncrt_compile_job *job, const asyncrt_nvrtc *nv, nvrtcProgram prog,
                                 asyncrt_program *p)
{
    const asyncrt_compile_options *o = job->opts;
    p->expressions = calloc(o->name_expression_count + 1, sizeof(char *));
    p->lowered = calloc(o->name_expression_count + 1, sizeof(char *));
    if (!p->expressions || !p->lowered)
        return asyncrt__fail(job->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory compiling %s", job->source_name);
    for (size_t i = 0; i < o->name_expression_count; i++, p->name_count++) {
        const char *lowered = NULL;
        nvrtcResult r = nv->nvrtcGetLoweredName(prog, o->name_expressions[i], &lowered);
        if (r != NVRTC_SUCCESS)
            return asyncrt__fail(job->ctx, ASYNCRT_ERROR_NVRTC, "nvrtcGetLoweredName(\"%s\") failed: %s",
                                 o->name_expressions[i], nv->nvrtcGetErrorString(r));
        if (!lowered) /* NVRTC 13.0 does this for a source it read as empty, e.g. one that begins with byte 0xFF */
            return asyncrt__fail(job->ctx, ASYNCRT_ERROR_COMPILE,
                                 "NVRTC compiled %s but gave no name for the expression \"%s\" (success with "
                                 "none): it compiled no such kernel; check that the file is CUDA source text",
                                 job->source_name, o->name_expressions[i]);
        p->expressions[i] = strdup(o->name_expressions[i]);
        p->lowered[i] = strdup(lowered);
        if (!p->expressions[i] || !p->lowered[i]) {
            p->name_count++;
            return asyncrt__fail(job->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory compiling %s",
                                 job->source_name);
        }
    }
    return ASYNCRT_SUCCESS;
}

/* Runs NVRTC; on success *out holds a fresh program. Every step sets the
 * context's message when it fails. */
static asyncrt_status run_nvrtc(asyncrt_compile_job *job, asyncrt_program **out)
{
    asyncrt__range_push(ASYNCRT_RANGE_COMPILE, "compile %s (%s)", job->source_name, job->arch_name);
    const asyncrt_nvrtc *nv = NULL;
    nvrtcProgram prog = NULL;
    char *log = NULL, why[256];
    bool ltoir = false;
    asyncrt_program *p = calloc(1, sizeof *p);
    asyncrt_status s = p ? ASYNCRT_SUCCESS
                         : asyncrt__fail(job->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory compiling %s",
                                         job->source_name);
    if (s == ASYNCRT_SUCCESS) s = asyncrt__require_nvrtc(job->ctx, &nv);
    /* A bundle's digest is checked when NVRTC first needs its texts. */
    if (s == ASYNCRT_SUCCESS && job->opts->bundle && !asyncrt__bundle_ready(job->opts->bundle, why, sizeof why))
        s = asyncrt__fail(job->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "compiling %s: %s", job->source_name, why);
    if (s == ASYNCRT_SUCCESS) s = create_program(job, nv, &prog);
    if (s == ASYNCRT_SUCCESS) s = compile_program(job, nv, prog, &log);
    if (s == ASYNCRT_SUCCESS) {
        p->ptx = job->arch.ptx;
        snprintf(p->arch, sizeof p->arch, "%s", job->arch_name);
        memcpy(p->key, job->key, sizeof p->key);
        p->log = log;
        log = NULL;
        s = read_image(job, nv, prog, p, &ltoir);
    }
    if (s == ASYNCRT_SUCCESS) asyncrt__job_compact(job, nv, prog, p, ltoir); /* while prog holds the PTX */
    if (s == ASYNCRT_SUCCESS) s = read_names(job, nv, prog, p);
    if (s == ASYNCRT_SUCCESS) {
        p->origin = ASYNCRT_ORIGIN_COMPILED;
        *out = p;
        p = NULL;
    }
    if (prog) nv->nvrtcDestroyProgram(&prog);
    asyncrt_program_destroy(p);
    free(log);
    asyncrt__range_pop();
    return s;
}

/* What a fresh program was compiled from, for asyncrt-cache list: the
 * source name and NVRTC's options up to `count` (the rest are the PCH's and
 * the trace's), less -arch (the program says it) and the toolkit's -I (implied).
 * Left unknown if memory runs out: it is in no key. */
static void describe(const asyncrt_compile_job *job, size_t count, asyncrt_program *p)
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

asyncrt_status asyncrt__job_nvrtc(asyncrt_compile_job *job, asyncrt_program **out)
{
    asyncrt_context *ctx = job->ctx;
    *out = NULL;
    job->start_ms = asyncrt__now_ms();
    /* The coarse clock is the one file timestamps come from: a header
     * written after this instant (so after the PCH check below) has an mtime
     * at or after it, and the compile is not recorded. */
    clock_gettime(CLOCK_REALTIME_COARSE, &job->began);
    asyncrt__progress(job->opts->progress, job->opts->progress_user, ASYNCRT_PROGRESS_COMPILE, job->source_name,
                      job->arch_name, -1);
    add_run_options(job);
    asyncrt_status s = job->options.failed ? asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY,
                                                          "out of memory compiling %s", job->source_name)
                                           : run_nvrtc(job, out);
    if (s != ASYNCRT_SUCCESS) return s;
    describe(job, job->keyed_options, *out);
    asyncrt__log(ctx, 2, "%s: NVRTC compiled %s %s (%zu bytes) in %.1f ms%s", job->source_name, (*out)->arch,
                 (*out)->ptx ? "PTX" : "CUBIN", (*out)->image_size, asyncrt__now_ms() - job->start_ms,
                 job->pch.dir ? " (precompiled headers on)" : "");
    return s;
}
