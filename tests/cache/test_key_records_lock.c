/* Two writers of one source name's key records (key_record.h): each thread
 * opens the folder itself, as two contexts or processes do, and stores its
 * own key many times, each time saying its round; after each store both
 * records must be there, each at least as new as its last returned store (a
 * read-merge-write without the lock puts an older one back now and then). A lock
 * held elsewhere is waited for a bounded time only: the record is skipped,
 * said at ASYNCRT_LOG=1, and the next store keeps it. A record too big
 * for the file leaves the file as it was. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "key_record.h"
#include "safe_io.h"
#include "sha256.h"
#include "test_support.h"

#define ROUNDS 1000

/* Each writer's record says the round that stored it ("round\t<n>"). With
 * the lock, once a writer's store of round n has returned, every later
 * version of the file holds its record at round n or later; a read-merge-
 * write that raced puts back an older round (or none). */
typedef struct writer {
    const char *dir;
    uint8_t key[32];
    atomic_int done;           /* the last round whose store returned; -1: none */
    struct writer *other;
    pthread_barrier_t *start;
    int lost;                  /* stores after which a record was behind */
} writer;

/* key's round in side file `file` of d (0: none said); -1 when absent. */
static int round_of(const asyncrt_key_records_dir *d, const char *file, const uint8_t key[32])
{
    asyncrt_key_record recs[ASYNCRT_KEY_RECORDS_MAX];
    size_t n = asyncrt__key_records_load_at(d, file, recs, ASYNCRT_KEY_RECORDS_MAX);
    int round = -1;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(recs[i].key1, key, 32) == 0) {
            char *v = asyncrt__key_value(&recs[i].lines, "round");
            round = v ? atoi(v) : 0;
            free(v);
        }
        asyncrt__key_record_free(&recs[i]);
    }
    return round;
}

static bool holds(const asyncrt_key_records_dir *d, const char *file, const uint8_t key[32])
{
    return round_of(d, file, key) >= 0;
}

/* A manifest for key: a record lives only as long as its entry's. */
static void make_manifest(const char *dir, const uint8_t key[32])
{
    char hex[65], path[700];
    asyncrt__sha256_hex(key, hex);
    snprintf(path, sizeof path, "%s/%s.mf", dir, hex);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs("m", out);
    fclose(out);
}

static void *write_many(void *arg)
{
    writer *w = arg;
    int fd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own, as another context's */
    asyncrt_key_records_dir d = {fd, NULL, NULL, w->dir};
    char file[32], round[16];
    asyncrt__key_records_file("k.cu", file);
    pthread_barrier_wait(w->start); /* both at once */
    for (int i = 0; i < ROUNDS; i++) {
        asyncrt_string_list lines = {0};
        asyncrt__key_note(&lines, "source name", "k.cu");
        snprintf(round, sizeof round, "%d", i);
        asyncrt__key_note(&lines, "round", round);
        bool saved = asyncrt__key_records_save_at(&d, "k.cu", w->key, &lines);
        asyncrt__list_free(&lines);
        atomic_store(&w->done, i);
        int theirs = atomic_load(&w->other->done); /* returned before this load: must be there */
        w->lost += !saved || round_of(&d, file, w->key) < i || round_of(&d, file, w->other->key) < theirs;
    }
    close(fd);
    return NULL;
}

