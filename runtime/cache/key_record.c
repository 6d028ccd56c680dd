/* Key records (key_record.h): a compile's named key inputs, their text, and
 * the differences between two (their storage: key_record_store.c). */
#include "key_record.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "format.h"
#include "sha256.h"

#define RECORDS_HEADER "asyncrt key records 1\n"

static char *escape(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++) n += (*p == '\\' || *p == '\n' || *p == '\t') ? 2 : 1;
    char *out = malloc(n + 1), *o = out;
    for (const char *p = s; out && *p; p++) {
        if (*p == '\\' || *p == '\n' || *p == '\t') {
            *o++ = '\\';
            *o++ = *p == '\n' ? 'n' : *p == '\t' ? 't' : '\\';
        } else {
            *o++ = *p;
        }
    }
    if (out) *o = '\0';
    return out;
}

static char *unescape(const char *s, size_t n)
{
    char *out = malloc(n + 1), *o = out;
    for (size_t i = 0; out && i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) {
            i++;
            *o++ = s[i] == 'n' ? '\n' : s[i] == 't' ? '\t' : s[i];
        } else {
            *o++ = s[i];
        }
    }
    if (out) *o = '\0';
    return out;
}

void asyncrt__key_note(asyncrt_string_list *l, const char *name, const char *value)
{
    char *v = escape(value ? value : "");
    asyncrt__list_push(l, v ? asyncrt__format("%s\t%s", name, v) : NULL);
    free(v);
}

/* Whether line is named name; then *value is its (escaped) value. */
static bool named(const char *line, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (strncmp(line, name, n) != 0 || line[n] != '\t') return false;
    *value = line + n + 1;
    return true;
}

char *asyncrt__key_value(const asyncrt_string_list *l, const char *name)
{
    const char *v;
    for (size_t i = 0; i < l->count; i++)
        if (named(l->items[i], name, &v)) return unescape(v, strlen(v));
    return NULL;
}

void asyncrt__key_record_name_digest(const char *source_name, uint8_t out[32])
{
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    asyncrt__sha256_update(&h, source_name, strlen(source_name));
    asyncrt__sha256_final(&h, out);
}

void asyncrt__key_records_file(const char *source_name, char out[32])
{
    uint8_t d[32];
    char hex[65];
    asyncrt__key_record_name_digest(source_name, d);
    asyncrt__sha256_hex(d, hex);
    snprintf(out, 32, "keys-%.16s", hex);
}

char *asyncrt__key_record_text(const asyncrt_key_record *r)
{
    char hex[65];
    asyncrt__sha256_hex(r->key1, hex);
    size_t n = 100;
    for (size_t i = 0; i < r->lines.count; i++) n += strlen(r->lines.items[i]) + 1;
    char *s = malloc(n);
    if (!s) return NULL;
    size_t at = (size_t)snprintf(s, n, "key %s %" PRId64 "\n", hex, r->when);
    for (size_t i = 0; i < r->lines.count; i++) at += (size_t)snprintf(s + at, n - at, "%s\n", r->lines.items[i]);
    return s;
}

bool asyncrt__key_records_named(const char *name)
{
    if (strncmp(name, "keys-", 5) != 0 || strlen(name) != 5 + 16) return false;
    for (const char *p = name + 5; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return false;
    return true;
}

static bool parse_hex(const char *s, uint8_t key[32])
{
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return false;
        key[i] = (uint8_t)v;
    }
    return true;
}

size_t asyncrt__key_records_parse(const char *text, asyncrt_key_record *out, size_t max)
{
    size_t n = 0;
    if (!text || strncmp(text, RECORDS_HEADER, strlen(RECORDS_HEADER)) != 0) return 0;
    asyncrt_key_record *cur = NULL;
    for (const char *p = text + strlen(RECORDS_HEADER); *p;) {
        size_t len = strcspn(p, "\n");
        char hex[65];
        long long when = 0;
        if (len > 4 && strncmp(p, "key ", 4) == 0) {
            cur = NULL;
            if (n < max && sscanf(p + 4, "%64s %lld", hex, &when) == 2 && strlen(hex) == 64 &&
                parse_hex(hex, out[n].key1)) {
                cur = &out[n++];
                cur->lines = (asyncrt_string_list){0};
                cur->when = when;
            }
        } else if (cur && memchr(p, '\t', len)) {
            char *line = malloc(len + 1);
            if (line) memcpy(line, p, len), line[len] = '\0';
            asyncrt__list_push(&cur->lines, line);
        }
        p += len + (p[len] == '\n');
    }
    return n;
}

void asyncrt__key_record_free(asyncrt_key_record *r) { asyncrt__list_free(&r->lines); }

/* ---- differences --------------------------------------------------------- */

/* Most telling first; a set of values for the many-valued ones. */
static const struct {
    const char *name;
    bool many;
} k_order[] = {
    {"arch", false},     {"option", true},      {"link option", true}, {"header", true},  {"input", true},
    {"bundle", false},   {"nvrtc", false},      {"nvjitlink", false},  {"compact", false},    {"toolkit", false},
    {"cwd", false},
    {"name expression", true}, {"std header", true}, {"builtins", false}, {"version", false},
    {"source name", false}, {"source", false},
};

