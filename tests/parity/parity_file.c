#define _GNU_SOURCE /* asprintf */
#include "parity_file.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source_dir(void)
{
    const char *d = getenv("ASYNCRT_TEST_SOURCE_DIR");
    return d ? d : ".";
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

size_t parity_list(const char *folder, char ***names)
{
    *names = NULL;
    char *path = NULL;
    if (asprintf(&path, "%s/%s", source_dir(), folder) < 0) return 0;
    DIR *d = opendir(path);
    free(path);
    if (!d) return 0;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".cu") != 0) continue;
        if (n == cap) {
            char **grown = realloc(*names, (cap = cap ? 2 * cap : 64) * sizeof *grown);
            if (!grown) break;
            *names = grown;
        }
        if (((*names)[n] = strdup(e->d_name))) n++;
    }
    closedir(d);
    if (n) qsort(*names, n, sizeof **names, by_name);
    return n;
}

void *parity_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *data = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)n + 1)) &&
        fread(data, 1, (size_t)n, f) == (size_t)n) {
        data[n] = '\0';
        *size = (size_t)n;
    } else {
        free(data);
        data = NULL;
    }
    fclose(f);
    return data;
}

/* The value of `// parity: KEY=` in text, up to the end of its line. */
static void header(const char *text, const char *key, char *out, size_t size)
{
    out[0] = '\0';
    char needle[64];
    snprintf(needle, sizeof needle, "// parity: %s=", key);
    const char *at = strstr(text, needle);
    if (!at) return;
    at += strlen(needle);
    size_t n = strcspn(at, "\n");
    snprintf(out, size, "%.*s", (int)n, at);
}

char *parity_read(const char *folder, const char *name, parity_file *pf, char **source)
{
    memset(pf, 0, sizeof *pf);
    char *path = NULL;
    size_t size = 0;
    if (asprintf(&path, "%s/%s/%s", source_dir(), folder, name) < 0) return NULL;
    if (!(*source = parity_read_file(path, &size))) {
        snprintf(pf->error, sizeof pf->error, "cannot read %s", path);
        free(path);
        return NULL;
    }
    char run[4096];
    header(*source, "arch", pf->arch, sizeof pf->arch);
    header(*source, "nvcc", pf->nvcc_flags, sizeof pf->nvcc_flags);
    header(*source, "run", run, sizeof run);
    pf->arch[strcspn(pf->arch, " \t;")] = '\0';
    const char *k = strstr(run, "--kernel ");
    if (k) {
        k += strlen("--kernel ");
        /* a name with spaces (a template) runs to the next " --" */
        const char *end = strstr(k, " --");
        size_t n = end ? (size_t)(end - k) : strlen(k);
        if (n >= 2 && (k[0] == '\'' || k[0] == '"') && k[n - 1] == k[0]) k++, n -= 2;
        snprintf(pf->kernel, sizeof pf->kernel, "%.*s", (int)n, k);
    }
    if (!pf->arch[0] || !run[0]) {
        snprintf(pf->error, sizeof pf->error, "%s lacks a '// parity: arch=' or '// parity: run=' line", path);
        free(*source);
        *source = NULL;
        free(path);
        return NULL;
    }
    return path;
}

bool parity_sampled(const char *folder, size_t i, bool full)
{
    size_t len = strlen(folder);
    bool corpus = len >= 6 && strcmp(folder + len - 6, "corpus") == 0;
    return full || !corpus || i % 8 == 0;
}
