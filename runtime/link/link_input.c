#include "link_input.h"

#include <stdint.h>
#include <stdio.h>
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

static bool object_fatbin(const unsigned char *d, size_t size, const unsigned char **fatbin, size_t *fatbin_size);
static void add_member_archs(const char *name, const void *member, size_t member_size, void *arg);
typedef struct arch_union {
    int *archs;
    size_t n, cap;
} arch_union;

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
    } else if (kind == ASYNCRT_JIT_OBJECT) {
        const unsigned char *fatbin;
        size_t fatbin_size;
        if (object_fatbin(d, size, &fatbin, &fatbin_size))
            n = asyncrt__link_archs(ASYNCRT_JIT_FATBIN, fatbin, fatbin_size, archs, cap);
    } else if (kind == ASYNCRT_JIT_LIBRARY) {
        arch_union u = {archs, 0, cap};
        asyncrt__link_members(data, size, add_member_archs, &u);
        n = u.n;
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

/* The device code a host object carries: its __nv_relfatbin (-rdc) or
 * .nv_fatbin section, a fatbin; false when it has none in bounds. */
static bool object_fatbin(const unsigned char *d, size_t size, const unsigned char **fatbin, size_t *fatbin_size)
{
    if (!is_elf64(d, size)) return false;
    uint64_t shoff = rd(d + 0x28, 8), shentsize = rd(d + 0x3a, 2), shnum = rd(d + 0x3c, 2), shstrndx = rd(d + 0x3e, 2);
    if (shentsize != 64 || shoff > size || shnum > (size - shoff) / 64 || shstrndx >= shnum) return false;
    const unsigned char *strh = d + shoff + 64 * shstrndx;
    uint64_t stroff = rd(strh + 0x18, 8), strsize = rd(strh + 0x20, 8);
    if (stroff > size || strsize > size - stroff) return false;
    for (uint64_t i = 0; i < shnum; i++) {
        const unsigned char *h = d + shoff + 64 * i;
        uint64_t name = rd(h, 4), off = rd(h + 0x18, 8), bytes = rd(h + 0x20, 8);
        const char *n = (const char *)d + stroff + name;
        size_t room = name < strsize ? (size_t)(strsize - name) : 0;
        bool wanted = (room > 14 && memcmp(n, "__nv_relfatbin", 15) == 0) || (room > 10 && memcmp(n, ".nv_fatbin", 11) == 0);
        if (!wanted || off > size || bytes > size - off) continue;
        *fatbin = d + off;
        *fatbin_size = (size_t)bytes;
        return true;
    }
    return false;
}

bool asyncrt__link_members(const void *data, size_t size,
                           void (*each)(const char *name, const void *member, size_t member_size, void *arg), void *arg)
{
    const unsigned char *d = data;
    if (size < 8 || memcmp(d, "!<arch>\n", 8) != 0) return false;
    const unsigned char *names = NULL; /* GNU's "//" member: long names, each ending "/\n" */
    size_t names_size = 0;
    for (size_t off = 8; off + 60 <= size;) {
        const unsigned char *h = d + off;
        if (h[58] != '`' || h[59] != '\n') return false;
        uint64_t bytes = 0;
        for (int i = 48; i < 58 && h[i] >= '0' && h[i] <= '9'; i++) bytes = bytes * 10 + (uint64_t)(h[i] - '0');
        if (bytes > size - off - 60) return false;
        const unsigned char *body = h + 60;
        char name[256];
        size_t len = 0;
        if (h[0] == '/' && h[1] == '/') {
            names = body, names_size = (size_t)bytes;
        } else if (h[0] == '/' && h[1] >= '0' && h[1] <= '9') { /* "/123": at 123 in the long names */
            uint64_t at = 0;
            for (int i = 1; i < 16 && h[i] >= '0' && h[i] <= '9'; i++) at = at * 10 + (uint64_t)(h[i] - '0');
            while (names && at + len < names_size && names[at + len] != '/' && names[at + len] != '\n' &&
                   len < sizeof name - 1)
                name[len] = (char)names[at + len], len++;
        } else if (h[0] != '/') { /* "name/" (GNU) or "name   " (BSD without #1/) */
            while (len < 16 && h[len] != '/' && h[len] != ' ') name[len] = (char)h[len], len++;
        }
        name[len] = '\0';
        if (len) each(name, body, (size_t)bytes, arg);
        off += 60 + (size_t)bytes + (bytes & 1);
    }
    return true;
}

static void add_member_archs(const char *name, const void *member, size_t member_size, void *arg)
{
    (void)name;
    arch_union *u = arg;
    int found[32], kind = asyncrt__link_sniff(member, member_size);
    /* a library in a library is not read: nesting must not recurse without bound */
    size_t n = kind == ASYNCRT_JIT_LIBRARY ? 0 : asyncrt__link_archs(kind, member, member_size, found, 32);
    for (size_t i = 0; i < n && u->n < u->cap; i++) {
        bool seen = false;
        for (size_t j = 0; j < u->n; j++) seen |= u->archs[j] == found[i];
        if (!seen) u->archs[u->n++] = found[i];
    }
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

typedef struct member_text {
    char *out;
    size_t size, used;
} member_text;

static void describe_member(const char *name, const void *member, size_t member_size, void *arg)
{
    member_text *t = arg;
    int archs[32], kind = asyncrt__link_sniff(member, member_size);
    size_t n = kind == ASYNCRT_JIT_LIBRARY ? 0 : asyncrt__link_archs(kind, member, member_size, archs, 32);
    for (size_t i = 0; i < n && t->used < t->size; i++)
        t->used += (size_t)snprintf(t->out + t->used, t->size - t->used, "%s%s%ssm_%d", t->used && !i ? "; " : "",
                                    i ? ", " : name, i ? "" : " ", archs[i]);
}

void asyncrt__link_describe_members(const void *data, size_t size, char *out, size_t out_size)
{
    if (!out_size) return;
    out[0] = '\0';
    member_text t = {out, out_size, 0};
    asyncrt__link_members(data, size, describe_member, &t);
}

const char *asyncrt__link_kind_name(int kind)
{
    static const char *const names[] = {"unknown", "CUBIN", "PTX", "LTO-IR", "fatbin", "host object", "library"};
    return kind >= 0 && kind <= ASYNCRT_JIT_LIBRARY ? names[kind] : "unknown";
}
