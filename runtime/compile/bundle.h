/* Header bundles inside the library (the public half is asyncrt/bundle.h):
 * the file format, and what a compile takes from a bundle. asyncrt-bundle
 * (tools/bundle) makes them.
 *
 * Format: a sealed buffer (codec.h) of magic "ASYNCRTB", whose
 * payload digest is the bundle's digest (the key's: checked before NVRTC
 * first reads a text, asyncrt__bundle_ready):
 *   note:str  (how it was made: the asyncrt-bundle command line)
 *   texts:u64, then each header's text:str
 *   names:u64, then each include name:str and the index of its text:u64
 * A text may carry several names ("info.h" and "details/info.h"). */
#ifndef ASYNCRT_BUNDLE_INTERNAL_H
#define ASYNCRT_BUNDLE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/bundle.h"
#include "sha256.h"

#define ASYNCRT_BUNDLE_MAGIC "ASYNCRTB"
#define ASYNCRT_BUNDLE_FORMAT 1u

/* The encoded bundle (malloc'd) or NULL when out of memory. */
unsigned char *asyncrt__bundle_encode(const char *note, const char *const *texts, size_t text_count,
                                     const char *const *names, const size_t *text_of, size_t name_count,
                                     size_t *size);

/* The bundle's bytes again (the same digest), malloc'd: for the compile worker. */
unsigned char *asyncrt__bundle_bytes(const asyncrt_bundle *b, size_t *size);

/* What a compile takes (all accept NULL, the bundle-less compile): */
size_t asyncrt__bundle_count(const asyncrt_bundle *b);
/* Its digest into key1 (nothing for NULL, so bundle-less keys do not move). */
void asyncrt__bundle_key(asyncrt_sha256 *h, const asyncrt_bundle *b);
const char *asyncrt__bundle_name(const asyncrt_bundle *b, size_t i);
/* Checks the digest and makes the texts, once (thread-safe); false with why
 * for a damaged bundle. Loading skips the hashing, so that a program whose
 * compiles all hit the cache pays nothing for a bundle's size: the key
 * holds the digest the bundle states, and the texts are only read, checked
 * first, when NVRTC runs. */
bool asyncrt__bundle_ready(const asyncrt_bundle *b, char *why, size_t why_size);
/* names[i]'s text; only after asyncrt__bundle_ready. */
const char *asyncrt__bundle_content(const asyncrt_bundle *b, size_t i);

/* The hint a failed compile's message ends with when NVRTC could not open a
 * header (`cannot open source file "X"` in its log): X is not in the
 * bundle (and how it was made, to remake it), or, without a bundle, there
 * is no toolkit to find it in (toolkit_why: why not; NULL when the toolkit
 * was searched). malloc'd; NULL when the log names no such header or there
 * is nothing to add. */
char *asyncrt__bundle_missing_hint(const asyncrt_bundle *b, const char *log, const char *toolkit_why);

#endif
