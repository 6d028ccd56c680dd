/* A small strict JSON walker: only what the trace needs (objects, arrays,
 * strings with escapes, numbers, literals), bounded depth, never reads past
 * the end. */
#include "trace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

typedef struct parser {
    const char *p, *end;
    bool bad;
    asyncrt_trace_headers *out;
    bool saw_builtin_first, saw_any;
} parser;

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t')) ps->p++;
}

static bool eat(parser *ps, char c)
{
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return true;
    }
    return false;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string, decoded (UTF-8 for \u escapes) into a malloc'd buffer when want. */
static char *parse_string(parser *ps, bool want)
{
    if (!eat(ps, '"')) {
        ps->bad = true;
        return NULL;
    }
    size_t cap = want ? 64 : 0, n = 0;
    char *s = want ? malloc(cap) : NULL;
    if (want && !s) ps->bad = true;
    while (!ps->bad) {
        if (ps->p >= ps->end) {
            ps->bad = true;
            break;
        }
        unsigned char c = (unsigned char)*ps->p++;
        if (c == '"') break;
        uint32_t cp = c;
        if (c < 0x20) ps->bad = true;
        else if (c == '\\') {
            if (ps->p >= ps->end) {
                ps->bad = true;
                break;
            }
            char e = *ps->p++;
            switch (e) {
            case '"': case '\\': case '/': cp = (unsigned char)e; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u':
                cp = 0;
                for (int i = 0; i < 4; i++) {
                    int d = ps->p < ps->end ? hex_digit(*ps->p++) : -1;
                    if (d < 0) ps->bad = true;
                    cp = cp * 16 + (uint32_t)(d < 0 ? 0 : d);
                }
                if (cp == 0) ps->bad = true; /* no NULs inside a path */
                break;
            default: ps->bad = true;
            }
        }
        if (!want || ps->bad) continue;
        if (n + 4 >= cap) {
            char *grown = realloc(s, cap *= 2);
            if (!grown) {
                ps->bad = true;
                continue;
            }
            s = grown;
        }
        if (cp < 0x80 || c != '\\') s[n++] = (char)cp;
        else if (cp < 0x800) {
            s[n++] = (char)(0xC0 | cp >> 6);
            s[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
            s[n++] = (char)(0xE0 | cp >> 12);
            s[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            s[n++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    if (ps->bad) {
        free(s);
        return NULL;
    }
    if (s) s[n] = '\0';
    return s;
}

bool asyncrt__trace_headers_add(asyncrt_trace_headers *h, char *path)
{
    if (!path) return false;
    for (size_t i = 0; i < h->count; i++)
        if (strcmp(h->paths[i], path) == 0) {
            free(path);
            return true;
        }
    char **grown = realloc(h->paths, (h->count + 1) * sizeof *grown);
    if (!grown) {
        free(path);
        return false;
    }
    h->paths = grown;
    h->paths[h->count++] = path;
    return true;
}

static void add_header(parser *ps, char *path)
{
    asyncrt_trace_headers *h = ps->out;
    bool first = !ps->saw_any;
    ps->saw_any = true;
    if (strcmp(path, ASYNCRT_NVRTC_BUILTIN_HEADER) == 0) {
        if (first) ps->saw_builtin_first = true;
        free(path);
        return;
    }
    if (!asyncrt__trace_headers_add(h, path)) ps->bad = true;
}

static void parse_value(parser *ps, int depth, bool events);

/* An object; an event of the trace when `event`: remembers name and
 * args.detail and records a header event. */
static void parse_object(parser *ps, int depth, bool event)
{
    char *name = NULL, *detail = NULL;
    if (!eat(ps, '{')) ps->bad = true;
    if (!ps->bad && !eat(ps, '}')) {
        do {
            char *k = parse_string(ps, true);
            if (!k || !eat(ps, ':')) {
                ps->bad = true;
                free(k);
                break;
            }
            skip_ws(ps);
            if (event && strcmp(k, "name") == 0 && ps->p < ps->end && *ps->p == '"') {
                free(name);
                name = parse_string(ps, true);
            } else if (event && strcmp(k, "args") == 0 && ps->p < ps->end && *ps->p == '{') {
                /* args: {"detail": "..."} */
                eat(ps, '{');
                if (!eat(ps, '}')) {
                    do {
                        char *ak = parse_string(ps, true);
                        if (!ak || !eat(ps, ':')) {
                            ps->bad = true;
                            free(ak);
                            break;
                        }
                        skip_ws(ps);
                        if (strcmp(ak, "detail") == 0 && ps->p < ps->end && *ps->p == '"') {
                            free(detail);
                            detail = parse_string(ps, true);
                        } else {
                            parse_value(ps, depth + 2, false);
                        }
                        free(ak);
                    } while (!ps->bad && eat(ps, ','));
                    if (!ps->bad && !eat(ps, '}')) ps->bad = true;
                }
            } else {
                parse_value(ps, depth + 1, !event && depth == 0 && strcmp(k, "traceEvents") == 0);
            }
            free(k);
        } while (!ps->bad && eat(ps, ','));
        if (!ps->bad && !eat(ps, '}')) ps->bad = true;
    }
    if (!ps->bad && event && name && detail && strcmp(name, "Processing Header File") == 0) {
        add_header(ps, detail);
        detail = NULL;
    }
    free(name);
    free(detail);
}

static void parse_value(parser *ps, int depth, bool events)
{
    skip_ws(ps);
    if (ps->bad || depth > MAX_DEPTH || ps->p >= ps->end) {
        ps->bad = true;
        return;
    }
    char c = *ps->p;
    if (c == '{') {
        parse_object(ps, depth, false);
    } else if (c == '[') {
        ps->p++;
        if (eat(ps, ']')) return;
        do {
            skip_ws(ps);
            if (events && ps->p < ps->end && *ps->p == '{') parse_object(ps, depth + 1, true);
            else parse_value(ps, depth + 1, false);
        } while (!ps->bad && eat(ps, ','));
        if (!ps->bad && !eat(ps, ']')) ps->bad = true;
    } else if (c == '"') {
        free(parse_string(ps, false));
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        while (ps->p < ps->end && strchr("+-.eE0123456789", *ps->p)) ps->p++;
    } else {
        static const char *const words[] = {"true", "false", "null"};
        for (int i = 0; i < 3; i++) {
            size_t n = strlen(words[i]);
            if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, words[i], n) == 0) {
                ps->p += n;
                return;
            }
        }
        ps->bad = true;
    }
}

void asyncrt__trace_headers_free(asyncrt_trace_headers *h)
{
    for (size_t i = 0; i < h->count; i++) free(h->paths[i]);
    free(h->paths);
    h->paths = NULL;
    h->count = 0;
}

bool asyncrt__trace_parse(const char *json, size_t size, bool from_pch, asyncrt_trace_headers *out, char *why,
                          size_t why_size)
{
    *out = (asyncrt_trace_headers){0};
    parser ps = {json, json + size, false, out, false, false};
    skip_ws(&ps);
    if (ps.p < ps.end && *ps.p == '{') parse_object(&ps, 0, false);
    else ps.bad = true;
    skip_ws(&ps);
    if (!ps.bad && ps.p != ps.end) ps.bad = true;
    const char *problem = ps.bad ? "malformed JSON"
                          : from_pch ? NULL
                          : !ps.saw_any ? "no \"Processing Header File\" events"
                          : !ps.saw_builtin_first ? "the first header is not " ASYNCRT_NVRTC_BUILTIN_HEADER
                                                  : NULL;
    if (problem) {
        snprintf(why, why_size, "NVRTC's time trace is unusable: %s", problem);
        asyncrt__trace_headers_free(out);
        return false;
    }
    return true;
}
