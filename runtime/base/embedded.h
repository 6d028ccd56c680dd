/* Files from kernels_src/, compiled into the library (see cmake/embed.cmake),
 * so the runtime needs nothing on disk besides the toolkit's headers. */
#ifndef ASYNCRT_EMBEDDED_H
#define ASYNCRT_EMBEDDED_H

#include <stddef.h>

typedef struct asyncrt_embedded_file {
    const char *name;     /* "asyncrt/device.cuh": the name NVRTC sees in #include */
    const char *content;
} asyncrt_embedded_file;

extern const asyncrt_embedded_file asyncrt__embedded_files[];
extern const size_t asyncrt__embedded_file_count;

/* The content of an embedded file, or NULL. */
const char *asyncrt__embedded_find(const char *name);

/* kernels_src/std/: built-in device-side standard headers ("cmath",
 * "cstdint", "type_traits", ...), named as written in #include. */
extern const asyncrt_embedded_file asyncrt__std_header_files[];
extern const size_t asyncrt__std_header_file_count;
const char *asyncrt__std_header_find(const char *name);

#endif
