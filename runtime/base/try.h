/* The one way a failure is passed up (llm.c's cudaCheck, for statuses).
 * ASYNCRT_TRY(expr) evaluates expr, an asyncrt_status, once and returns it
 * unless it is ASYNCRT_SUCCESS; the message is already set by whoever
 * failed. Where something must be released first, the function keeps one
 * cleanup label instead:
 *     if ((s = f(...)) != ASYNCRT_SUCCESS) goto fail;
 * Neither form relies on ASYNCRT_SUCCESS being 0. */
#ifndef ASYNCRT_TRY_H
#define ASYNCRT_TRY_H

#include "asyncrt/status.h"

#define ASYNCRT_TRY(expr)                                \
    do {                                                 \
        asyncrt_status asyncrt_try_ = (expr);            \
        if (asyncrt_try_ != ASYNCRT_SUCCESS) return asyncrt_try_; \
    } while (0)

#endif
