/* Where NVIDIA's run-time compilers are: every copy of NVRTC or nvJitLink a
 * process could open, with its version, found with stat and readdir only
 * (dlopen costs ~7 ms and a cache hit must open neither). nvrtc_loader.c
 * ranks the NVRTCs, link_jit.c the nvJitLinks.
 *
 * Places, in this order (each one's files, as far as they exist):
 *   1. $ASYNCRT_NVRTC, for NVRTC: that file alone, nothing else is looked at;
 *   2. NVIDIA's pip wheels (nvidia-cuda-nvrtc, nvidia-nvjitlink), in the
 *      site-packages (or dist-packages) of $VIRTUAL_ENV, of the user
 *      ($PYTHONUSERBASE, else ~/.local) and of the system (/usr/local/lib,
 *      /usr/lib, /usr/lib64, /usr/local/lib64), under lib/python3*; CUDA 13's
 *      wheels put both in nvidia/cu13/lib/, CUDA 12's in nvidia/cuda_nvrtc/lib/
 *      and nvidia/nvjitlink/lib/;
 *   3. the folder tools/setup.sh installs those wheels into (built in:
 *      ASYNCRT_SETUP_PIP_DIR, the checkout's .pip/), only by a library (or a
 *      program linking it statically) that runs from its build tree: an
 *      installed or packaged copy never opens what lies at that path of the
 *      machine it was built on (asyncrt__lib_setup_dir);
 *   4. $CUDA_PATH, then $CUDA_HOME: <root>/lib64/ and <root>/lib/; then the
 *      toolkit found at build time;
 *   5. the dynamic loader (LD_LIBRARY_PATH, ld.so.cache), by soname.
 * Sonames of the supported majors, newest first: libnvrtc.so.13 and .12,
 * libnvJitLink.so.13 and .12.
 *
 * A file's version, without opening it: the wheel's
 * <package>-<version>.dist-info beside nvidia/ (13.1.115), else a versioned
 * real file name (libnvrtc.so.13.0.88), else the libnvrtc-builtins.so.M.m
 * beside it (13.0), which NVRTC itself loads and a toolkit ships with both
 * libraries of one release. */
#ifndef ASYNCRT_LIB_SEARCH_H
#define ASYNCRT_LIB_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

typedef enum asyncrt_lib_kind { ASYNCRT_LIB_NVRTC, ASYNCRT_LIB_NVJITLINK } asyncrt_lib_kind;

/* -1 where not known. */
typedef struct asyncrt_lib_version {
    int major, minor, patch;
} asyncrt_lib_version;

#define ASYNCRT_LIB_MAX_CANDIDATES 32

typedef struct asyncrt_lib_candidate {
    char path[4096];          /* a file, or a bare soname for the dynamic loader */
    const char *step;         /* where it was found, e.g. "a wheel in $VIRTUAL_ENV", "$CUDA_PATH" */
    int major;                /* from the soname */
    asyncrt_lib_version version;
    const char *version_from; /* "its wheel's dist-info", "its file name", "the libnvrtc-builtins beside it", or "" */
    bool exists;              /* a regular file (false for sonames, and for a missing $ASYNCRT_NVRTC) */
} asyncrt_lib_candidate;

typedef struct asyncrt_lib_search {
    const char *override_path;          /* $ASYNCRT_NVRTC (NVRTC only) */
    const char *virtual_env;            /* $VIRTUAL_ENV */
    const char *python_user_base;       /* $PYTHONUSERBASE */
    const char *home;                   /* $HOME: ~/.local when PYTHONUSERBASE is unset */
    const char *const *system_libdirs;  /* NULL-terminated; NULL: the usual four (above) */
    const char *setup_dir;              /* the set-up's folder, a pip --target root */
    const char *cuda_path, *cuda_home;  /* $CUDA_PATH, $CUDA_HOME */
    const char *build_libdir;           /* the toolkit found at build time */
} asyncrt_lib_search;

/* The candidates of `kind`, in the order above (existing files only, then
 * the sonames); at most `capacity`. `searched` gets a readable list of the
 * places looked at, for the "not found" message. Returns the count. */
size_t asyncrt__lib_candidates(asyncrt_lib_kind kind, const asyncrt_lib_search *search, asyncrt_lib_candidate *out,
                               size_t capacity, char *searched, size_t searched_size);

/* "13.1.115", "13.0", "13 (minor unknown)", "unknown". */
void asyncrt__lib_version_format(const asyncrt_lib_version *v, char *buf, size_t size);
/* Parses "13.1.115" or "13.1"; false if malformed. */
bool asyncrt__lib_version_parse(const char *text, asyncrt_lib_version *out);
/* <0, 0, >0 as a is older, the same or newer than b (an unknown part counts as older than any). */
int asyncrt__lib_version_compare(const asyncrt_lib_version *a, const asyncrt_lib_version *b);

/* setup_dir where the library's own file `self` (self_file.h; NULL: not
 * known) lies inside `build_dir`, the build tree's real path; else "". */
const char *asyncrt__lib_setup_dir(const char *self, const char *build_dir, const char *setup_dir);

/* The search this process makes: its settings' variables and the built-in
 * folders (the set-up's only from the build tree: asyncrt__lib_setup_dir). */
struct asyncrt_settings;
asyncrt_lib_search asyncrt__lib_search_of(const struct asyncrt_settings *settings);

#endif
