#!/usr/bin/env bash
# Builds the drop-in library, installs the CANN-shaped tree into a temporary
# prefix, compiles the C and C++ programs of tests/c/ against it with the
# system compilers (and one through CMake), and runs them: then the planted
# hazards of sanitize.c and their twins, and the programs again, under the
# stream-hazard sanitizer (ASCEND_SOFT_SANITIZE). Fails when any test failed.
#
# Usage: ascend-soft-acl/run-c-tests.sh [--debug]
#   --debug   install a debug build (faster to build)
# Needs gcc, g++ and cmake (CC, CXX override the compilers).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tests="$here/tests/c"
install_args=()
[ "${1:-}" = --debug ] && install_args+=(--debug)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/cann"
build="$work/build"
mkdir -p "$build"

"$here/install.sh" "${install_args[@]}" "$prefix"
# shellcheck source=/dev/null
. "$prefix/set_env.sh"
[ "$ASCEND_HOME_PATH" = "$prefix" ] || { echo "set_env.sh set ASCEND_HOME_PATH=$ASCEND_HOME_PATH" >&2; exit 1; }
# bin/setenv.bash, the name most CANN sample scripts source, sets the same
# variables (checked in a shell that has none of them yet).
setenv_home=$(env -u ASCEND_HOME_PATH -u ASCEND_TOOLKIT_HOME bash -c \
  '. "$1/bin/setenv.bash" && printf "%s|%s" "$ASCEND_HOME_PATH" "$ASCEND_TOOLKIT_HOME"' _ "$prefix")
[ "$setenv_home" = "$prefix|$prefix" ] || { echo "bin/setenv.bash set ASCEND_HOME_PATH|ASCEND_TOOLKIT_HOME=$setenv_home" >&2; exit 1; }

cc=${CC:-gcc}
cxx=${CXX:-g++}
warnings=(-Wall -Wextra -Werror)
failures=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1" >&2; failures=$((failures + 1)); }

echo "==> compile"
# Exactly the documented compile lines: -I include -L lib64 -lascendcl.
$cc "${warnings[@]}" -std=c11 -D_GNU_SOURCE "$tests/host_device.c" -I"$ASCEND_HOME_PATH/include" -I"$tests" \
  -L"$ASCEND_HOME_PATH/lib64" -lascendcl -o "$build/host_device"
$cc "${warnings[@]}" -std=c11 -D_GNU_SOURCE "$tests/share.c" -I"$ASCEND_HOME_PATH/include" -I"$tests" \
  -L"$ASCEND_HOME_PATH/lib64" -lascendcl -o "$build/share"
# One program per family of the memory API bound after the first samples
# (issue 27): each calls every function of its family through this tree.
families=(cmo events managed mem_pool mbuf copy_batch callbacks notify device_queries)
for family in "${families[@]}"; do
  $cc "${warnings[@]}" -std=c11 -D_GNU_SOURCE "$tests/$family.c" -I"$ASCEND_HOME_PATH/include" -I"$tests" \
    -L"$ASCEND_HOME_PATH/lib64" -lascendcl -o "$build/$family"
done
# And once through CANN's own layout, as build scripts written for CANN
# find it: $ASCEND_HOME_PATH/<arch>-linux/include and .../lib64.
arch_home="$ASCEND_HOME_PATH/$(uname -m)-linux"
[ -f "$arch_home/include/acl/acl.h" ] || { echo "no $arch_home/include/acl/acl.h" >&2; exit 1; }
$cc "${warnings[@]}" -std=c11 -D_GNU_SOURCE "$tests/host_device.c" -I"$arch_home/include" -I"$tests" \
  -L"$arch_home/lib64" -lascendcl -o "$build/host_device_arch_layout"
$cc "${warnings[@]}" -std=c11 "$tests/leak.c" -I"$ASCEND_HOME_PATH/include" -I"$tests" \
  -L"$ASCEND_HOME_PATH/lib64" -lascendcl -o "$build/leak"
$cc "${warnings[@]}" -std=c11 "$tests/sanitize.c" -I"$ASCEND_HOME_PATH/include" -I"$tests" \
  -L"$ASCEND_HOME_PATH/lib64" -lascendcl -o "$build/sanitize"
$cxx "${warnings[@]}" -std=c++14 "$tests/vmm.cpp" -I"$ASCEND_HOME_PATH/include" -I"$tests" \
  -L"$ASCEND_HOME_PATH/lib64" -lascendcl -o "$build/vmm"
