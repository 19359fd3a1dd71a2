#!/usr/bin/env bash
# Checks the committed corpus without regenerating it: recomputes, with Apache
# Kafka's Java client (kafka-clients 3.9.1), canonical / expect / lenient_expect /
# readers of every vector in the corpus directories and fails if any committed
# file differs. Needs java 17 + maven (Maven Central on the first run).
# With --rebuild it also reruns every producer (tools/corpus/build-corpus.sh) and
# fails if the regenerated corpus differs from the committed one (needs go, node,
# python3 and the package registries).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
T="$ROOT/tools/corpus"
V="$ROOT/testdata/vectors"

if [ "${1:-}" = "--rebuild" ]; then
  "$T/build-corpus.sh"
  git -C "$ROOT" diff --exit-code -- testdata/vectors tools/corpus/corpus-dirs.txt
  untracked="$(git -C "$ROOT" ls-files --others --exclude-standard -- testdata/vectors)"
  if [ -n "$untracked" ]; then echo "untracked regenerated vectors:"; echo "$untracked"; exit 1; fi
  echo "corpus rebuild: identical to the committed files"
fi

log="$(mktemp)"
(cd "$T/java-reader" && mvn -q -B package -DskipTests) >"$log" 2>&1 || { cat "$log"; exit 1; }
rm -f "$log"
dirs=()
while read -r d; do [ -n "$d" ] && dirs+=("$V/$d"); done <"$T/corpus-dirs.txt"
[ "${#dirs[@]}" -gt 0 ] || { echo "no corpus directories under $V"; exit 1; }
java -cp "$T/java-reader/target/classes:$T/java-reader/target/dependency/*" kcp.corpus.CorpusReader --check "${dirs[@]}"
