#!/usr/bin/env bash
# Make the packet captures under testdata/pcap/ (and the vectors extracted from them).
#
#   tools/captures/make-captures.sh            # all scenarios
#   tools/captures/make-captures.sh java-cooperative-sticky rdkafka-range   # some of them
#
# Needs: root (apt-get, capture on lo), java 17 + mvn, python3, reachable Maven Central / PyPI / Debian apt.
# Runs one Apache Kafka broker (KRaft, combined broker+controller) bound to 127.0.0.1 only, captures the
# loopback traffic on its port with tshark, runs the consumer scenarios with bounded run times, and stops
# everything at the end (also on error, via the EXIT trap).
set -euo pipefail

KAFKA_VERSION=3.9.1            # org.apache.kafka:kafka_2.13 and kafka-clients (see the poms)
CONFLUENT_KAFKA_VERSION=2.16.1 # PyPI confluent-kafka (bundles librdkafka 2.16.0)
PORT=${KCP_CAPTURE_PORT:-9092}            # broker listener (Kafka's default port: tshark decodes it as Kafka)
CONTROLLER_PORT=${KCP_CAPTURE_CONTROLLER_PORT:-9093}
SNAPLEN=16384

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=$ROOT/testdata/pcap
CACHE=${KCP_CAPTURE_CACHE:-/tmp/kcp-captures-cache}   # jars, classes, venv (re-used between runs)
RUN=$(mktemp -d /tmp/kcp-captures-run.XXXXXX)          # broker log dir, logs (deleted at the end)
BOOTSTRAP=127.0.0.1:$PORT

