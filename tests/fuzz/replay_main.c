/* Replays files through a fuzz target's LLVMFuzzerTestOneInput without
 * libFuzzer, so that the seed corpus and the kept crashing inputs run in
 * every build (and under ASan + UBSan in the sanitizer job):
 *   replay DIR_OR_FILE...   exits 0 when every input went through. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    unsigned char *data = NULL;
    size_t size = 0, cap = 0, n;
    unsigned char chunk[65536];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (size + n > cap) {
            cap = (size + n) * 2;
            unsigned char *grown = realloc(data, cap);
            if (!grown) {
                free(data);
                fclose(f);
                return 1;
            }
            data = grown;
        }
        memcpy(data + size, chunk, n);
        size += n;
    }
    fclose(f);
    /* An exact-size copy, so that a sanitizer sees reads past the end. */
    unsigned char *exact = malloc(size ? size : 1);
    if (!exact) {
        free(data);
        return 1;
    }
    if (size) memcpy(exact, data, size);
    free(data);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    printf("replayed %s (%zu bytes)\n", path, size);
    return 0;
}

static int replay(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: no such file or folder %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        ++*count;
        return replay_file(path);
    }
    DIR *dir = opendir(path);
    if (!dir) return 1;
    int failed = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        failed |= replay(full, count);
    }
    closedir(dir);
    return failed;
}

int main(int argc, char **argv)
{
    int failed = 0, count = 0;
    for (int i = 1; i < argc; i++) failed |= replay(argv[i], &count);
    printf("%d inputs replayed\n", count);
    return failed || count == 0;
}
