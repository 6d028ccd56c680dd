/* asyncrt-run's argument parser: argv in, a run_cli or a message out. No I/O
 * and no GPU, one allocation (the parser's name tables): every malformed
 * input ends in a message. Options that take a value and --tmap keys are
 * dispatched by name from one table each (k_valued, k_tmap_keys). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_internal.h" /* asyncrt__arch_parse: --arch is checked before anything runs */
#include "link_run.h"

typedef struct parser {
    run_cli *cli;
    char *err;
    size_t err_size;
    /* Names referenced before their definitions; resolved at the end. */
    char arg_ref[RUN_MAX_LAUNCHES][RUN_MAX_ITEMS][RUN_NAME_MAX];
    char tmap_buffer[RUN_MAX_ITEMS][RUN_NAME_MAX];
    char out_ref[RUN_MAX_ITEMS][RUN_NAME_MAX];
    char expect_ref[RUN_MAX_ITEMS][RUN_NAME_MAX];
    bool warmup_given, batch_given;
} parser;

static bool fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (p->err_size) vsnprintf(p->err, p->err_size, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- small value parsers ------------------------------------------------ */

/* Never strtoull(..., 0): "010" must be ten, not eight. */
bool run_parse_u64(const char *text, size_t len, uint64_t *out)
{
    int base = 10;
    if (len > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) base = 16, text += 2, len -= 2;
    if (len == 0) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : base == 16 && c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : base == 16 && c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 99u;
        if (d >= (unsigned)base || v > (UINT64_MAX - d) / (uint64_t)base) return false;
        v = v * (uint64_t)base + d;
    }
    *out = v;
    return true;
}

static bool parse_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || *end || errno || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* A comma- (or 'x'-) separated list of 1..max unsigned integers in [lo, hi]. */
static bool parse_list(const char *text, size_t len, const char *seps, uint64_t *out, int max, int *count,
                       uint64_t lo, uint64_t hi)
{
    *count = 0;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < len && !strchr(seps, text[j])) j++;
        uint64_t v;
        if (*count == max || !run_parse_u64(text + i, j - i, &v) || v < lo || v > hi) return false;
        out[(*count)++] = v;
        if (j == len) return true;
        i = j + 1;
    }
}

static bool parse_dim3(parser *p, const char *opt, const char *text, unsigned out[3])
{
    uint64_t v[3] = {1, 1, 1};
    int n;
    if (!parse_list(text, strlen(text), ",", v, 3, &n, 1, UINT32_MAX))
        return fail(p, "%s '%s': expected X[,Y[,Z]] with each a positive integer below 2^32", opt, text);
    for (int i = 0; i < 3; i++) out[i] = (unsigned)(i < n ? v[i] : 1);
    return true;
}

/* Bytes with an optional K/KiB/M/MiB suffix (powers of 1024). */
static bool parse_bytes(const char *text, uint64_t *out, uint64_t max)
{
    size_t len = strlen(text), digits = 0;
    while (digits < len && text[digits] >= '0' && text[digits] <= '9') digits++;
    const char *suffix = text + digits;
    uint64_t scale = 1, v;
    if (!*suffix) scale = 1;
    else if (!strcmp(suffix, "K") || !strcmp(suffix, "k") || !strcmp(suffix, "KiB") || !strcmp(suffix, "KB")) scale = 1024;
    else if (!strcmp(suffix, "M") || !strcmp(suffix, "MiB") || !strcmp(suffix, "MB")) scale = 1024 * 1024;
    else return false;
    if (!run_parse_u64(text, digits, &v) || v > max / scale) return false;
    *out = v * scale;
    return true;
}

static bool valid_name(const char *s, size_t len)
{
    if (len == 0 || len >= RUN_NAME_MAX) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
    }
    return true;
}

static bool take_name(parser *p, const char *what, const char *text, size_t len, char *out)
{
    if (!valid_name(text, len))
        return fail(p, "%s name '%.*s' is not an identifier (letters, digits, '_', at most %d characters)", what,
                    (int)(len < 80 ? len : 80), text, RUN_NAME_MAX - 1);
    memcpy(out, text, len);
    out[len] = '\0';
    return true;
}

/* ---- --buf NAME=DTYPE:SHAPE[:INIT] | NAME=npy:FILE ---------------------- */

