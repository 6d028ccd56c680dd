/* Probing the devices: attributes, expected features, and --check / --bench. */
#ifndef ASYNCRT_PROBE_DEVICES_H
#define ASYNCRT_PROBE_DEVICES_H

#include <stdbool.h>

#include "asyncrt/runtime.h"
#include "report.h"

/* asyncrt-probe's exit codes (also listed by --help). */
enum probe_exit {
    PROBE_EXIT_OK = 0,
    PROBE_EXIT_FAILED = 1,    /* a --check feature FAILED or a --bench path failed */
    PROBE_EXIT_USAGE = 2,
    PROBE_EXIT_NO_DRIVER = 3,
    PROBE_EXIT_NO_DEVICE = 4, /* no device, or none with the --device ordinal */
    PROBE_EXIT_ERROR = 5      /* anything else: a driver call, NVRTC, memory */
};

/* Fills r->devices (all of them, or only ordinal `only` when >= 0). On
 * failure prints one line on stderr and returns the exit code. */
int probe_collect_devices(asyncrt_context *ctx, int only, bool check, bool bench, probe_report *r);

/* PROBE_EXIT_FAILED if any checked feature or bench path failed. */
int probe_report_exit_code(const probe_report *r);

#endif
