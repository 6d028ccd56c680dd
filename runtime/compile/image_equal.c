/* image_equal.h: NVRTC's CUBIN (a) against the compact one (c), by name. */
#include "image_equal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact_why.h"
#include "image_elf.h"

#define BANK4     ".nv.constant4"
#define CALLGRAPH ".nv.callgraph"
enum { EIATTR_PARAM_CBANK = 0x0a, EIATTR_EXTERNS = 0x0f };

typedef struct renamed {
    const char *placeholder, *original;
} renamed;

typedef struct cmp {
    asyncrt_elf a, c;
    const char *const *unref, *const *placeholders;
    size_t unref_count;
    struct renamed *renames; /* (placeholder, the name it stands for), sorted by placeholder */
    size_t rename_count;
    char *why;
    size_t why_size;
} cmp;

#define differ(k, ...) asyncrt__why((k)->why, (k)->why_size, __VA_ARGS__)

static int compare_strings(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool unreferenced(const cmp *k, const char *name)
{
    return k->unref_count && bsearch(&name, k->unref, k->unref_count, sizeof *k->unref, compare_strings);
}

/* The placeholder standing for `name`, or NULL. */
static const char *placeholder_of(const cmp *k, const char *name)
{
    const char *const *at =
        k->unref_count ? bsearch(&name, k->unref, k->unref_count, sizeof *k->unref, compare_strings) : NULL;
    return at && k->placeholders ? k->placeholders[at - k->unref] : NULL;
}

static int compare_renames(const void *a, const void *b)
{
    return strcmp(((const renamed *)a)->placeholder, ((const renamed *)b)->placeholder);
}

/* The sorted (placeholder, original) pairs; false on a placeholder named twice. */
static bool index_renames(cmp *k)
{
    if (!(k->renames = malloc((k->unref_count + 1) * sizeof *k->renames))) return differ(k, "out of memory");
    for (size_t i = 0; k->placeholders && i < k->unref_count; i++)
        if (k->placeholders[i]) k->renames[k->rename_count++] = (renamed){k->placeholders[i], k->unref[i]};
    qsort(k->renames, k->rename_count, sizeof *k->renames, compare_renames);
    for (size_t i = 1; i < k->rename_count; i++)
        if (!strcmp(k->renames[i - 1].placeholder, k->renames[i].placeholder))
            return differ(k, "the placeholder %s stands for two globals", k->renames[i].placeholder);
    return true;
}

/* The name a placeholder stands for, or NULL. */
static const char *original_of(const cmp *k, const char *placeholder)
{
    renamed want = {placeholder, NULL};
    if (!k->rename_count) return NULL;
    const renamed *r = bsearch(&want, k->renames, k->rename_count, sizeof want, compare_renames);
    return r ? r->original : NULL;
}

static bool globals_section(const char *name)
{
    return name && (strcmp(name, ".nv.global") == 0 || strcmp(name, ".nv.global.init") == 0);
}

/* Sections whose content is compared otherwise (or only through what they name). */
static bool special(const asyncrt_elf_section *s)
{
    static const char *const names[] = {"",    ".shstrtab", ".strtab", ".symtab", ".nv.global", ".nv.global.init",
                                        BANK4, ".nv.info",  CALLGRAPH};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(s->name, names[i]) == 0) return true;
    return strncmp(s->name, ".nv.info.", 9) == 0 || s->type == ASYNCRT_SHT_REL || s->type == ASYNCRT_SHT_RELA;
}

/* ---- symbols: matched by (is a section symbol, name) ---------------------- */

typedef struct symbol_key {
    bool section;
    const char *name;
} symbol_key;

static symbol_key key_of(const asyncrt_elf_symbol *y)
{
    return (symbol_key){(y->info & 0xf) == ASYNCRT_STT_SECTION, y->name};
}

static int compare_keys(symbol_key x, symbol_key y)
{
    return x.section != y.section ? (x.section ? -1 : 1) : strcmp(x.name, y.name);
}

