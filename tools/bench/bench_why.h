/* A section's own failure message (the JIT sections'), said by the caller;
 * the library's context keeps only the library's messages. */
#ifndef ASYNCRT_BENCH_WHY_H
#define ASYNCRT_BENCH_WHY_H

#include "asyncrt/runtime.h"

/* Keeps the message and returns s. */
asyncrt_status bench_fail(asyncrt_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Forgets it: a section starts with none. */
void bench_why_clear(void);
/* The section's own message, else ctx's last error. */
const char *bench_why(const asyncrt_context *ctx);

#endif
