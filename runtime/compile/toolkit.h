/* Toolkit discovery (toolkit.c), for the compile's -I and for asyncrt-bundle,
 * which must search what a compile searches. */
#ifndef ASYNCRT_TOOLKIT_H
#define ASYNCRT_TOOLKIT_H

#include <stdbool.h>
#include <stddef.h>

#include "settings.h"

/* The toolkit's include directory into include, *cccl when it holds cccl/
 * (CUDA 13's CCCL headers, a second -I), searched in this order:
 * CUDA_PATH, CUDA_HOME (from settings), the toolkit found at build time,
 * /usr/local/cuda. False with why: none found, or ASYNCRT_TOOLKIT is "none"
 * (or any value but "" and "auto", so a typo cannot reach a toolkit a
 * deployment meant to exclude). */
bool asyncrt__toolkit_find(const asyncrt_settings *settings, char *include, size_t size, bool *cccl, char *why,
                           size_t why_size);

#endif
