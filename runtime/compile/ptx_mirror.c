/* ptx_mirror.h: NVRTC's options, one table, each row naming what it gives nvPTXCompiler. */
#include "ptx_mirror.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact_why.h"

typedef enum {
    GIVES_NOTHING, /* the front end's or NVVM's: already in the PTX */
    GIVES_ARCH,    /* --gpu-name */
    GIVES_DEBUG,   /* -G: see finish() */
    GIVES_LINEINFO,
    GIVES_DOPT,
    GIVES_VALUE,   /* -Xptxas: the value itself */
    GIVES_MAXRREG, /* --maxrregcount=N */
    GIVES_FMAD,    /* false: --fmad=false */
    GIVES_OFC,     /* -Ofc=L */
    GIVES_SPLIT,   /* --split-compile=N */
    GIVES_DSP,     /* true: --device-stack-protector=true */
    REFUSED_RDC,   /* true: relocatable code */
    REFUSED        /* LTO */
} gives;

typedef struct rule {
    const char *name, *alias; /* --name, -alias */
    bool value;
    gives what;
} rule;

static const rule rules[] = {
    {"gpu-architecture", "arch", true, GIVES_ARCH},
    {"device-debug", "G", false, GIVES_DEBUG},
    {"generate-line-info", "lineinfo", false, GIVES_LINEINFO},
    {"dopt", "dopt", true, GIVES_DOPT},
    {"ptxas-options", "Xptxas", true, GIVES_VALUE},
    {"maxrregcount", "maxrregcount", true, GIVES_MAXRREG},
    {"fmad", "fmad", true, GIVES_FMAD},
    {"Ofast-compile", "Ofc", true, GIVES_OFC},
    {"split-compile", "split-compile", true, GIVES_SPLIT},
    {"device-stack-protector", "dsp", true, GIVES_DSP},
    {"relocatable-device-code", "rdc", true, REFUSED_RDC},
    {"dlink-time-opt", "dlto", false, REFUSED},
    {"gen-opt-lto", "gen-opt-lto", false, REFUSED},
    /* Checked to change nothing ptxas gets (13.1.115): -ewp, -dopt alone,
     * -ftz, -prec-div, -prec-sqrt, -use_fast_math, -extra-device-vectorization,
     * -modify-stack-limit. The rest are the front end's by their nature. */
    {"extensible-whole-program", "ewp", false, GIVES_NOTHING},
    {"ftz", "ftz", true, GIVES_NOTHING},
    {"prec-sqrt", "prec-sqrt", true, GIVES_NOTHING},
    {"prec-div", "prec-div", true, GIVES_NOTHING},
    {"use_fast_math", "use_fast_math", false, GIVES_NOTHING},
    {"extra-device-vectorization", "extra-device-vectorization", false, GIVES_NOTHING},
    {"modify-stack-limit", "modify-stack-limit", true, GIVES_NOTHING},
    {"jump-table-density", "jtd", true, GIVES_NOTHING},
    {"nvvm-options", "Xnvvm", true, GIVES_NOTHING},
    {"std", "std", true, GIVES_NOTHING},
    {"define-macro", "D", true, GIVES_NOTHING},
    {"undefine-macro", "U", true, GIVES_NOTHING},
    {"include-path", "I", true, GIVES_NOTHING},
    {"pre-include", "include", true, GIVES_NOTHING},
    {"device-as-default-execution-space", "default-device", false, GIVES_NOTHING},
    {"disable-warnings", "w", false, GIVES_NOTHING},
    {"restrict", "restrict", false, GIVES_NOTHING},
    {"device-int128", "device-int128", false, GIVES_NOTHING},
    {"device-float128", "device-float128", false, GIVES_NOTHING},
    {"optimization-info", "opt-info", true, GIVES_NOTHING},
    {"display-error-number", "err-no", false, GIVES_NOTHING},
    {"no-display-error-number", "no-err-no", false, GIVES_NOTHING},
    {"diag-error", "diag-error", true, GIVES_NOTHING},
    {"diag-suppress", "diag-suppress", true, GIVES_NOTHING},
    {"diag-warn", "diag-warn", true, GIVES_NOTHING},
    {"brief-diagnostics", "brief-diag", true, GIVES_NOTHING},
    {"time", "time", true, GIVES_NOTHING},
    {"fdevice-time-trace", "fdevice-time-trace", true, GIVES_NOTHING},
    {"builtin-move-forward", "builtin-move-forward", true, GIVES_NOTHING},
    {"builtin-initializer-list", "builtin-initializer-list", true, GIVES_NOTHING},
    {"pch", "pch", false, GIVES_NOTHING},
    {"create-pch", "create-pch", true, GIVES_NOTHING},
    {"use-pch", "use-pch", true, GIVES_NOTHING},
    {"pch-dir", "pch-dir", true, GIVES_NOTHING},
    {"pch-verbose", "pch-verbose", true, GIVES_NOTHING},
    {"pch-messages", "pch-messages", true, GIVES_NOTHING},
    {"instantiate-templates-in-pch", "instantiate-templates-in-pch", true, GIVES_NOTHING},
    {"minimal", "minimal", false, GIVES_NOTHING},
};

