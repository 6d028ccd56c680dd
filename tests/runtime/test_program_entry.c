/* The on-disk cache entry: a damaged entry is refused, never half-read. */
#include <stdlib.h>
#include <string.h>

#include "base_internal.h"    /* SHA-256 */
#include "compile_internal.h" /* the program's entry form */
#include "test_support.h"

static asyncrt_program *make_program(void)
{
    asyncrt_program *p = calloc(1, sizeof *p);
    assert_non_null(p);
    for (int i = 0; i < 32; i++) p->key[i] = (uint8_t)test_random_u32();
    strcpy(p->arch, "sm_90");
    p->log = strdup("warning: something");
    p->image_size = 1000 + test_random_u32() % 1000;
    p->image = malloc(p->image_size);
    for (size_t i = 0; i < p->image_size; i++) p->image[i] = (unsigned char)test_random_u32();
    p->name_count = 2;
    p->expressions = calloc(2, sizeof(char *));
    p->lowered = calloc(2, sizeof(char *));
    p->expressions[0] = strdup("scale<float>");
    p->lowered[0] = strdup("_Z5scaleIfEvPT_S0_");
    p->expressions[1] = strdup("scale<double>");
    p->lowered[1] = strdup("_Z5scaleIdEvPT_S0_");
    p->source_name = strdup("scale.cu");
    p->options = strdup("-std=c++17 -default-device -DN=4");
    return p;
}

static void round_trip_keeps_everything(void **state)
{
    (void)state;
    asyncrt_program *p = make_program();
    size_t size;
    unsigned char *entry = asyncrt__program_encode(p, &size);
    assert_non_null(entry);
    asyncrt_program *q;
    char why[256];
    assert_int_equal(asyncrt__program_decode(entry, size, p->key, &q, why, sizeof why), ASYNCRT_SUCCESS);
    assert_string_equal(q->arch, "sm_90");
    assert_string_equal(q->log, p->log);
    assert_int_equal(q->image_size, p->image_size);
    assert_memory_equal(q->image, p->image, p->image_size);
    assert_string_equal(asyncrt_program_lowered_name(q, "scale<double>"), "_Z5scaleIdEvPT_S0_");
    assert_null(asyncrt_program_lowered_name(q, "scale<int>"));
    assert_int_equal(asyncrt_program_origin_of(q), ASYNCRT_ORIGIN_DISK_CACHE);
    assert_string_equal(q->source_name, "scale.cu");
    assert_string_equal(q->options, "-std=c++17 -default-device -DN=4");
    asyncrt_program_destroy(q);
    free(entry);
    asyncrt_program_destroy(p);
}

/* Entries written before the source name and options were recorded end
 * after the image: they still read, with the description unknown. */
static void an_entry_without_its_description_still_reads(void **state)
{
    (void)state;
    asyncrt_program *p = make_program();
    size_t described_size, size;
    unsigned char *described = asyncrt__program_encode(p, &described_size);
    free(p->source_name);
    free(p->options);
    p->source_name = p->options = NULL;
    unsigned char *entry = asyncrt__program_encode(p, &size);
    /* the old layout: the two length-prefixed strings are all that differs */
    assert_int_equal(described_size - size, 8 + strlen("scale.cu") + 8 + strlen("-std=c++17 -default-device -DN=4"));
    asyncrt_program *q = NULL;
    char why[256];
    assert_int_equal(asyncrt__program_decode(entry, size, p->key, &q, why, sizeof why), ASYNCRT_SUCCESS);
    assert_null(q->source_name);
    assert_null(q->options);
    assert_memory_equal(q->image, p->image, p->image_size);
    asyncrt_program_destroy(q);
    free(entry);
    free(described);
    asyncrt_program_destroy(p);
}

static void every_truncation_is_refused(void **state)
{
    (void)state;
    asyncrt_program *p = make_program();
    size_t size;
    unsigned char *entry = asyncrt__program_encode(p, &size);
    for (size_t cut = 0; cut < size; cut++) {
        asyncrt_program *q = NULL;
        char why[256];
        if (asyncrt__program_decode(entry, cut, p->key, &q, why, sizeof why) == ASYNCRT_SUCCESS)
            fail_msg("an entry cut to %zu of %zu bytes was accepted", cut, size);
        assert_null(q);
    }
    free(entry);
    asyncrt_program_destroy(p);
}

static void every_flipped_byte_is_refused(void **state)
{
    (void)state;
    asyncrt_program *p = make_program();
    size_t size;
    unsigned char *entry = asyncrt__program_encode(p, &size);
    for (size_t i = 0; i < size; i++) {
        entry[i] ^= 0x40;
        asyncrt_program *q = NULL;
        char why[256];
        if (asyncrt__program_decode(entry, size, p->key, &q, why, sizeof why) == ASYNCRT_SUCCESS)
            fail_msg("byte %zu of %zu flipped and the entry was accepted", i, size);
        entry[i] ^= 0x40;
    }
    free(entry);
    asyncrt_program_destroy(p);
}

static void entry_under_another_key_is_refused(void **state)
{
    (void)state;
    asyncrt_program *p = make_program();
    size_t size;
    unsigned char *entry = asyncrt__program_encode(p, &size);
    uint8_t other[32];
    memcpy(other, p->key, 32);
    other[31] ^= 1;
    asyncrt_program *q = NULL;
    char why[256];
    assert_int_not_equal(asyncrt__program_decode(entry, size, other, &q, why, sizeof why), ASYNCRT_SUCCESS);
    assert_non_null(strstr(why, "another key"));
    /* Extra bytes after a valid entry are damage too. */
    unsigned char *longer = malloc(size + 1);
    memcpy(longer, entry, size);
    longer[size] = 0;
    assert_int_not_equal(asyncrt__program_decode(longer, size + 1, p->key, &q, why, sizeof why), ASYNCRT_SUCCESS);
    free(longer);
    free(entry);
    asyncrt_program_destroy(p);
}

static void sha256_matches_known_vectors(void **state)
{
    (void)state;
    const struct {
        const char *in;
        const char *hex;
    } v[] = {{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
             {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
             {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"}};
    for (size_t i = 0; i < 3; i++) {
        asyncrt_sha256 h;
        uint8_t d[32];
        char hex[65];
        asyncrt__sha256_init(&h);
        /* byte at a time, to cross block boundaries the slow way too */
        for (const char *c = v[i].in; *c; c++) asyncrt__sha256_update(&h, c, 1);
        asyncrt__sha256_final(&h, d);
        asyncrt__sha256_hex(d, hex);
        assert_string_equal(hex, v[i].hex);
    }
}

int main(void)
{
    test_seed_random("test_program_entry");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_keeps_everything),
        cmocka_unit_test(an_entry_without_its_description_still_reads),
        cmocka_unit_test(every_truncation_is_refused),
        cmocka_unit_test(every_flipped_byte_is_refused),
        cmocka_unit_test(entry_under_another_key_is_refused),
        cmocka_unit_test(sha256_matches_known_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
