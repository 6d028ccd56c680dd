/* asyncrt-cache export / import: one build host warms many machines.
 *
 * export DIR copies every entry of the cache that verifies (format, size,
 * key, payload checksum) into DIR as <key>.bin. import DIR takes nothing on
 * trust: each file must be a regular file (opened O_NOFOLLOW | O_NONBLOCK,
 * checked with fstat before any read, size-capped) named by a key, and must
 * decode and verify under that key exactly as a normal cache read would; it
 * is then stored through the library's own store (temporary file, rename,
 * mode 0600), never copied byte for byte. A tampered or foreign file is
 * refused and named. What a verified entry cannot prove is who compiled it:
 * importing DIR trusts whoever could write DIR, as running its code would. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "cache_cmds.h"
#include "context.h"
#include "program.h"

#define ENTRY_MAX_BYTES ((off_t)512 << 20)

static const char *k_usage =
    "usage: asyncrt-cache export [--cache-dir DIR] OUT_DIR\n"
    "       asyncrt-cache import [--cache-dir DIR] IN_DIR\n"
    "export copies every verified cache entry into OUT_DIR (created 0700);\n"
    "import verifies each <key>.bin of IN_DIR as a cache read would and stores it.\n"
    "Exit status: 0 every entry moved, 1 some entry refused or not written, 2 bad usage.\n";

/* "<64 hex>.bin" -> key; false for any other name. */
static bool key_of(const char *name, uint8_t key[32])
{
    if (strlen(name) != 68 || strcmp(name + 64, ".bin") != 0) return false;
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(name + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdef", name[2 * i]) ||
            !strchr("0123456789abcdef", name[2 * i + 1]))
            return false;
        key[i] = (uint8_t)v;
    }
    return true;
}

/* Reads and verifies one entry; NULL with a reason otherwise. */
static asyncrt_program *read_entry(const char *path, const uint8_t key[32], char *why, size_t why_size)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open (%s)", strerror(errno));
        return NULL;
    }
    struct stat st;
    unsigned char *data = NULL;
    asyncrt_program *p = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) snprintf(why, why_size, "not a regular file");
    else if (st.st_size <= 0 || st.st_size > ENTRY_MAX_BYTES)
        snprintf(why, why_size, "implausible size %lld bytes", (long long)st.st_size);
    else if (!(data = malloc((size_t)st.st_size))) snprintf(why, why_size, "out of memory");
    else {
        size_t got = 0;
        for (ssize_t n; got < (size_t)st.st_size && (n = read(fd, data + got, (size_t)st.st_size - got)) > 0;)
            got += (size_t)n;
        if (got != (size_t)st.st_size) snprintf(why, why_size, "short read");
        else asyncrt_program_decode(data, got, key, &p, why, why_size);
    }
    close(fd);
    free(data);
    return p;
}

static int parse(int argc, char **argv, const char **cache_dir, const char **dir)
{
    *cache_dir = NULL;
    *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(k_usage, stdout);
            return -1;
        }
        if (!strcmp(argv[i], "--cache-dir") && i + 1 < argc) *cache_dir = argv[++i];
        else if (argv[i][0] != '-' && !*dir) *dir = argv[i];
        else {
            fprintf(stderr, "asyncrt-cache %s: unexpected '%s'\n%s", argv[0], argv[i], k_usage);
            return CACHE_EXIT_USAGE;
        }
    }
    if (!*dir) {
        fprintf(stderr, "asyncrt-cache %s: a directory is needed\n%s", argv[0], k_usage);
        return CACHE_EXIT_USAGE;
    }
    return 0;
}

static asyncrt_context *open_cache(const char *cmd, const char *cache_dir)
{
    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return NULL;
    asyncrt_context_set_log_level(ctx, 1); /* the store's warnings say why an entry was not written */
    if (cache_dir) asyncrt_context_set_cache_dir(ctx, cache_dir);
    if (!asyncrt_context_cache_dir(ctx)) {
        fprintf(stderr, "asyncrt-cache %s: there is no cache directory (ASYNCRT_CACHE=0, or no HOME)\n", cmd);
        asyncrt_context_destroy(ctx);
        return NULL;
    }
    return ctx;
}

