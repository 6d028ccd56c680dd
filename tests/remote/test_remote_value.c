/* A remote value is bound to its key (issue 33, finding 6): the MAC covers
 * the whole value, header included, so one key's value served under another
 * key (an sm_90 value relabelled for an sm_80 request) fails the MAC itself,
 * before the inner manifest's own key is looked at; and a value of an older
 * format is a clean miss. First on the bytes (remote_value.h), then through
 * a redis-server of the test's own, each "machine" a child process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_manifest.h"
#include "codec.h"
#include "program.h"
#include "redis_fixture.h"
#include "remote_value.h"
#include "test_support.h"

/* ---- the bytes ---------------------------------------------------------- */

static const uint8_t k_mac[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

/* A value for key1 whose program claims `arch` (fill: its keys' bytes). */
static unsigned char *value_for(const char *arch, uint8_t fill, uint8_t key1[32], size_t *size)
{
    static unsigned char image[] = "// a PTX image\n";
    asyncrt_program p = {.image = image, .image_size = sizeof image, .log = (char *)""};
    snprintf(p.arch, sizeof p.arch, "%s", arch);
    p.ptx = true;
    asyncrt_dep_set set = {.cwd = (char *)""};
    memset(key1, fill, 32);
    memset(set.result_key, fill + 1, 32);
    memcpy(p.key, set.result_key, 32);
    asyncrt_manifest m = {&set, 1};
    size_t mf_size, entry_size;
    unsigned char *mf = asyncrt__manifest_encode(&m, key1, NULL, &mf_size);
    unsigned char *entry = asyncrt__program_encode(&p, &entry_size);
    unsigned char *v = asyncrt__remote_value_wrap(k_mac, key1, mf, mf_size, entry, entry_size, size);
    assert_non_null(v);
    free(mf), free(entry);
    return v;
}

/* The value's program, as the cache's remote tier reads it: the MAC, then
 * the manifest's one set, then the entry under the set's result key. */
static bool decode(const uint8_t key1[32], const unsigned char *v, size_t size, asyncrt_program **p, char *why,
                   size_t why_size)
{
    const unsigned char *mf, *entry;
    size_t mf_size, entry_size;
    asyncrt_manifest m;
    *p = NULL;
    if (!asyncrt__remote_value_unwrap(k_mac, key1, v, size, size, &mf, &mf_size, &entry, &entry_size, why, why_size))
        return false;
    assert_true(asyncrt__manifest_decode(mf, mf_size, key1, NULL, &m, why, why_size));
    assert_int_equal(asyncrt__program_decode(entry, entry_size, m.sets[0].result_key, p, why, why_size),
                     ASYNCRT_SUCCESS);
    asyncrt__manifest_free(&m);
    return true;
}

static void a_value_decodes_under_its_own_key(void **state)
{
    (void)state;
    uint8_t key1[32];
    size_t size;
    unsigned char *v = value_for("sm_90", 0x90, key1, &size);
    asyncrt_program *p;
    char why[256];
    assert_true(decode(key1, v, size, &p, why, sizeof why));
    assert_string_equal(asyncrt_program_arch(p), "sm_90");
    asyncrt_program_destroy(p);
    free(v);
}

/* The attacker's one move without the key: rewrite the header's key1. */
static void a_value_relabelled_for_another_key_fails_its_mac(void **state)
{
    (void)state;
    uint8_t key90[32], key80[32];
    size_t size;
    unsigned char *v = value_for("sm_90", 0x90, key90, &size);
    memset(key80, 0x80, sizeof key80);
    memcpy(v + 16, key80, 32); /* the header's key (codec.h's layout) */
    asyncrt_program *p;
    char why[256] = "";
    assert_false(decode(key80, v, size, &p, why, sizeof why));
    assert_null(p);
    /* Refused by the MAC, not by the inner manifest's key (which an older
     * format relied on alone: with that check removed it served sm_90). */
    if (!strstr(why, "MAC mismatch")) fail_msg("refused, but not by the MAC: %s", why);
    free(v);
}

static void a_value_of_an_older_format_is_refused_by_its_format(void **state)
{
    (void)state;
    uint8_t key1[32];
    size_t size;
    unsigned char *v = value_for("sm_90", 0x90, key1, &size);
    uint32_t old = ASYNCRT_VALUE_FORMAT - 1;
    memcpy(v + 8, &old, 4);
    asyncrt_program *p;
    char why[256] = "";
    assert_false(decode(key1, v, size, &p, why, sizeof why));
    if (!strstr(why, "older asyncrt")) fail_msg("not refused for its format: %s", why);
    free(v);
}

/* ---- through a server --------------------------------------------------- */

typedef struct world {
    redis_server server;
    char *dir, *key;
    int caches;
} world;

static int setup(void **state)
{
    if (!redis_server_program()) return 0;
    world *w = calloc(1, sizeof *w);
    redis_world_open(&w->server, &w->dir, &w->key, "asyncrt-value");
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    if (!w) return 0;
    redis_world_close(&w->server, w->dir, w->key);
    free(w);
    return 0;
}

static remote_result compile_on_fresh_machine(world *w, const char *arch)
{
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache%d", w->dir, w->caches++);
    remote_run run = {.cache_dir = cache, .spec = w->server.spec, .key_file = w->key, .source_name = "k.cu",
                      .source = "extern \"C\" __global__ void k(int *x) { *x = 1; }\n", .arch = arch};
    remote_result r = remote_compile(&run);
    assert_true(r.ran);
    assert_int_equal(r.status, ASYNCRT_SUCCESS);
    return r;
}

/* The names of the values on the server; the one not in `except` (or the
 * only one) in *name. */
static void value_name(world *w, const char *except, char *name, size_t size)
{
    char **keys;
    size_t n = redis_keys(&w->server, "asyncrt:v:*", &keys);
    name[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (!except || strcmp(keys[i], except) != 0) snprintf(name, size, "%s", keys[i]);
    redis_keys_free(keys, n);
    assert_true(name[0] != '\0');
}

static unsigned char *get_value(world *w, const char *name, size_t *size)
{
    unsigned char *data = redis_value_get(&w->server, name, size);
    assert_non_null(data);
    return data;
}

static void put_value(world *w, const char *name, const void *data, size_t size)
{
    assert_true(redis_value_put(&w->server, name, data, size));
}

static void an_sm_90_value_served_for_an_sm_80_request_is_refused(void **state)
{
    world *w = *state;
    if (!w) skip();
    char v90[200], v80[200];
    assert_int_equal(compile_on_fresh_machine(w, "sm_90").origin, ASYNCRT_ORIGIN_COMPILED);
    value_name(w, NULL, v90, sizeof v90);
    assert_int_equal(compile_on_fresh_machine(w, "sm_80").origin, ASYNCRT_ORIGIN_COMPILED);
    value_name(w, v90, v80, sizeof v80);
    /* Someone who can write the server but has no key puts the sm_90 value
     * under the sm_80 name, its header's key rewritten to match. */
    size_t size, size80;
    unsigned char *data = get_value(w, v90, &size), *good80 = get_value(w, v80, &size80);
    memcpy(data + 16, good80 + 16, 32);
    put_value(w, v80, data, size);
    remote_result r = compile_on_fresh_machine(w, "sm_80");
    assert_int_equal(r.origin, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(r.stats.rejected, 1);
    assert_int_equal(r.stats.hits, 0);
    assert_int_equal(r.stats.errors, 0); /* a refusal is a miss, not a fault of the server */
    assert_true(r.stats.enabled);
    /* A value of the previous format: refused as cleanly. */
    uint32_t old = ASYNCRT_VALUE_FORMAT - 1;
    memcpy(good80 + 8, &old, 4);
    put_value(w, v80, good80, size80);
    r = compile_on_fresh_machine(w, "sm_80");
    assert_int_equal(r.origin, ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(r.stats.rejected, 1);
    assert_int_equal(r.stats.errors, 0);
    free(data), free(good80);
}

int main(void)
{
    if (!redis_server_program()) printf("note: no redis-server: the tests through a server are skipped\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_value_decodes_under_its_own_key),
        cmocka_unit_test(a_value_relabelled_for_another_key_fails_its_mac),
        cmocka_unit_test(a_value_of_an_older_format_is_refused_by_its_format),
        cmocka_unit_test_setup_teardown(an_sm_90_value_served_for_an_sm_80_request_is_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
