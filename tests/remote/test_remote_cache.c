/* The remote cache against a real redis-server of the test's own (issue 26):
 * hits across processes, a header edited between machines, tampered values,
 * wrong and missing keys, a machine with another key file that leaves the
 * fleet's values alone, the longest prefix, read-only, a password never
 * shown. Each "machine"
 * is a child process with a local cache of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test_support.h"

typedef struct world {
    redis_server server;
    char *dir;       /* key files, caches */
    char *tree;      /* the sources' tree: the same path on every "machine" */
    char *key;       /* the fleet's key file */
    int caches;      /* local caches handed out */
} world;

static const char *kernel_source = "#include <inc.h>\n"
                                   "extern \"C\" __global__ void scale(float *x) { x[threadIdx.x] *= SCALE; }\n";

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    assert_true(redis_start(&w->server, false));
    w->dir = test_make_temp_dir("asyncrt-remote");
    w->tree = malloc(300);
    snprintf(w->tree, 300, "%s/src", w->dir);
    assert_int_equal(mkdir(w->tree, 0700), 0);
    write_text(w->tree, "inc.h", "#define SCALE 2.0f\n");
    w->key = make_key_file(w->dir, "fleet.key");
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    redis_stop(&w->server);
    test_remove_tree(w->dir);
    free(w->dir), free(w->tree), free(w->key), free(w);
    return 0;
}

/* A fresh local cache: another machine. */
static char *machine(world *w)
{
    char *dir = malloc(300);
    snprintf(dir, 300, "%s/cache%d", w->dir, w->caches++);
    return dir;
}

static remote_result run_on(world *w, const char *cache, const char *spec, const char *key)
{
    remote_run run = {.cache_dir = cache, .spec = spec, .key_file = key, .source_name = "scale.cu",
                      .source = kernel_source, .include_dir = w->tree};
    remote_result r = remote_compile(&run);
    assert_true(r.ran);
    if (r.status != ASYNCRT_SUCCESS) fail_msg("compile failed: %s", asyncrt_status_string(r.status));
    return r;
}

static remote_result run_fresh(world *w, const char *spec, const char *key)
{
    char *cache = machine(w);
    remote_result r = run_on(w, cache, spec, key);
    free(cache);
    return r;
}

