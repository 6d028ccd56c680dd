/* Target names and the choice of one: pure functions of the device, the
 * driver and NVRTC (arch.h). */
#include "arch.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_loader.h"


bool asyncrt__arch_parse(const char *text, asyncrt__arch *out)
{
    const char *p;
    memset(out, 0, sizeof *out);
    if (strncmp(text, "sm_", 3) == 0) {
        p = text + 3;
    } else if (strncmp(text, "compute_", 8) == 0) {
        p = text + 8;
        out->ptx = true;
    } else {
        return false;
    }
    int digits = 0;
    while (p[digits] >= '0' && p[digits] <= '9') digits++;
    if (digits < 2 || digits > 3 || p[0] == '0') return false;
    out->number = atoi(p);
    p += digits;
    if (*p == 'a' || *p == 'f') out->suffix = *p++;
    return *p == '\0';
}

void asyncrt__arch_format(const asyncrt__arch *arch, char *buf, size_t size)
{
    if (arch->suffix)
        snprintf(buf, size, "%s_%d%c", arch->ptx ? "compute" : "sm", arch->number, arch->suffix);
    else
        snprintf(buf, size, "%s_%d", arch->ptx ? "compute" : "sm", arch->number);
}

static void list_archs(const int *supported, size_t count, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%d", i ? " " : "", supported[i]);
}

static bool contains(const int *list, size_t count, int value)
{
    for (size_t i = 0; i < count; i++)
        if (list[i] == value) return true;
    return false;
}

/* "13.0" from 13000. */
static void version_text(int version, char *buf, size_t size)
{
    snprintf(buf, size, "%d.%d", version / 1000, version % 1000 / 10);
}

/* What to install for a driver of `driver_version`: an NVRTC of its major
 * version (any_minor) or one not newer than it, by pip (CUDA 12's wheels carry
 * a -cu12 suffix, 13's none) or with a toolkit. */
static void nvrtc_for_driver(int driver_version, bool any_minor, char *buf, size_t size)
{
    int major = driver_version / 1000, minor = driver_version % 1000 / 10;
    const char *suffix = major == 12 ? "-cu12" : "";
    if (any_minor)
        snprintf(buf, size, "an NVRTC %d.x (pip install 'nvidia-cuda-nvrtc%s==%d.*', or a CUDA %d toolkit)", major,
                 suffix, major, major);
    else
        snprintf(buf, size, "NVRTC %d.%d or older (pip install 'nvidia-cuda-nvrtc%s==%d.%d.*', or the CUDA %d.%d "
                 "toolkit)", major, minor, suffix, major, minor, major, minor);
}

/* The rule is CUDA's compatibility rule (CUDA Compatibility guide, "minor
 * version compatibility"): a CUBIN loads on any driver of its compiler's
 * major version or a later one, whatever the minor; PTX only on a driver at
 * least as new as the compiler (newer PTX ISA versions are refused:
 * CUDA_ERROR_UNSUPPORTED_PTX_VERSION, measured with NVRTC 13.5 on the 13.0
 * driver). Every sentence `why` gets is made here, so -v, the program's
 * arch reason and asyncrt-probe say the same. */
