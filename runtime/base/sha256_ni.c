/* SHA-256's compression on the x86 SHA extensions (SHA-NI), several times
 * the portable code's speed: a remote cache hit hashes the value (HMAC), the
 * entry and the manifest it installs, ~0.5 MB for a CCCL kernel. The
 * rounds are Intel's published sequence (as in the public-domain
 * SHA-Intrinsics), written as a loop over the 16 groups of 4 rounds. */
#include "sha256.h"

#include <stdatomic.h>
#include <stdbool.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

/* CPUID, not __builtin_cpu_supports: clang's builtin knows no "sha". */
static bool cpu_has_sha_ni(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29)); /* leaf 7 EBX bit 29: SHA */
}

bool asyncrt__sha256_ni_usable(void)
{
    static atomic_int usable = -1; /* every thread computes the same answer */
    int u = atomic_load_explicit(&usable, memory_order_relaxed);
    if (u < 0) {
        u = cpu_has_sha_ni();
        atomic_store_explicit(&usable, u, memory_order_relaxed);
    }
    return u;
}

__attribute__((target("sha,sse4.1,ssse3"))) void asyncrt__sha256_ni_blocks(uint32_t state[8], const uint8_t *data,
                                                                         size_t blocks)
{
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL); /* big-endian words */
    __m128i t = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i s1 = _mm_loadu_si128((const __m128i *)&state[4]);
    t = _mm_shuffle_epi32(t, 0xB1);          /* CDAB */
    s1 = _mm_shuffle_epi32(s1, 0x1B);        /* EFGH */
    __m128i s0 = _mm_alignr_epi8(t, s1, 8);  /* ABEF */
    s1 = _mm_blend_epi16(s1, t, 0xF0);       /* CDGH */
    for (; blocks; blocks--, data += 64) {
        __m128i abef = s0, cdgh = s1, w[4];
        for (int g = 0; g < 16; g++) {
            __m128i m;
            if (g < 4) {
                m = w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * g)), swap);
            } else { /* w[g-4], w[g-3], w[g-2], w[g-1] are slots g, g+1, g+2, g+3 (mod 4) */
                m = _mm_add_epi32(_mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]),
                                  _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
                m = w[g & 3] = _mm_sha256msg2_epu32(m, w[(g + 3) & 3]);
            }
            __m128i msg = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)&asyncrt__sha256_k[4 * g]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(msg, 0x0E));
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
    }
    t = _mm_shuffle_epi32(s0, 0x1B);         /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);        /* DCHG */
    s0 = _mm_blend_epi16(t, s1, 0xF0);       /* DCBA */
    s1 = _mm_alignr_epi8(s1, t, 8);          /* ABEF */
    _mm_storeu_si128((__m128i *)&state[0], s0);
    _mm_storeu_si128((__m128i *)&state[4], s1);
}

#else

bool asyncrt__sha256_ni_usable(void) { return false; }
void asyncrt__sha256_ni_blocks(uint32_t state[8], const uint8_t *data, size_t blocks)
{
    (void)state, (void)data, (void)blocks;
}

#endif
