/* A dependency set recorded on another machine (a remote value's): whether
 * every file of it holds, here, the content recorded where it was compiled
 * (each is re-hashed: another machine's stat data proves nothing; a
 * per-process memo by path and stat spares re-hashing a header the kernels
 * share); then the set takes this machine's stat data, so that later
 * lookups here stat instead of hashing. A stale or foreign set fails, with
 * why. */
#ifndef ASYNCRT_DEP_FIT_H
#define ASYNCRT_DEP_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "cache_manifest.h"

bool asyncrt__dep_set_fits(asyncrt_dep_set *set, char *why, size_t why_size);

#endif
