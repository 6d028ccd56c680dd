/* SHA-256 on the CPU's SHA extensions (runtime/src/sha256_ni.c) against the
 * standard's test vectors, RFC 4231's HMAC vector, and the portable code on
 * random inputs of every length up to 1000 bytes, fed whole and in pieces.
 * Without SHA-NI it checks the portable code alone and says so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "test_support.h"

static void digest(const void *data, size_t size, size_t piece, char hex[65])
{
    asyncrt_sha256 h;
    uint8_t d[32];
    asyncrt__sha256_init(&h);
    for (size_t at = 0; at < size; at += piece)
        asyncrt__sha256_update(&h, (const char *)data + at, size - at < piece ? size - at : piece);
    asyncrt__sha256_final(&h, d);
    asyncrt__sha256_hex(d, hex);
}

static void test_vectors(void **state)
{
    (void)state;
    char hex[65];
    for (int portable = 0; portable < 2; portable++) {
        asyncrt__sha256_portable = portable;
        digest("abc", 3, 3, hex);
        assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        digest("", 0, 1, hex);
        assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        digest(m, strlen(m), 64, hex);
        assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
        char *a = malloc(1000000);
        memset(a, 'a', 1000000);
        digest(a, 1000000, 1000000, hex);
        assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
        free(a);
        uint8_t mac[32];
        char mac_hex[65];
        asyncrt__hmac_sha256((const uint8_t *)"Jefe", 4, "what do ya want for nothing?", 28, mac);
        asyncrt__sha256_hex(mac, mac_hex);
        assert_string_equal(mac_hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }
    asyncrt__sha256_portable = false;
}

static void test_same_as_portable(void **state)
{
    (void)state;
    if (!asyncrt__sha256_ni_usable()) print_message("no SHA extensions on this CPU: the portable code only\n");
    test_seed_random("test_sha256_ni");
    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)test_random_u32();
    for (size_t n = 0; n <= sizeof buf; n++) {
        char fast[65], slow[65], pieces[65];
        size_t piece = 1 + test_random_u32() % 150;
        asyncrt__sha256_portable = false;
        digest(buf, n, n ? n : 1, fast);
        digest(buf, n, piece, pieces);
        asyncrt__sha256_portable = true;
        digest(buf, n, n ? n : 1, slow);
        asyncrt__sha256_portable = false;
        if (strcmp(fast, slow) || strcmp(pieces, slow)) fail_msg("length %zu (pieces of %zu) differs", n, piece);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_vectors), cmocka_unit_test(test_same_as_portable)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
