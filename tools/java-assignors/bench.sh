#!/usr/bin/env bash
# Times Apache Kafka's Java assignors (kafka-clients pinned in pom.xml) on the issue's shapes A, B, C and
# on the rack shapes of benches/assignors.rs (java-rack-uniform-100k-2000, java-rack-nonequal-100k-2000,
# java-rack-mixed-halves-10k-500, java-rack-mixed-halves-20k-250; phase first = our fresh, reassign = our existing).
#   tools/java-assignors/bench.sh [--shapes A,B,C,java-rack-...] [--assignors range,roundrobin,sticky,cooperative-sticky]
#                                 [--phases first,reassign] [--warmup N] [--iters N] [--budget-s S] [--out FILE] [--decoded]
# Prints one JSON document (ms per assign() call, heap figures) on stdout; progress goes to stderr.
# JAVA_HEAP (default 12g) sets -Xmx: shape A/B hold 1,000,000 partitions x several copies.
# JAVA_ASSIGNORS_SKIP_BUILD=1 skips the Maven step (classes built before, e.g. by tools/bench-side-by-side.sh,
# so that no Maven JVM runs just before the timed part).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${JAVA_ASSIGNORS_SKIP_BUILD:-}" ]; then
  mvn -q -B -Dstyle.color=never -f "$here/pom.xml" compile
fi
cp="$here/target/classes:$(cat "$here/target/classpath.txt")"
exec java -Xms${JAVA_HEAP:-12g} -Xmx${JAVA_HEAP:-12g} -XX:+UseG1GC -cp "$cp" kcp.javaref.Main bench "$@"
