#include "asyncrt/status.h"

#include <stddef.h>

static const struct {
    const char *name;
    const char *description;
} k_statuses[] = {
#define ROW(code, description) {"ASYNCRT_" #code, description},
    ASYNCRT_STATUS_MAP(ROW)
#undef ROW
};
_Static_assert(sizeof k_statuses / sizeof k_statuses[0] == ASYNCRT_STATUS_COUNT, "one row per status");

const char *asyncrt_status_string(asyncrt_status status)
{
    if ((unsigned)status >= ASYNCRT_STATUS_COUNT) return "ASYNCRT_STATUS_UNKNOWN";
    return k_statuses[status].name;
}

const char *asyncrt_status_description(asyncrt_status status)
{
    if ((unsigned)status >= ASYNCRT_STATUS_COUNT) return "unknown status";
    return k_statuses[status].description;
}
