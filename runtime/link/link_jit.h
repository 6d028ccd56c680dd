/* nvJitLink, opened at run time beside NVRTC (never linked, like NVRTC), and
 * one link run with it. The library that would link is found by stat alone
 * (asyncrt__jitlink_find), so a cache key can name it and a cache hit never
 * loads it (~90 MB). */
#ifndef ASYNCRT_LINK_JIT_H
#define ASYNCRT_LINK_JIT_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/status.h"
#include "lib_search.h"

/* nvJitLink's input kinds (nvJitLinkInputType): the values it takes. */
enum { ASYNCRT_JIT_CUBIN = 1, ASYNCRT_JIT_PTX, ASYNCRT_JIT_LTOIR, ASYNCRT_JIT_FATBIN, ASYNCRT_JIT_OBJECT,
       ASYNCRT_JIT_LIBRARY };

typedef struct asyncrt_link_item {
    int kind;                  /* ASYNCRT_JIT_* */
    const char *name;          /* in nvJitLink's messages */
    const unsigned char *data;
    size_t size;
} asyncrt_link_item;

/* The nvJitLink file a link would open, resolved: of the nvJitLinks NVRTC's
 * search finds (lib_search.h), the one matching the NVRTC chosen
 * (nvrtc_loader.h), by asyncrt__jitlink_choose; once per process. False when
 * only a soname is left (the dynamic loader is asked at link time, and
 * `path` holds the soname). */
bool asyncrt__jitlink_find(char *path, size_t size);

/* Which nvJitLink links NVRTC's output (the rule: nvJitLink must be of
 * NVRTC's major version and at least as new, or it refuses NVRTC's LTO-IR:
 * "may need newer version of nvJitLink library"). In order: NVRTC's own
 * version (major.minor), beside NVRTC first; the nearest newer of its major;
 * an unknown version beside NVRTC, then of its major; the nearest older of
 * its major (it still links what is not LTO-IR); its major's soname;
 * anything else. nvrtc_dir: the chosen NVRTC's folder ("" if none). Returns
 * the index, -1 if none; why says which rule chose it. Pure, for tests. */
int asyncrt__jitlink_choose(const asyncrt_lib_candidate *c, size_t count, const asyncrt_lib_version *nvrtc,
                            const char *nvrtc_dir, char *why, size_t why_size);
/* The process's choice (NULL: none found), and why (may be NULL). */
const asyncrt_lib_candidate *asyncrt__jitlink_chosen(const char **why);

/* Whether a link without -lto keeps the __align__ of an extern __shared__
 * array in relocatable code from NVRTC of nvrtc_version: NVRTC 13.0's code
 * or nvJitLink 13.0 leave it at the kernel's static shared alignment (16
 * bytes; nvcc -dc with nvlink alike); NVRTC 13.1.115's code linked by
 * nvJitLink 13.1.115 keeps 128 (measured, tests/link/kernels/main.cu; any
 * other pair of those two loses it). Taken to hold from 13.1 on. */
bool asyncrt__jitlink_keeps_extern_shared_align(int nvrtc_version);

/* Before nvJitLink links LTO-IR made by NVRTC of nvrtc_version (13010 for
 * 13.1): VERSION_MISMATCH with msg naming both versions, the inputs and what
 * to install when the nvJitLink chosen is older or of another major; SUCCESS
 * when it fits or its version is unknown (nvJitLink then answers itself). */
asyncrt_status asyncrt__jitlink_check_lto(int nvrtc_version, const char *inputs, char *msg, size_t msg_size);

/* Links `items` with `options` in this process. SUCCESS: *image (malloc'd)
 * and *log (nvJitLink's info log, malloc'd, may be ""). Otherwise *log holds
 * why (nvJitLink's error log, naming undefined or duplicate symbols):
 * ERROR_COMPILE when the inputs do not link, ERROR_INVALID_ARGUMENT for an
 * option or input nvJitLink refuses, ERROR_NO_NVRTC without nvJitLink. */
asyncrt_status asyncrt__jitlink_run(const char *const *options, size_t option_count, const asyncrt_link_item *items,
                                   size_t count, unsigned char **image, size_t *image_size, char **log);

#endif
