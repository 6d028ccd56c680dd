/* Element-wise comparison with tolerances. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void run_check_default_tolerance(run_dtype t, double *rtol, double *atol)
{
    switch (t) {
    case RUN_F16: *rtol = 1e-3, *atol = 1e-3; break;
    case RUN_BF16: *rtol = 1e-2, *atol = 1e-2; break;
    case RUN_F32: case RUN_F64: *rtol = 1e-5, *atol = 1e-6; break;
    default: *rtol = 0, *atol = 0; break;
    }
}

void run_check_compare(run_check *out, run_dtype dtype, const void *got, run_dtype edtype, const void *expected,
                       uint64_t count, double rtol, double atol)
{
    size_t gs = run_dtype_size(dtype), es = run_dtype_size(edtype);
    out->checked = count;
    out->mismatches = 0;
    out->max_abs_err = 0;
    out->shown = 0;
    out->rtol = rtol;
    out->atol = atol;
    for (uint64_t i = 0; i < count; i++) {
        long double g = run_value_load(dtype, (const char *)got + i * gs);
        long double e = run_value_load(edtype, (const char *)expected + i * es);
        bool ok;
        if (isnan(g) || isnan(e)) ok = isnan(g) && isnan(e);
        else if (isinf(g) || isinf(e)) ok = g == e;
        else {
            long double diff = fabsl(g - e);
            if (diff > out->max_abs_err) out->max_abs_err = diff;
            ok = diff <= (long double)atol + (long double)rtol * fabsl(e);
        }
        if (ok) continue;
        if (out->shown < RUN_CHECK_SHOWN) out->first[out->shown++] = (run_mismatch){i, g, e};
        out->mismatches++;
    }
}

void run_check_format_index(const run_buffer *b, uint64_t index, char *buf, size_t size)
{
    uint64_t idx[RUN_MAX_RANK];
    int rank = b->rank > 0 ? b->rank : 1;
    for (int d = rank - 1; d >= 0; d--) {
        uint64_t extent = b->rank > 0 && b->shape[d] ? b->shape[d] : 1;
        idx[d] = b->rank > 0 ? index % extent : index;
        index = b->rank > 0 ? index / extent : 0;
    }
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < rank && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%llu", d ? "," : "", (unsigned long long)idx[d]);
    if (used < size) snprintf(buf + used, size - used, "]");
}
