/* compact-images: the CPU measurement of compact images (issue 37) on the
 * parity corpus (tests/parity/{tricky,corpus}). For every kernel file, as
 * asyncrt-run compiles it (its arch, its --kernel), with the NVRTC the
 * library chooses (ASYNCRT_NVRTC picks another), called directly:
 *   - NVRTC's CUBIN and PTX, of one nvrtcProgram (as the compile step
 *     will have them), with asyncrt's default options and built-in headers;
 *   - NVRTC's PTX through nvPTXCompiler unpruned: byte for byte NVRTC's CUBIN?
 *   - the compact step (compact.h): prune, assemble, prove; its verdict;
 *   - the times of the prune (the fastest of --repeat runs) and assemblies.
 * One markdown table on stdout. --out DIR writes DIR/nvrtc-V/K.cubin and
 * DIR/compact-V/K.cubin (NVRTC's image where the compact one was refused) for
 * the GPU half (load times). --nvcc-dir DIR adds a column of DIR/K.cubin's
 * sizes (e.g. build_images.py's nvcc-13.0/).
 *
 * usage: compact-images [--filter W] [--ptxcompiler FILE] [--out DIR] [--nvcc-dir DIR] [--repeat N]
 * Exit 0 when every kernel's unpruned route was NVRTC's CUBIN and no compact
 * image was refused for a difference; 1 otherwise; 77 without nvPTXCompiler. */
#define _GNU_SOURCE /* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "asyncrt/asyncrt.h"
#include "compact.h"
#include "diag.h"
#include "nvrtc_direct.h"
#include "nvrtc_loader.h"
#include "parity_file.h"
#include "ptx_mirror.h"
#include "ptx_prune.h"

typedef struct args {
    const char *filter, *ptxcompiler, *out, *nvcc_dir;
    int repeat;
} args;

static int usage(void)
{
    fprintf(stderr, "usage: compact-images [--filter W] [--ptxcompiler FILE] [--out DIR] [--nvcc-dir DIR] "
                    "[--repeat N]\n");
    return 2;
}

static void write_file(const char *dir, const char *set, const char *kernel, const void *data, size_t size)
{
    char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, set) < 0) return;
    mkdir(dir, 0755);
    mkdir(path, 0755);
    free(path);
    if (asprintf(&path, "%s/%s/%s.cubin", dir, set, kernel) < 0) return;
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size) fprintf(stderr, "compact-images: cannot write %s\n", path);
    if (f) fclose(f);
    free(path);
}

static long nvcc_size(const char *dir, const char *kernel)
{
    char *path = NULL;
    struct stat st;
    if (!dir || asprintf(&path, "%s/%s.cubin", dir, kernel) < 0) return -1;
    long size = stat(path, &st) == 0 ? (long)st.st_size : -1;
    free(path);
    return size;
}

typedef struct totals {
    int kernels, identical, compact, differ, failed;
} totals;

/* One kernel file: compile, compact, one row. */
static void measure(const asyncrt_nvrtc *nv, const asyncrt_ptxcompiler *pc, const args *a, const char *folder,
                    const char *name, const char *version, totals *t)
{
    parity_file pf;
    char *source = NULL, kernel[256];
    char *path = parity_read(folder, name, &pf, &source);
    snprintf(kernel, sizeof kernel, "%.*s", (int)strlen(name) - 3, name);
    if (!path) {
        printf("| %s | %s |\n", kernel, pf.error);
        t->failed++;
        return;
    }
    nvrtc_options opts;
    nvrtc_default_options(pf.arch, &opts);
    const char *const *options = opts.items;
    size_t n = opts.count;
    nvrtc_out o = {0};
    if (!nvrtc_compile(nv, name, source, options, n, pf.kernel, &o)) {
        printf("| %s | compile failed: %.200s |\n", kernel, o.error);
        t->failed++;
    } else {
        char **mirrored = NULL, why[512] = "";
        size_t count = 0, us = 0;
        void *unpruned = NULL;
        double start = asyncrt__now_ms();
        bool same = asyncrt__ptx_mirror_options(options, n, &mirrored, &count, why, sizeof why) &&
                    asyncrt__ptx_assemble(pc, o.ptx, o.ptx_size, (const char *const *)mirrored, count, &unpruned, &us,
                                          why, sizeof why) &&
                    us == o.cubin_size && memcmp(unpruned, o.cubin, us) == 0;
        double unpruned_ms = asyncrt__now_ms() - start;
        asyncrt_compact c;
        asyncrt__compact(pc, o.cubin, o.cubin_size, o.ptx, o.ptx_size, options, n, &c);
        double prune_ms = c.prune_ms;
        for (int r = 1; r < a->repeat; r++) { /* the prune alone, again: the fastest run */
            asyncrt_ptx_prune again;
            double s = asyncrt__now_ms();
            if (asyncrt__ptx_prune(o.ptx, o.ptx_size, &again, why, sizeof why) && asyncrt__now_ms() - s < prune_ms)
                prune_ms = asyncrt__now_ms() - s;
            asyncrt__ptx_prune_free(&again);
        }
        long nvcc = nvcc_size(a->nvcc_dir, kernel);
        char nvcc_text[32] = "";
        if (a->nvcc_dir) snprintf(nvcc_text, sizeof nvcc_text, nvcc >= 0 ? "%ld | " : "- | ", nvcc);
        bool refused_for_difference = !c.image && strstr(c.why, "differs");
        printf("| %s | %s | %s%zu | %zu | %zu/%zu | %s | %s | %.0f | %.2f | %.0f | %.0f | %s |\n", kernel, pf.arch,
               nvcc_text, o.cubin_size, c.image ? c.size : o.cubin_size, c.removed, c.placeholders,
               same ? "=" : "DIFFERS",
               c.image                  ? "equal"
               : refused_for_difference ? "DIFFERS"
                                        : "kept",
               o.ms, prune_ms, unpruned_ms, c.assemble_ms, c.image ? "" : c.why);
        fflush(stdout);
        t->kernels++;
        t->identical += same;
        t->compact += c.image != NULL;
        t->differ += refused_for_difference;
        if (!same) fprintf(stderr, "%s: unpruned route: %s\n", kernel, why[0] ? why : "other bytes");
        if (a->out) {
            char set[96];
            snprintf(set, sizeof set, "nvrtc-%s", version);
            write_file(a->out, set, kernel, o.cubin, o.cubin_size);
            snprintf(set, sizeof set, "compact-%s", version);
            write_file(a->out, set, kernel, c.image ? c.image : o.cubin, c.image ? c.size : o.cubin_size);
        }
        asyncrt__compact_free(&c);
        asyncrt__ptx_options_free(mirrored);
        free(unpruned);
    }
    nvrtc_out_free(&o);
    free(path);
    free(source);
}

