/* libFuzzer target: the PTX prune of compact images (runtime/compile/
 * ptx_prune.h), which scans whatever text NVRTC gave, and the CUBIN reader
 * and proof (image_equal.h), which read two ELF images.
 *
 * Input: a mode byte, then the bytes.
 *   bit 0 clear: the bytes are PTX. Beyond no crash and no sanitizer report:
 *     - a refusal says why and leaves nothing;
 *     - an accepted prune is NUL-terminated text of its size, no longer than
 *       the input plus its placeholders' text; its list is sorted, holds
 *       library names only, one per removed or placeholder definition, and
 *       names the placeholders ($<letter><n>, never a name of the input) of
 *       exactly that many;
 *     - a second prune of the output accepts it, removes nothing and gives
 *       the same bytes (idempotent), and a prune of the input again gives
 *       the same bytes (byte-stable).
 *   bit 0 set: the bytes are an image, compared with itself twice (the
 *     same verdict and reason; a refusal says why) and with itself less its
 *     last byte, in a buffer of exactly that size. */
#include <stdlib.h>
#include <string.h>

#include "image_equal.h"
#include "ptx_prune.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) abort();                                                                                          \
    } while (0)

static void check_list(const char *input, size_t size, const asyncrt_ptx_prune *p)
{
    size_t placeholders = 0;
    bool used[256] = {false}; /* the letters after a '$' in the input */
    for (size_t j = 0; j + 1 < size; j++)
        if (input[j] == '$') used[(unsigned char)input[j + 1]] = true;
    CHECK(p->unreferenced_count == p->removed + p->placeholders);
    for (size_t i = 0; i < p->unreferenced_count; i++) {
        const char *name = p->unreferenced[i], *holder = p->placeholders_of[i];
        CHECK(asyncrt__ptx_library_name(name, strlen(name)));
        CHECK(i == 0 || strcmp(p->unreferenced[i - 1], name) < 0);
        if (!holder) continue;
        placeholders++;
        CHECK(holder[0] == '$' && holder[1] >= 'a' && holder[1] <= 'z' && holder[2] && !used[(unsigned char)holder[1]]);
    }
    CHECK(placeholders == p->placeholders);
}

static void prune(const unsigned char *data, size_t size)
{
    asyncrt_ptx_prune p, again, twice;
    char why[256];
    const char *text = (const char *)data;
    if (!asyncrt__ptx_prune(text, size, &p, why, sizeof why)) {
        CHECK(why[0] && !p.ptx && !p.unreferenced && !p.unreferenced_count);
        return;
    }
    CHECK(p.ptx && strlen(p.ptx) == p.size);
    CHECK(p.size <= size + p.placeholders * 64);
    check_list(text, size, &p);
    CHECK(asyncrt__ptx_prune(p.ptx, p.size, &twice, why, sizeof why));
    CHECK(twice.removed == 0 && twice.placeholders == 0 && twice.size == p.size && !memcmp(twice.ptx, p.ptx, p.size));
    CHECK(asyncrt__ptx_prune(text, size, &again, why, sizeof why));
    CHECK(again.size == p.size && !memcmp(again.ptx, p.ptx, p.size));
    asyncrt__ptx_prune_free(&twice);
    asyncrt__ptx_prune_free(&again);
    asyncrt__ptx_prune_free(&p);
}

static void image(const unsigned char *data, size_t size)
{
    char a[640] = "", b[640] = "";
    bool x = asyncrt__image_equal(data, size, data, size, NULL, NULL, 0, a, sizeof a);
    bool y = asyncrt__image_equal(data, size, data, size, NULL, NULL, 0, b, sizeof b);
    CHECK(x == y && !strcmp(a, b) && (x || a[0]));
    if (size < 2) return;
    unsigned char *less = malloc(size - 1); /* exactly the bytes it may read */
    if (!less) return;
    memcpy(less, data, size - 1);
    x = asyncrt__image_equal(data, size, less, size - 1, NULL, NULL, 0, a, sizeof a);
    CHECK(x || a[0]);
    free(less);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1) return 0;
    if (data[0] & 1)
        image(data + 1, size - 1);
    else
        prune(data + 1, size - 1);
    return 0;
}