typedef struct keyed {
    symbol_key key;
    size_t symbol;
} keyed;

static int compare_keyed(const void *a, const void *b)
{
    return compare_keys(((const keyed *)a)->key, ((const keyed *)b)->key);
}

typedef struct symbol_index {
    keyed *order; /* sorted by key; symbol 0 (the null one) left out */
    size_t count;
} symbol_index;

static bool build_index(const asyncrt_elf *e, symbol_index *x)
{
    x->count = e->symbol_count ? e->symbol_count - 1 : 0;
    if (!(x->order = malloc((x->count + 1) * sizeof *x->order))) return false;
    for (size_t i = 0; i < x->count; i++) x->order[i] = (keyed){key_of(&e->symbols[i + 1]), i + 1};
    qsort(x->order, x->count, sizeof *x->order, compare_keyed);
    return true;
}

/* The symbol of `e` with key `want`, or NULL. */
static const asyncrt_elf_symbol *lookup(const asyncrt_elf *e, const symbol_index *x, symbol_key want)
{
    size_t lo = 0, hi = x->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = compare_keys(x->order[mid].key, want);
        if (r == 0) return &e->symbols[x->order[mid].symbol];
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const char *symbol_section(const asyncrt_elf *e, const asyncrt_elf_symbol *y)
{
    return y->shndx && y->shndx < e->section_count ? e->sections[y->shndx].name : "";
}

/* The initial bytes of a global in .nv.global.init, or NULL (uninitialised or out of bounds). */
static const uint8_t *initial_bytes(const asyncrt_elf *e, const asyncrt_elf_symbol *y)
{
    const asyncrt_elf_section *s = y->shndx < e->section_count ? &e->sections[y->shndx] : NULL;
    if (!s || !s->data || y->value > s->size || y->size > s->size - y->value) return NULL;
    return s->data + y->value;
}

static bool same_symbol(cmp *k, const asyncrt_elf_symbol *x, const asyncrt_elf_symbol *y)
{
    const char *sx = symbol_section(&k->a, x), *sy = symbol_section(&k->c, y);
    bool global = globals_section(sx);
    if (x->info != y->info || x->other != y->other || global != globals_section(sy) ||
        (!global && strcmp(sx, sy) != 0) || (x->shndx == 0) != (y->shndx == 0))
        return differ(k, "symbol %s: other binding, type or section (%s against %s)", x->name, sx, sy);
    if (!global) {
        if (x->value != y->value || x->size != y->size)
            return differ(k, "symbol %s: value or size %llu/%llu against %llu/%llu", x->name,
                          (unsigned long long)x->value, (unsigned long long)x->size, (unsigned long long)y->value,
                          (unsigned long long)y->size);
        return true;
    }
    /* A placeholder: its slot only (an initialised global's placeholder is an uninitialised byte). */
    if (unreferenced(k, x->name)) return true;
    if (strcmp(sx, sy) != 0) return differ(k, "global %s: in %s against %s", x->name, sx, sy);
    if (x->size != y->size)
        return differ(k, "global %s: %llu bytes against %llu", x->name, (unsigned long long)x->size,
                      (unsigned long long)y->size);
    const uint8_t *bx = initial_bytes(&k->a, x), *by = initial_bytes(&k->c, y);
    if ((bx == NULL) != (by == NULL) || (bx && memcmp(bx, by, x->size) != 0))
        return differ(k, "global %s: other initial bytes", x->name);
    return true;
}

static bool check_symbols(cmp *k, const symbol_index *ia, const symbol_index *ic)
{
    for (size_t i = 1; i < ia->count; i++)
        if (!compare_keys(ia->order[i - 1].key, ia->order[i].key))
            return differ(k, "NVRTC's image has two symbols named %s", ia->order[i].key.name);
    for (size_t i = 1; i < ic->count; i++)
        if (!compare_keys(ic->order[i - 1].key, ic->order[i].key))
            return differ(k, "the compact image has two symbols named %s", ic->order[i].key.name);
    for (size_t i = 1; i < k->c.symbol_count; i++) {
        const asyncrt_elf_symbol *y = &k->c.symbols[i], *x = lookup(&k->a, ia, key_of(y));
        const char *original = key_of(y).section ? NULL : original_of(k, y->name);
        if (original) { /* a placeholder: a global of NVRTC's image, by another name */
            if (x) return differ(k, "the placeholder %s is a name NVRTC's image has too", y->name);
            if (!(x = lookup(&k->a, ia, (symbol_key){false, original})) || x->info != y->info || x->other != y->other ||
                !globals_section(symbol_section(&k->a, x)) || !globals_section(symbol_section(&k->c, y)))
                return differ(k, "the placeholder %s does not stand for the global %s", y->name, original);
            continue;
        }
        if (!x) return differ(k, "symbol %s is not in NVRTC's image", y->name);
        if (!same_symbol(k, x, y)) return false;
    }
    for (size_t i = 1; i < k->a.symbol_count; i++) {
        const asyncrt_elf_symbol *x = &k->a.symbols[i];
        bool named = unreferenced(k, x->name) && !key_of(x).section;
        if (named && ((x->info & 0xf) != ASYNCRT_STT_OBJECT || !globals_section(symbol_section(&k->a, x))))
            return differ(k, "the prune's list names %s, which is no global variable of NVRTC's image", x->name);
        /* The section symbol of a globals' section (or bank 4) that no global is left in. */
        bool gone = key_of(x).section && (globals_section(x->name) || !strcmp(x->name, BANK4)) &&
                    !asyncrt__elf_section(&k->c, x->name);
        if (!lookup(&k->c, ic, key_of(x)) && !named && !gone)
            return differ(k, "symbol %s of NVRTC's image is missing, and the prune did not remove it", x->name);
    }
    return true;
}

/* ---- sections ------------------------------------------------------------ */

static bool same_links(cmp *k, const asyncrt_elf_section *x, const asyncrt_elf_section *y)
{
    const char *lx = asyncrt__elf_section_name(&k->a, x->link), *ly = asyncrt__elf_section_name(&k->c, y->link);
    if ((lx == NULL) != (ly == NULL) || (lx && strcmp(lx, ly) != 0))
        return differ(k, "section %s: linked to another section", x->name);
    const char *ix, *iy;
    if (x->flags & ASYNCRT_SHF_INFO_LINK) { /* info is a section index */
        ix = asyncrt__elf_section_name(&k->a, x->info);
        iy = asyncrt__elf_section_name(&k->c, y->info);
    } else if (strncmp(x->name, ".text.", 6) == 0) { /* info is its function's symbol */
        ix = x->info < k->a.symbol_count ? k->a.symbols[x->info].name : NULL;
        iy = y->info < k->c.symbol_count ? k->c.symbols[y->info].name : NULL;
    } else {
        return x->info == y->info || differ(k, "section %s: info %u against %u", x->name, x->info, y->info);
    }
    if (!ix || !iy || strcmp(ix, iy) != 0) return differ(k, "section %s: its info names another thing", x->name);
    return true;
}

static bool same_section(cmp *k, const asyncrt_elf_section *x, const asyncrt_elf_section *y, bool content)
{
    if (x->type != y->type || x->flags != y->flags || x->align != y->align || x->entsize != y->entsize)
        return differ(k, "section %s: type, flags (registers, for code) or alignment %llu/%llu differ", x->name,
                      (unsigned long long)x->align, (unsigned long long)y->align);
    if (!content) return true;
    if (x->size != y->size)
        return differ(k, "section %s: %llu bytes against %llu", x->name, (unsigned long long)x->size,
                      (unsigned long long)y->size);
    if (x->data && memcmp(x->data, y->data, x->size) != 0) {
        size_t at = 0;
        while (x->data[at] == y->data[at]) at++;
        return differ(k, "section %s: differs from byte %zu", x->name, at);
    }
    return same_links(k, x, y);
}

/* The (type, flags) of the segments that hold a section's bytes, as a bit
 * set over their kinds: the loader must find code, parameters and constants
 * in segments of the same kinds in both images. */
static uint64_t segments_of(const asyncrt_elf *e, const asyncrt_elf_section *s)
{
    uint64_t kinds = 0;
    uint64_t at = s->data ? (uint64_t)(s->data - e->image) : 0;
    for (size_t i = 0; s->data && i < e->segment_count; i++) {
        const asyncrt_elf_segment *g = &e->segments[i];
        if (g->offset <= at && s->size <= g->filesz && at - g->offset <= g->filesz - s->size)
            kinds |= 1ull << ((g->type & 7) * 8 + (g->flags & 7)); /* PT_LOAD, PT_PHDR ...; R, W, X */
    }
    return kinds;
}

static bool check_sections(cmp *k)
{
    for (size_t i = 0; i < k->c.section_count; i++)
        if (!asyncrt__elf_section(&k->a, k->c.sections[i].name))
            return differ(k, "section %s is not in NVRTC's image", k->c.sections[i].name);
    for (size_t i = 0; i < k->a.section_count; i++) {
        const asyncrt_elf_section *x = &k->a.sections[i], *y = asyncrt__elf_section(&k->c, x->name);
        bool sp = special(x);
        /* The globals' sections, bank 4 and their relocations go when no global is left. */
        if (!y && sp && x->name[0] && strncmp(x->name, ".nv.info", 8) != 0 && strcmp(x->name, CALLGRAPH) != 0) continue;
        if (!y) return differ(k, "section %s is missing", x->name);
        /* ptxas aligns the globals' sections to their most aligned global: removing one may lower it, and
         * each kept global is still aligned as its own definition asks. */
        if (globals_section(x->name) && (x->type != y->type || x->flags != y->flags))
            return differ(k, "section %s: other type or flags", x->name);
        if (!globals_section(x->name) && !same_section(k, x, y, !sp)) return false;
        if (sp && strncmp(x->name, ".nv.info", 8) == 0 && !same_links(k, x, y)) return false;
        if ((x->flags & 2) && !globals_section(x->name) && strcmp(x->name, BANK4) != 0 &&
            segments_of(&k->a, x) != segments_of(&k->c, y))
            return differ(k, "section %s: loaded by other kinds of segment", x->name);
    }
    return true;
}

/* ---- .nv.info and .nv.callgraph, symbol indices read as names ------------ */

typedef struct text {
    char *p;
    size_t len, cap;
    bool failed;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->failed) return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        while (cap < t->len + n + 1) cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->failed = true;
            return;
        }
        t->p = p, t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->p[t->len += n] = '\0';
}

