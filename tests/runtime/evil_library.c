/* A library that is not what its name says (test_settings.c): loading it runs
 * its constructor, which leaves a mark, <$EVIL_MARKER_DIR>/<its file name>,
 * holding the effective uid it ran with. Never linked into anything. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void leave_a_mark(void)
{
    const char *dir = getenv("EVIL_MARKER_DIR");
    Dl_info info;
    if (!dir || !dladdr((void *)leave_a_mark, &info) || !info.dli_fname) return;
    const char *name = strrchr(info.dli_fname, '/');
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name ? name + 1 : info.dli_fname);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "euid=%u\n", (unsigned)geteuid());
    fclose(f);
}
