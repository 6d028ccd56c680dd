/* The prune of compact images (issue 37): NVRTC defines every const or
 * constexpr namespace-scope variable and static data member its headers
 * declare (about 1,000 libcu++ ones for a kernel that includes CCCL), where
 * nvcc defines only those the code uses. This scanner deletes from NVRTC's
 * PTX the `.global` definitions that
 *   - have a mangled name in a library namespace: cuda, cub, thrust, nv,
 *     cooperative_groups, nvcuda or std, directly or under NVRTC's
 *     _INTERNAL_<hash>_<file> wrapper of internal-linkage names (a host may
 *     look up a user's variable by name: those are never touched);
 *   - have no linkage directive (never .visible, .extern, .weak, .common);
 *   - are referenced by nothing kept: no function, no kept variable's
 *     initializer, no other module-level statement (debug sections included).
 * It touches no .const, .shared or other state space.
 *
 * ptxas gives every .global an 8-byte slot of constant bank 4, in the order
 * of their definitions, and the code reads c[0x4][slot]: a removed variable
 * that stands before a kept .global is therefore replaced by a 1-byte
 * placeholder (".global .align 1 .b8 $a7[1];"), so that no kept slot moves;
 * those after the last kept .global go. Placeholders get short names ($a0,
 * $a1 ... or another $-letter no identifier of the input starts with): a
 * CUBIN keeps every symbol's name, and ~1,100 mangled names are ~100 KB.
 *
 * The scanner refuses (false, with the reason) whatever it does not
 * understand: an unterminated comment or string, unbalanced braces, a NUL
 * byte, a module-level directive outside the list it knows, a definition of
 * a library name twice or with several declarators. A refusal means: keep
 * NVRTC's image. Pure: no I/O, no global state; the output depends only on
 * the input bytes (a second prune of its output gives the same bytes). */
#ifndef ASYNCRT_PTX_PRUNE_H
#define ASYNCRT_PTX_PRUNE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct asyncrt_ptx_prune {
    char *ptx;           /* the pruned PTX, NUL-terminated (malloc'd) */
    size_t size;         /* its length, without the NUL */
    size_t removed;      /* definitions deleted */
    size_t placeholders; /* definitions replaced by a 1-byte placeholder */
    size_t kept;         /* library-namespace .global definitions kept (referenced) */
    /* The names of the removed and placeholder definitions, sorted by
     * strcmp: nothing in the PTX referenced them (image_equal.h's input);
     * placeholders_of[i] is unreferenced[i]'s placeholder name, NULL where
     * it was removed. */
    char **unreferenced;
    char **placeholders_of;
    size_t unreferenced_count;
} asyncrt_ptx_prune;

/* Prunes `size` bytes of PTX (trailing NULs, as NVRTC's image has one, are
 * ignored). true: *out is filled (removed may be 0: nothing to prune) and
 * must be freed with asyncrt__ptx_prune_free. false: *out is zeroed and
 * `why` says what was not understood (line numbers are 1-based). */
bool asyncrt__ptx_prune(const char *ptx, size_t size, asyncrt_ptx_prune *out, char *why, size_t why_size);

/* Frees what *p holds and zeroes it; NULL and a zeroed *p are fine. */
void asyncrt__ptx_prune_free(asyncrt_ptx_prune *p);

/* Whether `name` (len bytes) is a mangled name in a library namespace, as
 * above: _ZN or _ZZN, optionally an _INTERNAL_ component, then cuda, cub,
 * thrust, nv, cooperative_groups, nvcuda, std or St; or _ZSt. */
bool asyncrt__ptx_library_name(const char *name, size_t len);

#endif
