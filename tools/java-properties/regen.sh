#!/usr/bin/env bash
# Writes tests/properties_corpus/*.java-expected: what Java's Properties.load reads from each
# *.properties file there. Needs a JDK (11 or later).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
javac -d "$out" "$here/PropertiesDump.java"
java -cp "$out" PropertiesDump "$here/../../tests/properties_corpus"
