/* asyncrt_link_*: several programs and device libraries into one image with
 * nvJitLink, behind the program cache (link.h says what; link_jit.c runs
 * nvJitLink, link_worker.c runs it in the compile worker's process,
 * link_input.c reads what an input is). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "target.h"
#include "asyncrt/link.h"
#include "cache.h"
#include "codec.h"
#include "cache_key.h"
#include "safe_io.h"
#include "context.h"
#include "key_record.h"
#include "link_input.h"
#include "link_internal.h"
#include "link_jit.h"
#include "link_worker.h"
#include "nvrtc_facts.h"
#include "nvtx.h"
#include "program.h"
#include "progress.h"
#include "sha256.h"
#include "string_list.h"
#include "worker_process.h"

/* A copy of s onto a; false (a as it was) when out of memory. */
static bool push(asyncrt_string_list *a, const char *s)
{
    a->failed = false; /* a push that failed before leaves the list usable */
    asyncrt__list_push(a, strdup(s));
    return !a->failed;
}

static asyncrt_status link_create(asyncrt_context *ctx, const char *arch, asyncrt_link **out)
{
    *out = NULL;
    bool is_auto = !arch || strcmp(arch, "auto") == 0;
    if (is_auto) ASYNCRT_TRY(asyncrt__wait_device(ctx));
    asyncrt__arch target;
    char why[2048] = "";
    ASYNCRT_TRY(asyncrt__arch_resolve_why(ctx, arch, &target, why, sizeof why));
    bool was_ptx = target.ptx;
    if (target.ptx && !is_auto)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "link arch %s: a link makes a CUBIN; name sm_%d (or sm_%da) instead", arch,
                             target.number, target.number);
    target.ptx = false; /* auto chose PTX (NVRTC does not know the device): nvJitLink still makes a CUBIN */
    asyncrt_link *l = calloc(1, sizeof *l);
    if (!l) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    l->ctx = ctx;
    l->arch = target;
    asyncrt__arch_format(&target, l->arch_name, sizeof l->arch_name);
    l->arch_why = was_ptx ? asyncrt__format("%s; a link makes a CUBIN: %s", why, l->arch_name) : strdup(why);
    if (!l->arch_why) {
        free(l);
        return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    *out = l;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_link_create(asyncrt_context *ctx, const char *arch, asyncrt_link **out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, link_create(ctx, arch, out));
}

void asyncrt_link_destroy(asyncrt_link *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->count; i++) {
        free(l->inputs[i].name);
        free(l->inputs[i].data);
    }
    free(l->inputs);
    free(l->arch_why);
    asyncrt__list_free(&l->options);
    asyncrt__list_free(&l->expressions);
    asyncrt__list_free(&l->lowered);
    free(l);
}

