/* asyncrt-run's command line: --out / --expect NAME=FILE[:TOLERANCES], and
 * the check that no --out overwrites a reference or another --out. */
#include "cli_parser.h"

#include <stdio.h>
#include <string.h>

/* --expect's own tolerances: FILE:rtol=R,atol=A (either or both) or FILE:exact.
 * Only a suffix that parses as one is taken from the name, so files with ':'
 * in their names still work. */
static bool parse_tolerance_suffix(run_cli_parser *p, const char *spec, const char *suffix, run_file_ref *ref)
{
    if (!strcmp(suffix, "exact")) return ref->rtol = ref->atol = 0, true;
    char text[128];
    if (strlen(suffix) >= sizeof text) return run_cli_fail(p, "--expect %s: tolerance list too long", spec);
    snprintf(text, sizeof text, "%s", suffix);
    for (char *f = text, *next; f; f = next) {
        if ((next = strchr(f, ','))) *next++ = '\0';
        double d;
        bool r = !strncmp(f, "rtol=", 5), a = !strncmp(f, "atol=", 5);
        if ((!r && !a) || !run_cli_parse_double(f + 5, &d) || d < 0)
            return run_cli_fail(p, "--expect %s: '%s': expected rtol=R and/or atol=A (non-negative numbers, comma-separated) "
                                   "or exact", spec, f);
        *(r ? &ref->rtol : &ref->atol) = d;
    }
    return true;
}

static bool looks_like_tolerance(const char *suffix)
{
    return !strcmp(suffix, "exact") || !strncmp(suffix, "rtol=", 5) || !strncmp(suffix, "atol=", 5);
}

bool run_cli_parse_file_ref(run_cli_parser *p, const char *opt, const char *spec, run_file_ref *list, size_t *count,
                                   char names[][RUN_NAME_MAX])
{
    if (*count == RUN_MAX_ITEMS) return run_cli_fail(p, "more than %d %s options", RUN_MAX_ITEMS, opt);
    const char *eq = strchr(spec, '=');
    if (!eq || !eq[1]) return run_cli_fail(p, "%s '%s': expected BUFFER=FILE.npy", opt, spec);
    if (!run_cli_take_name(p, opt, spec, (size_t)(eq - spec), names[*count])) return false;
    run_file_ref *ref = &list[*count];
    ref->path = eq + 1;
    ref->rtol = ref->atol = -1;
    const char *colon = strrchr(eq + 1, ':');
    if (colon && !strcmp(opt, "--expect") && looks_like_tolerance(colon + 1)) {
        size_t len = (size_t)(colon - eq - 1);
        char *path = p->cli->expect_path_storage[*count];
        if (!len || len >= sizeof p->cli->expect_path_storage[0])
            return run_cli_fail(p, "--expect '%s': expected BUFFER=FILE.npy[:rtol=R,atol=A|:exact]", spec);
        memcpy(path, eq + 1, len);
        path[len] = '\0';
        ref->path = path;
        if (!parse_tolerance_suffix(p, spec, colon + 1, ref)) return false;
    }
    (*count)++;
    return true;
}

/* An --out that names a reference file would overwrite the reference with the
 * result and then compare the result with itself. Same spelling here; main
 * also compares the files' identities (links, ./x vs x). */
bool run_cli_check_files(run_cli_parser *p)
{
    run_cli *c = p->cli;
    for (size_t i = 0; i < c->out_count; i++) {
        for (size_t j = 0; j < c->expect_count; j++)
            if (!strcmp(c->outs[i].path, c->expects[j].path))
                return run_cli_fail(p, "--out %s=%s would overwrite the --expect reference %s=%s: write the result elsewhere",
                                    c->buffers[c->outs[i].buffer].name, c->outs[i].path, c->buffers[c->expects[j].buffer].name,
                                    c->expects[j].path);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(c->outs[i].path, c->outs[j].path))
                return run_cli_fail(p, "--out: two buffers are written to %s", c->outs[i].path);
    }
    return true;
}
