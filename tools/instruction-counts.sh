#!/usr/bin/env bash
# Instruction counts of the codec and assignor hot paths (examples/instruction_counts.rs) under
# callgrind: the same binary and inputs give the same counts however loaded the machine is, so two
# checkouts can be compared while other work runs. Prints "CASE ITERATIONS TOTAL PER_ITERATION".
#
#   cargo build --release --example instruction_counts
#   tools/instruction-counts.sh target/release/examples/instruction_counts [OUT.txt]
set -euo pipefail
bin=${1:?usage: tools/instruction-counts.sh BINARY [OUT.txt]}
out=${2:-/dev/stdout}
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
one() {
  local n
  n=$(valgrind --tool=callgrind --toggle-collect='*kcp_measure*' --callgrind-out-file="$tmp/cg.out" \
      "$bin" "$1" "$2" 2>&1 | awk '/Collected/ {print $4}')
  echo "$1 $2 $n $((n / $2))"
}
{
  for c in "decode_a 10000" "encode_a 10000" "decode_b 100" "encode_b 100" "decode_c 10000" "encode_c 10000"; do
    one $c
  done
  for a in range roundrobin sticky cooperative-sticky; do
    for s in "C 3" "C:existing 3" "franz 3" "franz:existing 3" "A 1" "B 1" "R 1" "R:existing 1"; do
      set -- $s
      one "$a:$1" "$2"
    done
  done
} > "$out"
