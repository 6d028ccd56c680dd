/* Pieces of key1, the part of the cache key known before compiling
 * (compile/key.c's compute_key puts them together; link/link.c keys a link with them). */
#ifndef ASYNCRT_CACHE_KEY_H
#define ASYNCRT_CACHE_KEY_H

#include <stddef.h>

#include "sha256.h"

/* Length-prefixed, so that "a","bc" and "ab","c" differ. */
void asyncrt__key_str(asyncrt_sha256 *h, const char *s);

/* The identity of the NVRTC library that holds `symbol` (any of its
 * functions): its file's path, size and mtime, so that a patched NVRTC of
 * the same version does not reuse another's images, while machines that
 * installed the same package share keys (inode and device differ). */
void asyncrt__key_library_identity(asyncrt_sha256 *h, const void *symbol);

/* A path's identity as above: a file's path, size and mtime, a directory's
 * path (the toolkit's include directory: the headers read under it are in
 * the manifest by content). */
void asyncrt__key_dir_identity(asyncrt_sha256 *h, const char *dir);

/* The same identity as text, for key records (key_record.h): "path (N bytes, mtime S.NS)". */
void asyncrt__key_identity_text(const char *path, char *out, size_t size);

#endif
