/* The dispatcher's evidence: the built-in table of measured winners per
 * architecture family, and calibration files measured on one device. */
#include "dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h" /* asyncrt__format */

#define CAL_MAGIC "asyncrt-calibration 1"
#define CAL_MAX_BYTES 4096

static const char *const k_op_names[ASYNCRT_DISPATCH_OP_COUNT] = {"map", "transpose", "tilemap", "stencil"};

const char *asyncrt__dispatch_op_name(asyncrt_dispatch_op op)
{
    return (unsigned)op < ASYNCRT_DISPATCH_OP_COUNT ? k_op_names[op] : "?";
}

/* What each path is, from the one list (dispatch.h). */
static const struct {
    const char *name;
    int needs;
} k_paths[] = {
#define PATH_ENTRY(value, name, needs) [value] = {name, needs},
    ASYNCRT_OP_PATHS(PATH_ENTRY)
#undef PATH_ENTRY
};
_Static_assert(sizeof k_paths / sizeof k_paths[0] == ASYNCRT_PATH_PLAIN + 1, "one entry per asyncrt_op_path");

const char *asyncrt_op_path_name(asyncrt_op_path path)
{
    return (unsigned)path <= ASYNCRT_PATH_PLAIN ? k_paths[path].name : NULL;
}

const char *asyncrt_map_path_name(asyncrt_map_path path) { return asyncrt_op_path_name(path); }

int asyncrt__dispatch_path_needs(asyncrt_op_path path)
{
    return (unsigned)path <= ASYNCRT_PATH_PLAIN ? k_paths[path].needs : 0;
}

int asyncrt__path_parse(const char *name)
{
    for (int p = ASYNCRT_PATH_AUTO; p <= ASYNCRT_PATH_PLAIN; p++)
        if (strcmp(name, k_paths[p].name) == 0) return p;
    return -1;
}

/* ---- the built-in table ---------------------------------------------------
 * Per family (exact compute capability) and op: paths fastest first, with
 * the share of a same-run cuMemcpyDtoD measured by asyncrt-bench (map: 1 GiB
 * y = a*x + b; transpose, tile map, stencil: 16384 x 16384 f32, 5-point
 * stencil). A family not listed falls back to the newest path the target
 * has. */
#define T ASYNCRT_PATH_TMA
#define L ASYNCRT_PATH_LDGSTS
#define P ASYNCRT_PATH_PLAIN
typedef struct table_entry {
    int cc[3]; /* the families it holds for (0: none) */
    asyncrt_dispatch_rank rank[ASYNCRT_DISPATCH_OP_COUNT];
    const char *evidence;
} table_entry;

static const table_entry k_table[] = {
    /* H100 SXM (sm_90, driver 580), each path at its default tuning:
     * asyncrt-bench --tile-sweep (16384^2 f32, random data, median of 20, %
     * of the same run's cuMemcpyDtoD), map from asyncrt-bench (1 GiB). The
     * LDGSTS transpose and stencil beat TMA there by 1-3 points (why is not
     * profiled yet; ncu showed TMA at 43% warps active against 72% for the
     * LDGSTS staged transpose). The tile map runs the transpose's kernels without the
     * transpose; ranked as the transpose. */
    {{90},
     {[ASYNCRT_DISPATCH_MAP] = {3, {T, L, P}, {100.4, 100.0, 99.7}},
      [ASYNCRT_DISPATCH_TRANSPOSE] = {3, {L, P, T}, {94.1, 93.1, 92.8}},
      [ASYNCRT_DISPATCH_TILE_MAP] = {3, {L, P, T}, {94.1, 93.1, 92.8}},
      [ASYNCRT_DISPATCH_STENCIL] = {3, {L, P, T}, {96.1, 94.4, 93.4}}},
     "built-in table, measured on an H100"},
    /* sm_80 / sm_86 / sm_89 (A100; A10, RTX 30; L4, RTX 40): no such device
     * measured here. The compute_80 build (the code these devices run) timed
     * on the H100 through the driver's JIT, same sweep; the map op's compute_80
     * build was not timed, so its rank keeps LDGSTS first with no figures. */
    {{80, 86, 89},
     {[ASYNCRT_DISPATCH_MAP] = {2, {L, P}, {0, 0}},
      [ASYNCRT_DISPATCH_TRANSPOSE] = {2, {L, P}, {94.1, 93.5}},
      [ASYNCRT_DISPATCH_TILE_MAP] = {2, {L, P}, {94.1, 93.5}},
      [ASYNCRT_DISPATCH_STENCIL] = {2, {P, L}, {96.6, 95.5}}},
     "built-in table, the compute_80 build measured on an H100"},
};
#undef T
#undef L
#undef P

