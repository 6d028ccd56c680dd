/* Probing every device, each in its own context when kernels must run. */
#include "devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "check.h"

/* The last failure's message, for --json (which reports it on stdout too). */
static char last_message[512];

const char *probe_last_error(void) { return last_message[0] ? last_message : NULL; }

static int fail(asyncrt_context *ctx, int code, const char *what)
{
    const char *msg = asyncrt_context_last_error(ctx);
    snprintf(last_message, sizeof last_message, "%s%s%.*s", what ? what : "", what ? ": " : "", (int)strcspn(msg, "\n"), msg);
    /* The runtime's message already says what is missing where `what` is NULL. */
    fprintf(stderr, "asyncrt-probe: %s%s%.*s\n", what ? what : "", what ? ": " : "", (int)strcspn(msg, "\n"), msg);
    return code;
}

static int exit_code_for(asyncrt_status s)
{
    return s == ASYNCRT_ERROR_NO_DRIVER   ? PROBE_EXIT_NO_DRIVER
           : s == ASYNCRT_ERROR_NO_DEVICE ? PROBE_EXIT_NO_DEVICE
                                          : PROBE_EXIT_ERROR;
}

/* --check and --bench need kernels to run: a context with the device open. */
static int run_on_device(probe_device_report *d, bool check, bool bench)
{
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "asyncrt-probe: out of memory\n");
        return PROBE_EXIT_INTERNAL;
    }
    asyncrt_status s = asyncrt_context_open_device(ctx, d->info.ordinal);
    if (s != ASYNCRT_SUCCESS) {
        int code = fail(ctx, exit_code_for(s), "cannot open the device");
        asyncrt_context_destroy(ctx);
        return code;
    }
    probe_check_device(ctx, &d->info, check, d->features);
    if (bench) probe_bench_device(ctx, &d->info, &d->bench);
    asyncrt_context_destroy(ctx);
    return PROBE_EXIT_OK;
}

/* What arch auto builds for the device, in the library's own sentence. */
static void auto_rule(probe_device_report *d)
{
    asyncrt_arch arch = ASYNCRT_ARCH_INIT;
    d->auto_target[0] = '\0';
    asyncrt_status s = asyncrt_arch_auto(d->info.cc_major, d->info.cc_minor, d->info.driver_version, &arch,
                                         d->auto_rule, sizeof d->auto_rule);
    if (s == ASYNCRT_ERROR_NO_NVRTC || s == ASYNCRT_ERROR_NVRTC)
        snprintf(d->auto_rule, sizeof d->auto_rule, "no NVRTC to build with");
    else if (s == ASYNCRT_SUCCESS)
        asyncrt_arch_format(&arch, d->auto_target, sizeof d->auto_target);
}

int probe_collect_devices(asyncrt_context *ctx, int only, bool check, bool bench, probe_report *r)
{
    int count = 0;
    asyncrt_status s = asyncrt_device_count(ctx, &count);
    if (s == ASYNCRT_ERROR_NO_DRIVER) return fail(ctx, PROBE_EXIT_NO_DRIVER, NULL);
    if (s != ASYNCRT_SUCCESS) return fail(ctx, exit_code_for(s), "cannot count the devices");
    if (count == 0) {
        snprintf(last_message, sizeof last_message, "no CUDA device: the driver reports none");
        fprintf(stderr, "asyncrt-probe: %s\n", last_message);
        return PROBE_EXIT_NO_DEVICE;
    }
    if (only >= count) {
        snprintf(last_message, sizeof last_message, "no device %d: the driver reports %d (valid: 0..%d)", only, count,
                 count - 1);
        fprintf(stderr, "asyncrt-probe: %s\n", last_message);
        return PROBE_EXIT_NO_DEVICE;
    }
    int first = only >= 0 ? only : 0, n = only >= 0 ? 1 : count;
    r->devices = calloc((size_t)n, sizeof *r->devices);
    if (!r->devices) {
        fprintf(stderr, "asyncrt-probe: out of memory\n");
        return PROBE_EXIT_INTERNAL;
    }
    for (int i = 0; i < n; i++) {
        probe_device_report *d = &r->devices[r->device_count];
        d->info = (asyncrt_device_info)ASYNCRT_DEVICE_INFO_INIT;
        if ((s = asyncrt_device_probe(ctx, first + i, &d->info)) != ASYNCRT_SUCCESS)
            return fail(ctx, exit_code_for(s), "device probe failed");
        auto_rule(d);
        r->device_count++;
        if (check || bench) {
            int code = run_on_device(d, check, bench);
            if (code != PROBE_EXIT_OK) return code;
        } else {
            probe_check_device(ctx, &d->info, false, d->features);
        }
    }
    return PROBE_EXIT_OK;
}

int probe_report_exit_code(const probe_report *r)
{
    for (size_t i = 0; i < r->device_count; i++) {
        const probe_device_report *d = &r->devices[i];
        for (int f = 0; f < PROBE_FEATURE_COUNT; f++)
            if (d->features[f].status == PROBE_STATUS_FAILED) return PROBE_EXIT_FAILED;
        if (r->benched && d->bench.error[0]) return PROBE_EXIT_FAILED;
        for (int p = 0; r->benched && p < PROBE_BENCH_PATH_COUNT; p++)
            if (d->bench.paths[p].error[0]) return PROBE_EXIT_FAILED;
    }
    return PROBE_EXIT_OK;
}
