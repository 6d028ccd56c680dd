/* Element types: the table, text parsing and value conversion. */
#include "dtype.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
    bool is_float, is_signed;
} types[RUN_DTYPE_COUNT] = {
    [RUN_I8] = {"i8", 1, false, true},     [RUN_I16] = {"i16", 2, false, true},
    [RUN_I32] = {"i32", 4, false, true},   [RUN_I64] = {"i64", 8, false, true},
    [RUN_U8] = {"u8", 1, false, false},    [RUN_U16] = {"u16", 2, false, false},
    [RUN_U32] = {"u32", 4, false, false},  [RUN_U64] = {"u64", 8, false, false},
    [RUN_F16] = {"f16", 2, true, true},    [RUN_BF16] = {"bf16", 2, true, true},
    [RUN_F32] = {"f32", 4, true, true},    [RUN_F64] = {"f64", 8, true, true},
};

/* C spellings people type without thinking. */
static const struct {
    const char *alias;
    run_dtype type;
} aliases[] = {
    {"char", RUN_I8},      {"int8", RUN_I8},     {"short", RUN_I16},   {"int16", RUN_I16},
    {"int", RUN_I32},      {"int32", RUN_I32},   {"long", RUN_I64},    {"int64", RUN_I64},
    {"uchar", RUN_U8},     {"uint8", RUN_U8},    {"ushort", RUN_U16},  {"uint16", RUN_U16},
    {"unsigned", RUN_U32}, {"uint", RUN_U32},    {"uint32", RUN_U32},  {"size_t", RUN_U64},
    {"ulong", RUN_U64},    {"uint64", RUN_U64},  {"half", RUN_F16},    {"float16", RUN_F16},
    {"bfloat16", RUN_BF16}, {"float", RUN_F32},  {"float32", RUN_F32}, {"double", RUN_F64},
    {"float64", RUN_F64},
};

static bool same(const char *text, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(text, name, len) == 0;
}

bool run_dtype_parse(const char *text, size_t len, run_dtype *out)
{
    for (int i = 0; i < RUN_DTYPE_COUNT; i++)
        if (same(text, len, types[i].name)) {
            *out = (run_dtype)i;
            return true;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (same(text, len, aliases[i].alias)) {
            *out = aliases[i].type;
            return true;
        }
    return false;
}

const char *run_dtype_name(run_dtype t) { return t < RUN_DTYPE_COUNT ? types[t].name : "?"; }
size_t run_dtype_size(run_dtype t) { return t < RUN_DTYPE_COUNT ? types[t].size : 0; }
bool run_dtype_is_float(run_dtype t) { return t < RUN_DTYPE_COUNT && types[t].is_float; }
bool run_dtype_is_signed(run_dtype t) { return t < RUN_DTYPE_COUNT && types[t].is_signed; }
const char *run_dtype_names(void) { return "i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64"; }

static void int_range(run_dtype t, long double *lo, long double *hi)
{
    int bits = (int)run_dtype_size(t) * 8;
    long double span = ldexpl(1.0L, bits);
    *lo = run_dtype_is_signed(t) ? -span / 2 : 0;
    *hi = run_dtype_is_signed(t) ? span / 2 - 1 : span - 1;
}

/* The largest finite value of a float type. */
static long double float_max(run_dtype t)
{
    switch (t) {
    case RUN_F16: return 65504.0L;
    case RUN_BF16: return 0x1.fep127L;
    case RUN_F32: return 0x1.fffffep127L;
    default: return 0x1.fffffffffffffp1023L;
    }
}

bool run_value_fits(run_dtype t, long double v, char *err, size_t err_size)
{
    if (run_dtype_is_float(t)) {
        if (isnan(v) || isinf(v)) return true; /* every float type holds NaN and infinities */
        /* Values that round to infinity do not fit; rounding to nearest keeps
         * up to half an ulp above the maximum, which is allowed. */
        char probe[8];
        run_value_store(t, v, probe);
        if (!isinf(run_value_load(t, probe))) return true;
        snprintf(err, err_size, "%.9Lg overflows %s (largest finite value %.9Lg)", v, run_dtype_name(t), float_max(t));
        return false;
    }
    long double lo, hi;
    int_range(t, &lo, &hi);
    if (isnan(v) || isinf(v)) {
        snprintf(err, err_size, "%Lg cannot be stored in %s", v, run_dtype_name(t));
        return false;
    }
    if (truncl(v) < lo || truncl(v) > hi) {
        snprintf(err, err_size, "%.0Lf is out of range for %s (%.0Lf..%.0Lf)", v, run_dtype_name(t), lo, hi);
        return false;
    }
    return true;
}

bool run_value_parse(run_dtype t, const char *text, long double *out, char *err, size_t err_size)
{
    char *end = NULL;
    errno = 0;
    if (!*text) {
        snprintf(err, err_size, "empty %s value", run_dtype_name(t));
        return false;
    }
    if (run_dtype_is_float(t)) {
        long double v = strtold(text, &end);
        if (*end || end == text || isspace((unsigned char)text[0])) {
            snprintf(err, err_size, "'%s' is not a %s number", text, run_dtype_name(t));
            return false;
        }
        if (!run_value_fits(t, v, err, err_size)) return false;
        *out = v;
        return true;
    }
    /* Decimal (leading zeros do not make it octal) or 0x hex. */
    const char *digits = text + (text[0] == '-');
    int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
    long double lo, hi, v = 0;
    if (!(isdigit((unsigned char)digits[0]))) end = (char *)text;
    else if (text[0] == '-') v = (long double)strtoll(text, &end, base);
    else v = (long double)strtoull(text, &end, base);
    if (*end || end == text || !isdigit((unsigned char)digits[0])) {
        snprintf(err, err_size, "'%s' is not a %s integer (decimal or 0x hex)", text, run_dtype_name(t));
        return false;
    }
    int_range(t, &lo, &hi);
    if (errno == ERANGE || v < lo || v > hi) {
        snprintf(err, err_size, "%s is out of range for %s (%.0Lf..%.0Lf)", text, run_dtype_name(t), lo, hi);
        return false;
    }
    *out = v;
    return true;
}

uint16_t run_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xff) return sign | 0x7c00u | (man ? 0x200u : 0); /* inf, quiet NaN */
    int e = (int)exp - 127 + 15;
    if (e >= 31) return sign | 0x7c00u;
    if (e <= 0) { /* subnormal half, or zero */
        if (e < -10) return sign;
        man |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = man >> shift, rest = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1))) half++;
        return sign | (uint16_t)half;
    }
    uint32_t half = ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) half++; /* may carry into inf: correct */
    return sign | (uint16_t)half;
}

