/* The proof of compact images (issue 37): is the CUBIN nvPTXCompiler made
 * from NVRTC's pruned PTX (ptx_prune.h) the same program as NVRTC's own
 * CUBIN of the same compile? Only then may it stand in for it.
 *
 * Both ELFs are read within their bounds, and sections, symbols and
 * relocations are matched by name (indices move when definitions go):
 *   - every section but those below: the same type, flags, alignment, size
 *     and bytes, and its links by name. That covers the code (.text.*,
 *     whose flags hold the register count), shared memory (.nv.shared.*:
 *     size and alignment), the constant banks other than 4 (parameters,
 *     .const data), .nv.compat, debug sections, and .note.nv.tkinfo, which
 *     records ptxas's options (the options were mirrored right);
 *   - .nv.info and .nv.info.KERNEL: the same records, symbol indices read
 *     as names (registers, frame and stack sizes, max threads, parameter
 *     layout, externs); .nv.callgraph the same, by name;
 *   - relocations: the same (offset, type, symbol by name, addend), none
 *     through the section symbol of the globals' sections (whose offsets
 *     change);
 *   - constant bank 4 (ptxas's slots of the globals' addresses): the
 *     compact bank is a prefix of NVRTC's, slot for slot the same symbol by
 *     name (or the placeholder of that symbol); every slot past its end
 *     holds a global in `unreferenced`;
 *   - symbols: the same, by name, with the same binding, type, section and
 *     (but for globals) value and size; a global's size and initial bytes
 *     the same unless it is in `unreferenced`; NVRTC's symbols missing from
 *     the compact image are all globals in `unreferenced`, and the compact
 *     image's own are its placeholders.
 * `unreferenced` is the prune's list (sorted by strcmp): the globals no
 * function or kept variable of the PTX mentions, which ptxas therefore never
 * addresses; `placeholders[i]` (NULL: none) names the 1-byte global that
 * stands in unreferenced[i]'s slot. Program headers are not compared (the
 * loader derives them from the sections); .strtab, .symtab and .shstrtab
 * only through what they name; the globals' sections' alignment is their
 * most aligned global's, which removing one may lower.
 * Pure: no I/O, no global state. */
#ifndef ASYNCRT_IMAGE_EQUAL_H
#define ASYNCRT_IMAGE_EQUAL_H

#include <stdbool.h>
#include <stddef.h>

/* true: `compact` may stand in for `nvrtc`. false: keep NVRTC's image;
 * `why` names the first difference (section, symbol, kernel) or what could
 * not be read. */
bool asyncrt__image_equal(const void *nvrtc, size_t nvrtc_size, const void *compact, size_t compact_size,
                          const char *const *unreferenced, const char *const *placeholders, size_t unreferenced_count,
                          char *why, size_t why_size);

#endif
