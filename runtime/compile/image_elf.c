/* image_elf.h: a bounded ELF64 reader. */
#include "image_elf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact_why.h"

#define SHN_LORESERVE 0xff00u
#define SHN_ABS       0xfff1u
#define SHN_COMMON    0xfff2u

uint64_t asyncrt__elf_u(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* A NUL-terminated name at `at` of a string table, or NULL. */
static const char *string_at(const asyncrt_elf_section *table, uint64_t at)
{
    if (!table->data || at >= table->size || !memchr(table->data + at, '\0', table->size - at)) return NULL;
    return (const char *)table->data + at;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const asyncrt_elf_section *)a)->name, ((const asyncrt_elf_section *)b)->name);
}

static bool unique_names(const asyncrt_elf *e)
{
    asyncrt_elf_section *copy = malloc((e->section_count + 1) * sizeof *copy);
    if (!copy) return false;
    memcpy(copy, e->sections, e->section_count * sizeof *copy);
    qsort(copy, e->section_count, sizeof *copy, by_name);
    bool ok = true;
    for (size_t i = 1; ok && i < e->section_count; i++) ok = strcmp(copy[i - 1].name, copy[i].name) != 0;
    free(copy);
    return ok;
}

static bool read_sections(asyncrt_elf *e, char *why, size_t why_size)
{
    const uint8_t *d = e->image;
    uint64_t shoff = asyncrt__elf_u(d + 0x28, 8);
    uint32_t shentsize = (uint32_t)asyncrt__elf_u(d + 0x3a, 2), shnum = (uint32_t)asyncrt__elf_u(d + 0x3c, 2),
             shstrndx = (uint32_t)asyncrt__elf_u(d + 0x3e, 2);
    if (shentsize != 64 || shnum == 0 || shnum >= SHN_LORESERVE || shstrndx >= shnum || shoff > e->size ||
        shnum > (e->size - shoff) / 64)
        return asyncrt__why(why, why_size, "its section table is out of bounds");
    uint64_t *names = calloc(shnum, sizeof *names);
    if (!names || !(e->sections = calloc(shnum, sizeof *e->sections))) {
        free(names);
        return asyncrt__why(why, why_size, "out of memory");
    }
    e->section_count = shnum;
    for (uint32_t i = 0; i < shnum; i++) {
        const uint8_t *h = d + shoff + 64 * (uint64_t)i;
        asyncrt_elf_section *s = &e->sections[i];
        names[i] = asyncrt__elf_u(h, 4);
        s->type = (uint32_t)asyncrt__elf_u(h + 4, 4);
        s->flags = asyncrt__elf_u(h + 8, 8);
        uint64_t offset = asyncrt__elf_u(h + 0x18, 8);
        s->size = asyncrt__elf_u(h + 0x20, 8);
        s->link = (uint32_t)asyncrt__elf_u(h + 0x28, 4);
        s->info = (uint32_t)asyncrt__elf_u(h + 0x2c, 4);
        s->align = asyncrt__elf_u(h + 0x30, 8);
        s->entsize = asyncrt__elf_u(h + 0x38, 8);
        if (s->type != ASYNCRT_SHT_NOBITS && i != 0) {
            if (offset > e->size || s->size > e->size - offset) {
                free(names);
                return asyncrt__why(why, why_size, "section %u is out of bounds", i);
            }
            s->data = d + offset;
        }
    }
    const asyncrt_elf_section *strings = &e->sections[shstrndx];
    uint32_t unnamed = shnum;
    for (uint32_t i = 0; i < shnum && unnamed == shnum; i++)
        if (!(e->sections[i].name = string_at(strings, names[i]))) unnamed = i;
    free(names);
    if (unnamed < shnum) return asyncrt__why(why, why_size, "section %u has no name in bounds", unnamed);
    if (!unique_names(e)) return asyncrt__why(why, why_size, "two sections share a name (or out of memory)");
    return true;
}

