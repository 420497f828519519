#!/usr/bin/env bash
# Builds the drop-in libmf_smem.so (the software fabric), compiles the C++
# programs of tests/c/ against MemFabric's own headers (those of the
# memfabric-hybrid package: <unzipped wheel>/memfabric_hybrid/include/smem/host),
# links them with -lmf_smem against the drop-in, and runs them. Fails when
# any test failed, hung (timeout) or left the store's port in use.
#
# Usage: memfabric-soft-smem/run-c-tests.sh MEMFABRIC_INCLUDE_DIR
# Needs g++ (CXX overrides it) and python3 (to find a free port).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
include=${1:?usage: $0 MEMFABRIC_INCLUDE_DIR (the folder with smem.h and smem_bm.h)}
[ -f "$include/smem_bm.h" ] || { echo "$0: no smem_bm.h in $include" >&2; exit 2; }

messages=$(cd "$root" && cargo build -p memfabric-soft-smem --lib --message-format=json-render-diagnostics)
library=$(printf '%s\n' "$messages" | grep -o '"[^"]*/libmemfabric_soft_smem\.so"' | tr -d '"' | tail -1)
[ -n "$library" ] && [ -f "$library" ] || { echo "$0: cargo did not report libmemfabric_soft_smem.so" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
install -m 0755 "$library" "$work/libmf_smem.so"
cxx=${CXX:-g++}
"$cxx" -Wall -Wextra -Werror -std=c++14 "$here/tests/c/bm_two_ranks.cpp" -I"$include" \
  -L"$work" -lmf_smem -o "$work/bm_two_ranks"

export LD_LIBRARY_PATH="$work${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
linked=$(ldd "$work/bm_two_ranks")
case "$linked" in
  *"libmf_smem.so => $work/libmf_smem.so"*) ;;
  *) echo "$linked" >&2; echo "bm_two_ranks does not load the drop-in" >&2; exit 1 ;;
esac

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# No listener left on the port (SO_REUSEADDR, as Rust's TcpListener sets it:
# connections in TIME_WAIT do not count).
port_is_free() {
  python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()' "$1" 2>/dev/null
}

failures=0
port=$(free_port)
if timeout 120 "$work/bm_two_ranks" "$port"; then
  if port_is_free "$port"; then echo "PASS bm_two_ranks"; else echo "FAIL bm_two_ranks: port $port still in use" >&2; failures=$((failures + 1)); fi
else
  echo "FAIL bm_two_ranks" >&2
  failures=$((failures + 1))
fi
[ "$failures" = 0 ] || { echo "$failures C test(s) failed" >&2; exit 1; }
