/* NVIDIA's workaround for a driver defect in tensor maps of small tensors on
 * Blackwell (tensormap/RULES.md, "Small tensors on Blackwell", has the
 * sources). The driver sets bit 85 of the encoded map (bit 21 of its second
 * 64-bit word), an OOB address-generation mode that assumes at least 128 KiB
 * of memory behind the map's address; for a smaller tensor TMA may then touch
 * memory past the allocation (illegal address, MMU faults). NVIDIA's driver
 * release notes (595.71.05, known issues) give the fix: clear that bit after
 * encoding. CUTLASS and Triton do so for tensors under 128 KiB with drivers
 * up to 13.1 on every architecture; NVIDIA says the bit is Blackwell's
 * layout, so asyncrt leaves other architectures' maps (the H100's) alone. */
#include "tensormap_rules.h"

/* The newest driver (cuDriverGetVersion) known to need the fix: CUTLASS and
 * Triton stop at 13010, but the known issue is listed for the 595 (13.2)
 * driver and Triton PR #11011 reports 13.2 / 13.3 drivers still affected. */
#define SMALL_TENSOR_FIX_LAST_DRIVER 13030
#define SMALL_TENSOR_BYTES (UINT64_C(128) * 1024)
#define BIT85_WORD 1
#define BIT85_MASK (UINT64_C(1) << 21)

uint64_t asyncrt__tensormap_span_bytes(const asyncrt_tensormap_desc *d)
{
    if (!d || d->rank < 1 || d->rank > ASYNCRT_TENSORMAP_MAX_RANK) return UINT64_MAX;
    uint64_t span = asyncrt__tensormap_bytes_of(d->dtype, d->global_dim[0]);
    for (uint32_t i = 1; i < d->rank; i++) {
        uint64_t n = d->global_dim[i] ? d->global_dim[i] - 1 : 0, s = d->global_stride[i - 1];
        if (s && n > (UINT64_MAX - span) / s) return UINT64_MAX;
        span += n * s;
    }
    return span;
}

bool asyncrt__tensormap_needs_small_tensor_fix(int sm, int driver_version, uint64_t span_bytes)
{
    bool blackwell = sm >= 100 && sm < 130; /* sm_100, 103, 110, 120, 121 */
    return blackwell && driver_version > 0 && driver_version <= SMALL_TENSOR_FIX_LAST_DRIVER &&
           span_bytes < SMALL_TENSOR_BYTES;
}

void asyncrt__tensormap_apply_small_tensor_fix(asyncrt_tensor_map *map)
{
    map->opaque[BIT85_WORD] &= ~BIT85_MASK;
}

bool asyncrt__tensormap_bit85(const asyncrt_tensor_map *map)
{
    return (map->opaque[BIT85_WORD] & BIT85_MASK) != 0;
}
