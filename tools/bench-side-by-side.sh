#!/usr/bin/env bash
# One quiet wall-clock session: our codec and assignor benchmarks on two checkouts (before / after),
# then the peers (franz-go, Java's assignors), back to back, logging `date` and `uptime` before
# each step. Everything is built first; the timed part runs prebuilt binaries only (no cargo, no
# Maven, no `go test` compile).
#
#   tools/bench-side-by-side.sh BEFORE_DIR AFTER_DIR            the full session (~20-23 min timed; it prints its estimate)
#   tools/bench-side-by-side.sh BEFORE_DIR AFTER_DIR --build-only   build, check the bench ids match, print the plan
#   tools/bench-side-by-side.sh BEFORE_DIR AFTER_DIR --quick    every step with tiny settings (a proof that it runs;
#                                                               its figures mean nothing)
#   tools/bench-side-by-side.sh --summarize BEFORE.txt AFTER.txt [JAVA.json...]
#                                                               the table of medians from two criterion outputs
#
# BEFORE_DIR / AFTER_DIR are checkouts of this crate (e.g. /work/wt/before at 90ecd51 and main).
# The peers run from AFTER_DIR's tools/ (the Java rack shapes exist there only). Raw outputs go to
# AFTER_DIR/benches/results/ (criterion text, the session log, the summary),
# AFTER_DIR/tools/franz-bench/results/ and AFTER_DIR/tools/java-assignors/results/, all named with
# the UTC start time; the script prints every path at the end.
#
# Criterion keeps no state between the two sides: each tree builds in its own target directory
# (CARGO_TARGET_DIR=TREE/target) and every run writes its criterion data to a fresh CRITERION_HOME
# (TREE/target/criterion-side-by-side-STAMP), so no "change:" lines compare with older runs.
#
# Environment: JAVA_HEAP (default 8g), SBS_FILTER (the criterion regex for the assignor bench,
# default below), GLIBC_TUNABLES passes through to everything (BENCHMARKS.md's warm-heap table).
set -euo pipefail

# Assignor bench ids (criterion regex, matched against GROUP/SHAPE/CASE): shapes A, B, C
# (java-large-uniform-1M-2000, java-large-nonequal-1M-2000, java-mixed-halves-20k-500) for all four
# assignors as BENCHMARKS.md's tables have them, the franz shapes and the rack shapes for the sticky
# assignors, the rack shapes for range (its rack-aware path). Every id also has its -views twin.
# (Every group name appears in the regex: the bench builds only the groups it names.)
default_filter='^(cooperative-sticky|sticky)/|^range/java-|^roundrobin/java-(large|mixed)'

