#!/usr/bin/env bash
# Steady RSS of `kcp serve` (issue 35: under 48 MB at 1,000 groups) against the fake one-broker
# cluster of examples/fake_cluster.rs: N classic groups x 3 members, each on its own topic of
# --partitions partitions, `kcp serve --interval-ms N`; every 10 s a gzip scrape of /metrics (as
# Prometheus asks) and VmRSS/VmHWM from /proc, with the collections made so far.
#
#   tools/bench-serve-rss.sh [--groups 1000] [--partitions 3] [--seconds 120] [--interval-ms 1000]
#                            [--port-base 27070]
#
# KCP_BENCH_KCP and KCP_BENCH_FAKE: the kcp and fake_cluster binaries of an earlier build (a copy
# of a build before a change, for before/after); nothing is built then.
set -euo pipefail
groups=1000 partitions=3 seconds=120 interval_ms=1000 port_base=27070
BENCH_NAME=bench-serve-rss BENCH_USAGE=2,8 BENCH_OPTIONS="groups partitions seconds interval-ms port-base"
source "$(dirname "${BASH_SOURCE[0]}")/live/bench-common.sh"
bench_parse_args "$@"
bench_build fake_cluster
broker=$port_base http=$((port_base + 1))

echo "== machine: $(bench_machine); kcp binary $KCP"
bench_fake_cluster "$groups" "$partitions" "$broker"
"$KCP" serve --bootstrap-server "127.0.0.1:$broker" --listen "127.0.0.1:$http" --interval-ms "$interval_ms" \
  --timeout-ms 60000 2> "$run/serve.err" &
serve_pid=$!
bench_wait_http "http://127.0.0.1:$http/readyz" || { cat "$run/serve.err"; exit 1; }
echo "== kcp serve --interval-ms $interval_ms, $groups groups x $partitions partitions (pid $serve_pid)"
for i in $(seq 10 10 "$seconds"); do
  sleep 10
  curl -s --compressed -o "$run/m.txt" "http://127.0.0.1:$http/metrics"
  echo "t=${i}s collections=$(wc -l < "$run/fake.out") $(bench_rss "$serve_pid") collect_s=$(awk '/^kcp_collect_duration_seconds/ {print $2}' "$run/m.txt") series=$(grep -vc '^#' "$run/m.txt")"
done
echo "== threads: $(ls "/proc/$serve_pid/task" | wc -l); $(grep -E '^(RssAnon|RssFile)' "/proc/$serve_pid/status" | tr -s ' \t' ' ' | paste -sd' ')"
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
