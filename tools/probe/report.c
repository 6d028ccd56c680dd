/* Names shared by the writers. */
#include "report.h"

#include <stdio.h>

const char *probe_bench_path_key(probe_bench_path path)
{
    static const char *const keys[PROBE_BENCH_PATH_COUNT] = {"plain", "ldgsts", "tma"};
    return (unsigned)path < PROBE_BENCH_PATH_COUNT ? keys[path] : "?";
}

const char *probe_status_key(probe_status status)
{
    switch (status) {
    case PROBE_STATUS_NO: return "no";
    case PROBE_STATUS_NOT_VERIFIED: return "not_verified";
    case PROBE_STATUS_VERIFIED: return "verified";
    case PROBE_STATUS_FAILED: return "failed";
    }
    return "?";
}

void probe_format_version(int version, char *buf, size_t size)
{
    snprintf(buf, size, "%d.%d", version / 1000, version % 1000 / 10);
}