summarize() {
  # Medians (the middle of criterion's [low median high]) of two criterion text outputs, id by id.
  local before=$1 after=$2
  shift 2
  awk -v BEFORE="$before" '
    function ns(v, u) { return u == "ps" ? v / 1000 : u == "ns" ? v : (u == "µs" || u == "us") ? v * 1e3 : u == "ms" ? v * 1e6 : v * 1e9 }
    function pretty(x) { return x >= 1e9 ? sprintf("%.3g s", x / 1e9) : x >= 1e6 ? sprintf("%.3g ms", x / 1e6) : x >= 1e3 ? sprintf("%.3g us", x / 1e3) : sprintf("%.3g ns", x) }
    FNR == 1 { side = (FILENAME == BEFORE) ? "b" : "a"; id = ""; want = 0 }
    /^Benchmarking / || /^Found / || /^Warning/ || /^ *(Finished|Running)/ || /^Gnuplot/ { next }
    /^[^ ]/ {
      line = $0
      if (index(line, "time:") > 0) { id = substr(line, 1, index(line, "time:") - 1); sub(/ +$/, "", id); want = 1 }
      else { id = line; want = 1; next }
    }
    want && /time: +\[/ {
      s = $0; sub(/.*time: +\[/, "", s); split(s, f, " ")
      v = ns(f[3] + 0, f[4])
      if (side == "b") b[id] = v; else { a[id] = v; if (!(id in seen)) { order[++n] = id; seen[id] = 1 } }
      want = 0
    }
    END {
      for (id in b) if (!(id in seen)) { order[++n] = id; seen[id] = 1 }
      printf "%-58s %12s %12s %9s\n", "bench id (median)", "before", "after", "change"
      for (i = 1; i <= n; i++) {
        id = order[i]
        bs = (id in b) ? pretty(b[id]) : "-"; as = (id in a) ? pretty(a[id]) : "-"
        ch = ((id in b) && (id in a)) ? sprintf("%+.1f %%", (a[id] / b[id] - 1) * 100) : "-"
        printf "%-58s %12s %12s %9s\n", id, bs, as, ch
      }
    }' "$before" "$after"
  local json
  for json in "$@"; do
    [ -s "$json" ] || continue
    echo
    echo "Java ($json): ms per assign(), mean of the measured runs (first = our fresh, reassign = our existing;"
    echo "A = java-large-uniform-1M-2000, B = java-large-nonequal-1M-2000, C = java-mixed-halves-20k-500)"
    grep -o '"shape": "[^"]*"\|"phase": "[^"]*"\|"assignor": "[^"]*"\|"ms_per_op": [0-9.NaN]*\|"rack_matched_partitions": [0-9]*\|"partitions_assigned": [0-9]*' "$json" |
      awk -F': ' '{ gsub(/"/, "", $1); gsub(/"/, "", $2) }
        $1 == "shape" { if (row != "") print row; row = sprintf("%-32s", $2) }
        $1 == "phase" { row = row sprintf(" %-9s", $2) }
        $1 == "assignor" { row = row sprintf(" %-19s", $2) }
        $1 == "ms_per_op" { row = row sprintf(" %10.2f ms", $2) }
        $1 == "partitions_assigned" { row = row sprintf("  assigned %d", $2) }
        $1 == "rack_matched_partitions" { row = row sprintf(", on a replica rack %d", $2) }
        END { if (row != "") print row }'
  done
}

if [ "${1:-}" = "--summarize" ]; then
  shift
  [ $# -ge 2 ] || { echo "usage: $0 --summarize BEFORE.txt AFTER.txt [JAVA.json...]" >&2; exit 2; }
  summarize "$@"
  exit 0
fi

usage() { sed -n '2,13p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
before=$(cd "$1" && pwd) || usage
after=$(cd "$2" && pwd) || usage
mode=full
case "${3:-}" in
  "") ;;
  --build-only) mode=build-only ;;
  --quick) mode=quick ;;
  *) usage ;;
esac
unset CARGO_TARGET_DIR CRITERION_HOME

stamp=$(date -u +%Y-%m-%d-%H%M)
[ "$mode" = quick ] && stamp="$stamp-quick"
results="$after/benches/results"
franz_results="$after/tools/franz-bench/results"
java_results="$after/tools/java-assignors/results"
mkdir -p "$results" "$franz_results" "$java_results"
log="$results/side-by-side-$stamp-session.log"
filter=${SBS_FILTER:-$default_filter}
java_rack_shapes=java-rack-uniform-100k-2000,java-rack-nonequal-100k-2000,java-rack-mixed-halves-10k-500,java-rack-mixed-halves-20k-250
export JAVA_HEAP=${JAVA_HEAP:-8g}

# Settings per mode. Quick: criterion's shortest run on a few small ids, one Go iteration, Java on
# its smallest shapes without warm-up.
if [ "$mode" = quick ]; then
  crit_args=(--warm-up-time 0.1 --measurement-time 0.1 --sample-size 10)
  codec_filter='^assignment/typical/'
  filter='^(cooperative-sticky|sticky|range)/java-rack-mixed-halves-10k-500/fresh$|^roundrobin/java-mixed-halves-20k-500/fresh$'
  go_args=(-test.bench 'Large' -test.benchtime 1x)
  java_common=(--warmup 0 --iters 1)
  java_tables=(--shapes C)
  java_racks=(--shapes java-rack-mixed-halves-10k-500 --assignors range,sticky,cooperative-sticky)
  java_decoded=(--shapes C --assignors sticky,cooperative-sticky --decoded)
  decoded_name=decoded-C
