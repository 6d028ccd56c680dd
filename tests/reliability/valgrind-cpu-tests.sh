#!/usr/bin/env bash
# Runs every CPU test under valgrind memcheck (children too: asyncrt-run
# spawned by its tests, forked cache workers, each bad-input.sh invocation).
#   tests/reliability/valgrind-cpu-tests.sh [BUILD_DIR] [ctest -R regex]
# A test fails on any memcheck error or definite/indirect leak in a program
# built here (asyncrt's tests and tools; not bash or python). Errors inside NVIDIA's libnvrtc / libnvrtc-builtins only are
# suppressed by valgrind.supp (see there). Logs: BUILD_DIR/valgrind/*.log.
# The verdict is memcheck's: a test whose own checks fail only under valgrind
# is listed as "clean (test exit N)". valgrind computes long double (x87,
# 80-bit) in 64-bit precision, so the asyncrt-run tests that check i64/u64
# values exactly through long double fail their assertions there; they pass
# natively and under ASan.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
filter=${2:-.}
supp=$PWD/tests/reliability/valgrind.supp
logs=$build/valgrind
mkdir -p "$logs"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
# Every process is traced (the scripted tests reach our tools through bash,
# env and python), but only our own programs' reports are judged (below).
vg=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect --trace-children=yes
    --child-silent-after-fork=no --suppressions="$supp" --gen-suppressions=all)

# The CPU tests' commands, as ctest would run them (name, then command).
# The install test runs cmake, ninja and gcc: not our code, so left out.
mapfile -t lines < <(ctest --test-dir "$build" -N -V -L cpu -R "$filter" -E '^test_install' 2>/dev/null |
                     sed -n 's/^[0-9]*: Test command: //p')
mapfile -t names < <(ctest --test-dir "$build" -N -L cpu -R "$filter" -E '^test_install' 2>/dev/null |
                     sed -n 's/^ *Test *#[0-9]*: //p')
export ASYNCRT_TEST_SOURCE_DIR=$PWD ASYNCRT_CACHE_DIR=$PWD/$build/valgrind/cache
# Tests shorten what only repeats under a sanitizer (the cache stress test: 5
# rounds instead of 50; hundreds of NVRTC compiles under valgrind take hours).
export ASYNCRT_UNDER_SANITIZER=1
passed=0 failed=0
for i in "${!lines[@]}"; do
  name=${names[$i]}
  eval "cmd=(${lines[$i]})"
  log=$logs/$name.log
  rm -f "$logs/$name".*.vg
  start=$SECONDS
  if [ "$name" = bad_input ]; then
    # A shell script: valgrind goes in front of each tool it runs instead.
    BAD_INPUT_TIMEOUT=1200 BAD_INPUT_WRAPPER="${vg[*]} --log-file=$logs/bad_input.%p.vg" "${cmd[@]}" >"$log" 2>&1
  else
    "${vg[@]}" --log-file="$logs/$name.%p.vg" "${cmd[@]}" >"$log" 2>&1
  fi
  code=$?
  # One .vg file per process; a finding is a process of ours (a program
  # built here) with a non-zero error count (leaks included).
  reports=0
  for f in "$logs/$name".*.vg; do
    [ -f "$f" ] || continue
    grep -q "Command: $PWD/$build/" "$f" || continue
    grep -qE 'ERROR SUMMARY: [1-9]' "$f" && reports=$((reports + 1))
  done
  if [ "$reports" != 0 ]; then verdict="FINDINGS"
  elif [ $code = 0 ] || [ $code = 77 ]; then verdict=clean
  else verdict="clean (test exit $code)"  # see the header: valgrind's long double
  fi
  [ "$verdict" = FINDINGS ] && failed=$((failed + 1)) || passed=$((passed + 1))
  printf '%-32s %-20s %4ds\n' "$name" "$verdict" $((SECONDS - start))
done
echo "$passed clean, $failed with memcheck findings (reports in $logs)"
[ "$failed" = 0 ]
