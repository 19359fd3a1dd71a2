#!/usr/bin/env bash
# Regenerates testdata/assignor/java-parity/ by running Apache Kafka's Java assignors (kafka-clients from
# Maven Central, version pinned in pom.xml) on the seeded scenario set, twice, and checks both runs agree.
#   tools/java-assignors/regenerate.sh           rewrite the committed files
#   tools/java-assignors/regenerate.sh --check   regenerate into a temp dir and fail if the committed files differ
# Needs: JDK 17+, Maven (network access to Maven Central on the first run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dest="$root/testdata/assignor/java-parity"
check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

mvn -q -B -Dstyle.color=never -f "$here/pom.xml" compile
cp="$here/target/classes:$(cat "$here/target/classpath.txt")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

java -cp "$cp" kcp.javaref.Main generate "$tmp/a"
java -cp "$cp" kcp.javaref.Main generate "$tmp/b"
if ! diff -r -q "$tmp/a" "$tmp/b"; then
  echo "regenerate: two runs differ: the generator is not deterministic" >&2
  exit 1
fi

if [ "$check" = 1 ]; then
  pass=0; fail=0
  for f in "$tmp/a"/*.json; do
    name=$(basename "$f")
    if cmp -s "$f" "$dest/$name"; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1)); echo "differs or missing: testdata/assignor/java-parity/$name" >&2
    fi
  done
  for f in "$dest"/[0-9][0-9][0-9]-*.json; do
    [ -e "$tmp/a/$(basename "$f")" ] || { fail=$((fail + 1)); echo "stale file: $f" >&2; }
  done
  echo "checked testdata/assignor/java-parity against a fresh run of kafka-clients $(grep -m1 -o '<kafka.version>[^<]*' "$here/pom.xml" | cut -d'>' -f2)"
  echo "java-parity: $pass passed, $fail failed"
  [ "$fail" = 0 ] || exit 1
else
  mkdir -p "$dest"
  find "$dest" -maxdepth 1 -name '[0-9][0-9][0-9]-*.json' -delete
  cp "$tmp/a"/*.json "$dest/"
  echo "regenerate: wrote $(ls "$dest" | wc -l) files to testdata/assignor/java-parity (two runs identical)"
fi
