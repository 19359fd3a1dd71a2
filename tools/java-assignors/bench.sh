#!/usr/bin/env bash
# Times Apache Kafka's Java assignors (kafka-clients pinned in pom.xml) on the issue's shapes A, B, C.
#   tools/java-assignors/bench.sh [--shapes A,B,C] [--assignors range,roundrobin,sticky,cooperative-sticky]
#                                 [--phases first,reassign] [--warmup N] [--iters N] [--budget-s S] [--out FILE] [--decoded]
# Prints one JSON document (ms per assign() call, heap figures) on stdout; progress goes to stderr.
# JAVA_HEAP (default 12g) sets -Xmx: shape A/B hold 1,000,000 partitions x several copies.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mvn -q -B -Dstyle.color=never -f "$here/pom.xml" compile
cp="$here/target/classes:$(cat "$here/target/classpath.txt")"
exec java -Xms${JAVA_HEAP:-12g} -Xmx${JAVA_HEAP:-12g} -XX:+UseG1GC -cp "$cp" kcp.javaref.Main bench "$@"
