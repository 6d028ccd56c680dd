// TMA 1D bulk copies (cp.async.bulk) in the style of the CUDA programming
// guide's "Using TMA to transfer one-dimensional arrays": each block loads
// BUF_LEN ints into shared memory, adds one, and stores them back in place.
#include <cuda/barrier>
#include <cuda/ptx>

using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace ptx = cuda::ptx;

static constexpr size_t BUF_LEN = 1024;

extern "C" __global__ void add_one_kernel(int *data)
{
    // The destination of a bulk copy must be 16-byte aligned.
    __shared__ alignas(16) int smem_data[BUF_LEN];
    const size_t offset = (size_t)blockIdx.x * BUF_LEN;

    // 1. Initialise the barrier and make it visible to the async proxy.
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ barrier bar;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        ptx::fence_proxy_async(ptx::space_shared);
    }
    __syncthreads();

    // 2. One thread starts the bulk copy and announces the bytes to expect.
    barrier::arrival_token token;
    if (threadIdx.x == 0) {
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, smem_data, data + offset, sizeof(smem_data),
                           cuda::device::barrier_native_handle(bar));
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(smem_data));
    } else {
        token = bar.arrive();
    }
    // 3. Wait for the data.
    bar.wait(std::move(token));

    // 4. Compute in shared memory.
    for (int i = threadIdx.x; i < (int)BUF_LEN; i += blockDim.x) smem_data[i] += 1;

    // 5. Make the writes visible to the TMA engine.
    ptx::fence_proxy_async(ptx::space_shared);
    __syncthreads();

    // 6. Store back with a bulk copy and wait until shared memory was read.
    if (threadIdx.x == 0) {
        ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, data + offset, smem_data, sizeof(smem_data));
        ptx::cp_async_bulk_commit_group();
        ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
    }
}
