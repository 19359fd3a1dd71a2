#!/usr/bin/env bash
# `kcp serve` against its peers on one broker holding many Stable classic groups with committed
# offsets and lag (the bench-describe.sh setup), in the same run (issue 35, "Measure"):
#   - kcp serve: kcp_collect_duration_seconds of every collection, /metrics scrape latency (a curl
#     loop and wrk), VmRSS from /proc every 10 s, the requests of each collection (tcpdump on
#     loopback, counted by tools/live/count-requests.py), series per --granularity;
#   - Kafka's kafka-consumer-groups.sh --describe --all-groups, once per interval as cron would;
#   - the PyPI exporter prometheus-kafka-consumer-group-exporter (venv in the run dir): time until
#     its /metrics has a lag series for every committed partition, its RSS.
#
#   tools/live/bench-serve.sh [--groups 1000] [--members 3] [--version 3.9.1] [--port-base 27000]
#                             [--records 3000] [--interval-ms 10000] [--steady-s 180] [--runs 3]
#                             [--kcp-only]
#
# --kcp-only measures kcp serve alone (no Kafka tool, no PyPI exporter): for before/after runs.
# Needs tcpdump, wrk, curl (apt). Everything binds 127.0.0.1; everything it started is stopped
# on exit. Raw outputs go to stdout.
set -euo pipefail
groups=1000 members=3 version=3.9.1 port_base=27000 records=3000 interval_ms=10000 steady_s=180 runs=3 kcp_only=0
BENCH_NAME=bench-serve BENCH_USAGE=2,17
BENCH_OPTIONS="groups members version port-base records interval-ms steady-s runs" BENCH_FLAGS=kcp-only
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh"
bench_parse_args "$@"
HERE=$BENCH_COMMON_DIR

# KCP_BENCH_KCP: another kcp binary to measure (a copy of an earlier build, for before/after).
bench_build hold_group_members
bench_live_cluster bench

echo "== setup: Kafka $version, 1 broker, $groups groups x $members members, topic bench ($members partitions, $records records), every partition committed at 0"
echo "== machine: $(bench_machine) (load before)"

metrics_port=$((port_base + 50))
exporter_port=$((port_base + 51))
printf 'client.id=kcp-serve-bench\n' > "$run/serve.properties"

rss() { bench_rss "$1"; echo; }
wait_http() { bench_wait_http "$1"; }

# ---- kcp serve, partition granularity, with the requests captured ----
tcpdump -i lo -s 0 -U -w "$run/serve.pcap" "tcp dst port $port_base" 2> "$run/tcpdump.err" &
dump_pid=$!
sleep 1
"$KCP" serve --bootstrap-server "$bootstrap" --command-config "$run/serve.properties" \
  --listen "127.0.0.1:$metrics_port" --interval-ms "$interval_ms" 2> "$run/serve.err" &
serve_pid=$!
wait_http "http://127.0.0.1:$metrics_port/readyz"
echo
echo "== kcp serve --interval-ms $interval_ms --granularity partition (pid $serve_pid): one line per collection / 10 s sample"
echo "elapsed_s  collection_s(kcp_collect_duration_seconds)  snapshot_ts  RSS"
start=$(date +%s)
last_ts=""
while [ $(( $(date +%s) - start )) -lt "$steady_s" ]; do
  m=$(curl -sf "http://127.0.0.1:$metrics_port/metrics")
  ts=$(awk '/^kcp_snapshot_timestamp_seconds/ {print $2}' <<< "$m")
  if [ "$ts" != "$last_ts" ]; then
    d=$(awk '/^kcp_collect_duration_seconds/ {print $2}' <<< "$m")
    echo "$(( $(date +%s) - start ))  $d  $ts  $(rss "$serve_pid")"
    last_ts=$ts
  fi
  sleep 1
done
curl -sf "http://127.0.0.1:$metrics_port/metrics" > "$run/metrics-partition.txt"
echo
echo "== /metrics: $(wc -c < "$run/metrics-partition.txt") bytes, $(grep -vc '^#' "$run/metrics-partition.txt") series; by family:"
grep -v '^#' "$run/metrics-partition.txt" | sed 's/[{ ].*//' | sort | uniq -c
echo "== partition lag series with a value (committed partitions): $(grep -c '^kcp_consumergroup_partition_lag{' "$run/metrics-partition.txt")"
echo
echo "== scrape latency: 200 x curl, time_total (s), sorted: min p50 p90 p99 max"
for _ in $(seq 1 200); do curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$metrics_port/metrics"; done \
  | sort -n | awk '{a[NR]=$1} END {printf "%s %s %s %s %s\n", a[1], a[int(NR*0.5)], a[int(NR*0.9)], a[int(NR*0.99)], a[NR]}'