static bool parse_init(parser *p, run_buffer_spec *b, const char *spec, const char *init)
{
    const char *eq = strchr(init, '=');
    size_t key = eq ? (size_t)(eq - init) : strlen(init);
    const char *val = eq ? eq + 1 : NULL;
    char why[160];
    if (key == 5 && !strncmp(init, "zeros", 5) && !val) b->init = RUN_INIT_ZEROS;
    else if (key == 6 && !strncmp(init, "poison", 6) && !val) b->init = RUN_INIT_POISON;
    else if (key == 4 && !strncmp(init, "fill", 4) && val) {
        b->init = RUN_INIT_FILL;
        if (!run_value_parse(b->dtype, val, &b->a, why, sizeof why))
            return fail(p, "--buf %s: fill value: %s", spec, why);
    } else if (key == 4 && !strncmp(init, "iota", 4)) {
        b->init = RUN_INIT_IOTA;
        b->a = 0;
        b->b = 1;
        if (val) {
            char start[64], *comma;
            snprintf(start, sizeof start, "%s", val);
            if ((comma = strchr(start, ','))) *comma = '\0';
            if (strlen(val) >= sizeof start || !run_value_parse(RUN_F64, start, &b->a, why, sizeof why) ||
                (comma && !run_value_parse(RUN_F64, comma + 1, &b->b, why, sizeof why)))
                return fail(p, "--buf %s: expected iota=START[,STEP] with numbers", spec);
        }
    } else if (key == 4 && !strncmp(init, "rand", 4) && val) {
        b->init = RUN_INIT_RAND;
        bool is_float = run_dtype_is_float(b->dtype);
        b->a = is_float ? -1 : 0;
        b->b = is_float ? 1 : 100;
        char text[128], *parts[4] = {0};
        int n = 0;
        if (strlen(val) >= sizeof text) return fail(p, "--buf %s: rand=... is too long", spec);
        snprintf(text, sizeof text, "%s", val);
        for (char *s = text; n < 4; n++) {
            parts[n] = s;
            if (!(s = strchr(s, ','))) {
                n++;
                break;
            }
            *s++ = '\0';
        }
        if ((n != 1 && n != 3) || !run_parse_u64(parts[0], strlen(parts[0]), &b->seed) ||
            (n == 3 && (!run_value_parse(RUN_F64, parts[1], &b->a, why, sizeof why) ||
                        !run_value_parse(RUN_F64, parts[2], &b->b, why, sizeof why))))
            return fail(p, "--buf %s: expected rand=SEED or rand=SEED,LO,HI (SEED an unsigned integer)", spec);
        if (!(b->a < b->b)) return fail(p, "--buf %s: rand range [%Lg, %Lg) is empty", spec, b->a, b->b);
    } else if (key == 3 && !strncmp(init, "npy", 3) && val && *val) {
        b->init = RUN_INIT_NPY;
        b->path = val;
    } else {
        return fail(p, "--buf %s: unknown initialiser '%s': use zeros, fill=V, iota[=START[,STEP]], "
                       "rand=SEED[,LO,HI], poison or npy=FILE", spec, init);
    }
    return true;
}

/* iota and rand must not produce values the dtype cannot hold (they would
 * be clamped or become infinities silently). The extremes are enough. */
static bool generated_values_fit(parser *p, const run_buffer_spec *b, const char *spec)
{
    char why[200];
    long double ends[2];
    if (b->init == RUN_INIT_IOTA) ends[0] = b->a, ends[1] = b->a + (long double)(b->count - 1) * b->b;
    else if (b->init == RUN_INIT_RAND) ends[0] = b->a, ends[1] = run_dtype_is_float(b->dtype) ? b->b : ceill(b->b) - 1;
    else return true;
    for (int i = 0; i < 2; i++)
        if (!run_value_fits(b->dtype, ends[i], why, sizeof why))
            return fail(p, "--buf %s: %s would produce %s", spec, b->init == RUN_INIT_IOTA ? "iota" : "rand", why);
    return true;
}

static bool parse_buffer(parser *p, const char *spec)
{
    run_cli *c = p->cli;
    if (c->buffer_count == RUN_MAX_ITEMS) return fail(p, "more than %d --buf options", RUN_MAX_ITEMS);
    run_buffer_spec *b = &c->buffers[c->buffer_count];
    memset(b, 0, sizeof *b);
    const char *eq = strchr(spec, '=');
    if (!eq) return fail(p, "--buf '%s': expected NAME=DTYPE:SHAPE[:INIT] or NAME=npy:FILE", spec);
    if (!take_name(p, "--buf", spec, (size_t)(eq - spec), b->name)) return false;
    for (size_t i = 0; i < c->buffer_count; i++)
        if (!strcmp(c->buffers[i].name, b->name)) return fail(p, "--buf %s: buffer '%s' is defined twice", spec, b->name);
    const char *rest = eq + 1;
    if (!strncmp(rest, "npy:", 4)) {
        if (!rest[4]) return fail(p, "--buf %s: npy: needs a file name", spec);
        b->from_file = true;
        b->init = RUN_INIT_NPY;
        b->path = rest + 4;
        c->buffer_count++;
        return true;
    }
    const char *colon = strchr(rest, ':');
    if (!colon || !run_dtype_parse(rest, (size_t)(colon - rest), &b->dtype))
        return fail(p, "--buf %s: expected NAME=DTYPE:SHAPE[:INIT] with DTYPE one of %s (or NAME=npy:FILE)",
                    spec, run_dtype_names());
    const char *shape = colon + 1, *init = strchr(shape, ':');
    size_t shape_len = init ? (size_t)(init - shape) : strlen(shape);
    if (!parse_list(shape, shape_len, "x,", b->shape, RUN_MAX_RANK, &b->rank, 1, UINT64_C(1) << 40))
        return fail(p, "--buf %s: shape '%.*s': expected N or D0xD1x... (outermost first, up to %d "
                       "dimensions, each 1..2^40)", spec, (int)(shape_len < 80 ? shape_len : 80), shape, RUN_MAX_RANK);
    b->count = 1;
    for (int i = 0; i < b->rank; i++) {
        if (b->count > (UINT64_C(1) << 40) / b->shape[i])
            return fail(p, "--buf %s: more than 2^40 elements", spec);
        b->count *= b->shape[i];
    }
    if (init && !parse_init(p, b, spec, init + 1)) return false;
    if (!generated_values_fit(p, b, spec)) return false;
    c->buffer_count++;
    return true;
}

/* ---- --arg ------------------------------------------------------------ */

