/* A compiled program: an image plus what is needed to use it without NVRTC
 * (its arch and the lowered names of its name expressions). The compile
 * layer makes it (nvrtc_run.c, link/ from its inputs) and owns its form in
 * the cache: the payload of an entry (cache.h), which the cache keeps
 * without looking inside. */
#ifndef ASYNCRT_PROGRAM_H
#define ASYNCRT_PROGRAM_H

#include <stdint.h>

#include "asyncrt/runtime.h"
#include "cache.h"

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
    /* Compact images (compact_use.h), for a CUBIN NVRTC compiled: whether
     * the image is the compact one, NVRTC's own image's size, and the
     * verdict; in the cache entry. NULL note: not recorded (PTX, LTO-IR, a
     * link, an entry from before). */
    bool compact;
    size_t nvrtc_image_size;
    char *image_note;
};

/* NULL on allocation failure. */
asyncrt_program *asyncrt__program_clone(const asyncrt_program *p);

/* The payload of its cache entry: arch, ptx flag, log, name pairs and the
 * image, then, when known, the source name and options, then, when
 * recorded, the compact images' verdict (an entry without them, as written
 * before they were recorded, reads the same but for those). NULL when out
 * of memory. */
unsigned char *asyncrt__program_payload(const asyncrt_program *p, size_t *size);
/* The program a payload holds, with key (the entry's result key) and origin
 * as given; anything short, long or malformed is refused with a reason
 * (IO, or OUT_OF_MEMORY). Never trusts a length it has not bounds-checked. */
asyncrt_status asyncrt__program_from_payload(const unsigned char *payload, size_t size, const uint8_t key[32],
                                            asyncrt_program_origin origin, asyncrt_program **out, char *why,
                                            size_t why_size);

/* The cache's reader of a program (cache.h's accept): the entry's payload
 * made into a program of the entry's key and origin, into *program (an
 * asyncrt_program **; NULL until one is accepted), or refused with why.
 * asyncrt__cache_lookup(c, key1, tiers, claim, asyncrt__program_accept, &p)
 * is a program's lookup; lease takes it as well. */
bool asyncrt__program_accept(const asyncrt_cache_entry *e, void *program, char *why, size_t why_size);

/* The sealed form on disk (cache.h's entry around the payload, under
 * p->key), for tools and tests that read and write entries as files;
 * mac_key (32 bytes): HMAC-SHA-256 instead of SHA-256, for the shared cache. */
unsigned char *asyncrt__program_encode(const asyncrt_program *p, size_t *size);
unsigned char *asyncrt__program_encode_keyed(const asyncrt_program *p, const uint8_t *mac_key, size_t *size);
/* Parses an entry (origin DISK_CACHE); anything short, long, damaged or
 * built under another key is refused with a reason. mac_key: NULL for plain
 * SHA-256, when a MAC'd entry is refused. */
asyncrt_status asyncrt__program_decode(const void *data, size_t size, const uint8_t key[32],
                                      asyncrt_program **out, char *why, size_t why_size);
asyncrt_status asyncrt__program_decode_keyed(const void *data, size_t size, const uint8_t key[32],
                                            const uint8_t *mac_key, asyncrt_program **out, char *why,
                                            size_t why_size);

#endif
