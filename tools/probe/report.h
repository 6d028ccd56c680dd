/* Everything asyncrt-probe found, filled by the probing steps and read by
 * the text and JSON writers (which is what the tests feed with fake data). */
#ifndef ASYNCRT_PROBE_REPORT_H
#define ASYNCRT_PROBE_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/runtime.h"
#include "feature_table.h"

typedef enum probe_status {
    PROBE_STATUS_NO,           /* the device lacks it; never attempted */
    PROBE_STATUS_NOT_VERIFIED, /* the device should have it; --check not asked */
    PROBE_STATUS_VERIFIED,     /* its kernel ran and its result was right */
    PROBE_STATUS_FAILED        /* its kernel did not build, run or verify: see reason */
} probe_status;

typedef struct probe_feature_result {
    probe_status status;
    char reason[512]; /* only for PROBE_STATUS_FAILED */
} probe_feature_result;

typedef enum probe_bench_path { PROBE_BENCH_PLAIN, PROBE_BENCH_LDGSTS, PROBE_BENCH_TMA, PROBE_BENCH_PATH_COUNT } probe_bench_path;

typedef struct probe_bench_result {
    bool ran;         /* false: the device lacks the path, or it failed (error says) */
    double gbs;       /* read + write bytes per second / 1e9, median run */
    double percent;   /* of the D2D copy ceiling */
    char error[256];
} probe_bench_result;

typedef struct probe_bench {
    bool ran;
    size_t bytes;     /* copied per run */
    int runs;         /* timed runs per path, after warm-up */
    double d2d_gbs;   /* cuMemcpyDtoD ceiling, median run */
    probe_bench_result paths[PROBE_BENCH_PATH_COUNT];
    char error[256];  /* set when the whole bench failed */
} probe_bench;

/* One ordered pair of devices (src reads or writes dst's memory): the
 * driver's answers, then a measured copy (peers.c). -1: not known. */
typedef struct probe_peer {
    int src, dst;
    int can_access;          /* cuDeviceCanAccessPeer */
    int performance_rank;    /* cuDeviceGetP2PAttribute: CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK */
    int access_supported;    /* ..._ACCESS_SUPPORTED */
    int native_atomics;      /* ..._NATIVE_ATOMIC_SUPPORTED */
    int cuda_array_access;   /* ..._CUDA_ARRAY_ACCESS_SUPPORTED */
    bool measured;           /* copy_gbs holds the median */
    double copy_gbs;         /* cuMemcpyPeerAsync src -> dst, bytes / median time / 1e9 */
    size_t copy_bytes;
    int copy_runs;           /* timed, after warm-up */
    char error[256];         /* why the copy was not measured */
} probe_peer;

typedef struct probe_device_report {
    asyncrt_device_info info;
    char auto_target[32];   /* what arch auto builds for it ("" when it cannot) */
    char auto_rule[768];    /* the arch rule's sentence (arch.h), or why none applies */
    probe_feature_result features[PROBE_FEATURE_COUNT];
    probe_bench bench;
} probe_device_report;

#define PROBE_MAX_ARCHS 32

typedef struct probe_arch_matrix {
    size_t arch_count;
    char archs[PROBE_MAX_ARCHS][16];                  /* "sm_80", ..., "sm_90a", "sm_100a" */
    bool compiles[PROBE_FEATURE_COUNT][PROBE_MAX_ARCHS];
} probe_arch_matrix;

typedef struct probe_report {
    int nvrtc_version;
    const char *nvrtc_path;     /* the NVRTC chosen by the search order, NULL if none */
    const char *nvrtc_why;      /* why that one; or why none was usable */
    bool compact_images;        /* the context's CUBIN compiles make compact images */
    const char *compact_why;    /* why they are on or off */
    const asyncrt_nvrtc_candidate *nvrtc_candidates; /* every NVRTC the search found */
    size_t nvrtc_candidate_count;
    int nvrtc_chosen;           /* index into them, -1: none */
    bool checked;               /* --check */
    bool benched;               /* --bench */
    size_t device_count;
    probe_device_report *devices;
    const probe_arch_matrix *arch_matrix; /* NULL unless --arch-matrix */
    int exit_code;              /* the tool's exit code; not 0: error says why */
    const char *error;          /* NULL when there is none */
    size_t peer_count;          /* every ordered pair of the devices probed (2 or more) */
    probe_peer *peers;          /* malloc'd; NULL when fewer than 2 devices */
} probe_report;

const char *probe_bench_path_key(probe_bench_path path);   /* "plain", "ldgsts", "tma" */
const char *probe_status_key(probe_status status);         /* "no", "not_verified", "verified", "failed" */

/* "9.0", "13.0" from 13000: for people. */
void probe_format_version(int version, char *buf, size_t size);

#endif
