/* Lean CUBINs. NVRTC (12 and 13) emits every static data member the headers
 * instantiate: a kernel including <cuda/barrier> carries ~1000 unused
 * .global variables (integral_constant<...>::value and friends), a 148 KB
 * CUBIN where nvcc gives 4.8 KB, and that costs disk, cache and module load
 * time. No NVRTC option removes them (tried: --minimal, -ewp, -dopt,
 * -default-device). So for a CUBIN target, asyncrt takes the PTX NVRTC made
 * alongside, drops module-local globals nothing references, and assembles
 * it with nvJitLink (dlopen()ed beside NVRTC); if anything of that is not
 * possible, NVRTC's own CUBIN is kept. The default since the H100 ran the
 * GPU suite on lean images (cuModuleLoadData of the <cuda/barrier> kernel:
 * 0.08 ms for 5.6 KB instead of 4.4 ms for 162 KB); ASYNCRT_LEAN=0 turns it
 * off. Known cost: nvJitLink 13.0 leaks
 * ~3.3 KB per link for sm_100 and newer targets (its own bug, LeakSanitizer
 * suppression in tests/reliability/lsan.supp); once per compile, not per hit. */
#ifndef ASYNCRT_LEAN_H
#define ASYNCRT_LEAN_H

#include <stdbool.h>
#include <stddef.h>

/* True unless ASYNCRT_LEAN=0, read on each compile (it is in the cache key). */
bool asyncrt__lean_enabled(void);

/* Pure: removes, in place, the module-scope .global/.const declarations that
 * are neither .visible, .extern nor .weak and are named nowhere else in the
 * PTX (repeatedly, as a dropped initializer may free another). `ptx` is
 * NUL-terminated; returns how many declarations were removed. */
size_t asyncrt__lean_prune_ptx(char *ptx);

/* True when NVRTC options leave the CUBIN to ptxas defaults, so assembling
 * the PTX ourselves gives the same code: no -G, -lineinfo, -maxrregcount,
 * -Xptxas / --ptxas-options, -dlto, -rdc or debug options among them. */
bool asyncrt__lean_options_allow(const char *const *options, size_t count);

/* Assembles `ptx` for `arch` ("sm_90", "sm_90a") with nvJitLink found beside
 * `nvrtc_path`. On success returns a malloc'd CUBIN; on failure NULL and why. */
void *asyncrt__lean_assemble(const char *nvrtc_path, const char *ptx, const char *arch, size_t *size,
                            char *why, size_t why_size);

/* The kernel the numbers above are about (y = 2x + 1 staged through shared
 * memory with cuda::memcpy_async on a cuda::barrier, extern "C"
 * barrier_scale(const float *x, float *y, int n)), for the tests and
 * asyncrt-bench; and an option that keeps NVRTC's own CUBIN without
 * changing the code (-Xptxas=-O3 is ptxas's default). */
extern const char *const asyncrt__lean_barrier_example;
extern const char *const asyncrt__lean_off_option;

/* For compile.c: when the program's CUBIN carries unused globals, replaces
 * *image with the lean one (logging both sizes at ASYNCRT_LOG=2); otherwise,
 * or on any failure (logged at ASYNCRT_LOG=1), leaves it as it is. */
typedef struct asyncrt_context asyncrt_context;
typedef struct asyncrt_nvrtc asyncrt_nvrtc;
void asyncrt__lean_apply(asyncrt_context *ctx, const asyncrt_nvrtc *nv, void *nvrtc_program,
                        const char *arch, unsigned char **image, size_t *image_size);

#endif
