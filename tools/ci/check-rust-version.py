#!/usr/bin/env python3
"""Checks Cargo.toml's rust-version against the locked dependencies.

Only the stable toolchain is installed (no rustup downloads), so the declared minimum cannot be
compiled with here. Instead: every package a library user builds with every feature on (normal
and build dependencies, dev-dependencies excluded), at the versions Cargo.lock pins, must declare
a rust-version no newer than ours, and ours must be no older than the newest of theirs (so it is
raised honestly, not left behind). Our own code's use of the standard library is checked against
rust-version by clippy's incompatible_msrv lint (.ci/run runs clippy with -D warnings).
usage: tools/ci/check-rust-version.py   (from the repository root)
"""
import json
import subprocess
import sys


def version(text):
    return tuple(int(x) for x in text.split(".")) + (0,) * (3 - len(text.split(".")))


meta = json.loads(subprocess.run(
    ["cargo", "metadata", "--format-version", "1", "--all-features", "--locked"],
    check=True, capture_output=True, text=True).stdout)
packages = {p["id"]: p for p in meta["packages"]}
root = meta["resolve"]["root"]
ours = packages[root].get("rust_version")
if not ours:
    sys.exit("Cargo.toml declares no rust-version")
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
seen, todo = set(), [root]
while todo:
    node = nodes[todo.pop()]
    for dep in node["deps"]:
        kinds = {k["kind"] for k in dep["dep_kinds"]}
        if kinds & {None, "build"} and dep["pkg"] not in seen:
            seen.add(dep["pkg"])
            todo.append(dep["pkg"])
needed = sorted(((packages[p].get("rust_version") or "0"), packages[p]["name"], packages[p]["version"])
                for p in seen)
newest = max(needed, key=lambda x: version(x[0]))
newer = [n for n in needed if version(n[0]) > version(ours)]
if newer:
    for rv, name, v in newer:
        print(f"{name} {v} needs Rust {rv}, newer than rust-version = {ours}", file=sys.stderr)
    sys.exit(1)
if version(newest[0]) < version(ours):
    print(f"note: rust-version = {ours}; the newest locked dependency needs only {newest[0]} ({newest[1]} {newest[2]})")
print(f"rust-version {ours}: {len(needed)} locked dependencies, the newest needs {newest[0]} ({newest[1]} {newest[2]})")