ALL_SCENARIOS=(java-cooperative-sticky rdkafka-range rdkafka-cooperative-sticky mixed-java-rdkafka)
if [ $# -gt 0 ]; then SCENARIOS=("$@"); else SCENARIOS=("${ALL_SCENARIOS[@]}"); fi

log() { echo "[make-captures $(date -u +%H:%M:%S)] $*" >&2; }

BROKER_PID=
TSHARK_PID=
CHILD_PIDS=()
cleanup() {
  local rc=$?
  for p in "${CHILD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "$TSHARK_PID" ]; then kill "$TSHARK_PID" 2>/dev/null || true; wait "$TSHARK_PID" 2>/dev/null || true; fi
  if [ -n "$BROKER_PID" ]; then
    kill "$BROKER_PID" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$BROKER_PID" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$BROKER_PID" 2>/dev/null || true
  fi
  if [ "${KCP_CAPTURE_KEEP_RUN:-0}" = 1 ]; then log "run dir kept: $RUN"; else rm -rf "$RUN"; fi
  exit $rc
}
trap cleanup EXIT

# ---------------------------------------------------------------- tools
install_tools() {
  if ! command -v tshark >/dev/null; then
    log "installing tshark (apt)"
    apt-get update -qq
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null
  fi
  mkdir -p "$CACHE"
  if [ ! -f "$CACHE/broker-lib/kafka_2.13-$KAFKA_VERSION.jar" ]; then
    log "fetching kafka_2.13 $KAFKA_VERSION and its runtime dependencies (Maven Central)"
    rm -rf "$CACHE/broker-lib"
    (cd "$HERE/broker" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$CACHE/broker-lib")
  fi
  if [ ! -f "$CACHE/client-lib/kafka-clients-$KAFKA_VERSION.jar" ]; then
    log "fetching kafka-clients $KAFKA_VERSION (Maven Central)"
    rm -rf "$CACHE/client-lib"
    (cd "$HERE/java-consumer" && mvn -q -B dependency:copy-dependencies -DoutputDirectory="$CACHE/client-lib")
  fi
  log "compiling our Java programs"
  rm -rf "$CACHE/classes" && mkdir -p "$CACHE/classes"
  javac -nowarn -d "$CACHE/classes" -cp "$CACHE/client-lib/*" \
    "$HERE"/java-consumer/src/main/java/kcp/captures/*.java \
    "$HERE"/java-reader/src/main/java/kcp/captures/*.java
  if [ ! -x "$CACHE/venv/bin/python" ] || ! "$CACHE/venv/bin/python" -c \
      "import importlib.metadata as m,sys; sys.exit(m.version('confluent-kafka') != '$CONFLUENT_KAFKA_VERSION')"; then
    log "installing confluent-kafka==$CONFLUENT_KAFKA_VERSION (PyPI) into $CACHE/venv"
    rm -rf "$CACHE/venv"
    python3 -m venv "$CACHE/venv"
    "$CACHE/venv/bin/pip" install -q "confluent-kafka==$CONFLUENT_KAFKA_VERSION"
  fi
}

# ---------------------------------------------------------------- broker
port_busy() { ss -ltn "( sport = :$1 )" | grep -q LISTEN; }

start_broker() {
  for p in "$PORT" "$CONTROLLER_PORT"; do
    if port_busy "$p"; then log "port $p is already in use; set KCP_CAPTURE_PORT/KCP_CAPTURE_CONTROLLER_PORT"; exit 1; fi
  done
  mkdir -p "$RUN/kraft-logs"
  cat > "$RUN/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$RUN/kraft-logs
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=3000
auto.create.topics.enable=false
EOF
  cat > "$RUN/log4j.properties" <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$RUN/broker.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
  local cp="$CACHE/broker-lib/*"
  local jopts=(-Xms256m -Xmx512m -Dlog4j.configuration="file:$RUN/log4j.properties")
  local cluster_id
  cluster_id=$(java "${jopts[@]}" -cp "$cp" kafka.tools.StorageTool random-uuid)
  java "${jopts[@]}" -cp "$cp" kafka.tools.StorageTool format -t "$cluster_id" -c "$RUN/server.properties" \
    > "$RUN/format.log" 2>&1
  log "starting Kafka $KAFKA_VERSION (KRaft, cluster $cluster_id) on $BOOTSTRAP"
  java "${jopts[@]}" -cp "$cp" kafka.Kafka "$RUN/server.properties" > "$RUN/broker.out" 2>&1 &
  BROKER_PID=$!
  for _ in $(seq 1 120); do
    if grep -q "Kafka Server started" "$RUN/broker.log" 2>/dev/null; then break; fi
    kill -0 "$BROKER_PID" 2>/dev/null || { log "broker died"; cat "$RUN/broker.out" >&2; exit 1; }
    sleep 0.5
  done
  grep -q "Kafka Server started" "$RUN/broker.log" || { log "broker did not start in 60 s"; exit 1; }
  log "broker listening sockets:"; ss -ltnp | grep "pid=$BROKER_PID," >&2 || true
  # Refuse to go on unless every socket the broker listens on is on 127.0.0.1.
  if ss -ltnp | grep "pid=$BROKER_PID," | awk '{print $4}' | grep -vE '^(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]):' | grep -q .; then
    log "broker listens on a non-loopback address"; exit 1
  fi
}

JAVA_CLIENT=(java -Xms64m -Xmx256m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn
  -cp "$CACHE/classes:$CACHE/client-lib/*" kcp.captures.CaptureConsumer)

# ---------------------------------------------------------------- capture
start_capture() {
  local name=$1
  rm -f "$OUT/$name.pcap"
  tshark -q -i lo -f "tcp port $PORT" -s "$SNAPLEN" -F pcap -w "$OUT/$name.pcap" > "$RUN/tshark-$name.log" 2>&1 &
  TSHARK_PID=$!
  for _ in $(seq 1 40); do grep -qs "Capturing on" "$RUN/tshark-$name.log" && break; sleep 0.25; done
  grep -q "Capturing on" "$RUN/tshark-$name.log" || { log "tshark did not start"; cat "$RUN/tshark-$name.log" >&2; exit 1; }
  sleep 0.5
  log "capturing $name"
}

stop_capture() {
  sleep 1
  kill -INT "$TSHARK_PID"; wait "$TSHARK_PID" || true
  TSHARK_PID=
  chmod 644 "$OUT/$1.pcap"
  log "capture done: $(du -h "$OUT/$1.pcap" | cut -f1) $OUT/$1.pcap"
}

# run_at DELAY_S LOGFILE CMD... : start CMD in the background after DELAY_S seconds
run_at() {
  local delay=$1 logf=$2; shift 2
  ( sleep "$delay"; exec "$@" ) > "$logf" 2> "$logf.stderr" &
  CHILD_PIDS+=($!)
}

# wait for all clients; each one has its own run.ms bound, this is the outer bound
wait_clients() {
  local deadline=$((SECONDS + $1))
  for p in "${CHILD_PIDS[@]}"; do
    while kill -0 "$p" 2>/dev/null; do
      if [ $SECONDS -ge $deadline ]; then log "client $p still running at the time limit; killing it"; kill "$p" || true; break; fi
      sleep 0.5
    done
    wait "$p" || log "client $p exited with $?"
  done
  CHILD_PIDS=()
}

keep_logs() {  # keep the clients' own logs next to the capture (ground truth for expect.json)
  local name=$1
  mkdir -p "$OUT/$name.clients"
  rm -f "$OUT/$name.clients"/*
  cp "$RUN/$name".*.log "$OUT/$name.clients/"
  for f in "$RUN/$name".*.log.stderr; do
    # librdkafka debug logs: keep the group-protocol lines only (the rest is bulky)
    grep -E "JoinGroup|SyncGroup|LeaveGroup|GenerationId|assignment|Assign|rebalance|protocol" "$f" \
      > "$OUT/$name.clients/$(basename "$f")" || true
  done
}

RDK=("$CACHE/venv/bin/python" "$HERE/python/capture_consumer.py")

# ---------------------------------------------------------------- scenarios
# Topics (created before any capture): kcp-orders (6 partitions), kcp-audit (3 partitions).

scenario_java-cooperative-sticky() {
  local n=java-cooperative-sticky g=kcp-java-coop
  local common=(group.id=$g partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor)
  start_capture $n
  # c1 + c2 join together (initial rebalance delay 3 s), c3 (static member, only kcp-orders) joins at ~12 s,
  # c1 leaves at ~26 s, c2 leaves at ~40 s, c3 (static: no LeaveGroup on close) stops at ~48 s.
  run_at 0   "$RUN/$n.c1.log" "${JAVA_CLIENT[@]}" consume "$BOOTSTRAP" "${common[@]}" client.id=java-c1 run.ms=26000 -- kcp-orders kcp-audit
  run_at 0.5 "$RUN/$n.c2.log" "${JAVA_CLIENT[@]}" consume "$BOOTSTRAP" "${common[@]}" client.id=java-c2 client.rack=rack-b run.ms=39500 -- kcp-orders kcp-audit
  run_at 12  "$RUN/$n.c3.log" "${JAVA_CLIENT[@]}" consume "$BOOTSTRAP" "${common[@]}" client.id=java-c3 group.instance.id=java-c3-static run.ms=36000 -- kcp-orders
  wait_clients 90
  stop_capture $n
  keep_logs $n
}

rdkafka_scenario() {
  local n=$1 g=$2 strategy=$3
  local common=(group.id=$g partition.assignment.strategy=$strategy debug=cgrp)
  start_capture $n
  # r1 + r2 join together, r3 (client.rack set) joins at ~10 s, r1 leaves at ~22 s, r2 at ~32 s, r3 at ~38 s.
  run_at 0   "$RUN/$n.r1.log" "${RDK[@]}" "$BOOTSTRAP" "${common[@]}" client.id=rdk-r1 run.ms=22000 -- kcp-orders kcp-audit
  run_at 0.5 "$RUN/$n.r2.log" "${RDK[@]}" "$BOOTSTRAP" "${common[@]}" client.id=rdk-r2 run.ms=31500 -- kcp-orders kcp-audit
  run_at 10  "$RUN/$n.r3.log" "${RDK[@]}" "$BOOTSTRAP" "${common[@]}" client.id=rdk-r3 client.rack=rack-c run.ms=28000 -- kcp-orders
  wait_clients 90
  stop_capture $n
  keep_logs $n
}
scenario_rdkafka-range() { rdkafka_scenario rdkafka-range kcp-rdk-range range; }
scenario_rdkafka-cooperative-sticky() { rdkafka_scenario rdkafka-cooperative-sticky kcp-rdk-coop cooperative-sticky; }

scenario_mixed-java-rdkafka() {
  local n=mixed-java-rdkafka g=kcp-mixed
  start_capture $n
  # Java offers cooperative-sticky then range; librdkafka offers range then roundrobin (it refuses to mix
  # eager and cooperative assignors). The only common protocol is range.
  # j1 joins first (so that the Java member leads while it is there) and r1 ~2 s later, inside the broker's 3 s
  # initial rebalance delay; r2 joins at ~10 s, r1 leaves at ~20 s, j1 at ~30 s, r2 at ~36 s.
  run_at 0   "$RUN/$n.j1.log" "${JAVA_CLIENT[@]}" consume "$BOOTSTRAP" group.id=$g client.id=java-j1 \
    partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor,org.apache.kafka.clients.consumer.RangeAssignor \
    run.ms=29000 -- kcp-orders kcp-audit
  run_at 2   "$RUN/$n.r1.log" "${RDK[@]}" "$BOOTSTRAP" group.id=$g client.id=rdk-m1 partition.assignment.strategy=range,roundrobin debug=cgrp run.ms=18000 -- kcp-orders kcp-audit
  run_at 10  "$RUN/$n.r2.log" "${RDK[@]}" "$BOOTSTRAP" group.id=$g client.id=rdk-m2 partition.assignment.strategy=range,roundrobin debug=cgrp run.ms=26000 -- kcp-orders
  wait_clients 90
  stop_capture $n
  keep_logs $n
}

# ---------------------------------------------------------------- main
T0=$SECONDS
install_tools
start_broker
mkdir -p "$OUT"
"${JAVA_CLIENT[@]}" create-topics "$BOOTSTRAP" kcp-orders:6 kcp-audit:3 > "$RUN/create-topics.log"
for s in "${SCENARIOS[@]}"; do
  log "scenario $s"
  "scenario_$s"
done
log "stopping the broker"
kill "$BROKER_PID"; for _ in $(seq 1 60); do kill -0 "$BROKER_PID" 2>/dev/null || break; sleep 0.5; done
BROKER_PID=
log "extracting ground truth and vectors"
LIBRDKAFKA_VERSION=$("$CACHE/venv/bin/python" -c "import confluent_kafka as c; print(c.libversion()[0])")
"$CACHE/venv/bin/python" "$HERE/extract.py" --java-cp "$CACHE/classes:$CACHE/client-lib/*" \
  --kafka-version "$KAFKA_VERSION" --confluent-kafka-version "$CONFLUENT_KAFKA_VERSION" \
  --librdkafka-version "$LIBRDKAFKA_VERSION" "${SCENARIOS[@]}"
log "done in $((SECONDS - T0)) s"
