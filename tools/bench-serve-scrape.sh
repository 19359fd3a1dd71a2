#!/usr/bin/env bash
# Scrape latency of `kcp serve` while it collects (issue 35: "a scrape must never wait"): the fake
# cluster of examples/fake_cluster.rs with N groups (10 partitions each), `kcp serve
# --interval-ms 1000`, so that at 10,000 groups a collection is nearly always running; after the
# first snapshot, one curl of /metrics after another for --seconds, then the same for /readyz.
# Prints min p50 p90 p99 max of curl's time_starttransfer (the first byte: the wait) and
# time_total, and how many collections ran during the scrapes.
#
#   tools/bench-serve-scrape.sh [--groups 10000] [--seconds 60] [--port-base 27080]
#
# KCP_BENCH_KCP and KCP_BENCH_FAKE: the kcp and fake_cluster binaries of an earlier build (a copy
# of a build before a change, for before/after); nothing is built then.
set -euo pipefail
groups=10000 seconds=60 port_base=27080
BENCH_NAME=bench-serve-scrape BENCH_USAGE=2,9 BENCH_OPTIONS="groups seconds port-base"
source "$(dirname "${BASH_SOURCE[0]}")/live/bench-common.sh"
bench_parse_args "$@"
bench_build fake_cluster
broker=$port_base http=$((port_base + 1))
metric() { awk -v m="$1" 'index($1, m " ") == 1 || index($1, m "{") == 1 {print $2}' "$2"; }
pct() { sort -n | awk '{a[NR]=$1} END {printf "min %s p50 %s p90 %s p99 %s max %s (n=%d)\n", a[1], a[int(NR*0.5)], a[int(NR*0.9)], a[int(NR*0.99)], a[NR], NR}'; }

echo "== machine: $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg); kcp $KCP ($(cd "$ROOT" && git rev-parse --short HEAD))"
bench_fake_cluster "$groups" 10 "$broker"
"$KCP" serve --bootstrap-server "127.0.0.1:$broker" --listen "127.0.0.1:$http" --interval-ms 1000 \
  --timeout-ms 120000 2> "$run/serve.err" &
serve_pid=$!
for _ in $(seq 1 3000); do
  curl -sf -o /dev/null "http://127.0.0.1:$http/readyz" && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$run/serve.err"; exit 1; }
  sleep 0.2
done
c0=$(wc -l < "$run/fake.out")
for path in metrics readyz; do
  : > "$run/times"
  end=$(( $(date +%s) + seconds ))
  while [ "$(date +%s)" -lt "$end" ]; do
    curl -s --max-time 120 -o /dev/null -w '%{time_starttransfer} %{time_total}\n' "http://127.0.0.1:$http/$path" >> "$run/times"
  done
  echo "== /$path, one curl after another for $seconds s:"
  echo "  time_starttransfer (s): $(cut -d' ' -f1 "$run/times" | pct)"
  echo "  time_total (s):         $(cut -d' ' -f2 "$run/times" | pct)"
done
curl -sf -o "$run/m1.txt" "http://127.0.0.1:$http/metrics"
echo "== collections started during the scrapes (ListGroups the fake broker saw): $(( $(wc -l < "$run/fake.out") - c0 )); last kcp_collect_duration_seconds $(metric kcp_collect_duration_seconds "$run/m1.txt"); /metrics $(wc -c < "$run/m1.txt") bytes"
echo "== VmRSS/VmHWM: $(awk '/^VmRSS|^VmHWM/ {printf "%s %s kB  ", $1, $2}' "/proc/$serve_pid/status")"
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
