/* The assembler of compact images (issue 37): the user's own nvPTXCompiler,
 * of NVRTC's exact version, turns NVRTC's (pruned) PTX into a CUBIN.
 *
 * NVIDIA ships nvPTXCompiler only as libnvptxcompiler_static.a (the
 * nvidia-nvptxcompiler wheel), and the CUDA EULA does not list it among the
 * files an application may redistribute: asyncrt never ships it. The set-up
 * (tools/setup-ptxcompiler.sh) builds, on the user's machine and from the
 * user's download, a shared "loader library" of it, libasyncrt_ptxcompiler.so,
 * beside the NVRTC it matches; it exports nvPTXCompiler's C API and
 * asyncrt_ptxcompiler_version(), the wheel's full version ("13.1.115"). This
 * file dlopen()s it like NVRTC, checks that version against NVRTC's, and
 * assembles with NVRTC's options mirrored (ptx_mirror.h).
 *
 * Why the versions must be equal: NVRTC runs its own copy of ptxas; given
 * NVRTC's PTX and the same options, nvPTXCompiler of the same release gives
 * NVRTC's CUBIN byte for byte (46 of 46 parity kernels), another release
 * other code. The proof that an image is NVRTC's own is image_equal.h's.
 *
 * Messages start "compact images off: " where the feature cannot run at all
 * (for -v and asyncrt-probe), and name the value and the rule. */
#ifndef ASYNCRT_PTX_ASSEMBLE_H
#define ASYNCRT_PTX_ASSEMBLE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib_search.h" /* asyncrt_lib_version */

#define ASYNCRT_PTXCOMPILER_FILE "libasyncrt_ptxcompiler.so"

/* The loader library's path: `override` ($ASYNCRT_PTXCOMPILER, read by the
 * caller's settings) when non-empty, else ASYNCRT_PTXCOMPILER_FILE in the
 * folder of `nvrtc_path` (the NVRTC file a compile uses, links resolved):
 * the set-up puts it beside the NVRTC whose version it has. false (with
 * why) where neither gives a path. No file is opened. */
bool asyncrt__ptxcompiler_path(const char *override, const char *nvrtc_path, char *out, size_t out_size, char *why,
                               size_t why_size);

typedef struct asyncrt_ptxcompiler asyncrt_ptxcompiler;

/* Opens the loader library at `path` and checks that its version equals
 * `nvrtc` in all three parts; where NVRTC's patch level is unknown ("13.0":
 * a toolkit's libnvrtc.so.13), in major and minor, and the caller holds
 * each PTX's own version (asyncrt__ptx_made_by) to it with
 * asyncrt__ptxcompiler_matches, as compact.h does. NULL or an unknown minor
 * is refused. Each call opens its own handle
 * (dlopen of the ~35 MB library: measure before calling per compile). */
bool asyncrt__ptxcompiler_open(const char *path, const asyncrt_lib_version *nvrtc, asyncrt_ptxcompiler **out, char *why,
                               size_t why_size);
/* NULL is fine. */
void asyncrt__ptxcompiler_close(asyncrt_ptxcompiler *c);
/* "13.1.115", and the file opened. */
const char *asyncrt__ptxcompiler_version(const asyncrt_ptxcompiler *c);
const char *asyncrt__ptxcompiler_file(const asyncrt_ptxcompiler *c);

/* The exact version of the NVRTC that wrote `ptx`, from its header comment
 * ("// Cuda compilation tools, release 13.0, V13.0.88"): known even where
 * the search is not (a toolkit's libnvrtc.so.13 names no patch level).
 * false where the first lines hold no such line. */
bool asyncrt__ptx_made_by(const char *ptx, size_t size, asyncrt_lib_version *out);
/* Whether PTX of NVRTC `v` is what `c` assembles as NVRTC did: the same
 * version, all three parts. */
bool asyncrt__ptxcompiler_matches(const asyncrt_ptxcompiler *c, const asyncrt_lib_version *v);

/* Assembles `ptx` (size bytes; a trailing NUL is fine) with `options`
 * (ptx_mirror.h's). On success *cubin (malloc'd) and *size.
 * On failure why holds nvPTXCompiler's result and the start of its log. */
bool asyncrt__ptx_assemble(const asyncrt_ptxcompiler *c, const char *ptx, size_t size, const char *const *options,
                           size_t count, void **cubin, size_t *cubin_size, char *why, size_t why_size);

#endif
