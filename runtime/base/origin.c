/* Where a program came from (asyncrt/runtime.h's origin), in words: the
 * cache's tiers name the one that answered, the compile and image calls
 * their own, and every layer may say it. */
#include "asyncrt/runtime.h"

const char *asyncrt_program_origin_string(asyncrt_program_origin origin)
{
    switch (origin) {
    case ASYNCRT_ORIGIN_COMPILED: return "compiled";
    case ASYNCRT_ORIGIN_MEMORY_CACHE: return "memory cache";
    case ASYNCRT_ORIGIN_DISK_CACHE: return "disk cache";
    case ASYNCRT_ORIGIN_REMOTE_CACHE: return "remote cache";
    case ASYNCRT_ORIGIN_IMAGE: return "image";
    }
    return "unknown";
}
