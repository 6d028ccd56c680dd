/* bench_why.h: one message, for the one section that runs at a time. */
#include "bench_why.h"

#include <stdarg.h>
#include <stdio.h>

static char g_why[2048];

asyncrt_status bench_fail(asyncrt_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_why, sizeof g_why, fmt, ap);
    va_end(ap);
    return s;
}

void bench_why_clear(void) { g_why[0] = '\0'; }

const char *bench_why(const asyncrt_context *ctx) { return g_why[0] ? g_why : asyncrt_context_last_error(ctx); }
