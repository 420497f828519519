#!/usr/bin/env bash
# Lays out a CANN-shaped tree around the ascend-rs software device built as
# a C library:
#   PREFIX/include/acl/{acl.h,acl_rt.h,acl_base.h,acl_memory.h}
#   PREFIX/lib64/libascendcl.so  (SONAME libascendcl.so)
#   PREFIX/lib64/libacl_rt.so    (-> libascendcl.so, the name newer CANN programs link)
#   PREFIX/set_env.sh            (the variables CANN's own set_env.sh exports)
# Usage: ascend-soft-acl/install.sh [--debug] PREFIX
set -euo pipefail
profile=release
if [ "${1:-}" = "--debug" ]; then
  profile=debug
  shift
fi
if [ $# -ne 1 ]; then
  echo "usage: $0 [--debug] PREFIX" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
workspace="$(dirname "$here")"
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"

flags=()
[ "$profile" = release ] && flags+=(--release)
(cd "$workspace" && cargo build --quiet -p ascend-soft-acl "${flags[@]}")
target_dir="${CARGO_TARGET_DIR:-$workspace/target}"
library="$target_dir/$profile/libascendcl.so"

mkdir -p "$prefix/include/acl" "$prefix/lib64"
cp "$here"/include/acl/*.h "$prefix/include/acl/"
cp "$workspace/ascend-sys/include/acl_memory.h" "$prefix/include/acl/"
cp "$library" "$prefix/lib64/libascendcl.so"
ln -sf libascendcl.so "$prefix/lib64/libacl_rt.so"

cat > "$prefix/set_env.sh" <<ENV
# Source this file (". $prefix/set_env.sh") to use the ascend-rs software
# device where a CANN toolkit would be: it exports what CANN's set_env.sh
# exports, pointing at this tree.
export ASCEND_TOOLKIT_HOME="$prefix"
export ASCEND_HOME_PATH="$prefix"
export ASCEND_OPP_PATH="$prefix/opp"
export ASCEND_AICPU_PATH="$prefix"
export TOOLCHAIN_HOME="$prefix/toolkit"
export LD_LIBRARY_PATH="$prefix/lib64\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
ENV
echo "installed the ascend-rs software device ($profile) in $prefix"
