/* A compiled program: an image plus what is needed to use it without NVRTC
 * (its arch and the lowered names of its name expressions). */
#ifndef ASYNCRT_PROGRAM_H
#define ASYNCRT_PROGRAM_H

#include <stdint.h>

#include "asyncrt/runtime.h"

struct asyncrt_program {
    uint8_t key[32];           /* the cache key it was built under */
    char arch[32];             /* "sm_90", "compute_80" */
    bool ptx;
    char *log;                 /* NVRTC's log; "" when it said nothing */
    unsigned char *image;      /* PTX text (NUL included) or CUBIN */
    size_t image_size;
    size_t name_count;
    char **expressions;        /* name expressions as given */
    char **lowered;            /* their mangled names */
    asyncrt_program_origin origin;
    /* What it was compiled from, for people (asyncrt-cache list); in no key.
     * NULL when unknown: entries written before they were recorded. */
    char *source_name;
    char *options;             /* NVRTC's options but -arch and the toolkit's -I, space-separated */
    /* Why this arch (asyncrt_program_arch_reason): set by each compile, in no
     * cache entry; NULL when unknown. */
    char *arch_reason;
};

/* NULL on allocation failure. */
asyncrt_program *asyncrt__program_clone(const asyncrt_program *p);

/* The on-disk form: codec.h's sealed container ("ASYNCRTC", format 3,
 * the key) around arch, ptx flag, log, name pairs and the image, then, when
 * known, the source name and options (an entry without them, as written
 * before they were recorded, reads the same but for those two). */
unsigned char *asyncrt__program_encode(const asyncrt_program *p, size_t *size);
/* mac_key (32 bytes): HMAC-SHA-256 instead of SHA-256, for the shared cache. */
unsigned char *asyncrt__program_encode_keyed(const asyncrt_program *p, const uint8_t *mac_key, size_t *size);

/* Parses an entry; anything short, long, damaged or built under another key
 * is refused with a reason. Never trusts a length it has not bounds-checked. */
asyncrt_status asyncrt__program_decode(const void *data, size_t size, const uint8_t key[32],
                                      asyncrt_program **out, char *why, size_t why_size);
/* The same with a MAC key (NULL: plain SHA-256, and a MAC'd entry is refused). */
asyncrt_status asyncrt__program_decode_keyed(const void *data, size_t size, const uint8_t key[32],
                                            const uint8_t *mac_key, asyncrt_program **out, char *why,
                                            size_t why_size);

#endif
