#!/bin/sh
# Builds libibverbs.so.1 into $1 when the machine can: make, a C compiler and <infiniband/verbs.h> (Debian/Ubuntu
# package libibverbs-dev, Fedora rdma-core-devel). Without them the rest of the project still builds; `rnicsim exec`
# and the module's tests then say what is missing.
out="$1"
cc="${CC:-gcc}"
if ! command -v make >/dev/null 2>&1 || ! command -v "$cc" >/dev/null 2>&1; then
  echo "ibverbs-lib: make or $cc not found: libibverbs.so.1 not built (rnicsim exec needs it)" >&2
  exit 0
fi
if ! echo '#include <infiniband/verbs.h>' | "$cc" -E - >/dev/null 2>&1; then
  echo "ibverbs-lib: <infiniband/verbs.h> not found (package libibverbs-dev or rdma-core-devel): libibverbs.so.1 not built (rnicsim exec needs it)" >&2
  exit 0
fi
exec make -s OUT="$out"
