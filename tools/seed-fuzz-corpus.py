#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ with every payload of testdata/vectors (named by content hash).

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
print(f"seeded {written} corpus files")
