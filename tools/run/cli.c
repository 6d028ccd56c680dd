/* asyncrt-run's argument parser: argv in, a run_cli or a message out. No I/O
 * and no GPU, one allocation (the parser's name tables): every malformed
 * input ends in a message. This file is the option loop: options that take a
 * value are dispatched by name from one table (k_valued); the families with
 * their own syntax (--buf, --arg, --tmap, --out/--expect) parse in their own
 * files, through cli_parser.h. */
#include "cli_parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link_run.h"

static bool parse_dim3(run_cli_parser *p, const char *opt, const char *text, unsigned out[3])
{
    uint64_t v[3] = {1, 1, 1};
    int n;
    if (!run_cli_parse_list(text, strlen(text), ",", v, 3, &n, 1, UINT32_MAX))
        return run_cli_fail(p, "%s '%s': expected X[,Y[,Z]] with each a positive integer below 2^32", opt, text);
    for (int i = 0; i < 3; i++) out[i] = (unsigned)(i < n ? v[i] : 1);
    return true;
}

/* Bytes with an optional K/KiB/M/MiB suffix (powers of 1024). */
static bool parse_bytes(const char *text, uint64_t *out, uint64_t max)
{
    size_t len = strlen(text), digits = 0;
    while (digits < len && text[digits] >= '0' && text[digits] <= '9') digits++;
    const char *suffix = text + digits;
    uint64_t scale = 1, v;
    if (!*suffix) scale = 1;
    else if (!strcmp(suffix, "K") || !strcmp(suffix, "k") || !strcmp(suffix, "KiB") || !strcmp(suffix, "KB")) scale = 1024;
    else if (!strcmp(suffix, "M") || !strcmp(suffix, "MiB") || !strcmp(suffix, "MB")) scale = 1024 * 1024;
    else return false;
    if (!run_parse_u64(text, digits, &v) || v > max / scale) return false;
    *out = v * scale;
    return true;
}

/* ---- the option loop ---------------------------------------------------- */

static int find_buffer(const run_cli *c, const char *name)
{
    for (size_t i = 0; i < c->buffer_count; i++)
        if (!strcmp(c->buffers[i].name, name)) return (int)i;
    return -1;
}

static bool resolve_args(run_cli_parser *p, size_t launch)
{
    run_cli *c = p->cli;
    run_launch_spec *l = &c->launches[launch];
    for (size_t i = 0; i < l->arg_count; i++) {
        run_arg_spec *a = &l->args[i];
        const char *name = p->arg_ref[launch][i];
        if (a->kind == RUN_ARG_BUFFER && (a->ref = find_buffer(c, name)) < 0)
            return run_cli_fail(p, "--arg %s: no --buf named '%s'", a->text, name);
        if (a->kind == RUN_ARG_TMAP || a->kind == RUN_ARG_TMAP_PTR) {
            a->ref = -1;
            for (size_t t = 0; t < c->tmap_count; t++)
                if (!strcmp(c->tmaps[t].name, name)) a->ref = (int)t;
            if (a->ref < 0) return run_cli_fail(p, "--arg %s: no --tmap named '%s'", a->text, name);
        }
    }
    return true;
}

static bool resolve(run_cli_parser *p)
{
    run_cli *c = p->cli;
    for (size_t i = 0; i < c->tmap_count; i++)
        if ((c->tmaps[i].buffer = find_buffer(c, p->tmap_buffer[i])) < 0)
            return run_cli_fail(p, "--tmap %s: no --buf named '%s'", c->tmaps[i].name, p->tmap_buffer[i]);
    for (size_t l = 0; l < c->launch_count; l++)
        if (!resolve_args(p, l)) return false;
    for (size_t i = 0; i < c->out_count; i++)
        if ((c->outs[i].buffer = find_buffer(c, p->out_ref[i])) < 0)
            return run_cli_fail(p, "--out %s: no --buf named '%s'", c->outs[i].path, p->out_ref[i]);
    for (size_t i = 0; i < c->expect_count; i++)
        if ((c->expects[i].buffer = find_buffer(c, p->expect_ref[i])) < 0)
            return run_cli_fail(p, "--expect %s: no --buf named '%s'", c->expects[i].path, p->expect_ref[i]);
    return true;
}

