/* Pieces of key1, the part of the cache key known before compiling
 * (compile.c's compute_key puts them together). */
#ifndef ASYNCRT_CACHE_KEY_H
#define ASYNCRT_CACHE_KEY_H

#include "sha256.h"

/* Length-prefixed, so that "a","bc" and "ab","c" differ. */
void asyncrt__key_str(asyncrt_sha256 *h, const char *s);

/* The identity of the NVRTC library that holds `symbol` (any of its
 * functions): its file's path, size, mtime, inode and device, so that a
 * patched NVRTC of the same version does not reuse another's images. */
void asyncrt__key_library_identity(asyncrt_sha256 *h, const void *symbol);

/* A directory's path and stat identity (device, inode, mtime, ctime): for
 * the toolkit's include directory, whose reinstallation changes these. */
void asyncrt__key_dir_identity(asyncrt_sha256 *h, const char *dir);

#endif
