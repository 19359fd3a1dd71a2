#!/usr/bin/env bash
# Soak of `kcp serve` with group churn (issue 35): runs the server against a cluster for
# DURATION_S seconds while groups are created (offsets committed with Kafka's own tool) and
# deleted, members join and leave (`kcp group join`); prints the server's RSS at the start and the
# end, the group series left in /metrics against the groups that exist, and ends it with SIGTERM.
#
#   tools/live/serve-soak.sh KCP_BINARY CLUSTER_NAME BOOTSTRAP [DURATION_S]
# (CLUSTER_NAME as kafka.sh knows it, e.g. k41, with KCP_LIVE_RUN set as for kafka.sh.)
set -euo pipefail
kcp=$1 cluster=$2 bootstrap=$3 duration=${4:-600}
ctl="$(dirname "$0")/kafka.sh"
topic="soak-$$"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
bash "$ctl" java "$cluster" LiveAdmin --bootstrap "$bootstrap" create-topic "$topic" 6 1 >/dev/null
bash "$ctl" tool "$cluster" org.apache.kafka.tools.ProducerPerformance --topic "$topic" --num-records 3000 \
  --record-size 20 --throughput -1 --producer-props "bootstrap.servers=$bootstrap" >/dev/null
"$kcp" serve --bootstrap-server "$bootstrap" --listen "127.0.0.1:$port" --interval-ms 1000 2>/tmp/serve-soak-$$.err &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 5
rss() { awk '/VmRSS/ {print $2 " kB"}' "/proc/$server/status"; }
echo "start: RSS $(rss)"
groups() { curl -s "http://127.0.0.1:$port/api/v1/clusters/default/groups" | grep -o '"group_id"' | wc -l; }
start=$SECONDS n=0
while (( SECONDS - start < duration )); do
  n=$((n + 1))
  g="soak-$$-$n"
  bash "$ctl" tool "$cluster" consumer-groups --bootstrap-server "$bootstrap" --group "$g" \
    --topic "$topic" --reset-offsets --to-offset $((n % 400)) --execute >/dev/null 2>&1 || true
  # A member that joins and leaves again after 5 s.
  timeout 20 "$kcp" group join --bootstrap-server "$bootstrap" --group "$g-m" --topics "$topic" \
    --duration-s 5 >/dev/null 2>&1 &
  # Delete the groups made three rounds ago (the member's group is empty by then).
  if (( n > 3 )); then
    bash "$ctl" tool "$cluster" consumer-groups --bootstrap-server "$bootstrap" --delete \
      --group "soak-$$-$((n - 3))" --group "soak-$$-$((n - 3))-m" >/dev/null 2>&1 || true
  fi
  if (( n % 20 == 0 )); then echo "$((SECONDS - start)) s: $n groups made, $(groups) served, RSS $(rss)"; fi
done
wait_members=$(jobs -p | grep -v "^$server$" || true)
[ -z "$wait_members" ] || wait $wait_members 2>/dev/null || true
# Leave the cluster's state settled, then compare the series with the groups that exist.
for i in $(seq $((n - 2)) $n); do
  bash "$ctl" tool "$cluster" consumer-groups --bootstrap-server "$bootstrap" --delete --group "soak-$$-$i" \
    --group "soak-$$-$i-m" >/dev/null 2>&1 || true
done
sleep 20
echo "end: RSS $(rss) after $n groups made and deleted"
metrics=$(curl -s "http://127.0.0.1:$port/metrics")
left=$( (grep -o "group=\"soak-$$-[0-9]*\(-m\)\?\"" <<< "$metrics" || true) | sort -u | wc -l)
members=$( (grep -c "^kcp_consumergroup_member_lag{.*group=\"soak-$$" <<< "$metrics") || true)
series=$(grep -vc '^#' <<< "$metrics" || true)
echo "series of soak groups left in /metrics: $left group(s), $members member series ($series series in all)"
kill -TERM $server
wait $server && echo "SIGTERM: exit 0" || echo "SIGTERM: exit $?"
trap - EXIT
