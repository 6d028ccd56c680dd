/* The report for people (aligned tables, devices as columns) and for tools
 * (one JSON document; README.md documents its keys). */
#ifndef ASYNCRT_PROBE_OUTPUT_H
#define ASYNCRT_PROBE_OUTPUT_H

#include <stdio.h>

#include "report.h"

void probe_write_text(FILE *f, const probe_report *r);
void probe_write_json(FILE *f, const probe_report *r);

#endif