asyncrt_status asyncrt__arch_select_auto(int cc_major, int cc_minor, int driver_version,
                                        int nvrtc_version, const int *supported, size_t count,
                                        asyncrt__arch *out, char *why, size_t why_size)
{
    int want = cc_major * 10 + cc_minor;
    memset(out, 0, sizeof *out);
    char list[256], nvrtc[16], driver[16], install[160];
    list_archs(supported, count, list, sizeof list);
    version_text(nvrtc_version, nvrtc, sizeof nvrtc);
    version_text(driver_version, driver, sizeof driver);
    int nvrtc_major = nvrtc_version / 1000, driver_major = driver_version / 1000;
    bool known = contains(supported, count, want);
    if (nvrtc_major > driver_major) {
        nvrtc_for_driver(driver_version, true, install, sizeof install);
        snprintf(why, why_size,
                 "NVRTC %s is of a newer major version than the driver (CUDA %s), which loads neither its CUBINs "
                 "nor its PTX, so nothing can be built for compute capability %d.%d: install %s, or a driver for "
                 "CUDA %d or newer", nvrtc, driver, cc_major, cc_minor, install, nvrtc_major);
        return ASYNCRT_ERROR_VERSION_MISMATCH;
    }
    if (known) {
        out->number = want;
        if (nvrtc_major == driver_major)
            snprintf(why, why_size,
                     "sm_%d: NVRTC %s knows compute capability %d.%d and is of the driver's major version (CUDA "
                     "%s), so a CUBIN is built (a CUBIN loads on every driver of its major version, whatever the "
                     "minor)", want, nvrtc, cc_major, cc_minor, driver);
        else
            snprintf(why, why_size,
                     "sm_%d: NVRTC %s knows compute capability %d.%d and is of an older major version than the "
                     "driver (CUDA %s), so a CUBIN is built (older CUBINs load on newer drivers)",
                     want, nvrtc, cc_major, cc_minor, driver);
        return ASYNCRT_SUCCESS;
    }
    if (nvrtc_version > driver_version) {
        nvrtc_for_driver(driver_version, false, install, sizeof install);
        snprintf(why, why_size,
                 "NVRTC %s does not know sm_%d (it knows %s) and is newer than the driver (CUDA %s), so neither a "
                 "CUBIN nor PTX the driver can load can be built: install %s, or a driver for CUDA %s or newer",
                 nvrtc, want, list, driver, install, nvrtc);
        return ASYNCRT_ERROR_VERSION_MISMATCH;
    }
    int best = 0;
    for (size_t i = 0; i < count; i++)
        if (supported[i] <= want && supported[i] > best) best = supported[i];
    if (!best) {
        snprintf(why, why_size, "compute capability %d.%d is older than every arch NVRTC %s supports (%s)",
                 cc_major, cc_minor, nvrtc, list);
        return ASYNCRT_ERROR_UNSUPPORTED_ARCH;
    }
    out->number = best;
    out->ptx = true;
    snprintf(why, why_size,
             "compute_%d: NVRTC %s does not know compute capability %d.%d (it knows %s) and is not newer than the "
             "driver (CUDA %s), so PTX for the newest arch below it is built and the driver JIT-compiles it",
             best, nvrtc, cc_major, cc_minor, list, driver);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__arch_check(const asyncrt__arch *arch, const int *supported, size_t count,
                                  char *why, size_t why_size)
{
    char name[32], list[256];
    asyncrt__arch_format(arch, name, sizeof name);
    list_archs(supported, count, list, sizeof list);
    if (!contains(supported, count, arch->number)) {
        snprintf(why, why_size,
                 "arch %s is not supported by this NVRTC; it supports sm_XY / compute_XY for XY "
                 "in: %s (and the 'a' variants from 90 on)", name, list);
        return ASYNCRT_ERROR_UNSUPPORTED_ARCH;
    }
    if (arch->suffix && arch->number < 90) {
        snprintf(why, why_size,
                 "arch %s does not exist: arch-specific ('a') and family ('f') targets start at "
                 "sm_90a", name);
        return ASYNCRT_ERROR_UNSUPPORTED_ARCH;
    }
    snprintf(why, why_size, "%s: explicit target", name);
    return ASYNCRT_SUCCESS;
}

/* The PTX ISA version (x10) a CUDA release writes and its driver reads, 0
 * where this table does not know it: NVIDIA's PTX ISA release history to
 * 13.1 (12.6 stayed at 8.5); measured: NVRTC 13.1 writes .version 9.1 and
 * the 13.0 driver answers "current version is '9.0'", NVRTC 13.5 writes 9.5;
 * 13.2 to 13.4 by the same step (13.4's release is PTX ISA 9.4). */
static int ptx_isa(int cuda_version)
{
    static const int table[][2] = {{12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84},
                                   {12050, 85}, {12060, 85}, {12070, 86}, {12080, 87}, {12090, 88},
                                   {13000, 90}, {13010, 91}, {13020, 92}, {13030, 93}, {13040, 94},
                                   {13050, 95}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i][0] == cuda_version) return table[i][1];
    return 0;
}

/* " (NVRTC 13.1 writes PTX ISA 9.1; the driver reads up to 9.0)", as much as is known. */
static void isa_text(int nvrtc_version, int driver_version, char *buf, size_t size)
{
    int written = ptx_isa(nvrtc_version), read = ptx_isa(driver_version);
    char nvrtc[16];
    version_text(nvrtc_version, nvrtc, sizeof nvrtc);
    if (written && read)
        snprintf(buf, size, " (NVRTC %s writes PTX ISA %d.%d; the driver reads up to %d.%d)", nvrtc, written / 10,
                 written % 10, read / 10, read % 10);
    else if (read)
        snprintf(buf, size, " (the driver reads PTX ISA up to %d.%d)", read / 10, read % 10);
    else
        buf[0] = '\0';
}

/* "build sm_90 instead (...); or ": the CUBIN that runs on the device, when
 * this NVRTC can build one: the target's own when the device runs it (same
 * major compute capability, not newer), else the device's. "" when none. */
static void cubin_advice(const asyncrt__arch *arch, const asyncrt_load_facts *f, char *buf, size_t size)
{
    int device = f->cc_major * 10 + f->cc_minor;
    asyncrt__arch cubin = *arch;
    cubin.ptx = false;
    bool own_runs = arch->number / 10 == f->cc_major && arch->number <= device &&
                    (!arch->suffix || arch->number == device);
    if (!own_runs) cubin = (asyncrt__arch){.number = device};
    char name[32];
    asyncrt__arch_format(&cubin, name, sizeof name);
    buf[0] = '\0';
    if (contains(f->supported, f->count, cubin.number))
        snprintf(buf, size, "build %s instead (a CUBIN %s, compute capability %d.%d; a CUBIN of any NVRTC %d.x "
                 "loads on this driver), or ", name, own_runs ? "that runs on this device" : "for this device",
                 f->cc_major, f->cc_minor, f->driver_version / 1000);
}

