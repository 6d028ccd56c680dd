/* .npy reading and writing. The header is a Python dict literal; only the
 * three keys NumPy writes are understood, and anything else is refused with
 * a message rather than guessed at. */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool_format.h"

#define MAX_ELEMENTS (UINT64_C(1) << 48)

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_space(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static bool take(cursor *c, char ch)
{
    skip_space(c);
    if (c->p >= c->end || *c->p != ch) return false;
    c->p++;
    return true;
}

/* A quoted string without escapes (NumPy never writes any); copied to out. */
static bool take_string(cursor *c, char *out, size_t size)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != quote) {
        if (n + 1 >= size || *c->p == '\\') return false;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return false;
    c->p++;
    out[n] = '\0';
    return true;
}

static bool take_word(cursor *c, const char *word)
{
    skip_space(c);
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return false;
    c->p += n;
    return true;
}

static bool take_shape(cursor *c, run_npy *out, char *err, size_t err_size)
{
    if (!take(c, '(')) return tool_refuse(err, err_size, "'shape' is not a tuple");
    out->rank = 0;
    out->count = 1;
    for (;;) {
        if (take(c, ')')) return true;
        skip_space(c);
        uint64_t v = 0;
        const char *start = c->p;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v > MAX_ELEMENTS) break;
            v = v * 10 + (uint64_t)(*c->p++ - '0');
        }
        if (c->p == start) return tool_refuse(err, err_size, "'shape' holds something other than integers");
        if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 longs */
        if (out->rank == RUN_NPY_MAX_RANK)
            return tool_refuse(err, err_size, "rank above %d is not supported", RUN_NPY_MAX_RANK);
        if (v > MAX_ELEMENTS || (v && out->count > MAX_ELEMENTS / v))
            return tool_refuse(err, err_size, "the array is too large (more than 2^48 elements)");
        out->shape[out->rank++] = v;
        out->count *= v;
        if (!take(c, ',') && !(skip_space(c), c->p < c->end && *c->p == ')'))
            return tool_refuse(err, err_size, "'shape' is malformed");
    }
}

/* The process's umask, for the permissions of files it writes. */
static mode_t current_umask(void)
{
    mode_t m = umask(0);
    umask(m);
    return m;
}

static bool parse_descr(const char *d, run_dtype *out, char *err, size_t err_size)
{
    static const struct {
        const char *code;
        run_dtype type;
    } codes[] = {{"i1", RUN_I8},  {"i2", RUN_I16}, {"i4", RUN_I32}, {"i8", RUN_I64},
                 {"u1", RUN_U8},  {"u2", RUN_U16}, {"u4", RUN_U32}, {"u8", RUN_U64},
                 {"b1", RUN_U8},  {"f2", RUN_F16}, {"f4", RUN_F32}, {"f8", RUN_F64}};
    char order = d[0];
    const char *code = (order == '<' || order == '>' || order == '|' || order == '=') ? d + 1 : d;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        if (strcmp(code, codes[i].code)) continue;
        if (order == '>' && code[1] != '1')
            return tool_refuse(err, err_size, "dtype '%s' is big-endian: save it little-endian ('<%s')", d, code);
        *out = codes[i].type;
        return true;
    }
    snprintf(err, err_size, "dtype '%s' is not supported: use one of i1 i2 i4 i8 u1 u2 u4 u8 b1 f2 f4 f8 "
                            "(save bfloat16 data as float32)", d);
    return false;
}