static bool read_symbols(asyncrt_elf *e, char *why, size_t why_size)
{
    const asyncrt_elf_section *symtab = NULL;
    for (size_t i = 0; i < e->section_count; i++)
        if (e->sections[i].type == ASYNCRT_SHT_SYMTAB) {
            if (symtab) return asyncrt__why(why, why_size, "two symbol tables");
            symtab = &e->sections[i];
        }
    if (!symtab || !symtab->data || symtab->entsize != 24 || symtab->size % 24 || symtab->link >= e->section_count ||
        e->sections[symtab->link].type != ASYNCRT_SHT_STRTAB)
        return asyncrt__why(why, why_size, "no symbol table this reader understands");
    const asyncrt_elf_section *strings = &e->sections[symtab->link];
    e->symbol_count = symtab->size / 24;
    if (!(e->symbols = calloc(e->symbol_count + 1, sizeof *e->symbols)))
        return asyncrt__why(why, why_size, "out of memory");
    for (size_t i = 0; i < e->symbol_count; i++) {
        const uint8_t *p = symtab->data + 24 * i;
        asyncrt_elf_symbol *y = &e->symbols[i];
        y->info = p[4];
        y->other = p[5];
        y->shndx = (uint16_t)asyncrt__elf_u(p + 6, 2);
        y->value = asyncrt__elf_u(p + 8, 8);
        y->size = asyncrt__elf_u(p + 16, 8);
        if (y->shndx >= e->section_count && y->shndx != SHN_ABS && y->shndx != SHN_COMMON)
            return asyncrt__why(why, why_size, "symbol %zu is in section %u, which does not exist", i, y->shndx);
        if ((y->info & 0xf) == ASYNCRT_STT_SECTION)
            y->name = e->sections[y->shndx < e->section_count ? y->shndx : 0].name;
        else if (!(y->name = string_at(strings, asyncrt__elf_u(p, 4))))
            return asyncrt__why(why, why_size, "symbol %zu has no name in bounds", i);
    }
    return true;
}

static bool read_segments(asyncrt_elf *e, char *why, size_t why_size)
{
    const uint8_t *d = e->image;
    uint64_t phoff = asyncrt__elf_u(d + 0x20, 8);
    uint32_t phentsize = (uint32_t)asyncrt__elf_u(d + 0x36, 2), phnum = (uint32_t)asyncrt__elf_u(d + 0x38, 2);
    if (phnum == 0) return true;
    if (phentsize != 56 || phoff > e->size || phnum > (e->size - phoff) / 56)
        return asyncrt__why(why, why_size, "its program headers are out of bounds");
    if (!(e->segments = calloc(phnum, sizeof *e->segments))) return asyncrt__why(why, why_size, "out of memory");
    e->segment_count = phnum;
    for (uint32_t i = 0; i < phnum; i++) {
        const uint8_t *h = d + phoff + 56 * (uint64_t)i;
        asyncrt_elf_segment *g = &e->segments[i];
        g->type = (uint32_t)asyncrt__elf_u(h, 4);
        g->flags = (uint32_t)asyncrt__elf_u(h + 4, 4);
        g->offset = asyncrt__elf_u(h + 8, 8);
        g->filesz = asyncrt__elf_u(h + 0x20, 8);
        g->memsz = asyncrt__elf_u(h + 0x28, 8);
        g->align = asyncrt__elf_u(h + 0x30, 8);
        if (g->offset > e->size || g->filesz > e->size - g->offset)
            return asyncrt__why(why, why_size, "segment %u is out of bounds", i);
    }
    return true;
}

bool asyncrt__elf_read(const void *image, size_t size, asyncrt_elf *e, char *why, size_t why_size)
{
    memset(e, 0, sizeof *e);
    e->image = image;
    e->size = size;
    const uint8_t *d = image;
    bool ok = image && size >= 64 &&
              memcmp(d,
                     "\x7f"
                     "ELF",
                     4) == 0 &&
              d[4] == 2 && d[5] == 1;
    if (!ok) asyncrt__why(why, why_size, "not a 64-bit little-endian ELF");
    ok = ok && read_sections(e, why, why_size) && read_symbols(e, why, why_size) && read_segments(e, why, why_size);
    if (!ok) asyncrt__elf_free(e); /* *e is empty after a refusal */
    return ok;
}

void asyncrt__elf_free(asyncrt_elf *e)
{
    free(e->sections);
    free(e->symbols);
    free(e->segments);
    e->sections = NULL;
    e->symbols = NULL;
    e->segments = NULL;
    e->section_count = e->symbol_count = e->segment_count = 0;
}

const asyncrt_elf_section *asyncrt__elf_section(const asyncrt_elf *e, const char *name)
{
    for (size_t i = 0; i < e->section_count; i++)
        if (strcmp(e->sections[i].name, name) == 0) return &e->sections[i];
    return NULL;
}

const char *asyncrt__elf_section_name(const asyncrt_elf *e, uint64_t index)
{
    return index < e->section_count ? e->sections[index].name : NULL;
}
