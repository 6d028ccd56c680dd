/* asyncrt-run's argument parser: argv in, a run_cli or a message out. No I/O,
 * no allocation, no GPU: every malformed input ends in a message. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"

typedef struct parser {
    run_cli *cli;
    char *err;
    size_t err_size;
    /* Names referenced before their definitions; resolved at the end. */
    char arg_ref[RUN_MAX_ITEMS][RUN_NAME_MAX];
    char tmap_buffer[RUN_MAX_ITEMS][RUN_NAME_MAX];
    char out_ref[RUN_MAX_ITEMS][RUN_NAME_MAX];
    char expect_ref[RUN_MAX_ITEMS][RUN_NAME_MAX];
    bool warmup_given;
} parser;

static bool fail(parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (p->err_size) vsnprintf(p->err, p->err_size, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- small value parsers ------------------------------------------------ */

static bool parse_u64(const char *text, size_t len, uint64_t *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf || text[0] < '0' || text[0] > '9') return false;
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 0);
    if (*end || errno) return false;
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
        if (*count == max || !parse_u64(text + i, j - i, &v) || v < lo || v > hi) return false;
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
    if (!parse_u64(text, digits, &v) || v > max / scale) return false;
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
        if ((n != 1 && n != 3) || !parse_u64(parts[0], strlen(parts[0]), &b->seed) ||
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
    c->buffer_count++;
    return true;
}

/* ---- --arg TYPE:VALUE | buf:NAME | tmap:NAME ---------------------------- */

static bool parse_arg(parser *p, const char *spec)
{
    run_cli *c = p->cli;
    if (c->arg_count == RUN_MAX_ITEMS) return fail(p, "more than %d --arg options", RUN_MAX_ITEMS);
    run_arg_spec *a = &c->args[c->arg_count];
    memset(a, 0, sizeof *a);
    a->text = spec;
    const char *colon = strchr(spec, ':');
    if (!colon)
        return fail(p, "--arg '%s': expected TYPE:VALUE (e.g. f32:2.5), buf:NAME or tmap:NAME", spec);
    size_t head = (size_t)(colon - spec);
    const char *val = colon + 1;
    if ((head == 3 && !strncmp(spec, "buf", 3)) || (head == 4 && !strncmp(spec, "tmap", 4))) {
        a->kind = head == 3 ? RUN_ARG_BUFFER : RUN_ARG_TMAP;
        if (!take_name(p, "--arg", val, strlen(val), p->arg_ref[c->arg_count])) return false;
    } else {
        char why[200];
        a->kind = RUN_ARG_SCALAR;
        if (!run_dtype_parse(spec, head, &a->dtype))
            return fail(p, "--arg %s: unknown type '%.*s': use buf:NAME, tmap:NAME or one of %s", spec,
                        (int)(head < 40 ? head : 40), spec, run_dtype_names());
        if (!run_value_parse(a->dtype, val, &a->value, why, sizeof why)) return fail(p, "--arg %s: %s", spec, why);
    }
    c->arg_count++;
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

static bool tmap_field(parser *p, run_tmap_spec *t, const char *spec, const char *field, size_t len,
                       unsigned *seen)
{
    static const char *keys[] = {"box", "dims", "strides", "estrides", "dtype", "swizzle", "interleave", "l2", "oob"};
    const char *eq = memchr(field, '=', len);
    size_t klen = eq ? (size_t)(eq - field) : len;
    int k = -1;
    for (int i = 0; i < 9; i++)
        if (strlen(keys[i]) == klen && !strncmp(field, keys[i], klen)) k = i;
    if (k < 0 || !eq)
        return fail(p, "--tmap %s: '%.*s' is not KEY=VALUE with KEY one of box, dims, strides, estrides, "
                       "dtype, swizzle, interleave, l2, oob", spec, (int)(len < 80 ? len : 80), field);
    if (*seen & (1u << k)) return fail(p, "--tmap %s: %s is given twice", spec, keys[k]);
    *seen |= 1u << k;
    const char *val = eq + 1;
    size_t vlen = len - klen - 1;
    char text[64];
    if (k >= 4) {
        if (vlen >= sizeof text) return fail(p, "--tmap %s: %s value is too long", spec, keys[k]);
        memcpy(text, val, vlen);
        text[vlen] = '\0';
    }
    int n = 0;
    switch (k) {
    case 0:
        if (!parse_list(val, vlen, ",", t->box, RUN_MAX_TMAP_RANK, &t->rank, 0, UINT32_MAX))
            return fail(p, "--tmap %s: box: expected 1 to %d comma-separated integers, innermost first", spec,
                        RUN_MAX_TMAP_RANK);
        return true;
    case 1:
        if (!parse_list(val, vlen, ",", t->dims, RUN_MAX_TMAP_RANK, &n, 0, UINT64_MAX))
            return fail(p, "--tmap %s: dims: expected 1 to %d comma-separated integers, innermost first", spec,
                        RUN_MAX_TMAP_RANK);
        t->dims_rank = n;
        return true;
    case 2:
        if (!parse_list(val, vlen, ",", t->strides, RUN_MAX_TMAP_RANK - 1, &n, 0, UINT64_MAX))
            return fail(p, "--tmap %s: strides: expected up to %d comma-separated byte counts (for dimensions "
                           "1.. rank-1)", spec, RUN_MAX_TMAP_RANK - 1);
        t->strides_rank = n;
        return true;
    case 3:
        if (!parse_list(val, vlen, ",", t->estrides, RUN_MAX_TMAP_RANK, &n, 0, UINT32_MAX))
            return fail(p, "--tmap %s: estrides: expected 1 to %d comma-separated integers, innermost first",
                        spec, RUN_MAX_TMAP_RANK);
        t->estrides_rank = n;
        return true;
    case 4:
        t->has_dtype = true;
        return tmap_enum(p, spec, "dtype", text, asyncrt_tensormap_dtype_parse(text, &t->dtype), dtype_name);
    case 5:
        return tmap_enum(p, spec, "swizzle", text, asyncrt_tensormap_swizzle_parse(text, &t->swizzle), swizzle_name);
    case 6:
        return tmap_enum(p, spec, "interleave", text, asyncrt_tensormap_interleave_parse(text, &t->interleave),
                         interleave_name);
    case 7:
        return tmap_enum(p, spec, "l2", text, asyncrt_tensormap_l2_promotion_parse(text, &t->l2), l2_name);
    default:
        return tmap_enum(p, spec, "oob", text, asyncrt_tensormap_oob_fill_parse(text, &t->oob), oob_name);
    }
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
    if (!(seen & 1u)) return fail(p, "--tmap %s: box=... is required", spec);
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

/* ---- --out / --expect NAME=FILE ----------------------------------------- */

static bool parse_file_ref(parser *p, const char *opt, const char *spec, run_file_ref *list, size_t *count,
                           char names[][RUN_NAME_MAX])
{
    if (*count == RUN_MAX_ITEMS) return fail(p, "more than %d %s options", RUN_MAX_ITEMS, opt);
    const char *eq = strchr(spec, '=');
    if (!eq || !eq[1]) return fail(p, "%s '%s': expected BUFFER=FILE.npy", opt, spec);
    if (!take_name(p, opt, spec, (size_t)(eq - spec), names[*count])) return false;
    list[*count].path = eq + 1;
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

static bool resolve(parser *p)
{
    run_cli *c = p->cli;
    for (size_t i = 0; i < c->tmap_count; i++)
        if ((c->tmaps[i].buffer = find_buffer(c, p->tmap_buffer[i])) < 0)
            return fail(p, "--tmap %s: no --buf named '%s'", c->tmaps[i].name, p->tmap_buffer[i]);
    for (size_t i = 0; i < c->arg_count; i++) {
        run_arg_spec *a = &c->args[i];
        if (a->kind == RUN_ARG_BUFFER && (a->ref = find_buffer(c, p->arg_ref[i])) < 0)
            return fail(p, "--arg %s: no --buf named '%s'", a->text, p->arg_ref[i]);
        if (a->kind == RUN_ARG_TMAP) {
            a->ref = -1;
            for (size_t t = 0; t < c->tmap_count; t++)
                if (!strcmp(c->tmaps[t].name, p->arg_ref[i])) a->ref = (int)t;
            if (a->ref < 0) return fail(p, "--arg %s: no --tmap named '%s'", a->text, p->arg_ref[i]);
        }
    }
    for (size_t i = 0; i < c->out_count; i++)
        if ((c->outs[i].buffer = find_buffer(c, p->out_ref[i])) < 0)
            return fail(p, "--out %s: no --buf named '%s'", c->outs[i].path, p->out_ref[i]);
    for (size_t i = 0; i < c->expect_count; i++)
        if ((c->expects[i].buffer = find_buffer(c, p->expect_ref[i])) < 0)
            return fail(p, "--expect %s: no --buf named '%s'", c->expects[i].path, p->expect_ref[i]);
    return true;
}

static bool check_combination(parser *p)
{
    run_cli *c = p->cli;
    if (c->help || c->version) return true;
    if (!c->source) return fail(p, "no source file given (use - for stdin); see --help");
    if (strcmp(c->arch, "auto")) {
        asyncrt_arch arch;
        if (!asyncrt_arch_parse(c->arch, &arch))
            return fail(p, "--arch '%s': expected auto, sm_XY, sm_XYa, compute_XY or compute_XYa (e.g. sm_90)", c->arch);
    }
    if (c->compile_only) {
        if (!strcmp(c->arch, "auto"))
            return fail(p, "--compile-only needs an explicit --arch (e.g. sm_90 or compute_80): 'auto' reads the GPU");
        const char *run_only = c->out_count ? "--out" : c->expect_count ? "--expect" : c->repeat ? "--repeat" : NULL;
        if (run_only) return fail(p, "%s needs a run; it cannot be combined with --compile-only", run_only);
    }
    if (p->warmup_given && !c->repeat) return fail(p, "--warmup only applies with --repeat N");
    return true;
}

/* The value of an option given as "--opt VALUE" or "--opt=VALUE". */
static bool option_value(parser *p, int argc, char *const *argv, int *i, const char *name, const char **out)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (arg[n] == '=') return *out = arg + n + 1, true;
    if (*i + 1 >= argc) return fail(p, "%s needs a value; see --help", name);
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

static bool parse_one(parser *p, int argc, char *const *argv, int *i, bool *options_done)
{
    run_cli *c = p->cli;
    const char *a = argv[*i], *v = NULL;
    uint64_t n;
    if (*options_done || a[0] != '-' || !strcmp(a, "-")) {
        if (c->source) return fail(p, "unexpected argument '%s': the source file is already '%s'", a, c->source);
        c->source = a;
        return true;
    }
    if (!strcmp(a, "--")) return *options_done = true, true;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return c->help = true, true;
    if (!strcmp(a, "--version")) return c->version = true, true;
    if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) return c->verbose++, true;
    if (!strcmp(a, "-vv")) return c->verbose += 2, true;
    if (!strcmp(a, "--json")) return c->json = true, true;
    if (!strcmp(a, "--compile-only")) return c->compile_only = true, true;
    if (!strncmp(a, "-I", 2) || !strncmp(a, "-D", 2)) {
        bool inc = a[1] == 'I';
        v = a[2] ? a + 2 : NULL;
        if (!v && *i + 1 >= argc) return fail(p, "%s needs a value; see --help", a);
        if (!v) v = argv[++*i];
        return inc ? push(p, "-I", c->includes, &c->include_count, v) : push(p, "-D", c->defines, &c->define_count, v);
    }
    if (!strcmp(a, "-Xnvrtc") || is_opt(a, "--nvrtc-opt")) {
        if (!option_value(p, argc, argv, i, a[1] == 'X' ? "-Xnvrtc" : "--nvrtc-opt", &v)) return false;
        return push(p, "--nvrtc-opt", c->nvrtc_options, &c->nvrtc_option_count, v);
    }
    static const char *valued[] = {"--arch", "--device", "--std", "--kernel", "--grid", "--block", "--cluster",
                                   "--smem", "--buf", "--arg", "--tmap", "--out", "--expect", "--rtol", "--atol",
                                   "--repeat", "--warmup", "--bytes", "--emit-ptx", "--emit-cubin"};
    int k = -1;
    for (int j = 0; j < (int)(sizeof valued / sizeof valued[0]); j++)
        if (is_opt(a, valued[j])) k = j;
    if (k < 0) return fail(p, "unknown option '%s'; see --help", a);
    const char *name = valued[k];
    if (!option_value(p, argc, argv, i, name, &v)) return false;
    switch (k) {
    case 0: return *v ? (c->arch = v, true) : fail(p, "--arch needs a value");
    case 1:
        if (!parse_u64(v, strlen(v), &n) || n > 1024) return fail(p, "--device '%s': expected a device ordinal", v);
        c->device = (int)n;
        return true;
    case 2: return *v ? (c->std = v, true) : fail(p, "--std needs a value such as c++17");
    case 3: return *v ? (c->kernel = v, true) : fail(p, "--kernel needs a name");
    case 4: return parse_dim3(p, name, v, c->grid);
    case 5: return parse_dim3(p, name, v, c->block);
    case 6: return parse_dim3(p, name, v, c->cluster);
    case 7:
        if (!parse_bytes(v, &c->smem, UINT32_MAX))
            return fail(p, "--smem '%s': expected bytes, optionally with a K/KiB or M/MiB suffix (1024-based)", v);
        return true;
    case 8: return parse_buffer(p, v);
    case 9: return parse_arg(p, v);
    case 10: return parse_tmap(p, v);
    case 11: return parse_file_ref(p, "--out", v, c->outs, &c->out_count, p->out_ref);
    case 12: return parse_file_ref(p, "--expect", v, c->expects, &c->expect_count, p->expect_ref);
    case 13:
    case 14: {
        double d;
        if (!parse_double(v, &d) || d < 0) return fail(p, "%s '%s': expected a non-negative number", name, v);
        *(k == 13 ? &c->rtol : &c->atol) = d;
        return true;
    }
    case 15:
    case 16:
        if (!parse_u64(v, strlen(v), &n) || n > 1000000 || (k == 15 && n == 0))
            return fail(p, "%s '%s': expected an integer in %d..1000000", name, v, k == 15 ? 1 : 0);
        *(k == 15 ? &c->repeat : &c->warmup) = (unsigned)n;
        p->warmup_given |= k == 16;
        return true;
    case 17:
        if (!parse_bytes(v, &c->bytes, UINT64_MAX / 2) || !c->bytes)
            return fail(p, "--bytes '%s': expected a positive byte count (K/M suffixes allowed)", v);
        return true;
    case 18: return *v ? (c->emit_ptx = v, true) : fail(p, "--emit-ptx needs a file name");
    default: return *v ? (c->emit_cubin = v, true) : fail(p, "--emit-cubin needs a file name");
    }
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
    for (int i = 0; i < 3; i++) out->grid[i] = out->block[i] = 1;
    out->rtol = out->atol = -1;
    out->warmup = 1;
    bool ok = true, options_done = false;
    for (int i = 1; ok && i < argc; i++) {
        if (!argv[i]) ok = fail(p, "argv[%d] is NULL", i);
        else ok = parse_one(p, argc, argv, &i, &options_done);
    }
    ok = ok && resolve(p) && check_combination(p);
    free(p);
    return ok ? RUN_EXIT_OK : RUN_EXIT_USAGE;
}
