/* Which include names a bundle must hold. NVRTC matches in-memory headers
 * by the name written in #include only: it does not resolve a quoted
 * "info.h" or "../cooperative_groups.h" against the including header's
 * folder as it does on disk. So each header NVRTC read from disk is bundled
 * under every name some read file (or a source) includes it by, found the
 * way NVRTC found it: a quoted name beside its includer first, then the -I
 * folders in order, the first existing file winning. The files NVRTC's
 * trace named are closed over their unconditional #includes, which NVRTC
 * read too (its trace can leave one out). */
#ifndef ASYNCRT_BUILD_BUNDLE_NAMES_H
#define ASYNCRT_BUILD_BUNDLE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct asyncrt_bundle_file {
    char *real;    /* realpath */
    char *text;
} asyncrt_bundle_file;

typedef struct asyncrt_bundle_name {
    char *name;
    size_t file;        /* index into files */
    const char *from;   /* the includer that used it (for messages), or NULL */
} asyncrt_bundle_name;

typedef struct asyncrt_bundle_names {
    const char *const *dirs;   /* the -I folders, in NVRTC's order */
    size_t dir_count;
    const char *const *memory; /* names NVRTC gets in memory anyway (they win): never bundled */
    size_t memory_count;
    asyncrt_bundle_file *files;
    size_t file_count;
    asyncrt_bundle_name *names;
    size_t name_count;
} asyncrt_bundle_names;

/* Adds a file NVRTC read (path as the cache manifest recorded it) whose
 * SHA-256 was sha (NULL: not recorded): false with why when it is gone or
 * changed since. */
bool asyncrt__bundle_names_add_file(asyncrt_bundle_names *b, const char *path, const uint8_t sha[32], char *why,
                                    size_t why_size);

/* Names every file from the includes of the sources and the files; false
 * with why when two different headers would need one name, or a file has
 * none. Names end sorted, so the same inputs give the same bundle. */
bool asyncrt__bundle_names_resolve(asyncrt_bundle_names *b, const char *const *sources, size_t source_count,
                                   char *why, size_t why_size);

void asyncrt__bundle_names_free(asyncrt_bundle_names *b);

#endif
