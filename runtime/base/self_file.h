/* Where this library's code lies: the file it was loaded from, so that what
 * it looks for beside itself (the installed compile worker) or trusts only
 * in its build tree (the set-up's NVRTC) follows the file, not a path fixed
 * when it was built. */
#ifndef ASYNCRT_SELF_FILE_H
#define ASYNCRT_SELF_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* The real path of libasyncrt.so, or of the program when the library is
 * linked into it statically (*in_program then true); false where the
 * loader cannot tell (out is then empty). */
bool asyncrt__self_file(char *out, size_t size, bool *in_program);

/* Whether the real path `file` lies inside the folder `dir` (a real path):
 * "/b/x" is in "/b", "/bx/y" is not; an empty or NULL one is in nothing. */
bool asyncrt__path_is_inside(const char *file, const char *dir);

#endif
