#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ with every payload of testdata/vectors (named by content hash), and
fuzz/corpus/offsets_log_segment/ with the first batches of each real __consumer_offsets capture in
testdata/offsets-log (whole, cut short, with a flipped byte, with a batch length beyond the file).

usage: tools/seed-fuzz-corpus.py   (run from the repository root)
"""
import hashlib
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
TARGETS = {
    "subscription": ["decode_subscription", "differential_kafka_protocol"],
    "assignment": ["decode_assignment", "differential_kafka_protocol"],
}
written = 0
for path in sorted((ROOT / "testdata" / "vectors").rglob("*.json")):
    vector = json.loads(path.read_text())
    data = bytes.fromhex(vector["hex"])
    for target in TARGETS.get(vector["kind"], []):
        out = ROOT / "fuzz" / "corpus" / target / hashlib.sha1(data).hexdigest()
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            written += 1


def first_batches(data, budget=3000):
    """The longest prefix of whole batches within `budget` bytes (at least one batch)."""
    pos = 0
    while pos + 12 <= len(data):
        length = int.from_bytes(data[pos + 8:pos + 12], "big", signed=True)
        end = pos + 12 + length
        if length < 14 or end > len(data) or (pos > 0 and end > budget):
            break
        pos = end
    return data[:pos]


def seed(target, data):
    global written
    out = ROOT / "fuzz" / "corpus" / target / hashlib.sha1(data).hexdigest()
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        written += 1


for path in sorted((ROOT / "testdata" / "offsets-log").glob("*/*.log")):
    head = first_batches(path.read_bytes())
    if not head:
        continue
    seed("offsets_log_segment", head)
    seed("offsets_log_segment", head[: len(head) // 2])
    flipped = bytearray(head)
    flipped[len(head) * 2 // 3] ^= 0x5A
    seed("offsets_log_segment", bytes(flipped))
    beyond = bytearray(head)
    beyond[8:12] = (len(head) * 4).to_bytes(4, "big")
    seed("offsets_log_segment", bytes(beyond))
print(f"seeded {written} corpus files")
