// parity: source=microsoft/MMA-Sim@21090c1d4b1e736f1805b04bc8c3613ed2673198:tests/nv/cuda/mma_sm90.cu; licence=MIT; copyright=Microsoft Corporation
// parity: arch=sm_90a
// parity: run=--kernel wgmma_m64n8k32_row_col_f32_e4m3_e4m3_kernel --grid 1 --block 128 --buf d=f32:64x8:rand=3 --buf a=u8:64x32:rand=1,0,127 --buf b=u8:8x32:rand=2,0,127 --arg buf:d --arg buf:a --arg buf:b
// parity: compare=d:exact
// parity: timing=skip (one warpgroup, a few microseconds: launch overhead)
// Device code of MMA-Sim's tests/nv/cuda/mma_sm90.cu, Copyright (c) Microsoft Corporation, MIT licence
// (LICENSES/microsoft-MMA-Sim.txt). Host launchers removed; the f32 <- e4m3 x e4m3 kernel kept.
// wgmma.mma_async m64n8k32 on fp8 (e4m3) operands from shared-memory descriptors built by hand; inputs are raw bytes
// 0..126 (0x7f, e4m3 NaN, excluded).

#include <stdint.h>

__global__ void wgmma_m64n8k32_row_col_f32_e4m3_e4m3_kernel(
    float *d, uint8_t *a, uint8_t *b)
{
    const uint32_t N = 8, K = 32;
    uint32_t tid = threadIdx.x;
    uint32_t warpid = tid / 32;
    uint32_t laneid = tid % 32;
    uint32_t groupid = laneid >> 2;
    uint32_t threadID_in_group = laneid % 4;
    float d_frag[4];
    __shared__ uint8_t a_smem[64 * K];
    __shared__ uint8_t b_smem[N * K];
    // load a
    for (uint32_t i = 0; i < 8; i++)
    {
        for (uint32_t k = 0; k < 2; k++)
        {
            uint32_t row = i * 8 + tid / 16;
            uint32_t col = k * 16 + tid % 16;
            a_smem[i * 256 + k * 128 + tid] = *(a + row * K + col);
        }
    }
    uint64_t a_desc = (__cvta_generic_to_shared(a_smem) & 0x3ffff) >> 4;
    a_desc |= (128ll & 0x3ffff) >> 4 << 16;
    a_desc |= (256ll & 0x3ffff) >> 4 << 32;
    // load b
    for (uint32_t k = 0; k < 2; k++)
    {
        uint32_t row = k * 16 + tid % 16;
        uint32_t col = tid / 16;
        b_smem[k * 128 + tid] = *(b + col * K + row);
    }
    uint64_t b_desc = (__cvta_generic_to_shared(b_smem) & 0x3ffff) >> 4;
    b_desc |= (128ll & 0x3ffff) >> 4 << 16;
    b_desc |= (256ll & 0x3ffff) >> 4 << 32;
    // load d
    for (uint32_t i = 0; i < 4; i++)
    {
        uint32_t row = warpid * 16 + groupid + i / 2 * 8;
        uint32_t col = (threadID_in_group * 2) + (i & 0x1);
        d_frag[i] = *(d + row * N + col);
    }
    // mma
    __syncthreads();
    asm volatile("wgmma.fence.sync.aligned;");
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3"
        "{%0, %1, %2, %3},"
        " %4, %5, 1, 1, 1;"
        : "+f"(d_frag[0]), "+f"(d_frag[1]), "+f"(d_frag[2]), "+f"(d_frag[3])
        : "l"(a_desc), "l"(b_desc));
    asm volatile("wgmma.commit_group.sync.aligned;");
    asm volatile("wgmma.wait_group.sync.aligned 0;");
    // store d
    for (uint32_t i = 0; i < 4; i++)
    {
        uint32_t row = warpid * 16 + groupid + i / 2 * 8;
        uint32_t col = (threadID_in_group * 2) + (i & 0x1);
        *(d + row * N + col) = d_frag[i];
    }
}