static void put_symbol(text *t, const asyncrt_elf *e, uint32_t at)
{
    char num[24];
    if (at >= e->symbol_count) {
        snprintf(num, sizeof num, "#%u", at);
        put(t, num, strlen(num));
        return;
    }
    const asyncrt_elf_symbol *y = &e->symbols[at];
    if (strpbrk(y->name, "]\n")) { /* it would run into what follows it */
        t->failed = true;
        return;
    }
    put(t, key_of(y).section ? "[section " : "[", key_of(y).section ? 9 : 1);
    put(t, y->name, strlen(y->name));
    put(t, "]", 1);
}

/* One record per line (sorted for the module's list, whose order follows symbol indices). */
static bool info_lines(const asyncrt_elf *e, const asyncrt_elf_section *s, bool module, text *out)
{
    size_t lines = 0;
    text t = {0};
    bool ok = true;
    for (size_t i = 0; ok && s && s->data && i + 4 <= s->size;) {
        uint8_t format = s->data[i], attr = s->data[i + 1];
        size_t size = format == 4 ? (size_t)asyncrt__elf_u(s->data + i + 2, 2) : 2, head = format == 4 ? 4 : 2;
        if (!(ok = i + head + size <= s->size)) break;
        const uint8_t *p = s->data + i + head;
        char h[16];
        snprintf(h, sizeof h, "%02x %02x:", format, attr);
        put(&t, h, strlen(h));
        for (size_t w = 0; w < size; w += 4) {
            bool named = format == 4 && size - w >= 4 &&
                         ((module && w == 0) || (attr == EIATTR_PARAM_CBANK && w == 0) || attr == EIATTR_EXTERNS);
            if (named) {
                put_symbol(&t, e, (uint32_t)asyncrt__elf_u(p + w, 4));
                continue;
            }
            char hex[16];
            for (size_t b = w; b < w + 4 && b < size; b++) snprintf(hex + 2 * (b - w), 3, "%02x", p[b]);
            put(&t, hex, strlen(hex));
        }
        put(&t, "\n", 1);
        lines++;
        i += head + size;
    }
    ok = ok && !t.failed;
    char **v = ok && module && t.p ? malloc((lines + 1) * sizeof *v) : NULL;
    if (v) { /* the module's records, sorted: their order follows symbol indices */
        size_t n = 0;
        for (char *q = t.p; n < lines && *q; q = strchr(q, '\n') + 1) v[n++] = q;
        for (size_t j = 0; j < n; j++) *strchr(v[j], '\n') = '\0';
        qsort(v, n, sizeof *v, compare_strings);
        for (size_t j = 0; j < n; j++) {
            put(out, v[j], strlen(v[j]));
            put(out, "\n", 1);
        }
        free(v);
    } else if (ok && module && t.p) {
        ok = false; /* out of memory */
    } else if (ok && t.p) {
        put(out, t.p, t.len);
    }
    free(t.p);
    return ok && !out->failed;
}

