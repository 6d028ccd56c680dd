/* A tokenizer just good enough to find kernel names: identifiers and single
 * punctuation characters; comments, literals and preprocessor lines vanish. */
#include "scan.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct lexer {
    const char *p;
    bool line_start;
} lexer;

typedef struct token {
    const char *start;
    size_t len;
    char kind; /* 'i' identifier, 's' string literal, '0' end, else the punctuation */
} token;

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

static void skip_line(lexer *l)
{
    while (*l->p && *l->p != '\n') {
        if (l->p[0] == '\\' && l->p[1] == '\n') l->p++;
        l->p++;
    }
}

static token next(lexer *l)
{
    for (;;) {
        const char *p = l->p;
        if (!*p) return (token){p, 0, '0'};
        if (*p == '\n') {
            l->line_start = true;
            l->p++;
        } else if (isspace((unsigned char)*p)) {
            l->p++;
        } else if (p[0] == '/' && p[1] == '/') {
            skip_line(l);
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            l->p = end ? end + 2 : p + strlen(p);
        } else if (*p == '#' && l->line_start) {
            skip_line(l);
        } else if (*p == '"' || *p == '\'') {
            char quote = *p++;
            while (*p && *p != quote && *p != '\n') p += (p[0] == '\\' && p[1]) ? 2 : 1;
            l->p = *p == quote ? p + 1 : p;
            l->line_start = false;
            if (quote == '"') return (token){p, 0, 's'}; /* the content is not needed */
        } else if (p[0] == 'R' && p[1] == '"') {
            /* Raw string R"delim( ... )delim" */
            const char *open = strchr(p + 2, '(');
            char close[20] = ")";
            size_t dl = open ? (size_t)(open - p - 2) : 0;
            l->line_start = false;
            if (!open || dl > 16) {
                l->p = p + 2;
                continue;
            }
            memcpy(close + 1, p + 2, dl);
            close[dl + 1] = '"';
            close[dl + 2] = '\0';
            const char *end = strstr(open, close);
            l->p = end ? end + dl + 2 : p + strlen(p);
            return (token){p, 0, 's'};
        } else if (ident_char(*p)) {
            const char *s = p;
            while (ident_char(*p)) p++;
            l->p = p;
            l->line_start = false;
            return (token){s, (size_t)(p - s), 'i'};
        } else {
            l->p++;
            l->line_start = false;
            return (token){p, 1, *p};
        }
    }
}

static bool is(token t, const char *word) { return t.kind == 'i' && strlen(word) == t.len && !strncmp(t.start, word, t.len); }

/* Skips a balanced (...) starting at an opening parenthesis token. */
static token skip_parens(lexer *l)
{
    int depth = 1;
    token t;
    do {
        t = next(l);
        if (t.kind == '(') depth++;
        if (t.kind == ')') depth--;
    } while (t.kind != '0' && depth > 0);
    return next(l);
}

static void add(run_found_kernel *out, size_t capacity, size_t *count, const char *qualified, bool tmpl, bool ext)
{
    for (size_t i = 0; i < *count && i < capacity; i++)
        if (!strcmp(out[i].name, qualified)) {
            out[i].is_template |= tmpl;
            return;
        }
    if (*count < capacity) {
        snprintf(out[*count].name, RUN_SCAN_NAME_MAX, "%s", qualified);
        out[*count].is_template = tmpl;
        out[*count].is_extern_c = ext;
    }
    (*count)++;
}

size_t run_scan_kernels(const char *source, run_found_kernel *out, size_t capacity)
{
    lexer l = {source ? source : "", true};
    size_t count = 0;
    /* Per open brace: the namespace it opened ("" if none) and whether it is an extern "C" block. */
    char ns[MAX_DEPTH][64];
    bool c_block[MAX_DEPTH];
    int depth = 0;
    bool pending_template = false, pending_extern_c = false, pending_namespace = false;
    char namespace_name[64] = "";
    token prev = {"", 0, 0};
    for (token t = next(&l); t.kind != '0';) {
        if (is(t, "template")) pending_template = true;
        else if (t.kind == 's' && is(prev, "extern")) pending_extern_c = true;
        else if (is(t, "namespace")) {
            pending_namespace = true;
            namespace_name[0] = '\0';
        } else if (pending_namespace && t.kind == 'i' && t.len < sizeof namespace_name) {
            snprintf(namespace_name, sizeof namespace_name, "%.*s", (int)t.len, t.start);
        } else if (t.kind == '{') {
            if (depth < MAX_DEPTH) {
                snprintf(ns[depth], sizeof ns[depth], "%s", pending_namespace ? namespace_name : "");
                c_block[depth] = pending_extern_c;
            }
            depth++;
            pending_template = pending_extern_c = pending_namespace = false;
        } else if (t.kind == '}' || t.kind == ';') {
            if (t.kind == '}' && depth > 0) depth--;
            pending_template = pending_extern_c = pending_namespace = false;
        } else if (is(t, "__global__")) {
            bool ext = pending_extern_c, tmpl = pending_template;
            for (int d = 0; d < depth && d < MAX_DEPTH; d++) ext |= c_block[d];
            token name = {"", 0, 0};
            t = next(&l);
            while (t.kind != '0' && t.kind != ';' && t.kind != '{' && t.kind != '}') {
                if (is(t, "__launch_bounds__") || is(t, "__cluster_dims__") || is(t, "__maxnreg__") ||
                    is(t, "__attribute__") || is(t, "alignas") || is(t, "__declspec")) {
                    t = next(&l);
                    if (t.kind == '(') t = skip_parens(&l);
                    continue;
                }
                if (t.kind == '(') break;
                if (t.kind == 'i') name = t;
                t = next(&l);
            }
            if (t.kind == '(' && name.len) {
                char q[RUN_SCAN_NAME_MAX] = "";
                size_t used = 0;
                for (int d = 0; d < depth && d < MAX_DEPTH && !ext; d++)
                    if (ns[d][0] && used < sizeof q)
                        used += (size_t)snprintf(q + used, sizeof q - used, "%s::", ns[d]);
                if (used < sizeof q) snprintf(q + used, sizeof q - used, "%.*s", (int)name.len, name.start);
                add(out, capacity, &count, q, tmpl, ext);
                t = skip_parens(&l);
            }
            prev = (token){"", 0, 0};
            continue;
        }
        prev = t;
        t = next(&l);
    }
    return count;
}
