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

/* Copies source text [start, end) with whitespace runs collapsed to one space. */
static void copy_collapsed(char *out, size_t size, const char *start, const char *end)
{
    size_t n = 0;
    bool space = false;
    for (const char *p = start; p < end && n + 1 < size; p++) {
        if (isspace((unsigned char)*p)) {
            space = n > 0;
            continue;
        }
        if (space && n + 2 < size) out[n++] = ' ';
        space = false;
        out[n++] = *p;
    }
    out[n] = '\0';
}

/* After an opening '<' token: skips to the matching '>' (nested <> and ()
 * counted) and returns the start of that '>' (or of the end). */
static const char *skip_angles(lexer *l)
{
    int angle = 1, paren = 0;
    for (token t = next(l); t.kind != '0'; t = next(l)) {
        if (t.kind == '(') paren++;
        else if (t.kind == ')' && paren > 0) paren--;
        else if (!paren && t.kind == '<') angle++;
        else if (!paren && t.kind == '>' && --angle == 0) return t.start;
        else if (t.kind == ';' || t.kind == '{' || t.kind == '}') return t.start;
    }
    return l->p;
}

/* After the parameter list's '(': counts the parameters up to the matching
 * ')'. -1 for a parameter pack or C varargs. */
static int count_params(lexer *l)
{
    int depth = 1, angle = 0, count = 0;
    bool any = false, only_void = false, pack = false;
    for (token t = next(l); t.kind != '0'; t = next(l)) {
        if (t.kind == '(' || t.kind == '[' || t.kind == '{') depth++;
        else if ((t.kind == ')' || t.kind == ']' || t.kind == '}') && --depth == 0) break;
        else if (t.kind == '<' && depth == 1) angle++;
        else if (t.kind == '>' && depth == 1 && angle > 0) angle--;
        else if (t.kind == ',' && depth == 1 && angle == 0) {
            count++;
            continue;
        } else if (t.kind == '.') pack = true;
        only_void = !any && is(t, "void");
        any = true;
    }
    if (pack) return -1;
    return any && !only_void ? count + 1 : 0;
}

typedef struct found_info {
    bool tmpl, ext;
    int params;
    const char *template_params, *instantiation;
} found_info;

static void add(run_found_kernel *out, size_t capacity, size_t *count, const char *qualified, const found_info *f)
{
    for (size_t i = 0; i < *count && i < capacity; i++)
        if (!strcmp(out[i].name, qualified)) {
            out[i].is_template |= f->tmpl;
            out[i].is_extern_c &= f->ext; /* a C++ overload of the name: not plainly found */
            if (out[i].param_count != f->params) out[i].param_count = -1; /* overloads */
            if (!out[i].template_params[0] && f->template_params[0])
                snprintf(out[i].template_params, RUN_SCAN_NAME_MAX, "%s", f->template_params);
            if (!out[i].instantiation[0] && f->instantiation[0])
                snprintf(out[i].instantiation, RUN_SCAN_NAME_MAX, "%s", f->instantiation);
            return;
        }
    if (*count < capacity) {
        run_found_kernel *k = &out[*count];
        snprintf(k->name, RUN_SCAN_NAME_MAX, "%s", qualified);
        k->is_template = f->tmpl;
        k->is_extern_c = f->ext;
        k->param_count = f->params;
        snprintf(k->template_params, RUN_SCAN_NAME_MAX, "%s", f->template_params);
        snprintf(k->instantiation, RUN_SCAN_NAME_MAX, "%s", f->instantiation);
    }
    (*count)++;
}

const run_found_kernel *run_scan_find(const run_found_kernel *found, size_t count, const char *name)
{
    if (!strncmp(name, "::", 2)) name += 2;
    size_t len = strcspn(name, "<");
    while (len && isspace((unsigned char)name[len - 1])) len--;
    for (size_t i = 0; i < count; i++)
        if (strlen(found[i].name) == len && !strncmp(found[i].name, name, len)) return &found[i];
    return NULL;
}

bool run_scan_needs_name(const run_found_kernel *found, size_t count, const char *name)
{
    const run_found_kernel *k = run_scan_find(found, count, name);
    return !k || !k->is_extern_c || strcmp(k->name, name) != 0 || strstr(name, "::");
}

void run_scan_example(const run_found_kernel *k, char *buf, size_t size)
{
    if (k->instantiation[0] || !k->template_params[0]) {
        snprintf(buf, size, "%s<%s>", k->name, k->instantiation[0] ? k->instantiation : "float");
        return;
    }
    /* One placeholder per top-level parameter: float for typename/class
     * (and template template parameters), 1 for a value. */
    size_t used = (size_t)snprintf(buf, size, "%s<", k->name);
    const char *p = k->template_params;
    int depth = 0;
    for (bool first = true; *p && used < size; first = false) {
        const char *start = p;
        while (*p && (depth || *p != ',')) {
            if (*p == '<' || *p == '(') depth++;
            if ((*p == '>' || *p == ')') && depth) depth--;
            p++;
        }
        while (*start == ' ') start++;
        bool type = !strncmp(start, "typename", 8) || !strncmp(start, "class", 5) || !strncmp(start, "template", 8);
        used += (size_t)snprintf(buf + used, size - used, "%s%s", first ? "" : ", ", type ? "float" : "1");
        if (*p == ',') p++;
    }
    if (used < size) snprintf(buf + used, size - used, ">");
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
    char namespace_name[64] = "", template_params[RUN_SCAN_NAME_MAX] = "";
    token prev = {"", 0, 0};
    for (token t = next(&l); t.kind != '0';) {
        if (is(t, "template")) {
            pending_template = true;
            template_params[0] = '\0';
            t = next(&l);
            if (t.kind == '<') {
                const char *start = l.p, *end = skip_angles(&l);
                copy_collapsed(template_params, sizeof template_params, start, end);
                t = next(&l);
            }
            prev = (token){"", 0, 0};
            continue; /* t is the token after the template head */
        }
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
            template_params[0] = '\0';
        } else if (t.kind == '}' || t.kind == ';') {
            if (t.kind == '}' && depth > 0) depth--;
            pending_template = pending_extern_c = pending_namespace = false;
            template_params[0] = '\0';
        } else if (is(t, "__global__")) {
            bool ext = pending_extern_c, tmpl = pending_template;
            for (int d = 0; d < depth && d < MAX_DEPTH; d++) ext |= c_block[d];
            token name = {"", 0, 0};
            char instantiation[RUN_SCAN_NAME_MAX] = "";
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
                if (t.kind == '<' && name.len) {
                    /* scale<float>(...): an explicit instantiation or a
                     * specialisation; the name stays "scale". */
                    const char *start = l.p, *end = skip_angles(&l);
                    if (!template_params[0]) copy_collapsed(instantiation, sizeof instantiation, start, end);
                }
                t = next(&l);
            }
            if (t.kind == '(' && name.len) {
                char q[RUN_SCAN_NAME_MAX] = "";
                size_t used = 0;
                for (int d = 0; d < depth && d < MAX_DEPTH && !ext; d++)
                    if (ns[d][0] && used < sizeof q)
                        used += (size_t)snprintf(q + used, sizeof q - used, "%s::", ns[d]);
                if (used < sizeof q) snprintf(q + used, sizeof q - used, "%.*s", (int)name.len, name.start);
                found_info info = {tmpl, ext, count_params(&l), tmpl ? template_params : "", instantiation};
                add(out, capacity, &count, q, &info);
                t = next(&l);
            }
            prev = (token){"", 0, 0};
            continue;
        }
        prev = t;
        t = next(&l);
    }
    return count;
}
