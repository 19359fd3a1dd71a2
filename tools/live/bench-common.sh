# Sourced by the benchmark scripts (tools/live/bench-describe.sh, bench-serve.sh, bench-page.sh,
# tools/bench-serve-scale.sh, tools/bench-serve-scrape.sh, tools/bench-serve-rss.sh): their
# argument parsing, builds, clusters and cleanup, written once.
#
# A script sets, before sourcing it:
#   BENCH_NAME      its name, for log lines and its run directory
#   BENCH_OPTIONS   the options it takes with a value, without dashes ("groups port-base runs"):
#                   --port-base V sets $port_base (dashes become underscores); set the defaults
#                   before calling bench_parse_args
#   BENCH_FLAGS     the options it takes without a value ("kcp-only" sets $kcp_only to 1)
#   BENCH_USAGE     the line range of its own header comment printed on a bad option ("2,17")
# then calls `bench_parse_args "$@"`. Everything it starts through these functions (and the
# processes in $serve_pid, $exporter_pid, $dump_pid, $fake_pid, $holder_pid) is stopped on exit,
# and its run directory ($run, also $KCP_LIVE_RUN) is removed.
# shellcheck shell=bash

BENCH_COMMON_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_COMMON_DIR/../.." && pwd)
target=${CARGO_TARGET_DIR:-$ROOT/target}
serve_pid="" exporter_pid="" dump_pid="" fake_pid="" holder_pid="" bench_cluster=""

log() { echo "[$BENCH_NAME $(date -u +%H:%M:%S)] $*" >&2; }

