#define _DEFAULT_SOURCE /* realpath */
/* Which include names a bundle must hold (bundle_names.h), for the bundle maker. */
#include "bundle_names.h"

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safe_io.h"
#include "sha256.h"

static char *read_text(const char *path, char *why, size_t why_size)
{
    size_t size = 0;
    char *data = (char *)asyncrt__file_read(AT_FDCWD, path, ASYNCRT_FILE_MAX, false, &size, why,
                                                  why_size);
    if (!data && !why[0]) snprintf(why, why_size, "%s is gone", path);
    if (!data) return NULL;
    char *text = realloc(data, size + 1);
    if (!text) {
        free(data);
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    text[size] = '\0';
    if (strlen(text) != size) {
        snprintf(why, why_size, "%s holds a NUL byte: not a header NVRTC reads", path);
        free(text);
        return NULL;
    }
    return text;
}

static long find_file(const asyncrt_bundle_names *b, const char *real)
{
    for (size_t i = 0; i < b->file_count; i++)
        if (strcmp(b->files[i].real, real) == 0) return (long)i;
    return -1;
}

/* sha NULL: a file found by the include closure (no recorded hash to match). */
bool asyncrt__bundle_names_add_file(asyncrt_bundle_names *b, const char *path, const uint8_t sha[32], char *why,
                                    size_t why_size)
{
    char real[PATH_MAX];
    why[0] = '\0';
    if (!realpath(path, real)) {
        snprintf(why, why_size, "%s, which NVRTC read, is gone", path);
        return false;
    }
    if (find_file(b, real) >= 0) return true;
    char *text = read_text(real, why, why_size);
    if (!text) return false;
    uint8_t now[32];
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    asyncrt__sha256_update(&h, text, strlen(text));
    asyncrt__sha256_final(&h, now);
    asyncrt_bundle_file *grown = realloc(b->files, (b->file_count + 1) * sizeof *grown);
    char *copy = strdup(real);
    if ((sha && memcmp(now, sha, 32) != 0) || !grown || !copy) {
        if (grown) b->files = grown;
        snprintf(why, why_size, grown && copy ? "%s changed while it was being bundled: run again" : "out of memory",
                 real);
        free(text);
        free(copy);
        return false;
    }
    b->files = grown;
    b->files[b->file_count++] = (asyncrt_bundle_file){copy, text};
    return true;
}

/* The file `name` reaches from `dir` (realpath'd into out), if it exists. */
static bool try_at(const char *dir, const char *name, char out[PATH_MAX])
{
    char joined[PATH_MAX * 2];
    snprintf(joined, sizeof joined, "%s/%s", dir, name);
    return realpath(joined, out) != NULL;
}

/* Where NVRTC finds `name` written with `quote` in a file in includer_dir:
 * the realpath of the first match, or false. */
static bool resolve(const asyncrt_bundle_names *b, const char *includer_dir, char quote, const char *name, char out[PATH_MAX])
{
    if (name[0] == '/') return realpath(name, out) != NULL;
    if (quote == '"' && try_at(includer_dir, name, out)) return true;
    for (size_t i = 0; i < b->dir_count; i++)
        if (try_at(b->dirs[i], name, out)) return true;
    return false;
}

static bool in_memory(const asyncrt_bundle_names *b, const char *name)
{
    for (size_t i = 0; i < b->memory_count; i++)
        if (strcmp(b->memory[i], name) == 0) return true;
    return false;
}

/* Records name -> file; false with why on a clash with another file. */
static bool add_name(asyncrt_bundle_names *b, const char *name, size_t file, const char *from, char *why, size_t why_size)
{
    for (size_t i = 0; i < b->name_count; i++) {
        if (strcmp(b->names[i].name, name) != 0) continue;
        if (b->names[i].file == file) return true;
        snprintf(why, why_size, "the include name \"%s\" means two headers: %s (included from %s) and %s (from %s); "
                 "NVRTC matches in-memory headers by name only, so one bundle cannot hold both: bundle these "
                 "sources apart", name, b->files[b->names[i].file].real, b->names[i].from ? b->names[i].from : "-I",
                 b->files[file].real, from ? from : "-I");
        return false;
    }
    asyncrt_bundle_name *grown = realloc(b->names, (b->name_count + 1) * sizeof *grown);
    char *copy = strdup(name);
    if (!grown || !copy) {
        if (grown) b->names = grown;
        free(copy);
        snprintf(why, why_size, "out of memory");
        return false;
    }
    b->names = grown;
    b->names[b->name_count++] = (asyncrt_bundle_name){copy, file, from};
    return true;
}

/* Each #include "x" or <x> of text (directives only; conditions are not
 * evaluated, so a name in a branch NVRTC skipped may be added too, which
 * costs a name, never a wrong header). */
static bool scan(asyncrt_bundle_names *b, const char *text, const char *path, const char *from, char *why, size_t why_size)
{
    char dir_buf[PATH_MAX];
    snprintf(dir_buf, sizeof dir_buf, "%s", path);
    const char *dir = dirname(dir_buf);
    for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *q = p + strspn(p, " \t");
        if (*q++ != '#') continue;
        q += strspn(q, " \t");
        if (strncmp(q, "include", 7) != 0) continue;
        q += 7;
        q += strspn(q, " \t");
        char quote = *q, close = quote == '"' ? '"' : quote == '<' ? '>' : 0;
        if (!close) continue; /* a macro (thrust's): the -I fallback names it */
        size_t n = strcspn(++q, close == '"' ? "\"\n" : ">\n");
        if (q[n] != close || n == 0 || n >= PATH_MAX) continue;
        char name[PATH_MAX], real[PATH_MAX];
        memcpy(name, q, n);
        name[n] = '\0';
        if (in_memory(b, name) || !resolve(b, dir, quote, name, real)) continue;
        long file = find_file(b, real);
        if (file >= 0 && !add_name(b, name, (size_t)file, from, why, why_size)) return false;
    }
    return true;
}