typedef struct mirror {
    char **out;
    size_t count;
    bool debug, lineinfo, dopt;
    char *arch;
    char *why;
    size_t why_size;
} mirror;

#define refuse(m, ...) asyncrt__why((m)->why, (m)->why_size, __VA_ARGS__)

/* Appends prefix + value (the array has room: at most 3 options per input, plus 4). */
static bool give(mirror *m, const char *prefix, const char *value)
{
    size_t a = strlen(prefix), b = strlen(value);
    for (size_t i = 0; i < m->count; i++) /* said twice: given once */
        if (strlen(m->out[i]) == a + b && !memcmp(m->out[i], prefix, a) && !strcmp(m->out[i] + a, value)) return true;
    char *s = malloc(a + b + 1);
    if (!s) return refuse(m, "out of memory");
    memcpy(s, prefix, a);
    memcpy(s + a, value, b + 1);
    m->out[m->count++] = s;
    return true;
}

static bool all_digits(const char *s) { return *s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 8; }

static bool one_of(const char *v, const char *a, const char *b, const char *c, const char *d)
{
    return !strcmp(v, a) || !strcmp(v, b) || (c && !strcmp(v, c)) || (d && !strcmp(v, d));
}

static bool apply(mirror *m, const rule *r, const char *option, const char *v)
{
    switch (r->what) {
    case GIVES_NOTHING:
        return true;
    case GIVES_ARCH:
        if (strncmp(v, "compute_", 8) == 0)
            return refuse(m, "%s: NVRTC makes PTX for a virtual arch, there is no CUBIN to compact", option);
        if (strncmp(v, "sm_", 3) != 0 || strlen(v) > 16 || strspn(v + 3, "0123456789af") != strlen(v + 3))
            return refuse(m, "%s: not an sm_XY target", option);
        if (m->arch && strcmp(m->arch, v) != 0) return refuse(m, "two targets: -arch=%s and %s", m->arch, option);
        free(m->arch);
        return (m->arch = strdup(v)) != NULL || refuse(m, "out of memory");
    case GIVES_DEBUG:
        m->debug = true;
        return true;
    case GIVES_LINEINFO:
        m->lineinfo = true;
        return true;
    case GIVES_DOPT:
        if (strcmp(v, "on") != 0) return refuse(m, "%s: NVRTC takes only -dopt=on", option);
        m->dopt = true;
        return true;
    case GIVES_VALUE:
        if (!*v) return refuse(m, "%s: an empty ptxas option", option);
        return give(m, "", v);
    case GIVES_MAXRREG:
        return all_digits(v) ? give(m, "--maxrregcount=", v) : refuse(m, "%s: not a register count", option);
    case GIVES_FMAD:
        if (!one_of(v, "true", "false", NULL, NULL)) return refuse(m, "%s: fmad is true or false", option);
        return strcmp(v, "false") != 0 || give(m, "--fmad=", v);
    case GIVES_OFC:
        if (!one_of(v, "0", "min", "mid", "max")) return refuse(m, "%s: -Ofc is 0, min, mid or max", option);
        return give(m, "-Ofc=", v);
    case GIVES_SPLIT:
        return all_digits(v) ? give(m, "--split-compile=", v) : refuse(m, "%s: not a thread count", option);
    case GIVES_DSP:
        if (!one_of(v, "true", "false", NULL, NULL)) return refuse(m, "%s: true or false", option);
        return strcmp(v, "true") != 0 || give(m, "--device-stack-protector=", v);
    case REFUSED_RDC:
        if (strcmp(v, "false") == 0) return true;
        return refuse(m, "%s: relocatable code is linked, not compacted", option);
    case REFUSED:
        return refuse(m, "%s: LTO-IR is linked, not compacted", option);
    }
    return refuse(m, "%s: no rule", option);
}

