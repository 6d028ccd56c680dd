/* A link's cache key and its record (link_internal.h), and
 * asyncrt_link_explain: why a link would miss. Each input of the key is
 * noted by name as it is hashed, as compile/key.c does for a compile, so
 * the record says exactly what the key holds:
 *   version          "asyncrt link 1 <asyncrt version>"
 *   nvjitlink        the file a link would open: path, size, mtime (what is
 *                    hashed) and its version (read from the path, for people)
 *   arch             nvJitLink's -arch
 *   link option      each option, in order
 *   input            "<name> (<kind>) <SHA-256 of its bytes>", in order
 *   name expression  "<expression> -> <lowered name>", from the programs
 *   source name      the link's name (asyncrt__link_name: made of the input
 *                    names, so hashed through them)
 * The records of a link live in the side file of that name (key_record.h),
 * "link: a.cu b.cu lib.a", the name asyncrt-cache list shows for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "cache_key.h"
#include "context.h"
#include "explain_report.h"
#include "key_record.h"
#include "link_input.h"
#include "link_internal.h"
#include "link_jit.h"
#include "sha256.h"
#include "sized.h"

char *asyncrt__link_name(const asyncrt_link *l)
{
    size_t size = 8;
    for (size_t i = 0; i < l->count; i++) size += strlen(l->inputs[i].name) + 1;
    char *name = calloc(1, size);
    for (size_t i = 0; name && i < l->count; i++) strcat(strcat(name, i ? " " : "link: "), l->inputs[i].name);
    return name;
}

/* nvJitLink's identity for people: what is hashed (path, size, mtime), and its version. */
static void note_jitlink(asyncrt_string_list *r, const char *path)
{
    char text[4400], version[32] = "unknown";
    asyncrt__key_identity_text(path, text, sizeof text);
    const asyncrt_lib_candidate *c = asyncrt__jitlink_chosen(NULL);
    if (c) asyncrt__lib_version_format(&c->version, version, sizeof version);
    char *v = asyncrt__format("%s, version %s", text, version);
    asyncrt__key_note(r, "nvjitlink", v ? v : text);
    free(v);
}

void asyncrt__link_key(const asyncrt_link *l, uint8_t key[32], asyncrt_string_list *r)
{
    asyncrt_string_list scratch = {0};
    if (!r) r = &scratch;
    asyncrt__list_free(r);
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    const char *version = "asyncrt link 1 " ASYNCRT_VERSION_STRING;
    asyncrt__key_str(&h, version);
    asyncrt__key_note(r, "version", version);
    char jitlink[4096];
    asyncrt__jitlink_find(jitlink, sizeof jitlink);
    asyncrt__key_dir_identity(&h, jitlink); /* path and stat: its version */
    note_jitlink(r, jitlink);
    asyncrt__key_str(&h, l->arch_name);
    asyncrt__key_note(r, "arch", l->arch_name);
    for (size_t i = 0; i < l->options.count; i++) {
        asyncrt__key_str(&h, l->options.items[i]);
        asyncrt__key_note(r, "link option", l->options.items[i]);
    }
    for (size_t i = 0; i < l->count; i++) {
        const link_input *in = &l->inputs[i];
        asyncrt__key_str(&h, asyncrt__link_kind_name(in->kind));
        asyncrt__key_str(&h, in->name);
        asyncrt__sha256_update(&h, in->sha, 32);
        char hex[65];
        asyncrt__sha256_hex(in->sha, hex);
        char *v = asyncrt__format("%s (%s) %s", in->name, asyncrt__link_kind_name(in->kind), hex);
        asyncrt__key_note(r, "input", v);
        if (!v) r->failed = true;
        free(v);
    }
    for (size_t i = 0; i < l->expressions.count; i++) {
        asyncrt__key_str(&h, l->expressions.items[i]);
        asyncrt__key_str(&h, l->lowered.items[i]);
        char *v = asyncrt__format("%s -> %s", l->expressions.items[i], l->lowered.items[i]);
        asyncrt__key_note(r, "name expression", v);
        if (!v) r->failed = true;
        free(v);
    }
    asyncrt__sha256_final(&h, key);
    char *name = asyncrt__link_name(l);
    asyncrt__key_note(r, "source name", name);
    if (!name) r->failed = true;
    free(name);
    asyncrt__list_free(&scratch);
}

/* The verdict on l's key into *full (its strings malloc'd). */
static void judge(const asyncrt_link *l, const uint8_t key[32], const asyncrt_string_list *record, const char *name,
                  unsigned flags, asyncrt_cache_explanation *full)
{
    asyncrt_cache *c = l->ctx->cache;
    asyncrt_explain_subject subj = {key, record, name, l->arch_name, NULL};
    if (!asyncrt__cache_enabled(c)) subj.uncacheable = "";
    asyncrt__explain_key(c, &subj, flags, full);
}

void asyncrt__link_log_miss(const asyncrt_link *l, const uint8_t key[32], const asyncrt_string_list *record)
{
    if (l->ctx->diag.log_level < 1 || !asyncrt__cache_enabled(l->ctx->cache)) return;
    asyncrt_cache_explanation e = {.size = sizeof e};
    char *name = asyncrt__link_name(l);
    if (name) judge(l, key, record, name, 0, &e);
    if (name && e.verdict != ASYNCRT_CACHE_VERDICT_HIT) /* a hit here: another process stored it meanwhile */
        asyncrt__log(l->ctx, 1, "%s: cache miss for %s: %s", name, l->arch_name, e.cause);
    asyncrt_cache_explanation_free(&e);
    free(name);
}

static asyncrt_status link_explain(asyncrt_link *l, unsigned flags, asyncrt_cache_explanation *full)
{
    if (flags & ~ASYNCRT_CACHE_EXPLAIN_REMOTE)
        return asyncrt__fail(l->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "explain flags 0x%x: only ASYNCRT_CACHE_EXPLAIN_REMOTE is known", flags);
    if (!l->count) return asyncrt__fail(l->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "the link has no inputs");
    uint8_t key[32];
    asyncrt_string_list record = {0};
    asyncrt__link_key(l, key, &record);
    char *name = asyncrt__link_name(l);
    if (name && !record.failed) judge(l, key, &record, name, flags, full);
    asyncrt__list_free(&record);
    free(name);
    if (!full->text || !full->json)
        return asyncrt__fail(l->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory explaining a link");
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_link_explain(asyncrt_link *l, unsigned flags, asyncrt_cache_explanation *out)
{
    if (!l) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__enter(l->ctx);
    asyncrt_cache_explanation full = {.size = sizeof full};
    asyncrt_status s = asyncrt__sized_give(l->ctx, ASYNCRT_SIZED_CACHE_EXPLANATION, out, &full, "cache explanation");
    if (s == ASYNCRT_SUCCESS) s = link_explain(l, flags, &full);
    if (s == ASYNCRT_SUCCESS) s = asyncrt__sized_give(l->ctx, ASYNCRT_SIZED_CACHE_EXPLANATION, out, &full, "cache explanation");
    if (s != ASYNCRT_SUCCESS) asyncrt_cache_explanation_free(&full);
    return asyncrt__leave(l->ctx, s);
}
