// A programmatic dependent launch pair (sm_90+). `produce` lets the next
// launch start early (griddepcontrol.launch_dependents) after its writes;
// `consume` waits for them (griddepcontrol.wait: the primary grid has
// completed and its memory is visible) before reading. Run as
//   --kernel produce ... --then --kernel consume --pdl ...
extern "C" __global__ void produce(int *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = 2 * i + 7;
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

extern "C" __global__ void consume(const int *a, int *b, int n)
{
    // Work that does not depend on the producer could go here.
    asm volatile("griddepcontrol.wait;" ::: "memory");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[n - 1 - i] + 1;
}