static run_launch_spec *current(parser *p) { return &p->cli->launches[p->cli->launch_count - 1]; }

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* bytes:HEX: pairs of hex digits, memory order; "0x" and '_' separators allowed. */
static bool parse_bytes_arg(parser *p, run_arg_spec *a, const char *spec, const char *hex)
{
    size_t digits = 0;
    if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex += 2;
    for (const char *h = hex; *h; h++) {
        if (*h == '_') continue;
        if (hex_digit(*h) < 0)
            return fail(p, "--arg %.60s%s: '%c' is not a hex digit: bytes:HEX takes pairs of hex digits in memory "
                           "order (e.g. bytes:0100000002000000 for two little-endian i32 1 and 2)", spec, strlen(spec) > 60 ? "..." : "", *h);
        digits++;
    }
    if (!digits || digits % 2) return fail(p, "--arg %.60s%s: bytes:HEX needs a whole number of bytes (an even, non-zero count of hex digits)", spec, strlen(spec) > 60 ? "..." : "");
    if (digits / 2 > RUN_MAX_ARG_BYTES) return fail(p, "--arg %.60s%s: more than %d bytes", spec, strlen(spec) > 60 ? "..." : "", RUN_MAX_ARG_BYTES);
    a->kind = RUN_ARG_BYTES;
    a->payload = hex;
    a->size = digits / 2;
    a->align = 1;
    return true;
}

/* struct:T:V,T:V,...: fields at natural C alignment (each at a multiple of
 * its size), the whole padded to the largest field's alignment, as a C
 * compiler lays out struct { T a; T b; ... }. */
static bool parse_struct_arg(parser *p, run_arg_spec *a, const char *spec, const char *fields)
{
    size_t offset = 0, align = 1;
    char why[200];
    for (const char *f = fields;;) {
        const char *comma = strchr(f, ','), *colon = strchr(f, ':');
        size_t len = comma ? (size_t)(comma - f) : strlen(f);
        run_dtype t;
        if (!colon || colon > f + len || !run_dtype_parse(f, (size_t)(colon - f), &t))
            return fail(p, "--arg %.60s%s: field '%.*s': expected TYPE:VALUE with TYPE one of %s", spec, strlen(spec) > 60 ? "..." : "",
                        (int)(len < 60 ? len : 60), f, run_dtype_names());
        char value[128];
        size_t vlen = len - (size_t)(colon + 1 - f);
        if (vlen >= sizeof value) return fail(p, "--arg %.60s%s: field value too long", spec, strlen(spec) > 60 ? "..." : "");
        memcpy(value, colon + 1, vlen);
        value[vlen] = '\0';
        long double v;
        if (!run_value_parse(t, value, &v, why, sizeof why)) return fail(p, "--arg %.60s%s: %s", spec, strlen(spec) > 60 ? "..." : "", why);
        size_t size = run_dtype_size(t);
        offset = (offset + size - 1) / size * size;
        offset += size;
        if (size > align) align = size;
        if (offset > RUN_MAX_ARG_BYTES) return fail(p, "--arg %.60s%s: more than %d bytes", spec, strlen(spec) > 60 ? "..." : "", RUN_MAX_ARG_BYTES);
        if (!comma) break;
        f = comma + 1;
    }
    a->kind = RUN_ARG_STRUCT;
    a->payload = fields;
    a->size = (offset + align - 1) / align * align;
    a->align = align;
    return true;
}

void run_arg_encode(const run_arg_spec *a, void *dst)
{
    unsigned char *out = dst;
    if (a->kind == RUN_ARG_BYTES) {
        size_t n = 0;
        for (const char *h = a->payload; *h && n < a->size; h++) {
            if (*h == '_') continue;
            int hi = hex_digit(*h++), lo = *h ? hex_digit(*h) : 0;
            out[n++] = (unsigned char)(hi << 4 | lo);
        }
        return;
    }
    memset(out, 0, a->size); /* padding */
    size_t offset = 0;
    char why[200];
    for (const char *f = a->payload; f;) {
        const char *comma = strchr(f, ','), *colon = strchr(f, ':');
        size_t len = comma ? (size_t)(comma - f) : strlen(f);
        run_dtype t = RUN_U8;
        char value[128] = "";
        long double v = 0;
        run_dtype_parse(f, (size_t)(colon - f), &t);
        size_t vlen = len - (size_t)(colon + 1 - f);
        memcpy(value, colon + 1, vlen < sizeof value ? vlen : sizeof value - 1);
        run_value_parse(t, value, &v, why, sizeof why);
        size_t size = run_dtype_size(t);
        offset = (offset + size - 1) / size * size;
        if (offset + size <= a->size) run_value_store(t, v, out + offset);
        offset += size;
        f = comma ? comma + 1 : NULL;
    }
}

static bool parse_arg(parser *p, const char *spec)
{
    run_cli *c = p->cli;
    run_launch_spec *l = current(p);
    if (l->arg_count == RUN_MAX_ITEMS) return fail(p, "more than %d --arg options in one launch", RUN_MAX_ITEMS);
    run_arg_spec *a = &l->args[l->arg_count];
    char *ref = p->arg_ref[c->launch_count - 1][l->arg_count];
    memset(a, 0, sizeof *a);
    a->text = spec;
    a->size = a->align = 8;
    if (!strcmp(spec, "null")) {
        a->kind = RUN_ARG_NULL;
        l->arg_count++;
        return true;
    }
    const char *colon = strchr(spec, ':');
    if (!colon)
        return fail(p, "--arg '%s': expected TYPE:VALUE (e.g. f32:2.5), buf:NAME[+N[B]], tmap:NAME, tmapptr:NAME, "
                       "bytes:HEX, struct:T:V,... or null", spec);
    size_t head = (size_t)(colon - spec);
    const char *val = colon + 1;
    if (head == 3 && !strncmp(spec, "buf", 3)) {
        a->kind = RUN_ARG_BUFFER;
        const char *plus = strchr(val, '+');
        size_t name_len = plus ? (size_t)(plus - val) : strlen(val);
        if (!take_name(p, "--arg", val, name_len, ref)) return false;
        if (plus) {
            size_t n = strlen(plus + 1);
            a->offset_in_bytes = n && plus[n] == 'B';
            if (!run_parse_u64(plus + 1, n - a->offset_in_bytes, &a->offset))
                return fail(p, "--arg %s: offset '%s': expected buf:NAME+N (N elements of the buffer's dtype) or "
                               "buf:NAME+NB (N bytes), N decimal or 0x hex", spec, plus + 1);
        }
    } else if ((head == 4 && !strncmp(spec, "tmap", 4)) || (head == 7 && !strncmp(spec, "tmapptr", 7))) {
        a->kind = head == 4 ? RUN_ARG_TMAP : RUN_ARG_TMAP_PTR;
        if (head == 4) a->size = sizeof(asyncrt_tensor_map), a->align = 64;
        if (!take_name(p, "--arg", val, strlen(val), ref)) return false;
    } else if (head == 5 && !strncmp(spec, "bytes", 5)) {
        if (!parse_bytes_arg(p, a, spec, val)) return false;
    } else if (head == 6 && !strncmp(spec, "struct", 6)) {
        if (!parse_struct_arg(p, a, spec, val)) return false;
    } else {
        char why[200];
        a->kind = RUN_ARG_SCALAR;
        if (!run_dtype_parse(spec, head, &a->dtype))
            return fail(p, "--arg %s: unknown type '%.*s': use buf:, tmap:, tmapptr:, bytes:, struct:, null or one of %s",
                        spec, (int)(head < 40 ? head : 40), spec, run_dtype_names());
        if (!run_value_parse(a->dtype, val, &a->value, why, sizeof why)) return fail(p, "--arg %s: %s", spec, why);
        a->size = a->align = run_dtype_size(a->dtype);
    }
    l->arg_count++;
    return true;
}

