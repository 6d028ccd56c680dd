#include "link_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "link_jit.h"

static uint64_t rd(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

enum { EM_CUDA = 190, FATBIN_MAGIC = 0xBA55ED50u, LTOIR_MAGIC = 0x7F4E43EDu };

static bool is_elf64(const unsigned char *d, size_t size)
{
    return size >= 64 && memcmp(d, "\x7f" "ELF", 4) == 0 && d[4] == 2 && d[5] == 1;
}

int asyncrt__link_sniff(const void *data, size_t size)
{
    const unsigned char *d = data;
    if (is_elf64(d, size)) return rd(d + 18, 2) == EM_CUDA ? ASYNCRT_JIT_CUBIN : ASYNCRT_JIT_OBJECT;
    if (size >= 8 && memcmp(d, "!<arch>\n", 8) == 0) return ASYNCRT_JIT_LIBRARY;
    if (size >= 16 && rd(d, 4) == FATBIN_MAGIC) return ASYNCRT_JIT_FATBIN;
    if (size >= 4 && rd(d, 4) == LTOIR_MAGIC) return ASYNCRT_JIT_LTOIR;
    /* PTX: text whose first directive is .version (comments may come first). */
    const char *t = data, *end = t + size;
    while (t < end) {
        while (t < end && (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r')) t++;
        if (end - t >= 2 && t[0] == '/' && t[1] == '/') {
            while (t < end && *t != '\n') t++;
            continue;
        }
        return end - t >= 8 && memcmp(t, ".version", 8) == 0 ? ASYNCRT_JIT_PTX : 0;
    }
    return 0;
}

/* The number after ".target sm_" or "compute_" in PTX, 0 if none. */
static int ptx_target(const char *t, size_t size)
{
    const char *end = t + size;
    for (const char *p = t; p + 8 < end; p++) {
        if (memcmp(p, ".target ", 8) != 0) continue;
        p += 8;
        while (p < end && *p == ' ') p++;
        if (end - p > 3 && memcmp(p, "sm_", 3) == 0) p += 3;
        else if (end - p > 8 && memcmp(p, "compute_", 8) == 0) p += 8;
        else return 0;
        int n = 0;
        while (p < end && *p >= '0' && *p <= '9' && n < 10000) n = n * 10 + (*p++ - '0');
        return n;
    }
    return 0;
}

size_t asyncrt__link_archs(int kind, const void *data, size_t size, int *archs, size_t cap)
{
    const unsigned char *d = data;
    size_t n = 0;
    if (kind == ASYNCRT_JIT_CUBIN && is_elf64(d, size) && cap) {
        /* e_flags: the SM in bits 8-15 since ELF ABI version 8 (CUDA 12.8), bits 0-7 before */
        uint64_t flags = rd(d + 0x30, 4);
        int sm = d[8] >= 8 ? (int)(flags >> 8 & 0xff) : (int)(flags & 0xff);
        if (sm) archs[n++] = sm;
    } else if (kind == ASYNCRT_JIT_PTX && cap) {
        int sm = ptx_target(data, size);
        if (sm) archs[n++] = sm;
    } else if (kind == ASYNCRT_JIT_FATBIN && size >= 16) {
        /* header: magic u32, version u16, header size u16, payload size u64; then entries
         * of kind u16, u16, header size u32, payload size u64, ..., the arch u32 at 28 */
        uint64_t off = rd(d + 6, 2), end = off + rd(d + 8, 8);
        if (end > size) end = size;
        while (off + 32 <= end && n < cap) {
            uint64_t header = rd(d + off + 4, 4), payload = rd(d + off + 8, 8);
            int sm = (int)rd(d + off + 28, 4);
            bool seen = false;
            for (size_t i = 0; i < n; i++) seen |= archs[i] == sm;
            if (sm && !seen) archs[n++] = sm;
            if (header < 32 || payload > end || header + payload > end - off) break;
            off += header + payload;
        }
    }
    return n;
}

bool asyncrt__link_relocatable(const void *data, size_t size)
{
    return is_elf64(data, size) && rd((const unsigned char *)data + 16, 2) == 1; /* e_type ET_REL */
}

bool asyncrt__link_symbols(const void *data, size_t size, void (*each)(const char *name, bool shared, void *arg),
                           void *arg)
{
    const unsigned char *d = data;
    if (!is_elf64(d, size)) return false;
    uint64_t shoff = rd(d + 0x28, 8), shentsize = rd(d + 0x3a, 2), shnum = rd(d + 0x3c, 2);
    if (shentsize != 64 || shoff > size || shnum > (size - shoff) / 64) return false;
    for (uint64_t i = 0; i < shnum; i++) {
        const unsigned char *h = d + shoff + 64 * i;
        if (rd(h + 4, 4) != 2) continue; /* SHT_SYMTAB */
        uint64_t off = rd(h + 0x18, 8), bytes = rd(h + 0x20, 8), link = rd(h + 0x28, 4);
        if (off > size || bytes > size - off || link >= shnum) return false;
        const unsigned char *strh = d + shoff + 64 * link;
        uint64_t stroff = rd(strh + 0x18, 8), strsize = rd(strh + 0x20, 8);
        if (stroff > size || strsize > size - stroff || !strsize || d[stroff + strsize - 1]) return false;
        for (uint64_t s = 0; s + 24 <= bytes; s += 24) {
            const unsigned char *sym = d + off + s;
            uint64_t name = rd(sym, 4), info = sym[4], other = sym[5], shndx = rd(sym + 6, 2);
            if (name == 0 || name >= strsize || info >> 4 != 1 /* STB_GLOBAL */) continue;
            bool shared = (info & 0xf) == 13 && (other & 0x40); /* a CUDA object in shared memory (0x20: global) */
            if (shndx == 0 ? shared : shndx < 0xff00) each((const char *)d + stroff + name, shndx == 0, arg);
        }
    }
    return true;
}
