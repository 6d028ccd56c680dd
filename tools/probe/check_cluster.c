/* --check for thread block clusters: launch with a cluster shape, multicast
 * bulk copies, and distributed shared memory. All use clusters of 2 CTAs. */
#include "check_support.h"

#define PTR sizeof(asyncrt_deviceptr)
#define CLUSTER 2

bool chk_clusters(probe_check *c)
{
    enum { BLOCKS = 8 };
    asyncrt_kernel *k;
    asyncrt_deviceptr out;
    uint32_t *e, salt = chk_random(c);
    if (!chk_kernel(c, "probe_clusters", &k) || !chk_output(c, BLOCKS, &out) || !(e = chk_host(c, BLOCKS)))
        return false;
    /* rank | cluster size << 8 | cluster id << 16 */
    for (uint32_t b = 0; b < BLOCKS; b++) e[b] = salt ^ (b % CLUSTER | CLUSTER << 8 | (b / CLUSTER) << 16);
    void *args[] = {&out, &salt};
    size_t sizes[] = {PTR, sizeof salt};
    return chk_launch(c, k, BLOCKS, 1, 128, CLUSTER, args, sizes, 2) && chk_verify(c, out, e, BLOCKS);
}

bool chk_multicast(probe_check *c)
{
    enum { BLOCKS = 4, WORDS = 1024 };
    asyncrt_kernel *k;
    asyncrt_deviceptr in, out;
    uint32_t *h, *e;
    if (!chk_kernel(c, "probe_multicast", &k) || !(h = chk_input(c, BLOCKS / CLUSTER * WORDS, &in)) ||
        !chk_output(c, BLOCKS * WORDS, &out) || !(e = chk_host(c, BLOCKS * WORDS)))
        return false;
    /* every CTA holds its whole cluster's block */
    for (int b = 0; b < BLOCKS; b++)
        for (int i = 0; i < WORDS; i++) e[b * WORDS + i] = h[b / CLUSTER * WORDS + i];
    void *args[] = {&in, &out};
    size_t sizes[] = {PTR, PTR};
    return chk_launch(c, k, BLOCKS, 1, 128, CLUSTER, args, sizes, 2) && chk_verify(c, out, e, BLOCKS * WORDS);
}

bool chk_dsmem(probe_check *c)
{
    enum { BLOCKS = 4, THREADS = 128, N = BLOCKS * THREADS };
    asyncrt_kernel *k;
    asyncrt_deviceptr in, out;
    uint32_t *h, *e;
    if (!chk_kernel(c, "probe_dsmem", &k) || !(h = chk_input(c, N, &in)) || !chk_output(c, N, &out) ||
        !(e = chk_host(c, N)))
        return false;
    /* thread t of a CTA reads word t+1 of its peer (the other rank of the pair) */
    for (int b = 0; b < BLOCKS; b++)
        for (int t = 0; t < THREADS; t++) e[b * THREADS + t] = h[(b ^ 1) * THREADS + (t + 1) % THREADS];
    void *args[] = {&in, &out};
    size_t sizes[] = {PTR, PTR};
    return chk_launch(c, k, BLOCKS, 1, THREADS, CLUSTER, args, sizes, 2) && chk_verify(c, out, e, N);
}
