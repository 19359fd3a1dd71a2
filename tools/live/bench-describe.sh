#!/usr/bin/env bash
# Describe speed: `kcp group describe --all-groups` against Apache Kafka's own
# `kafka-consumer-groups.sh --describe --all-groups --members --verbose` (its ConsumerGroupCommand
# class from the kafka-tools jar, with kafka-run-class.sh's default JVM options), on one broker
# holding many Stable classic groups, in the same run: wall time and peak RSS (/usr/bin/time -v).
#
#   tools/live/bench-describe.sh [--groups 1000] [--members 3] [--version 3.9.1|4.1.1]
#                                [--port-base 22080] [--runs 3] [--records 3000]
#
# Every group's leader commits offset 0 for every partition once it has synced, after --records
# records were written to the topic, so that the offsets views (kcp's, and Kafka's default
# --describe view, measured too) have committed offsets and lag to show.
#
# The groups are made by examples/hold_group_members.rs (JoinGroup + SyncGroup through the crate's
# client layer, long session timeout, no heartbeats). Everything binds 127.0.0.1; the broker and
# the members are stopped on exit. Prints a table; BENCHMARKS.md says how the figures were taken.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

groups=1000 members=3 version=3.9.1 port_base=22080 runs=3 records=3000
while [ $# -gt 0 ]; do
  case $1 in
    --groups) groups=$2; shift 2 ;;
    --members) members=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --port-base) port_base=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --records) records=$2; shift 2 ;;
    *) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
log() { echo "[bench-describe $(date -u +%H:%M:%S)] $*" >&2; }

export KCP_LIVE_RUN
KCP_LIVE_RUN=$(mktemp -d /tmp/kcp-bench-describe.XXXXXX)
holder_pid=""
cleanup() {
  set +e
  [ -n "$holder_pid" ] && kill "$holder_pid" 2>/dev/null
  exec 3>&- 2>/dev/null
  "$HERE/kafka.sh" stop bench >/dev/null 2>&1
  rm -rf "$KCP_LIVE_RUN"
}
trap cleanup EXIT

log "building kcp and the group holder (release)"
(cd "$ROOT" && cargo build --release --quiet --bin kcp --example hold_group_members)
KCP=$ROOT/target/release/kcp
HOLDER=$ROOT/target/release/examples/hold_group_members

"$HERE/kafka.sh" fetch
log "starting one Kafka $version broker on 127.0.0.1:$port_base"
"$HERE/kafka.sh" start bench --version "$version" --port-base "$port_base" >&2
bootstrap=127.0.0.1:$port_base
"$HERE/kafka.sh" java bench LiveAdmin --bootstrap "$bootstrap" create-topic bench "$members" >/dev/null
log "writing $records records"
"$HERE/kafka.sh" tool "$version" org.apache.kafka.tools.ProducerPerformance --topic bench --num-records "$records" \
  --record-size 20 --throughput -1 --producer-props "bootstrap.servers=$bootstrap" batch.size=100 linger.ms=0 >/dev/null

# The first group request creates __consumer_offsets: wait until a coordinator answers.
for _ in $(seq 1 120); do
  "$KCP" group describe --bootstrap-server "$bootstrap" --group bench-warmup --timeout-ms 5000 2>/dev/null \
    | grep -q '"not_found"' && break
  sleep 0.5
done
log "forming $groups groups of $members members"
fifo=$KCP_LIVE_RUN/holder.stdin
mkfifo "$fifo"
"$HOLDER" --bootstrap "$bootstrap" --topic bench --partitions "$members" --groups "$groups" --members "$members" \
  --commit-offset 0 --hold-s 1800 < "$fifo" > "$KCP_LIVE_RUN/holder.out" 2> "$KCP_LIVE_RUN/holder.err" &
holder_pid=$!
exec 3> "$fifo"   # the holder runs until this closes
for _ in $(seq 1 600); do
  grep -q ready "$KCP_LIVE_RUN/holder.out" 2>/dev/null && break
  kill -0 "$holder_pid" 2>/dev/null || { cat "$KCP_LIVE_RUN/holder.err" >&2; exit 1; }
  sleep 0.5
