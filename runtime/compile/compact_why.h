/* The steps of compact images (ptx_prune, ptx_mirror, ptx_assemble,
 * image_elf, image_equal) each say why they refuse into a caller's buffer. */
#ifndef ASYNCRT_COMPACT_WHY_H
#define ASYNCRT_COMPACT_WHY_H

#include <stdbool.h>
#include <stddef.h>

/* Formats the reason into why (truncated to why_size; none when 0) and
 * returns false, so that a refusal is one statement: return asyncrt__why(...). */
bool asyncrt__why(char *why, size_t why_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
