/* Target selection: which sm_XY / compute_XY a compile is for. The choice is
 * a pure function of the device, the driver and NVRTC, so it is tested with
 * tables of imaginary machines. */
#ifndef ASYNCRT_ARCH_H
#define ASYNCRT_ARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/status.h"

typedef struct asyncrt__arch {
    int number;   /* 90 for sm_90 */
    char suffix;  /* 0, 'a' (arch-specific) or 'f' (family-specific) */
    bool ptx;     /* compute_XY (PTX, JIT-compiled by the driver) rather than sm_XY (CUBIN) */
} asyncrt__arch;

/* Parses "sm_90", "sm_90a", "compute_80", "compute_100f"; false if malformed. */
bool asyncrt__arch_parse(const char *text, asyncrt__arch *out);
void asyncrt__arch_format(const asyncrt__arch *arch, char *buf, size_t size);

/* `auto`, by CUDA's compatibility rules (versions are major*1000+minor*10):
 *   - NVRTC of the driver's major version (any minor) or an older one that
 *     knows the device's arch: a CUBIN for it (sm_XY);
 *   - NVRTC that does not know it and is not newer than the driver: PTX for
 *     the newest arch NVRTC knows below the device (compute_XY);
 *   - otherwise ASYNCRT_ERROR_VERSION_MISMATCH before anything is compiled:
 *     NVRTC of a newer major than the driver, or one that does not know the
 *     device and is newer than the driver (its PTX would be refused);
 *   - ASYNCRT_ERROR_UNSUPPORTED_ARCH for a device older than every arch.
 * `why` gets the one sentence that states the rule that applied, naming both
 * versions (and, for an error, what to install): every report of the choice
 * (ASYNCRT_LOG=1, asyncrt_program_arch_reason, asyncrt-run -v,
 * asyncrt-probe --arch-matrix) prints this sentence. */
asyncrt_status asyncrt__arch_select_auto(int cc_major, int cc_minor, int driver_version,
                                        int nvrtc_version, const int *supported, size_t count,
                                        asyncrt__arch *out, char *why, size_t why_size);

/* An explicit target must be one NVRTC supports; the message lists those. */
asyncrt_status asyncrt__arch_check(const asyncrt__arch *arch, const int *supported, size_t count,
                                  char *why, size_t why_size);

/* What decides whether a program NVRTC builds can be loaded on a device. */
typedef struct asyncrt_load_facts {
    int cc_major, cc_minor;  /* the device's */
    int driver_version;      /* 13000; 0: no driver known (nothing is refused) */
    int nvrtc_version;       /* of the NVRTC that builds it */
    const int *supported;    /* that NVRTC's archs */
    size_t count;
    /* An NVRTC the search found that is not newer than the driver (path and
     * version), to name in the advice; NULL: none found. */
    const char *older_nvrtc;
    int older_version;
} asyncrt_load_facts;

/* The rule for a target that is to be loaded, beside auto's (same
 * compatibility rules): PTX only when NVRTC is not newer than the driver,
 * anything only when NVRTC is not of a newer major version. Otherwise
 * ASYNCRT_ERROR_VERSION_MISMATCH, and `why` gets the one sentence naming
 * both versions, the PTX ISA versions where known (NVRTC 13.1 writes 9.1,
 * the 13.0 driver reads up to 9.0), and what to do: the CUBIN that loads on
 * this device, or an NVRTC not newer than the driver (ASYNCRT_NVRTC=...).
 * SUCCESS with `why` saying why the driver takes the PTX, or "" for a CUBIN
 * or when no driver is known. Pure; the caller decides that the program is
 * to be loaded (target.h). */
asyncrt_status asyncrt__arch_check_load(const asyncrt__arch *arch, const asyncrt_load_facts *f, char *why,
                                       size_t why_size);

/* After a compile for `tried` failed with NVRTC log `log`: when ptxas said
 * the target lacks an instruction the source uses ("Instruction 'wgmma.fence'
 * not supported on .target 'sm_90'"), either returns true with *retry set to
 * the arch-specific sm_XYa (only when the target came from `auto`, so the
 * device is exactly XY, and NVRTC supports XY >= 90), or returns false with a
 * hint in `hint` saying what to do. Returns false with hint "" for any other
 * failure. Pure, so it is tested on tables. */
bool asyncrt__arch_after_failure(const asyncrt__arch *tried, bool from_auto, const int *supported,
                                size_t count, const char *log, asyncrt__arch *retry, char *hint,
                                size_t hint_size);

/* NVRTC's supported arch numbers, ascending; returns the count (0 on error): target_api.c. */
size_t asyncrt__nvrtc_supported_archs(int *out, size_t capacity);


#endif
