#!/usr/bin/env bash
# Captures real consumer groups of several Kafka clients on a live broker and judges them with
# `kcp conform`: the evidence behind docs/conformance.md.
#
#   export KCP_LIVE_RUN=/tmp/kcp-live-$USER
#   tools/live/kafka.sh fetch
#   tools/live/kafka.sh start k39 --version 3.9.1 --port-base 30000 &
#   tools/live/kafka.sh start k41 --version 4.1.1 --port-base 30020 & wait
#   tools/conformance/live.sh CLIENT:ASSIGNOR[:CLUSTER]...     # e.g. java:cooperative-sticky:k41 kafkajs:roundrobin
#   tools/live/kafka.sh stop-all
#
# CLIENT is java (kafka-clients of the cluster's version), rdkafka (confluent-kafka 2.16.1 =
# librdkafka 2.16.0), kafka-python (3.0.12), franz-go (v1.22.3), sarama (IBM/sarama v1.61.1),
# kafka-go (segmentio/kafka-go v0.4.51) or kafkajs (2.2.4); CLUSTER defaults to k39.
# Each scenario: a fresh 6-partition topic; member 1 joins (t=0), member 2 joins (t=10 s: scale
# out), member 2 leaves (t=22 s: scale in), member 1 leaves (t=34 s). tcpdump captures the broker
# port; the capture and `kcp conform`'s report go to testdata/conformance/captures/NAME.{pcap,report.json}.
# Needs: tcpdump (root), go, node/npm, python3, the registries (first run), a built kcp ($KCP or cargo's).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=$ROOT/testdata/conformance/captures
CACHE=${KCP_CONFORM_CACHE:-/tmp/kcp-conform-cache}
KCP=${KCP:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/kcp}
LIVE=$ROOT/tools/live/kafka.sh
: "${KCP_LIVE_RUN:?set KCP_LIVE_RUN and start the clusters first (see the header)}"
mkdir -p "$OUT" "$CACHE"
log() { echo "[conformance $(date -u +%H:%M:%S)] $*" >&2; }

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

install_clients() {
  if [ ! -x "$CACHE/goclients" ]; then
    log "building the Go members (franz-go, sarama, kafka-go)"
    (cd "$HERE/clients/go" && go build -o "$CACHE/goclients" .)
  fi
  if [ ! -d "$CACHE/node/node_modules/kafkajs" ]; then
    log "installing kafkajs (npm ci)"
    mkdir -p "$CACHE/node" && cp "$HERE/clients/node/package.json" "$HERE/clients/node/package-lock.json" "$CACHE/node/"
    (cd "$CACHE/node" && npm ci --no-audit --no-fund --silent)
  fi
  if [ ! -x "$CACHE/kafka-python/bin/python" ]; then
    log "installing kafka-python (pip)"
    python3 -m venv "$CACHE/kafka-python"
    "$CACHE/kafka-python/bin/pip" install -q -r "$HERE/clients/python/requirements.txt"
  fi
}

# member CLIENT CLUSTER BOOTSTRAP GROUP TOPIC CLIENT_ID ASSIGNOR SECONDS
member() {
  local client=$1 cluster=$2 bootstrap=$3 group=$4 topic=$5 id=$6 assignor=$7 seconds=$8
  case $client in
    java|rdkafka)
      local class=(); [ "$client" = java ] && class=(LiveConsumer)
      "$LIVE" "$client" "$cluster" "${class[@]}" --bootstrap "$bootstrap" --group "$group" \
        --topics "$topic" --assignors "$assignor" --client-id "$id" --session-timeout-ms 10000 \
        --heartbeat-interval-ms 1000 --duration-s "$seconds" ;;
    kafka-python) "$CACHE/kafka-python/bin/python" "$HERE/clients/python/kafka_python_member.py" \
        "$bootstrap" "$group" "$topic" "$id" "$assignor" "$seconds" ;;
    franz-go|sarama|kafka-go) "$CACHE/goclients" "$client" "$bootstrap" "$group" "$topic" "$id" "$assignor" "$seconds" ;;
    kafkajs) (cd "$CACHE/node" && NODE_PATH="$CACHE/node/node_modules" node "$HERE/clients/node/kafkajs_member.js" "$bootstrap" "$group" "$topic" "$id" "$assignor" "$seconds") ;;
    *) echo "unknown client $client" >&2; return 2 ;;
  esac
}

scenario() {
  local client assignor cluster
  IFS=: read -r client assignor cluster <<<"$1"
  cluster=${cluster:-k39}
  local upper; upper=$(echo "$cluster" | tr a-z A-Z)
  local env="$KCP_LIVE_RUN/$cluster/env"
  local bootstrap version
  bootstrap=$(grep "^KCP_LIVE_${upper}_BOOTSTRAP=" "$env" | cut -d= -f2)
  version=$(grep "^KCP_LIVE_${upper}_VERSION=" "$env" | cut -d= -f2)
  local name="$client-$assignor"
  [ "$client" = java ] && name="java-$version-$assignor"
  local port=${bootstrap##*:} topic="conf-$name-$$" group="conf-$name"
  log "$name on $cluster ($bootstrap)"
  "$LIVE" tool "$cluster" topics --bootstrap-server "$bootstrap" --create --topic "$topic" --partitions 6 \
    --replication-factor 1 >/dev/null
  tcpdump -i lo -s 16384 -U -w "$OUT/$name.pcap" "tcp port $port" 2>/dev/null &
  local dump=$!; PIDS+=("$dump"); sleep 1
  member "$client" "$cluster" "$bootstrap" "$group" "$topic" "$client-1" "$assignor" 34 >"$CACHE/$name-1.log" 2>&1 &
  local one=$!; PIDS+=("$one")
  sleep 10
  member "$client" "$cluster" "$bootstrap" "$group" "$topic" "$client-2" "$assignor" 12 >"$CACHE/$name-2.log" 2>&1 || log "$name member 2 exited $?"
  wait "$one" || log "$name member 1 exited $?"
  sleep 1; kill "$dump"; wait "$dump" 2>/dev/null || true
  local rc=0
  "$KCP" conform --pcap "$OUT/$name.pcap" >"$OUT/$name.report.json" 2>/dev/null || rc=$?
  log "$name: $(stat -c %s "$OUT/$name.pcap") bytes, kcp conform exit $rc"
}

install_clients
for s in "$@"; do scenario "$s"; done