/* The directive at q (past '#' and blanks): its word's length when it is w. */
static bool directive_is(const char *q, const char *w)
{
    size_t n = strlen(w);
    return strncmp(q, w, n) == 0 && !(q[n] == '_' || (q[n] >= 'a' && q[n] <= 'z'));
}

/* Adds the files that the unconditional #includes of a read file (or a
 * source) reach, and theirs in turn: NVRTC read them too, whatever its time
 * trace says. Its trace can leave a header out (<cuda/std/complex>'s
 * <cuda/std/detail/__config>, whose text is only directives, gets no event
 * of its own), and the bundle then lacked it. An #include inside #if is
 * left to the trace (a branch NVRTC skipped is never bundled); the include
 * guard (a first #ifndef, then its #define) does not count as a condition. */
static bool add_unconditional(asyncrt_bundle_names *b, const char *text, const char *path, char *why, size_t why_size)
{
    char dir_buf[PATH_MAX];
    snprintf(dir_buf, sizeof dir_buf, "%s", path);
    const char *dir = dirname(dir_buf);
    int depth = 0, guard = 0, directives = 0;
    for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *q = p + strspn(p, " \t");
        if (*q++ != '#') continue;
        q += strspn(q, " \t");
        directives++;
        if (directive_is(q, "if") || directive_is(q, "ifdef") || directive_is(q, "ifndef")) {
            depth++;
            if (directives == 1 && directive_is(q, "ifndef")) guard = -1; /* a guard if a #define follows */
            continue;
        }
        if (guard == -1) guard = directives == 2 && directive_is(q, "define") ? 1 : 0;
        if (directive_is(q, "endif")) depth -= depth > 0;
        if (depth > guard || !directive_is(q, "include")) continue;
        q += 7;
        q += strspn(q, " \t");
        char quote = *q, close = quote == '"' ? '"' : quote == '<' ? '>' : 0;
        size_t n = close ? strcspn(++q, close == '"' ? "\"\n" : ">\n") : 0;
        if (!close || q[n] != close || n == 0 || n >= PATH_MAX) continue;
        char name[PATH_MAX], real[PATH_MAX];
        memcpy(name, q, n);
        name[n] = '\0';
        if (in_memory(b, name) || !resolve(b, dir, quote, name, real) || find_file(b, real) >= 0) continue;
        if (!asyncrt__bundle_names_add_file(b, real, NULL, why, why_size)) return false;
    }
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const asyncrt_bundle_name *)a)->name, ((const asyncrt_bundle_name *)b)->name);
}

bool asyncrt__bundle_names_resolve(asyncrt_bundle_names *b, const char *const *sources, size_t source_count,
                                   char *why, size_t why_size)
{
    for (size_t i = 0; i < source_count; i++) {
        char *text = read_text(sources[i], why, why_size);
        char real[PATH_MAX];
        bool ok = text && realpath(sources[i], real) && add_unconditional(b, text, real, why, why_size);
        free(text);
        if (!ok) return false;
    }
    for (size_t i = 0; i < b->file_count; i++) /* the list grows as it goes: theirs are closed over too */
        if (!add_unconditional(b, b->files[i].text, b->files[i].real, why, why_size)) return false;
    for (size_t i = 0; i < source_count; i++) {
        char *text = read_text(sources[i], why, why_size);
        char real[PATH_MAX];
        bool ok = text && realpath(sources[i], real) && scan(b, text, real, sources[i], why, why_size);
        free(text);
        if (!ok) return false;
    }
    for (size_t i = 0; i < b->file_count; i++)
        if (!scan(b, b->files[i].text, b->files[i].real, b->files[i].real, why, why_size)) return false;
    /* A file no directive names (a macro #include): every name an -I
     * folder gives it that finds it there. */
    for (size_t f = 0; f < b->file_count; f++) {
        bool named = false;
        for (size_t i = 0; i < b->name_count && !named; i++) named = b->names[i].file == f;
        for (size_t d = 0; d < b->dir_count && !named; d++) {
            char dir[PATH_MAX], real[PATH_MAX];
            size_t n = realpath(b->dirs[d], dir) ? strlen(dir) : 0;
            const char *rel = b->files[f].real + n + 1;
            if (!n || strncmp(b->files[f].real, dir, n) != 0 || b->files[f].real[n] != '/' || in_memory(b, rel) ||
                !resolve(b, "", '<', rel, real) || strcmp(real, b->files[f].real) != 0)
                continue;
            if (!add_name(b, rel, f, NULL, why, why_size)) return false;
        }
        for (size_t i = 0; i < b->name_count && !named; i++) named = b->names[i].file == f;
        if (!named) {
            snprintf(why, why_size, "NVRTC read %s, but no #include of the sources or their headers names it, "
                                    "nor is it under an -I folder", b->files[f].real);
            return false;
        }
    }
    qsort(b->names, b->name_count, sizeof *b->names, by_name);
    return true;
}

void asyncrt__bundle_names_free(asyncrt_bundle_names *b)
{
    for (size_t i = 0; i < b->file_count; i++) {
        free(b->files[i].real);
        free(b->files[i].text);
    }
    for (size_t i = 0; i < b->name_count; i++) free(b->names[i].name);
    free(b->files);
    free(b->names);
    b->files = NULL;
    b->names = NULL;
    b->file_count = b->name_count = 0;
}
