#!/usr/bin/env bash
# Captures a real `__consumer_offsets` segment with share-group records (KIP-932) for
# testdata/offsets-log-share/4.1.1-zstd/: a one-broker Kafka 4.1.1 cluster formatted with
# `--feature share.version=1` (how 4.1 turns share groups on) and `--offsets-compression zstd`,
# real `KafkaShareConsumer`s (tools/live/java/LiveShareConsumer.java), then the segment files of
# `__consumer_offsets-0` and what Kafka's own `DumpLogSegments --offsets-decoder --print-data-log`
# prints for them (dump.txt), the reference tests/offsets_log_real.rs checks our decoder against.
#
# The scenario (the script waits for the members' first poll):
#   hist-share  share-a joins (all 3 partitions of share-t), share-b joins (the partitions are
#               split), share-b leaves, share-a leaves, then the group is deleted with Kafka's
#               `kafka-share-groups.sh --delete` (ShareGroupCommand): the share-group state
#               partitions go initializing -> initialized -> deleting, and tombstones follow.
#
# usage: tools/offsets-log/capture-share.sh   (from the repository root)
# env: KCP_LIVE_RUN (default /tmp/kcp-live-offsets-log-share), SHARE_LOG_PORT_BASE (default 21580)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KAFKA=$ROOT/tools/live/kafka.sh
export KCP_LIVE_RUN=${KCP_LIVE_RUN:-/tmp/kcp-live-offsets-log-share}
CACHE=${KCP_LIVE_CACHE:-/tmp/kcp-live-cache}
PORT=${SHARE_LOG_PORT_BASE:-21580}
VERSION=4.1.1
NAME=hshare
OUT=$ROOT/testdata/offsets-log-share/$VERSION-zstd

log() { echo "[capture-share $(date +%T)] $*" >&2; }

declare -A PID OUTF
start_member() {  # start_member LABEL: a share consumer of hist-share with client id LABEL
  local label=$1
  OUTF[$label]=$KCP_LIVE_RUN/$NAME/$label.out
  : > "${OUTF[$label]}"  # not a previous run's lines
  "$KAFKA" java "$NAME" LiveShareConsumer --bootstrap "127.0.0.1:$PORT" --group hist-share --topics share-t \
    --client-id "$label" --duration-s 600 > "${OUTF[$label]}" 2>> "$KCP_LIVE_RUN/$NAME/members.err" &
  PID[$label]=$!
}

wait_polled() {  # wait_polled LABEL: until the member's first poll returned (it is in the group)
  local label=$1 t
  for ((t = 0; t < 240; t++)); do
    grep -q '"event": "polled"' "${OUTF[$label]}" 2>/dev/null && return 0
    sleep 0.5
  done
  log "$label: no poll after 120 s"
  return 1
}

stop_member() {  # stop_member LABEL: SIGTERM, close() leaves the group
  kill -TERM "${PID[$1]}" 2>/dev/null || true
  wait "${PID[$1]}" 2>/dev/null || true
}

mkdir -p "$KCP_LIVE_RUN"
"$KAFKA" fetch >&2
"$KAFKA" start "$NAME" --version "$VERSION" --port-base "$PORT" --offsets-compression zstd \
  --feature share.version=1 2>> "$KCP_LIVE_RUN.log"
trap '"$KAFKA" stop "$NAME" 2>> "$KCP_LIVE_RUN.log" || true' EXIT
"$KAFKA" java "$NAME" LiveAdmin --bootstrap "127.0.0.1:$PORT" create-topic share-t 3 > /dev/null
start_member share-a
wait_polled share-a
# Share members heartbeat every 5 s (group.share.heartbeat.interval.ms): a new target assignment
# becomes a member's current assignment at its next heartbeat.
sleep 7  # share-a's current assignment gets every partition once the share state is initialized
start_member share-b
wait_polled share-b
sleep 7  # share-b takes a partition, share-a keeps the others
stop_member share-b
sleep 3
stop_member share-a
"$KAFKA" tool "$VERSION" org.apache.kafka.tools.consumer.group.ShareGroupCommand \
  --bootstrap-server "127.0.0.1:$PORT" --delete --group hist-share >&2
# The coordinator deletes the group's share state first (DeletingTopics), then writes the tombstones.
sleep 6
rm -rf "$OUT" && mkdir -p "$OUT"
cp "$KCP_LIVE_RUN/$NAME/broker-1/data/__consumer_offsets-0/"*.log "$OUT/"
"$KAFKA" stop "$NAME" 2>> "$KCP_LIVE_RUN.log"
trap - EXIT
# Kafka's reference decoding of the same files.
(cd "$OUT" && java -Xmx256m -cp "$CACHE/broker-$VERSION/*" kafka.tools.DumpLogSegments \
  --offsets-decoder --print-data-log --files "$(ls *.log | paste -sd, -)" > dump.txt 2> /dev/null)
log "$VERSION-zstd: $(wc -c < "$OUT"/*.log | tail -1) bytes, $(grep -c '| offset:' "$OUT/dump.txt") records"
