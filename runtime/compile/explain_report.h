/* An explanation's words (explain.c decides, this file says it): the one-line
 * cause, the text report and the JSON object of asyncrt_cache_explanation. */
#ifndef ASYNCRT_EXPLAIN_REPORT_H
#define ASYNCRT_EXPLAIN_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "asyncrt/cache.h"
#include "key_record.h"

/* What explain.c found: out->verdict, key, nearest and cause (for verdicts
 * without differences) are set; subject is "SOURCE for ARCH" or "two
 * entries"; the differences are d[0..count) of total. Fills out->cause
 * (from d[0] when there is one), differences, text and json (NULL when out
 * of memory). */
void asyncrt__explain_report(asyncrt_cache_explanation *out, const char *subject, const char *source_name,
                             const char *arch, const char *remote, const asyncrt_key_diff *d, size_t count,
                             size_t total);

/* After the report: where its nearest record came from (tier "local" or
 * "remote", NULL: none compared) and what the remote's records were
 * (records: one line, NULL when not asked), in the text ("nearest KEY (a
 * remote record)", a "records" line) and the JSON ("nearest_tier",
 * "remote_records"). Out of memory leaves text or json NULL. */
void asyncrt__explain_report_tier(asyncrt_cache_explanation *out, const char *tier, const char *records);

/* explain_judge.c: the verdict on a job keyed by key.c, into *out (its
 * strings malloc'd, NULL when out of memory); flags as asyncrt_cache_explain's. */
typedef struct asyncrt_compile_job asyncrt_compile_job;
void asyncrt__explain_judge(asyncrt_compile_job *job, unsigned flags, asyncrt_cache_explanation *out);

/* What is explained: a key, its inputs' record (key_record.h), the source
 * name its records are kept under ("link: a.cu b.cu" for a link), the
 * target; uncacheable: NULL, or why it is never cached ("": caching off). */
typedef struct asyncrt_explain_subject {
    const uint8_t *key; /* 32 bytes */
    const asyncrt_string_list *record;
    const char *source_name, *arch_name, *uncacheable;
} asyncrt_explain_subject;
/* The verdict on subj against c's disk tier and its key records (a
 * compile's, explain_judge's, or a link's, link_record.c), into *out. */
typedef struct asyncrt_cache asyncrt_cache;
void asyncrt__explain_key(asyncrt_cache *c, const asyncrt_explain_subject *subj, unsigned flags,
                          asyncrt_cache_explanation *out);

#endif