/* ---- --tmap NAME=BUFFER:box=...[:key=value]... -------------------------- */

static bool tmap_enum(parser *p, const char *spec, const char *key, const char *val, bool ok,
                      const char *(*name)(int))
{
    if (ok) return true;
    char list[256] = "";
    size_t used = 0;
    for (int v = 0; name(v) && used < sizeof list; v++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", v ? ", " : "", name(v));
    return fail(p, "--tmap %s: %s '%s' is unknown: use one of %s", spec, key, val, list);
}

/* Adapters so one lister serves every enum. */
static const char *dtype_name(int v) { return asyncrt_tensormap_dtype_name((asyncrt_tensormap_dtype)v); }
static const char *swizzle_name(int v) { return asyncrt_tensormap_swizzle_name((asyncrt_tensormap_swizzle)v); }
static const char *interleave_name(int v) { return asyncrt_tensormap_interleave_name((asyncrt_tensormap_interleave)v); }
static const char *l2_name(int v) { return asyncrt_tensormap_l2_promotion_name((asyncrt_tensormap_l2_promotion)v); }
static const char *oob_name(int v) { return asyncrt_tensormap_oob_fill_name((asyncrt_tensormap_oob_fill)v); }

/* One handler per --tmap key. A list key gets the raw value (val, vlen); a
 * word key (an enum's name) gets it as a string in `word`. */
/* box, dims, estrides: one entry per dimension, innermost first. */
static bool tmap_per_dim(parser *p, const char *spec, const char *key, const char *val, size_t vlen, uint64_t *out,
                         int *count, uint64_t hi)
{
    if (parse_list(val, vlen, ",", out, RUN_MAX_TMAP_RANK, count, 0, hi)) return true;
    return fail(p, "--tmap %s: %s: expected 1 to %d comma-separated integers, innermost first", spec, key,
                RUN_MAX_TMAP_RANK);
}

static bool tmap_box(parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word)
{
    return (void)word, tmap_per_dim(p, spec, "box", val, vlen, t->box, &t->rank, UINT32_MAX);
}

static bool tmap_dims(parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word)
{
    return (void)word, tmap_per_dim(p, spec, "dims", val, vlen, t->dims, &t->dims_rank, UINT64_MAX);
}

static bool tmap_strides(parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen,
                         const char *word)
{
    (void)word;
    if (!parse_list(val, vlen, ",", t->strides, RUN_MAX_TMAP_RANK - 1, &t->strides_rank, 0, UINT64_MAX))
        return fail(p, "--tmap %s: strides: expected up to %d comma-separated byte counts (for dimensions "
                       "1.. rank-1)", spec, RUN_MAX_TMAP_RANK - 1);
    return true;
}

static bool tmap_estrides(parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen,
                          const char *word)
{
    return (void)word, tmap_per_dim(p, spec, "estrides", val, vlen, t->estrides, &t->estrides_rank, UINT32_MAX);
}

static bool tmap_dtype(parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word)
{
    (void)val, (void)vlen;
    t->has_dtype = true;
    return tmap_enum(p, spec, "dtype", word, asyncrt_tensormap_dtype_parse(word, &t->dtype), dtype_name);
}

static bool tmap_swizzle(parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen,
                         const char *word)
{
    (void)val, (void)vlen;
    return tmap_enum(p, spec, "swizzle", word, asyncrt_tensormap_swizzle_parse(word, &t->swizzle), swizzle_name);
}

static bool tmap_interleave(parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen,
                            const char *word)
{
    (void)val, (void)vlen;
    return tmap_enum(p, spec, "interleave", word, asyncrt_tensormap_interleave_parse(word, &t->interleave),
                     interleave_name);
}

static bool tmap_l2(parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word)
{
    (void)val, (void)vlen;
    return tmap_enum(p, spec, "l2", word, asyncrt_tensormap_l2_promotion_parse(word, &t->l2), l2_name);
}

static bool tmap_oob(parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word)
{
    (void)val, (void)vlen;
    return tmap_enum(p, spec, "oob", word, asyncrt_tensormap_oob_fill_parse(word, &t->oob), oob_name);
}

/* The keys, in the order the messages list them; box, the one required key,
 * is row TMAP_BOX (parse_tmap checks it was seen). */
enum { TMAP_BOX = 0 };
static const struct tmap_key {
    const char *name;
    bool word;
    bool (*take)(parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word);
} k_tmap_keys[] = {
    [TMAP_BOX] = {"box", false, tmap_box},
    {"dims", false, tmap_dims},
    {"strides", false, tmap_strides},
    {"estrides", false, tmap_estrides},
    {"dtype", true, tmap_dtype},
    {"swizzle", true, tmap_swizzle},
    {"interleave", true, tmap_interleave},
    {"l2", true, tmap_l2},
    {"oob", true, tmap_oob},
};

static bool tmap_field(parser *p, run_tmap_spec *t, const char *spec, const char *field, size_t len,
                       unsigned *seen)
{
    const char *eq = memchr(field, '=', len);
    size_t klen = eq ? (size_t)(eq - field) : len;
    const struct tmap_key *key = NULL;
    for (size_t i = 0; i < sizeof k_tmap_keys / sizeof k_tmap_keys[0]; i++)
        if (strlen(k_tmap_keys[i].name) == klen && !strncmp(field, k_tmap_keys[i].name, klen)) key = &k_tmap_keys[i];
    if (!key || !eq)
        return fail(p, "--tmap %s: '%.*s' is not KEY=VALUE with KEY one of box, dims, strides, estrides, "
                       "dtype, swizzle, interleave, l2, oob", spec, (int)(len < 80 ? len : 80), field);
    unsigned bit = 1u << (key - k_tmap_keys);
    if (*seen & bit) return fail(p, "--tmap %s: %s is given twice", spec, key->name);
    *seen |= bit;
    const char *val = eq + 1;
    size_t vlen = len - klen - 1;
    char word[64] = "";
    if (key->word) {
        if (vlen >= sizeof word) return fail(p, "--tmap %s: %s value is too long", spec, key->name);
        memcpy(word, val, vlen);
        word[vlen] = '\0';
    }
    return key->take(p, t, spec, val, vlen, word);
}

static bool parse_tmap(parser *p, const char *spec)
{
    run_cli *c = p->cli;
    if (c->tmap_count == RUN_MAX_ITEMS) return fail(p, "more than %d --tmap options", RUN_MAX_ITEMS);
    run_tmap_spec *t = &c->tmaps[c->tmap_count];
    memset(t, 0, sizeof *t);
    t->swizzle = ASYNCRT_TENSORMAP_SWIZZLE_NONE;
    t->interleave = ASYNCRT_TENSORMAP_INTERLEAVE_NONE;
    t->l2 = ASYNCRT_TENSORMAP_L2_PROMOTION_NONE;
    t->oob = ASYNCRT_TENSORMAP_OOB_FILL_ZERO;
    const char *eq = strchr(spec, '='), *colon = eq ? strchr(eq, ':') : NULL;
    if (!eq || !colon)
        return fail(p, "--tmap '%s': expected NAME=BUFFER:box=B0[,B1...][:KEY=VALUE...]", spec);
    if (!take_name(p, "--tmap", spec, (size_t)(eq - spec), t->name) ||
        !take_name(p, "--tmap buffer", eq + 1, (size_t)(colon - eq - 1), p->tmap_buffer[c->tmap_count]))
        return false;
    for (size_t i = 0; i < c->tmap_count; i++)
        if (!strcmp(c->tmaps[i].name, t->name)) return fail(p, "--tmap %s: tensor map '%s' is defined twice", spec, t->name);
    unsigned seen = 0;
    for (const char *f = colon + 1;;) {
        const char *next = strchr(f, ':');
        size_t len = next ? (size_t)(next - f) : strlen(f);
        if (!tmap_field(p, t, spec, f, len, &seen)) return false;
        if (!next) break;
        f = next + 1;
    }
    if (!(seen & 1u << TMAP_BOX)) return fail(p, "--tmap %s: box=... is required", spec);
    if (t->dims_rank && t->dims_rank != t->rank)
        return fail(p, "--tmap %s: dims has %d entries but box has %d", spec, t->dims_rank, t->rank);
    if (t->strides_rank && t->strides_rank != t->rank - 1)
        return fail(p, "--tmap %s: strides needs %d entries (one per dimension after the first), got %d", spec,
                    t->rank - 1, t->strides_rank);
    if (t->estrides_rank && t->estrides_rank != t->rank)
        return fail(p, "--tmap %s: estrides has %d entries but box has %d", spec, t->estrides_rank, t->rank);
    c->tmap_count++;
    return true;
}

/* ---- --out / --expect NAME=FILE[:TOLERANCES] --------------------------- */

/* --expect's own tolerances: FILE:rtol=R,atol=A (either or both) or FILE:exact.
 * Only a suffix that parses as one is taken from the name, so files with ':'
 * in their names still work. */
static bool parse_tolerance_suffix(parser *p, const char *spec, const char *suffix, run_file_ref *ref)
{
    if (!strcmp(suffix, "exact")) return ref->rtol = ref->atol = 0, true;
    char text[128];
    if (strlen(suffix) >= sizeof text) return fail(p, "--expect %s: tolerance list too long", spec);
    snprintf(text, sizeof text, "%s", suffix);
    for (char *f = text, *next; f; f = next) {
        if ((next = strchr(f, ','))) *next++ = '\0';
        double d;
        bool r = !strncmp(f, "rtol=", 5), a = !strncmp(f, "atol=", 5);
        if ((!r && !a) || !parse_double(f + 5, &d) || d < 0)
            return fail(p, "--expect %s: '%s': expected rtol=R and/or atol=A (non-negative numbers, comma-separated) "
                           "or exact", spec, f);
        *(r ? &ref->rtol : &ref->atol) = d;
    }
    return true;
}

static bool looks_like_tolerance(const char *suffix)
{
    return !strcmp(suffix, "exact") || !strncmp(suffix, "rtol=", 5) || !strncmp(suffix, "atol=", 5);
}

static bool parse_file_ref(parser *p, const char *opt, const char *spec, run_file_ref *list, size_t *count,
                           char names[][RUN_NAME_MAX])
{
    if (*count == RUN_MAX_ITEMS) return fail(p, "more than %d %s options", RUN_MAX_ITEMS, opt);
    const char *eq = strchr(spec, '=');
    if (!eq || !eq[1]) return fail(p, "%s '%s': expected BUFFER=FILE.npy", opt, spec);
    if (!take_name(p, opt, spec, (size_t)(eq - spec), names[*count])) return false;
    run_file_ref *ref = &list[*count];
    ref->path = eq + 1;
    ref->rtol = ref->atol = -1;
    const char *colon = strrchr(eq + 1, ':');
    if (colon && !strcmp(opt, "--expect") && looks_like_tolerance(colon + 1)) {
        size_t len = (size_t)(colon - eq - 1);
        char *path = p->cli->expect_path_storage[*count];
        if (!len || len >= sizeof p->cli->expect_path_storage[0])
            return fail(p, "--expect '%s': expected BUFFER=FILE.npy[:rtol=R,atol=A|:exact]", spec);
        memcpy(path, eq + 1, len);
        path[len] = '\0';
        ref->path = path;
        if (!parse_tolerance_suffix(p, spec, colon + 1, ref)) return false;
    }
    (*count)++;
    return true;
}

/* ---- the option loop ---------------------------------------------------- */

static int find_buffer(const run_cli *c, const char *name)
{
    for (size_t i = 0; i < c->buffer_count; i++)
        if (!strcmp(c->buffers[i].name, name)) return (int)i;
    return -1;
}

static bool resolve_args(parser *p, size_t launch)
{
    run_cli *c = p->cli;
    run_launch_spec *l = &c->launches[launch];
    for (size_t i = 0; i < l->arg_count; i++) {
        run_arg_spec *a = &l->args[i];
        const char *name = p->arg_ref[launch][i];
        if (a->kind == RUN_ARG_BUFFER && (a->ref = find_buffer(c, name)) < 0)
            return fail(p, "--arg %s: no --buf named '%s'", a->text, name);
        if (a->kind == RUN_ARG_TMAP || a->kind == RUN_ARG_TMAP_PTR) {
            a->ref = -1;
            for (size_t t = 0; t < c->tmap_count; t++)
                if (!strcmp(c->tmaps[t].name, name)) a->ref = (int)t;
            if (a->ref < 0) return fail(p, "--arg %s: no --tmap named '%s'", a->text, name);
        }
    }
    return true;
}

static bool resolve(parser *p)
{
    run_cli *c = p->cli;
    for (size_t i = 0; i < c->tmap_count; i++)
        if ((c->tmaps[i].buffer = find_buffer(c, p->tmap_buffer[i])) < 0)
            return fail(p, "--tmap %s: no --buf named '%s'", c->tmaps[i].name, p->tmap_buffer[i]);
    for (size_t l = 0; l < c->launch_count; l++)
        if (!resolve_args(p, l)) return false;
    for (size_t i = 0; i < c->out_count; i++)
        if ((c->outs[i].buffer = find_buffer(c, p->out_ref[i])) < 0)
            return fail(p, "--out %s: no --buf named '%s'", c->outs[i].path, p->out_ref[i]);
    for (size_t i = 0; i < c->expect_count; i++)
        if ((c->expects[i].buffer = find_buffer(c, p->expect_ref[i])) < 0)
            return fail(p, "--expect %s: no --buf named '%s'", c->expects[i].path, p->expect_ref[i]);
    return true;
}

/* An --out that names a reference file would overwrite the reference with the
 * result and then compare the result with itself. Same spelling here; main
 * also compares the files' identities (links, ./x vs x). */
static bool check_files(parser *p)
{
    run_cli *c = p->cli;
    for (size_t i = 0; i < c->out_count; i++) {
        for (size_t j = 0; j < c->expect_count; j++)
            if (!strcmp(c->outs[i].path, c->expects[j].path))
                return fail(p, "--out %s=%s would overwrite the --expect reference %s=%s: write the result elsewhere",
                            c->buffers[c->outs[i].buffer].name, c->outs[i].path, c->buffers[c->expects[j].buffer].name,
                            c->expects[j].path);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(c->outs[i].path, c->outs[j].path))
                return fail(p, "--out: two buffers are written to %s", c->outs[i].path);
    }
    return true;
}