static void test_hit_across_processes(void **state)
{
    world *w = *state;
    remote_result a = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(a.set_status, ASYNCRT_SUCCESS);
    assert_int_equal(a.origin, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(a.stats.stores, 1);
    assert_int_equal(a.stats.misses, 1);
    assert_true(a.stats.enabled);
    assert_true(a.stats.bytes_written > 1000);

    char *b_cache = machine(w);
    remote_result b = run_on(w, b_cache, w->server.spec, w->key);
    assert_int_equal(b.origin, ASYNCRT_ORIGIN_REMOTE_CACHE);
    assert_int_equal(b.stats.hits, 1);
    /* the value a wrote, and a wrote its key record beside it (remote_records.h) */
    assert_true(b.stats.bytes_read > 1000 && b.stats.bytes_read < a.stats.bytes_written);
    assert_int_equal(b.stats.stores, 0);
    /* installed locally: the next process on that machine hits its disk */
    remote_result again = run_on(w, b_cache, w->server.spec, w->key);
    assert_int_equal(again.origin, ASYNCRT_ORIGIN_DISK_CACHE);
    assert_int_equal(again.stats.hits + again.stats.misses, 0);
    free(b_cache);
}

/* The same path holds another header on the second machine: the value
 * recorded the first machine's header, so it must not be served there. */
static void test_header_edited_between_machines(void **state)
{
    world *w = *state;
    remote_result a = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(a.origin, ASYNCRT_ORIGIN_COMPILED);
    write_text(w->tree, "inc.h", "#define SCALE 3.0f\n"); /* same size, other content */
    remote_result b = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(b.origin, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(b.stats.hits, 0);
    assert_int_equal(b.stats.misses, 1);
    assert_int_equal(b.stats.stores, 1); /* b stored its own: */
    /* a third machine with b's header hits it */
    remote_result c = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(c.origin, ASYNCRT_ORIGIN_REMOTE_CACHE);
    /* and a machine with a's header again does not take b's */
    write_text(w->tree, "inc.h", "#define SCALE 2.0f\n");
    remote_result d = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(d.origin, ASYNCRT_ORIGIN_COMPILED);
}

/* The one value on the server, read or replaced directly. */
static char *only_value(world *w, unsigned char **data, size_t *size)
{
    char **keys;
    size_t n = redis_keys(&w->server, "asyncrt:v:*", &keys);
    assert_int_equal(n, 1);
    char *name = strdup(keys[0]);
    redis_keys_free(keys, n);
    *data = redis_value_get(&w->server, name, size);
    assert_non_null(*data);
    return name;
}

static void put_value(world *w, const char *name, const void *data, size_t size)
{
    assert_true(redis_value_put(&w->server, name, data, size));
}

/* Refused and counted, compiled instead. */
static void expect_rejected(world *w)
{
    remote_result r = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(r.origin, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(r.stats.rejected, 1);
    assert_int_equal(r.stats.hits, 0);
}

static void test_tampered_values(void **state)
{
    world *w = *state;
    run_fresh(w, w->server.spec, w->key);
    unsigned char *good;
    size_t size;
    char *name = only_value(w, &good, &size);
    unsigned char *bad = malloc(size);
    memcpy(bad, good, size);
    bad[size - 100] ^= 1; /* inside the image */
    put_value(w, name, bad, size);
    expect_rejected(w);
    put_value(w, name, good, size / 2); /* truncated */
    expect_rejected(w);
    put_value(w, name, "not a value at all", 18); /* malformed */
    expect_rejected(w);
    memcpy(bad, good, size);
    memset(bad + 56, 0, 32); /* no MAC */
    put_value(w, name, bad, size);
    expect_rejected(w);
    size_t huge = ((size_t)64 << 20) + 1; /* oversized: not even transferred */
    unsigned char *big = calloc(1, huge);
    memcpy(big, good, size);
    put_value(w, name, big, huge);
    remote_result r = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(r.stats.rejected, 1);
    assert_true(r.stats.bytes_read <= ((uint64_t)64 << 20) + 1);
    put_value(w, name, good, size); /* the untouched value still serves */
    r = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(r.origin, ASYNCRT_ORIGIN_REMOTE_CACHE);
    free(big), free(bad), free(good), free(name);
}

static void test_wrong_key(void **state)
{
    world *w = *state;
    run_fresh(w, w->server.spec, w->key);
    char *other = make_key_file(w->dir, "other.key");
    remote_result r = run_fresh(w, w->server.spec, other);
    assert_int_equal(r.origin, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(r.stats.rejected, 1);
    free(other);
}

/* A fleet with two key files (issue 33): a machine with the other key
 * refuses the value (MAC mismatch), compiles, and leaves the value in
 * place (SET NX: kept, counted); the fleet's next machine still hits it.
 * Before, it stored its own over the value, which the next correctly keyed
 * machine refused and replaced again: each wiped the other's. */
static void test_a_mis_keyed_machine_harms_no_one(void **state)
{
    world *w = *state;
    remote_result a = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(a.stats.stores, 1);
    unsigned char *before, *after;
    size_t before_size, after_size;
    char *name = only_value(w, &before, &before_size);
    char *other = make_key_file(w->dir, "other.key");
    remote_result b = run_fresh(w, w->server.spec, other);
    assert_int_equal(b.origin, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(b.stats.rejected, 1);
    assert_int_equal(b.stats.stores, 0);
    assert_int_equal(b.kept, 1); /* asyncrt-cache stats counts it */
    assert_non_null(strstr(b.stats.state, "last value refused"));
    assert_non_null(strstr(b.stats.state, "MAC mismatch"));
    free(only_value(w, &after, &after_size));
    assert_int_equal(after_size, before_size);
    assert_memory_equal(after, before, before_size); /* untouched */
    remote_result c = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(c.origin, ASYNCRT_ORIGIN_REMOTE_CACHE);
    assert_int_equal(c.stats.rejected, 0);
    free(before), free(after), free(name), free(other);
}

/* The longest prefix (200 characters): whole key names, the value's and the
 * lease's apart. Before, names were cut to 159 bytes: a prefix of 200 gave
 * one name, no ":v:", for every value and lease. */
static void test_a_long_prefix_keeps_whole_names(void **state)
{
    world *w = *state;
    char spec[800], prefix[201], match[220];
    memset(prefix, 'p', 200);
    prefix[200] = '\0';
    snprintf(spec, sizeof spec, "%s|prefix=%s", w->server.spec, prefix);
    remote_result a = run_fresh(w, spec, w->key);
    assert_int_equal(a.stats.stores, 1);
    char **keys;
    snprintf(match, sizeof match, "%s:v:*", prefix);
    assert_int_equal(redis_keys(&w->server, match, &keys), 1);
    assert_int_equal(strlen(keys[0]), 200 + 3 + 64);
    redis_keys_free(keys, 1);
    remote_result b = run_fresh(w, spec, w->key);
    assert_int_equal(b.origin, ASYNCRT_ORIGIN_REMOTE_CACHE);
}

static void test_missing_or_unsafe_key(void **state)
{
    world *w = *state;
    remote_result r = run_fresh(w, w->server.spec, NULL);
    assert_int_equal(r.set_status, ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(r.set_message, "no HMAC key"));
    assert_non_null(strstr(r.set_message, "ASYNCRT_REMOTE_CACHE_KEY_FILE"));
    assert_int_equal(r.origin, ASYNCRT_ORIGIN_COMPILED); /* compiles on, without the remote */
    assert_false(r.stats.enabled);
    char **keys;
    assert_int_equal(redis_keys(&w->server, "*", &keys), 0);
    redis_keys_free(keys, 0);

    assert_int_equal(chmod(w->key, 0640), 0);
    r = run_fresh(w, w->server.spec, w->key);
    assert_int_equal(r.set_status, ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(r.set_message, "mode 0640"));
    assert_int_equal(chmod(w->key, 0600), 0);

    char link[400];
    snprintf(link, sizeof link, "%s/link.key", w->dir);
    assert_int_equal(symlink(w->key, link), 0);
    r = run_fresh(w, w->server.spec, link);
    assert_int_equal(r.set_status, ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(r.set_message, "symbolic link"));

    write_text(w->dir, "short.key", "tiny");
    snprintf(link, sizeof link, "%s/short.key", w->dir);
    chmod(link, 0600);
    r = run_fresh(w, w->server.spec, link);
    assert_int_equal(r.set_status, ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(r.set_message, "at least 16"));
}

static void test_read_only(void **state)
{
    world *w = *state;
    char spec[500];
    snprintf(spec, sizeof spec, "%s|read-only", w->server.spec);
    remote_result a = run_fresh(w, spec, w->key);
    assert_int_equal(a.origin, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(a.stats.stores, 0);
    char **keys;
    assert_int_equal(redis_keys(&w->server, "*", &keys), 0); /* neither value nor lease */
    redis_keys_free(keys, 0);
    run_fresh(w, w->server.spec, w->key); /* a writer fills it */
    remote_result c = run_fresh(w, spec, w->key);
    assert_int_equal(c.origin, ASYNCRT_ORIGIN_REMOTE_CACHE);
}

static void test_password_never_shown(void **state)
{
    world *w = *state;
    /* port 1: nothing listens; the failure is logged and kept in the state */
    remote_result r = run_fresh(w, "redis://alice:s3cret@127.0.0.1:1/2", w->key);
    assert_int_equal(r.set_status, ASYNCRT_SUCCESS);
    assert_int_equal(r.origin, ASYNCRT_ORIGIN_COMPILED);
    assert_false(r.stats.enabled);
    assert_int_equal(r.stats.errors, 1);
    assert_non_null(strstr(r.stats.state, "redis://alice:****@127.0.0.1:1/2"));
    assert_null(strstr(r.stats.state, "s3cret"));
    r = run_fresh(w, "redis://alice:s3cret@127.0.0.1:1/x", w->key);
    assert_int_equal(r.set_status, ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_null(strstr(r.set_message, "s3cret"));
}

int main(void)
{
    if (!redis_server_program()) {
        printf("SKIP: no redis-server (Debian: redis-server; tools/setup.sh installs it)\n");
        return ASYNCRT_TEST_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hit_across_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_edited_between_machines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tampered_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_mis_keyed_machine_harms_no_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_long_prefix_keeps_whole_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_or_unsafe_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_password_never_shown, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
