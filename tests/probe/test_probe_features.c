/* The feature matrix a device should show, from its attributes: a table of
 * imaginary devices, each with every feature spelled out. */
#include <stdbool.h>
#include <string.h>

#include "test_support.h"

#include "feature_table.h"

typedef struct row {
    int major, minor;
    bool cluster_launch;
    const char *expected; /* one char per probe_feature: 'y' or '-' */
} row;

/*                                    LDGSTS, mbar, tx, bulk, tile, im2col, clusters, mcast, dsmem, 90a, 100a */
static const row table[] = {
    {7, 5, false, "-----------"},
    {8, 0, false, "yy---------"},
    {8, 6, false, "yy---------"},
    {8, 9, false, "yy---------"},
    {9, 0, true, "yyyyyyyyyy-"},
    {9, 0, false, "yyyyyy---y-"}, /* a driver without cluster launch: no cluster features */
    {10, 0, true, "yyyyyyyyy-y"},
    {10, 3, true, "yyyyyyyyy--"}, /* sm_100a code runs only on 10.0 */
    {12, 0, true, "yyyyyyyyy--"},
    {12, 0, false, "yyyyyy-----"},
};

static void test_expected_features(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const row *r = &table[i];
        assert_int_equal(strlen(r->expected), PROBE_FEATURE_COUNT);
        bool got[PROBE_FEATURE_COUNT];
        probe_features_expected(r->major, r->minor, r->cluster_launch, got);
        for (int f = 0; f < PROBE_FEATURE_COUNT; f++)
            if (got[f] != (r->expected[f] == 'y'))
                fail_msg("cc %d.%d cluster_launch=%d: %s is %s, expected %s", r->major, r->minor, r->cluster_launch,
                         probe_feature_get(f)->key, got[f] ? "yes" : "no", r->expected[f] == 'y' ? "yes" : "no");
    }
}

/* Every feature has its names, the arch it needs and a kernel to prove it;
 * keys are unique (they are JSON keys). */
static void test_table_is_complete(void **state)
{
    (void)state;
    for (int f = 0; f < PROBE_FEATURE_COUNT; f++) {
        const probe_feature_desc *d = probe_feature_get(f);
        assert_non_null(d);
        assert_non_null(d->key);
        assert_non_null(d->label);
        assert_non_null(d->define);
        assert_non_null(d->needs);
        assert_true(strncmp(d->needs, "sm_", 3) == 0);
        for (int g = 0; g < f; g++) assert_string_not_equal(d->key, probe_feature_get(g)->key);
        /* arch-specific features are checked with their 'a' arch */
        if (d->needs[strlen(d->needs) - 1] == 'a') assert_string_equal(d->compile_arch, d->needs);
    }
    assert_null(probe_feature_get(PROBE_FEATURE_COUNT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expected_features),
        cmocka_unit_test(test_table_is_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
