/* asyncrt-probe: what each device can do with asynchronous data movement,
 * proven with tiny kernels (--check), measured (--bench), and what each arch
 * can compile (--arch-matrix). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_matrix.h"
#include "devices.h"
#include "output.h"
#include "peers.h"
#include "tool.h"

static const char usage[] =
    "usage: asyncrt-probe [--check] [--bench] [--arch-matrix] [--json] [--device N]\n"
    "\n"
    "Prints each device's attributes and which asynchronous data-movement features\n"
    "it has (LDGSTS, mbarrier, transaction counts, bulk copies, TMA tile and im2col,\n"
    "clusters, multicast, distributed shared memory, sm_90a, sm_100a), with the arch\n"
    "each needs.\n"
    "\n"
    "  --check        run a tiny kernel for every feature the device should have and\n"
    "                 verify its result: yes (verified) / FAILED: reason\n"
    "  --bench        copy bandwidth of the plain, LDGSTS and TMA paths as % of a\n"
    "                 cuMemcpyDtoD ceiling (a few seconds per device)\n"
    "  --arch-matrix  which feature's kernel compiles for which arch NVRTC supports;\n"
    "                 needs no driver or GPU, and alone it probes no device\n"
    "With two or more devices (and no --device), the peer matrix follows: for each\n"
    "ordered pair, cuDeviceCanAccessPeer, the P2P attributes (performance rank,\n"
    "access, native atomics, CUDA array access) and the cuMemcpyPeerAsync copy\n"
    "bandwidth (64 MiB, median of 9 after 3 warm-up copies).\n"
    "  --json         one JSON document instead of tables (keys: tools/probe/README.md)\n"
    "  --device N     only device N\n"
    "  --version      asyncrt-probe, libasyncrt and NVRTC versions\n"
    "  -h, --help     this text\n"
    "\n"
    "With --json a JSON document is printed also when the probe fails (no driver:\n"
    "\"devices\" is empty, \"error\" says why, \"exit_code\" is the exit code).\n"
    "\n" TOOL_EXIT_CODES_HELP
    "  asyncrt-probe: 6 = a --check feature FAILED or a --bench path failed;\n"
    "  the reason for 4 (no driver or no device) is printed on stderr.\n";

typedef struct options {
    bool check, bench, arch_matrix, json;
    int device; /* -1: all */
} options;

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.device = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--check")) {
            o->check = true;
        } else if (!strcmp(a, "--bench")) {
            o->bench = true;
        } else if (!strcmp(a, "--arch-matrix")) {
            o->arch_matrix = true;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--device")) {
            char *end = NULL;
            long n = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : -1;
            if (i + 1 >= argc || *argv[i + 1] == '\0' || *end != '\0' || n < 0 || n > 1 << 20)
                return tool_usage_error("asyncrt-probe", "--device needs a device ordinal (0, 1, ...)");
            o->device = (int)n;
            i++;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "--version")) {
            char version[160];
            tool_version_line("asyncrt-probe", version, sizeof version);
            printf("%s\n", version);
            if (a[2] != 'v') fputs(usage, stdout);
            exit(PROBE_EXIT_OK);
        } else {
            return tool_usage_error("asyncrt-probe", "unknown option '%s'", a);
        }
    }
    return PROBE_EXIT_OK;
}

int main(int argc, char **argv)
{
    options o;
    int code = parse(argc, argv, &o);
    if (code != PROBE_EXIT_OK) return code;
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "asyncrt-probe: out of memory\n");
        return PROBE_EXIT_INTERNAL;
    }
    probe_report r = {.nvrtc_version = asyncrt_nvrtc_version(), .checked = o.check, .benched = o.bench};
    asyncrt_nvrtc_info found = ASYNCRT_NVRTC_INFO_INIT; /* which NVRTC the search order chose, and why */
    asyncrt_nvrtc_candidate candidates[32];
    asyncrt_nvrtc_info_get(false, &found);
    r.nvrtc_candidates = candidates;
    r.nvrtc_candidate_count = tool_nvrtc_candidates(candidates, sizeof candidates / sizeof candidates[0]);
    r.nvrtc_chosen = found.chosen;
    asyncrt_nvrtc_info_get(true, &found); /* opened: its file and why; or why none could be */
    r.nvrtc_path = found.path;
    r.nvrtc_why = found.why;
    asyncrt_program_image_info compact = ASYNCRT_PROGRAM_IMAGE_INFO_INIT; /* program NULL: the context's setting */
    if (asyncrt_program_image_info_of(ctx, NULL, &compact) == ASYNCRT_SUCCESS) {
        r.compact_images = compact.compact;
        r.compact_why = compact.reason;
    }
    probe_arch_matrix *matrix = NULL;
    bool matrix_built = false;
    if (o.arch_matrix) {
        if (!(matrix = malloc(sizeof *matrix))) {
            fprintf(stderr, "asyncrt-probe: out of memory\n");
            code = PROBE_EXIT_INTERNAL;
        } else if (probe_arch_matrix_build(ctx, matrix) != ASYNCRT_SUCCESS) {
            fprintf(stderr, "asyncrt-probe: arch matrix: %s\n", probe_arch_matrix_why(ctx));
            code = PROBE_EXIT_ERROR;
        } else {
            matrix_built = true;
        }
        r.arch_matrix = matrix;
    }
    /* --arch-matrix alone needs no driver, so it probes no device. */
    bool devices = !o.arch_matrix || o.check || o.bench || o.device >= 0;
    if (code == PROBE_EXIT_OK && devices) code = probe_collect_devices(ctx, o.device, o.check, o.bench, &r);
    if (code == PROBE_EXIT_OK && devices && o.device < 0) code = probe_collect_peers(ctx, &r);
    if (code != PROBE_EXIT_OK && o.json) {
        r.exit_code = code;
        r.error = probe_last_error() ? probe_last_error() : "see the message on stderr";
        r.device_count = 0;
        probe_write_json(stdout, &r);
    } else if (code != PROBE_EXIT_OK && matrix_built) {
        r.device_count = 0; /* the matrix needed no device: it stands (the reason for the rest is on stderr) */
        probe_write_text(stdout, &r);
    }
    if (code == PROBE_EXIT_OK) {
        if (o.json)
            probe_write_json(stdout, &r);
        else
            probe_write_text(stdout, &r);
        code = probe_report_exit_code(&r);
    }
    free(r.devices);
    free(r.peers);
    free(matrix);
    asyncrt_context_destroy(ctx);
    return code;
}