static bool check_combination(parser *p)
{
    run_cli *c = p->cli;
    if (c->help || c->version) return true;
    if (!c->source) return fail(p, "no source file given (use - for stdin)");
    if (strcmp(c->arch, "auto")) {
        asyncrt_arch arch;
        if (!asyncrt__arch_parse(c->arch, &arch))
            return fail(p, "--arch '%s': expected auto, sm_XY, sm_XYa, compute_XY or compute_XYa (e.g. sm_90)", c->arch);
    }
    /* --compile-only keeps --out, --expect and --repeat: the whole command
     * line is checked as far as it can be without a device (README). */
    if (c->compile_only && !strcmp(c->arch, "auto"))
        return fail(p, "--compile-only needs an explicit --arch (e.g. sm_90 or compute_80): 'auto' reads the GPU");
    if (p->warmup_given && !c->repeat) return fail(p, "--warmup only applies with --repeat N");
    if (p->batch_given && !c->repeat) return fail(p, "--batch only applies with --repeat N");
    if (!run_link_check(c, p->err, p->err_size)) return false;
    for (size_t i = 0; i < c->launch_count; i++) {
        const run_launch_spec *l = &c->launches[i];
        if (l->pdl && i == 0)
            return fail(p, "--pdl: the first launch has no launch before it to overlap with; give --pdl after --then");
        if (l->pdl && (l->has_priority != c->launches[i - 1].has_priority ||
                       (l->has_priority && l->priority != c->launches[i - 1].priority)))
            return fail(p, "--pdl on launch %zu: it must run on the same stream as launch %zu, so give both the same "
                           "--priority (or none)", i + 1, i);
        if (l->cooperative && (l->cluster[0] | l->cluster[1] | l->cluster[2]))
            return fail(p, "--cooperative with --cluster on launch %zu: CUDA has no cooperative cluster launch", i + 1);
    }
    return check_files(p);
}

