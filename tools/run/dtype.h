/* Element types of scalars and buffers: names, sizes, text parsing and
 * conversion to and from a common value (long double holds every i64/u64
 * exactly and every float type). */
#ifndef ASYNCRT_RUN_DTYPE_H
#define ASYNCRT_RUN_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum run_dtype {
    RUN_I8, RUN_I16, RUN_I32, RUN_I64,
    RUN_U8, RUN_U16, RUN_U32, RUN_U64,
    RUN_F16, RUN_BF16, RUN_F32, RUN_F64,
    RUN_DTYPE_COUNT
} run_dtype;

/* "f32", "i64", ... and the C aliases listed in --help; false if unknown. */
bool run_dtype_parse(const char *text, size_t len, run_dtype *out);
const char *run_dtype_name(run_dtype t);
size_t run_dtype_size(run_dtype t);
bool run_dtype_is_float(run_dtype t);
bool run_dtype_is_signed(run_dtype t);
/* A comma-separated list of the accepted names, for messages. */
const char *run_dtype_names(void);

/* Parses `text` as a value of type t (integers: decimal, 0x hex, range
 * checked; floats: strtod syntax, inf, nan, refused when a finite value
 * would overflow the type) into *out (exact for integers). */
bool run_value_parse(run_dtype t, const char *text, long double *out, char *err, size_t err_size);

/* Whether t holds v: integers need a finite value whose integer part is in
 * range; floats need a value that does not round to infinity (NaN and
 * infinities themselves fit). False with a message naming the value and the
 * limit. */
bool run_value_fits(run_dtype t, long double v, char *err, size_t err_size);

/* Converts to/from the element's bytes (host order). Floats round to
 * nearest even; integers truncate toward zero and saturate (NaN gives 0). */
void run_value_store(run_dtype t, long double v, void *dst);
long double run_value_load(run_dtype t, const void *src);

uint16_t run_f32_to_f16(float f);
float run_f16_to_f32(uint16_t h);
uint16_t run_f32_to_bf16(float f);
float run_bf16_to_f32(uint16_t b);

#endif
