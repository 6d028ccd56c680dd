/* A CUBIN's ELF (64-bit, little-endian), read within its bounds for
 * image_equal.c: sections by name, and symbols with their names (a section
 * symbol is named by its section). The image is borrowed, not copied. */
#ifndef ASYNCRT_IMAGE_ELF_H
#define ASYNCRT_IMAGE_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    ASYNCRT_SHT_SYMTAB = 2,
    ASYNCRT_SHT_STRTAB = 3,
    ASYNCRT_SHT_RELA = 4,
    ASYNCRT_SHT_NOBITS = 8,
    ASYNCRT_SHT_REL = 9,
    ASYNCRT_SHF_INFO_LINK = 0x40,
    ASYNCRT_STT_OBJECT = 1,
    ASYNCRT_STT_SECTION = 3
};

typedef struct asyncrt_elf_section {
    const char *name;
    uint32_t type, link, info;
    uint64_t flags, size, align, entsize;
    const uint8_t *data; /* NULL for NOBITS */
} asyncrt_elf_section;

typedef struct asyncrt_elf_symbol {
    const char *name; /* a section symbol's: its section's name */
    uint8_t info, other;
    uint16_t shndx; /* a section index, or SHN_UNDEF (0), SHN_ABS, SHN_COMMON */
    uint64_t value, size;
} asyncrt_elf_symbol;

typedef struct asyncrt_elf_segment {
    uint32_t type, flags;
    uint64_t offset, filesz, memsz, align;
} asyncrt_elf_segment;

typedef struct asyncrt_elf {
    const uint8_t *image;
    size_t size;
    asyncrt_elf_segment *segments; /* the program headers, each inside the image */
    size_t segment_count;
    asyncrt_elf_section *sections;
    size_t section_count;
    asyncrt_elf_symbol *symbols;
    size_t symbol_count;
} asyncrt_elf;

/* false (with why) where the image is no ELF64 LE CUBIN with one symbol
 * table, or anything it names (sections, symbols, program headers and
 * their segments) lies out of bounds; *e is then empty. */
bool asyncrt__elf_read(const void *image, size_t size, asyncrt_elf *e, char *why, size_t why_size);
void asyncrt__elf_free(asyncrt_elf *e);

/* The section named `name`, or NULL (section names are unique: checked). */
const asyncrt_elf_section *asyncrt__elf_section(const asyncrt_elf *e, const char *name);
/* The name of section `index`, or NULL when out of range. */
const char *asyncrt__elf_section_name(const asyncrt_elf *e, uint64_t index);

/* Little-endian reads. */
uint64_t asyncrt__elf_u(const uint8_t *p, int bytes);

#endif
