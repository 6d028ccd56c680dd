#!/usr/bin/env bash
# The test command: set up and build if needed, then run every test.
# GPU tests are reported as skipped on machines without a device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
