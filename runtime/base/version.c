/* asyncrt_version: the numbers this library was built with (version.h). */
#include "asyncrt/version.h"

_Static_assert(ASYNCRT_VERSION_MINOR < 100 && ASYNCRT_VERSION_PATCH < 100,
               "ASYNCRT_VERSION_NUMBER gives MINOR and PATCH two digits each");

unsigned asyncrt_version(void) { return ASYNCRT_VERSION_NUMBER; }

const char *asyncrt_version_string(void) { return ASYNCRT_VERSION_STRING; }
