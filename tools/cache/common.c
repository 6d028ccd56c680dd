#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "tool.h"

bool tool_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return true;
    return false;
}

void tool_format_bytes(uint64_t bytes, char *out, size_t size)
{
    if (bytes < 1024) snprintf(out, size, "%llu B", (unsigned long long)bytes);
    else if (bytes < (1u << 20)) snprintf(out, size, "%.1f KiB", bytes / 1024.0);
    else if (bytes < (1u << 30)) snprintf(out, size, "%.1f MiB", bytes / 1048576.0);
    else snprintf(out, size, "%.2f GiB", bytes / 1073741824.0);
}

void tool_format_age(double s, char *out, size_t size)
{
    if (s < 0) s = 0;
    if (s < 120) snprintf(out, size, "%.0f s", s);
    else if (s < 7200) snprintf(out, size, "%.0f min", s / 60);
    else if (s < 172800) snprintf(out, size, "%.0f h", s / 3600);
    else snprintf(out, size, "%.0f d", s / 86400);
}

double tool_age_seconds(int64_t ns)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (double)(now.tv_sec - ns / 1000000000) + (double)(now.tv_nsec - ns % 1000000000) / 1e9;
}

int cache_usage_error(const cache_command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "asyncrt-cache %s: ", cmd->name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n%s", cmd->usage);
    va_end(ap);
    return TOOL_EXIT_USAGE;
}

static bool g_json_started; /* a document is on stdout: main adds none */

bool cache_json_started(void) { return g_json_started; }

int cache_shown_code(const cache_tool *tool) { return tool->trusted ? TOOL_EXIT_OK : TOOL_EXIT_IO; }

int cache_fail(const cache_tool *tool, const char *cmd, int code, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    fprintf(stderr, "asyncrt-cache%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", message);
    if (tool && tool->json && !g_json_started) tool_json_error(stdout, "asyncrt-cache", message, code);
    g_json_started = true;
    return code;
}

void cache_json_key(const char *name, bool first)
{
    g_json_started = true;
    printf("%s\n  ", first ? "" : ",");
    tool_json_string(stdout, name);
    printf(": ");
}
