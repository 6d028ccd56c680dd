/* --check: the dispatcher and the single-CTA feature checks. */
#include "check.h"

#include <stdio.h>
#include <string.h>

#include "check_support.h"

#define PTR sizeof(asyncrt_deviceptr)

bool chk_ldgsts(probe_check *c)
{
    enum { BLOCKS = 8, THREADS = 128, N = BLOCKS * THREADS };
    asyncrt_kernel *k;
    asyncrt_deviceptr in16, in4, out16, out4;
    uint32_t *h16, *h4, *e16, *e4;
    if (!chk_kernel(c, "probe_ldgsts", &k) || !(h16 = chk_input(c, N * 4, &in16)) ||
        !(h4 = chk_input(c, N, &in4)) || !chk_output(c, N * 4, &out16) || !chk_output(c, N, &out4) ||
        !(e16 = chk_host(c, N * 4)) || !(e4 = chk_host(c, N)))
        return false;
    for (int b = 0; b < BLOCKS; b++)
        for (int t = 0; t < THREADS; t++) {
            int dst = b * THREADS + t, src = b * THREADS + (t + 1) % THREADS;
            for (int w = 0; w < 4; w++) e16[dst * 4 + w] = h16[src * 4 + w];
            e4[dst] = h4[src];
        }
    void *args[] = {&in16, &in4, &out16, &out4};
    size_t sizes[] = {PTR, PTR, PTR, PTR};
    return chk_launch(c, k, BLOCKS, 1, THREADS, 0, args, sizes, 4) && chk_verify(c, out16, e16, N * 4) &&
           chk_verify(c, out4, e4, N);
}

bool chk_mbarrier(probe_check *c)
{
    enum { BLOCKS = 4, THREADS = 128, ROWS = BLOCKS * 2, N = ROWS * THREADS * 4 };
    asyncrt_kernel *k;
    asyncrt_deviceptr in, out;
    uint32_t *h, *e;
    if (!chk_kernel(c, "probe_mbarrier", &k) || !(h = chk_input(c, N, &in)) || !chk_output(c, N, &out) ||
        !(e = chk_host(c, N)))
        return false;
    /* each row of 128 uint4 (one phase of one block) comes back rotated by 5 */
    for (int r = 0; r < ROWS; r++)
        for (int t = 0; t < THREADS; t++)
            for (int w = 0; w < 4; w++)
                e[(r * THREADS + t) * 4 + w] = h[(r * THREADS + (t + 5) % THREADS) * 4 + w];
    void *args[] = {&in, &out};
    size_t sizes[] = {PTR, PTR};
    return chk_launch(c, k, BLOCKS, 1, THREADS, 0, args, sizes, 2) && chk_verify(c, out, e, N);
}

bool chk_mbarrier_tx(probe_check *c)
{
    enum { BLOCKS = 4, WORDS = 1024, N = BLOCKS * WORDS };
    asyncrt_kernel *k;
    asyncrt_deviceptr in, out;
    uint32_t *h, *e;
    if (!chk_kernel(c, "probe_mbarrier_tx", &k) || !(h = chk_input(c, N, &in)) || !chk_output(c, N, &out) ||
        !(e = chk_host(c, N)))
        return false;
    for (int b = 0; b < BLOCKS; b++)
        for (int i = 0; i < WORDS; i++) e[b * WORDS + i] = h[b * WORDS + WORDS - 1 - i];
    void *args[] = {&in, &out};
    size_t sizes[] = {PTR, PTR};
    return chk_launch(c, k, BLOCKS, 1, 128, 0, args, sizes, 2) && chk_verify(c, out, e, N);
}

/* out = in ^ key, for the kernels that only transform (bulk copy). */
static bool check_xor(probe_check *c, const char *name, int blocks, int words_per_block)
{
    int n = blocks * words_per_block;
    asyncrt_kernel *k;
    asyncrt_deviceptr in, out;
    uint32_t *h, *e, key = chk_random(c);
    if (!chk_kernel(c, name, &k) || !(h = chk_input(c, n, &in)) || !chk_output(c, n, &out) ||
        !(e = chk_host(c, n)))
        return false;
    for (int i = 0; i < n; i++) e[i] = h[i] ^ key;
    void *args[] = {&in, &out, &key};
    size_t sizes[] = {PTR, PTR, sizeof key};
    return chk_launch(c, k, blocks, 1, 128, 0, args, sizes, 3) && chk_verify(c, out, e, n);
}

bool chk_bulk_copy(probe_check *c)
{
    return check_xor(c, "probe_bulk_copy", 4, 1024);
}

