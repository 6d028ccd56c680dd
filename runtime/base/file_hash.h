/* The SHA-256 of a file's content as it stood throughout the read: for the
 * dependency sets of other machines (cache/dep_fit.c) and the compact-image
 * assembler's identity (compile/compact_use.c). */
#ifndef ASYNCRT_FILE_HASH_H
#define ASYNCRT_FILE_HASH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* Streams the regular file at path (64 KiB at a time: no whole-file copy)
 * into sha; *st is its fstat, and false where it is not a regular file,
 * cannot be read, or changed (size, mtime, ctime) while it was read. */
bool asyncrt__file_sha256(const char *path, uint8_t sha[32], struct stat *st);

#endif
