#!/usr/bin/env bash
# Runs one command under compute-sanitizer's TOOL and keeps the command's own
# exit code: 99 where the tool found something, else the command's. A command
# that stops before any CUDA call (bad input, refused before the device) has
# nothing for the tool to check, and the tool would answer for it (an error,
# or 0 with --require-cuda-init no): it is run again alone, for its own code.
# tools/gpu-check.sh sanitize puts this in ASYNCRT_TEST_TOOL_WRAPPER, and
# ASYNCRT_SANITIZE_RUNS: a file that gets one line per run ("TOOL checked
# CODE" or "TOOL no-cuda CODE"), so the stage can say how many it checked.
# Usage: tools/sanitize-run.sh TOOL COMMAND [ARG...]
set -u
tool=$1
shift
log=$(mktemp)
compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 99 "$@" >"$log" 2>&1
code=$?
if grep -q "terminated before first instrumented API call" "$log"; then
  rm -f "$log"
  "$@"
  code=$?
  [ -n "${ASYNCRT_SANITIZE_RUNS:-}" ] && echo "$tool no-cuda $code" >>"$ASYNCRT_SANITIZE_RUNS"
  exit $code
fi
cat "$log"
rm -f "$log"
[ -n "${ASYNCRT_SANITIZE_RUNS:-}" ] && echo "$tool checked $code" >>"$ASYNCRT_SANITIZE_RUNS"
exit $code