else
  crit_args=()
  codec_filter=''
  go_args=(-test.bench . -test.benchtime 1s)
  java_common=(--warmup 1 --iters 3)
  java_tables=(--shapes A,B,C)
  java_racks=(--shapes "$java_rack_shapes" --assignors range,sticky,cooperative-sticky)
  java_decoded=(--shapes A --assignors sticky,cooperative-sticky --decoded)
  decoded_name=decoded-A
fi

say() { echo "$*" | tee -a "$log"; }
mark() { say "== $1 $(date -u '+%Y-%m-%dT%H:%M:%SZ') $(uptime)"; }

before_status=$(git -C "$before" status --short | tr '\n' ' ')
after_status=$(git -C "$after" status --short | tr '\n' ' ')
say "bench-side-by-side $mode, stamp $stamp"
say "before: $before $(git -C "$before" rev-parse --short HEAD), changes: ${before_status:-none}"
say "after:  $after $(git -C "$after" rev-parse --short HEAD), changes: ${after_status:-none}"
say "machine: $(nproc) cores, $(uname -sr), $(rustc --version), $(go version | cut -d' ' -f3-), $(java -version 2>&1 | head -1)"
say "assignor filter: $filter"
if [ "$mode" = full ]; then
  say "estimate (from the 2026-11-30 quiet logs, the 2026-12-01 tiny runs):"
  say "  build (not timed)            ~2 min if both trees are built already, ~10 min from clean (loaded machine)"
  say "  id check (not timed)         included above (each bench binary builds its shapes to list them)"
  say "  codec before, after          ~1.2 min each (26 ids)"
  say "  assignors before, after      ~5.5-6.5 min each (124 ids, ~2.7 s each: A/B/C x 4 assignors, franz and rack shapes)"
  say "  franz-go                     ~1.5 min"
  say "  Java A, B, C                 ~2.5 min"
  say "  Java rack shapes             ~2 min"
  say "  Java decoded (A, sticky)     ~1 min"
  say "  total timed                  ~19-23 min"
fi

# --- build (not timed) ------------------------------------------------------------------------
mark "build start"
# The before tree (90ecd51) keeps its shapes in benches/support/assignor_shapes.rs, without the rack
# shapes; the builders are the same, so the after tree's file gives it the same bench ids.
old_shapes="$before/benches/support/assignor_shapes.rs"
if [ -f "$old_shapes" ] && ! grep -q java-rack-uniform-100k-2000 "$old_shapes"; then
  cp "$after/testkit/src/assignor_shapes.rs" "$old_shapes"
  say "copied $after/testkit/src/assignor_shapes.rs to $old_shapes (the rack shapes; not committed there)"
fi
declare -A exe
for side in before after; do
  tree=${!side}
  json=$(cd "$tree" && CARGO_TARGET_DIR="$tree/target" cargo bench --no-run --bench codec --bench assignors \
    --message-format=json-render-diagnostics)
  for b in codec assignors; do
    exe[$side-$b]=$(echo "$json" | grep -o "\"executable\":\"[^\"]*/deps/$b-[^\"]*\"" | tail -1 | cut -d'"' -f4)
    [ -x "${exe[$side-$b]}" ] || { say "no $b bench binary for $side"; exit 1; }
    say "$side $b: ${exe[$side-$b]}"
  done
done
mkdir -p "$after/target/side-by-side"
mvn -q -B -Dstyle.color=never -f "$after/tools/java-assignors/pom.xml" compile > "$after/target/side-by-side/mvn.log" 2>&1 ||
  { cat "$after/target/side-by-side/mvn.log"; say "the Java classes did not build"; exit 1; }
say "Java classes: $after/tools/java-assignors/target/classes"
gobin="$after/target/side-by-side/franz-bench.test"
(cd "$after/tools/franz-bench" && go test -c -o "$gobin" .)
say "franz-go test binary: $gobin"

