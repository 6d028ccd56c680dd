/* A stand-in libcuda whose cuInit fails with $FAKE_CUINIT_RESULT, to drive
 * the real loader down its failure paths on machines without a GPU. */
#include <stdlib.h>

typedef int CUresult;

CUresult cuInit(unsigned flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                             int *status);

CUresult cuInit(unsigned flags)
{
    (void)flags;
    const char *r = getenv("FAKE_CUINIT_RESULT");
    return r ? atoi(r) : 999;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                             int *status)
{
    (void)symbol, (void)version, (void)flags, (void)status;
    *pfn = NULL;
    return 500; /* CUDA_ERROR_NOT_FOUND */
}
