/* Where the toolkit's headers are, unless ASYNCRT_TOOLKIT turns discovery
 * off (a deployment with a header bundle, and the tests that prove nothing
 * reaches outside it). */
#ifndef ASYNCRT_BUNDLE_TOOLKIT_H
#define ASYNCRT_BUNDLE_TOOLKIT_H

#include <stdbool.h>
#include <stddef.h>

/* The toolkit's include directory into include (and its CCCL folder into
 * cccl, "" where CCCL is not a separate folder), searched in this order:
 * $CUDA_PATH, $CUDA_HOME, the toolkit found at build time, /usr/local/cuda.
 * False with why: none found, or ASYNCRT_TOOLKIT is "none" (or a value that
 * is neither "", "auto" nor "none": discovery is off then too, so a typo
 * cannot reach a toolkit the deployment meant to exclude). */
typedef struct asyncrt_toolkit_env {
    const char *mode, *cuda_path, *cuda_home; /* ASYNCRT_TOOLKIT, CUDA_PATH, CUDA_HOME; NULL when unset */
} asyncrt_toolkit_env;
asyncrt_toolkit_env asyncrt__toolkit_env(void); /* from the environment */
bool asyncrt__toolkit_find(const asyncrt_toolkit_env *env, char *include, char *cccl, size_t size, char *why,
                           size_t why_size);

#endif
