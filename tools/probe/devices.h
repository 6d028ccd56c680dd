/* Probing the devices: attributes, expected features, and --check / --bench. */
#ifndef ASYNCRT_PROBE_DEVICES_H
#define ASYNCRT_PROBE_DEVICES_H

#include <stdbool.h>

#include "asyncrt/runtime.h"
#include "exit_codes.h"
#include "report.h"

/* asyncrt-probe's exit codes: the table shared by the tools (exit_codes.h). */
enum probe_exit {
    PROBE_EXIT_OK = TOOL_EXIT_OK,
    PROBE_EXIT_FAILED = TOOL_EXIT_CHECK,        /* a --check feature FAILED or a --bench path failed */
    PROBE_EXIT_USAGE = TOOL_EXIT_USAGE,
    PROBE_EXIT_NO_DRIVER = TOOL_EXIT_NO_DEVICE, /* the same code as no device, in every tool */
    PROBE_EXIT_NO_DEVICE = TOOL_EXIT_NO_DEVICE, /* no device, or none with the --device ordinal */
    PROBE_EXIT_ERROR = TOOL_EXIT_CUDA,          /* a driver call or NVRTC */
    PROBE_EXIT_INTERNAL = TOOL_EXIT_INTERNAL    /* out of memory */
};

/* Fills r->devices (all of them, or only ordinal `only` when >= 0). On
 * failure prints one line on stderr and returns the exit code. */
int probe_collect_devices(asyncrt_context *ctx, int only, bool check, bool bench, probe_report *r);

/* The message of the last failure probe_collect_devices printed, or NULL. */
const char *probe_last_error(void);

/* PROBE_EXIT_FAILED if any checked feature or bench path failed. */
int probe_report_exit_code(const probe_report *r);

#endif