static bool check_combination(run_cli_parser *p)
{
    run_cli *c = p->cli;
    if (c->help || c->version) return true;
    if (!c->source) return run_cli_fail(p, "no source file given (use - for stdin)");
    if (strcmp(c->arch, "auto")) {
        asyncrt_arch arch = ASYNCRT_ARCH_INIT; /* --arch is checked before anything runs */
        if (!asyncrt_arch_parse(c->arch, &arch))
            return run_cli_fail(p, "--arch '%s': expected auto, sm_XY, sm_XYa, compute_XY or compute_XYa (e.g. sm_90)", c->arch);
    }
    /* --compile-only keeps --out, --expect and --repeat: the whole command
     * line is checked as far as it can be without a device (README). */
    if (c->compile_only && !strcmp(c->arch, "auto"))
        return run_cli_fail(p, "--compile-only needs an explicit --arch (e.g. sm_90 or compute_80): 'auto' reads the GPU");
    if (p->warmup_given && !c->repeat && !c->graph)
        return run_cli_fail(p, "--warmup only applies with --repeat N or --graph N");
    if (c->all_devices && p->device_given) return run_cli_fail(p, "--devices all and --device N: give one of them");
    if (c->all_devices && c->compile_only)
        return run_cli_fail(p, "--devices all runs on every device, --compile-only on none: give one of them");
    if (p->batch_given && !c->repeat) return run_cli_fail(p, "--batch only applies with --repeat N");
    for (size_t i = 1; c->graph && i < c->launch_count; i++)
        if (c->launches[i].has_priority != c->launches[0].has_priority ||
            (c->launches[i].has_priority && c->launches[i].priority != c->launches[0].priority))
            return run_cli_fail(p, "--graph captures one stream: launch %zu's --priority differs from launch 1's; give "
                                   "every launch the same --priority (or none)", i + 1);
    if (!run_link_check(c, p->err, p->err_size)) return false;
    for (size_t i = 0; i < c->launch_count; i++) {
        const run_launch_spec *l = &c->launches[i];
        if (l->pdl && i == 0)
            return run_cli_fail(p, "--pdl: the first launch has no launch before it to overlap with; give --pdl after --then");
        if (l->pdl && (l->has_priority != c->launches[i - 1].has_priority ||
                       (l->has_priority && l->priority != c->launches[i - 1].priority)))
            return run_cli_fail(p, "--pdl on launch %zu: it must run on the same stream as launch %zu, so give both the same "
                                   "--priority (or none)", i + 1, i);
        if (l->cooperative && (l->cluster[0] | l->cluster[1] | l->cluster[2]))
            return run_cli_fail(p, "--cooperative with --cluster on launch %zu: CUDA has no cooperative cluster launch", i + 1);
    }
    return run_cli_check_files(p);
}

/* The value of an option given as "--opt VALUE" or "--opt=VALUE". */
static bool option_value(run_cli_parser *p, int argc, char *const *argv, int *i, const char *name, const char **out)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (arg[n] == '=') return *out = arg + n + 1, true;
    if (*i + 1 >= argc) return run_cli_fail(p, "%s needs a value", name);
    *out = argv[++*i];
    return true;
}

static bool push(run_cli_parser *p, const char *opt, const char **list, size_t *count, const char *value)
{
    if (*count == RUN_MAX_ITEMS) return run_cli_fail(p, "more than %d %s options", RUN_MAX_ITEMS, opt);
    if (!*value) return run_cli_fail(p, "%s needs a non-empty value", opt);
    list[(*count)++] = value;
    return true;
}