static void two_writers_keep_both_records(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("asyncrt-records-lock");
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    writer a = {.dir = dir, .key = {1}, .start = &start}, b = {.dir = dir, .key = {2}, .start = &start};
    atomic_init(&a.done, -1);
    atomic_init(&b.done, -1);
    a.other = &b, b.other = &a;
    make_manifest(dir, a.key);
    make_manifest(dir, b.key);
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, write_many, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, write_many, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&start);
    print_message("stores after which a record was behind: %d of %d\n", a.lost + b.lost, 2 * ROUNDS);
    assert_int_equal(a.lost + b.lost, 0);
    test_remove_tree(dir);
    free(dir);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void a_held_lock_skips_the_record_in_bounded_time(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("asyncrt-records-held");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    asyncrt_diag diag;
    assert_true(asyncrt__diag_init(&diag, 1));
    asyncrt_key_records_dir d = {fd, NULL, &diag, dir};
    uint8_t key[32] = {7};
    make_manifest(dir, key);
    char why[256], file[32];
    asyncrt__key_records_file("k.cu", file);
    int held = asyncrt__file_lock(fd, ASYNCRT_KEY_RECORDS_LOCK, 0600, 0, why, sizeof why);
    assert_true(held >= 0);
    asyncrt_string_list lines = {0};
    asyncrt__key_note(&lines, "arch", "sm_80");
    test_capture_begin();
    double t0 = now_ms();
    bool saved = asyncrt__key_records_save_at(&d, "k.cu", key, &lines);
    double waited = now_ms() - t0;
    char *log = test_capture_end();
    assert_false(saved);
    assert_true(waited >= ASYNCRT_KEY_RECORDS_LOCK_MS * 0.9 && waited < ASYNCRT_KEY_RECORDS_LOCK_MS + 2000);
    if (!strstr(log, "key record of k.cu not kept in") || !strstr(log, "held by another writer"))
        fail_msg("no reason logged: %s", log);
    free(log);
    assert_false(holds(&d, file, key));
    close(held);
    assert_true(asyncrt__key_records_save_at(&d, "k.cu", key, &lines));
    assert_true(holds(&d, file, key));
    asyncrt__list_free(&lines);
    asyncrt__diag_destroy(&diag);
    close(fd);
    test_remove_tree(dir);
    free(dir);
}

/* A record too big for a side file is not kept, and the records already
 * there stay as they were (a failed write never loses them). */
static void a_record_too_big_leaves_the_file(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("asyncrt-records-big");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    asyncrt_key_records_dir d = {fd, NULL, NULL, dir};
    uint8_t small[32] = {3}, big[32] = {4};
    make_manifest(dir, small);
    make_manifest(dir, big);
    char file[32];
    asyncrt__key_records_file("k.cu", file);
    asyncrt_string_list lines = {0}, huge = {0};
    asyncrt__key_note(&lines, "arch", "sm_80");
    char *value = malloc(70000);
    memset(value, 'x', 69999);
    value[69999] = '\0';
    asyncrt__key_note(&huge, "option", value);
    free(value);
    assert_true(asyncrt__key_records_save_at(&d, "k.cu", small, &lines));
    assert_false(asyncrt__key_records_save_at(&d, "k.cu", big, &huge));
    assert_true(holds(&d, file, small));
    assert_false(holds(&d, file, big));
    asyncrt__list_free(&lines);
    asyncrt__list_free(&huge);
    close(fd);
    test_remove_tree(dir);
    free(dir);
}

/* A sweep drops a record whose manifest is gone; a trim's (every 60 s)
 * waits for its minute after the last one, an explicit one (0) does not. */
static void a_sweep_drops_dead_records_at_most_once_a_minute(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("asyncrt-records-sweep");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    asyncrt_key_records_dir d = {fd, NULL, NULL, dir};
    uint8_t a[32] = {5}, b[32] = {6};
    char file[32], hex[65], path[700];
    asyncrt__key_records_file("k.cu", file);
    asyncrt_string_list lines = {0};
    asyncrt__key_note(&lines, "arch", "sm_80");
    make_manifest(dir, a);
    make_manifest(dir, b);
    assert_true(asyncrt__key_records_save_at(&d, "k.cu", a, &lines));
    assert_true(asyncrt__key_records_save_at(&d, "k.cu", b, &lines));
    asyncrt__sha256_hex(a, hex);
    snprintf(path, sizeof path, "%s/%s.mf", dir, hex);
    assert_int_equal(unlink(path), 0);
    assert_false(holds(&d, file, a)); /* skipped at once */
    assert_int_equal(asyncrt__key_records_sweep_at(&d, ASYNCRT_KEY_RECORDS_SWEEP_S), 1);
    assert_true(holds(&d, file, b));
    asyncrt__sha256_hex(b, hex);
    snprintf(path, sizeof path, "%s/%s.mf", dir, hex);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(asyncrt__key_records_sweep_at(&d, ASYNCRT_KEY_RECORDS_SWEEP_S), 0); /* swept lately */
    assert_int_equal(asyncrt__key_records_sweep_at(&d, 0), 1);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    assert_int_equal(access(path, F_OK), -1); /* no record left: the file is gone */
    asyncrt__list_free(&lines);
    close(fd);
    test_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_writers_keep_both_records),
        cmocka_unit_test(a_held_lock_skips_the_record_in_bounded_time),
        cmocka_unit_test(a_record_too_big_leaves_the_file),
        cmocka_unit_test(a_sweep_drops_dead_records_at_most_once_a_minute),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
