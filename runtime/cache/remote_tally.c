/* The remote counters' tally in a cache directory (remote_tally.h). */
#include "remote_tally.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIDE_FILE "remote-stats"

static const char *const names[ASYNCRT_RC_COUNT] = {"hits", "misses", "errors", "rejected", "stores", "lease_waits",
                                                    "bytes_read", "bytes_written", "time_us", "kept"};

/* "NAME COUNT" lines; unknown names and bad lines are passed over. */
static void read_tally(asyncrt_cache *cache, uint64_t v[ASYNCRT_RC_COUNT])
{
    char *text = asyncrt__cache_read_side(cache, SIDE_FILE);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        for (int i = 0; i < ASYNCRT_RC_COUNT; i++) {
            size_t n = strlen(names[i]);
            if (strncmp(line, names[i], n) == 0 && line[n] == ' ') v[i] = strtoull(line + n + 1, NULL, 10);
        }
    free(text);
}

void asyncrt__remote_tally_read(asyncrt_cache *cache, asyncrt_remote_cache_stats *out, uint64_t *kept)
{
    uint64_t v[ASYNCRT_RC_COUNT] = {0};
    read_tally(cache, v);
    *out = (asyncrt_remote_cache_stats){.size = sizeof(asyncrt_remote_cache_stats),
                                        .hits = v[ASYNCRT_RC_HITS], .misses = v[ASYNCRT_RC_MISSES],
                                        .errors = v[ASYNCRT_RC_ERRORS], .rejected = v[ASYNCRT_RC_REJECTED],
                                        .stores = v[ASYNCRT_RC_STORES], .lease_waits = v[ASYNCRT_RC_LEASE_WAITS],
                                        .bytes_read = v[ASYNCRT_RC_BYTES_READ],
                                        .bytes_written = v[ASYNCRT_RC_BYTES_WRITTEN],
                                        .time_ms = (double)v[ASYNCRT_RC_TIME_US] / 1e3};
    if (kept) *kept = v[ASYNCRT_RC_KEPT];
}

void asyncrt__remote_tally_add(asyncrt_cache *cache, const uint64_t counts[ASYNCRT_RC_COUNT])
{
    uint64_t v[ASYNCRT_RC_COUNT] = {0};
    bool any = false;
    for (int i = 0; i < ASYNCRT_RC_COUNT; i++) any |= counts[i] != 0;
    if (!any) return;
    read_tally(cache, v);
    char out[1024];
    size_t n = 0;
    for (int i = 0; i < ASYNCRT_RC_COUNT && n < sizeof out; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, "%s %llu\n", names[i], (unsigned long long)(v[i] + counts[i]));
    asyncrt__cache_write_side(cache, SIDE_FILE, out);
}
