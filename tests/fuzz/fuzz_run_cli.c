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
    free(text);
    return 0;
}
