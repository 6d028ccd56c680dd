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
mkdir -p "$build/valgrind"
logs=$(cd "$build/valgrind" && pwd) # absolute: tests change directory
build=$(cd "$build" && pwd)
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
# Every process is traced (the scripted tests reach our tools through bash,
# env and python), but only our own programs' reports are judged (below).
vg=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect --trace-children=yes
    --child-silent-after-fork=no --suppressions="$supp" --gen-suppressions=all)

# The CPU tests' commands, as ctest would run them (name, then command).
# The CPU tests as ctest would run them: name, working directory, environment
# (joined by \x1f) and command, separated by \x1e. The install test runs
# cmake, ninja and gcc: not our code, so left out.
tests=$(ctest --test-dir "$build" -N -V -L cpu -R "$filter" -E '^test_install' 2>/dev/null | awk '
  /^[0-9]+: Test command: /      { n = $1 + 0; c[n] = substr($0, index($0, "Test command: ") + 14) }
  /^[0-9]+: Working Directory: / { n = $1 + 0; w[n] = substr($0, index($0, "Directory: ") + 11) }
  /^[0-9]+:  [A-Za-z_][A-Za-z0-9_]*=/ { n = $1 + 0; v = substr($0, index($0, ":  ") + 3)
                                        e[n] = e[n] == "" ? v : e[n] "\x1f" v }
  /^ *Test *#[0-9]+: / { line = $0; sub(/^ *Test *#/, "", line); n = line + 0; sub(/^[0-9]+: */, "", line)
                         printf "%s\x1e%s\x1e%s\x1e%s\n", line, w[n], e[n], c[n] }')
export ASYNCRT_TEST_SOURCE_DIR=$PWD ASYNCRT_CACHE_DIR=$logs/cache
passed=0 failed=0
while IFS=$'\x1e' read -r name wd envs cmdline; do
  [ -n "$name" ] || continue
  eval "cmd=($cmdline)"
  IFS=$'\x1f' read -r -a env_vars <<<"$envs"
  log=$logs/$name.log
  rm -f "$logs/$name".*.vg
  start=$SECONDS
  if [ "$name" = bad_input ]; then
    # A shell script: valgrind goes in front of each tool it runs instead.
    (cd "$wd" && env "${env_vars[@]}" BAD_INPUT_TIMEOUT=1200 \
       BAD_INPUT_WRAPPER="${vg[*]} --log-file=$logs/bad_input.%p.vg" "${cmd[@]}") </dev/null >"$log" 2>&1
  else
    (cd "$wd" && env "${env_vars[@]}" "${vg[@]}" --log-file="$logs/$name.%p.vg" "${cmd[@]}") </dev/null >"$log" 2>&1
  fi
  code=$?
  # One .vg file per process; a finding is a process of ours (a program
  # built here) with a non-zero error count (leaks included).
  reports=0
  for f in "$logs/$name".*.vg; do
    [ -f "$f" ] || continue
    grep -q "Command: $build/" "$f" || continue
    grep -qE 'ERROR SUMMARY: [1-9]' "$f" && reports=$((reports + 1))
  done
  if [ "$reports" != 0 ]; then verdict="FINDINGS"
  elif [ $code = 0 ] || [ $code = 77 ]; then verdict=clean
  else verdict="clean (test exit $code)"  # see the header: valgrind's long double
  fi
  [ "$verdict" = FINDINGS ] && failed=$((failed + 1)) || passed=$((passed + 1))
  printf '%-32s %-20s %4ds\n' "$name" "$verdict" $((SECONDS - start))
done <<<"$tests"
echo "$passed clean, $failed with memcheck findings (reports in $logs)"
[ "$failed" = 0 ]
