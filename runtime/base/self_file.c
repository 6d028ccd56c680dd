/* Where this library's code lies (self_file.h). */
#define _GNU_SOURCE /* dladdr1 */
#include "self_file.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

/* The link map of the object holding this function: libasyncrt.so's, or
 * the program's when the library is linked into it (the first link map,
 * which has no name). Its file is then /proc/self/exe, unless ld.so was run
 * as a command ("ld.so PROGRAM": no interpreter, AT_BASE 0), where that is
 * ld.so and dladdr's name is the path ld.so was given. */
bool asyncrt__self_file(char *out, size_t size, bool *in_program)
{
    Dl_info info;
    struct link_map *map = NULL;
    char self[PATH_MAX];
    if (size) out[0] = '\0';
    if (!dladdr1((void *)asyncrt__self_file, &info, (void **)&map, RTLD_DL_LINKMAP) || !map ||
        !realpath(map->l_name[0] ? map->l_name : getauxval(AT_BASE) ? "/proc/self/exe" : info.dli_fname, self))
        return false;
    size_t n = strlen(self);
    if (n >= size) return false;
    memcpy(out, self, n + 1);
    *in_program = map == _r_debug.r_map;
    return true;
}

bool asyncrt__path_is_inside(const char *file, const char *dir)
{
    if (!file || !dir || !*dir || *dir != '/') return false;
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--; /* "/b/" is "/b" */
    if (n == 1) return *file == '/';        /* everything is in "/" */
    return strncmp(file, dir, n) == 0 && file[n] == '/';
}
