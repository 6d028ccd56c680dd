/* What tests may use of the compile layer, beside the public API (the tools
 * use the public API only: asyncrt_program_from_image, for_load,
 * asyncrt_context_check_target, asyncrt_bundle_make). Internal, not
 * libasyncrt's ABI: it is linked from asyncrt_private and may change with
 * the library (a bundle's format carries its own version).
 *   compile.h: asyncrt__program_lookup, the cache key a compile looks up
 *     (the bundle maker reads the manifest of the compile it made);
 *     asyncrt__program_compile_to_load and asyncrt__target_loadable, the
 *     load rule for a program to be loaded.
 *   bundle.h: the header bundle's format (asyncrt__bundle_encode).
 *   program.h: a program's fields, its cache entry's payload and its sealed
 *     form (tests read and write entries).
 *   toolkit.h: toolkit discovery (asyncrt__toolkit_find), so that
 *     the bundle maker searches exactly what a compile searches. */
#ifndef ASYNCRT_COMPILE_INTERNAL_H
#define ASYNCRT_COMPILE_INTERNAL_H

#include "bundle.h"
#include "compile.h"
#include "program.h"
#include "toolkit.h"

#endif