static bool same_info(cmp *k, const char *name)
{
    const asyncrt_elf_section *x = asyncrt__elf_section(&k->a, name), *y = asyncrt__elf_section(&k->c, name);
    text tx = {0}, ty = {0};
    bool module = strcmp(name, ".nv.info") == 0;
    bool ok = info_lines(&k->a, x, module, &tx) && info_lines(&k->c, y, module, &ty);
    if (!ok)
        differ(k, "%s: records out of bounds (or out of memory)", name);
    else if (tx.len != ty.len || (tx.len && memcmp(tx.p, ty.p, tx.len) != 0))
        ok = differ(k, "%s: other records (registers, stack, max threads, parameters or externs)", name);
    free(tx.p);
    free(ty.p);
    return ok;
}

/* Pairs of (caller, callee) symbol indices, or negative markers. */
static bool callgraph_lines(const asyncrt_elf *e, text *t)
{
    const asyncrt_elf_section *s = asyncrt__elf_section(e, CALLGRAPH);
    for (size_t i = 0; s && s->data && i + 4 <= s->size; i += 4) {
        uint32_t v = (uint32_t)asyncrt__elf_u(s->data + i, 4);
        if (v >= 0xfffffff0u) {
            char m[16];
            snprintf(m, sizeof m, "-%u", 0u - v);
            put(t, m, strlen(m));
        } else {
            put_symbol(t, e, v);
        }
        put(t, i % 8 ? "\n" : " ", 1);
    }
    return !t->failed;
}

