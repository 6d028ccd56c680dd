/* The PTX scanner of ptx_prune.h: module-level statements, the names they
 * define and the library names they mention, then a reachability pass from
 * everything that is not a removable definition. */
#include "ptx_prune.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact_why.h"

/* NVRTC's PTX of a large CCCL kernel is a few MB; 1 GiB is no PTX. */
#define PRUNE_MAX_BYTES ((size_t)1 << 30)
#define NO_TOKEN        SIZE_MAX

typedef enum { KIND_NONE, KIND_OTHER, KIND_FUNC, KIND_VAR } stmt_kind;
typedef enum { FATE_KEEP, FATE_REMOVE, FATE_PLACEHOLDER } stmt_fate;

/* A mangled name (_Z...) somewhere in a statement: the only identifiers
 * that can name a removable definition. */
typedef struct token {
    size_t at, len;
} token;

typedef struct stmt {
    size_t start, end, line;    /* bytes [start, end) of the input; its first line */
    size_t first_token, tokens; /* its _Z tokens */
    size_t name_at, name_len;   /* VAR: the declared name */
    size_t names_before_eq;     /* VAR: identifiers before '=' (declarators) */
    stmt_kind kind;
    bool global, linkage, candidate, referenced;
    bool to_line_end; /* .version, .target, .address_size, .file: no ';' */
    stmt_fate fate;
} stmt;

typedef struct scan {
    const char *p;
    size_t n;
    token *tok;
    size_t ntok, captok;
    stmt *st;
    size_t nst, capst;
    size_t *table, table_size; /* candidate names: stmt index + 1, 0 empty */
    bool saw_version;          /* a statement of its own starts with .version */
    char *why;
    size_t why_size;
} scan;

#define refuse(s, ...) asyncrt__why((s)->why, (s)->why_size, __VA_ARGS__)

static bool grow(void **items, size_t *cap, size_t need, size_t each)
{
    if (need <= *cap) return true;
    size_t cap2 = *cap ? *cap * 2 : 256;
    while (cap2 < need) cap2 *= 2;
    void *p = realloc(*items, cap2 * each);
    if (!p) return false;
    *items = p;
    *cap = cap2;
    return true;
}

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_follow(char c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '$'; }

bool asyncrt__ptx_library_name(const char *s, size_t len)
{
    static const char *const spaces[] = {"4cuda",   "3cub", "6thrust", "2nv", "18cooperative_groups",
                                         "6nvcuda", "3std", "St"};
    size_t i;
    if (len > 4 && memcmp(s, "_ZSt", 4) == 0) return true;
    if (len > 3 && memcmp(s, "_ZN", 3) == 0)
        i = 3;
    else if (len > 4 && memcmp(s, "_ZZN", 4) == 0)
        i = 4;
    else
        return false;
    /* NVRTC wraps internal-linkage names: _ZN47_INTERNAL_<hash>_<file>4cuda3ptx... */
    size_t j = i, skip = 0;
    while (j < len && is_digit(s[j]) && skip < PRUNE_MAX_BYTES) skip = skip * 10 + (size_t)(s[j++] - '0');
    if (j > i && skip >= 10 && skip <= len - j && memcmp(s + j, "_INTERNAL_", 10) == 0) i = j + skip;
    for (size_t k = 0; k < sizeof spaces / sizeof *spaces; k++) {
        size_t m = strlen(spaces[k]);
        if (len - i > m && memcmp(s + i, spaces[k], m) == 0) return true;
    }
    return false;
}

/* A leading directive of a module-level statement: what the statement is. */
static bool classify(scan *s, stmt *t, const char *d, size_t len)
{
    /* The first four end at the end of their line. */
    static const char *const other[] = {".version", ".target", ".address_size", ".file",
                                        ".section", ".pragma", ".alias"};
    static const char *const linkage[] = {".extern", ".visible", ".weak", ".common"};
    static const char *const spaces[] = {".global", ".const", ".shared", ".local"};
#define IS(word) (len == strlen(word) && memcmp(d, word, len) == 0)
    for (size_t k = 0; k < sizeof linkage / sizeof *linkage; k++)
        if (IS(linkage[k])) {
            t->linkage = true;
            return true;
        }
    bool space = false;
    for (size_t k = 0; k < sizeof spaces / sizeof *spaces; k++) space |= IS(spaces[k]);
    if ((space || IS(".entry") || IS(".func")) && t->kind != KIND_NONE)
        return refuse(s, "line %zu: %.*s in a statement that is already another", t->line, (int)len, d);
    if (IS(".entry") || IS(".func")) {
        t->kind = KIND_FUNC;
        return true;
    }
    if (space) {
        t->global = IS(".global");
        t->kind = KIND_VAR;
        return true;
    }
    for (size_t k = 0; t->kind == KIND_NONE && k < sizeof other / sizeof *other; k++)
        if (IS(other[k])) {
            t->to_line_end = k < 4;
            s->saw_version |= k == 0;
            t->kind = KIND_OTHER;
            return true;
        }
#undef IS
    if (t->kind != KIND_NONE) return true; /* a modifier: .align 4, .u32, .v2, .attribute, .texref */
    return refuse(s, "line %zu: a module-level directive this scanner does not know: %.*s", t->line,
                  (int)(len > 40 ? 40 : len), d);
}