/* Every input for the link's SM: what the bytes say they were built for. */
static asyncrt_status check_arch(asyncrt_link *l, int kind, const void *data, size_t size, const char *name)
{
    int archs[32];
    size_t n = asyncrt__link_archs(kind, data, size, archs, 32);
    for (size_t i = 0; i < n; i++)
        if (archs[i] == l->arch.number) return ASYNCRT_SUCCESS;
    if (!n) return ASYNCRT_SUCCESS; /* it does not say: nvJitLink picks, or refuses */
    char list[256] = "";
    for (size_t i = 0, used = 0; i < n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%ssm_%d", i ? ", " : "", archs[i]);
    char members[512] = ""; /* a library: which member says which arch */
    if (kind == ASYNCRT_JIT_LIBRARY) asyncrt__link_describe_members(data, size, members, sizeof members);
    return asyncrt__fail(l->ctx, ASYNCRT_ERROR_UNSUPPORTED_ARCH,
                         "link input %s (%s) is built for %s%s%s%s, this link for %s: every input must be built for "
                         "the link's target (recompile it for %s)", name, asyncrt__link_kind_name(kind), list,
                         members[0] ? " (members: " : "", members, members[0] ? ")" : "", l->arch_name, l->arch_name);
}

/* Takes ownership of data (freed on failure too). */
static asyncrt_status add(asyncrt_link *l, int kind, unsigned char *data, size_t size, const char *name)
{
    asyncrt_context *ctx = l->ctx;
    int sniffed = asyncrt__link_sniff(data, size);
    asyncrt_status s = ASYNCRT_SUCCESS;
    if (kind == ASYNCRT_LINK_ANY && !sniffed)
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                          "link input %s: not a CUBIN, PTX, LTO-IR, fatbin, host object or library (%zu bytes)",
                          name, size);
    else if (kind < ASYNCRT_LINK_ANY || kind > ASYNCRT_LINK_LIBRARY)
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "link input %s: kind %d is not an asyncrt_link_input",
                          name, kind);
    else if (kind != ASYNCRT_LINK_ANY && sniffed && sniffed != kind)
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "link input %s was given as %s but its bytes are %s",
                          name, asyncrt__link_kind_name(kind), asyncrt__link_kind_name(sniffed));
    if (kind == ASYNCRT_LINK_ANY) kind = sniffed;
    if (s == ASYNCRT_SUCCESS) s = check_arch(l, kind, data, size, name);
    link_input in = {kind, false, strdup(name), data, size, {0}};
    if (s == ASYNCRT_SUCCESS && l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        link_input *grown = realloc(l->inputs, cap * sizeof *grown);
        if (grown) l->inputs = grown, l->cap = cap;
    }
    if (s == ASYNCRT_SUCCESS && (!in.name || l->count == l->cap))
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    if (s != ASYNCRT_SUCCESS) {
        free(in.name);
        free(data);
        return s;
    }
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    asyncrt__sha256_update(&h, data, size);
    asyncrt__sha256_final(&h, in.sha);
    l->inputs[l->count++] = in;
    return ASYNCRT_SUCCESS;
}

