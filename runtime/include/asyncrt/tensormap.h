/* asyncrt tensormap: CUtensorMap descriptors for TMA (cp.async.bulk.tensor)
 * that explain every rejection.
 *
 * cuTensorMapEncodeTiled answers almost every mistake with
 * CUDA_ERROR_INVALID_VALUE. asyncrt_tensormap_validate checks the rules the
 * CUDA 13.0 driver enforces (documented or not: tensormap/RULES.md lists them;
 * the differential test confirms them against the real driver), plus the
 * documented ones asyncrt refuses although the driver does not, and names the
 * parameter, its value and the rule, e.g.
 *   box_dim[0] (10) x 4 bytes = 40 bytes: must be a multiple of 16 when interleave is NONE
 * asyncrt_tensormap_analyze also reports warnings: maps the driver accepts
 * that break a documented constraint or are hazards. Validation needs no
 * context, no driver and no GPU.
 *
 * Dimension order. Like the driver, a descriptor lists dimensions innermost
 * first: global_dim[0] is the contiguous one, global_stride[i] is the byte
 * step of dimension i+1, box_dim[0] is the innermost box extent, and TMA
 * coordinates in a kernel are given in the same order ({x, y, z}). numpy and
 * C arrays list shapes outermost first; asyncrt_tensormap_describe_dense takes
 * that order and reverses it for you.
 *
 * This header does not include <cuda.h>: the enums below have exactly the
 * numeric values of the driver's CUtensorMap* enums (checked at compile time
 * in the library), and asyncrt_tensor_map has CUtensorMap's size and
 * alignment, so it is passed by value where a kernel takes a
 * `const __grid_constant__ CUtensorMap`. */
#ifndef ASYNCRT_TENSORMAP_H
#define ASYNCRT_TENSORMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asyncrt/runtime.h"
#include "asyncrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ASYNCRT_TENSORMAP_MAX_RANK 5

/* CUtensorMapDataType. Names for parsing are in brackets. */
typedef enum asyncrt_tensormap_dtype {
    ASYNCRT_TENSORMAP_DTYPE_U8 = 0,             /* "u8",  1 byte */
    ASYNCRT_TENSORMAP_DTYPE_U16 = 1,            /* "u16", 2 bytes */
    ASYNCRT_TENSORMAP_DTYPE_U32 = 2,            /* "u32", 4 bytes */
    ASYNCRT_TENSORMAP_DTYPE_I32 = 3,            /* "i32", 4 bytes */
    ASYNCRT_TENSORMAP_DTYPE_U64 = 4,            /* "u64", 8 bytes */
    ASYNCRT_TENSORMAP_DTYPE_I64 = 5,            /* "i64", 8 bytes */
    ASYNCRT_TENSORMAP_DTYPE_F16 = 6,            /* "f16", 2 bytes */
    ASYNCRT_TENSORMAP_DTYPE_F32 = 7,            /* "f32", 4 bytes */
    ASYNCRT_TENSORMAP_DTYPE_F64 = 8,            /* "f64", 8 bytes */
    ASYNCRT_TENSORMAP_DTYPE_BF16 = 9,           /* "bf16", 2 bytes */
    ASYNCRT_TENSORMAP_DTYPE_F32_FTZ = 10,       /* "f32_ftz", 4 bytes */
    ASYNCRT_TENSORMAP_DTYPE_TF32 = 11,          /* "tf32", 4 bytes */
    ASYNCRT_TENSORMAP_DTYPE_TF32_FTZ = 12,      /* "tf32_ftz", 4 bytes */
    ASYNCRT_TENSORMAP_DTYPE_16U4_ALIGN8B = 13,  /* "16u4_align8b", 4 bits, packed */
    ASYNCRT_TENSORMAP_DTYPE_16U4_ALIGN16B = 14, /* "16u4_align16b", 4 bits, 8 B gap per 8 B in smem */
    ASYNCRT_TENSORMAP_DTYPE_16U6_ALIGN16B = 15, /* "16u6_align16b", 6 bits, 4 B gap per 12 B in smem */
    ASYNCRT_TENSORMAP_DTYPE_COUNT
} asyncrt_tensormap_dtype;

