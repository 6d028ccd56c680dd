/* NVRTC's options, as nvPTXCompiler takes them (issue 37): the compact
 * image must be assembled as NVRTC's own ptxas assembled NVRTC's image.
 * Each mapping below was checked to give NVRTC 13.1.115's CUBIN byte for
 * byte, the .note.nv.tkinfo note (which records ptxas's options) included;
 * image_equal.h proves it again for every image. Pure: no I/O. */
#ifndef ASYNCRT_PTX_MIRROR_H
#define ASYNCRT_PTX_MIRROR_H

#include <stdbool.h>
#include <stddef.h>

/* nvPTXCompiler's options for a compile NVRTC ran with `nvrtc_options`,
 * each checked to give NVRTC's CUBIN byte for byte (13.1.115):
 *   -arch=sm_XY[a|f]        --gpu-name=sm_XY[a|f] (compute_XY: PTX, refused)
 *   -G                      --device-debug --dont-merge-basicblocks --return-at-end
 *   -G with -dopt=on        --generate-line-info (NVRTC's own ptxas gets no -g)
 *   -lineinfo               --generate-line-info
 *   --maxrregcount=N        --maxrregcount=N
 *   -Xptxas OPT             OPT (--ptxas-options=OPT the same)
 *   --fmad=false            --fmad=false (true: nothing, ptxas's default)
 *   -Ofc=L                  -Ofc=L
 *   --split-compile=N       --split-compile=N
 *   --device-stack-protector=true   the same (false: nothing)
 * Options of the front end and NVVM only (-std, -D, -I, -default-device,
 * precompiled headers, -ftz, -use_fast_math, -Xnvvm ...) add nothing.
 * Relocatable code and LTO (-rdc=true, -dlto, -gen-opt-lto) are refused,
 * and so is any option not in these lists, by name. Both "-opt=value" and
 * "-opt value", one or two dashes, as NVRTC takes them.
 * On success *out is a NULL-terminated malloc'd array of malloc'd strings
 * (free with asyncrt__ptx_options_free), *count its length. */
bool asyncrt__ptx_mirror_options(const char *const *nvrtc_options, size_t n, char ***out, size_t *count, char *why,
                                 size_t why_size);
void asyncrt__ptx_options_free(char **options);

#endif
