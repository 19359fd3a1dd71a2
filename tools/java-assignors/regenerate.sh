#!/usr/bin/env bash
# Regenerates testdata/assignor/java-parity/, java-parity-racks/, java-parity-racks-large/ and java-stale-claims/ by running Apache Kafka's Java assignors (kafka-clients from
# Maven Central, version pinned in pom.xml) on the seeded scenario sets, twice, and checks both runs agree.
#   tools/java-assignors/regenerate.sh           rewrite the committed files
#   tools/java-assignors/regenerate.sh --check   regenerate into a temp dir and fail if the committed files differ
# Needs: JDK 17+, Maven (network access to Maven Central on the first run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
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

# Four sets: the hand-built families (java-parity/), the seeded rack-aware groups (java-parity-racks/), the
# seeded rack-aware groups of 257-1000 members (java-parity-racks-large/: about 3 minutes per run) and the
# stale-claim hand-over cases of issue 27 (java-stale-claims/).
status=0
for set in java-parity:generate java-parity-racks:generate-racks java-parity-racks-large:generate-racks-large \
    java-stale-claims:generate-stale; do
  name=${set%%:*}
  command=${set#*:}
  dest="$root/testdata/assignor/$name"
  java -cp "$cp" kcp.javaref.Main "$command" "$tmp/$name-a"
  # A check compares with the committed files (a second run would prove nothing more); a rewrite runs
  # twice so that a nondeterministic generator never reaches the committed set.
  [ "$check" = 1 ] || java -cp "$cp" kcp.javaref.Main "$command" "$tmp/$name-b"
  if [ "$check" = 0 ] && ! diff -r -q "$tmp/$name-a" "$tmp/$name-b"; then
    echo "regenerate: two runs of $name differ: the generator is not deterministic" >&2
    exit 1
  fi
  if [ "$check" = 1 ]; then
    pass=0; fail=0
    for f in "$tmp/$name-a"/*.json; do
      file=$(basename "$f")
      if cmp -s "$f" "$dest/$file"; then
        pass=$((pass + 1))
      else
        fail=$((fail + 1)); echo "differs or missing: testdata/assignor/$name/$file" >&2
      fi
    done
    for f in "$dest"/[0-9][0-9][0-9]-*.json; do
      [ -e "$tmp/$name-a/$(basename "$f")" ] || { fail=$((fail + 1)); echo "stale file: $f" >&2; }
    done
    echo "checked testdata/assignor/$name against a fresh run of kafka-clients $(grep -m1 -o '<kafka.version>[^<]*' "$here/pom.xml" | cut -d'>' -f2)"
    echo "$name: $pass passed, $fail failed"
    [ "$fail" = 0 ] || status=1
  else
    mkdir -p "$dest"
    find "$dest" -maxdepth 1 -name '[0-9][0-9][0-9]-*.json' -delete
    cp "$tmp/$name-a"/*.json "$dest/"
    echo "regenerate: wrote $(ls "$dest"/[0-9][0-9][0-9]-*.json | wc -l) files to testdata/assignor/$name (two runs identical)"
  fi
done
exit $status
