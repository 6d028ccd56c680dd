/* asyncrt-run's command line: --arg TYPE:VALUE | buf:NAME[+N[B]] | tmap:NAME |
 * tmapptr:NAME | bytes:HEX | struct:T:V,... | null, and the encoder of the
 * bytes: and struct: values. */
#include "cli_parser.h"

#include <string.h>

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* bytes:HEX: pairs of hex digits, memory order; "0x" and '_' separators allowed. */
static bool parse_bytes_arg(run_cli_parser *p, run_arg_spec *a, const char *spec, const char *hex)
{
    size_t digits = 0;
    if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex += 2;
    for (const char *h = hex; *h; h++) {
        if (*h == '_') continue;
        if (hex_digit(*h) < 0)
            return run_cli_fail(p, "--arg %.60s%s: '%c' is not a hex digit: bytes:HEX takes pairs of hex digits in memory "
                                   "order (e.g. bytes:0100000002000000 for two little-endian i32 1 and 2)", spec, strlen(spec) > 60 ? "..." : "", *h);
        digits++;
    }
    if (!digits || digits % 2) return run_cli_fail(p, "--arg %.60s%s: bytes:HEX needs a whole number of bytes (an even, non-zero count of hex digits)", spec, strlen(spec) > 60 ? "..." : "");
    if (digits / 2 > RUN_MAX_ARG_BYTES) return run_cli_fail(p, "--arg %.60s%s: more than %d bytes", spec, strlen(spec) > 60 ? "..." : "", RUN_MAX_ARG_BYTES);
    a->kind = RUN_ARG_BYTES;
    a->payload = hex;
    a->size = digits / 2;
    a->align = 1;
    return true;
}

/* struct:T:V,T:V,...: fields at natural C alignment (each at a multiple of
 * its size), the whole padded to the largest field's alignment, as a C
 * compiler lays out struct { T a; T b; ... }. */
static bool parse_struct_arg(run_cli_parser *p, run_arg_spec *a, const char *spec, const char *fields)
{
    size_t offset = 0, align = 1;
    char why[200];
    for (const char *f = fields;;) {
        const char *comma = strchr(f, ','), *colon = strchr(f, ':');
        size_t len = comma ? (size_t)(comma - f) : strlen(f);
        run_dtype t;
        if (!colon || colon > f + len || !run_dtype_parse(f, (size_t)(colon - f), &t))
            return run_cli_fail(p, "--arg %.60s%s: field '%.*s': expected TYPE:VALUE with TYPE one of %s", spec, strlen(spec) > 60 ? "..." : "",
                                (int)(len < 60 ? len : 60), f, run_dtype_names());
        char value[128];
        size_t vlen = len - (size_t)(colon + 1 - f);
        if (vlen >= sizeof value) return run_cli_fail(p, "--arg %.60s%s: field value too long", spec, strlen(spec) > 60 ? "..." : "");
        memcpy(value, colon + 1, vlen);
        value[vlen] = '\0';
        long double v;
        if (!run_value_parse(t, value, &v, why, sizeof why)) return run_cli_fail(p, "--arg %.60s%s: %s", spec, strlen(spec) > 60 ? "..." : "", why);
        size_t size = run_dtype_size(t);
        offset = (offset + size - 1) / size * size;
        offset += size;
        if (size > align) align = size;
        if (offset > RUN_MAX_ARG_BYTES) return run_cli_fail(p, "--arg %.60s%s: more than %d bytes", spec, strlen(spec) > 60 ? "..." : "", RUN_MAX_ARG_BYTES);
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

bool run_cli_parse_arg(run_cli_parser *p, const char *spec)
{
    run_cli *c = p->cli;
    run_launch_spec *l = run_cli_launch(p);
    if (l->arg_count == RUN_MAX_ITEMS) return run_cli_fail(p, "more than %d --arg options in one launch", RUN_MAX_ITEMS);
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
        return run_cli_fail(p, "--arg '%s': expected TYPE:VALUE (e.g. f32:2.5), buf:NAME[+N[B]], tmap:NAME, tmapptr:NAME, "
                               "bytes:HEX, struct:T:V,... or null", spec);
    size_t head = (size_t)(colon - spec);
    const char *val = colon + 1;
    if (head == 3 && !strncmp(spec, "buf", 3)) {
        a->kind = RUN_ARG_BUFFER;
        const char *plus = strchr(val, '+');
        size_t name_len = plus ? (size_t)(plus - val) : strlen(val);
        if (!run_cli_take_name(p, "--arg", val, name_len, ref)) return false;
        if (plus) {
            size_t n = strlen(plus + 1);
            a->offset_in_bytes = n && plus[n] == 'B';
            if (!run_parse_u64(plus + 1, n - a->offset_in_bytes, &a->offset))
                return run_cli_fail(p, "--arg %s: offset '%s': expected buf:NAME+N (N elements of the buffer's dtype) or "
                                       "buf:NAME+NB (N bytes), N decimal or 0x hex", spec, plus + 1);
        }
    } else if ((head == 4 && !strncmp(spec, "tmap", 4)) || (head == 7 && !strncmp(spec, "tmapptr", 7))) {
        a->kind = head == 4 ? RUN_ARG_TMAP : RUN_ARG_TMAP_PTR;
        if (head == 4) a->size = sizeof(asyncrt_tensor_map), a->align = 64;
        if (!run_cli_take_name(p, "--arg", val, strlen(val), ref)) return false;
    } else if (head == 5 && !strncmp(spec, "bytes", 5)) {
        if (!parse_bytes_arg(p, a, spec, val)) return false;
    } else if (head == 6 && !strncmp(spec, "struct", 6)) {
        if (!parse_struct_arg(p, a, spec, val)) return false;
    } else {
        char why[200];
        a->kind = RUN_ARG_SCALAR;
        if (!run_dtype_parse(spec, head, &a->dtype))
            return run_cli_fail(p, "--arg %s: unknown type '%.*s': use buf:, tmap:, tmapptr:, bytes:, struct:, null or one of %s",
                                spec, (int)(head < 40 ? head : 40), spec, run_dtype_names());
        if (!run_value_parse(a->dtype, val, &a->value, why, sizeof why)) return run_cli_fail(p, "--arg %s: %s", spec, why);
        a->size = a->align = run_dtype_size(a->dtype);
    }
    l->arg_count++;
    return true;
}
