// parity: source=ademeure/llm.c@98a0ddf2d3abca0984fc6ecf1ed812f493166517:dev/cuda/transpose.cu; licence=MIT; copyright=Andrej Karpathy (llm.c), this file by GitHub user ademeure
// parity: arch=sm_90
// parity: run=--kernel 'transpose_kernel2<8, 32, true, true, __nv_fp8_e4m3, __nv_bfloat16>' --grid 256,256 --block 4,8 --buf transposed=u8:8192x8192:poison --buf copy=u8:8192x8192:poison --buf input=bf16:8192x8192:rand=1,-100,100 --buf scale=f32:1:fill=1.5 --arg buf:transposed --arg buf:copy --arg buf:input --arg buf:scale
// parity: compare=transposed:exact copy:exact
// Device code of an llm.c fork's dev/cuda/transpose.cu (ademeure/llm.c, branch fp8_simpler), MIT licence
// (LICENSES/karpathy-llm.c.txt, the fork's LICENSE). Host code removed. Inlined from the same commit's dev/cuda/common.h:
// WARP_SIZE, Packed128 and load128/store128 (verbatim). The fp8 outputs are u8 buffers (asyncrt-run has no fp8 dtype).
// bf16 -> __nv_fp8_e4m3 conversion with a scale from global memory, a 32x32 fp8 tile in static shared memory,
// store_same_length (int2/int stores by template), fused transpose + copy.

#include <cstring>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#define WARP_SIZE 32U

// Packed128 data structure, which forces the compiler to use 128-bit loads/stores
// in GPUs that support (the LDG.128 and STS.128 instructions)
// This is a bit similar to the use of float4 in the case of 32-bit floats, but
// supports arbitrary precision.

template<class ElementType>
struct alignas(16) Packed128 {
    // Note: = default implicitly generates a __device__ function, but explicitly
    // adding __device__ causes a lot of warnings.
    Packed128() = default;
    __device__ explicit Packed128(int4 bits) {
        static_assert(sizeof(bits) == sizeof(payload), "Size mismatch.");
        memcpy(&payload, &bits, sizeof(bits));
    }

    __device__  static Packed128 constant(ElementType value) {
        Packed128 result;
        for(int k = 0; k < size; ++k) {
            result.payload[k] = value;
        }
        return result;
    }

    __device__ static Packed128 zeros() {
        return constant(0);
    }

    __device__ static Packed128 ones() {
        return constant(1);
    }

    __device__ ElementType& operator[](int index) {
        return payload[index];
    }
    __device__ const ElementType& operator[](int index) const {
        return payload[index];
    }
    __device__ int4 get_bits() const {
        int4 bits;
        static_assert(sizeof(bits) == sizeof(payload), "Size mismatch.");
        memcpy(&bits, &payload, sizeof(bits));
        return bits;
    }
    // e.g. sizeof(int4) is 16 (4 X 4 bytes), sizeof(bfloat16) = 2, so size = 8
    // so in the case where ElementType = bfloat16, we store 8 elements in one Packed128
    static constexpr const int size = sizeof(int4) / sizeof(ElementType);
    ElementType payload[size];
};

// short-form typedef
typedef Packed128<float> f128;

// load a Packed128 from an aligned memory address
template<class ElementType>
__device__ Packed128<ElementType> load128(const ElementType* address) {
    return Packed128<ElementType>{*reinterpret_cast<const int4*>(address)};
}
// load a Packed128 from an aligned memory address with streaming cache hint
template<class ElementType>
__device__ Packed128<ElementType> load128cs(const ElementType* address) {
    return Packed128<ElementType>{__ldcs(reinterpret_cast<const int4*>(address))};
}
// store a Packed128 to an aligned memory address
template<class ElementType>
__device__ void store128(ElementType* target, Packed128<ElementType> value) {
    *reinterpret_cast<int4*>(target) = value.get_bits();
}
// store a Packed128 to an aligned memory address with streaming cache hint
template<class ElementType>
__device__ void store128cs(ElementType* target, Packed128<ElementType> value) {
    __stcs(reinterpret_cast<int4*>(target), value.get_bits());
}
// store a Packed128 to an aligned memory address while caching in L2 but bypassing L1
template<class ElementType>
__device__ void store128cg(ElementType* target, Packed128<ElementType> value) {
    __stcg(reinterpret_cast<int4*>(target), value.get_bits());
}


//#define TRANSPOSE_AND_COPY true
#define SCALING_FACTOR 1.5f

#if !defined(TRANSPOSE_AND_COPY)
#define TRANSPOSE_AND_COPY false
#endif

#if !defined(IN_TYPE)
#define IN_TYPE __nv_bfloat16
#endif
#if !defined(OUT_TYPE)
#define OUT_TYPE __nv_fp8_e4m3
#endif

