/* nvJitLink, opened at run time beside NVRTC (never linked, like NVRTC), and
 * one link run with it. The library that would link is found by stat alone
 * (asyncrt__jitlink_find), so a cache key can name it and a cache hit never
 * loads it (~90 MB). */
#ifndef ASYNCRT_LINK_JIT_H
#define ASYNCRT_LINK_JIT_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/status.h"

/* nvJitLink's input kinds (nvJitLinkInputType): the values it takes. */
enum { ASYNCRT_JIT_CUBIN = 1, ASYNCRT_JIT_PTX, ASYNCRT_JIT_LTOIR, ASYNCRT_JIT_FATBIN, ASYNCRT_JIT_OBJECT,
       ASYNCRT_JIT_LIBRARY };

typedef struct asyncrt_link_item {
    int kind;                  /* ASYNCRT_JIT_* */
    const char *name;          /* in nvJitLink's messages */
    const unsigned char *data;
    size_t size;
} asyncrt_link_item;

/* The nvJitLink file a link would open: libnvJitLink.so.<NVRTC's major>
 * beside the NVRTC the search order finds (nvrtc_loader.h), resolved. False
 * when there is none there (then the dynamic loader is asked at link time,
 * and `path` holds the soname). */
bool asyncrt__jitlink_find(char *path, size_t size);

/* Links `items` with `options` in this process. SUCCESS: *image (malloc'd)
 * and *log (nvJitLink's info log, malloc'd, may be ""). Otherwise *log holds
 * why (nvJitLink's error log, naming undefined or duplicate symbols):
 * ERROR_COMPILE when the inputs do not link, ERROR_INVALID_ARGUMENT for an
 * option or input nvJitLink refuses, ERROR_NO_NVRTC without nvJitLink. */
asyncrt_status asyncrt__jitlink_run(const char *const *options, size_t option_count, const asyncrt_link_item *items,
                                   size_t count, unsigned char **image, size_t *image_size, char **log);

#endif

/* For compile.c: when NVRTC's options ask for LTO-IR (-dlto,
 * --dlink-time-opt, -gen-lto), takes it from the program into *image
 * (malloc'd) with *result NVRTC's answer, and returns true; false leaves
 * everything to the CUBIN or PTX path. (nvrtcGetLTOIR is looked up here,
 * not in NVRTC's table: only linking needs it.) */
typedef struct asyncrt_nvrtc asyncrt_nvrtc;
bool asyncrt__jitlink_take_ltoir(const asyncrt_nvrtc *nv, void *nvrtc_program, const char *const *options,
                                 size_t option_count, unsigned char **image, size_t *size, int *result);