static asyncrt_status link_add_data(asyncrt_link *l, const void *data, size_t size, asyncrt_link_input kind,
                                    const char *name)
{
    if (!data || !size) return asyncrt__fail(l->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "link input %s is empty",
                                             name ? name : "(unnamed)");
    unsigned char *copy = (unsigned char *)asyncrt__dup_bytes(data, size);
    if (!copy) return asyncrt__fail(l->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    return add(l, (int)kind, copy, size, name && *name ? name : "data");
}

asyncrt_status asyncrt_link_add_data(asyncrt_link *l, const void *data, size_t size, asyncrt_link_input kind,
                                     const char *name)
{
    asyncrt__enter(l->ctx);
    return asyncrt__leave(l->ctx, link_add_data(l, data, size, kind, name));
}

static asyncrt_status link_add_file(asyncrt_link *l, const char *path, asyncrt_link_input kind)
{
    if (!path) return asyncrt__fail(l->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "link input path is NULL");
    char why[512] = "";
    size_t size = 0;
    unsigned char *data = asyncrt__file_read(AT_FDCWD, path, ASYNCRT_FILE_MAX, false, &size, why, sizeof why);
    if (!data)
        return asyncrt__fail(l->ctx, ASYNCRT_ERROR_IO, "link input %s: %s", path, why[0] ? why : "no such file");
    /* A NUL after the bytes, as add_data's copy has: nvJitLink reads PTX's
     * size + 1 bytes (its terminator), past an exact-size buffer. */
    unsigned char *padded = realloc(data, size + 1);
    if (!padded) {
        free(data);
        return asyncrt__fail(l->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory reading link input %s", path);
    }
    padded[size] = '\0';
    return add(l, (int)kind, padded, size, path);
}

asyncrt_status asyncrt_link_add_file(asyncrt_link *l, const char *path, asyncrt_link_input kind)
{
    asyncrt__enter(l->ctx);
    return asyncrt__leave(l->ctx, link_add_file(l, path, kind));
}

static asyncrt_status link_add_program(asyncrt_link *l, const asyncrt_program *p)
{
    if (!p) return asyncrt__fail(l->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "program is NULL");
    const char *name = p->source_name && *p->source_name ? p->source_name : "a program";
    asyncrt__arch arch;
    if (asyncrt__arch_parse(p->arch, &arch) && arch.number != l->arch.number)
        return asyncrt__fail(l->ctx, ASYNCRT_ERROR_UNSUPPORTED_ARCH,
                             "link input %s is compiled for %s, this link for %s: every input must be built for the "
                             "link's target", name, p->arch, l->arch_name);
    int sniffed = asyncrt__link_sniff(p->image, p->image_size);
    if (sniffed == ASYNCRT_JIT_CUBIN && !asyncrt__link_relocatable(p->image, p->image_size))
        return asyncrt__fail(l->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "link input %s is whole-program code: compile it with -rdc=true (or -dlto for LTO)", name);
    size_t base = l->expressions.count;
    bool ok = true;
    for (size_t i = 0; ok && i < p->name_count; i++)
        ok = push(&l->expressions, p->expressions[i]) && push(&l->lowered, p->lowered[i]);
    asyncrt_status s = ok ? asyncrt_link_add_data(l, p->image, p->image_size, ASYNCRT_LINK_ANY, name)
                          : asyncrt__fail(l->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    if (s == ASYNCRT_SUCCESS) l->inputs[l->count - 1].from_nvrtc = true;
    if (s != ASYNCRT_SUCCESS) { /* as if it had not been added */
        while (l->expressions.count > base) free(l->expressions.items[--l->expressions.count]);
        while (l->lowered.count > base) free(l->lowered.items[--l->lowered.count]);
    }
    return s;
}

asyncrt_status asyncrt_link_add_program(asyncrt_link *l, const asyncrt_program *p)
{
    asyncrt__enter(l->ctx);
    return asyncrt__leave(l->ctx, link_add_program(l, p));
}

static asyncrt_status link_add_option(asyncrt_link *l, const char *option)
{
    if (!option || !*option) return asyncrt__fail(l->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "link option is empty");
    if (strncmp(option, "-arch", 5) == 0)
        return asyncrt__fail(l->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "link option %s: the arch is the link's own (asyncrt_link_create)", option);
    return push(&l->options, option) ? ASYNCRT_SUCCESS
                                     : asyncrt__fail(l->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
}

asyncrt_status asyncrt_link_add_option(asyncrt_link *l, const char *option)
{
    asyncrt__enter(l->ctx);
    return asyncrt__leave(l->ctx, link_add_option(l, option));
}

/* ---- before linking: duplicates and extern __shared__ ------------------- */

typedef struct symbol {
    const char *name;
    size_t input;
} symbol;

typedef struct symbols {
    symbol *defined;
    size_t count, cap;
    size_t input;
    bool from_nvrtc;                /* this input is NVRTC's */
    int kept;                       /* NVRTC's relocatable code keeps __align__ (link_jit.h); -1: not asked yet */
    asyncrt_context *ctx;
    asyncrt_string_list shared;     /* "NAME (input)" of extern __shared__ arrays */
    bool failed;
    const char *input_name;
} symbols;

static void collect(const char *name, bool shared, void *arg)
{
    symbols *s = arg;
    if (shared && s->from_nvrtc && s->kept < 0) { /* asked only where it matters: it may open NVRTC */
        asyncrt_nvrtc_facts nvrtc;
        int version = asyncrt__nvrtc_facts_get(s->ctx, &nvrtc, NULL, 0) == ASYNCRT_SUCCESS ? nvrtc.version : 0;
        s->kept = asyncrt__jitlink_keeps_extern_shared_align(version);
    }
    if (shared && s->from_nvrtc && s->kept > 0) return;
    if (shared) {
        char *entry = asyncrt__format("%s (%s)", name, s->input_name);
        s->failed |= !entry || !push(&s->shared, entry);
        free(entry);
        return;
    }
    if (s->count == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        symbol *grown = realloc(s->defined, cap * sizeof *grown);
        if (!grown) {
            s->failed = true;
            return;
        }
        s->defined = grown;
        s->cap = cap;
    }
    s->defined[s->count++] = (symbol){name, s->input};
}

static int by_name(const void *a, const void *b)
{
    const symbol *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->input > y->input) - (x->input < y->input);
}

static bool option_given(const asyncrt_link *l, const char *option)
{
    for (size_t i = 0; i < l->options.count; i++)
        if (strcmp(l->options.items[i], option) == 0) return true;
    return false;
}

/* nvJitLink 13.0 prints "Multiple definition of X" for two CUBINs defining
 * X, yet links (the first wins): asyncrt refuses it before. Also notes the
 * extern __shared__ arrays a link without -lto may leave 16-byte aligned
 * (all but those NVRTC and nvJitLink 13.1 or newer keep, link_jit.h). */
static asyncrt_status check_symbols(asyncrt_link *l, char **note)
{
    symbols s = {.kept = -1, .ctx = l->ctx};
    *note = NULL;
    for (size_t i = 0; i < l->count && !s.failed; i++) {
        if (l->inputs[i].kind != ASYNCRT_JIT_CUBIN) continue;
        s.input = i;
        s.input_name = l->inputs[i].name;
        s.from_nvrtc = l->inputs[i].from_nvrtc;
        asyncrt__link_symbols(l->inputs[i].data, l->inputs[i].size, collect, &s);
    }
    asyncrt_status status = s.failed ? asyncrt__fail(l->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory")
                                     : ASYNCRT_SUCCESS;
    if (status == ASYNCRT_SUCCESS && s.count) qsort(s.defined, s.count, sizeof *s.defined, by_name);
    for (size_t i = 1; status == ASYNCRT_SUCCESS && i < s.count; i++)
        if (strcmp(s.defined[i].name, s.defined[i - 1].name) == 0)
            status = asyncrt__fail(l->ctx, ASYNCRT_ERROR_COMPILE,
                                   "link for %s failed: duplicate symbol '%s', defined in %s and in %s", l->arch_name,
                                   s.defined[i].name, l->inputs[s.defined[i - 1].input].name,
                                   l->inputs[s.defined[i].input].name);
    if (status == ASYNCRT_SUCCESS && s.shared.count && !option_given(l, "-lto")) {
        size_t size = 1;
        for (size_t i = 0; i < s.shared.count; i++) size += strlen(s.shared.items[i]) + 2;
        char *list = calloc(1, size);
        for (size_t i = 0; list && i < s.shared.count; i++)
            strcat(strcat(list, i ? ", " : ""), s.shared.items[i]);
        *note = list ? asyncrt__format("note: extern __shared__ %s: without -lto, dynamic shared memory is aligned "
                                       "only as the kernel's static __shared__ variables are (16 bytes at least), "
                                       "whatever its __align__ (relocatable code does not keep it, unless both NVRTC "
                                       "and nvJitLink are 13.1 or newer); link with -lto where more is needed\n",
                                       list)
                     : NULL;
        free(list);
    }
    free(s.defined);
    asyncrt__list_free(&s.shared);
    return status;
}

/* ---- the key and the run ----------------------------------------------- */

/* LTO-IR wants an nvJitLink at least as new as the NVRTC that made it:
 * said before nvJitLink is called, with both versions (link_jit.h). */
static asyncrt_status check_lto_versions(asyncrt_link *l)
{
    char inputs[512] = "";
    for (size_t i = 0, used = 0; i < l->count && used < sizeof inputs; i++)
        if (l->inputs[i].kind == ASYNCRT_JIT_LTOIR)
            used += (size_t)snprintf(inputs + used, sizeof inputs - used, "%s%s", used ? ", " : "", l->inputs[i].name);
    asyncrt_nvrtc_facts nvrtc;
    if (!inputs[0] || asyncrt__nvrtc_facts_get(l->ctx, &nvrtc, NULL, 0) != ASYNCRT_SUCCESS) return ASYNCRT_SUCCESS;
    char msg[1536];
    asyncrt_status s = asyncrt__jitlink_check_lto(nvrtc.version, inputs, msg, sizeof msg);
    return s == ASYNCRT_SUCCESS ? s : asyncrt__fail(l->ctx, s, "link for %s: %s", l->arch_name, msg);
}

/* In the worker's process when there is one (NVRTC crashed after
 * nvJitLink's LTO in a process: docs/platform.md), else here. */
static asyncrt_status run_link(asyncrt_link *l, unsigned char **image, size_t *size, char **log)
{
    asyncrt_context *ctx = l->ctx;
    asyncrt_link_item *items = calloc(l->count + 1, sizeof *items);
    const char **options = calloc(l->options.count + 2, sizeof *options);
    char *arch = asyncrt__format("-arch=%s", l->arch_name);
    if (!items || !options || !arch) {
        free(items), free(options), free(arch);
        *log = NULL;
        return ASYNCRT_ERROR_OUT_OF_MEMORY;
    }
    options[0] = arch;
    for (size_t i = 0; i < l->options.count; i++) options[i + 1] = l->options.items[i];
    for (size_t i = 0; i < l->count; i++)
        items[i] = (asyncrt_link_item){l->inputs[i].kind, l->inputs[i].name, l->inputs[i].data, l->inputs[i].size};
    char worker[4096], why[4400];
    asyncrt_status found = asyncrt__worker_find(ctx->settings.compile_worker, worker, sizeof worker, why, sizeof why);
    asyncrt_status s = ASYNCRT_ERROR_IO;
    if (found == ASYNCRT_SUCCESS) {
        char *message = NULL;
        s = asyncrt__link_in_worker(worker, options, l->options.count + 1, items, l->count, image, size, log, &message);
        if (s == ASYNCRT_ERROR_IO)
            asyncrt__log(ctx, 1, "warning: the link worker %s failed (%s); linking in this process", worker,
                         message ? message : "?");
        free(message);
    } else {
        asyncrt__log(ctx, found == ASYNCRT_ERROR_IO ? 1 : 2, "linking in this process: %s", why);
    }
    if (s == ASYNCRT_ERROR_IO)
        s = asyncrt__jitlink_run(options, l->options.count + 1, items, l->count, image, size, log);
    free(items);
    free(options);
    free(arch);
    return s;
}

/* The linked program: image, log, the programs' names; described for asyncrt-cache list. */
static asyncrt_program *make_program(const asyncrt_link *l, const uint8_t result_key[32], unsigned char *image,
                                     size_t size, char *log)
{
    asyncrt_program *p = calloc(1, sizeof *p);
    if (!p) {
        free(image), free(log);
        return NULL;
    }
    memcpy(p->key, result_key, 32);
    snprintf(p->arch, sizeof p->arch, "%s", l->arch_name);
    p->arch_reason = strdup(l->arch_why); /* NULL when out of memory: the reason is then "" */
    p->image = image;
    p->image_size = size;
    p->log = log;
    p->origin = ASYNCRT_ORIGIN_COMPILED;
    p->expressions = calloc(l->expressions.count + 1, sizeof(char *));
    p->lowered = calloc(l->expressions.count + 1, sizeof(char *));
    bool ok = p->expressions && p->lowered && image && log;
    for (size_t i = 0; ok && i < l->expressions.count; i++, p->name_count++) {
        p->expressions[i] = strdup(l->expressions.items[i]);
        p->lowered[i] = strdup(l->lowered.items[i]);
        ok = p->expressions[i] && p->lowered[i];
        if (!ok) p->name_count++;
    }
    p->source_name = ok ? asyncrt__link_name(l) : NULL;
    size_t text = 1;
    for (size_t i = 0; i < l->options.count; i++) text += strlen(l->options.items[i]) + 1;
    p->options = ok ? calloc(1, text) : NULL;
    for (size_t i = 0; p->options && i < l->options.count; i++)
        strcat(strcat(p->options, i ? " " : ""), l->options.items[i]);
    if (!p->source_name || !p->options) {
        asyncrt_program_destroy(p);
        return NULL;
    }
    return p;
}

asyncrt_status asyncrt_link_set_progress(asyncrt_link *l, asyncrt_progress_fn fn, void *user)
{
    if (!l) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    l->progress = fn;
    l->progress_user = user;
    return ASYNCRT_SUCCESS;
}

/* Tells the callback the link's next phase, naming the inputs ("a.cu b.cu ..."). */
static void tell(const asyncrt_link *l, asyncrt_progress_phase phase)
{
    if (!l->progress) return;
    char names[160] = "";
    for (size_t i = 0, used = 0; i < l->count && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? " " : "", l->inputs[i].name);
    if (strlen(names) == sizeof names - 1) memcpy(names + sizeof names - 4, "...", 4);
    asyncrt__progress(l->progress, l->progress_user, phase, names, l->arch_name, -1);
}

static asyncrt_status link_complete(asyncrt_link *l, asyncrt_program **out)
{
    asyncrt_context *ctx = l->ctx;
    *out = NULL;
    if (!l->count) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "the link has no inputs");
    char *note = NULL;
    ASYNCRT_TRY(check_symbols(l, &note));
    uint8_t key[32], result_key[32];
    asyncrt_string_list record = {0}; /* the key's inputs by name: what explains a later miss */
    asyncrt__link_key(l, key, &record);
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    asyncrt__key_str(&h, "link result");
    asyncrt__sha256_update(&h, key, 32);
    asyncrt__sha256_final(&h, result_key);
    double start = asyncrt__now_ms();
    asyncrt_cache_claim claim = {0};
    tell(l, ASYNCRT_PROGRESS_CACHE_LOOKUP);
    if (asyncrt__cache_lookup(ctx->cache, key, ASYNCRT_TIERS_LOCAL, &claim, asyncrt__program_accept, out)) {
        free((*out)->arch_reason); /* not in the cache's entry: this link's */
        (*out)->arch_reason = strdup(l->arch_why);
        asyncrt__log(ctx, 2, "link for %s: %s cache hit, no nvJitLink call (%.2f ms)", l->arch_name,
                     (*out)->origin == ASYNCRT_ORIGIN_MEMORY_CACHE ? "memory" : "disk", asyncrt__now_ms() - start);
        free(note);
        asyncrt__list_free(&record);
        return ASYNCRT_SUCCESS;
    }
    asyncrt__link_log_miss(l, key, &record);
    if (note) asyncrt__log(ctx, 1, "%s", note);
    unsigned char *image = NULL;
    size_t size = 0;
    char *log = NULL;
    asyncrt_status s = check_lto_versions(l); /* its message is already the context's */
    bool versions_fit = s == ASYNCRT_SUCCESS;
    if (versions_fit) tell(l, ASYNCRT_PROGRESS_LINK);
    if (versions_fit) s = run_link(l, &image, &size, &log);
    if (s == ASYNCRT_SUCCESS && note) { /* the note goes with the program, into its log */
        char *both = asyncrt__format("%s%s", note, log ? log : "");
        free(log);
        log = both;
    }
    asyncrt_program *p = NULL;
    if (s == ASYNCRT_SUCCESS) { /* make_program owns image and log, even when it fails */
        if (!(p = make_program(l, result_key, image, size, log)))
            s = asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
        image = NULL;
        log = NULL;
    } else if (s == ASYNCRT_ERROR_OUT_OF_MEMORY) {
        asyncrt__fail(ctx, s, "out of memory linking for %s", l->arch_name);
    } else if (versions_fit) {
        asyncrt__fail(ctx, s, "link for %s failed: %s", l->arch_name, log ? log : "");
    }
    free(image);
    free(log);
    if (s == ASYNCRT_SUCCESS) {
        asyncrt__log(ctx, 2, "link for %s: nvJitLink made %zu bytes from %zu inputs in %.1f ms", l->arch_name, size,
                     l->count, asyncrt__now_ms() - start);
        asyncrt_dep_set none = {.cwd = "", .count = 0};
        memcpy(none.result_key, result_key, 32);
        size_t payload_size = 0;
        unsigned char *payload = asyncrt__program_payload(p, &payload_size);
        if (payload)
            asyncrt__cache_store(ctx->cache, key, ASYNCRT_TIERS_LOCAL, &none, payload, payload_size, &claim);
        if (payload && asyncrt__cache_enabled(ctx->cache)) /* what a later miss of this link is compared with */
            asyncrt__key_records_save(ctx->cache, p->source_name, key, &record);
        free(payload);
    }
    asyncrt__cache_release(ctx->cache, &claim); /* what the store did not let go */
    free(note);
    asyncrt__list_free(&record);
    *out = p;
    return s;
}

asyncrt_status asyncrt_link_complete(asyncrt_link *l, asyncrt_program **out)
{
    asyncrt__enter(l->ctx);
    asyncrt__range_push(ASYNCRT_RANGE_LINK, "link %s%s (%zu input%s, %s)", l->count ? l->inputs[0].name : "",
                        l->count > 1 ? " and more" : "", l->count, l->count == 1 ? "" : "s", l->arch_name);
    asyncrt_status s = link_complete(l, out);
    asyncrt__range_pop();
    return asyncrt__leave(l->ctx, s);
}
