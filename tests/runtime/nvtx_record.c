/* An NVTX injection library for the tests (NVTX_INJECTION64_PATH points at
 * it): it takes over the domain calls asyncrt makes and appends one line per
 * event to $NVTX_RECORD: "push MESSAGE", "pop", "mark MESSAGE", "domain NAME".
 * The protocol is NVTX v3's (nvtxDetail/nvtxInit.h): the library exports
 * InitializeInjectionNvtx2, which gets the CORE2 module's function table and
 * writes its own functions into it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void record(const char *what, const char *text)
{
    const char *path = getenv("NVTX_RECORD");
    if (!path) return;
    pthread_mutex_lock(&g_lock);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%s%s%s\n", what, text ? " " : "", text ? text : "");
        fclose(f);
    }
    pthread_mutex_unlock(&g_lock);
}

static const char *message_of(const nvtxEventAttributes_t *a)
{
    return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?";
}

static int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) { (void)d; record("push", message_of(a)); return 0; }
static int pop(nvtxDomainHandle_t d) { (void)d; record("pop", NULL); return 0; }
static void mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) { (void)d; record("mark", message_of(a)); }
static nvtxDomainHandle_t domain(const char *name)
{
    record("domain", name);
    return (nvtxDomainHandle_t)(void *)0x1;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    const NvtxExportTableCallbacks *callbacks = get_export_table(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) return 0;
    if (size <= NVTX_CBID_CORE2_DomainCreateA) return 0;
    *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)push;
    *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)pop;
    *table[NVTX_CBID_CORE2_DomainMarkEx] = (NvtxFunctionPointer)mark;
    *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)domain;
    return 1;
}
