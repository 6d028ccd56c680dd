/* The debug log (ASYNCRT_LOG) writes each line whole: several processes of
 * several threads logging to one pipe, as parallel `asyncrt-cache warm`
 * runs do, never split a line ("asyncrt: asyncrt: target..."). One line
 * is longer than the logger's stack buffer, to take its other path. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "test_support.h"

enum { PROCESSES = 4, THREADS = 3, LINES = 1500, LONG_TEXT = 3000 };

typedef struct worker {
    asyncrt_diag *diag;
    int process, thread;
} worker;

static char g_long[LONG_TEXT + 1];

static void *log_lines(void *arg)
{
    const worker *w = arg;
    for (int i = 0; i < LINES; i++) {
        if (i == LINES / 2) asyncrt__diag_log(w->diag, 1, "worker %d.%d long %s end", w->process, w->thread, g_long);
        else asyncrt__diag_log(w->diag, 1, "worker %d.%d line %d of a target and its reason end", w->process,
                               w->thread, i);
    }
    return NULL;
}

static void child(int fd, int process)
{
    dup2(fd, 2);
    asyncrt_diag d;
    if (!asyncrt__diag_init(&d, 1)) _exit(1);
    pthread_t threads[THREADS];
    worker w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t] = (worker){&d, process, t};
        if (pthread_create(&threads[t], NULL, log_lines, &w[t]) != 0) _exit(1);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    asyncrt__diag_destroy(&d);
    _exit(0);
}

/* Whether `line` is one whole line that a worker logged. */
static bool whole(const char *line)
{
    int p, t, i, used = 0;
    if (sscanf(line, "asyncrt: worker %d.%d line %d of a target and its reason end%n", &p, &t, &i, &used) == 3 &&
        !line[used])
        return true;
    used = 0;
    if (sscanf(line, "asyncrt: worker %d.%d long %n", &p, &t, &used) != 2 || !used) return false;
    return strlen(line + used) == LONG_TEXT + 4 && !strncmp(line + used, g_long, LONG_TEXT) &&
           !strcmp(line + used + LONG_TEXT, " end");
}

static void every_line_is_whole(void **state)
{
    (void)state;
    memset(g_long, 'x', LONG_TEXT);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pids[PROCESSES];
    for (int p = 0; p < PROCESSES; p++) {
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0) {
            close(fds[0]);
            child(fds[1], p);
        }
    }
    close(fds[1]);
    size_t size = 0, cap = 1 << 20;
    char *text = malloc(cap);
    for (ssize_t n; (n = read(fds[0], text + size, cap - size - 1)) > 0;) {
        size += (size_t)n;
        if (cap - size < 65536) text = realloc(text, cap *= 2);
    }
    close(fds[0]);
    text[size] = '\0';
    for (int p = 0; p < PROCESSES; p++) {
        int status;
        assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    int lines = 0, broken = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lines++;
        if (!whole(line) && broken++ < 3) fprintf(stderr, "a line not whole: %.200s\n", line);
    }
    free(text);
    printf("%d lines from %d processes of %d threads, %d not whole\n", lines, PROCESSES, THREADS, broken);
    assert_int_equal(broken, 0);
    assert_int_equal(lines, PROCESSES * THREADS * LINES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_line_is_whole)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