/* A header's value is "<name> <digest>": its name's length. */
static size_t header_name_len(const char *v)
{
    const char *sp = strrchr(v, ' ');
    return sp ? (size_t)(sp - v) : strlen(v);
}

/* The escaped value in l named `name` matching `v` (by a header's name, or whole), or NULL. */
static const char *find(const asyncrt_string_list *l, const char *name, const char *v, bool by_header)
{
    const char *w;
    size_t hn = by_header ? header_name_len(v) : 0;
    for (size_t i = 0; i < l->count; i++) {
        if (!named(l->items[i], name, &w)) continue;
        if (by_header ? (header_name_len(w) == hn && strncmp(w, v, hn) == 0) : strcmp(w, v) == 0) return w;
    }
    return NULL;
}

/* A single-valued input's (escaped) value, or NULL. */
static const char *first(const asyncrt_string_list *l, const char *name)
{
    const char *v;
    for (size_t i = 0; i < l->count; i++)
        if (named(l->items[i], name, &v)) return v;
    return NULL;
}

static void add(asyncrt_key_diff *out, size_t max, size_t *n, const char *what, const char *name, size_t name_len,
                const char *was, const char *now)
{
    if (*n < max) {
        asyncrt_key_diff *d = &out[*n];
        snprintf(d->what, sizeof d->what, "%s", what);
        d->name = name ? unescape(name, name_len) : NULL;
        d->was = was ? unescape(was, strlen(was)) : NULL;
        d->now = now ? unescape(now, strlen(now)) : NULL;
    }
    (*n)++;
}

/* A header side: its digest alone (past the name). */
static const char *digest_of(const char *v) { return v ? v + header_name_len(v) + (v[header_name_len(v)] == ' ') : NULL; }

size_t asyncrt__key_diff(const asyncrt_string_list *was, const asyncrt_string_list *now, asyncrt_key_diff *out,
                         size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < sizeof k_order / sizeof k_order[0]; k++) {
        const char *name = k_order[k].name, *v, *w;
        bool header = strcmp(name, "header") == 0 || strcmp(name, "input") == 0; /* "<name> <digest>" */
        if (!k_order[k].many) {
            const char *a = first(was, name), *b = first(now, name);
            if ((a || b) && (!a || !b || strcmp(a, b) != 0)) add(out, max, &n, name, NULL, 0, a, b);
            continue;
        }
        for (size_t i = 0; i < was->count; i++) { /* removed or (a header) changed */
            if (!named(was->items[i], name, &v)) continue;
            w = find(now, name, v, header);
            size_t len = header ? header_name_len(v) : strlen(v);
            if (!w) add(out, max, &n, name, v, len, header ? digest_of(v) : v, NULL);
            else if (header && strcmp(v, w) != 0) add(out, max, &n, name, v, len, digest_of(v), digest_of(w));
        }
        for (size_t i = 0; i < now->count; i++) { /* added */
            if (!named(now->items[i], name, &w) || find(was, name, w, header)) continue;
            add(out, max, &n, name, w, header ? header_name_len(w) : strlen(w), NULL, header ? digest_of(w) : w);
        }
    }
    return n;
}

void asyncrt__key_diff_free(asyncrt_key_diff *d, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(d[i].name);
        free(d[i].was);
        free(d[i].now);
        d[i] = (asyncrt_key_diff){0};
    }
}

/* What each input is called in a sentence. */
static const char *label(const char *what)
{
    static const char *const k[][2] = {
        {"arch", "the arch"},
        {"bundle", "the header bundle"},
        {"nvrtc", "NVRTC's identity (path, size, mtime)"},
        {"nvjitlink", "nvJitLink's identity (path, size, mtime)"},
        {"compact", "compact images' assembler (nvPTXCompiler)"},
        {"toolkit", "the toolkit's include folder"},
        {"cwd", "the working folder (quoted includes search it)"},
        {"builtins", "the built-in headers (another asyncrt build)"},
        {"version", "the asyncrt/NVRTC version"},
        {"source name", "the source name"},
        {"source", "the source text (SHA-256)"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcmp(k[i][0], what) == 0) return k[i][1];
    return what;
}

void asyncrt__key_diff_say(const asyncrt_key_diff *d, char *out, size_t size)
{
    const char *was = d->was ? d->was : "(none)", *now = d->now ? d->now : "(none)";
    if (!strcmp(d->what, "header") || !strcmp(d->what, "dependency") || !strcmp(d->what, "input"))
        asyncrt__say(out, size, "%s %s %s: digest %.16s -> %.16s",
                     !strcmp(d->what, "header") ? "in-memory header" : !strcmp(d->what, "input") ? "link input" : "header",
                     d->name ? d->name : "?",
                     !d->was ? "added" : !d->now ? "removed" : "changed", was, now);
    else if (d->name)
        asyncrt__say(out, size, "%s %s %s", d->what, d->name, d->was ? "removed" : "added");
    else
        asyncrt__say(out, size, "%s: '%s' -> '%s'", label(d->what), was, now);
}
