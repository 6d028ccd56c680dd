/* asyncrt_cache_explanation's cause, text and JSON (explain_report.h). */
#include "explain_report.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "strbuf.h"

typedef asyncrt_strbuf buf;
#define put asyncrt__sb_printf

/* s as a JSON string, or null. */
static void put_json(buf *b, const char *s)
{
    if (!s) {
        put(b, "null");
        return;
    }
    put(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p && !b->failed; p++) {
        if (*p == '"' || *p == '\\') put(b, "\\%c", *p);
        else if (*p < 0x20) put(b, "\\u%04x", *p);
        else put(b, "%c", *p);
    }
    put(b, "\"");
}

static const char *verdict_name(asyncrt_cache_verdict v)
{
    static const char *const names[] = {"hit", "miss", "no-record", "uncacheable", "no-cache"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "?";
}

void asyncrt__explain_report(asyncrt_cache_explanation *out, const char *subject, const char *source_name,
                             const char *arch, const char *remote, const asyncrt_key_diff *d, size_t count,
                             size_t total)
{
    char line[400];
    out->differences = total;
    if (count) {
        asyncrt__key_diff_say(&d[0], line, sizeof line);
        if (total > 1) asyncrt__say(out->cause, sizeof out->cause, "%s (and %zu more difference%s from entry %.12s)",
                                    line, total - 1, total == 2 ? "" : "s", out->nearest);
        else asyncrt__say(out->cause, sizeof out->cause, "%s (the one difference from entry %.12s)", line, out->nearest);
    }
    buf t = {0}, j = {0};
    put(&t, "%s: %s: %s\n", subject, verdict_name(out->verdict), out->cause);
    if (out->key[0]) put(&t, "  key      %s\n", out->key);
    if (out->nearest[0]) put(&t, "  nearest  %s\n", out->nearest);
    for (size_t i = 0; i < count; i++) {
        asyncrt__key_diff_say(&d[i], line, sizeof line);
        put(&t, "  differs  %s\n", line);
        if (d[i].was && d[i].now && (!strcmp(d[i].what, "header") || !strcmp(d[i].what, "dependency") || !strcmp(d[i].what, "input")))
            put(&t, "             was %s\n             now %s\n", d[i].was, d[i].now);
    }
    if (total > count) put(&t, "  ... and %zu more\n", total - count);
    if (remote) put(&t, "  remote   %s\n", remote);
    put(&j, "{\"verdict\": \"%s\", \"source\": ", verdict_name(out->verdict));
    put_json(&j, source_name);
    put(&j, ", \"arch\": ");
    put_json(&j, arch);
    put(&j, ", \"key\": ");
    put_json(&j, out->key[0] ? out->key : NULL);
    put(&j, ", \"nearest\": ");
    put_json(&j, out->nearest[0] ? out->nearest : NULL);
    put(&j, ", \"cause\": ");
    put_json(&j, out->cause);
    put(&j, ", \"difference_count\": %zu, \"differences\": [", total);
    for (size_t i = 0; i < count; i++) {
        put(&j, "%s{\"input\": ", i ? ", " : "");
        put_json(&j, d[i].what);
        put(&j, ", \"name\": ");
        put_json(&j, d[i].name);
        put(&j, ", \"was\": ");
        put_json(&j, d[i].was);
        put(&j, ", \"now\": ");
        put_json(&j, d[i].now);
        put(&j, "}");
    }
    put(&j, "], \"remote\": ");
    put_json(&j, remote);
    put(&j, "}");
    out->text = asyncrt__sb_take(&t);
    out->json = asyncrt__sb_take(&j);
}

/* s with `add` inserted at `at` (NULL: s is freed, when out of memory). */
static char *insert(char *s, size_t at, const char *add)
{
    buf b = {0};
    if (s) put(&b, "%.*s%s%s", (int)at, s, add, s + at);
    free(s);
    return s ? asyncrt__sb_take(&b) : NULL;
}

void asyncrt__explain_report_tier(asyncrt_cache_explanation *out, const char *tier, const char *records)
{
    if (!out->text || !out->json) return;
    char line[512];
    const char *nearest = tier ? strstr(out->text, "\n  nearest  ") : NULL;
    if (nearest) { /* "  nearest  KEY (a remote record)" */
        asyncrt__say(line, sizeof line, " (a %s record)", tier);
        out->text = insert(out->text, (size_t)(nearest - out->text) + strlen("\n  nearest  ") + 64, line);
    }
    if (records && out->text) {
        asyncrt__say(line, sizeof line, "  records  %s\n", records);
        out->text = insert(out->text, strlen(out->text), line);
    }
    buf j = {0}; /* the JSON object's last members */
    put(&j, ", \"nearest_tier\": ");
    put_json(&j, tier);
    put(&j, ", \"remote_records\": ");
    put_json(&j, records);
    char *members = asyncrt__sb_take(&j);
    if (members) {
        out->json = insert(out->json, strlen(out->json) - 1, members);
    } else {
        free(out->json);
        out->json = NULL;
    }
    free(members);
}

void asyncrt_cache_explanation_free(asyncrt_cache_explanation *e)
{
    if (!e) return;
    free(e->text);
    free(e->json);
    e->text = e->json = NULL;
}