$cxx "${warnings[@]}" -std=c++14 -pthread "$tests/value_wait.cpp" -I"$ASCEND_HOME_PATH/include" -I"$tests" \
  -L"$ASCEND_HOME_PATH/lib64" -lascendcl -o "$build/value_wait"
# The newer library name links too.
$cc "${warnings[@]}" -std=c11 -D_GNU_SOURCE "$tests/host_device.c" -I"$ASCEND_HOME_PATH/include" -I"$tests" \
  -L"$ASCEND_HOME_PATH/lib64" -lacl_rt -o "$build/host_device_acl_rt"
# Every header name compiles on its own, in C and in C++.
for header in acl acl_rt acl_base acl_base_rt acl_rt_allocator acl_rt_memory_soma; do
  printf '#include "acl/%s.h"\nint main(void) { return ACL_SUCCESS; }\n' "$header" > "$build/h_$header.c"
  $cc "${warnings[@]}" -pedantic -std=c99 -I"$ASCEND_HOME_PATH/include" -c "$build/h_$header.c" -o /dev/null
  $cxx "${warnings[@]}" -pedantic -x c++ -I"$ASCEND_HOME_PATH/include" -c "$build/h_$header.c" -o /dev/null
done
# The constants are macros, as in CANN: usable in #if and in case labels.
cat > "$build/macros.c" <<'C'
#include "acl/acl.h"
#if ACL_MAJOR_VERSION < 1
#error "ACL_MAJOR_VERSION"
#endif
int classify(aclError rc) {
    switch (rc) {
    case ACL_SUCCESS: return 0;
    case ACL_ERROR_RT_PARAM_INVALID: return 1;
    case ACL_ERROR_RT_MEMORY_ALLOCATION: return 2;
    default: return 3;
    }
}
static const unsigned flags = ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC;
unsigned stream_flags(void) { return flags; }
C
$cc "${warnings[@]}" -std=c99 -I"$ASCEND_HOME_PATH/include" -c "$build/macros.c" -o /dev/null

echo "==> cmake"
cmake -S "$tests/cmake" -B "$build/cmake" -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build/cmake" >/dev/null

echo "==> run"
# The programs find the library through LD_LIBRARY_PATH (set_env.sh): check it is this tree's.
linked=$(ldd "$build/host_device")
case "$linked" in
  *"libascendcl.so => $prefix/lib64/libascendcl.so"*) ;;
  *) echo "$linked" >&2; echo "host_device does not load $prefix/lib64/libascendcl.so" >&2; exit 1 ;;
esac
for program in host_device host_device_acl_rt host_device_arch_layout vmm share value_wait "${families[@]}" cmake/vmm_cmake; do
  if (cd "$build" && timeout 120 "./$program"); then pass "$program"; else fail "$program"; fi
done

# The leak report: ASCEND_SOFT_REPORT=1 makes aclFinalize print it on stderr.
if ASCEND_SOFT_REPORT=1 timeout 60 "$build/leak" > "$build/leak.out" 2> "$build/leak.err"; then
  address=$(sed -n 's/^leaked \(0x[0-9a-f]*\)$/\1/p' "$build/leak.out")
  if [ -n "$address" ] && grep -q "leak: device memory $address: 12345 bytes requested" "$build/leak.err" \
    && grep -q "leaks: 1 resource(s) still live" "$build/leak.err"; then
    pass "leak (report names $address)"
  else
    cat "$build/leak.out" "$build/leak.err" >&2
    fail "leak: the report does not name the leaked allocation"
  fi
else
  cat "$build/leak.err" >&2
  fail "leak"
fi
# Without the variable, no report.
if "$build/leak" > /dev/null 2> "$build/leak-quiet.err" && ! grep -q "leak:" "$build/leak-quiet.err"; then
  pass "leak without ASCEND_SOFT_REPORT is quiet"
else
  fail "leak without ASCEND_SOFT_REPORT printed a report"
fi

