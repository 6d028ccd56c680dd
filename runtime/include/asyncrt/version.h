/* asyncrt: the version, at compile time (these macros) and at run time
 * (asyncrt_version, asyncrt_version_string: the library actually loaded).
 *
 * These three numbers are the project's version: CMakeLists.txt reads them
 * from here (project(VERSION)), and the shared library's SONAME is
 * libasyncrt.so.MAJOR (docs/deployment.md, "ABI and versioning"). A program built
 * against MAJOR.MINOR runs with any library of the same MAJOR and at least
 * that MINOR; it may compare asyncrt_version() with ASYNCRT_VERSION_NUMBER
 * to find out which it got. */
#ifndef ASYNCRT_VERSION_H
#define ASYNCRT_VERSION_H

#include "asyncrt/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ASYNCRT_VERSION_MAJOR 1
#define ASYNCRT_VERSION_MINOR 0
#define ASYNCRT_VERSION_PATCH 0 /* MINOR and PATCH stay below 100: see the number below */

/* MAJOR * 10000 + MINOR * 100 + PATCH, e.g. 10203 for 1.2.3. */
#define ASYNCRT_VERSION_NUMBER (ASYNCRT_VERSION_MAJOR * 10000 + ASYNCRT_VERSION_MINOR * 100 + ASYNCRT_VERSION_PATCH)
#define ASYNCRT_VERSION_TEXT_(x) #x
#define ASYNCRT_VERSION_TEXT(x) ASYNCRT_VERSION_TEXT_(x)
/* "MAJOR.MINOR.PATCH", e.g. "1.2.3". */
#define ASYNCRT_VERSION_STRING                                                                            \
    ASYNCRT_VERSION_TEXT(ASYNCRT_VERSION_MAJOR) "." ASYNCRT_VERSION_TEXT(ASYNCRT_VERSION_MINOR) "." \
        ASYNCRT_VERSION_TEXT(ASYNCRT_VERSION_PATCH)

/* The loaded library's ASYNCRT_VERSION_NUMBER and ASYNCRT_VERSION_STRING
 * (a static string), which may be newer than the header a program was built
 * with. */
ASYNCRT_EXTERN unsigned asyncrt_version(void);
ASYNCRT_EXTERN const char *asyncrt_version_string(void);

#ifdef __cplusplus
}
#endif
#endif
