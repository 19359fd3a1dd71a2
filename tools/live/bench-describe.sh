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
groups=1000 members=3 version=3.9.1 port_base=22080 runs=3 records=3000
BENCH_NAME=bench-describe BENCH_USAGE=2,10 BENCH_OPTIONS="groups members version port-base runs records"
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh"
bench_parse_args "$@"
HERE=$BENCH_COMMON_DIR

bench_build hold_group_members
bench_live_cluster bench

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
