#!/usr/bin/env bash
# `kcp serve` at scale against a fake one-broker cluster (examples/fake_cluster.rs; issue 35):
# for each group count, N groups x 3 members, each on its own topic of --partitions partitions
# (10,000 groups x 10 = 100,000 partitions), every partition lagging 100 with a record to Fetch.
# Per size: kcp_collect_duration_seconds of --collections collections, VmRSS/VmHWM after them,
# the requests of each collection (counted by the fake broker), the series per granularity.
#
#   tools/bench-serve-scale.sh [--groups "1000 5000 10000"] [--partitions 10] [--collections 3]
#                              [--port-base 27090]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sizes="1000 5000 10000" partitions=10 collections=3 port_base=27090
while [ $# -gt 0 ]; do
  case $1 in
    --groups) sizes=$2; shift 2 ;;
    --partitions) partitions=$2; shift 2 ;;
    --collections) collections=$2; shift 2 ;;
    --port-base) port_base=$2; shift 2 ;;
    *) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
# KCP_BENCH_KCP and KCP_BENCH_FAKE: binaries built earlier (a copy of a build before a change, for
# before/after); nothing is built then.
if [ -z "${KCP_BENCH_KCP:-}" ]; then
  (cd "$ROOT" && cargo build --release --quiet --bin kcp --example fake_cluster)
fi
target=${CARGO_TARGET_DIR:-$ROOT/target}
KCP=${KCP_BENCH_KCP:-$target/release/kcp}
FAKE=${KCP_BENCH_FAKE:-$target/release/examples/fake_cluster}
run=$(mktemp -d /tmp/kcp-bench-serve-scale.XXXXXX)
fake_pid="" serve_pid=""
cleanup() { set +e; for p in $serve_pid $fake_pid; do kill "$p" 2>/dev/null; done; rm -rf "$run"; }
trap cleanup EXIT
broker=$port_base metrics=$((port_base + 1))
rss() { awk '/^VmRSS|^VmHWM/ {printf "%s %s kB  ", $1, $2}' "/proc/$1/status"; }
metric() { awk -v m="$1" 'index($1, m "{") == 1 {print $2}' "$2"; }

echo "== machine: $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg); kcp $(cd "$ROOT" && git rev-parse --short HEAD)"
for groups in $sizes; do
  "$FAKE" --port "$broker" --groups "$groups" --partitions "$partitions" > "$run/fake.out" 2> "$run/fake.err" &
  fake_pid=$!
  sleep 0.5
  for gran in partition topic group; do
    # The interval is long enough that collections never overlap; the loop below waits for each.
    "$KCP" serve --bootstrap-server "127.0.0.1:$broker" --listen "127.0.0.1:$metrics" --interval-ms 1000 \
      --timeout-ms 120000 --granularity "$gran" 2> "$run/serve.err" &
    serve_pid=$!
    last="" seen=0 durations=""
    want=$([ "$gran" = partition ] && echo "$collections" || echo 1)
    for _ in $(seq 1 6000); do
      if curl -sf -o "$run/m.txt" "http://127.0.0.1:$metrics/metrics"; then
        ts=$(metric kcp_snapshot_timestamp_seconds "$run/m.txt")
        if [ -n "$ts" ] && [ "$ts" != "0.0" ] && [ "$ts" != "$last" ]; then
          last=$ts seen=$((seen + 1))
          durations="$durations $(metric kcp_collect_duration_seconds "$run/m.txt")"
          [ "$seen" -ge "$want" ] && break
        fi
      fi
      kill -0 "$serve_pid" 2>/dev/null || { cat "$run/serve.err"; exit 1; }
      sleep 0.2
    done
    lag=$(grep -c '^kcp_consumergroup_partition_lag_seconds{.*method="fetch"' "$run/m.txt" || true)
    echo "groups=$groups partitions=$((groups * partitions)) granularity=$gran collections_s=[$durations ] series=$(grep -vc '^#' "$run/m.txt") bytes=$(wc -c < "$run/m.txt") fetch_lag_seconds_series=$lag $(rss "$serve_pid")"
    if [ "$gran" = partition ]; then
      echo "  scrape, 20 x curl time_total (s): $(for _ in $(seq 1 20); do curl -s -o /dev/null -w '%{time_total} ' "http://127.0.0.1:$metrics/metrics"; done)"
    fi
    kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=""
  done
  kill "$fake_pid"; wait "$fake_pid" 2>/dev/null || true; fake_pid=""
  echo "  requests per collection (fake broker; one line per collection, the first includes the connection's ApiVersions and the Metadata of the bootstrap):"
  sed 's/^/    /' "$run/fake.out"
done
