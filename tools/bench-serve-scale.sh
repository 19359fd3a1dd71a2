#!/usr/bin/env bash
# `kcp serve` at scale against a fake one-broker cluster (examples/fake_cluster.rs; issue 35):
# for each group count, N groups x 3 members, each on its own topic of --partitions partitions
# (10,000 groups x 10 = 100,000 partitions), every partition lagging 100 with a record to Fetch.
# Per size: kcp_collect_duration_seconds of --collections collections, VmRSS/VmHWM after them,
# the requests of each collection (counted by the fake broker), the series per granularity.
#
#   tools/bench-serve-scale.sh [--groups "1000 5000 10000"] [--partitions 10] [--collections 3]
#                              [--port-base 27090]
#
# KCP_BENCH_KCP and KCP_BENCH_FAKE: the kcp and fake_cluster binaries of an earlier build (a copy
# of a build before a change, for before/after); nothing is built then.
set -euo pipefail
groups="1000 5000 10000" partitions=10 collections=3 port_base=27090
BENCH_NAME=bench-serve-scale BENCH_USAGE=2,9 BENCH_OPTIONS="groups partitions collections port-base"
source "$(dirname "${BASH_SOURCE[0]}")/live/bench-common.sh"
bench_parse_args "$@"
bench_build fake_cluster
broker=$port_base metrics=$((port_base + 1))
rss() { bench_rss "$1"; }
metric() { awk -v m="$1" 'index($1, m "{") == 1 {print $2}' "$2"; }

echo "== machine: $(bench_machine)"
sizes=$groups
for groups in $sizes; do
  bench_fake_cluster "$groups" "$partitions" "$broker"
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
    bench_stop serve_pid
  done
  bench_stop fake_pid
  echo "  requests per collection (fake broker; one line per collection, the first includes the connection's ApiVersions and the Metadata of the bootstrap):"
  sed 's/^/    /' "$run/fake.out"
done