/* The value of an option given as "--opt VALUE" or "--opt=VALUE". */
static bool option_value(parser *p, int argc, char *const *argv, int *i, const char *name, const char **out)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (arg[n] == '=') return *out = arg + n + 1, true;
    if (*i + 1 >= argc) return fail(p, "%s needs a value", name);
    *out = argv[++*i];
    return true;
}

static bool push(parser *p, const char *opt, const char **list, size_t *count, const char *value)
{
    if (*count == RUN_MAX_ITEMS) return fail(p, "more than %d %s options", RUN_MAX_ITEMS, opt);
    if (!*value) return fail(p, "%s needs a non-empty value", opt);
    list[(*count)++] = value;
    return true;
}

/* Matches "--name" and "--name=...". */
static bool is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

static void init_launch(run_launch_spec *l)
{
    memset(l, 0, sizeof *l);
    for (int i = 0; i < 3; i++) l->grid[i] = l->block[i] = 1;
}

/* ---- options that take a value: one handler each, found by name ---------- */

/* A string option that must not be empty; `empty` is the message if it is. */
static bool take_text(parser *p, const char *v, const char **to, const char *empty)
{
    return *v ? (*to = v, true) : fail(p, "%s", empty);
}

static bool take_arch(parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->arch, "--arch needs a value");
}