float* d_scaling_factor = NULL;
#if defined(SCALING_FACTOR)
#define SCALING true
#else
#define SCALING_FACTOR 1.0f
#define SCALING false
#endif

#define DEFAULT_TILE 32UL // transpose tile size currently can only be 32x32
#define FIRST_TRANSPOSE_KERNEL 10 // kernels 0/1/2 are copy kernels without transpose


// ----------------------------------------------------------------------------
// This helper is for when we want to copy from e.g. FP32 to BF16
// e.g. if want to load a f128 of 4 elements, and write those 4 elements to memory as 64-bit
// not needed in the case of loads, the compiler will automatically optimise away unused reads
// (we might want to replace this with something like a fixed vector width class)

template<class OriginalType, class ElementType>
__device__ void store_same_length(ElementType* target, Packed128<ElementType> value) {
    int4 bits = value.get_bits();
    switch (sizeof(OriginalType) / sizeof(ElementType)) {
        case 0: *reinterpret_cast<int4*>(target) = bits; // smaller
        case 1: *reinterpret_cast<int4*>(target) = bits; // same size
        case 2: *reinterpret_cast<int2*>(target) = make_int2(bits.x, bits.y); break;
        case 4: *reinterpret_cast<int*>(target) = bits.x; break;
        default: break; //assert(false);
    }
}

// more optimized transpose kernel using 128-bit load/store and shared memory
template<size_t BLOCK_ROWS=8UL, size_t TILE_DIM=DEFAULT_TILE, bool scaling=SCALING, bool enable_copy=TRANSPOSE_AND_COPY, typename T1, typename T2>
__global__ void transpose_kernel2(T1* __restrict__ transposed, T1* __restrict__ copy, const T2* __restrict__ input, const float* __restrict__ scale_pointer=d_scaling_factor)
{
    // no +1 for bank conflict avoidance because:
    // 1) 128-bit shared memory stores need to be aligned to 128-bit boundaries
    // 2) it doesn't help as much with sub-32-bit data types
    __shared__ T1 tile[TILE_DIM][TILE_DIM];
    int width  = gridDim.x * TILE_DIM;
    int height = gridDim.y * TILE_DIM;

    constexpr size_t T1_elements = 16 / sizeof(T1);
    constexpr size_t T2_elements = 16 / sizeof(T2);
    constexpr size_t copy_len = (sizeof(T1) >= sizeof(T2)) ? (sizeof(T1) / sizeof(T2)) : 1;

    float scale_factor = scaling ? *scale_pointer : 1.0f;
    int x = blockIdx.x * TILE_DIM + (threadIdx.x * T2_elements);
    int y = blockIdx.y * TILE_DIM + threadIdx.y;

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        Packed128<T2> in128 = load128<T2>(input + x + (y+j)*width);
        Packed128<T1> copy128[copy_len];
        for (int k = 0; k < in128.size; k++) {
            T2 in = in128[k];
            T1 out = scaling ? (T1)((float)in * scale_factor) : (T1)in;
            copy128[k/T1_elements][k%T1_elements] = out; // optimised away by compiler if unused
        }

        for (int o = 0; o < copy_len; o++) {
            if constexpr (enable_copy) {
                store_same_length<T2,T1>(copy + x + (y+j)*width + o*T1_elements, copy128[o]);
            }
            size_t tile_offset = (threadIdx.x * T2_elements) + (threadIdx.y+j)*TILE_DIM + o*T1_elements;
            store_same_length<T2,T1>(&tile[0][0] + tile_offset, copy128[o]);
        }
    }
    __syncthreads();

    // we need fewer threads for the write than the read if T1_elements > T2_elements
    if (threadIdx.x >= TILE_DIM / T1_elements) {
        return;
    }

    x = blockIdx.y * TILE_DIM + threadIdx.x * T1_elements;
    y = blockIdx.x * TILE_DIM + threadIdx.y;

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        // we need more instructions for the write than the read if T2_elements > T1_elements
        for (int o = 0; o < copy_len; o++) {
            Packed128<T1> out128;
            for (int k = 0; k < out128.size; k++) {
                // these are tiny 8-bit loads with loads of bank conflicts for FP8
                // extremely hard to avoid and not a bottleneck when everything else is well optimised
                out128[k] = tile[k + (threadIdx.x + o * blockDim.x) * out128.size][threadIdx.y + j];
            }
            store128<T1>(transposed + x + (o * blockDim.x * out128.size) + (y+j)*height, out128);
        }
    }
}

template __global__ void transpose_kernel2<8, 32, true, true, __nv_fp8_e4m3, __nv_bfloat16>(__nv_fp8_e4m3* __restrict__ transposed, __nv_fp8_e4m3* __restrict__ copy, const __nv_bfloat16* __restrict__ input, const float* __restrict__ scale_pointer);