/* The first path of `r` that `target` runs, or -1. */
static int first_runnable(const asyncrt_dispatch_rank *r, int target)
{
    for (int i = 0; i < r->count && i < 3; i++)
        if (asyncrt__dispatch_path_needs(r->path[i]) <= target) return i;
    return -1;
}

static void describe_rank(const asyncrt_dispatch_rank *r, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < r->count && used < size; i++) {
        int n = r->pct[i] > 0 ? snprintf(buf + used, size - used, "%s%s %.1f%%", i ? ", " : "",
                                         asyncrt_op_path_name(r->path[i]), r->pct[i])
                              : snprintf(buf + used, size - used, "%s%s", i ? " > " : "",
                                         asyncrt_op_path_name(r->path[i]));
        if (n < 0) break;
        used += (size_t)n;
    }
}

asyncrt_op_path asyncrt__dispatch_choose(asyncrt_dispatch_op op, int device_cc, int target,
                                         const asyncrt_calibration *cal, char *why, size_t why_size)
{
    char ranking[96];
    const char *name = asyncrt__dispatch_op_name(op);
    if ((unsigned)op < ASYNCRT_DISPATCH_OP_COUNT && cal) {
        int i = first_runnable(&cal->rank[op], target);
        if (i >= 0) {
            describe_rank(&cal->rank[op], ranking, sizeof ranking);
            snprintf(why, why_size, "%s: calibrated on this device (%s of D2D)", name, ranking);
            return cal->rank[op].path[i];
        }
    }
    for (size_t e = 0; (unsigned)op < ASYNCRT_DISPATCH_OP_COUNT && e < sizeof k_table / sizeof k_table[0]; e++) {
        const int *cc = k_table[e].cc;
        if (device_cc <= 0 || (cc[0] != device_cc && cc[1] != device_cc && cc[2] != device_cc)) continue;
        int i = first_runnable(&k_table[e].rank[op], target);
        if (i < 0) break;
        describe_rank(&k_table[e].rank[op], ranking, sizeof ranking);
        snprintf(why, why_size, "%s: %s for sm_%d (%s%s)", name, k_table[e].evidence, device_cc, ranking,
                 k_table[e].rank[op].pct[0] > 0 ? " of D2D" : "");
        return k_table[e].rank[op].path[i];
    }
    asyncrt_op_path p = ASYNCRT_PATH_TMA; /* the newest first */
    while (p < ASYNCRT_PATH_PLAIN && asyncrt__dispatch_path_needs(p) > target) p++;
    snprintf(why, why_size, "%s: nothing measured for sm_%d: the newest path the target (sm_%d) has", name,
             device_cc, target);
    return p;
}

/* ---- calibration files ---------------------------------------------------- */

char *asyncrt__calibration_path(const char *cache_dir, const char *uuid)
{
    if (!cache_dir || !*cache_dir || !uuid || !*uuid) return NULL;
    return asyncrt__format("%s/calibration-%s.txt", cache_dir, uuid);
}

char *asyncrt__calibration_format(const asyncrt_calibration *cal)
{
    char *text = asyncrt__format(CAL_MAGIC "\nuuid %s\ndriver %d\ncc %d\n", cal->uuid, cal->driver_version, cal->cc);
    for (int op = 0; text && op < ASYNCRT_DISPATCH_OP_COUNT; op++) {
        const asyncrt_dispatch_rank *r = &cal->rank[op];
        char line[160];
        size_t used = (size_t)snprintf(line, sizeof line, "%s", k_op_names[op]);
        for (int i = 0; i < r->count && i < 3; i++)
            used += (size_t)snprintf(line + used, sizeof line - used, " %s %.2f", asyncrt_op_path_name(r->path[i]),
                                     r->pct[i]);
        char *grown = asyncrt__format("%s%s\n", text, line);
        free(text);
        text = grown;
    }
    if (text) {
        char *grown = asyncrt__format("%send\n", text);
        free(text);
        text = grown;
    }
    return text;
}

static bool fail_why(char *why, size_t size, const char *fmt, const char *a, int line)
{
    char msg[96];
    snprintf(msg, sizeof msg, fmt, a);
    snprintf(why, size, "line %d: %s", line, msg);
    return false;
}

