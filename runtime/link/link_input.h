/* What a link input is, read from its bytes: its kind (nvJitLink's input
 * types), the GPU architecture it was built for, and, for relocatable
 * CUBINs, the symbols it defines and the extern __shared__ arrays it uses.
 * Pure functions over a buffer, bounds-checked, so they are tested on
 * tables and fuzzable. */
#ifndef ASYNCRT_LINK_INPUT_H
#define ASYNCRT_LINK_INPUT_H

#include <stdbool.h>
#include <stddef.h>

/* The kind by content (ASYNCRT_JIT_*, link_jit.h): a CUDA ELF is a CUBIN,
 * another ELF a host object (nvcc -c, its device code in .nv_fatbin), "!<arch>"
 * a library, fatbin and LTO-IR by their magic numbers, text with a
 * ".version" directive PTX. 0 when it is none of these. */
int asyncrt__link_sniff(const void *data, size_t size);

/* The SM numbers (90 for sm_90) the input holds code for: a CUBIN's one
 * (ELF e_flags), every entry of a fatbin, a PTX text's .target, a host
 * object's fatbin section (nvcc -c, -rdc or not), every member of a library
 * together (a library within a library is not read). Returns the count
 * written (at most cap; 0 when the kind does not say: LTO-IR, an object
 * without device code). */
size_t asyncrt__link_archs(int kind, const void *data, size_t size, int *archs, size_t cap);

/* Calls `each` for every named member of an ar archive ("!<arch>", GNU
 * long names too; the symbol tables are skipped). False when it is not one
 * or a header is damaged (the members before it were given). */
bool asyncrt__link_members(const void *data, size_t size,
                           void (*each)(const char *name, const void *member, size_t member_size, void *arg),
                           void *arg);

/* "b80.o sm_80; c.o sm_80, sm_86": each member of a library that says its
 * arch, for a message (truncated to out_size). */
void asyncrt__link_describe_members(const void *data, size_t size, char *out, size_t out_size);

/* True for relocatable ELF (ET_REL: -rdc=true), false for a whole-program
 * image, whose symbols are already resolved. */
bool asyncrt__link_relocatable(const void *data, size_t size);

/* Calls `each` for every global (not weak) symbol a CUDA ELF defines, and
 * for every extern __shared__ array it uses (an undefined shared-memory
 * symbol: its __align__ is not kept by relocatable code, see link.h), with
 * `shared` telling which. False when the ELF cannot be read. */
bool asyncrt__link_symbols(const void *data, size_t size,
                           void (*each)(const char *name, bool shared, void *arg), void *arg);

/* "CUBIN", "PTX", "LTO-IR", ... for an ASYNCRT_JIT_* kind ("unknown" for another). */
const char *asyncrt__link_kind_name(int kind);

#endif
