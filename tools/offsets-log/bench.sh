#!/usr/bin/env bash
# Side by side on one ~100 MB segment of group records: `kcp group history --records` against
# Kafka's `DumpLogSegments --offsets-decoder --print-data-log` (kafka-dump-log.sh), both writing
# to /dev/null, each under /usr/bin/time -v (wall time, CPU time, peak RSS).
#
# The segment repeats the uncompressed 4.1.1 capture (testdata/offsets-log/4.1.1-none: classic
# and KIP-848 group metadata, commits, tombstones) with each batch's baseOffset renumbered so
# offsets keep increasing (baseOffset is outside the CRC, so every checksum stays valid).
#
# usage: tools/offsets-log/bench.sh   (from the repository root; builds kcp in release)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${KCP_LIVE_CACHE:-/tmp/kcp-live-cache}
DIR=${OFFSETS_LOG_BENCH_DIR:-/tmp/kcp-offsets-log-bench}
mkdir -p "$DIR"
SEG=$DIR/00000000000000000000.log
python3 - "$ROOT/testdata/offsets-log/4.1.1-none/00000000000000000000.log" "$SEG" <<'PY'
import struct, sys
src = open(sys.argv[1], "rb").read()
batches, pos = [], 0
while pos + 12 <= len(src):
    length = struct.unpack(">i", src[pos + 8:pos + 12])[0]
    batches.append(src[pos:pos + 12 + length])
    pos += 12 + length
base = size = 0
with open(sys.argv[2], "wb") as out:
    while size < 100 * 1024 * 1024:
        for b in batches:
            out.write(struct.pack(">q", base) + b[8:])
            size += len(b)
            base += struct.unpack(">i", b[23:27])[0] + 1
print(f"{size} bytes, {base} records", file=sys.stderr)
PY
(cd "$ROOT" && cargo build --release --bin kcp 2>&1 | tail -1)
echo "== kcp group history --records"
/usr/bin/time -v "$ROOT/target/release/kcp" group history --file "$SEG" --all-groups --records > /dev/null 2> "$DIR/kcp.time"
grep -E "Elapsed|User time|System time|Maximum resident" "$DIR/kcp.time"
echo "== DumpLogSegments --offsets-decoder --print-data-log (Kafka 4.1.1)"
/usr/bin/time -v java -Xmx1g -cp "$CACHE/broker-4.1.1/*" kafka.tools.DumpLogSegments --offsets-decoder \
  --print-data-log --files "$SEG" > /dev/null 2> "$DIR/java.time"
grep -E "Elapsed|User time|System time|Maximum resident" "$DIR/java.time"
