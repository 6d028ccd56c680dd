/* libFuzzer target: asyncrt-run's command line parser. The input is split
 * into argv on NUL bytes, after a fixed argv[0]. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_ARGS 256

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static run_cli cli; /* large: keep it off the stack */
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "asyncrt-run";
    for (size_t i = 0; i <= size && argc <= MAX_ARGS;) {
        argv[argc++] = text + i;
        i += strlen(text + i) + 1;
    }
    argv[argc] = NULL;
    char err[512];
    memset(&cli, 0, sizeof cli);
    int rc = run_cli_parse(argc, argv, &cli, err, sizeof err);
    if (rc != RUN_EXIT_OK && rc != RUN_EXIT_USAGE) abort();
    if (rc == RUN_EXIT_USAGE && (err[0] == '\0' || !memchr(err, '\0', sizeof err))) abort();
    /* What main.c indexes with must be in range once the parser said yes
     * (to a run: --help and --version print and stop before any check of
     * the rest, as nvcc does). */
    if (rc == RUN_EXIT_OK && !cli.help && !cli.version) {
        if (cli.buffer_count > RUN_MAX_ITEMS || cli.tmap_count > RUN_MAX_ITEMS || cli.out_count > RUN_MAX_ITEMS ||
            cli.expect_count > RUN_MAX_ITEMS || cli.launch_count < 1 || cli.launch_count > RUN_MAX_LAUNCHES)
            abort();
        for (size_t l = 0; l < cli.launch_count; l++) {
            if (cli.launches[l].arg_count > RUN_MAX_ITEMS) abort();
            if (l == 0 && cli.launches[l].pdl) abort();
            for (size_t i = 0; i < cli.launches[l].arg_count; i++) {
                const run_arg_spec *a = &cli.launches[l].args[i];
                if (a->kind == RUN_ARG_BUFFER && (a->ref < 0 || (size_t)a->ref >= cli.buffer_count)) abort();
                if ((a->kind == RUN_ARG_TMAP || a->kind == RUN_ARG_TMAP_PTR) &&
                    (a->ref < 0 || (size_t)a->ref >= cli.tmap_count))
                    abort();
                if (a->kind == RUN_ARG_SCALAR && a->dtype >= RUN_DTYPE_COUNT) abort();
                /* bytes:/struct: values are encoded into a->size bytes: it must be bounded. */
                if (a->size == 0 || a->size > RUN_MAX_ARG_BYTES) abort();
                if (a->kind == RUN_ARG_BYTES || a->kind == RUN_ARG_STRUCT) {
                    unsigned char buf[RUN_MAX_ARG_BYTES + 64];
                    memset(buf, 0xa5, sizeof buf);
                    run_arg_encode(a, buf);
                    for (size_t k = a->size; k < sizeof buf; k++)
                        if (buf[k] != 0xa5) abort(); /* wrote past its size */
                }
            }
        }
        for (size_t i = 0; i < cli.tmap_count; i++) {
            const run_tmap_spec *t = &cli.tmaps[i];
            if (t->buffer < 0 || (size_t)t->buffer >= cli.buffer_count) abort();
            if (t->rank < 1 || t->rank > RUN_MAX_TMAP_RANK || t->dims_rank > RUN_MAX_TMAP_RANK ||
                t->strides_rank > RUN_MAX_TMAP_RANK || t->estrides_rank > RUN_MAX_TMAP_RANK)
                abort();
        }
        for (size_t i = 0; i < cli.buffer_count; i++) {
            const run_buffer_spec *b = &cli.buffers[i];
            if (!b->from_file && (b->rank < 1 || b->rank > RUN_MAX_RANK || b->dtype >= RUN_DTYPE_COUNT)) abort();
            if (!memchr(b->name, '\0', sizeof b->name)) abort();
        }
        for (size_t i = 0; i < cli.out_count; i++)
            if (cli.outs[i].buffer < 0 || (size_t)cli.outs[i].buffer >= cli.buffer_count) abort();
        for (size_t i = 0; i < cli.expect_count; i++)
            if (cli.expects[i].buffer < 0 || (size_t)cli.expects[i].buffer >= cli.buffer_count) abort();
        if (!cli.help && !cli.version && !cli.source) abort();
    }
    free(text);
    return 0;
}