/* Matches "--name" and "--name=...". */
static bool is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

static void init_launch(run_launch_spec *l)
{
    memset(l, 0, sizeof *l);
    for (int i = 0; i < 3; i++) l->grid[i] = l->block[i] = 1;
}

/* ---- options that take a value: one handler each, found by name ---------- */

/* A string option that must not be empty; `empty` is the message if it is. */
static bool take_text(run_cli_parser *p, const char *v, const char **to, const char *empty)
{
    return *v ? (*to = v, true) : run_cli_fail(p, "%s", empty);
}

static bool take_arch(run_cli_parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->arch, "--arch needs a value");
}

static bool take_device(run_cli_parser *p, const char *name, const char *v)
{
    (void)name;
    uint64_t n;
    if (!run_parse_u64(v, strlen(v), &n) || n > 1024) return run_cli_fail(p, "--device '%s': expected a device ordinal", v);
    p->cli->device = (int)n;
    p->device_given = true;
    return true;
}

static bool take_devices(run_cli_parser *p, const char *name, const char *v)
{
    (void)name;
    if (strcmp(v, "all") != 0)
        return run_cli_fail(p, "--devices '%s': only 'all' is known (every device, each checked); use --device N for one", v);
    p->cli->all_devices = true;
    return true;
}

static bool take_std(run_cli_parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->std, "--std needs a value such as c++17");
}

static bool take_kernel(run_cli_parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &run_cli_launch(p)->kernel, "--kernel needs a name");
}

static bool take_grid(run_cli_parser *p, const char *name, const char *v) { return parse_dim3(p, name, v, run_cli_launch(p)->grid); }
static bool take_block(run_cli_parser *p, const char *name, const char *v) { return parse_dim3(p, name, v, run_cli_launch(p)->block); }
static bool take_cluster(run_cli_parser *p, const char *name, const char *v)
{
    return parse_dim3(p, name, v, run_cli_launch(p)->cluster);
}

static bool take_smem(run_cli_parser *p, const char *name, const char *v)
{
    (void)name;
    if (!parse_bytes(v, &run_cli_launch(p)->smem, UINT32_MAX))
        return run_cli_fail(p, "--smem '%s': expected bytes, optionally with a K/KiB or M/MiB suffix (1024-based)", v);
    return true;
}

static bool take_buf(run_cli_parser *p, const char *name, const char *v) { return (void)name, run_cli_parse_buffer(p, v); }
static bool take_arg(run_cli_parser *p, const char *name, const char *v) { return (void)name, run_cli_parse_arg(p, v); }
static bool take_tmap(run_cli_parser *p, const char *name, const char *v) { return (void)name, run_cli_parse_tmap(p, v); }

static bool take_out(run_cli_parser *p, const char *name, const char *v)
{
    return run_cli_parse_file_ref(p, name, v, p->cli->outs, &p->cli->out_count, p->out_ref);
}

static bool take_expect(run_cli_parser *p, const char *name, const char *v)
{
    return run_cli_parse_file_ref(p, name, v, p->cli->expects, &p->cli->expect_count, p->expect_ref);
}

static bool take_tolerance(run_cli_parser *p, const char *name, const char *v, double *to)
{
    double d;
    if (!run_cli_parse_double(v, &d) || d < 0) return run_cli_fail(p, "%s '%s': expected a non-negative number", name, v);
    *to = d;
    return true;
}

static bool take_rtol(run_cli_parser *p, const char *name, const char *v) { return take_tolerance(p, name, v, &p->cli->rtol); }
static bool take_atol(run_cli_parser *p, const char *name, const char *v) { return take_tolerance(p, name, v, &p->cli->atol); }

