/* The feature table and the derivation of a device's expected features. */
#include "feature_table.h"

#include <stddef.h>

#include "asyncrt/runtime.h"

/* Each row names the asyncrt_features flag it follows (several features share
 * one flag: TMA tile and im2col, and the three cluster features). */
static const struct {
    probe_feature_desc desc;
    size_t flag; /* offsetof(asyncrt_features, ...) */
} table[PROBE_FEATURE_COUNT] = {
    [PROBE_LDGSTS] = {{"ldgsts", "LDGSTS (cp.async)", "sm_80", "ASYNCRT_PROBE_LDGSTS", NULL},
                      offsetof(asyncrt_features, ldgsts)},
    [PROBE_MBARRIER] = {{"mbarrier", "mbarrier", "sm_80", "ASYNCRT_PROBE_MBARRIER", NULL},
                        offsetof(asyncrt_features, mbarrier)},
    [PROBE_MBARRIER_TX] = {{"mbarrier_tx", "mbarrier tx counts", "sm_90", "ASYNCRT_PROBE_MBARRIER_TX", NULL},
                           offsetof(asyncrt_features, mbarrier_tx)},
    [PROBE_BULK_COPY] = {{"bulk_copy", "bulk copy (cp.async.bulk)", "sm_90", "ASYNCRT_PROBE_BULK_COPY", NULL},
                         offsetof(asyncrt_features, bulk_copy)},
    [PROBE_TMA_TILE] = {{"tma_tile", "TMA tensor tile", "sm_90", "ASYNCRT_PROBE_TMA_TILE", NULL},
                        offsetof(asyncrt_features, tma)},
    [PROBE_TMA_IM2COL] = {{"tma_im2col", "TMA im2col", "sm_90", "ASYNCRT_PROBE_TMA_IM2COL", NULL},
                          offsetof(asyncrt_features, tma)},
    [PROBE_CLUSTERS] = {{"clusters", "thread block clusters", "sm_90", "ASYNCRT_PROBE_CLUSTERS", NULL},
                        offsetof(asyncrt_features, clusters)},
    [PROBE_MULTICAST] = {{"cluster_multicast", "cluster multicast", "sm_90", "ASYNCRT_PROBE_MULTICAST", NULL},
                         offsetof(asyncrt_features, clusters)},
    [PROBE_DSMEM] = {{"dsmem", "distributed shared memory", "sm_90", "ASYNCRT_PROBE_DSMEM", NULL},
                     offsetof(asyncrt_features, clusters)},
    [PROBE_SM90A] = {{"sm90a", "sm_90a (wgmma)", "sm_90a", "ASYNCRT_PROBE_SM90A", "sm_90a"},
                     offsetof(asyncrt_features, sm90a)},
    [PROBE_SM100A] = {{"sm100a", "sm_100a (tcgen05)", "sm_100a", "ASYNCRT_PROBE_SM100A", "sm_100a"},
                      offsetof(asyncrt_features, sm100a)},
};

const probe_feature_desc *probe_feature_get(probe_feature feature)
{
    return (unsigned)feature < PROBE_FEATURE_COUNT ? &table[feature].desc : NULL;
}

void probe_features_expected(int cc_major, int cc_minor, bool cluster_launch,
                             bool out[PROBE_FEATURE_COUNT])
{
    asyncrt_features f = asyncrt_features_from_cc(cc_major, cc_minor, cluster_launch);
    for (int i = 0; i < PROBE_FEATURE_COUNT; i++)
        out[i] = *(const bool *)((const char *)&f + table[i].flag);
}