/* D = A x B on the tensor cores (64x16 by 16x8), entries small integers. */
bool chk_sm90a(probe_check *c)
{
    enum { BLOCKS = 4, IN = 64 * 16 + 8 * 16, OUT = 64 * 8 };
    asyncrt_kernel *k;
    asyncrt_deviceptr in, out;
    uint32_t *h, *e;
    if (!chk_kernel(c, "probe_sm90a", &k) || !(h = chk_input(c, BLOCKS * IN, &in)) ||
        !chk_output(c, BLOCKS * OUT, &out) || !(e = chk_host(c, BLOCKS * OUT)))
        return false;
    for (int blk = 0; blk < BLOCKS; blk++) {
        const uint32_t *a = h + blk * IN, *bt = a + 64 * 16; /* bt[n*16 + k] = B(k, n) */
        for (int m = 0; m < 64; m++)
            for (int n = 0; n < 8; n++) {
                float sum = 0.f;
                for (int kk = 0; kk < 16; kk++)
                    sum += (float)((int)(a[m * 16 + kk] % 7) - 3) * (float)((int)(bt[n * 16 + kk] % 7) - 3);
                memcpy(&e[blk * OUT + m * 8 + n], &sum, sizeof sum);
            }
    }
    void *args[] = {&in, &out};
    size_t sizes[] = {PTR, PTR};
    return chk_launch(c, k, BLOCKS, 1, 128, 0, args, sizes, 2) && chk_verify(c, out, e, BLOCKS * OUT);
}

bool chk_sm100a(probe_check *c)
{
    enum { BLOCKS = 2, N = BLOCKS * 32 };
    asyncrt_kernel *k;
    asyncrt_deviceptr in, out;
    uint32_t *h;
    if (!chk_kernel(c, "probe_sm100a", &k) || !(h = chk_input(c, N, &in)) || !chk_output(c, N, &out)) return false;
    void *args[] = {&in, &out};
    size_t sizes[] = {PTR, PTR};
    return chk_launch(c, k, BLOCKS, 1, 32, 0, args, sizes, 2) && chk_verify(c, out, h, N);
}

bool probe_check_feature(asyncrt_context *ctx, probe_feature feature, char *why, size_t why_size)
{
    static bool (*const checks[PROBE_FEATURE_COUNT])(probe_check *) = {
        [PROBE_LDGSTS] = chk_ldgsts,         [PROBE_MBARRIER] = chk_mbarrier,
        [PROBE_MBARRIER_TX] = chk_mbarrier_tx, [PROBE_BULK_COPY] = chk_bulk_copy,
        [PROBE_TMA_TILE] = chk_tma_tile,     [PROBE_TMA_IM2COL] = chk_tma_im2col,
        [PROBE_CLUSTERS] = chk_clusters,     [PROBE_MULTICAST] = chk_multicast,
        [PROBE_DSMEM] = chk_dsmem,           [PROBE_SM90A] = chk_sm90a,
        [PROBE_SM100A] = chk_sm100a,
    };
    probe_check c;
    chk_begin(&c, ctx, feature, why, why_size);
    bool ok = (unsigned)feature < PROBE_FEATURE_COUNT ? checks[feature](&c) : chk_fail(&c, "unknown feature");
    chk_end(&c);
    return ok;
}

void probe_check_device(asyncrt_context *ctx, const asyncrt_device_info *info, bool check,
                        probe_feature_result results[PROBE_FEATURE_COUNT])
{
    bool expected[PROBE_FEATURE_COUNT];
    probe_features_expected(info->cc_major, info->cc_minor, info->cluster_launch, expected);
    const char *broken_by = NULL;
    for (int f = 0; f < PROBE_FEATURE_COUNT; f++) {
        probe_feature_result *r = &results[f];
        r->reason[0] = '\0';
        if (!expected[f]) {
            r->status = PROBE_STATUS_NO;
        } else if (!check) {
            r->status = PROBE_STATUS_NOT_VERIFIED;
        } else if (broken_by) {
            /* A kernel fault is sticky: nothing more can run in this context. */
            r->status = PROBE_STATUS_FAILED;
            snprintf(r->reason, sizeof r->reason, "not run: the device context broke when %s failed", broken_by);
        } else if (probe_check_feature(ctx, (probe_feature)f, r->reason, sizeof r->reason)) {
            r->status = PROBE_STATUS_VERIFIED;
        } else {
            r->status = PROBE_STATUS_FAILED;
            if (asyncrt_synchronize(ctx) != ASYNCRT_SUCCESS) broken_by = probe_feature_get(f)->key;
        }
    }
}