static bool take_count(run_cli_parser *p, const char *name, const char *v, int least, unsigned *to)
{
    uint64_t n;
    if (!run_parse_u64(v, strlen(v), &n) || n > 1000000 || n < (uint64_t)least)
        return run_cli_fail(p, "%s '%s': expected an integer in %d..1000000", name, v, least);
    *to = (unsigned)n;
    return true;
}

static bool take_repeat(run_cli_parser *p, const char *name, const char *v) { return take_count(p, name, v, 1, &p->cli->repeat); }
static bool take_warmup(run_cli_parser *p, const char *name, const char *v)
{
    if (!take_count(p, name, v, 0, &p->cli->warmup)) return false;
    p->warmup_given = true;
    return true;
}

static bool take_batch(run_cli_parser *p, const char *name, const char *v)
{
    if (!take_count(p, name, v, 1, &p->cli->batch)) return false;
    p->batch_given = true;
    return true;
}

static bool take_graph(run_cli_parser *p, const char *name, const char *v)
{
    return take_count(p, name, v, 1, &p->cli->graph);
}

static bool take_bytes(run_cli_parser *p, const char *name, const char *v)
{
    (void)name;
    if (!parse_bytes(v, &p->cli->bytes, UINT64_MAX / 2) || !p->cli->bytes)
        return run_cli_fail(p, "--bytes '%s': expected a positive byte count (K/M suffixes allowed)", v);
    return true;
}

static bool take_emit_ptx(run_cli_parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->emit_ptx, "--emit-ptx needs a file name");
}

static bool take_emit_cubin(run_cli_parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->emit_cubin, "--emit-cubin needs a file name");
}

static bool take_emit_lib(run_cli_parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->emit_lib, "--emit-lib needs a file name");
}

static bool take_image(run_cli_parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->image, "--image needs a file name");
}

static bool take_bundle(run_cli_parser *p, const char *name, const char *v)
{
    return (void)name, take_text(p, v, &p->cli->bundle, "--bundle needs a file name");
}

static bool take_priority(run_cli_parser *p, const char *name, const char *v)
{
    (void)name;
    uint64_t n;
    bool negative = v[0] == '-';
    if (!run_parse_u64(v + negative, strlen(v + negative), &n) || n > 1000)
        return run_cli_fail(p, "--priority '%s': expected an integer in -1000..1000 (lower is higher priority, as in CUDA)", v);
    run_cli_launch(p)->has_priority = true;
    run_cli_launch(p)->priority = negative ? -(int)n : (int)n;
    return true;
}

typedef struct valued_option {
    const char *name;
    bool (*take)(run_cli_parser *p, const char *name, const char *value);
} valued_option;

/* Inserting an option is one row here and one handler above. */
static const valued_option k_valued[] = {
    {"--arch", take_arch},         {"--device", take_device},         {"--std", take_std},
    {"--kernel", take_kernel},     {"--grid", take_grid},             {"--block", take_block},
    {"--cluster", take_cluster},   {"--smem", take_smem},             {"--buf", take_buf},
    {"--arg", take_arg},           {"--tmap", take_tmap},             {"--out", take_out},
    {"--expect", take_expect},     {"--rtol", take_rtol},             {"--atol", take_atol},
    {"--repeat", take_repeat},     {"--warmup", take_warmup},         {"--batch", take_batch},
    {"--bytes", take_bytes},       {"--emit-ptx", take_emit_ptx},     {"--emit-cubin", take_emit_cubin},
    {"--priority", take_priority}, {"--image", take_image},           {"--bundle", take_bundle},
    {"--graph", take_graph},       {"--emit-lib", take_emit_lib}, {"--devices", take_devices},
};

