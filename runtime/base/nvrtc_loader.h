/* NVRTC, opened at run time like the driver. libnvrtc is never linked: the
 * library and the tools start where NVRTC is missing (and still load images
 * that need no compile), and NVRTC is looked for where a CUDA toolkit lives,
 * not only where the dynamic loader looks.
 *
 * Search order (the first existing file of each step is a candidate):
 *   1. $ASYNCRT_NVRTC: this exact file, and nothing else is tried.
 *   2. $CUDA_PATH, then $CUDA_HOME: <root>/lib64/ and <root>/lib/.
 *   3. The toolkit found at build time (ASYNCRT_TOOLKIT_LIBDIR).
 *   4. The dynamic loader (LD_LIBRARY_PATH, ld.so.cache, ...).
 * In each directory, and for the loader, the sonames of the supported NVRTC
 * majors are tried newest first: libnvrtc.so.13, libnvrtc.so.12.
 * Where several candidates exist and the driver is present, the first one
 * whose CUDA version the driver can load (NVRTC major <= driver major) wins,
 * so a newer NVRTC never produces images the driver rejects; without a
 * driver, the first candidate wins. */
#ifndef ASYNCRT_NVRTC_LOADER_H
#define ASYNCRT_NVRTC_LOADER_H

#include <nvrtc.h> /* types only: every function is reached through the table */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "asyncrt/status.h"

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
    char why[512];       /* which step of the search order found it, and why it was preferred */
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
 * search order above; the same file as asyncrt__nvrtc_load() opens in this
 * process (the choice is made once and shared). `path` is the resolved real
 * path; `size` and `mtime_ns` change when the file is replaced, so a key
 * over (path, size, mtime_ns) changes whenever the NVRTC that would compile
 * changes. `major` comes from the soname (13, 12). Returns false when no
 * NVRTC can be found (then a compile fails with ASYNCRT_ERROR_NO_NVRTC), or
 * when the candidate is only reachable through the dynamic loader and so
 * cannot be stat-ed before dlopen: callers then key on asyncrt__nvrtc_load()'s
 * version instead. */
typedef struct asyncrt_nvrtc_identity {
    char path[4096];
    int64_t size;
    int64_t mtime_ns;
    int major;
} asyncrt_nvrtc_identity;
bool asyncrt__nvrtc_identity_get(asyncrt_nvrtc_identity *out);

/* --- the search itself, separated from the process-wide state for tests --- */

#define ASYNCRT_NVRTC_MAX_CANDIDATES 16
typedef struct asyncrt_nvrtc_candidate {
    char path[4096];   /* a file path, or a bare soname for the dynamic loader */
    const char *step;  /* "$ASYNCRT_NVRTC", "$CUDA_PATH", ..., "the dynamic loader" */
    int major;         /* from the soname; 0 if unknown */
    bool exists;       /* a file that stat() found (always false for sonames) */
} asyncrt_nvrtc_candidate;

typedef struct asyncrt_nvrtc_search {
    const char *override_path;  /* $ASYNCRT_NVRTC */
    const char *cuda_path;      /* $CUDA_PATH */
    const char *cuda_home;      /* $CUDA_HOME */
    const char *build_libdir;   /* the toolkit found at build time */
} asyncrt_nvrtc_search;

/* Lists the places to look, in order (existing files flagged). Returns the count. */
size_t asyncrt__nvrtc_candidates(const asyncrt_nvrtc_search *search, asyncrt_nvrtc_candidate *out,
                                size_t capacity);

/* Picks the index of the candidate to open: the first existing file (or,
 * failing files, the first soname) whose major the driver can load
 * (driver_version 0 = unknown: the first). -1 when there is none. Writes why. */
int asyncrt__nvrtc_choose(const asyncrt_nvrtc_candidate *c, size_t count, int driver_version,
                         char *why, size_t why_size);

#endif