static bool check_info(cmp *k)
{
    for (size_t i = 0; i < k->a.section_count; i++)
        if (strncmp(k->a.sections[i].name, ".nv.info", 8) == 0 && !same_info(k, k->a.sections[i].name)) return false;
    text tx = {0}, ty = {0};
    bool ok = callgraph_lines(&k->a, &tx) && callgraph_lines(&k->c, &ty);
    if (!ok)
        differ(k, "out of memory");
    else if (tx.len != ty.len || (tx.len && memcmp(tx.p, ty.p, tx.len) != 0))
        ok = differ(k, "the call graph (.nv.callgraph) differs");
    free(tx.p);
    free(ty.p);
    return ok;
}

/* ---- relocations and constant bank 4 ------------------------------------- */

typedef struct reloc {
    uint64_t offset;
    uint32_t type;
    symbol_key symbol;
    int64_t addend;
} reloc;

static int compare_relocs(const void *a, const void *b)
{
    const reloc *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    int r = compare_keys(x->symbol, y->symbol);
    return r ? r : (x->addend > y->addend) - (x->addend < y->addend);
}

/* The relocations of `e` that apply to section `target`, sorted; *n = 0 where there are none. */
static bool relocs_of(cmp *k, const asyncrt_elf *e, const char *target, reloc **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < e->section_count; i++) {
        const asyncrt_elf_section *s = &e->sections[i];
        if (s->type != ASYNCRT_SHT_REL && s->type != ASYNCRT_SHT_RELA) continue;
        const char *to = asyncrt__elf_section_name(e, s->info);
        if (!to || strcmp(to, target) != 0) continue;
        size_t each = s->type == ASYNCRT_SHT_RELA ? 24 : 16, count = s->size / each;
        if (!s->data || s->size % each) return differ(k, "%s: not whole relocations", s->name);
        reloc *r = realloc(*out, (*n + count + 1) * sizeof *r);
        if (!r) return differ(k, "out of memory");
        *out = r;
        for (size_t j = 0; j < count; j++) {
            const uint8_t *p = s->data + each * j;
            uint64_t info = asyncrt__elf_u(p + 8, 8), symbol = info >> 32;
            if (symbol >= e->symbol_count)
                return differ(k, "%s: a relocation to symbol %llu", s->name, (unsigned long long)symbol);
            const asyncrt_elf_symbol *y = &e->symbols[symbol];
            if (key_of(y).section && globals_section(y->name))
                return differ(k, "%s: a relocation through the section %s, whose offsets the prune moves", s->name,
                              y->name);
            r[(*n)++] = (reloc){asyncrt__elf_u(p, 8), (uint32_t)info, key_of(y),
                                each == 24 ? (int64_t)asyncrt__elf_u(p + 16, 8) : 0};
        }
    }
    if (*n) qsort(*out, *n, sizeof **out, compare_relocs);
    return true;
}

