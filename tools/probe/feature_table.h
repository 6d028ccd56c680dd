/* The features asyncrt-probe reports: their names, the arch each needs, the
 * probe kernel that proves it, and which a device should have (a pure
 * function of its attributes, tested with tables). */
#ifndef ASYNCRT_PROBE_FEATURE_TABLE_H
#define ASYNCRT_PROBE_FEATURE_TABLE_H

#include <stdbool.h>

typedef enum probe_feature {
    PROBE_LDGSTS,
    PROBE_MBARRIER,
    PROBE_MBARRIER_TX,
    PROBE_BULK_COPY,
    PROBE_TMA_TILE,
    PROBE_TMA_IM2COL,
    PROBE_CLUSTERS,
    PROBE_MULTICAST,
    PROBE_DSMEM,
    PROBE_SM90A,
    PROBE_SM100A,
    PROBE_FEATURE_COUNT
} probe_feature;

typedef struct probe_feature_desc {
    const char *key;          /* stable JSON key, e.g. "tma_tile" */
    const char *label;        /* for people, e.g. "TMA tensor tile" */
    const char *needs;        /* the arch it needs, e.g. "sm_90" or "sm_90a" */
    const char *define;       /* selects its kernel in probe_features.cu */
    const char *compile_arch; /* an explicit arch for its check (arch-specific ones), else NULL */
} probe_feature_desc;

const probe_feature_desc *probe_feature_get(probe_feature feature);

/* Which features a device with these attributes should have: composed from
 * asyncrt_features_from_cc, so the runtime and the probe cannot disagree. */
void probe_features_expected(int cc_major, int cc_minor, bool cluster_launch,
                             bool out[PROBE_FEATURE_COUNT]);

#endif