echo "== wrk -t1 -c1 -d10s --latency http://127.0.0.1:$metrics_port/metrics"
wrk -t1 -c1 -d10s --latency "http://127.0.0.1:$metrics_port/metrics"
echo "== wrk -t2 -c16 -d10s --latency (16 concurrent scrapers)"
wrk -t2 -c16 -d10s --latency "http://127.0.0.1:$metrics_port/metrics"
echo "== RSS after the scrapes: $(rss "$serve_pid")"
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=""
sleep 1
kill "$dump_pid"; wait "$dump_pid" 2>/dev/null || true; dump_pid=""
echo
echo "== requests per collection (tcpdump -i lo 'tcp dst port $port_base', client.id=kcp-serve-bench):"
python3 "$HERE/count-requests.py" "$run/serve.pcap" "$port_base" kcp-serve-bench 2
cat "$run/serve.err"

# ---- series per granularity ----
for gran in topic group; do
  "$KCP" serve --bootstrap-server "$bootstrap" --listen "127.0.0.1:$metrics_port" --interval-ms "$interval_ms" \
    --granularity "$gran" 2> "$run/serve-$gran.err" &
  serve_pid=$!
  wait_http "http://127.0.0.1:$metrics_port/readyz"
  curl -sf "http://127.0.0.1:$metrics_port/metrics" > "$run/metrics-$gran.txt"
  echo "== --granularity $gran: $(wc -c < "$run/metrics-$gran.txt") bytes, $(grep -vc '^#' "$run/metrics-$gran.txt") series, collection $(awk '/^kcp_collect_duration_seconds/ {print $2}' "$run/metrics-$gran.txt") s, $(rss "$serve_pid")"
  kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=""
done

if [ "$kcp_only" = 1 ]; then
  echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi

# ---- Kafka's tool, as a cron script runs it once per interval ----
echo
echo "== kafka-consumer-groups.sh --describe --all-groups (Kafka $version tools, kafka-run-class.sh JVM options), /usr/bin/time -v"
for i in $(seq 1 "$runs"); do
  /usr/bin/time -v "$HERE/kafka.sh" tool "$version" consumer-groups --bootstrap-server "$bootstrap" \
    --describe --all-groups --timeout 60000 > "$run/kafka-$i.out" 2> "$run/kafka-$i.time"
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; wall = s }
    /Maximum resident set size/ { rss = $2 }
    END { printf "wall %.2f s  peak RSS %.1f MB  ", wall, rss / 1024 }' "$run/kafka-$i.time"
  echo "offset rows with a lag: $(awk '$1 ~ /^bench-g-/ && $4 ~ /^[0-9]+$/ {n++} END {print n+0}' "$run/kafka-$i.out")"
done

# ---- the PyPI exporter ----
echo
venv=${KCP_BENCH_EXPORTER_VENV:-$run/exporter-venv}
if [ ! -x "$venv/bin/prometheus-kafka-consumer-group-exporter" ]; then
  python3 -m venv "$venv"
  # 0.5.5 imports kafka.protocol.offset, which kafka-python 3 removed: the kafka-python of its time.
  "$venv/bin/pip" install -q prometheus-kafka-consumer-group-exporter==0.5.5 kafka-python==2.0.2 >&2
fi
echo "== prometheus-kafka-consumer-group-exporter 0.5.5 (kafka-python $("$venv/bin/python" -c 'import kafka; print(kafka.__version__)')) --from-start, high/low water every $((interval_ms / 1000)) s"
t0=$(date +%s.%N)
"$venv/bin/prometheus-kafka-consumer-group-exporter" -b "$bootstrap" -p "$exporter_port" --from-start \
  --high-water-interval "$((interval_ms / 1000))" --low-water-interval "$((interval_ms / 1000))" \
  2> "$run/exporter.err" &
exporter_pid=$!
want=$((groups * members))
full=""
for _ in $(seq 1 1200); do
  n=$(curl -sf "http://127.0.0.1:$exporter_port/metrics" 2>/dev/null | grep -c '^kafka_consumer_group_lag{' || true)
  if [ "${n:-0}" -ge "$want" ]; then full=$(date +%s.%N); break; fi
  kill -0 "$exporter_pid" 2>/dev/null || break
  sleep 0.25
done
if [ -n "$full" ]; then
  echo "first time its /metrics had all $want lag series: $(awk -v a="$t0" -v b="$full" 'BEGIN {printf "%.2f", b - a}') s after start"
else
  echo "its /metrics never had $want lag series (last count ${n:-0}); its stderr:"; tail -20 "$run/exporter.err"
fi
if kill -0 "$exporter_pid" 2>/dev/null; then
  for i in $(seq 1 6); do echo "t+$((i * 10)) s: $(rss "$exporter_pid")"; sleep 10; done
  curl -sf "http://127.0.0.1:$exporter_port/metrics" > "$run/exporter-metrics.txt"
  echo "its /metrics: $(wc -c < "$run/exporter-metrics.txt") bytes, $(grep -vc '^#' "$run/exporter-metrics.txt") series"
  echo "== its scrape latency: 200 x curl, min p50 p90 p99 max (s)"
  for _ in $(seq 1 200); do curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$exporter_port/metrics"; done \
    | sort -n | awk '{a[NR]=$1} END {printf "%s %s %s %s %s\n", a[1], a[int(NR*0.5)], a[int(NR*0.9)], a[int(NR*0.99)], a[NR]}'
fi
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