bench_usage() { sed -n "${BENCH_USAGE}p" "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# bench_parse_args "$@": the options named in BENCH_OPTIONS and BENCH_FLAGS, nothing else.
bench_parse_args() {
  local name
  while [ $# -gt 0 ]; do
    name=${1#--}
    if [ "$name" = "$1" ]; then bench_usage; fi
    if [[ " ${BENCH_OPTIONS:-} " == *" $name "* ]] && [ $# -ge 2 ]; then
      printf -v "${name//-/_}" '%s' "$2"
      shift 2
    elif [[ " ${BENCH_FLAGS:-} " == *" $name "* ]]; then
      printf -v "${name//-/_}" '%s' 1
      shift
    else
      bench_usage
    fi
  done
}

# The run directory; the live scripts' brokers keep their state in it (KCP_LIVE_RUN).
export KCP_LIVE_RUN
KCP_LIVE_RUN=$(mktemp -d "/tmp/kcp-$BENCH_NAME.XXXXXX")
# Removed on exit by this name, which no script reuses (bench-describe.sh counts its runs in $run).
bench_run_dir=$KCP_LIVE_RUN
run=$KCP_LIVE_RUN

bench_cleanup() {
  set +e
  local p
  for p in $serve_pid $exporter_pid $dump_pid $fake_pid $holder_pid; do kill "$p" 2>/dev/null; done
  exec 3>&- 2>/dev/null
  [ -n "$bench_cluster" ] && "$BENCH_COMMON_DIR/kafka.sh" stop "$bench_cluster" >/dev/null 2>&1
  rm -rf "$bench_run_dir"
}
trap bench_cleanup EXIT

# bench_build EXAMPLE...: builds the release kcp and these examples, and sets $KCP and $EXAMPLES
# (the examples' directory). KCP_BENCH_KCP (a kcp binary) and KCP_BENCH_FAKE (a fake_cluster
# binary), copies of an earlier build for before/after runs, are used as they are, not built.
bench_build() {
  local args=() e
  [ -z "${KCP_BENCH_KCP:-}" ] && args+=(--bin kcp)
  for e in "$@"; do
    [ "$e" = fake_cluster ] && [ -n "${KCP_BENCH_FAKE:-}" ] && continue
    args+=(--example "$e")
  done
  if [ ${#args[@]} -gt 0 ]; then
    log "building ${args[*]} (release)"
    (cd "$ROOT" && cargo build --release --quiet "${args[@]}")
  fi
  KCP=${KCP_BENCH_KCP:-$target/release/kcp}
  EXAMPLES=$target/release/examples
}

# bench_live_cluster NAME: one Kafka $version broker on 127.0.0.1:$port_base named NAME, topic
# `bench` of $members partitions with $records records, and $groups Stable classic groups of
# $members members (examples/hold_group_members.rs), every group's leader having committed
# offset 0 for every partition once it synced. Sets $bootstrap and $holder_pid; the holder runs
# until the script ends (its stdin, fd 3, closes). Needs bench_build hold_group_members first.
bench_live_cluster() {
  bench_cluster=$1
  local kafka=$BENCH_COMMON_DIR/kafka.sh
  "$kafka" fetch >&2
  log "starting one Kafka $version broker on 127.0.0.1:$port_base"
  "$kafka" start "$bench_cluster" --version "$version" --port-base "$port_base" >&2
  bootstrap=127.0.0.1:$port_base
  "$kafka" java "$bench_cluster" LiveAdmin --bootstrap "$bootstrap" create-topic bench "$members" >/dev/null
  log "writing $records records"
  "$kafka" tool "$version" org.apache.kafka.tools.ProducerPerformance --topic bench --num-records "$records" \
    --record-size 20 --throughput -1 --producer-props "bootstrap.servers=$bootstrap" batch.size=100 linger.ms=0 >/dev/null
  # The first group request creates __consumer_offsets: wait until a coordinator answers.
  local _
  for _ in $(seq 1 120); do
    "$KCP" group describe --bootstrap-server "$bootstrap" --group bench-warmup --timeout-ms 5000 2>/dev/null \
      | grep -q '"not_found"' && break
    sleep 0.5
  done
  log "forming $groups groups of $members members"
  local fifo=$run/holder.stdin
  mkfifo "$fifo"
  "$EXAMPLES/hold_group_members" --bootstrap "$bootstrap" --topic bench --partitions "$members" --groups "$groups" \
    --members "$members" --commit-offset 0 --hold-s 1800 < "$fifo" > "$run/holder.out" 2> "$run/holder.err" &
  holder_pid=$!
  exec 3> "$fifo"   # the holder runs until this closes
  for _ in $(seq 1 600); do
    grep -q ready "$run/holder.out" 2>/dev/null && break
    kill -0 "$holder_pid" 2>/dev/null || { cat "$run/holder.err" >&2; exit 1; }
    sleep 0.5
  done
  grep -q ready "$run/holder.out" || { log "the groups did not form in 300 s"; exit 1; }
  log "$(cat "$run/holder.out")"
}

# bench_fake_cluster GROUPS PARTITIONS PORT: examples/fake_cluster.rs on 127.0.0.1:PORT (GROUPS
# classic groups x 3 members, each on its own topic of PARTITIONS partitions); its request counts
# go to $run/fake.out. Sets $fake_pid. Needs bench_build fake_cluster first (or KCP_BENCH_FAKE,
# the fake_cluster binary of an earlier build).
bench_fake_cluster() {
  "${KCP_BENCH_FAKE:-$EXAMPLES/fake_cluster}" --port "$3" --groups "$1" --partitions "$2" > "$run/fake.out" 2> "$run/fake.err" &
  fake_pid=$!
  sleep 0.5
}

# bench_stop VAR: stops the process whose pid is in the variable VAR (serve_pid, fake_pid...).
bench_stop() {
  local pid=${!1}
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; fi
  printf -v "$1" '%s' ""
}

# bench_rss PID: its VmRSS and VmHWM.
bench_rss() { awk '/^VmRSS|^VmHWM/ {printf "%s %s kB  ", $1, $2}' "/proc/$1/status"; }

# bench_wait_http URL: until it answers 2xx (60 s at most).
bench_wait_http() { local _; for _ in $(seq 1 600); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; return 1; }

# bench_machine: cores, load, commit.
bench_machine() { echo "$(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg); kcp $(cd "$ROOT" && git rev-parse --short HEAD)"; }
