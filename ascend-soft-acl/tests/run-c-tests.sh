#!/usr/bin/env bash
# Builds the drop-in library, installs it into a temporary CANN-shaped
# tree, compiles the C and C++ programs in c/ against that tree with the
# system compilers (and one CMake project), runs them, and checks the leak
# report of the program that leaks. Usage: run-c-tests.sh [--debug]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(mktemp -d)"
build="$(mktemp -d)"
trap 'rm -rf "$root" "$build"' EXIT

"$here/../install.sh" "$@" "$root"
# shellcheck source=/dev/null
. "$root/set_env.sh"

cc_flags=(-Wall -Wextra -Werror -I"$ASCEND_HOME_PATH/include" -I"$here/c" -L"$ASCEND_HOME_PATH/lib64")
for program in host_device vmm share leak; do
  cc "$here/c/$program.c" "${cc_flags[@]}" -lascendcl -o "$build/$program"
done
# Newer CANN programs link libacl_rt.
c++ -std=c++17 "$here/c/value_wait.cpp" "${cc_flags[@]}" -lacl_rt -pthread -o "$build/value_wait"

for program in host_device vmm share value_wait; do
  echo "--- $program"
  ASCEND_SOFT_REPORT=1 "$build/$program" 2>"$build/$program.err" || {
    cat "$build/$program.err"
    exit 1
  }
  # A program that cleans up leaves nothing and misuses nothing.
  grep -q "leaks: none" "$build/$program.err" || { cat "$build/$program.err"; exit 1; }
  grep -q "misuse: none" "$build/$program.err" || { cat "$build/$program.err"; exit 1; }
done

echo "--- leak"
ASCEND_SOFT_REPORT=1 "$build/leak" 2>"$build/leak.err"
cat "$build/leak.err"
grep -q "leaks (resources still live):" "$build/leak.err"
grep -q "12345 bytes" "$build/leak.err"
# Without the variable, no report.
"$build/leak" 2>"$build/leak-quiet.err"
if grep -q "report at aclFinalize" "$build/leak-quiet.err"; then
  echo "the report was printed without ASCEND_SOFT_REPORT" >&2
  exit 1
fi

echo "--- cmake"
cmake -S "$here/c/cmake" -B "$build/cmake" >/dev/null
cmake --build "$build/cmake" >/dev/null
"$build/cmake/host_device_cmake"

echo "C and C++ programs passed on the drop-in library"