bool run_npy_parse(const void *bytes, size_t size, run_npy *out, char *err, size_t err_size)
{
    const unsigned char *b = bytes;
    memset(out, 0, sizeof *out);
    if (size < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return tool_refuse(err, err_size, "not a .npy file (no \\x93NUMPY magic)");
    size_t header_len, start;
    if (b[6] == 1) {
        header_len = (size_t)b[8] | (size_t)b[9] << 8;
        start = 10;
    } else if (b[6] == 2 || b[6] == 3) {
        if (size < 12) return tool_refuse(err, err_size, "truncated header");
        header_len = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        start = 12;
    } else {
        return tool_refuse(err, err_size, "unknown .npy format version %d.%d", b[6], b[7]);
    }
    if (header_len > size - start)
        return tool_refuse(err, err_size, "truncated header: %zu bytes announced, %zu present", header_len,
                        size - start);
    cursor c = {(const char *)b + start, (const char *)b + start + header_len};
    char key[32], descr[32] = "";
    bool have_descr = false, have_order = false, have_shape = false, fortran = false;
    if (!take(&c, '{')) return tool_refuse(err, err_size, "header is not a dict");
    while (!take(&c, '}')) {
        if (!take_string(&c, key, sizeof key) || !take(&c, ':'))
            return tool_refuse(err, err_size, "header dict is malformed");
        if (!strcmp(key, "descr")) {
            if (!take_string(&c, descr, sizeof descr))
                return tool_refuse(err, err_size, "'descr' is not a simple type string (structured arrays are not supported)");
            have_descr = true;
        } else if (!strcmp(key, "fortran_order")) {
            if (take_word(&c, "True")) fortran = true;
            else if (!take_word(&c, "False")) return tool_refuse(err, err_size, "'fortran_order' is not True or False");
            have_order = true;
        } else if (!strcmp(key, "shape")) {
            if (!take_shape(&c, out, err, err_size)) return false;
            have_shape = true;
        } else {
            return tool_refuse(err, err_size, "unknown header key '%s'", key);
        }
        if (!take(&c, ',') && !(skip_space(&c), c.p < c.end && *c.p == '}'))
            return tool_refuse(err, err_size, "header dict is malformed");
    }
    /* NumPy pads the header with spaces and ends it with '\n'; anything else
     * after the dict is not a header it wrote. */
    for (; c.p < c.end; c.p++)
        if (*c.p != ' ' && *c.p != '\n' && *c.p != '\r' && *c.p != '\t' && *c.p != '\0')
            return tool_refuse(err, err_size, "junk after the header dict: '%.*s'", (int)(c.end - c.p < 40 ? c.end - c.p : 40),
                            c.p);
    if (!have_descr || !have_order || !have_shape)
        return tool_refuse(err, err_size, "header lacks '%s'", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    if (fortran)
        return tool_refuse(err, err_size, "the array is in Fortran (column-major) order: save it in C order "
                                       "(numpy.ascontiguousarray)");
    if (!parse_descr(descr, &out->dtype, err, err_size)) return false;
    size_t offset = start + header_len, want = (size_t)out->count * run_dtype_size(out->dtype);
    if (size - offset < want)
        return tool_refuse(err, err_size, "truncated data: shape needs %zu bytes, the file holds %zu", want,
                        size - offset);
    if (size - offset > want)
        return tool_refuse(err, err_size, "%zu bytes follow the data the shape describes", size - offset - want);
    out->data = b + offset;
    return true;
}

uint64_t run_npy_max_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    return phys && phys < RUN_NPY_MAX_BYTES ? phys : RUN_NPY_MAX_BYTES;
}

bool run_npy_read(const char *path, run_npy *out, void **storage, char *err, size_t err_size)
{
    *storage = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return tool_refuse(err, err_size, "%s: %s", path, strerror(errno));
    /* Only regular files, and only what fits: /dev/zero or a FIFO would be
     * read until memory runs out. */
    struct stat st;
    uint64_t limit = run_npy_max_bytes();
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return tool_refuse(err, err_size, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > limit) {
        fclose(f);
        return tool_refuse(err, err_size, "%s: %llu bytes is more than the %llu-byte limit for .npy inputs", path,
                        (unsigned long long)st.st_size, (unsigned long long)limit);
    }
    size_t size = (size_t)st.st_size;
    char *data = malloc(size ? size : 1);
    size_t got = data ? fread(data, 1, size, f) : 0;
    bool failed = ferror(f) || got != size || fgetc(f) != EOF; /* the file changed under us */
    fclose(f);
    if (!data) return tool_refuse(err, err_size, "%s: out of memory", path);
    if (failed) {
        free(data);
        return tool_refuse(err, err_size, "%s: read error (or the file changed while it was read)", path);
    }
    char why[512];
    if (!run_npy_parse(data, size, out, why, sizeof why)) {
        free(data);
        return tool_refuse(err, err_size, "%s: %s", path, why);
    }
    *storage = data;
    return true;
}

static const char *descr_of(run_dtype t)
{
    static const char *d[RUN_DTYPE_COUNT] = {"|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8",
                                             "<f2", NULL, "<f4", "<f8"};
    return t < RUN_DTYPE_COUNT ? d[t] : NULL;
}

size_t run_npy_header(run_dtype dtype, const uint64_t *shape, int rank, char *buf, size_t size)
{
    const char *descr = descr_of(dtype);
    char dict[512];
    if (!descr || rank < 0 || rank > RUN_NPY_MAX_RANK || size < 64) return 0;
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < rank; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%llu%s", (unsigned long long)shape[i],
                      rank == 1 || i + 1 < rank ? ", " : "");
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64; /* padded with spaces, ends in '\n' */
    if (total > size || total - 10 > 0xffff) return 0;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)((total - 10) & 0xff);
    buf[9] = (char)((total - 10) >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
    buf[total - 1] = '\n';
    return total;
}

bool run_npy_write(const char *path, run_dtype dtype, const uint64_t *shape, int rank,
                   const void *data, char *err, size_t err_size)
{
    char header[1024];
    size_t len = run_npy_header(dtype, shape, rank, header, sizeof header);
    if (!len) return tool_refuse(err, err_size, "%s: cannot describe a %s array of rank %d in .npy", path,
                              run_dtype_name(dtype), rank);
    uint64_t count = 1;
    for (int i = 0; i < rank; i++) count *= shape[i];
    /* Written to a temporary file in the same directory and renamed over the
     * target, so a failed or interrupted write never leaves half a file. */
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) return tool_refuse(err, err_size, "%s: out of memory", path);
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, err_size, "%s: cannot create a temporary file next to it: %s", path, strerror(errno));
        free(tmp);
        return false;
    }
    fchmod(fd, 0644 & ~current_umask());
    FILE *f = fdopen(fd, "wb");
    size_t bytes = (size_t)count * run_dtype_size(dtype);
    bool ok = f && fwrite(header, 1, len, f) == len && fwrite(data, 1, bytes, f) == bytes;
    int saved = errno;
    if (f) ok = (fclose(f) == 0) && ok;
    else close(fd);
    if (ok && rename(tmp, path) != 0) ok = false, saved = errno;
    if (!ok) {
        unlink(tmp);
        snprintf(err, err_size, "%s: write failed: %s", path, strerror(saved ? saved : errno));
    }
    free(tmp);
    return ok;
}