static bool parse_one(run_cli_parser *p, int argc, char *const *argv, int *i, bool *options_done)
{
    run_cli *c = p->cli;
    const char *a = argv[*i], *v = NULL;
    if (*options_done || a[0] != '-' || !strcmp(a, "-")) {
        if (!c->source) return c->source = a, true;
        return push(p, "source", c->more_sources, &c->more_source_count, a); /* linked: link_run.h */
    }
    if (!strcmp(a, "--")) return *options_done = true, true;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return c->help = true, true;
    if (!strcmp(a, "--version")) return c->version = true, true;
    if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) return c->verbose++, true;
    if (!strcmp(a, "-vv")) return c->verbose += 2, true;
    if (!strcmp(a, "--json")) return c->json = true, true;
    if (!strcmp(a, "--quiet")) return c->quiet = true, true;
    if (!strcmp(a, "--compile-only")) return c->compile_only = true, true;
    if (!strcmp(a, "--cooperative")) return run_cli_launch(p)->cooperative = true, true;
    if (!strcmp(a, "--pdl")) return run_cli_launch(p)->pdl = true, true;
    if (!strcmp(a, "--lto")) return c->lto = true, true;
    if (is_opt(a, "--link") || !strcmp(a, "-Xnvjitlink")) {
        bool file = a[1] == '-';
        if (!option_value(p, argc, argv, i, file ? "--link" : "-Xnvjitlink", &v)) return false;
        return file ? push(p, "--link", c->link_files, &c->link_file_count, v)
                    : push(p, "-Xnvjitlink", c->link_options, &c->link_option_count, v);
    }
    if (!strcmp(a, "--then")) {
        if (c->launch_count == RUN_MAX_LAUNCHES) return run_cli_fail(p, "more than %d launches (--then)", RUN_MAX_LAUNCHES);
        run_launch_spec *next = &c->launches[c->launch_count++];
        init_launch(next);
        return true;
    }
    if (!strncmp(a, "-I", 2) || !strncmp(a, "-D", 2)) {
        bool inc = a[1] == 'I';
        v = a[2] ? a + 2 : NULL;
        if (!v && *i + 1 >= argc) return run_cli_fail(p, "%s needs a value", a);
        if (!v) v = argv[++*i];
        return inc ? push(p, "-I", c->includes, &c->include_count, v) : push(p, "-D", c->defines, &c->define_count, v);
    }
    if (!strcmp(a, "-Xnvrtc") || is_opt(a, "--nvrtc-opt")) {
        if (!option_value(p, argc, argv, i, a[1] == 'X' ? "-Xnvrtc" : "--nvrtc-opt", &v)) return false;
        return push(p, "--nvrtc-opt", c->nvrtc_options, &c->nvrtc_option_count, v);
    }
    const valued_option *o = NULL;
    for (size_t j = 0; j < sizeof k_valued / sizeof k_valued[0]; j++)
        if (is_opt(a, k_valued[j].name)) o = &k_valued[j];
    if (!o) return run_cli_fail(p, "unknown option '%s'", a);
    if (!option_value(p, argc, argv, i, o->name, &v)) return false;
    return o->take(p, o->name, v);
}

int run_cli_parse(int argc, char *const *argv, run_cli *out, char *err, size_t err_size)
{
    run_cli_parser *p = calloc(1, sizeof *p); /* the name tables are large for a stack frame */
    if (err_size) err[0] = '\0';
    memset(out, 0, sizeof *out);
    if (!p) {
        snprintf(err, err_size, "out of memory");
        return RUN_EXIT_INTERNAL;
    }
    p->cli = out;
    p->err = err;
    p->err_size = err_size;
    out->arch = "auto";
    out->launch_count = 1;
    init_launch(&out->launches[0]);
    out->rtol = out->atol = -1;
    out->warmup = 1;
    out->batch = 1;
    bool ok = true, options_done = false;
    for (int i = 1; ok && i < argc; i++) {
        if (!argv[i]) ok = run_cli_fail(p, "argv[%d] is NULL", i);
        else ok = parse_one(p, argc, argv, &i, &options_done);
    }
    ok = ok && resolve(p) && check_combination(p);
    free(p);
    return ok ? RUN_EXIT_OK : RUN_EXIT_USAGE;
}
