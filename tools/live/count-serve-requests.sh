#!/usr/bin/env bash
# The requests of each `kcp serve` collection against a live cluster (issue 35's floor), captured
# with tcpdump on loopback and counted by count-requests.py: KCP serves BOOTSTRAP with client.id
# kcp-serve-count and --interval-ms 2000 for SECONDS, then one line per collection.
#
#   tools/live/count-serve-requests.sh KCP BOOTSTRAP_HOST:PORT [SECONDS] [HTTP_PORT]
#
# Needs tcpdump (root or CAP_NET_RAW). Everything it started is stopped on exit.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kcp=$1 bootstrap=$2 seconds=${3:-15} http=${4:-27099}
port=${bootstrap##*:}
run=$(mktemp -d /tmp/kcp-count-serve.XXXXXX)
dump_pid="" serve_pid=""
cleanup() { set +e; for p in $serve_pid $dump_pid; do kill "$p" 2>/dev/null; done; rm -rf "$run"; }
trap cleanup EXIT
printf 'client.id=kcp-serve-count\n' > "$run/client.properties"
tcpdump -i lo -s 0 -U -w "$run/serve.pcap" "tcp dst port $port" 2> "$run/tcpdump.err" &
dump_pid=$!
sleep 1
"$kcp" serve --bootstrap-server "$bootstrap" --command-config "$run/client.properties" \
  --listen "127.0.0.1:$http" --interval-ms 2000 --duration-s "$seconds" 2> "$run/serve.err" &
serve_pid=$!
wait "$serve_pid" || true
serve_pid=""
curl -s -o /dev/null "http://127.0.0.1:$http/metrics" || true
sleep 1
kill "$dump_pid"; wait "$dump_pid" 2>/dev/null || true; dump_pid=""
python3 "$HERE/count-requests.py" "$run/serve.pcap" "$port" kcp-serve-count 1
