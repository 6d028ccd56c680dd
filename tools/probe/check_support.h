/* What every feature check needs: its kernel, random inputs, poisoned
 * outputs, a launch, and an element-by-element comparison. Each helper
 * returns false after writing the reason into the check's `why`; everything
 * allocated is released by chk_end. */
#ifndef ASYNCRT_PROBE_CHECK_SUPPORT_H
#define ASYNCRT_PROBE_CHECK_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asyncrt/runtime.h"
#include "feature_table.h"

#define CHK_MAX_BUFFERS 8

typedef struct probe_check {
    asyncrt_context *ctx;
    probe_feature feature;
    char *why;
    size_t why_size;
    uint64_t seed, rng;
    asyncrt_module *module;
    asyncrt_deviceptr device[CHK_MAX_BUFFERS];
    void *host[CHK_MAX_BUFFERS];
    int device_count, host_count;
} probe_check;

void chk_begin(probe_check *c, asyncrt_context *ctx, probe_feature feature, char *why, size_t why_size);
void chk_end(probe_check *c);

/* Sets why (printf-style) and returns false. */
bool chk_fail(probe_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

uint32_t chk_random(probe_check *c);

/* The feature's kernel `name`, built from probe_features.cu. */
bool chk_kernel(probe_check *c, const char *name, asyncrt_kernel **out);

/* `words` random words on the host (returned, NULL on failure) and a device copy. */
uint32_t *chk_input(probe_check *c, size_t words, asyncrt_deviceptr *device);
/* `words` words on the device, every byte 0xFF. */
bool chk_output(probe_check *c, size_t words, asyncrt_deviceptr *device);
/* Zeroed host words for a reference. */
uint32_t *chk_host(probe_check *c, size_t words);

/* Launches with 1D grid/block/cluster (cluster 0: none) and waits for it. */
bool chk_launch(probe_check *c, asyncrt_kernel *k, unsigned grid_x, unsigned grid_y, unsigned block,
                unsigned cluster, void **args, const size_t *sizes, size_t count);

/* Downloads `words` words and compares each with expected[]. */
bool chk_verify(probe_check *c, asyncrt_deviceptr device, const uint32_t *expected, size_t words);

/* One per feature (check.c, check_tma.c, check_cluster.c). */
bool chk_ldgsts(probe_check *c);
bool chk_mbarrier(probe_check *c);
bool chk_mbarrier_tx(probe_check *c);
bool chk_bulk_copy(probe_check *c);
bool chk_tma_tile(probe_check *c);
bool chk_tma_im2col(probe_check *c);
bool chk_clusters(probe_check *c);
bool chk_multicast(probe_check *c);
bool chk_dsmem(probe_check *c);
bool chk_sm90a(probe_check *c);
bool chk_sm100a(probe_check *c);

#endif
