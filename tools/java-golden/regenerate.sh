#!/usr/bin/env bash
# Regenerates the Apache Kafka Java golden vectors under testdata/vectors/java-<kafka version>/.
#
#   tools/java-golden/regenerate.sh           build against each pinned kafka-clients release and rewrite
#                                             testdata/vectors/java-<version>/*.json
#   tools/java-golden/regenerate.sh --check   regenerate into a temporary directory and diff against the
#                                             committed files; exit 1 on any difference
#
# Needs a JDK 17+ and Maven; kafka-clients is fetched from Maven Central into the default ~/.m2 repository.
set -euo pipefail

KAFKA_VERSIONS=(3.9.1 4.1.1)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
committed="$repo/testdata/vectors"

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

if [[ $check -eq 1 ]]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
else
  out="$committed"
  mkdir -p "$out"
fi

for v in "${KAFKA_VERSIONS[@]}"; do
  # Debian's Maven 3.8 prints bare ANSI resets even with -q -B; strip them (pipefail keeps mvn's status).
  mvn -q -B -Dstyle.color=never -f "$here/pom.xml" -Dkafka.version="$v" package 2>&1 | sed -e 's/\x1b\[0m//g'
  build="$here/target/$v"
  # kafka-clients logs through slf4j-api without a binding; drop slf4j's own start-up notice only.
  java -cp "$build/classes:$(cat "$build/classpath.txt")" kcp.golden.GenerateVectors "$out" \
    2> >(grep -v '^SLF4J:' >&2)
  if [[ ! -d "$out/java-$v" ]]; then
    echo "error: kafka-clients on the classpath did not report version $v" >&2
    exit 1
  fi
done

if [[ $check -eq 1 ]]; then
  status=0
  for v in "${KAFKA_VERSIONS[@]}"; do
    if ! diff -r "$out/java-$v" "$committed/java-$v" >/dev/null 2>&1; then
      echo "DIFFERENT: testdata/vectors/java-$v does not match a fresh regeneration:" >&2
      diff -r "$out/java-$v" "$committed/java-$v" 2>&1 | head -40 >&2 || true
      status=1
    fi
  done
  # A committed java-<release> directory for a release no longer generated is stale too
  # (other producers' directories, such as java-client-capture-*, belong to other tools).
  for d in "$committed"/java-[0-9]*; do
    [[ -d "$d" ]] || continue
    name="$(basename "$d")"
    if [[ ! -d "$out/$name" ]]; then
      echo "DIFFERENT: testdata/vectors/$name is not produced by regenerate.sh" >&2
      status=1
    fi
  done
  if [[ $status -eq 0 ]]; then
    echo "java golden vectors are up to date (${KAFKA_VERSIONS[*]})"
  else
    echo "run tools/java-golden/regenerate.sh and commit the result" >&2
  fi
  exit $status
fi