/* CUtensorMapInterleave: "none", "16b", "32b". */
typedef enum asyncrt_tensormap_interleave {
    ASYNCRT_TENSORMAP_INTERLEAVE_NONE = 0,
    ASYNCRT_TENSORMAP_INTERLEAVE_16B = 1,
    ASYNCRT_TENSORMAP_INTERLEAVE_32B = 2,
    ASYNCRT_TENSORMAP_INTERLEAVE_COUNT
} asyncrt_tensormap_interleave;

/* CUtensorMapSwizzle: "none", "32b", "64b", "128b", "128b_atom_32b",
 * "128b_atom_32b_flip_8b", "128b_atom_64b". */
typedef enum asyncrt_tensormap_swizzle {
    ASYNCRT_TENSORMAP_SWIZZLE_NONE = 0,
    ASYNCRT_TENSORMAP_SWIZZLE_32B = 1,                  /* 16 B chunks within a 32 B span */
    ASYNCRT_TENSORMAP_SWIZZLE_64B = 2,                  /* 16 B chunks within a 64 B span */
    ASYNCRT_TENSORMAP_SWIZZLE_128B = 3,                 /* 16 B chunks within a 128 B span */
    ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_32B = 4,        /* 32 B chunks within 128 B */
    ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5,/* same, 8 B halves swapped on odd rows */
    ASYNCRT_TENSORMAP_SWIZZLE_128B_ATOM_64B = 6,        /* 64 B chunks within 128 B */
    ASYNCRT_TENSORMAP_SWIZZLE_COUNT
} asyncrt_tensormap_swizzle;

/* CUtensorMapL2promotion: "none", "64b", "128b", "256b". */
typedef enum asyncrt_tensormap_l2_promotion {
    ASYNCRT_TENSORMAP_L2_PROMOTION_NONE = 0,
    ASYNCRT_TENSORMAP_L2_PROMOTION_64B = 1,
    ASYNCRT_TENSORMAP_L2_PROMOTION_128B = 2,
    ASYNCRT_TENSORMAP_L2_PROMOTION_256B = 3,
    ASYNCRT_TENSORMAP_L2_PROMOTION_COUNT
} asyncrt_tensormap_l2_promotion;

/* CUtensorMapFloatOOBfill: "zero" (alias "none"): out-of-bounds elements
 * read as zero; "nan": they read as a NaN that FMA treats as zero (floating
 * point types only). */
typedef enum asyncrt_tensormap_oob_fill {
    ASYNCRT_TENSORMAP_OOB_FILL_ZERO = 0,
    ASYNCRT_TENSORMAP_OOB_FILL_NAN = 1,
    ASYNCRT_TENSORMAP_OOB_FILL_COUNT
} asyncrt_tensormap_oob_fill;

/* An encoded map: CUtensorMap's size (128 B) and alignment (CUDA 13.0's
 * header aligns it to 128; the driver needs 64). Copy it into a kernel's
 * `const __grid_constant__ CUtensorMap` parameter by value. */
typedef struct asyncrt_tensor_map {
#if defined(__cplusplus)
    alignas(128) uint64_t opaque[16];
#else
    _Alignas(128) uint64_t opaque[16];
#endif
} asyncrt_tensor_map;

/* The parameters of cuTensorMapEncodeTiled, dimensions innermost first.
 * Its layout, and that of the im2col descriptor below, is frozen: they are
 * the driver's fixed parameter lists, one to one, and one sits inside the
 * other; a new encoding (as CUDA 12.8's im2col-wide) comes as a new struct
 * and new calls. */