done
grep -q ready "$KCP_LIVE_RUN/holder.out" || { log "the groups did not form in 300 s"; exit 1; }
log "$(cat "$KCP_LIVE_RUN/holder.out")"

# measure NAME CMD...: runs CMD under /usr/bin/time -v, output to $KCP_LIVE_RUN/NAME.out; prints
# "wall_seconds max_rss_kb".
measure() {
  local name=$1; shift
  /usr/bin/time -v "$@" > "$KCP_LIVE_RUN/$name.out" 2> "$KCP_LIVE_RUN/$name.time" \
    || { log "$name failed:"; tail -20 "$KCP_LIVE_RUN/$name.time" >&2; exit 1; }
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; wall = s }
    /Maximum resident set size/ { rss = $2 }
    END { printf "%.3f %d\n", wall, rss }' "$KCP_LIVE_RUN/$name.time"
}

# kafka.sh tool execs the JVM with kafka-run-class.sh's default options (so /usr/bin/time measures it)
java_tool=("$HERE/kafka.sh" tool "$version" consumer-groups --bootstrap-server "$bootstrap" --describe --all-groups --members --verbose)
# Kafka's default --describe view: the offsets (one OffsetFetch per group, one ListOffsets per member).
java_offsets=("$HERE/kafka.sh" tool "$version" consumer-groups --bootstrap-server "$bootstrap" --describe --all-groups --timeout 60000)
one_group=$(printf 'bench-g-%05d' 0)

declare -a rows
for run in $(seq 1 "$runs"); do
  read -r kw kr < <(measure kcp-all "$KCP" group describe --bootstrap-server "$bootstrap" --all-groups)
  read -r ow or < <(measure kcp-one "$KCP" group describe --bootstrap-server "$bootstrap" --group "$one_group")
  read -r jw jr < <(measure kafka-all "${java_tool[@]}")
  read -r qw qr < <(measure kafka-offsets "${java_offsets[@]}")
  described=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for g in d if g.get("state") == "Stable" and len(g["members"]) == int(sys.argv[2])))' \
    "$KCP_LIVE_RUN/kcp-all.out" "$members")
  java_members=$(grep -c "bench-g-" "$KCP_LIVE_RUN/kafka-all.out" || true)
  offsets_rows=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for g in d for o in g.get("offsets", []) if o["committed_offset"] is not None and o["lag"] is not None))' \
    "$KCP_LIVE_RUN/kcp-all.out")
  java_offset_rows=$(awk '$1 ~ /^bench-g-/ && $4 ~ /^[0-9]+$/ {n++} END {print n+0}' "$KCP_LIVE_RUN/kafka-offsets.out")
  rows+=("$run $kw $kr $ow $or $jw $jr $described $java_members $qw $qr $offsets_rows $java_offset_rows")
done

printf '\nKafka %s, 1 broker, %s groups x %s members (hold_group_members), %s runs\n\n' "$version" "$groups" "$members" "$runs"
printf '| run | kcp --all-groups with offsets (s) | kcp peak RSS (MB) | kcp one group (s) | one group RSS (MB) | kafka-consumer-groups.sh --members --verbose (s) | its peak RSS (MB) | speed-up | kafka-consumer-groups.sh --describe, offsets (s) | its peak RSS (MB) | speed-up | groups kcp saw Stable | member lines Kafka printed | offset rows with lag, kcp | offset rows with lag, Kafka |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for row in "${rows[@]}"; do
  read -r run kw kr ow or jw jr described java_members qw qr kor jor <<< "$row"
  awk -v run="$run" -v kw="$kw" -v kr="$kr" -v ow="$ow" -v or="$or" -v jw="$jw" -v jr="$jr" -v d="$described" -v jm="$java_members" \
    -v qw="$qw" -v qr="$qr" -v kor="$kor" -v jor="$jor" \
    'BEGIN { printf "| %s | %.2f | %.1f | %.2f | %.1f | %.2f | %.1f | %.1fx | %.2f | %.1f | %.1fx | %s | %s | %s | %s |\n", run, kw, kr / 1024, ow, or / 1024, jw, jr / 1024, (kw > 0 ? jw / kw : 0), qw, qr / 1024, (kw > 0 ? qw / kw : 0), d, jm, kor, jor }'
done