static bool take_device(parser *p, const char *name, const char *v)
{
    (void)name;
    uint64_t n;
    if (!run_parse_u64(v, strlen(v), &n) || n > 1024) return fail(p, "--device '%s': expected a device ordinal", v);
    p->cli->device = (int)n;
    return true;
}

static bool take_std(parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->std, "--std needs a value such as c++17");
}

static bool take_kernel(parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &current(p)->kernel, "--kernel needs a name");
}

static bool take_grid(parser *p, const char *name, const char *v) { return parse_dim3(p, name, v, current(p)->grid); }
static bool take_block(parser *p, const char *name, const char *v) { return parse_dim3(p, name, v, current(p)->block); }
static bool take_cluster(parser *p, const char *name, const char *v)
{
    return parse_dim3(p, name, v, current(p)->cluster);
}

static bool take_smem(parser *p, const char *name, const char *v)
{
    (void)name;
    if (!parse_bytes(v, &current(p)->smem, UINT32_MAX))
        return fail(p, "--smem '%s': expected bytes, optionally with a K/KiB or M/MiB suffix (1024-based)", v);
    return true;
}

static bool take_buf(parser *p, const char *name, const char *v) { return (void)name, parse_buffer(p, v); }
static bool take_arg(parser *p, const char *name, const char *v) { return (void)name, parse_arg(p, v); }
static bool take_tmap(parser *p, const char *name, const char *v) { return (void)name, parse_tmap(p, v); }

static bool take_out(parser *p, const char *name, const char *v)
{
    return parse_file_ref(p, name, v, p->cli->outs, &p->cli->out_count, p->out_ref);
}

static bool take_expect(parser *p, const char *name, const char *v)
{
    return parse_file_ref(p, name, v, p->cli->expects, &p->cli->expect_count, p->expect_ref);
}

static bool take_tolerance(parser *p, const char *name, const char *v, double *to)
{
    double d;
    if (!parse_double(v, &d) || d < 0) return fail(p, "%s '%s': expected a non-negative number", name, v);
    *to = d;
    return true;
}

static bool take_rtol(parser *p, const char *name, const char *v) { return take_tolerance(p, name, v, &p->cli->rtol); }
static bool take_atol(parser *p, const char *name, const char *v) { return take_tolerance(p, name, v, &p->cli->atol); }

static bool take_count(parser *p, const char *name, const char *v, int least, unsigned *to)
{
    uint64_t n;
    if (!run_parse_u64(v, strlen(v), &n) || n > 1000000 || n < (uint64_t)least)
        return fail(p, "%s '%s': expected an integer in %d..1000000", name, v, least);
    *to = (unsigned)n;
    return true;
}

static bool take_repeat(parser *p, const char *name, const char *v) { return take_count(p, name, v, 1, &p->cli->repeat); }
static bool take_warmup(parser *p, const char *name, const char *v)
{
    if (!take_count(p, name, v, 0, &p->cli->warmup)) return false;
    p->warmup_given = true;
    return true;
}

static bool take_batch(parser *p, const char *name, const char *v)
{
    if (!take_count(p, name, v, 1, &p->cli->batch)) return false;
    p->batch_given = true;
    return true;
}

static bool take_bytes(parser *p, const char *name, const char *v)
{
    (void)name;
    if (!parse_bytes(v, &p->cli->bytes, UINT64_MAX / 2) || !p->cli->bytes)
        return fail(p, "--bytes '%s': expected a positive byte count (K/M suffixes allowed)", v);
    return true;
}

static bool take_emit_ptx(parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->emit_ptx, "--emit-ptx needs a file name");
}

