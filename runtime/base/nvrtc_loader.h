/* NVRTC, opened at run time like the driver. libnvrtc is never linked: the
 * library and the tools start where NVRTC is missing (and still load images
 * that need no compile), and NVRTC is looked for where pip's wheels and CUDA
 * toolkits put it, not only where the dynamic loader looks.
 *
 * Where (lib_search.h has the order): $ASYNCRT_NVRTC alone when it is set;
 * otherwise NVIDIA's wheels (a virtual environment's, the user's, the
 * system's site-packages), the set-up's folder, $CUDA_PATH, $CUDA_HOME, the
 * toolkit found at build time, the dynamic loader.
 *
 * Which (asyncrt__nvrtc_choose): of the NVRTCs found, one of the driver's
 * major version (any minor: arch.h's rule builds CUBINs, which load on every
 * driver of their major), else the newest of an older major, else (nothing
 * the driver can load) the newest found, for arch auto to explain. Within
 * that, the version this build prefers (ASYNCRT_NVRTC_PREFERRED, from
 * cmake/nvrtc-wheel-version.txt: the one measured nearest nvcc's code) when
 * it is there, else the newest; files before sonames, and among equals the
 * first in search order. Without a driver (a CPU machine), the same with no
 * driver to match. The choice is made once per process, with stat and
 * readdir alone, so that a cache hit opens no NVRTC. */
#ifndef ASYNCRT_NVRTC_LOADER_H
#define ASYNCRT_NVRTC_LOADER_H

#include <nvrtc.h> /* types only: every function is reached through the table */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "asyncrt/status.h"
#include "lib_search.h"

/* Every NVRTC entry point we use; all exist since CUDA 11.2 with the
 * signatures of the fields below. */
#define ASYNCRT_NVRTC_FUNCTIONS(X)                                                                 \
    X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs) \
    X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcAddNameExpression) X(nvrtcCompileProgram) \
    X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX)            \
    X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetLoweredName)

typedef struct asyncrt_nvrtc {
    void *handle;        /* from dlopen */
    void *builtins;      /* libnvrtc-builtins beside it, preloaded; may be NULL */
    int version;         /* nvrtcVersion, e.g. 13000 */
    char path[4096];     /* the file opened */
    char why[768];       /* which step of the search order found it, and why it was preferred */
    nvrtcResult (*nvrtcVersion)(int *, int *);
    const char *(*nvrtcGetErrorString)(nvrtcResult);
    nvrtcResult (*nvrtcGetNumSupportedArchs)(int *);
    nvrtcResult (*nvrtcGetSupportedArchs)(int *);
    nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                      const char *const *, const char *const *);
    nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
    nvrtcResult (*nvrtcAddNameExpression)(nvrtcProgram, const char *);
    nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char *);
    nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
    nvrtcResult (*nvrtcGetLoweredName)(nvrtcProgram, const char *, const char **);
} asyncrt_nvrtc;

/* The process's NVRTC table, chosen and opened once (thread-safe) on first
 * call. On failure returns ASYNCRT_ERROR_NO_NVRTC and copies into msg a
 * message naming every place looked at (or the file that lacks a symbol). */
asyncrt_status asyncrt__nvrtc_load(const asyncrt_nvrtc **out, char *msg, size_t msg_size);

/* What identifies the NVRTC a compile would use, found WITHOUT opening it
 * (stat only, ~microseconds; dlopen costs ~6 ms), so that a cache lookup can
 * key on it and a cache hit never loads NVRTC.
 *
 * Contract: fills *out and returns true when an NVRTC file was found by the
 * search; the same file as asyncrt__nvrtc_load() opens in this process (the
 * choice is made once and shared). `path` is the resolved real path; `size`
 * and `mtime_ns` change when the file is replaced, so a key over (path,
 * size, mtime_ns) changes whenever the NVRTC that would compile changes.
 * `major` comes from the soname (13, 12), `version` as lib_search.h reads
 * it. Returns false when no NVRTC can be found (then a compile fails with
 * ASYNCRT_ERROR_NO_NVRTC), or when the candidate is only reachable through
 * the dynamic loader and so cannot be stat-ed before dlopen: callers then
 * key on asyncrt__nvrtc_load()'s version instead. */
typedef struct asyncrt_nvrtc_identity {
    char path[4096];
    int64_t size;
    int64_t mtime_ns;
    int major;
    asyncrt_lib_version version;
} asyncrt_nvrtc_identity;
bool asyncrt__nvrtc_identity_get(asyncrt_nvrtc_identity *out);

/* The process's search and its outcome, for asyncrt-probe and asyncrt-run -v:
 * every NVRTC found, the one chosen (-1: none) and why, and the places looked
 * at. Valid for the process's lifetime. */
typedef struct asyncrt_nvrtc_choice {
    const asyncrt_lib_candidate *candidates;
    size_t count;
    int chosen;
    const char *why;
    const char *searched;
} asyncrt_nvrtc_choice;
void asyncrt__nvrtc_choice_get(asyncrt_nvrtc_choice *out);

/* The ranking above, for tests: the index of the candidate to open, -1 when
 * there is none. driver_version 0: no driver. preferred: "13.1.115", "" for
 * none. Writes why. */
int asyncrt__nvrtc_choose(const asyncrt_lib_candidate *c, size_t count, int driver_version, const char *preferred,
                         char *why, size_t why_size);

#endif
