#include "cubin_elf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ELF64 little-endian, as every CUBIN is. */
typedef struct section {
    const char *name;
    uint32_t type;
    uint64_t flags, offset, size, align;
    uint32_t link, info;
} section;

typedef struct elf {
    const uint8_t *data;
    size_t size;
    section *s;
    size_t count;
    const uint8_t *symtab; /* Elf64_Sym[] */
    size_t symbols;
    const char *strtab;
    size_t strtab_size;
} elf;

static uint64_t rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int say(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

static int open_elf(elf *e, const void *image, size_t size, char *why, size_t why_size)
{
    memset(e, 0, sizeof *e);
    const uint8_t *d = image;
    e->data = d;
    e->size = size;
    if (size < 64 || memcmp(d, "\x7f" "ELF", 4) != 0 || d[4] != 2 || d[5] != 1)
        return say(why, why_size, "not a 64-bit little-endian ELF (a PTX image?)");
    uint64_t shoff = rd(d + 0x28, 8);
    uint32_t shentsize = (uint32_t)rd(d + 0x3a, 2), shnum = (uint32_t)rd(d + 0x3c, 2), shstrndx = (uint32_t)rd(d + 0x3e, 2);
    if (shentsize != 64 || shoff > size || shnum > (size - shoff) / 64 || shstrndx >= shnum)
        return say(why, why_size, "section table out of bounds");
    if (!(e->s = calloc(shnum, sizeof *e->s))) return say(why, why_size, "out of memory");
    e->count = shnum;
    const uint8_t *strsec = d + shoff + 64 * (uint64_t)shstrndx;
    uint64_t stroff = rd(strsec + 0x18, 8), strsize = rd(strsec + 0x20, 8);
    if (stroff > size || strsize > size - stroff || !strsize || d[stroff + strsize - 1])
        return say(why, why_size, "section names out of bounds");
    for (uint32_t i = 0; i < shnum; i++) {
        const uint8_t *h = d + shoff + 64 * (uint64_t)i;
        section *s = &e->s[i];
        uint32_t name = (uint32_t)rd(h, 4);
        s->name = name < strsize ? (const char *)d + stroff + name : "";
        s->type = (uint32_t)rd(h + 4, 4);
        s->flags = rd(h + 8, 8);
        s->offset = rd(h + 0x18, 8);
        s->size = rd(h + 0x20, 8);
        s->link = (uint32_t)rd(h + 0x28, 4);
        s->info = (uint32_t)rd(h + 0x2c, 4);
        s->align = rd(h + 0x30, 8);
        if (s->type != 8 /* NOBITS */ && (s->offset > size || s->size > size - s->offset))
            return say(why, why_size, "section %s out of bounds", s->name);
        if (s->type == 2 /* SYMTAB */ && s->link < shnum) {
            e->symtab = d + s->offset;
            e->symbols = s->size / 24;
        }
    }
    for (uint32_t i = 0; i < shnum; i++)
        if (e->s[i].type == 2 && e->s[i].link < shnum) {
            const section *st = &e->s[e->s[i].link];
            e->strtab = (const char *)d + st->offset;
            e->strtab_size = st->size;
        }
    if (!e->symtab || !e->strtab) return say(why, why_size, "no symbol table");
    return 0;
}

static const char *symbol_name(const elf *e, uint32_t index)
{
    if (index >= e->symbols) return "?";
    uint32_t name = (uint32_t)rd(e->symtab + 24 * (uint64_t)index, 4);
    return name < e->strtab_size ? e->strtab + name : "?";
}

static const section *find(const elf *e, const char *prefix, const char *kernel)
{
    size_t n = strlen(prefix);
    for (size_t i = 0; i < e->count; i++)
        if (strncmp(e->s[i].name, prefix, n) == 0 && strcmp(e->s[i].name + n, kernel) == 0) return &e->s[i];
    return NULL;
}

/* .nv.info records: format byte, attribute byte, then 2 bytes of value
 * (formats 1-3) or a 2-byte size and that many bytes (format 4). */
typedef void (*record_fn)(void *arg, uint8_t attr, const uint8_t *payload, size_t size, const uint8_t *whole,
                          size_t whole_size);

static void each_record(const uint8_t *p, size_t n, record_fn fn, void *arg)
{
    for (size_t i = 0; i + 4 <= n;) {
        uint8_t format = p[i], attr = p[i + 1];
        size_t size = format == 4 ? (size_t)rd(p + i + 2, 2) : 2;
        const uint8_t *payload = p + i + (format == 4 ? 4 : 2);
        size_t whole = (format == 4 ? 4 : 2) + size;
        if (i + whole > n) return;
        fn(arg, attr, payload, size, p + i, whole);
        i += whole;
    }
}

typedef struct global_info {
    const elf *e;
    asyncrt_cubin_kernel *k;
} global_info;

enum { EIATTR_PARAM_CBANK = 0x0a, EIATTR_FRAME_SIZE = 0x11, EIATTR_MIN_STACK_SIZE = 0x12,
       EIATTR_MAX_STACK_SIZE = 0x23, EIATTR_REGCOUNT = 0x2f };

static void global_record(void *arg, uint8_t attr, const uint8_t *payload, size_t size, const uint8_t *whole,
                          size_t whole_size)
{
    (void)whole, (void)whole_size;
    global_info *g = arg;
    if (size < 8 || strcmp(symbol_name(g->e, (uint32_t)rd(payload, 4)), g->k->name) != 0) return;
    uint32_t v = (uint32_t)rd(payload + 4, 4);
    if (attr == EIATTR_REGCOUNT) g->k->regs = v;
    if (attr == EIATTR_FRAME_SIZE) g->k->frame = v;
    if (attr == EIATTR_MIN_STACK_SIZE) g->k->min_stack = v;
    if (attr == EIATTR_MAX_STACK_SIZE) g->k->max_stack = v;
}

static void kernel_record(void *arg, uint8_t attr, const uint8_t *payload, size_t size, const uint8_t *whole,
                          size_t whole_size)
{
    (void)payload;
    asyncrt_cubin_kernel *k = arg;
    if (k->info_size + whole_size > sizeof k->info) return;
    uint8_t *to = k->info + k->info_size;
    memcpy(to, whole, whole_size);
    /* The parameter bank's section symbol: its index depends on the symbol table. */
    if (attr == EIATTR_PARAM_CBANK && size >= 4) memset(to + 4, 0, 4);
    k->info_size += whole_size;
}

int asyncrt__cubin_kernels(const void *image, size_t size, asyncrt_cubin_kernel *out, size_t cap, char *why,
                           size_t why_size)
{
    elf e;
    if (open_elf(&e, image, size, why, why_size) < 0) {
        free(e.s);
        return -1;
    }
    int count = 0;
    const section *global = find(&e, ".nv.info", "");
    for (size_t i = 0; i < e.count; i++) {
        if (strncmp(e.s[i].name, ".text.", 6) != 0) continue;
        if ((size_t)count++ >= cap) continue;
        asyncrt_cubin_kernel *k = &out[count - 1];
        memset(k, 0, sizeof *k);
        snprintf(k->name, sizeof k->name, "%s", e.s[i].name + 6);
        k->text = e.data + e.s[i].offset;
        k->text_size = e.s[i].size;
        k->text_flags = e.s[i].flags;
        k->text_align = e.s[i].align;
        const section *s = find(&e, ".nv.shared.", k->name);
        if (s) k->shared_size = s->size, k->shared_align = s->align;
        if ((s = find(&e, ".nv.constant0.", k->name))) k->const0_size = s->size;
        if ((s = find(&e, ".nv.info.", k->name))) each_record(e.data + s->offset, s->size, kernel_record, k);
        global_info g = {&e, k};
        if (global) each_record(e.data + global->offset, global->size, global_record, &g);
    }
    free(e.s);
    return count;
}

typedef struct report {
    char *at;
    size_t left;
    int differences;
} report;

static void differ(report *r, const char *fmt, ...)
{
    r->differences++;
    if (r->left <= 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->at, r->left, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t used = (size_t)n < r->left ? (size_t)n : r->left - 1;
    r->at += used;
    r->left -= used;
}

#define CUBIN_MAX_KERNELS 64

/* Kernels are looked up by name: the two images may list them in any order. */
static int compare(const void *a, size_t a_size, const void *b, size_t b_size, asyncrt_cubin_facts facts, report *r,
                   asyncrt_cubin_kernel *ka, asyncrt_cubin_kernel *kb)
{
    char why[256];
    int na = asyncrt__cubin_kernels(a, a_size, ka, CUBIN_MAX_KERNELS, why, sizeof why);
    if (na < 0) return differ(r, "first image: %s\n", why), -1;
    int nb = asyncrt__cubin_kernels(b, b_size, kb, CUBIN_MAX_KERNELS, why, sizeof why);
    if (nb < 0) return differ(r, "second image: %s\n", why), -1;
    if (na > CUBIN_MAX_KERNELS || nb > CUBIN_MAX_KERNELS)
        return differ(r, "more than %d kernels\n", CUBIN_MAX_KERNELS), -1;
    if (na != nb) differ(r, "kernels: %d against %d\n", na, nb);
    for (int i = 0; i < na; i++) {
        const asyncrt_cubin_kernel *x = &ka[i], *y = NULL;
        for (int j = 0; j < nb && !y; j++)
            if (strcmp(kb[j].name, x->name) == 0) y = &kb[j];
        if (!y) {
            differ(r, "%s: only in the first image\n", x->name);
            continue;
        }
#define SAME(field, what)                                                                                   \
    if (x->field != y->field)                                                                               \
        differ(r, "%s: %s %llu against %llu\n", x->name, what, (unsigned long long)x->field,                \
               (unsigned long long)y->field);
        SAME(shared_size, "static shared bytes")
        SAME(shared_align, "shared alignment (where dynamic shared memory starts)")
        SAME(const0_size, "parameter bank bytes")
        if (facts == ASYNCRT_CUBIN_LAYOUT) continue;
        SAME(regs, "registers")
        SAME(frame, "stack frame bytes")
        SAME(min_stack, "min stack bytes")
        SAME(max_stack, "max stack bytes")
#undef SAME
        if (facts == ASYNCRT_CUBIN_RESOURCES) continue;
        if (x->text_size != y->text_size)
            differ(r, "%s: %llu code bytes against %llu\n", x->name, (unsigned long long)x->text_size,
                   (unsigned long long)y->text_size);
        if (x->text_flags != y->text_flags) differ(r, "%s: code section flags differ\n", x->name);
        if (x->text_size == y->text_size && memcmp(x->text, y->text, x->text_size) != 0) {
            size_t at = 0;
            while (x->text[at] == y->text[at]) at++;
            differ(r, "%s: code differs from byte %zu (instruction %zu)\n", x->name, at, at / 16);
        }
        if (x->info_size != y->info_size || memcmp(x->info, y->info, x->info_size) != 0)
            differ(r, "%s: kernel attributes (.nv.info) differ\n", x->name);
    }
    return r->differences;
}

int asyncrt__cubin_compare(const void *a, size_t a_size, const void *b, size_t b_size, asyncrt_cubin_facts facts,
                           char *text, size_t text_size)
{
    report r = {text, text_size, 0};
    if (text_size) text[0] = '\0';
    asyncrt_cubin_kernel *k = malloc(2 * CUBIN_MAX_KERNELS * sizeof *k);
    if (!k) return differ(&r, "out of memory\n"), -1;
    int d = compare(a, a_size, b, b_size, facts, &r, k, k + CUBIN_MAX_KERNELS);
    free(k);
    return d;
}