static bool take_emit_cubin(parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->emit_cubin, "--emit-cubin needs a file name");
}

static bool take_image(parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->image, "--image needs a file name");
}

static bool take_bundle(parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->bundle, "--bundle needs a file name");
}

static bool take_priority(parser *p, const char *name, const char *v)
{
    (void)name;
    uint64_t n;
    bool negative = v[0] == '-';
    if (!run_parse_u64(v + negative, strlen(v + negative), &n) || n > 1000)
        return fail(p, "--priority '%s': expected an integer in -1000..1000 (lower is higher priority, as in CUDA)", v);
    current(p)->has_priority = true;
    current(p)->priority = negative ? -(int)n : (int)n;
    return true;
}

typedef struct valued_option {
    const char *name;
    bool (*take)(parser *p, const char *name, const char *value);
} valued_option;

/* Inserting an option is one row here and one handler above. */
static const valued_option k_valued[] = {
    {"--arch", take_arch},         {"--device", take_device},         {"--std", take_std},
    {"--kernel", take_kernel},     {"--grid", take_grid},             {"--block", take_block},
    {"--cluster", take_cluster},   {"--smem", take_smem},             {"--buf", take_buf},
    {"--arg", take_arg},           {"--tmap", take_tmap},             {"--out", take_out},
    {"--expect", take_expect},     {"--rtol", take_rtol},             {"--atol", take_atol},
    {"--repeat", take_repeat},     {"--warmup", take_warmup},         {"--batch", take_batch},
    {"--bytes", take_bytes},       {"--emit-ptx", take_emit_ptx},     {"--emit-cubin", take_emit_cubin},
    {"--priority", take_priority}, {"--image", take_image},           {"--bundle", take_bundle},
};

static bool parse_one(parser *p, int argc, char *const *argv, int *i, bool *options_done)
{
    run_cli *c = p->cli;
    const char *a = argv[*i], *v = NULL;
    if (*options_done || a[0] != '-' || !strcmp(a, "-")) {
        if (!c->source) return c->source = a, true;
        return push(p, "source", c->more_sources, &c->more_source_count, a); /* linked: link_run.h */
    }
    if (!strcmp(a, "--")) return *options_done = true, true;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return c->help = true, true;
    if (!strcmp(a, "--version")) return c->version = true, true;
    if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) return c->verbose++, true;
    if (!strcmp(a, "-vv")) return c->verbose += 2, true;
    if (!strcmp(a, "--json")) return c->json = true, true;
    if (!strcmp(a, "--compile-only")) return c->compile_only = true, true;
    if (!strcmp(a, "--cooperative")) return current(p)->cooperative = true, true;
    if (!strcmp(a, "--pdl")) return current(p)->pdl = true, true;
    if (!strcmp(a, "--lto")) return c->lto = true, true;
    if (is_opt(a, "--link") || !strcmp(a, "-Xnvjitlink")) {
        bool file = a[1] == '-';
        if (!option_value(p, argc, argv, i, file ? "--link" : "-Xnvjitlink", &v)) return false;
        return file ? push(p, "--link", c->link_files, &c->link_file_count, v)
                    : push(p, "-Xnvjitlink", c->link_options, &c->link_option_count, v);
    }
    if (!strcmp(a, "--then")) {
        if (c->launch_count == RUN_MAX_LAUNCHES) return fail(p, "more than %d launches (--then)", RUN_MAX_LAUNCHES);
        run_launch_spec *next = &c->launches[c->launch_count++];
        init_launch(next);
        return true;
    }
    if (!strncmp(a, "-I", 2) || !strncmp(a, "-D", 2)) {
        bool inc = a[1] == 'I';
        v = a[2] ? a + 2 : NULL;
        if (!v && *i + 1 >= argc) return fail(p, "%s needs a value", a);
        if (!v) v = argv[++*i];
        return inc ? push(p, "-I", c->includes, &c->include_count, v) : push(p, "-D", c->defines, &c->define_count, v);
    }
    if (!strcmp(a, "-Xnvrtc") || is_opt(a, "--nvrtc-opt")) {
        if (!option_value(p, argc, argv, i, a[1] == 'X' ? "-Xnvrtc" : "--nvrtc-opt", &v)) return false;
        return push(p, "--nvrtc-opt", c->nvrtc_options, &c->nvrtc_option_count, v);
    }
    const valued_option *o = NULL;
    for (size_t j = 0; j < sizeof k_valued / sizeof k_valued[0]; j++)
        if (is_opt(a, k_valued[j].name)) o = &k_valued[j];
    if (!o) return fail(p, "unknown option '%s'", a);
    if (!option_value(p, argc, argv, i, o->name, &v)) return false;
    return o->take(p, o->name, v);
}

int run_cli_parse(int argc, char *const *argv, run_cli *out, char *err, size_t err_size)
{
    parser *p = calloc(1, sizeof *p); /* the name tables are large for a stack frame */
    if (err_size) err[0] = '\0';
    memset(out, 0, sizeof *out);
    if (!p) {
        snprintf(err, err_size, "out of memory");
        return RUN_EXIT_INTERNAL;
    }
    p->cli = out;
    p->err = err;
    p->err_size = err_size;
    out->arch = "auto";
    out->launch_count = 1;
    init_launch(&out->launches[0]);
    out->rtol = out->atol = -1;
    out->warmup = 1;
    out->batch = 1;
    bool ok = true, options_done = false;
    for (int i = 1; ok && i < argc; i++) {
        if (!argv[i]) ok = fail(p, "argv[%d] is NULL", i);
        else ok = parse_one(p, argc, argv, &i, &options_done);
    }
    ok = ok && resolve(p) && check_combination(p);
    free(p);
    return ok ? RUN_EXIT_OK : RUN_EXIT_USAGE;
}
