#include "emit.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exit_codes.h"
#include "tool_io.h" /* the atomic write */

char *emit_note(int argc, char **argv)
{
    size_t length = 1;
    for (int i = 0; i < argc; i++) length += strlen(argv[i]) + 16;
    char *note = malloc(length), *at = note;
    for (int i = 0; note && i < argc; i++) at += sprintf(at, "%s%s", i ? " " : "", i ? argv[i] : "asyncrt-bundle");
    return note;
}

bool emit_symbol_ok(const char *s)
{
    if (!s[0] || (s[0] >= '0' && s[0] <= '9') || strlen(s) > 200) return false;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

/* C source for the bytes: one string literal per line of the data (most of
 * it header text), other bytes as three-digit octal escapes, '?' escaped
 * against trigraphs. A string compiles far faster than a list of numbers. */
static unsigned char *as_c(const unsigned char *bytes, size_t size, const char *symbol, size_t *out_size)
{
    char *text = size < SIZE_MAX / 8 ? malloc(2048 + 5 * size) : NULL; /* a byte takes 5 characters at most */
    if (!text) return NULL;
    char *at = text;
    at += sprintf(at, "/* A header bundle written by asyncrt-bundle --format c: pass %s and %s_size to\n"
                      " * asyncrt_bundle_load. */\n#include <stddef.h>\n\nextern const unsigned char %s[];\n"
                      "extern const size_t %s_size;\nconst unsigned char %s[] =\n\"", /* symbol: 200 at most */
                  symbol, symbol, symbol, symbol, symbol);
    for (size_t i = 0; i < size; i++) {
        unsigned char c = bytes[i];
        if (c == '\n') at += sprintf(at, "\\n\"\n\"");
        else if (c == '"' || c == '\\' || c == '?') at += sprintf(at, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f) *at++ = (char)c;
        else at += sprintf(at, "\\%03o", c);
    }
    at += sprintf(at, "\";\nconst size_t %s_size = sizeof %s - 1; /* less the literal's NUL */\n", symbol, symbol);
    *out_size = (size_t)(at - text);
    return (unsigned char *)text;
}

int emit_target_check(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || S_ISREG(st.st_mode)) return 0; /* absent (or unreadable: the write says why) */
    const char *what = S_ISLNK(st.st_mode)    ? "a symbolic link"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISDIR(st.st_mode)  ? "a directory"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    fprintf(stderr, "asyncrt-bundle: -o %s is %s; -o replaces only a regular file (or creates one): name another "
                    "path, or remove it first\n", path, what);
    return TOOL_EXIT_USAGE;
}

int emit_write(const char *path, const unsigned char *bytes, size_t size, bool c_format, const char *symbol)
{
    int refused = emit_target_check(path); /* again: the compiles took a while */
    if (refused) return refused;
    size_t n = size;
    unsigned char *c = c_format ? as_c(bytes, size, symbol, &n) : NULL;
    if (c_format && !c) return TOOL_EXIT_INTERNAL;
    bool ok = tool_file_write(AT_FDCWD, path, c ? c : bytes, n, 0644);
    if (!ok) fprintf(stderr, "asyncrt-bundle: cannot write %s: %s\n", path, strerror(errno));
    free(c);
    return ok ? 0 : TOOL_EXIT_IO;
}
