/* libFuzzer target: the text parsers of the cache's side files (cache.h),
 * which anyone able to write the cache directory could have written: the
 * NVRTC facts memo (asyncrt__nvrtc_memo_parse) and the speculative target
 * hint (asyncrt__speculation_parse).
 *
 * Input: a mode byte (bit 0: the hint, else the memo), then the text (cut at
 * the first NUL, as the side-file reader refuses text holding one). An
 * accepted memo names the fixed NVRTC identity, a version and 1..64 plausible
 * archs; an accepted hint is an arch name that fits and parses again. */
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "nvrtc_facts.h"
#include "speculate.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1) return 0;
    char *text = malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    if (data[0] & 1) {
        char arch[16];
        if (asyncrt__speculation_parse(text, arch, sizeof arch)) {
            asyncrt__arch parsed;
            if (strlen(arch) >= sizeof arch || !asyncrt__arch_parse(arch, &parsed)) abort();
        }
    } else {
        asyncrt_nvrtc_identity id = {.path = "/usr/local/cuda/lib64/libnvrtc.so.13", .size = 123456,
                                     .mtime_ns = 1700000000123456789, .major = 13};
        asyncrt_nvrtc_facts facts;
        if (asyncrt__nvrtc_memo_parse(text, &id, &facts)) {
            if (facts.version < 11000 || facts.arch_count < 1 || facts.arch_count > 64 || !facts.from_memo) abort();
            for (size_t i = 0; i < facts.arch_count; i++)
                if (facts.archs[i] <= 0 || facts.archs[i] > 10000) abort();
        }
    }
    free(text);
    return 0;
}