/* "ASYNCRT_NVRTC=/usr/local/cuda/lib64/libnvrtc.so.13 (NVRTC 13.0, found here)", or what to install. */
static void older_nvrtc_advice(const asyncrt_load_facts *f, bool any_minor, char *buf, size_t size)
{
    char version[16];
    if (f->older_nvrtc) {
        version_text(f->older_version, version, sizeof version);
        snprintf(buf, size, "ASYNCRT_NVRTC=%s (NVRTC %s, found here)", f->older_nvrtc, version);
        return;
    }
    char install[160];
    nvrtc_for_driver(f->driver_version, any_minor, install, sizeof install);
    snprintf(buf, size, "%s, named by ASYNCRT_NVRTC (the toolkit's: ASYNCRT_NVRTC=$CUDA_PATH/lib64/libnvrtc.so.%d)",
             install, f->driver_version / 1000);
}

asyncrt_status asyncrt__arch_check_load(const asyncrt__arch *arch, const asyncrt_load_facts *f, char *why,
                                       size_t why_size)
{
    char name[32], nvrtc[16], driver[16], isa[96], cubin[256], older[4200];
    why[0] = '\0';
    if (f->driver_version <= 0 || f->nvrtc_version <= 0) return ASYNCRT_SUCCESS; /* nothing to hold it to */
    asyncrt__arch_format(arch, name, sizeof name);
    version_text(f->nvrtc_version, nvrtc, sizeof nvrtc);
    version_text(f->driver_version, driver, sizeof driver);
    int nvrtc_major = f->nvrtc_version / 1000, driver_major = f->driver_version / 1000;
    if (nvrtc_major > driver_major) {
        older_nvrtc_advice(f, true, older, sizeof older);
        snprintf(why, why_size,
                 "%s cannot be loaded: NVRTC %s is of a newer major version than the driver (CUDA %s), which loads "
                 "neither its CUBINs nor its PTX: use an NVRTC of the driver's major version, %s, or a driver for "
                 "CUDA %d or newer", name, nvrtc, driver, older, nvrtc_major);
        return ASYNCRT_ERROR_VERSION_MISMATCH;
    }
    if (!arch->ptx) return ASYNCRT_SUCCESS;
    if (f->nvrtc_version <= f->driver_version) {
        snprintf(why, why_size, "the driver (CUDA %s) JIT-compiles its PTX: NVRTC %s is not newer than it", driver,
                 nvrtc);
        return ASYNCRT_SUCCESS;
    }
    isa_text(f->nvrtc_version, f->driver_version, isa, sizeof isa);
    cubin_advice(arch, f, cubin, sizeof cubin);
    older_nvrtc_advice(f, false, older, sizeof older);
    snprintf(why, why_size,
             "%s cannot be loaded: NVRTC %s is newer than the driver (CUDA %s), which JIT-compiles only PTX from a "
             "compiler not newer than itself%s: %suse an NVRTC not newer than the driver, %s",
             name, nvrtc, driver, isa, cubin, older);
    return ASYNCRT_ERROR_VERSION_MISMATCH;
}

/* ptxas's words when a target lacks an instruction or feature:
 * "Instruction 'setmaxnreg.inc' not supported on .target 'sm_90'" or
 * "Feature '.cta_group::1' not supported on .target 'sm_100'". */
static bool lacks_instruction(const char *log, const char *arch_name)
{
    char needle[64];
    snprintf(needle, sizeof needle, "not supported on .target '%s'", arch_name);
    return log && strstr(log, needle) != NULL;
}

bool asyncrt__arch_after_failure(const asyncrt__arch *tried, bool from_auto, const int *supported,
                                size_t count, const char *log, asyncrt__arch *retry, char *hint,
                                size_t hint_size)
{
    char name[32];
    asyncrt__arch_format(tried, name, sizeof name);
    hint[0] = '\0';
    if (tried->ptx || !lacks_instruction(log, name)) return false;
    if (tried->suffix == 'a') {
        snprintf(hint, hint_size,
                 "hint: ptxas says %s lacks instructions the kernel uses even in its arch-specific "
                 "form; the kernel was written for another GPU architecture (wgmma exists only on "
                 "sm_90a, tcgen05 only on sm_100a and its relatives)", name);
        return false;
    }
    bool has_variant = tried->number >= 90 && contains(supported, count, tried->number);
    if (!has_variant) {
        snprintf(hint, hint_size,
                 "hint: ptxas says %s lacks instructions the kernel uses; it needs a newer GPU "
                 "architecture", name);
        return false;
    }
    if (from_auto) {
        *retry = *tried;
        retry->suffix = 'a';
        return true;
    }
    snprintf(hint, hint_size,
             "hint: ptxas says %s lacks instructions the kernel uses; arch-specific instructions "
             "(wgmma and setmaxnreg on sm_90a, tcgen05 on sm_100a) need the 'a' target: compile "
             "for %sa (its CUBIN runs only on compute capability %d.%d), or with arch auto on "
             "that device, which retries with it", name, name, tried->number / 10, tried->number % 10);
    return false;
}
