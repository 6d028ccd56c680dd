/* The dependency step (compile_job.h): the files a compile read, from
 * NVRTC's time trace, for the cache's manifest and the PCH's record. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile_job.h"
#include "safe_io.h"
#include "trace.h"

/* The file names of `#line N "name"` (and `# N "name"`) directives: NVRTC's
 * trace lists them like headers. */
static void add_line_names(asyncrt_string_list *names, const char *text)
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
        if (q[n] == '"') asyncrt__list_push(names, asyncrt__format("%.*s", (int)n, q));
    }
}

/* What the compile read: its trace's files, and where it may have used a
 * precompiled header, the files the PCH directory's compiles read (its trace
 * then lacks them). False with why when that cannot be known. */
static bool read_dependencies(asyncrt_compile_job *job, asyncrt_dep_set *deps, char *why, size_t why_size)
{
    const asyncrt_compile_options *o = job->opts;
    const asyncrt_dep_set *record = asyncrt__pch_record(&job->pch);
    bool from_pch = record && record->count;
    char *trace = asyncrt__format("%s/trace.json", job->trace_dir);
    size_t size = 0;
    snprintf(why, why_size, "out of memory");
    unsigned char *json =
        trace ? asyncrt__file_read(AT_FDCWD, trace, ASYNCRT_FILE_MAX, false, &size, why, why_size) : NULL;
    if (!json && trace && !why[0]) snprintf(why, why_size, "NVRTC wrote no time trace");
    /* Names the trace may give that are not disk files: in-memory headers,
     * the source itself and #line names (the map op's "map expression"). */
    asyncrt_string_list memory = {0};
    asyncrt__list_push(&memory, strdup(job->source_name));
    asyncrt__list_push(&memory, strdup(asyncrt__cuda_h.name));
    add_line_names(&memory, job->source);
    for (size_t i = 0; i < o->header_count; i++) {
        asyncrt__list_push(&memory, strdup(o->headers[i].name));
        add_line_names(&memory, o->headers[i].content);
    }
    for (size_t i = 0; i < asyncrt__bundle_count(o->bundle); i++)
        asyncrt__list_push(&memory, strdup(asyncrt__bundle_name(o->bundle, i)));
    for (size_t i = 0; i < asyncrt__embedded_file_count; i++) {
        asyncrt__list_push(&memory, strdup(asyncrt__embedded_files[i].name));
        add_line_names(&memory, asyncrt__embedded_files[i].content);
    }
    for (size_t i = 0; i < asyncrt__std_header_file_count; i++)
        if (job->std_offered[i])
            asyncrt__list_push(&memory, strdup(asyncrt__std_header_files[i].name));
    if (memory.failed) snprintf(why, why_size, "out of memory");
    asyncrt_trace_headers headers = {0};
    bool ok = json && !memory.failed &&
              asyncrt__trace_parse((const char *)json, size, from_pch, &headers, why, why_size);
    for (size_t i = 0; ok && from_pch && i < record->count; i++) /* what the PCH holds */
        if (!(ok = asyncrt__trace_headers_add(&headers, strdup(record->deps[i].path))))
            snprintf(why, why_size, "out of memory");
    ok = ok && asyncrt__dep_set_record((const char *const *)headers.paths, headers.count,
                                      (const char *const *)memory.items, memory.count, job->toolkit,
                                      &job->began, job->key, deps, why, why_size);
    asyncrt__trace_headers_free(&headers);
    asyncrt__list_free(&memory);
    free(json);
    if (trace) unlink(trace);
    free(trace);
    return ok;
}

bool asyncrt__job_deps(asyncrt_compile_job *job, asyncrt_status compiled, asyncrt_dep_set *deps, char *why,
                       size_t why_size)
{
    why[0] = '\0';
    if (!asyncrt__job_traced(job, compiled)) return false;
    return read_dependencies(job, deps, why, why_size);
}