/* A percentage as the format writes it: digits, a point, two digits. */
static bool parse_pct(const char *s, double *out)
{
    size_t n = strlen(s), dot = strcspn(s, ".");
    if (n < 4 || n > 6 || dot != n - 3 || strspn(s, "0123456789") != dot || strspn(s + dot + 1, "0123456789") != 2)
        return false;
    *out = strtod(s, NULL);
    return *out > 0 && *out <= 200;
}

static bool parse_rank(char *rest, asyncrt_dispatch_rank *r, char *why, size_t size, int line)
{
    char *save = NULL;
    memset(r, 0, sizeof *r);
    for (char *tok = strtok_r(rest, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (r->count == 3) return fail_why(why, size, "more than three paths%s", "", line);
        int p = asyncrt__path_parse(tok);
        if (p <= ASYNCRT_PATH_AUTO) return fail_why(why, size, "'%s' is not a path", tok, line);
        for (int i = 0; i < r->count; i++)
            if (r->path[i] == (asyncrt_op_path)p) return fail_why(why, size, "path %s twice", tok, line);
        char *pct = strtok_r(NULL, " ", &save);
        if (!pct || !parse_pct(pct, &r->pct[r->count]))
            return fail_why(why, size, "path %s lacks a percentage like 94.80", tok, line);
        if (r->count && r->pct[r->count] > r->pct[r->count - 1])
            return fail_why(why, size, "%s is not ranked fastest first", tok, line);
        r->path[r->count++] = (asyncrt_op_path)p;
    }
    if (!r->count) return fail_why(why, size, "no paths%s", "", line);
    return true;
}

bool asyncrt__calibration_parse(const char *text, size_t size, const char *uuid, int driver_version,
                               asyncrt_calibration *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    char buf[CAL_MAX_BYTES + 1];
    bool shaped = size > 0 && size <= CAL_MAX_BYTES && !memchr(text, 0, size) && text[size - 1] == '\n';
    if (shaped) {
        memcpy(buf, text, size);
        buf[size] = 0;
    }
    if (!shaped || strstr(buf, "\n\n") || strchr(buf, '\r')) {
        snprintf(why, why_size, "not a calibration file (%zu bytes; at most %d, lines ending in a newline, none empty)",
                 size, CAL_MAX_BYTES);
        return false;
    }
    char *save = NULL;
    int line = 0, expected_lines = 5 + ASYNCRT_DISPATCH_OP_COUNT;
    bool ok = true;
    for (char *l = strtok_r(buf, "\n", &save); ok && l; l = strtok_r(NULL, "\n", &save)) {
        line++;
        char word[64];
        int used = 0;
        if (line == 1) {
            if (strcmp(l, CAL_MAGIC)) return fail_why(why, why_size, "not '%s'", CAL_MAGIC, line);
        } else if (line == 2) {
            if (sscanf(l, "uuid %47s%n", out->uuid, &used) != 1 || l[used] || strncmp(out->uuid, "GPU-", 4))
                return fail_why(why, why_size, "not 'uuid GPU-...'%s", "", line);
            if (strcmp(out->uuid, uuid)) return fail_why(why, why_size, "measured on another device (%s)", out->uuid, line);
        } else if (line == 3) {
            if (sscanf(l, "driver %d%n", &out->driver_version, &used) != 1 || l[used] || out->driver_version <= 0)
                return fail_why(why, why_size, "not 'driver N'%s", "", line);
            if (out->driver_version != driver_version) {
                snprintf(word, sizeof word, "%d, this one is %d", out->driver_version, driver_version);
                return fail_why(why, why_size, "measured under another driver (%s)", word, line);
            }
        } else if (line == 4) {
            if (sscanf(l, "cc %d%n", &out->cc, &used) != 1 || l[used] || out->cc < 30 || out->cc > 199)
                return fail_why(why, why_size, "not 'cc NN'%s", "", line);
        } else if (line < expected_lines) {
            int op = line - 5;
            size_t n = strlen(k_op_names[op]);
            if (strncmp(l, k_op_names[op], n) || l[n] != ' ')
                return fail_why(why, why_size, "expected the '%s' ranking", k_op_names[op], line);
            ok = parse_rank(l + n + 1, &out->rank[op], why, why_size, line);
        } else if (line == expected_lines) {
            if (strcmp(l, "end")) return fail_why(why, why_size, "expected 'end'%s", "", line);
        } else {
            return fail_why(why, why_size, "text after 'end'%s", "", line);
        }
    }
    if (ok && line != expected_lines) return fail_why(why, why_size, "the file ends early (no 'end')%s", "", line);
    return ok;
}