# The same bench ids on both sides (listing builds every shape, about half a minute per side).
for b in codec assignors; do
  f=$filter
  [ "$b" = codec ] && f=$codec_filter
  for side in before after; do
    tree=${!side}
    (cd "$tree" && CRITERION_HOME="$tree/target/criterion-side-by-side-list" "${exe[$side-$b]}" --bench --list ${f:+"$f"}) |
      grep ': benchmark$' | sort > "$after/target/side-by-side/$b-$side.ids"
  done
  if ! diff "$after/target/side-by-side/$b-before.ids" "$after/target/side-by-side/$b-after.ids" > /dev/null; then
    say "the $b bench ids differ between before and after:"
    diff "$after/target/side-by-side/$b-before.ids" "$after/target/side-by-side/$b-after.ids" | tee -a "$log"
    exit 1
  fi
  say "$b: $(wc -l < "$after/target/side-by-side/$b-after.ids") bench ids, the same on both sides"
done
mark "build done"
[ "$mode" = build-only ] && exit 0

# --- timed part ---------------------------------------------------------------------------------
outputs=()
criterion() { # SIDE BENCH OUT FILTER
  local side=$1 b=$2 out=$3 f=$4 tree=${!1}
  mark "$b $side start"
  echo "   (tail -f $out to follow)"
  (cd "$tree" && CRITERION_HOME="$tree/target/criterion-side-by-side-$stamp-$side" \
    "${exe[$side-$b]}" --bench --noplot "${crit_args[@]}" ${f:+"$f"}) > "$out" 2>&1 ||
    say "!! $b $side failed (exit $?), see $out; going on with the next step"
  outputs+=("$out")
}
commit_of() { git -C "$1" rev-parse --short HEAD; }
cb="$results/codec-$stamp-before-$(commit_of "$before").txt"
ca="$results/codec-$stamp-after-$(commit_of "$after").txt"
ab="$results/assignors-$stamp-before-$(commit_of "$before").txt"
aa="$results/assignors-$stamp-after-$(commit_of "$after").txt"
criterion before codec "$cb" "$codec_filter"
criterion after codec "$ca" "$codec_filter"
criterion before assignors "$ab" "$filter"
criterion after assignors "$aa" "$filter"

mark "franz-go start"
fo="$franz_results/bench-$stamp.txt"
# What tools/franz-bench/bench.sh runs (go test -run '^$' -benchmem -bench . -benchtime 1s -count 1),
# from the binary built above.
(cd "$after/tools/franz-bench" && "$gobin" -test.run '^$' -test.benchmem -test.timeout 60m -test.count 1 "${go_args[@]}") \
  > "$fo" 2>&1 || say "!! franz-go failed (exit $?), see $fo; going on with the next step"
outputs+=("$fo")

java_run() { # NAME ARGS...
  local name=$1
  shift
  mark "Java $name start"
  local out="$java_results/bench-$stamp-$name.json"
  JAVA_ASSIGNORS_SKIP_BUILD=1 "$after/tools/java-assignors/bench.sh" "${java_common[@]}" "$@" --out "$out" \
    > /dev/null 2> "$java_results/bench-$stamp-$name.log" ||
    say "!! Java $name failed (exit $?), see $java_results/bench-$stamp-$name.log; going on with the next step"
  outputs+=("$out" "$java_results/bench-$stamp-$name.log")
}
java_run shared "${java_tables[@]}"
java_run racks "${java_racks[@]}"
java_run "$decoded_name" "${java_decoded[@]}"
mark "done"

summary="$results/side-by-side-$stamp-summary.txt"
summarize "$cb" "$ca" > "$summary"
echo >> "$summary"
summarize "$ab" "$aa" "$java_results/bench-$stamp-shared.json" "$java_results/bench-$stamp-racks.json" \
  "$java_results/bench-$stamp-$decoded_name.json" >> "$summary"
say "outputs:"
for o in "$log" "${outputs[@]}" "$summary"; do say "  $o"; done
say "summary of medians (before / after, and Java): $summary"
