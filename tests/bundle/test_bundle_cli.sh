#!/usr/bin/env bash
# asyncrt-bundle's command line and its exit codes (tools/common/exit_codes.h):
# each bad invocation ends with its code and a message naming what is wrong.
# Light kernels only (no CCCL): the CCCL cases are test_bundle_tool.sh's.
# usage: test_bundle_cli.sh ASYNCRT-BUNDLE WORK-DIR
set -uo pipefail
bundle=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
unset ASYNCRT_TOOLKIT
failed=0
check() { # CODE TEXT CMD...
  local code=$1 text=$2 rc=0
  shift 2
  "$@" >out.txt 2>&1 || rc=$?
  if [ "$rc" != "$code" ] || ! grep -qF -- "$text" out.txt; then
    echo "FAIL: $* exited $rc (expected $code) with:"; cat out.txt; echo "(expected to contain: $text)"; failed=1
  else
    echo "ok $code: $*"
  fi
}
mkdir -p a b inc
printf '#define ONE 1\n' >inc/one.h
printf '#include <one.h>\nextern "C" __global__ void k(int *p) { *p = ONE; }\n' >ok.cu
printf 'this is not C++\n' >broken.cu
printf '#if __has_include(<one.h>)\n#endif\nextern "C" __global__ void k(int *p) { *p = 1; }\n' >probe.cu
printf '#include "common.h"\n' >a/x.h
printf '#define A 1\n' >a/common.h
printf '#include "common.h"\n' >b/y.h
printf '#define B 2\n' >b/common.h
printf '#include <x.h>\n#include <y.h>\nextern "C" __global__ void k(int *p) { *p = A + B; }\n' >clash.cu

check 0 "Exit codes" "$bundle" --help
# The shared table names asyncrt-bundle too: its own help is true of it.
check 0 "asyncrt-cache and asyncrt-bundle)" "$bundle" --help
check 0 "asyncrt-bundle" "$bundle" --version
check 0 "ok.bin: 1 headers under 1 names" "$bundle" ok.cu -I inc --arch compute_80 -o ok.bin
check 0 "checked: each source compiles from it alone" "$bundle" ok.cu -Iinc -DUNUSED=1 --format c --symbol my_data -o ok.c
grep -q "extern const unsigned char my_data\[\];" ok.c || { echo "FAIL: ok.c does not define my_data"; failed=1; }
check 2 "no SOURCE given" "$bundle" -o x.bin
check 2 "no -o FILE given" "$bundle" ok.cu
check 2 "unknown option '--frobnicate'" "$bundle" ok.cu --frobnicate -o x.bin
check 2 "-I needs a value" "$bundle" ok.cu -o x.bin -I
check 2 "--format \"zip\": the formats are bin and c" "$bundle" ok.cu --format zip -o x.bin
check 2 "--symbol \"9lives\" is not a C identifier" "$bundle" ok.cu --format c --symbol 9lives -o x.c
check 2 "--arch \",\" names no target" "$bundle" ok.cu --arch , -o x.bin
check 2 "arch 'sm_1' is malformed" "$bundle" ok.cu -I inc --arch sm_1 -o x.bin
check 3 "sm_10" "$bundle" ok.cu -I inc --arch sm_10 -o x.bin
check 3 "broken.cu for sm_90" "$bundle" broken.cu -o x.bin
check 7 "cannot read missing.cu" "$bundle" missing.cu -o x.bin
check 7 "cannot write no/such/dir/x.bin" "$bundle" ok.cu -I inc -o no/such/dir/x.bin
check 7 "the toolkit whose headers it bundles is needed here: toolkit discovery is off (ASYNCRT_TOOLKIT=none)" \
  env ASYNCRT_TOOLKIT=none "$bundle" ok.cu -I inc -o x.bin
check 7 "the library kept no record of the headers it read" "$bundle" probe.cu -I inc -o x.bin
check 7 "the include name \"common.h\" means two headers" "$bundle" clash.cu -I a -I b -o x.bin
[ ! -e x.bin ] || { echo "FAIL: a failed run wrote x.bin"; failed=1; }
# -o replaces a regular file or creates one, nothing else (issue 33: it replaced
# a symbolic link, a FIFO or a device node with the bundle): exit 2, untouched.
ln -s target.bin link.bin
check 2 "-o link.bin is a symbolic link; -o replaces only a regular file" "$bundle" ok.cu -I inc -o link.bin
{ [ -L link.bin ] && [ ! -e target.bin ]; } || { echo "FAIL: -o replaced or followed the link"; failed=1; }
mkfifo fifo.bin
check 2 "-o fifo.bin is a FIFO" "$bundle" ok.cu -I inc -o fifo.bin
[ -p fifo.bin ] || { echo "FAIL: -o replaced the FIFO"; failed=1; }
mkdir dir.bin
check 2 "-o dir.bin is a directory" "$bundle" ok.cu -I inc -o dir.bin
if mknod dev.bin c 1 3 2>/dev/null; then # root only: a node like /dev/null's
  check 2 "-o dev.bin is a character device" "$bundle" ok.cu -I inc -o dev.bin
  [ -c dev.bin ] || { echo "FAIL: -o replaced the device node"; failed=1; }
fi
echo old >reg.bin
check 0 "reg.bin: 1 headers under 1 names" "$bundle" ok.cu -I inc -o reg.bin
exit $failed