static bool line_directive(const char *d, size_t len)
{
    static const char *const names[] = {".version", ".target", ".address_size", ".file"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (len == strlen(names[k]) && memcmp(d, names[k], len) == 0) return true;
    return false;
}

/* The statement ends at byte `end`: checks what it defines. */
static bool close_stmt(scan *s, stmt *t, size_t end)
{
    t->end = end;
    if (t->kind == KIND_NONE)
        return refuse(s, "line %zu: a module-level statement that starts with no directive", t->line);
    if (t->kind == KIND_VAR && t->name_len == 0)
        return refuse(s, "line %zu: a variable definition without a name", t->line);
    t->candidate =
        t->kind == KIND_VAR && t->global && !t->linkage && asyncrt__ptx_library_name(s->p + t->name_at, t->name_len);
    if (t->candidate && t->names_before_eq != 1)
        return refuse(s, "line %zu: %zu names in one definition of a library variable", t->line, t->names_before_eq);
    if (!grow((void **)&s->st, &s->capst, s->nst + 1, sizeof *s->st)) return refuse(s, "out of memory");
    s->st[s->nst++] = *t;
    return true;
}

/* Splits the input into module-level statements (each up to its ';', or a
 * function or section up to its closing brace) and records their _Z tokens. */
static bool lex(scan *s)
{
    const char *p = s->p;
    size_t n = s->n, i = 0, line = 1, depth = 0;
    bool open = false, leading = false, seen_eq = false, block = false;
    stmt t;
    while (i < n) {
        char c = p[i];
        if (c == '\n') {
            if (open && depth == 0 && t.to_line_end) {
                if (!close_stmt(s, &t, i)) return false;
                open = false;
            }
            line++, i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            i++;
            continue;
        }
        if (c == '/' && i + 1 < n && p[i + 1] == '/') {
            while (i < n && p[i] != '\n') i++;
            continue;
        }
        if (c == '/' && i + 1 < n && p[i + 1] == '*') {
            size_t from = line;
            for (i += 2; i + 1 < n && !(p[i] == '*' && p[i + 1] == '/'); i++) line += p[i] == '\n';
            if (i + 1 >= n) return refuse(s, "line %zu: a comment that never ends", from);
            i += 2;
            continue;
        }
        if (!open) {
            memset(&t, 0, sizeof t);
            t.start = i, t.line = line, t.first_token = s->ntok;
            open = leading = true, seen_eq = block = false;
        }
        if (c == '"') {
            for (i++; i < n && p[i] != '"' && p[i] != '\n'; i++)
                if (p[i] == '\\' && i + 1 < n && p[i + 1] != '\n') i++;
            if (i >= n || p[i] != '"') return refuse(s, "line %zu: a string that never ends", line);
            i++, leading = false;
            continue;
        }
        if (is_alpha(c) || c == '_' || c == '$' || c == '%') {
            size_t at = i;
            for (i++; i < n && is_follow(p[i]); i++) {
            }
            if (depth == 0 && !seen_eq && t.kind == KIND_VAR && t.names_before_eq++ == 0)
                t.name_at = at, t.name_len = i - at;
            if (i - at > 2 && p[at] == '_' && p[at + 1] == 'Z') {
                if (!grow((void **)&s->tok, &s->captok, s->ntok + 1, sizeof *s->tok)) return refuse(s, "out of memory");
                s->tok[s->ntok++] = (token){at, i - at};
                t.tokens++;
            }
            if (depth == 0) leading = false;
            continue;
        }
        if (c == '.' && i + 1 < n && (is_alpha(p[i + 1]) || p[i + 1] == '_')) {
            size_t at = i;
            for (i++; i < n && is_follow(p[i]); i++) {
            }
            if (depth == 0 && leading && !classify(s, &t, p + at, i - at)) return false;
            /* A line directive swallowed by a statement that never ended: whatever it is, it is no PTX. */
            if (depth == 0 && !leading && line_directive(p + at, i - at))
                return refuse(s, "line %zu: %.*s inside another statement (from line %zu)", line, (int)(i - at), p + at,
                              t.line);
            continue;
        }
        if (is_digit(c)) {
            for (i++; i < n && (is_follow(p[i]) || p[i] == '.'); i++) {
            }
            continue;
        }
        i++;
        if (c == '{') {
            if (depth == 0 && !seen_eq) block = true;
            if (depth == 0) leading = false;
            depth++;
        } else if (c == '}') {
            if (depth == 0) return refuse(s, "line %zu: a '}' that closes nothing", line);
            if (--depth == 0 && block) {
                if (!close_stmt(s, &t, i)) return false;
                open = false;
            }
        } else if (c == ';' && depth == 0) {
            if (!close_stmt(s, &t, i)) return false;
            open = false;
        } else if (depth == 0) {
            seen_eq |= c == '=';
            leading &= c != '(' && c != '=';
        }
    }
    if (open || depth) return refuse(s, "the PTX ends inside a statement (line %zu)", open ? t.line : line);
    return true;
}

static uint64_t hash_name(const char *p, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* The slot of `name` in the candidate table: its entry, or the empty one where it would go. */
static size_t *slot_of(scan *s, const char *name, size_t len)
{
    size_t mask = s->table_size - 1, i = (size_t)hash_name(name, len) & mask;
    for (;; i = (i + 1) & mask) {
        size_t *e = &s->table[i];
        if (!*e) return e;
        const stmt *t = &s->st[*e - 1];
        if (t->name_len == len && memcmp(s->p + t->name_at, name, len) == 0) return e;
    }
}

static bool index_candidates(scan *s)
{
    size_t count = 0;
    for (size_t i = 0; i < s->nst; i++) count += s->st[i].candidate;
    for (s->table_size = 16; s->table_size < 2 * count + 2; s->table_size *= 2) {
    }
    if (!(s->table = calloc(s->table_size, sizeof *s->table))) return refuse(s, "out of memory");
    for (size_t i = 0; i < s->nst; i++) {
        stmt *t = &s->st[i];
        if (!t->candidate) continue;
        size_t *e = slot_of(s, s->p + t->name_at, t->name_len);
        if (*e)
            return refuse(s, "line %zu: %.*s is defined twice (first on line %zu)", t->line, (int)t->name_len,
                          s->p + t->name_at, s->st[*e - 1].line);
        *e = i + 1;
    }
    return true;
}

/* Marks every candidate that a kept statement mentions, transitively. */
static bool mark_referenced(scan *s)
{
    size_t *work = malloc((s->nst + 1) * sizeof *work), top = 0;
    if (!work) return refuse(s, "out of memory");
    for (size_t i = 0; i < s->nst; i++)
        if (!s->st[i].candidate) work[top++] = i;
    while (top) {
        const stmt *t = &s->st[work[--top]];
        for (size_t k = 0; k < t->tokens; k++) {
            const token *x = &s->tok[t->first_token + k];
            if (x->at == t->name_at && t->candidate) continue; /* its own name */
            size_t *e = slot_of(s, s->p + x->at, x->len);
            if (*e && !s->st[*e - 1].referenced) {
                s->st[*e - 1].referenced = true;
                work[top++] = *e - 1;
            }
        }
    }
    free(work);
    return true;
}

/* Removable definitions before the last kept .global keep a placeholder. */
static void decide(scan *s)
{
    size_t cut = 0;
    for (size_t i = 0; i < s->nst; i++) {
        const stmt *t = &s->st[i];
        if (t->kind == KIND_VAR && t->global && (!t->candidate || t->referenced)) cut = i + 1;
    }
    for (size_t i = 0; i < s->nst; i++) {
        stmt *t = &s->st[i];
        t->fate = !t->candidate || t->referenced ? FATE_KEEP : i < cut ? FATE_PLACEHOLDER : FATE_REMOVE;
    }
}

/* The bytes a removed statement takes: its whole line where it stands alone on it. */
static void removed_span(const scan *s, const stmt *t, size_t *from, size_t *to)
{
    size_t a = t->start, b = t->end;
    while (a > 0 && (s->p[a - 1] == ' ' || s->p[a - 1] == '\t')) a--;
    while (b < s->n && (s->p[b] == ' ' || s->p[b] == '\t' || s->p[b] == '\r')) b++;
    if ((a == 0 || s->p[a - 1] == '\n') && (b == s->n || s->p[b] == '\n')) {
        *from = a, *to = b < s->n ? b + 1 : b;
        return;
    }
    *from = t->start, *to = t->end;
}

/* One removed or placeholder definition, for the sorted lists. */
typedef struct gone {
    char *name, *placeholder;
} gone;

static int by_name(const void *a, const void *b) { return strcmp(((const gone *)a)->name, ((const gone *)b)->name); }

/* A "$x" no identifier of the input starts with: placeholders are $x0, $x1 ... */
static char free_prefix(const scan *s)
{
    bool used[26] = {false};
    for (size_t i = 0; i + 1 < s->n; i++)
        if (s->p[i] == '$' && s->p[i + 1] >= 'a' && s->p[i + 1] <= 'z') used[s->p[i + 1] - 'a'] = true;
    for (int c = 0; c < 26; c++)
        if (!used[c]) return (char)('a' + c);
    return 0;
}

static bool write_out(scan *s, asyncrt_ptx_prune *out)
{
    static const char head[] = ".global .align 1 .b8 $", tail[] = "[1];";
    char prefix = 0;
    size_t cap = s->n + 1;
    for (size_t i = 0; i < s->nst; i++) {
        const stmt *t = &s->st[i];
        if (t->fate == FATE_PLACEHOLDER) cap += sizeof head + sizeof tail + 24, out->placeholders++;
        if (t->fate == FATE_REMOVE) out->removed++;
        if (t->candidate && t->referenced) out->kept++;
    }
    if (out->placeholders && !(prefix = free_prefix(s)))
        return refuse(s, "every $a...$z prefix is in use: no name for placeholders");
    size_t count = out->removed + out->placeholders, listed = 0, numbered = 0;
    gone *list = calloc(count + 1, sizeof *list);
    out->ptx = malloc(cap);
    out->unreferenced = calloc(count + 1, sizeof *out->unreferenced);
    out->placeholders_of = calloc(count + 1, sizeof *out->placeholders_of);
    bool ok = list && out->ptx && out->unreferenced && out->placeholders_of;
    char *w = out->ptx;
    size_t from = 0;
    for (size_t i = 0; ok && i < s->nst; i++) {
        const stmt *t = &s->st[i];
        if (t->fate == FATE_KEEP) continue;
        size_t a = t->start, b = t->end;
        if (t->fate == FATE_REMOVE) removed_span(s, t, &a, &b);
        memcpy(w, s->p + from, a - from), w += a - from;
        gone *g = &list[listed++];
        ok = (g->name = malloc(t->name_len + 1)) != NULL;
        if (ok) memcpy(g->name, s->p + t->name_at, t->name_len), g->name[t->name_len] = '\0';
        if (ok && t->fate == FATE_PLACEHOLDER) {
            char name[24];
            snprintf(name, sizeof name, "%c%zu", prefix, numbered++);
            ok = (g->placeholder = malloc(strlen(name) + 2)) != NULL;
            if (ok) snprintf(g->placeholder, strlen(name) + 2, "$%s", name);
            w += sprintf(w, "%s%s%s", head, name, tail);
        }
        from = b;
    }
    if (ok) {
        memcpy(w, s->p + from, s->n - from), w += s->n - from;
        *w = '\0';
        out->size = (size_t)(w - out->ptx);
        qsort(list, listed, sizeof *list, by_name);
        for (size_t i = 0; i < listed; i++) {
            out->unreferenced[i] = list[i].name;
            out->placeholders_of[i] = list[i].placeholder;
        }
        out->unreferenced_count = listed;
    } else {
        for (size_t i = 0; list && i < listed; i++) free(list[i].name), free(list[i].placeholder);
    }
    free(list);
    return ok || refuse(s, "out of memory");
}

bool asyncrt__ptx_prune(const char *ptx, size_t size, asyncrt_ptx_prune *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    if (why_size) why[0] = '\0';
    scan s = {.p = ptx, .n = size, .why = why, .why_size = why_size};
    while (s.n && !ptx[s.n - 1]) s.n--;
    bool ok = ptx != NULL;
    const char *nul = NULL;
    if (!ok)
        refuse(&s, "no PTX");
    else if (s.n > PRUNE_MAX_BYTES)
        ok = refuse(&s, "%zu bytes of PTX, more than the %zu this scanner reads", s.n, PRUNE_MAX_BYTES);
    else if ((nul = memchr(ptx, '\0', s.n))) /* in a comment or a string too: the output is text */
        ok = refuse(&s, "a NUL byte inside the PTX, at byte %zu", (size_t)(nul - ptx));
    ok = ok && lex(&s);
    if (ok && !s.saw_version) ok = refuse(&s, "not PTX: no .version directive");
    ok = ok && index_candidates(&s) && mark_referenced(&s);
    if (ok) {
        decide(&s);
        ok = write_out(&s, out);
    }
    free(s.tok);
    free(s.st);
    free(s.table);
    if (!ok) asyncrt__ptx_prune_free(out);
    return ok;
}

void asyncrt__ptx_prune_free(asyncrt_ptx_prune *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->unreferenced_count; i++) free(p->unreferenced[i]), free(p->placeholders_of[i]);
    free(p->unreferenced);
    free(p->placeholders_of);
    free(p->ptx);
    memset(p, 0, sizeof *p);
}
