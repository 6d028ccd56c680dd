/* Shared by asyncrt-run, asyncrt-probe, asyncrt-bench, asyncrt-cache and asyncrt-bundle. */
#include "tool.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

int tool_usage_error(const char *tool, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", tool);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see %s --help)\n", tool);
    va_end(ap);
    return TOOL_EXIT_USAGE;
}

void tool_format_cuda_version(int version, char *buf, size_t size)
{
    if (version <= 0) snprintf(buf, size, "none");
    else snprintf(buf, size, "%d.%d", version / 1000, version % 1000 / 10);
}

void tool_version_line(const char *tool, char *buf, size_t size)
{
    char nvrtc[16];
    tool_format_cuda_version(asyncrt_nvrtc_version(), nvrtc, sizeof nvrtc);
    /* The tool's own version, then the library's it runs with (asyncrt_version_string: a shared
     * libasyncrt may be newer than the headers the tool was built with). */
    snprintf(buf, size, "%s %s (libasyncrt %s, NVRTC %s)", tool, ASYNCRT_VERSION_STRING, asyncrt_version_string(),
             nvrtc);
}

void tool_print_nvrtc_candidates(FILE *f, const char *indent, const asyncrt_nvrtc_candidate *candidates,
                                 size_t count, int chosen)
{
    for (size_t i = 0; i < count; i++) {
        const asyncrt_nvrtc_candidate *c = &candidates[i];
        fprintf(f, "%s%s %-8s %s (%s%s%s)\n", indent, (int)i == chosen ? "*" : " ", c->version, c->path,
                c->found_by, c->version_from[0] ? "; version from " : "", c->version_from);
    }
}

size_t tool_nvrtc_candidates(asyncrt_nvrtc_candidate *out, size_t capacity)
{
    size_t n = 0;
    for (; n < capacity; n++) {
        out[n] = (asyncrt_nvrtc_candidate)ASYNCRT_NVRTC_CANDIDATE_INIT;
        if (asyncrt_nvrtc_candidate_get(n, &out[n]) != ASYNCRT_SUCCESS) break;
    }
    return n;
}

int tool_exit_for_status(asyncrt_status s)
{
    switch (s) {
    case ASYNCRT_SUCCESS: return TOOL_EXIT_OK;
    case ASYNCRT_ERROR_INVALID_ARGUMENT:
    case ASYNCRT_ERROR_NOT_FOUND:
    case ASYNCRT_ERROR_ARGUMENT_MISMATCH:
    case ASYNCRT_ERROR_TENSORMAP_INVALID: return TOOL_EXIT_USAGE;
    case ASYNCRT_ERROR_COMPILE:
    case ASYNCRT_ERROR_NVRTC:
    case ASYNCRT_ERROR_UNSUPPORTED_ARCH:
    case ASYNCRT_ERROR_VERSION_MISMATCH: return TOOL_EXIT_COMPILE;
    case ASYNCRT_ERROR_NO_DRIVER:
    case ASYNCRT_ERROR_NO_DEVICE: return TOOL_EXIT_NO_DEVICE;
    case ASYNCRT_ERROR_IO: return TOOL_EXIT_IO;
    case ASYNCRT_ERROR_CORRUPT: return TOOL_EXIT_CHECK; /* a file failed its checks */
    case ASYNCRT_ERROR_OUT_OF_MEMORY: return TOOL_EXIT_INTERNAL;
    case ASYNCRT_ERROR_CAPTURE: return TOOL_EXIT_CUDA; /* a load refused during graph capture */
    default: return TOOL_EXIT_CUDA;
    }
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if p starts none. */
static int utf8_sequence(const unsigned char *p)
{
    unsigned char c = p[0];
    int n;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07;
    else return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0; /* also stops at the NUL */
        cp = cp << 6 | (p[i] & 0x3f);
    }
    bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
    return n;
}

void tool_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        int n = utf8_sequence(p);
        if (n == 0) {
            fputs("\\ufffd", out);
            p++;
            continue;
        }
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", out);
        else if (*p < 0x20 || *p == 0x7f) fprintf(out, "\\u%04x", *p);
        else fwrite(p, 1, (size_t)n, out);
        p += n;
    }
    fputc('"', out);
}

void tool_json_error(FILE *out, const char *tool, const char *message, int code)
{
    fprintf(out, "{\n  \"tool\": ");
    tool_json_string(out, tool);
    fprintf(out, ",\n  \"version\": ");
    tool_json_string(out, ASYNCRT_VERSION_STRING);
    fprintf(out, ",\n  \"error\": ");
    tool_json_string(out, message);
    fprintf(out, ",\n  \"exit_code\": %d\n}\n", code);
}