typedef struct asyncrt_tensormap_desc {
    asyncrt_tensormap_dtype dtype;
    uint32_t rank;                                          /* 1..5 */
    asyncrt_deviceptr address;                              /* globalAddress */
    uint64_t global_dim[ASYNCRT_TENSORMAP_MAX_RANK];        /* elements; packed types count values */
    uint64_t global_stride[ASYNCRT_TENSORMAP_MAX_RANK - 1]; /* bytes; [i] steps dimension i+1 */
    uint32_t box_dim[ASYNCRT_TENSORMAP_MAX_RANK];           /* elements traversed per copy */
    uint32_t element_stride[ASYNCRT_TENSORMAP_MAX_RANK];    /* 1..8, [0] too (TMA ignores it without interleave) */
    asyncrt_tensormap_interleave interleave;
    asyncrt_tensormap_swizzle swizzle;
    asyncrt_tensormap_l2_promotion l2_promotion;
    asyncrt_tensormap_oob_fill oob_fill;
} asyncrt_tensormap_desc;

/* The parameters of cuTensorMapEncodeIm2col. tiled.box_dim is not used: the
 * box is channels_per_pixel x pixels_per_column. Corners are given for the
 * spatial dimensions innermost first (W, H, D): corner[i] belongs to
 * global_dim[i + 1]; rank 3 uses one, rank 4 two, rank 5 three. */
typedef struct asyncrt_tensormap_im2col_desc {
    asyncrt_tensormap_desc tiled;   /* rank 3..5; box_dim ignored */
    int lower_corner[3];            /* pixelBoxLowerCorner */
    int upper_corner[3];            /* pixelBoxUpperCorner */
    uint32_t channels_per_pixel;    /* 1..256 */
    uint32_t pixels_per_column;     /* 1..1024 */
} asyncrt_tensormap_im2col_desc;

/* ---- validation (pure: no context, no driver, no GPU) ------------------ */

/* ASYNCRT_SUCCESS, or ASYNCRT_ERROR_TENSORMAP_INVALID with the first broken
 * rule written into msg (which may be NULL; it is always NUL-terminated when
 * msg_size > 0). A NULL desc gives ASYNCRT_ERROR_INVALID_ARGUMENT. */
ASYNCRT_EXTERN asyncrt_status asyncrt_tensormap_validate(const asyncrt_tensormap_desc *desc, char *msg,
                                          size_t msg_size);
ASYNCRT_EXTERN asyncrt_status asyncrt_tensormap_validate_im2col(const asyncrt_tensormap_im2col_desc *desc,
                                                 char *msg, size_t msg_size);

/* Adds the rules of one architecture (sm = 10 * major + minor, e.g. 90):
 * tensor maps need sm_90 or newer (rule sm_tma: any other non-zero sm is
 * rejected); the 128B_ATOM swizzles and the packed 16U4/16U6 types need
 * sm_100 or newer. sm = 0 checks only the architecture-independent rules. */
ASYNCRT_EXTERN asyncrt_status asyncrt_tensormap_validate_for_sm(const asyncrt_tensormap_desc *desc, int sm,
                                                 char *msg, size_t msg_size);

/* ---- errors and warnings ----------------------------------------------- */

/* validate* report errors only: what the driver rejects, and what the
 * documentation forbids where asyncrt refuses it too (tensormap/RULES.md
 * lists which is which). Warnings are documented constraints the driver does
 * not enforce and hazards of a map the driver accepts, e.g. rows whose bytes
 * are not a multiple of 16 (a TMA store then writes past the row's end).
 * Every finding has a stable rule id ("row_bytes16", "box_smem", ...). */
#define ASYNCRT_TENSORMAP_MAX_WARNINGS 8

/* An element of an array (asyncrt_tensormap_report): its layout is frozen. */
typedef struct asyncrt_tensormap_finding {
    const char *rule;  /* stable rule id (a static string); NULL: no finding */
    char message[512]; /* names the parameter, its value and the rule */
} asyncrt_tensormap_finding;

typedef struct asyncrt_tensormap_check_options {
    /* Set it with ASYNCRT_TENSORMAP_CHECK_OPTIONS_INIT (or .size = sizeof(asyncrt_tensormap_check_options)): the
     * library reads only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
    int sm;                  /* target, 10 * major + minor; 0: any (architecture rules skipped) */
    uint64_t smem_per_block; /* the device's per-block opt-in shared memory in bytes
                                (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                asyncrt_device_info.shared_memory_per_block_optin); 0: unknown */
    bool warnings_as_errors; /* a warning fails the check (then also copied into error) */
} asyncrt_tensormap_check_options;
#define ASYNCRT_TENSORMAP_CHECK_OPTIONS_INIT ASYNCRT_SIZED_INIT(asyncrt_tensormap_check_options)

