#!/usr/bin/env bash
# Regenerates the cross-implementation corpus under testdata/vectors/:
#   1. runs every producer (each calls a real client's public encoder, pinned in
#      its go.mod / package-lock.json / requirements.txt) to write draft vectors;
#   2. runs the Java reader (kafka-clients 3.9.1) over the drafts to fill in
#      canonical / expect / lenient_expect / readers.
# Only the producer directories owned by this corpus are deleted and rewritten.
#
# Needs: go, node+npm, python3 (venv), java 17 + maven; network access to the Go
# module proxy, npm, PyPI and Maven Central on the first run.
# Usage: tools/corpus/build-corpus.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
T="$ROOT/tools/corpus"
V="$ROOT/testdata/vectors"
mkdir -p "$V"

owned_dirs() {
  (cd "$V" && ls -d franz-go-* sarama-* shopify-sarama-* kafka-go-* kafkajs-* kafka-node-* platformatic-kafka-* kafka-python-* aiokafka-* handbuilt-malformed 2>/dev/null || true)
}

echo "== removing previous corpus directories"
for d in $(owned_dirs); do rm -rf "${V:?}/$d"; done

echo "== Go producers"
for p in franz-go sarama sarama-legacy kafka-go; do
  (cd "$T/$p" && go run -mod=readonly . "$V")
done

echo "== kafkajs, kafka-node, @platformatic/kafka"
(cd "$T/kafkajs" && npm ci --no-audit --no-fund --silent --ignore-scripts && node produce.js "$V")
(cd "$T/kafka-node" && npm ci --no-audit --no-fund --silent --ignore-scripts && node produce.js "$V")
(cd "$T/platformatic-kafka" && npm ci --no-audit --no-fund --silent --ignore-scripts && node produce.mjs "$V")

for p in kafka-python aiokafka; do
  echo "== $p"
  (
    cd "$T/$p"
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
    PYTHONHASHSEED=0 .venv/bin/python produce.py "$V"
  )
done

echo "== hand-built malformed payloads"
python3 "$T/handbuilt/produce.py" "$V"

echo "== Java reader (Apache Kafka kafka-clients)"
log="$(mktemp)"
(cd "$T/java-reader" && mvn -q -B package -DskipTests) >"$log" 2>&1 || { cat "$log"; exit 1; }
rm -f "$log"
dirs=()
for d in $(owned_dirs); do dirs+=("$V/$d"); done
java -cp "$T/java-reader/target/classes:$T/java-reader/target/dependency/*" kcp.corpus.CorpusReader "${dirs[@]}"

echo "== per-directory counts"
for d in $(owned_dirs); do printf '%4d  %s\n' "$(ls "$V/$d"/*.json | wc -l)" "$d"; done

echo "== CORPUS.md index"
python3 "$T/summarize.py"
