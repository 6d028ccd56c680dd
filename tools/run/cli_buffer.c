/* asyncrt-run's command line: --buf NAME=DTYPE:SHAPE[:INIT] | NAME=npy:FILE. */
#include "cli_parser.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool parse_init(run_cli_parser *p, run_buffer_spec *b, const char *spec, const char *init)
{
    const char *eq = strchr(init, '=');
    size_t key = eq ? (size_t)(eq - init) : strlen(init);
    const char *val = eq ? eq + 1 : NULL;
    char why[160];
    if (key == 5 && !strncmp(init, "zeros", 5) && !val) b->init = RUN_INIT_ZEROS;
    else if (key == 6 && !strncmp(init, "poison", 6) && !val) b->init = RUN_INIT_POISON;
    else if (key == 4 && !strncmp(init, "fill", 4) && val) {
        b->init = RUN_INIT_FILL;
        if (!run_value_parse(b->dtype, val, &b->a, why, sizeof why))
            return run_cli_fail(p, "--buf %s: fill value: %s", spec, why);
    } else if (key == 4 && !strncmp(init, "iota", 4)) {
        b->init = RUN_INIT_IOTA;
        b->a = 0;
        b->b = 1;
        if (val) {
            char start[64], *comma;
            snprintf(start, sizeof start, "%s", val);
            if ((comma = strchr(start, ','))) *comma = '\0';
            if (strlen(val) >= sizeof start || !run_value_parse(RUN_F64, start, &b->a, why, sizeof why) ||
                (comma && !run_value_parse(RUN_F64, comma + 1, &b->b, why, sizeof why)))
                return run_cli_fail(p, "--buf %s: expected iota=START[,STEP] with numbers", spec);
        }
    } else if (key == 4 && !strncmp(init, "rand", 4) && val) {
        b->init = RUN_INIT_RAND;
        bool is_float = run_dtype_is_float(b->dtype);
        b->a = is_float ? -1 : 0;
        b->b = is_float ? 1 : 100;
        char text[128], *parts[4] = {0};
        int n = 0;
        if (strlen(val) >= sizeof text) return run_cli_fail(p, "--buf %s: rand=... is too long", spec);
        snprintf(text, sizeof text, "%s", val);
        for (char *s = text; n < 4; n++) {
            parts[n] = s;
            if (!(s = strchr(s, ','))) {
                n++;
                break;
            }
            *s++ = '\0';
        }
        if ((n != 1 && n != 3) || !run_parse_u64(parts[0], strlen(parts[0]), &b->seed) ||
            (n == 3 && (!run_value_parse(RUN_F64, parts[1], &b->a, why, sizeof why) ||
                        !run_value_parse(RUN_F64, parts[2], &b->b, why, sizeof why))))
            return run_cli_fail(p, "--buf %s: expected rand=SEED or rand=SEED,LO,HI (SEED an unsigned integer)", spec);
        if (!(b->a < b->b)) return run_cli_fail(p, "--buf %s: rand range [%Lg, %Lg) is empty", spec, b->a, b->b);
    } else if (key == 3 && !strncmp(init, "npy", 3) && val && *val) {
        b->init = RUN_INIT_NPY;
        b->path = val;
    } else {
        return run_cli_fail(p, "--buf %s: unknown initialiser '%s': use zeros, fill=V, iota[=START[,STEP]], "
                               "rand=SEED[,LO,HI], poison or npy=FILE", spec, init);
    }
    return true;
}

/* iota and rand must not produce values the dtype cannot hold (they would
 * be clamped or become infinities silently). The extremes are enough. */
static bool generated_values_fit(run_cli_parser *p, const run_buffer_spec *b, const char *spec)
{
    char why[200];
    long double ends[2];
    if (b->init == RUN_INIT_IOTA) ends[0] = b->a, ends[1] = b->a + (long double)(b->count - 1) * b->b;
    else if (b->init == RUN_INIT_RAND) ends[0] = b->a, ends[1] = run_dtype_is_float(b->dtype) ? b->b : ceill(b->b) - 1;
    else return true;
    for (int i = 0; i < 2; i++)
        if (!run_value_fits(b->dtype, ends[i], why, sizeof why))
            return run_cli_fail(p, "--buf %s: %s would produce %s", spec, b->init == RUN_INIT_IOTA ? "iota" : "rand", why);
    return true;
}

bool run_cli_parse_buffer(run_cli_parser *p, const char *spec)
{
    run_cli *c = p->cli;
    if (c->buffer_count == RUN_MAX_ITEMS) return run_cli_fail(p, "more than %d --buf options", RUN_MAX_ITEMS);
    run_buffer_spec *b = &c->buffers[c->buffer_count];
    memset(b, 0, sizeof *b);
    const char *eq = strchr(spec, '=');
    if (!eq) return run_cli_fail(p, "--buf '%s': expected NAME=DTYPE:SHAPE[:INIT] or NAME=npy:FILE", spec);
    if (!run_cli_take_name(p, "--buf", spec, (size_t)(eq - spec), b->name)) return false;
    for (size_t i = 0; i < c->buffer_count; i++)
        if (!strcmp(c->buffers[i].name, b->name)) return run_cli_fail(p, "--buf %s: buffer '%s' is defined twice", spec, b->name);
    const char *rest = eq + 1;
    if (!strncmp(rest, "npy:", 4)) {
        if (!rest[4]) return run_cli_fail(p, "--buf %s: npy: needs a file name", spec);
        b->from_file = true;
        b->init = RUN_INIT_NPY;
        b->path = rest + 4;
        c->buffer_count++;
        return true;
    }
    const char *colon = strchr(rest, ':');
    if (!colon || !run_dtype_parse(rest, (size_t)(colon - rest), &b->dtype))
        return run_cli_fail(p, "--buf %s: expected NAME=DTYPE:SHAPE[:INIT] with DTYPE one of %s (or NAME=npy:FILE)",
                            spec, run_dtype_names());
    const char *shape = colon + 1, *init = strchr(shape, ':');
    size_t shape_len = init ? (size_t)(init - shape) : strlen(shape);
    if (!run_cli_parse_list(shape, shape_len, "x,", b->shape, RUN_MAX_RANK, &b->rank, 1, UINT64_C(1) << 40))
        return run_cli_fail(p, "--buf %s: shape '%.*s': expected N or D0xD1x... (outermost first, up to %d "
                               "dimensions, each 1..2^40)", spec, (int)(shape_len < 80 ? shape_len : 80), shape, RUN_MAX_RANK);
    b->count = 1;
    for (int i = 0; i < b->rank; i++) {
        if (b->count > (UINT64_C(1) << 40) / b->shape[i])
            return run_cli_fail(p, "--buf %s: more than 2^40 elements", spec);
        b->count *= b->shape[i];
    }
    if (init && !parse_init(p, b, spec, init + 1)) return false;
    if (!generated_values_fit(p, b, spec)) return false;
    c->buffer_count++;
    return true;
}