static bool write_entry(const char *dir, const char *name, const asyncrt_program *p)
{
    size_t size = 0;
    unsigned char *data = asyncrt_program_encode(p, &size);
    char *path = asyncrt_format("%s/%s", dir, name);
    char *tmp = asyncrt_format("%s/.%s.tmp.%ld", dir, name, (long)getpid());
    int fd = data && path && tmp ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
    bool ok = fd >= 0 && write(fd, data, size) == (ssize_t)size;
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok && tmp) unlink(tmp);
    free(data);
    free(path);
    free(tmp);
    return ok;
}

int asyncrt_cache_cmd_export(int argc, char **argv)
{
    const char *cache_dir, *out;
    int rc = parse(argc, argv, &cache_dir, &out);
    if (rc) return rc < 0 ? CACHE_EXIT_OK : rc;
    asyncrt_context *ctx = open_cache("export", cache_dir);
    if (!ctx) return CACHE_EXIT_USAGE;
    const char *from = asyncrt_context_cache_dir(ctx);
    DIR *d = opendir(from);
    if (!d) {
        fprintf(stderr, "asyncrt-cache export: cannot read %s (%s)\n", from, strerror(errno));
        asyncrt_context_destroy(ctx);
        return CACHE_EXIT_FAILED;
    }
    if (mkdir(out, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "asyncrt-cache export: cannot create %s (%s)\n", out, strerror(errno));
        closedir(d);
        asyncrt_context_destroy(ctx);
        return CACHE_EXIT_FAILED;
    }
    size_t moved = 0, refused = 0;
    for (struct dirent *e; (e = readdir(d));) {
        uint8_t key[32];
        if (!key_of(e->d_name, key)) continue;
        char why[256] = "";
        char *path = asyncrt_format("%s/%s", from, e->d_name);
        asyncrt_program *p = path ? read_entry(path, key, why, sizeof why) : NULL;
        if (p && write_entry(out, e->d_name, p)) moved++;
        else {
            refused++;
            fprintf(stderr, "asyncrt-cache export: skipping %s: %s\n", e->d_name, p ? "cannot write it" : why);
        }
        asyncrt_program_destroy(p);
        free(path);
    }
    closedir(d);
    printf("exported %zu entr%s from %s to %s%s\n", moved, moved == 1 ? "y" : "ies", from, out,
           refused ? " (some skipped: see above)" : "");
    asyncrt_context_destroy(ctx);
    return refused ? CACHE_EXIT_FAILED : CACHE_EXIT_OK;
}

int asyncrt_cache_cmd_import(int argc, char **argv)
{
    const char *cache_dir, *in;
    int rc = parse(argc, argv, &cache_dir, &in);
    if (rc) return rc < 0 ? CACHE_EXIT_OK : rc;
    asyncrt_context *ctx = open_cache("import", cache_dir);
    if (!ctx) return CACHE_EXIT_USAGE;
    DIR *d = opendir(in);
    if (!d) {
        fprintf(stderr, "asyncrt-cache import: cannot read %s (%s)\n", in, strerror(errno));
        asyncrt_context_destroy(ctx);
        return CACHE_EXIT_FAILED;
    }
    size_t moved = 0, refused = 0;
    for (struct dirent *e; (e = readdir(d));) {
        uint8_t key[32];
        if (e->d_name[0] == '.') continue;
        char why[256] = "not named <64 hex digits>.bin";
        char *path = asyncrt_format("%s/%s", in, e->d_name);
        asyncrt_program *p = path && key_of(e->d_name, key) ? read_entry(path, key, why, sizeof why) : NULL;
        char *dest = p ? asyncrt_cache_entry_path(ctx, key) : NULL;
        bool ok = false;
        if (p) {
            asyncrt_cache_store(ctx, p); /* the library's own write: tmp file, rename, 0600 */
            struct stat st;
            ok = dest && stat(dest, &st) == 0;
            if (!ok) snprintf(why, sizeof why, "the cache did not store it (see the warning above)");
        }
        if (ok) moved++;
        else {
            refused++;
            fprintf(stderr, "asyncrt-cache import: refusing %s: %s\n", e->d_name, why);
        }
        asyncrt_program_destroy(p);
        free(dest);
        free(path);
    }
    closedir(d);
    printf("imported %zu entr%s from %s into %s%s\n", moved, moved == 1 ? "y" : "ies", in,
           asyncrt_context_cache_dir(ctx), refused ? " (some refused: see above)" : "");
    asyncrt_context_destroy(ctx);
    return refused ? CACHE_EXIT_FAILED : CACHE_EXIT_OK;
}