static const rule *find(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if ((strlen(rules[i].name) == len && !strncmp(rules[i].name, name, len)) ||
            (strlen(rules[i].alias) == len && !strncmp(rules[i].alias, name, len)))
            return &rules[i];
    return NULL;
}

/* -G gives ptxas -g with two switches that keep the code line by line; with
 * -dopt=on NVRTC's ptxas gets -lineinfo instead (both seen in .note.nv.tkinfo). */
static bool finish(mirror *m)
{
    if (!m->arch) return refuse(m, "no -arch=sm_XY: NVRTC makes PTX, there is no CUBIN to compact");
    if (!give(m, "--gpu-name=", m->arch)) return false;
    /* The target first, where a reader of the list looks for it (the note orders its own list). */
    char *arch = m->out[m->count - 1];
    memmove(m->out + 1, m->out, (m->count - 1) * sizeof *m->out);
    m->out[0] = arch;
    if (m->debug && !m->dopt &&
        !(give(m, "--device-debug", "") && give(m, "--dont-merge-basicblocks", "") && give(m, "--return-at-end", "")))
        return false;
    if ((m->lineinfo || (m->debug && m->dopt)) && !give(m, "--generate-line-info", "")) return false;
    return true;
}

bool asyncrt__ptx_mirror_options(const char *const *nvrtc_options, size_t n, char ***out, size_t *count, char *why,
                                 size_t why_size)
{
    *out = NULL;
    *count = 0;
    if (why_size) why[0] = '\0';
    mirror m = {.why = why, .why_size = why_size};
    bool ok = n < ((size_t)1 << 20) && (m.out = calloc(n + 8, sizeof *m.out)) != NULL;
    if (!ok) refuse(&m, "out of memory");
    for (size_t i = 0; ok && i < n; i++) {
        const char *o = nvrtc_options[i];
        if (!o || o[0] != '-') {
            ok = refuse(&m, "'%s': not an option", o ? o : "(null)");
            break;
        }
        const char *name = o + 1 + (o[1] == '-');
        size_t len = strcspn(name, "=");
        const char *value = name[len] == '=' ? name + len + 1 : NULL;
        const rule *r = find(name, len);
        /* -I/dir, -DNAME=1, -UNAME: the front end's, value glued on. */
        if (!r && o[1] != '-' && strchr("IDU", o[1]) && o[2]) continue;
        if (!r) {
            ok = refuse(&m, "NVRTC's option %s has no nvPTXCompiler mirror that was checked", o);
        } else if (r->value && !value) {
            if (i + 1 >= n)
                ok = refuse(&m, "%s needs a value", o);
            else
                value = nvrtc_options[++i];
            ok = ok && apply(&m, r, o, value);
        } else if (!r->value && value) {
            ok = refuse(&m, "%s takes no value", o);
        } else {
            ok = apply(&m, r, o, value ? value : "");
        }
    }
    ok = ok && finish(&m);
    free(m.arch);
    if (!ok) {
        asyncrt__ptx_options_free(m.out);
        return false;
    }
    *out = m.out;
    *count = m.count;
    return true;
}

void asyncrt__ptx_options_free(char **options)
{
    if (!options) return;
    for (char **p = options; *p; p++) free(*p);
    free(options);
}
