/* libFuzzer target: the calibration-file parser (asyncrt__calibration_parse),
 * which reads a file anyone could have written into the cache directory.
 * Whatever it accepts must name the expected device and driver, hold only
 * real paths ranked fastest first, and format into text it accepts again
 * with the same content. */
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h" /* the calibration file's form */

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const char k_uuid[] = "GPU-12345678-9abc-def0-1234-56789abcdef0";

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    asyncrt_calibration cal, again;
    char why[160];
    why[0] = '\0';
    if (!asyncrt__calibration_parse((const char *)data, size, k_uuid, 13000, &cal, why, sizeof why)) {
        if (!why[0] || strlen(why) >= sizeof why) abort(); /* a refusal always says why */
        return 0;
    }
    if (strcmp(cal.uuid, k_uuid) || cal.driver_version != 13000) abort();
    for (int op = 0; op < ASYNCRT_DISPATCH_OP_COUNT; op++) {
        const asyncrt_dispatch_rank *r = &cal.rank[op];
        if (r->count < 1 || r->count > 3) abort();
        for (int i = 0; i < r->count; i++)
            if (r->path[i] < ASYNCRT_PATH_TMA || r->path[i] > ASYNCRT_PATH_PLAIN || !(r->pct[i] > 0 && r->pct[i] <= 200) ||
                (i && r->pct[i] > r->pct[i - 1]))
                abort();
    }
    char *text = asyncrt__calibration_format(&cal);
    if (!text || !asyncrt__calibration_parse(text, strlen(text), k_uuid, 13000, &again, why, sizeof why)) abort();
    for (int op = 0; op < ASYNCRT_DISPATCH_OP_COUNT; op++)
        if (again.rank[op].count != cal.rank[op].count ||
            memcmp(again.rank[op].path, cal.rank[op].path, sizeof cal.rank[op].path))
            abort();
    free(text);
    return 0;
}
