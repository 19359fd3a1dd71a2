#!/usr/bin/env bash
# Runs the franz-go sticky balancer benchmarks (franz-go from the Go module proxy, pinned in go.mod/go.sum).
#   tools/franz-bench/bench.sh                         all benchmarks, benchtime 1s, ns/op + allocations
#   tools/franz-bench/bench.sh -bench 'Issue/C' ...    extra arguments go to `go test`
set -euo pipefail
cd "$(dirname "$0")"
if [ $# -eq 0 ]; then
  set -- -bench . -benchtime 1s -count 1
fi
exec go test -run '^$' -benchmem -timeout 60m "$@"
