#!/usr/bin/env bash
# Regenerates the cross-implementation corpus under testdata/vectors/:
#   1. runs every producer (each calls a real client's public encoder, pinned in
#      its go.mod / package-lock.json / requirements.txt) to write draft vectors;
#   2. runs the Java reader (kafka-clients 3.9.1) over the drafts to fill in
#      canonical / expect / lenient_expect / readers.
# Everything is produced in a staging directory first; then only the directories
# listed in tools/corpus/corpus-dirs.txt (the previous run's output) are replaced,
# and that list is rewritten. Other vector directories are never touched.
#
# Needs: go, node+npm, python3 (venv), java 17 + maven; network access to the Go
# module proxy, npm, PyPI and Maven Central on the first run.
# Usage: tools/corpus/build-corpus.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
T="$ROOT/tools/corpus"
V="$ROOT/testdata/vectors"
M="$T/corpus-dirs.txt"
mkdir -p "$V"
S="$(mktemp -d)"
trap 'rm -rf "$S"' EXIT

echo "== Go producers"
for p in franz-go sarama sarama-legacy kafka-go; do
  (cd "$T/$p" && go run -mod=readonly . "$S")
done

echo "== kafkajs, kafka-node, @platformatic/kafka"
(cd "$T/kafkajs" && npm ci --no-audit --no-fund --silent --ignore-scripts && node produce.js "$S")
(cd "$T/kafka-node" && npm ci --no-audit --no-fund --silent --ignore-scripts && node produce.js "$S")
(cd "$T/platformatic-kafka" && npm ci --no-audit --no-fund --silent --ignore-scripts && node produce.mjs "$S")

for p in kafka-python aiokafka; do
  echo "== $p"
  (
    cd "$T/$p"
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
    PYTHONHASHSEED=0 .venv/bin/python produce.py "$S"
  )
done

echo "== hand-built malformed payloads"
python3 "$T/handbuilt/produce.py" "$S"

echo "== Java reader (Apache Kafka kafka-clients)"
log="$(mktemp)"
(cd "$T/java-reader" && mvn -q -B package -DskipTests) >"$log" 2>&1 || { cat "$log"; exit 1; }
rm -f "$log"
java -cp "$T/java-reader/target/classes:$T/java-reader/target/dependency/*" kcp.corpus.CorpusReader "$S"

echo "== replacing the corpus directories"
if [ -f "$M" ]; then
  while read -r d; do [ -n "$d" ] && rm -rf "${V:?}/$d"; done <"$M"
fi
(cd "$S" && ls -d */ | tr -d / | LC_ALL=C sort) >"$M"
while read -r d; do
  rm -rf "${V:?}/$d"
  mv "$S/$d" "$V/$d"
  printf '%4d  %s\n' "$(ls "$V/$d"/*.json | wc -l)" "$d"
done <"$M"

echo "== CORPUS.md index"
python3 "$T/summarize.py"