typedef struct asyncrt_tensormap_report {
    /* Set it with ASYNCRT_TENSORMAP_REPORT_INIT (or .size = sizeof(asyncrt_tensormap_report)): the
     * library writes only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
    asyncrt_tensormap_finding error; /* the first error (error.rule NULL when none) */
    unsigned warning_count;          /* warnings found; the first MAX_WARNINGS are kept */
    asyncrt_tensormap_finding warnings[ASYNCRT_TENSORMAP_MAX_WARNINGS];
} asyncrt_tensormap_report;
#define ASYNCRT_TENSORMAP_REPORT_INIT ASYNCRT_SIZED_INIT(asyncrt_tensormap_report)

/* The first error, else every warning. Warnings are looked for only when
 * there is no error. opts may be NULL (sm 0, no device limit, warnings
 * allowed). Returns ASYNCRT_SUCCESS when there is no error (warnings may be
 * present), ASYNCRT_ERROR_TENSORMAP_INVALID on an error or, with
 * warnings_as_errors, a warning; ASYNCRT_ERROR_INVALID_ARGUMENT for a NULL
 * desc or report, or a size either struct's rule refuses (the options' is
 * the report's error, rule "struct_size"). Pure, like validate. */
ASYNCRT_EXTERN asyncrt_status asyncrt_tensormap_analyze(const asyncrt_tensormap_desc *desc,
                                         const asyncrt_tensormap_check_options *opts,
                                         asyncrt_tensormap_report *report);
ASYNCRT_EXTERN asyncrt_status asyncrt_tensormap_analyze_im2col(const asyncrt_tensormap_im2col_desc *desc,
                                                const asyncrt_tensormap_check_options *opts,
                                                asyncrt_tensormap_report *report);

/* ---- encoding (needs the driver; the device's rules apply when one is open) */

/* Validates (the message goes to the context), then cuTensorMapEncodeTiled.
 * A rejection validation did not predict gives ASYNCRT_ERROR_TENSORMAP_INVALID
 * with the driver's error and every parameter printed. With a device open,
 * its architecture and per-block shared memory apply, and warnings are
 * logged at ASYNCRT_LOG=1 ("tensor map: warning [rule]: ..."); they never
 * fail an encode (call asyncrt_tensormap_analyze with warnings_as_errors
 * first for that). On Blackwell (sm_100..sm_12x) with a driver up to CUDA
 * 13.3, maps of tensors under 128 KiB get NVIDIA's published workaround for
 * a driver defect (bit 85 of the map cleared; tensormap/RULES.md); other
 * maps are the driver's bytes unchanged. */
ASYNCRT_EXTERN asyncrt_status asyncrt_tensormap_encode(asyncrt_context *ctx, const asyncrt_tensormap_desc *desc,
                                        asyncrt_tensor_map *out);
ASYNCRT_EXTERN asyncrt_status asyncrt_tensormap_encode_im2col(asyncrt_context *ctx,
                                               const asyncrt_tensormap_im2col_desc *desc,
                                               asyncrt_tensor_map *out);

/* cuTensorMapReplaceAddress: points an encoded map at another buffer of the
 * same shape. The address must be 16-byte aligned (32 for maps made with
 * INTERLEAVE_32B or an ALIGN16B type). */
ASYNCRT_EXTERN asyncrt_status asyncrt_tensormap_replace_address(asyncrt_context *ctx, asyncrt_tensor_map *map,
                                                 asyncrt_deviceptr address);

/* ---- helpers ----------------------------------------------------------- */