static bool same_reloc(const reloc *x, const reloc *y) { return compare_relocs(x, y) == 0; }

/* A bank-4 slot: the same address, or that of the global's placeholder. */
static bool same_slot(const cmp *k, const reloc *x, const reloc *y)
{
    if (same_reloc(x, y)) return true;
    const char *p = x->symbol.section ? NULL : placeholder_of(k, x->symbol.name);
    return p && !y->symbol.section && !strcmp(p, y->symbol.name) && x->offset == y->offset && x->type == y->type &&
           x->addend == y->addend;
}

static bool check_relocations(cmp *k)
{
    for (size_t i = 0; i < k->a.section_count; i++) {
        const char *target = k->a.sections[i].name;
        if (!strcmp(target, BANK4)) continue;
        reloc *x = NULL, *y = NULL;
        size_t nx = 0, ny = 0;
        bool ok = relocs_of(k, &k->a, target, &x, &nx) && relocs_of(k, &k->c, target, &y, &ny);
        if (ok && (nx || ny) && globals_section(target))
            ok = differ(k, "relocations inside %s (pointers between globals) are not compared", target);
        if (ok && nx != ny) ok = differ(k, "%s: %zu relocations against %zu", target, nx, ny);
        for (size_t j = 0; ok && j < nx; j++)
            if (!same_reloc(&x[j], &y[j]))
                ok = differ(k, "%s: the relocation at %llu differs", target, (unsigned long long)x[j].offset);
        free(x);
        free(y);
        if (!ok) return false;
    }
    return true;
}

