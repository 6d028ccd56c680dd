/* The key records' remote tier (issue 36; docs/cache.md, "Why a miss"): a
 * compile stored to the remote also puts its key record there
 * (remote/remote_records.h: one list per source name, sealed under the
 * fleet's key), so that explain --remote compares a miss with the nearest
 * record of the fleet, and a pull writes the records of what it installed.
 * A record is refused unless its seal, its bounds, its source name (the
 * list's) and its key (the seal's) all check; records only ever explain. */
#ifndef ASYNCRT_KEY_RECORD_REMOTE_H
#define ASYNCRT_KEY_RECORD_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "key_record.h"

/* After a store to the remote: source_name's record of key1 there too
 * (nothing with no writable remote; not stored: logged at ASYNCRT_LOG=2). */
void asyncrt__key_record_push(asyncrt_cache *c, const char *source_name, const uint8_t key1[32],
                              const asyncrt_string_list *lines);

/* source_name's records on the remote, verified, newest first, one per
 * key1: how many went into out (at most max); note: one line saying what
 * was found (how many, how many refused and the first reason, or why the
 * remote could not be asked). Refusals are logged as warnings. */
size_t asyncrt__key_records_fetch(asyncrt_cache *c, const char *source_name, asyncrt_key_record *out, size_t max,
                                  char *note, size_t note_size);

/* Pull's second walk: each record list on the remote, and for each
 * verified record of a key1 whose entry this cache holds and that has no
 * local record yet, the local record written (*written counts them). False
 * with why when the server failed. */
bool asyncrt__key_records_pull(asyncrt_cache *c, size_t *written, char *why, size_t why_size);

#endif
