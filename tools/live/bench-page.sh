#!/usr/bin/env bash
# The page of `kcp serve` on the bench-describe cluster (issue 36's performance targets): one
# Kafka broker on loopback holding N Stable classic groups x M members with committed offsets and
# lag (the setup of bench-describe.sh and bench-serve.sh), a release `kcp serve`, then
#   - the groups list served: curl, --runs times, plain and gzip (time_total, bytes);
#   - the list and a group page rendered in headless Chromium: tests/serve_page.rs's ignored
#     `bench_page_render` (navigation timing: response, DOM complete, the page's script ready),
#     and the page's weight (HTML + script + style sheet, as sent).
#
#   tools/live/bench-page.sh [--groups 1000] [--members 3] [--version 3.9.1] [--port-base 27000]
#                            [--records 3000] [--runs 50]
#
# Needs curl, chromium and chromedriver. Everything binds 127.0.0.1; everything it started is
# stopped on exit. Raw outputs go to stdout.
set -euo pipefail
groups=1000 members=3 version=3.9.1 port_base=27000 records=3000 runs=50
BENCH_NAME=bench-page BENCH_USAGE=2,14 BENCH_OPTIONS="groups members version port-base records runs"
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh"
bench_parse_args "$@"

bench_build hold_group_members
log "building the browser test (debug: it only drives the browser)"
(cd "$ROOT" && cargo test --quiet --test serve_page --no-run 2>/dev/null)
bench_live_cluster benchpage

port=$((port_base + 50))
"$KCP" serve --bootstrap-server "$bootstrap" --listen "127.0.0.1:$port" --interval-ms 10000 2> "$run/serve.err" &
serve_pid=$!
base=http://127.0.0.1:$port
for _ in $(seq 1 600); do
  n=$(curl -sf "$base/api/v1/clusters" 2>/dev/null | grep -o '"groups":[0-9]*' | cut -d: -f2 || true)
  [ "${n:-0}" -ge "$groups" ] && break
  sleep 0.2
done
echo "== setup: Kafka $version, 1 broker, $groups groups x $members members, topic bench ($members partitions, $records records), committed at 0"
echo "== machine: $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg); kcp $(cd "$ROOT" && git rev-parse --short HEAD) (release)"
echo "== groups in the snapshot: $n"

stats() { sort -n | awk '{a[NR]=$1} END {printf "n=%d min=%.1f p50=%.1f p90=%.1f p99=%.1f max=%.1f ms\n", NR, a[1]*1000, a[int(NR*0.5+0.5)]*1000, a[int(NR*0.9+0.5)]*1000, a[int(NR*0.99+0.5)]*1000, a[NR]*1000}'; }
for mode in plain gzip; do
  flag=""
  [ "$mode" = gzip ] && flag=--compressed
  : > "$run/times-$mode"
  for _ in $(seq 1 "$runs"); do
    curl -s $flag -o /dev/null -w '%{time_total} %{size_download}\n' "$base/" >> "$run/times-$mode"
  done
  echo "== GET / ($mode): $(awk '{print $1}' "$run/times-$mode" | stats), $(tail -n1 "$run/times-$mode" | awk '{print $2}') bytes sent"
done
echo "== /assets/app.js: $(curl -s --compressed -o /dev/null -w '%{size_download}' "$base/assets/app.js") bytes sent, /assets/app.css: $(curl -s --compressed -o /dev/null -w '%{size_download}' "$base/assets/app.css") bytes sent"
echo "== the list in headless Chromium"
(cd "$ROOT" && KCP_PAGE_BENCH_URL="$base/" cargo test --quiet --test serve_page bench_page_render -- --ignored --nocapture 2>&1 | grep '^bench_page')
# (pipefail: grep stops at head's first line with SIGPIPE, not an error here)
group=$(curl -s "$base/api/v1/clusters/default/groups" | { grep -o '"group_id":"[^"]*"' || true; } | sed -n 1p | cut -d'"' -f4)
for mode in plain gzip; do
  flag=""
  [ "$mode" = gzip ] && flag=--compressed
  : > "$run/group-times-$mode"
  for _ in $(seq 1 "$runs"); do
    curl -s $flag -o /dev/null -w '%{time_total} %{size_download}\n' "$base/groups/default/$group" >> "$run/group-times-$mode"
  done
  echo "== GET /groups/default/$group ($mode): $(awk '{print $1}' "$run/group-times-$mode" | stats), $(tail -n1 "$run/group-times-$mode" | awk '{print $2}') bytes sent"
done
echo "== a group page in headless Chromium ($group)"
(cd "$ROOT" && KCP_PAGE_BENCH_URL="$base/groups/default/$group" cargo test --quiet --test serve_page bench_page_render -- --ignored --nocapture 2>&1 | grep '^bench_page')
