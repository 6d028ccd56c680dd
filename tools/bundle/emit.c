#include "emit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cache_codec.h"
#include "cache_trust.h"
#include "exit_codes.h"

unsigned char *emit_bundle(const bundle_names *names, int argc, char **argv, size_t *size)
{
    asyncrt_writer note = {0};
    for (int i = 0; i < argc; i++) {
        if (i) asyncrt__put(&note, " ", 1);
        asyncrt__put(&note, i ? argv[i] : "asyncrt-bundle", strlen(i ? argv[i] : "asyncrt-bundle"));
    }
    asyncrt__put(&note, "", 1);
    const char **texts = calloc(names->file_count + 1, sizeof *texts);
    const char **list = calloc(names->name_count + 1, sizeof *list);
    size_t *text_of = calloc(names->name_count + 1, sizeof *text_of);
    unsigned char *bytes = NULL;
    if (texts && list && text_of && !note.failed) {
        for (size_t i = 0; i < names->file_count; i++) texts[i] = names->files[i].text;
        for (size_t i = 0; i < names->name_count; i++) {
            list[i] = names->names[i].name;
            text_of[i] = names->names[i].file;
        }
        bytes = asyncrt__bundle_encode((const char *)note.data, texts, names->file_count, list, text_of,
                                       names->name_count, size);
    }
    free(note.data);
    free(texts);
    free(list);
    free(text_of);
    return bytes;
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
    asyncrt_writer w = {0};
    char line[1024]; /* the symbol is at most 4 x 200 characters (emit_symbol_ok) */
    snprintf(line, sizeof line, "/* A header bundle written by asyncrt-bundle --format c: pass %s and %s_size to\n"
                                " * asyncrt_bundle_load. */\n#include <stddef.h>\n\nextern const unsigned char %s[];\n"
                                "extern const size_t %s_size;\nconst unsigned char %s[] =\n\"", symbol, symbol, symbol,
             symbol, symbol);
    asyncrt__put(&w, line, strlen(line));
    for (size_t i = 0; i < size; i++) {
        unsigned char c = bytes[i];
        char esc[8];
        if (c == '\n') snprintf(esc, sizeof esc, "\\n\"\n\"");
        else if (c == '"' || c == '\\' || c == '?') snprintf(esc, sizeof esc, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f) snprintf(esc, sizeof esc, "%c", c);
        else snprintf(esc, sizeof esc, "\\%03o", c);
        asyncrt__put(&w, esc, strlen(esc));
    }
    snprintf(line, sizeof line, "\";\nconst size_t %s_size = sizeof %s - 1; /* less the literal's NUL */\n", symbol,
             symbol);
    asyncrt__put(&w, line, strlen(line));
    *out_size = w.size;
    if (w.failed) free(w.data);
    return w.failed ? NULL : w.data;
}

int emit_write(const char *path, const unsigned char *bytes, size_t size, bool c_format, const char *symbol)
{
    size_t n = size;
    unsigned char *c = c_format ? as_c(bytes, size, symbol, &n) : NULL;
    if (c_format && !c) return TOOL_EXIT_INTERNAL;
    bool ok = asyncrt__cache_write_file(AT_FDCWD, path, c ? c : bytes, n, 0644);
    if (!ok) fprintf(stderr, "asyncrt-bundle: cannot write %s: %s\n", path, strerror(errno));
    free(c);
    return ok ? 0 : TOOL_EXIT_IO;
}