float run_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, x;
    if (exp == 31) x = sign | 0x7f800000u | (man << 13);
    else if (exp) x = sign | ((exp + 112) << 23) | (man << 13);
    else if (!man) x = sign;
    else {
        float f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

uint16_t run_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float run_bf16_to_f32(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

void run_value_store(run_dtype t, long double v, void *dst)
{
    if (run_dtype_is_float(t)) {
        float f = (float)v;
        uint16_t h;
        double d = (double)v;
        switch (t) {
        case RUN_F16: h = run_f32_to_f16(f); memcpy(dst, &h, 2); break;
        case RUN_BF16: h = run_f32_to_bf16(f); memcpy(dst, &h, 2); break;
        case RUN_F32: memcpy(dst, &f, 4); break;
        default: memcpy(dst, &d, 8); break;
        }
        return;
    }
    long double lo, hi;
    int_range(t, &lo, &hi);
    v = isnan(v) ? 0 : truncl(v);
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    if (run_dtype_is_signed(t)) {
        int64_t s = (int64_t)v;
        int8_t s8 = (int8_t)s;
        int16_t s16 = (int16_t)s;
        int32_t s32 = (int32_t)s;
        switch (t) {
        case RUN_I8: memcpy(dst, &s8, 1); break;
        case RUN_I16: memcpy(dst, &s16, 2); break;
        case RUN_I32: memcpy(dst, &s32, 4); break;
        default: memcpy(dst, &s, 8); break;
        }
    } else {
        uint64_t u = (uint64_t)v;
        uint8_t u8 = (uint8_t)u;
        uint16_t u16 = (uint16_t)u;
        uint32_t u32 = (uint32_t)u;
        switch (t) {
        case RUN_U8: memcpy(dst, &u8, 1); break;
        case RUN_U16: memcpy(dst, &u16, 2); break;
        case RUN_U32: memcpy(dst, &u32, 4); break;
        default: memcpy(dst, &u, 8); break;
        }
    }
}

long double run_value_load(run_dtype t, const void *src)
{
    union {
        int8_t i8; int16_t i16; int32_t i32; int64_t i64;
        uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
        float f32; double f64;
    } v;
    memcpy(&v, src, run_dtype_size(t));
    switch (t) {
    case RUN_I8: return v.i8;
    case RUN_I16: return v.i16;
    case RUN_I32: return v.i32;
    case RUN_I64: return v.i64;
    case RUN_U8: return v.u8;
    case RUN_U16: return v.u16;
    case RUN_U32: return v.u32;
    case RUN_U64: return v.u64;
    case RUN_F16: return run_f16_to_f32(v.u16);
    case RUN_BF16: return run_bf16_to_f32(v.u16);
    case RUN_F32: return v.f32;
    default: return v.f64;
    }
}
