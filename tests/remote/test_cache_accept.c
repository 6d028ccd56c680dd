/* The cache's reader (cache.h's accept), at the facade: each entry a tier
 * gives is handed to the caller's reader once; one it refuses is dropped
 * from the tiers it reached and the lookup goes on (memory, then the disk,
 * then the remote); a refused remote value is a miss, its hit and its local
 * store taken back and the remote told. Payloads here are plain text, read
 * by a reader of the test's own: the cache never looks inside them. Against
 * a redis-server of the test's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "context.h"
#include "redis_fixture.h"
#include "test_support.h"

typedef struct world {
    redis_server server;
    char *dir; /* key file, caches */
    char *key; /* the fleet's key file */
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    redis_world_open(&w->server, &w->dir, &w->key, "asyncrt-accept");
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    redis_world_close(&w->server, w->dir, w->key);
    free(w);
    return 0;
}

/* A context whose cache is w->dir/NAME, with the fleet's remote or none. */
static asyncrt_context *machine(world *w, const char *name, bool remote)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", w->dir, name);
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_int_equal(asyncrt_context_set_cache_dir(ctx, dir), ASYNCRT_SUCCESS);
    asyncrt_status status;
    char why[512];
    if (remote && !asyncrt__cache_set_remote(ctx->cache, w->server.spec, w->key, &status, why, sizeof why))
        fail_msg("remote: %s", why);
    return ctx;
}

/* text under key1, in an entry whose result key is key1 with its first byte
 * `variant` (another compile of the same key1), with no files read. */
static void store(asyncrt_context *ctx, const uint8_t key1[32], uint8_t variant, asyncrt_cache_tiers tiers,
                  const char *text)
{
    asyncrt_dep_set deps = {.cwd = (char *)""};
    memcpy(deps.result_key, key1, 32);
    deps.result_key[0] = variant;
    asyncrt__cache_store(ctx->cache, key1, tiers, &deps, (const unsigned char *)text, strlen(text) + 1, NULL);
}

/* The test's reader: refuses "bad", takes anything else; counts each entry
 * it was handed and the tier that gave it. */
typedef struct reader {
    int calls;
    asyncrt_program_origin from[4];
    char took[32];
} reader;

static bool read_text(const asyncrt_cache_entry *e, void *user, char *why, size_t why_size)
{
    reader *r = user;
    if (r->calls < 4) r->from[r->calls] = e->origin;
    r->calls++;
    if (e->size == 4 && memcmp(e->payload, "bad", 4) == 0) {
        snprintf(why, why_size, "the test's reader refuses \"bad\"");
        return false;
    }
    snprintf(r->took, sizeof r->took, "%.*s", (int)e->size, (const char *)e->payload);
    return true;
}

static void random_key(uint8_t key1[32])
{
    for (int i = 0; i < 32; i++) key1[i] = (uint8_t)test_random_u32();
}

/* Machine a remembers "bad" in memory; machine b, on the same directory,
 * stores "good" as the newest compile: a's lookup hands the memory's entry
 * over, then (it refused) the disk's, each once. */
static void a_refused_entry_goes_on_to_the_next_tier(void **state)
{
    world *w = *state;
    asyncrt_context *a = machine(w, "shared", false), *b = machine(w, "shared", false);
    uint8_t key1[32];
    random_key(key1);
    store(a, key1, 1, ASYNCRT_TIERS_LOCAL, "bad");
    store(b, key1, 2, ASYNCRT_TIERS_LOCAL, "good");
    reader r = {0};
    assert_true(asyncrt__cache_lookup(a->cache, key1, ASYNCRT_TIERS_LOCAL, NULL, read_text, &r));
    assert_int_equal(r.calls, 2);
    assert_int_equal(r.from[0], ASYNCRT_ORIGIN_MEMORY_CACHE);
    assert_int_equal(r.from[1], ASYNCRT_ORIGIN_DISK_CACHE);
    assert_string_equal(r.took, "good");
    asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
    asyncrt__cache_stats(a->cache, &s);
    assert_int_equal(s.memory_hits, 0); /* the refused hit taken back */
    assert_int_equal(s.disk_hits, 1);
    assert_int_equal(s.misses, 0);
    r = (reader){0}; /* the good entry is now a's memory's: one call, a memory hit */
    assert_true(asyncrt__cache_lookup(a->cache, key1, ASYNCRT_TIERS_LOCAL, NULL, read_text, &r));
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.from[0], ASYNCRT_ORIGIN_MEMORY_CACHE);
    asyncrt_context_destroy(a);
    asyncrt_context_destroy(b);
}

/* A value of the fleet, sealed and MAC'd as it should be, around a payload
 * the reader refuses: handed over once, then a miss; nothing stays on this
 * machine's disk, the counts read as if the remote had refused it itself. */
static void a_refused_remote_value_is_a_miss(void **state)
{
    world *w = *state;
    asyncrt_context *writer = machine(w, "writer", true), *here = machine(w, "here", true);
    uint8_t key1[32];
    random_key(key1);
    store(writer, key1, 1, ASYNCRT_TIERS_ALL, "bad");
    reader r = {0};
    assert_false(asyncrt__cache_lookup(here->cache, key1, ASYNCRT_TIERS_ALL, NULL, read_text, &r));
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.from[0], ASYNCRT_ORIGIN_REMOTE_CACHE);
    asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
    asyncrt__cache_stats(here->cache, &s);
    assert_int_equal(s.stores, 0); /* installed on its way, then undone */
    assert_int_equal(s.misses, 1);
    asyncrt_remote_cache_stats rs = ASYNCRT_REMOTE_CACHE_STATS_INIT;
    asyncrt__cache_remote_stats(here->cache, &rs);
    assert_int_equal(rs.hits, 0);
    assert_int_equal(rs.misses, 1);
    if (!strstr(rs.state, "the test's reader refuses")) fail_msg("the remote was not told: %s", rs.state);
    r = (reader){0}; /* this machine's own tiers hold nothing of it */
    assert_false(asyncrt__cache_lookup(here->cache, key1, ASYNCRT_TIERS_LOCAL, NULL, read_text, &r));
    assert_int_equal(r.calls, 0);
    asyncrt_context_destroy(writer);
    asyncrt_context_destroy(here);
}

int main(void)
{
    if (!redis_server_program()) {
        printf("SKIP: no redis-server (Debian: redis-server; tools/setup.sh installs it)\n");
        return ASYNCRT_TEST_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_refused_entry_goes_on_to_the_next_tier, setup, teardown),
        cmocka_unit_test_setup_teardown(a_refused_remote_value_is_a_miss, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
