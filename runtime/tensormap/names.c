/* Names of the tensor-map enums, for messages, dumps and command lines. */
#include <strings.h>

#include "asyncrt/tensormap.h"
#include "tensormap_rules.h"

static const char *const dtype_names[] = {
    "u8", "u16", "u32", "i32", "u64", "i64", "f16", "f32", "f64", "bf16", "f32_ftz", "tf32",
    "tf32_ftz", "16u4_align8b", "16u4_align16b", "16u6_align16b"};
static const unsigned dtype_bits[] = {8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 4, 6};
static const char *const interleave_names[] = {"none", "16b", "32b"};
static const char *const swizzle_names[] = {
    "none", "32b", "64b", "128b", "128b_atom_32b", "128b_atom_32b_flip_8b", "128b_atom_64b"};
static const char *const l2_names[] = {"none", "64b", "128b", "256b"};
static const char *const oob_names[] = {"zero", "nan"};

_Static_assert(sizeof dtype_names / sizeof *dtype_names == ASYNCRT_TENSORMAP_DTYPE_COUNT, "dtype names");
_Static_assert(sizeof dtype_bits / sizeof *dtype_bits == ASYNCRT_TENSORMAP_DTYPE_COUNT, "dtype bits");
_Static_assert(sizeof swizzle_names / sizeof *swizzle_names == ASYNCRT_TENSORMAP_SWIZZLE_COUNT, "swizzles");

#define COUNT(a) (sizeof(a) / sizeof *(a))

static const char *name_of(const char *const *names, size_t count, int value)
{
    return value >= 0 && (size_t)value < count ? names[value] : NULL;
}

static int parse(const char *const *names, size_t count, const char *name)
{
    if (!name) return -1;
    for (size_t i = 0; i < count; i++)
        if (strcasecmp(name, names[i]) == 0) return (int)i;
    return -1;
}

unsigned asyncrt_tensormap_dtype_bits(asyncrt_tensormap_dtype value)
{
    return (unsigned)value < COUNT(dtype_bits) ? dtype_bits[value] : 0;
}

const char *asyncrt_tensormap_dtype_name(asyncrt_tensormap_dtype value)
{
    return name_of(dtype_names, COUNT(dtype_names), (int)value);
}

bool asyncrt_tensormap_dtype_parse(const char *name, asyncrt_tensormap_dtype *out)
{
    int v = parse(dtype_names, COUNT(dtype_names), name);
    if (v < 0) return false;
    *out = (asyncrt_tensormap_dtype)v;
    return true;
}

const char *asyncrt_tensormap_interleave_name(asyncrt_tensormap_interleave value)
{
    return name_of(interleave_names, COUNT(interleave_names), (int)value);
}

bool asyncrt_tensormap_interleave_parse(const char *name, asyncrt_tensormap_interleave *out)
{
    int v = parse(interleave_names, COUNT(interleave_names), name);
    if (v < 0) return false;
    *out = (asyncrt_tensormap_interleave)v;
    return true;
}

const char *asyncrt_tensormap_swizzle_name(asyncrt_tensormap_swizzle value)
{
    return name_of(swizzle_names, COUNT(swizzle_names), (int)value);
}

bool asyncrt_tensormap_swizzle_parse(const char *name, asyncrt_tensormap_swizzle *out)
{
    int v = parse(swizzle_names, COUNT(swizzle_names), name);
    if (v < 0) return false;
    *out = (asyncrt_tensormap_swizzle)v;
    return true;
}

const char *asyncrt_tensormap_l2_promotion_name(asyncrt_tensormap_l2_promotion value)
{
    return name_of(l2_names, COUNT(l2_names), (int)value);
}

bool asyncrt_tensormap_l2_promotion_parse(const char *name, asyncrt_tensormap_l2_promotion *out)
{
    int v = parse(l2_names, COUNT(l2_names), name);
    if (v < 0) return false;
    *out = (asyncrt_tensormap_l2_promotion)v;
    return true;
}

const char *asyncrt_tensormap_oob_fill_name(asyncrt_tensormap_oob_fill value)
{
    return name_of(oob_names, COUNT(oob_names), (int)value);
}

bool asyncrt_tensormap_oob_fill_parse(const char *name, asyncrt_tensormap_oob_fill *out)
{
    int v = parse(oob_names, COUNT(oob_names), name);
    if (v < 0 && name && strcasecmp(name, "none") == 0) v = ASYNCRT_TENSORMAP_OOB_FILL_ZERO;
    if (v < 0) return false;
    *out = (asyncrt_tensormap_oob_fill)v;
    return true;
}

/* Here, beside the bit widths, so that rules.c and helpers.c both build on
 * it without calling each other. */
uint64_t asyncrt__tensormap_bytes_of(asyncrt_tensormap_dtype dtype, uint64_t count)
{
    uint64_t bits = asyncrt_tensormap_dtype_bits(dtype);
    if (bits % 8 == 0) {
        uint64_t size = bits / 8;
        return count > UINT64_MAX / size ? UINT64_MAX : count * size;
    }
    return count / 8 * bits + (count % 8 * bits + 7) / 8; /* no overflow for any count */
}
