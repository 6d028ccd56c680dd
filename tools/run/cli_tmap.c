/* asyncrt-run's command line: --tmap NAME=BUFFER:box=...[:KEY=VALUE]...,
 * dispatched by key from one table (k_tmap_keys). */
#include "cli_parser.h"

#include <stdio.h>
#include <string.h>

static bool tmap_enum(run_cli_parser *p, const char *spec, const char *key, const char *val, bool ok,
                      const char *(*name)(int))
{
    if (ok) return true;
    char list[256] = "";
    size_t used = 0;
    for (int v = 0; name(v) && used < sizeof list; v++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", v ? ", " : "", name(v));
    return run_cli_fail(p, "--tmap %s: %s '%s' is unknown: use one of %s", spec, key, val, list);
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
static bool tmap_per_dim(run_cli_parser *p, const char *spec, const char *key, const char *val, size_t vlen, uint64_t *out,
                         int *count, uint64_t hi)
{
    if (run_cli_parse_list(val, vlen, ",", out, RUN_MAX_TMAP_RANK, count, 0, hi)) return true;
    return run_cli_fail(p, "--tmap %s: %s: expected 1 to %d comma-separated integers, innermost first", spec, key,
                        RUN_MAX_TMAP_RANK);
}

static bool tmap_box(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word)
{
    return (void)word, tmap_per_dim(p, spec, "box", val, vlen, t->box, &t->rank, UINT32_MAX);
}

static bool tmap_dims(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word)
{
    return (void)word, tmap_per_dim(p, spec, "dims", val, vlen, t->dims, &t->dims_rank, UINT64_MAX);
}

static bool tmap_strides(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen,
                         const char *word)
{
    (void)word;
    if (!run_cli_parse_list(val, vlen, ",", t->strides, RUN_MAX_TMAP_RANK - 1, &t->strides_rank, 0, UINT64_MAX))
        return run_cli_fail(p, "--tmap %s: strides: expected up to %d comma-separated byte counts (for dimensions "
                               "1.. rank-1)", spec, RUN_MAX_TMAP_RANK - 1);
    return true;
}

static bool tmap_estrides(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen,
                          const char *word)
{
    return (void)word, tmap_per_dim(p, spec, "estrides", val, vlen, t->estrides, &t->estrides_rank, UINT32_MAX);
}

static bool tmap_dtype(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word)
{
    (void)val, (void)vlen;
    t->has_dtype = true;
    return tmap_enum(p, spec, "dtype", word, asyncrt_tensormap_dtype_parse(word, &t->dtype), dtype_name);
}

static bool tmap_swizzle(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen,
                         const char *word)
{
    (void)val, (void)vlen;
    return tmap_enum(p, spec, "swizzle", word, asyncrt_tensormap_swizzle_parse(word, &t->swizzle), swizzle_name);
}

static bool tmap_interleave(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen,
                            const char *word)
{
    (void)val, (void)vlen;
    return tmap_enum(p, spec, "interleave", word, asyncrt_tensormap_interleave_parse(word, &t->interleave),
                     interleave_name);
}

static bool tmap_l2(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word)
{
    (void)val, (void)vlen;
    return tmap_enum(p, spec, "l2", word, asyncrt_tensormap_l2_promotion_parse(word, &t->l2), l2_name);
}

static bool tmap_oob(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word)
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
    bool (*take)(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *val, size_t vlen, const char *word);
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

static bool tmap_field(run_cli_parser *p, run_tmap_spec *t, const char *spec, const char *field, size_t len,
                       unsigned *seen)
{
    const char *eq = memchr(field, '=', len);
    size_t klen = eq ? (size_t)(eq - field) : len;
    const struct tmap_key *key = NULL;
    for (size_t i = 0; i < sizeof k_tmap_keys / sizeof k_tmap_keys[0]; i++)
        if (strlen(k_tmap_keys[i].name) == klen && !strncmp(field, k_tmap_keys[i].name, klen)) key = &k_tmap_keys[i];
    if (!key || !eq)
        return run_cli_fail(p, "--tmap %s: '%.*s' is not KEY=VALUE with KEY one of box, dims, strides, estrides, "
                               "dtype, swizzle, interleave, l2, oob", spec, (int)(len < 80 ? len : 80), field);
    unsigned bit = 1u << (key - k_tmap_keys);
    if (*seen & bit) return run_cli_fail(p, "--tmap %s: %s is given twice", spec, key->name);
    *seen |= bit;
    const char *val = eq + 1;
    size_t vlen = len - klen - 1;
    char word[64] = "";
    if (key->word) {
        if (vlen >= sizeof word) return run_cli_fail(p, "--tmap %s: %s value is too long", spec, key->name);
        memcpy(word, val, vlen);
        word[vlen] = '\0';
    }
    return key->take(p, t, spec, val, vlen, word);
}

bool run_cli_parse_tmap(run_cli_parser *p, const char *spec)
{
    run_cli *c = p->cli;
    if (c->tmap_count == RUN_MAX_ITEMS) return run_cli_fail(p, "more than %d --tmap options", RUN_MAX_ITEMS);
    run_tmap_spec *t = &c->tmaps[c->tmap_count];
    memset(t, 0, sizeof *t);
    t->swizzle = ASYNCRT_TENSORMAP_SWIZZLE_NONE;
    t->interleave = ASYNCRT_TENSORMAP_INTERLEAVE_NONE;
    t->l2 = ASYNCRT_TENSORMAP_L2_PROMOTION_NONE;
    t->oob = ASYNCRT_TENSORMAP_OOB_FILL_ZERO;
    const char *eq = strchr(spec, '='), *colon = eq ? strchr(eq, ':') : NULL;
    if (!eq || !colon)
        return run_cli_fail(p, "--tmap '%s': expected NAME=BUFFER:box=B0[,B1...][:KEY=VALUE...]", spec);
    if (!run_cli_take_name(p, "--tmap", spec, (size_t)(eq - spec), t->name) ||
        !run_cli_take_name(p, "--tmap buffer", eq + 1, (size_t)(colon - eq - 1), p->tmap_buffer[c->tmap_count]))
        return false;
    for (size_t i = 0; i < c->tmap_count; i++)
        if (!strcmp(c->tmaps[i].name, t->name)) return run_cli_fail(p, "--tmap %s: tensor map '%s' is defined twice", spec, t->name);
    unsigned seen = 0;
    for (const char *f = colon + 1;;) {
        const char *next = strchr(f, ':');
        size_t len = next ? (size_t)(next - f) : strlen(f);
        if (!tmap_field(p, t, spec, f, len, &seen)) return false;
        if (!next) break;
        f = next + 1;
    }
    if (!(seen & 1u << TMAP_BOX)) return run_cli_fail(p, "--tmap %s: box=... is required", spec);
    if (t->dims_rank && t->dims_rank != t->rank)
        return run_cli_fail(p, "--tmap %s: dims has %d entries but box has %d", spec, t->dims_rank, t->rank);
    if (t->strides_rank && t->strides_rank != t->rank - 1)
        return run_cli_fail(p, "--tmap %s: strides needs %d entries (one per dimension after the first), got %d", spec,
                            t->rank - 1, t->strides_rank);
    if (t->estrides_rank && t->estrides_rank != t->rank)
        return run_cli_fail(p, "--tmap %s: estrides has %d entries but box has %d", spec, t->estrides_rank, t->rank);
    c->tmap_count++;
    return true;
}