static bool parse(int argc, char **argv, args *a)
{
    *a = (args){.filter = "", .repeat = 5};
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return false;
        if (!strcmp(argv[i], "--filter"))
            a->filter = v;
        else if (!strcmp(argv[i], "--ptxcompiler"))
            a->ptxcompiler = v;
        else if (!strcmp(argv[i], "--out"))
            a->out = v;
        else if (!strcmp(argv[i], "--nvcc-dir"))
            a->nvcc_dir = v;
        else if (!strcmp(argv[i], "--repeat") && atoi(v) > 0)
            a->repeat = atoi(v);
        else
            return false;
    }
    return true;
}

static bool wanted(const char *filter, const char *name)
{
    if (!*filter) return true;
    char *copy = strdup(filter), *save = NULL;
    bool hit = false;
    for (char *w = strtok_r(copy, ",", &save); w && !hit; w = strtok_r(NULL, ",", &save)) hit = strstr(name, w);
    free(copy);
    return hit;
}

int main(int argc, char **argv)
{
    args a;
    if (!parse(argc, argv, &a)) return usage();
    asyncrt_nvrtc_choice choice;
    asyncrt__nvrtc_choice_get(&choice);
    if (choice.chosen < 0) {
        fprintf(stderr, "compact-images: no NVRTC: %s\n", choice.why);
        return 77;
    }
    const asyncrt_lib_candidate *nvrtc = &choice.candidates[choice.chosen];
    char version[64], file[4200], why[1024];
    const asyncrt_nvrtc *nv = NULL;
    if (asyncrt__nvrtc_load(&nv, why, sizeof why) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "compact-images: %s\n", why);
        return 77;
    }
    /* NVRTC's exact version: the search's, else its PTX header's (a toolkit's libnvrtc.so.13 names no patch). */
    asyncrt_lib_version v = nvrtc->version;
    nvrtc_options opts;
    nvrtc_default_options("sm_90", &opts);
    nvrtc_out probe = {0};
    if (v.patch < 0 &&
        nvrtc_compile(nv, "probe.cu", "extern \"C\" __global__ void k() {}", opts.items, opts.count, "", &probe))
        asyncrt__ptx_made_by(probe.ptx, probe.ptx_size, &v);
    nvrtc_out_free(&probe);
    asyncrt__lib_version_format(&v, version, sizeof version);
    asyncrt_ptxcompiler *pc = NULL;
    if (!asyncrt__ptxcompiler_path(a.ptxcompiler ? a.ptxcompiler : getenv("ASYNCRT_PTXCOMPILER"), nvrtc->path, file,
                                   sizeof file, why, sizeof why) ||
        !asyncrt__ptxcompiler_open(file, &v, &pc, why, sizeof why)) {
        fprintf(stderr, "compact-images: %s\n", why);
        return 77;
    }
    printf("NVRTC %s (%s), nvPTXCompiler %s (%s)\n\n", version, nvrtc->path, asyncrt__ptxcompiler_version(pc),
           asyncrt__ptxcompiler_file(pc));
    printf("| kernel | arch | %sNVRTC B | compact B | removed/placeholders | unpruned = NVRTC | verdict | NVRTC ms | "
           "prune ms | assemble unpruned ms | assemble pruned ms | why NVRTC's |\n"
           "|---|---|%s---|---|---|---|---|---|---|---|---|---|\n",
           a.nvcc_dir ? "nvcc B | " : "", a.nvcc_dir ? "---|" : "");
    totals t = {0};
    static const char *const folders[] = {"tests/parity/tricky", "tests/parity/corpus"};
    for (size_t f = 0; f < 2; f++) {
        char **names = NULL;
        size_t count = parity_list(folders[f], &names);
        for (size_t i = 0; i < count; i++) {
            if (wanted(a.filter, names[i])) measure(nv, pc, &a, folders[f], names[i], version, &t);
            free(names[i]);
        }
        free(names);
    }
    printf("\n%d kernels: unpruned route byte-identical %d; compact image proven equal %d; refused for a difference "
           "%d; failed %d\n",
           t.kernels, t.identical, t.compact, t.differ, t.failed);
    asyncrt__ptxcompiler_close(pc);
    return t.identical == t.kernels && !t.differ && !t.failed ? 0 : 1;
}