echo "==> sanitizer"
# Each planted hazard of sanitize.c: "case api kind [earlier-api]". The run must end
# with ASCEND_SOFT_SANITIZE_EXITCODE and print a report of that kind from that call
# (for a race, naming the earlier call too); its twin (case_ok) must exit 0 quietly.
sanitize_exit=86
hazards=(
  "ww_streams aclrtMemsetAsync race aclrtMemsetAsync"
  "notify_streams aclrtMemsetAsync race aclrtMemsetAsync"
  "raw_streams aclrtMemcpyAsync race aclrtMemsetAsync"
  "war_streams aclrtMemsetAsync race aclrtMemcpyAsync"
  "copy2d_streams aclrtMemcpy2dAsync race aclrtMemsetAsync"
  "default_stream aclrtMemsetAsync race aclrtMemsetAsync"
  "event_reused aclrtMemcpyAsync race aclrtMemsetAsync"
  "double_buffer aclrtMemsetAsync race aclrtMemcpyAsync"
  "host_read_queued_write aclrtMemcpy race aclrtMemsetAsync"
  "host_write_queued_read aclrtMemset race aclrtMemcpyAsync"
  "pinned_d2h_then_h2d aclrtMemcpy race aclrtMemcpyAsync"
  "free_while_queued aclrtFree race aclrtMemsetAsync"
  "uninit_d2h aclrtMemcpy init"
  "uninit_vmm aclrtMemcpy init"
  "vmm_alias aclrtMemcpyAsync race aclrtMemsetAsync"
  "wait_unrecorded aclrtStreamWaitEvent sync"
  "sync_unrecorded aclrtSynchronizeEvent sync"
)
# Every case of the program is in the table.
listed=$("$build/sanitize" --list | sort)
tabled=$(printf '%s\n' "${hazards[@]}" | cut -d' ' -f1 | sort)
[ "$listed" = "$tabled" ] || { echo "sanitize --list and the table of run-c-tests.sh differ" >&2; exit 1; }
sanitized() {
  ASCEND_SOFT_SANITIZE=all ASCEND_SOFT_SANITIZE_EXITCODE=$sanitize_exit timeout 60 "$@"
}
for hazard in "${hazards[@]}"; do
  read -r name api kind earlier <<< "$hazard"
  case "$kind" in
    race) expected="ascend-rs sanitizer: in $api: race (" ;;
    init) expected="ascend-rs sanitizer: in $api: uninitialized read: " ;;
    sync) expected="ascend-rs sanitizer: in $api: sync misuse: " ;;
  esac
  err="$build/sanitize-$name.err"
  status=0
  sanitized "$build/sanitize" "$name" > /dev/null 2> "$err" || status=$?
  if [ "$status" -ne "$sanitize_exit" ]; then
    cat "$err" >&2
    fail "sanitize $name: exit code $status, not $sanitize_exit"
  elif ! grep -F "$expected" "$err" > "$err.match" || ! grep -qF "${earlier:+which $earlier on }" "$err.match"; then
    cat "$err" >&2
    fail "sanitize $name: no line starting '$expected'${earlier:+ naming $earlier}"
  elif ! grep -q '^ascend-rs sanitizer: summary at aclFinalize: [1-9][0-9]* hazard(s)' "$err"; then
    cat "$err" >&2
    fail "sanitize $name: no summary at aclFinalize"
  else
    pass "sanitize $name ($kind in $api${earlier:+ after $earlier})"
  fi
  err="$build/sanitize-${name}_ok.err"
  status=0
  sanitized "$build/sanitize" "${name}_ok" > /dev/null 2> "$err" || status=$?
  if [ "$status" -eq 0 ] && ! grep -q '^ascend-rs sanitizer: in ' "$err" \
    && grep -q '^ascend-rs sanitizer: summary at aclFinalize: 0 hazard(s)' "$err"; then
    pass "sanitize ${name}_ok"
  else
    cat "$err" >&2
    fail "sanitize ${name}_ok: exit code $status, or a report"
  fi
done
# The other programs, sanitized: they must pass with no report. "program checks".
# share reads bytes its child process wrote into the exported allocation (an export
# makes what the memory holds unknown), and value_wait reads what a copy queued after
# an aclrtValueWait wrote (a waiting stream's writes still count as writes).
for entry in "host_device all" "host_device_acl_rt all" "vmm all" "share all" \
  "value_wait all" "${families[@]/%/ all}" "cmake/vmm_cmake all" "leak all"; do
  read -r program checks <<< "$entry"
  err="$build/sanitized-${program//\//-}.err"
  if (cd "$build" && ASCEND_SOFT_SANITIZE=$checks ASCEND_SOFT_SANITIZE_EXITCODE=$sanitize_exit \
    timeout 120 "./$program" > /dev/null 2> "$err") && ! grep -q '^ascend-rs sanitizer: in ' "$err"; then
    pass "$program (sanitized: $checks)"
  else
    cat "$err" >&2
    fail "$program (sanitized: $checks)"
  fi
done

if [ "$failures" -ne 0 ]; then
  echo "$failures C/C++ test(s) failed" >&2
  exit 1
fi
echo "all C and C++ programs passed"