/* Describes a dense row-major tensor. shape and box are given OUTERMOST
 * first, like numpy (shape {rows, cols}); the descriptor gets them reversed
 * (global_dim[0] = cols) and global_stride derived from the shape (packed
 * types: bits x values / 8). Element strides are 1, interleave, swizzle and
 * L2 promotion NONE, OOB fill zero. Returns ASYNCRT_ERROR_INVALID_ARGUMENT
 * only for a NULL pointer or rank outside 1..5; everything else is left to
 * asyncrt_tensormap_validate (a stride too large to represent is set to
 * UINT64_MAX so that validation reports it). */
ASYNCRT_EXTERN asyncrt_status asyncrt_tensormap_describe_dense(asyncrt_tensormap_desc *out,
                                                asyncrt_tensormap_dtype dtype,
                                                asyncrt_deviceptr address, uint32_t rank,
                                                const uint64_t *shape, const uint32_t *box);

/* The swizzle whose span equals the inner box row (box_dim[0] elements of
 * dtype, as laid out in shared memory): 32B, 64B or 128B. That is the widest
 * swizzle the row fits, and the only one where every row fills whole spans;
 * any other row width gives NONE. */
ASYNCRT_EXTERN asyncrt_tensormap_swizzle asyncrt_tensormap_widest_swizzle(asyncrt_tensormap_dtype dtype,
                                                           uint32_t inner_box);

/* Size of one element in bits (4 for the 16U4 types, 6 for 16U6); 0 for an
 * unknown dtype. */
ASYNCRT_EXTERN unsigned asyncrt_tensormap_dtype_bits(asyncrt_tensormap_dtype dtype);

/* Bytes a box occupies in shared memory (the expect_tx count of one load):
 * the product of ceil(box_dim[i] / element_stride[i]) times the element size
 * (the ALIGN16B types take 16 bytes per 16 values there). 0 if invalid. */
ASYNCRT_EXTERN size_t asyncrt_tensormap_box_bytes(const asyncrt_tensormap_desc *desc);

/* Writes every parameter, one "name = value" per line, snprintf-style:
 * returns the length the full text needs; buf may be NULL when size is 0. */
ASYNCRT_EXTERN size_t asyncrt_tensormap_dump(const asyncrt_tensormap_desc *desc, char *buf, size_t size);
ASYNCRT_EXTERN size_t asyncrt_tensormap_dump_im2col(const asyncrt_tensormap_im2col_desc *desc, char *buf,
                                     size_t size);

/* Names <-> enums, for command lines. *_name returns the canonical lower-case
 * name, or NULL for a value out of range (so `for (v = 0; name(v); v++)`
 * lists the choices). *_parse is case-insensitive, accepts the names listed
 * at each enum above, and returns false (leaving *out alone) for anything
 * else. */
ASYNCRT_EXTERN const char *asyncrt_tensormap_dtype_name(asyncrt_tensormap_dtype value);
ASYNCRT_EXTERN bool asyncrt_tensormap_dtype_parse(const char *name, asyncrt_tensormap_dtype *out);
ASYNCRT_EXTERN const char *asyncrt_tensormap_interleave_name(asyncrt_tensormap_interleave value);
ASYNCRT_EXTERN bool asyncrt_tensormap_interleave_parse(const char *name, asyncrt_tensormap_interleave *out);
ASYNCRT_EXTERN const char *asyncrt_tensormap_swizzle_name(asyncrt_tensormap_swizzle value);
ASYNCRT_EXTERN bool asyncrt_tensormap_swizzle_parse(const char *name, asyncrt_tensormap_swizzle *out);
ASYNCRT_EXTERN const char *asyncrt_tensormap_l2_promotion_name(asyncrt_tensormap_l2_promotion value);
ASYNCRT_EXTERN bool asyncrt_tensormap_l2_promotion_parse(const char *name, asyncrt_tensormap_l2_promotion *out);
ASYNCRT_EXTERN const char *asyncrt_tensormap_oob_fill_name(asyncrt_tensormap_oob_fill value);
ASYNCRT_EXTERN bool asyncrt_tensormap_oob_fill_parse(const char *name, asyncrt_tensormap_oob_fill *out);

#ifdef __cplusplus
}
#endif
#endif
