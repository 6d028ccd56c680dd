/* What first-party tools and tests may use of the compile layer, beside the
 * public API. Internal, not libasyncrt's ABI: it is linked from
 * asyncrt_private and may change with the library (a bundle's format carries
 * its own version).
 *   compile.h: asyncrt__program_lookup, the cache key a compile looks up
 *     (asyncrt-bundle reads the manifest of the compile it made);
 *     asyncrt__program_compile_to_load and asyncrt__target_loadable, the
 *     load rule for a program the tool will load (asyncrt-run, asyncrt-bench).
 *   bundle.h: the header bundle's format (asyncrt__bundle_encode).
 *   program.h: a program's fields, its cache entry's payload and its sealed
 *     form (asyncrt-cache reads entries, asyncrt-run --image and the bench
 *     make a program around an image).
 *   toolkit.h: toolkit discovery (asyncrt__toolkit_find), so that
 *     asyncrt-bundle searches exactly what a compile searches. */
#ifndef ASYNCRT_COMPILE_INTERNAL_H
#define ASYNCRT_COMPILE_INTERNAL_H

#include "bundle.h"
#include "compile.h"
#include "program.h"
#include "toolkit.h"

#endif