/* The compact bank is a prefix of NVRTC's, slot for slot the same symbol;
 * every slot past its end holds a global the PTX never mentioned. */
static bool check_bank4(cmp *k)
{
    const asyncrt_elf_section *x = asyncrt__elf_section(&k->a, BANK4), *y = asyncrt__elf_section(&k->c, BANK4);
    uint64_t end = y ? y->size : 0;
    if (!x) return true; /* check_sections: then the compact image has none either */
    if (end > x->size)
        return differ(k, "bank 4: %llu bytes against NVRTC's %llu", (unsigned long long)end,
                      (unsigned long long)x->size);
    if (y && x->data && y->data && memcmp(x->data, y->data, end) != 0)
        return differ(k, "bank 4: other bytes before its end");
    if (y && (x->data == NULL) != (y->data == NULL)) return differ(k, "bank 4: one image has no bytes");
    reloc *rx = NULL, *ry = NULL;
    size_t nx = 0, ny = 0, j = 0;
    bool ok = relocs_of(k, &k->a, BANK4, &rx, &nx) && relocs_of(k, &k->c, BANK4, &ry, &ny);
    for (size_t i = 0; ok && i < nx; i++) {
        if (rx[i].offset < end) {
            if (j >= ny || !same_slot(k, &rx[i], &ry[j++]))
                ok = differ(k, "bank 4: slot %llu holds another address", (unsigned long long)rx[i].offset);
        } else if (rx[i].symbol.section || !unreferenced(k, rx[i].symbol.name)) {
            ok = differ(k, "bank 4: slot %llu (%s) is past the compact bank's end, and the PTX mentions it",
                        (unsigned long long)rx[i].offset, rx[i].symbol.name);
        }
    }
    if (ok && j != ny) ok = differ(k, "bank 4: the compact image has %zu slots NVRTC's has not", ny - j);
    free(rx);
    free(ry);
    return ok;
}

bool asyncrt__image_equal(const void *nvrtc, size_t nvrtc_size, const void *compact, size_t compact_size,
                          const char *const *unreferenced_names, const char *const *placeholders,
                          size_t unreferenced_count, char *why, size_t why_size)
{
    cmp k = {.unref = unreferenced_names,
             .placeholders = placeholders,
             .unref_count = unreferenced_count,
             .why = why,
             .why_size = why_size};
    char what[256];
    if (why_size) why[0] = '\0';
    for (size_t i = 1; i < unreferenced_count; i++)
        if (strcmp(unreferenced_names[i - 1], unreferenced_names[i]) >= 0)
            return differ(&k, "the prune's list is not sorted");
    if (!index_renames(&k)) {
        free(k.renames);
        return false;
    }
    if (!asyncrt__elf_read(nvrtc, nvrtc_size, &k.a, what, sizeof what)) {
        free(k.renames);
        return differ(&k, "NVRTC's image: %s", what);
    }
    if (!asyncrt__elf_read(compact, compact_size, &k.c, what, sizeof what)) {
        asyncrt__elf_free(&k.a);
        free(k.renames);
        return differ(&k, "the compact image: %s", what);
    }
    symbol_index ia = {0}, ic = {0};
    const uint8_t *ha = nvrtc, *hc = compact;
    bool ok = build_index(&k.a, &ia) && build_index(&k.c, &ic);
    if (!ok) differ(&k, "out of memory");
    /* The ELF header: identity, type, machine, version, entry; e_flags hold the arch. */
    else if (memcmp(ha, hc, 0x20) != 0 || memcmp(ha + 0x30, hc + 0x30, 6) != 0)
        ok = differ(&k, "the ELF headers differ (arch, type or version)");
    ok = ok && check_sections(&k) && check_symbols(&k, &ia, &ic) && check_info(&k) && check_relocations(&k) &&
         check_bank4(&k);
    free(ia.order);
    free(ic.order);
    asyncrt__elf_free(&k.a);
    asyncrt__elf_free(&k.c);
    free(k.renames);
    return ok;
}
