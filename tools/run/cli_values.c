/* asyncrt-run's command line: the small value parsers every option family
 * uses (cli_parser.h), and the one way a parser fails: a message, then false. */
#include "cli_parser.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool run_cli_fail(run_cli_parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (p->err_size) vsnprintf(p->err, p->err_size, fmt, ap);
    va_end(ap);
    return false;
}

/* Never strtoull(..., 0): "010" must be ten, not eight. */
bool run_parse_u64(const char *text, size_t len, uint64_t *out)
{
    int base = 10;
    if (len > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) base = 16, text += 2, len -= 2;
    if (len == 0) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : base == 16 && c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : base == 16 && c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 99u;
        if (d >= (unsigned)base || v > (UINT64_MAX - d) / (uint64_t)base) return false;
        v = v * (uint64_t)base + d;
    }
    *out = v;
    return true;
}

bool run_cli_parse_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || *end || errno || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* A comma- (or 'x'-) separated list of 1..max unsigned integers in [lo, hi]. */
bool run_cli_parse_list(const char *text, size_t len, const char *seps, uint64_t *out, int max, int *count,
                               uint64_t lo, uint64_t hi)
{
    *count = 0;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < len && !strchr(seps, text[j])) j++;
        uint64_t v;
        if (*count == max || !run_parse_u64(text + i, j - i, &v) || v < lo || v > hi) return false;
        out[(*count)++] = v;
        if (j == len) return true;
        i = j + 1;
    }
}

static bool valid_name(const char *s, size_t len)
{
    if (len == 0 || len >= RUN_NAME_MAX) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
    }
    return true;
}

bool run_cli_take_name(run_cli_parser *p, const char *what, const char *text, size_t len, char *out)
{
    if (!valid_name(text, len))
        return run_cli_fail(p, "%s name '%.*s' is not an identifier (letters, digits, '_', at most %d characters)", what,
                            (int)(len < 80 ? len : 80), text, RUN_NAME_MAX - 1);
    memcpy(out, text, len);
    out[len] = '\0';
    return true;
}
