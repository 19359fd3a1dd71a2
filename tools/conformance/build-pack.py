#!/usr/bin/env python3
"""Builds the conformance pack (testdata/conformance/) from the project's Java-made test data.

    tools/conformance/build-pack.py [--kcp PATH]        # rewrite the pack
    tools/conformance/build-pack.py --check [--kcp PATH]  # fail if the committed pack differs

Nothing in the pack is invented here: every payload and Java answer comes from a file that Apache Kafka's
Java client produced or read (testdata/vectors/java-3.9.1, checked equal to java-4.1.1; the hand-built and
third-party vectors whose `expect` is Java's reader output; testdata/assignor/java-parity). `kcp` decodes
each payload and must agree with Java, or this script stops: the pack's decoded form is kcp's JSON shape
(docs/cli.md) and equal to Java's. The KIP-429 exchanges are written in exchanges.src.json (the expected
rule results are this project's rules, docs/conformance.md); their payload hex is encoded here with `kcp
encode`. Standard library only.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.path.join(ROOT, "testdata", "vectors")
OUT = os.path.join(ROOT, "testdata", "conformance")
HERE = os.path.dirname(os.path.abspath(__file__))

# Java quirks the pack leaves out of the assignor cases: shapes where Java's own answer is an
# accident (a re-created topic, duplicate or stale claims) or too large to read.
ASSIGNOR_FAMILIES_LEFT_OUT = ("topic-shrunk", "duplicate-claims", "stale-claims", "large", "missing-topics")
ASSIGNOR_CASES_PER_FAMILY = 2


def kcp(args, stdin=None):
    p = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=60)
    return p.returncode, json.loads(p.stdout) if p.stdout.strip() else None


def rel(path):
    return os.path.relpath(path, ROOT)


def strip(decoded):
    return {k: v for k, v in decoded.items() if k not in ("kind", "warnings")}


def java_outcome(expect):
    return {"ok": False, "error": expect["error"]} if "error" in expect else {"ok": True, "decoded": expect}


def decode(binary, kind, hex_, *flags):
    rc, out = kcp([binary, "decode", "--kind", kind, *flags, hex_])
    if rc == 0:
        return {"ok": True, "decoded": strip(out), "warnings": out.get("warnings", [])}
    return {"ok": False, "error_kind": out["error"]["kind"]}


def golden_and_malformed(binary):
    golden, malformed = [], []
    java = sorted(glob.glob(os.path.join(VECTORS, "java-3.9.1", "*.json")))
    sources = java + sorted(glob.glob(os.path.join(VECTORS, "handbuilt-malformed", "*.json")))
    # third-party payloads Java refuses but a lenient reader repairs (kafka-go, aiokafka)
    for path in sorted(glob.glob(os.path.join(VECTORS, "*", "*.json"))):
        if path in sources or "/java-" in path:
            continue
        v = json.load(open(path))
        if "lenient_expect" in v or "error" in v.get("expect", {}):
            sources.append(path)
    for path in sources:
        v = json.load(open(path))
        if v["kind"] not in ("subscription", "assignment"):
            continue
        if "/java-3.9.1/" in path:
            twin = json.load(open(path.replace("java-3.9.1", "java-4.1.1")))
            assert (twin["hex"], twin["expect"]) == (v["hex"], v["expect"]), f"{path}: 3.9.1 and 4.1.1 differ"
        kind, hex_, expect = v["kind"], v["hex"], v["expect"]
        java = java_outcome(expect)
        ours = decode(binary, kind, hex_)
        divergence = None
        if java["ok"] and not ours["ok"] and ours["error_kind"] == "invalid_utf8":
            # The one documented divergence (tests/codec_vectors.rs): Java substitutes U+FFFD for
            # invalid UTF-8 in a name; kcp refuses it, since a name that does not round-trip names
            # no real topic.
            divergence = "Java substitutes U+FFFD for invalid UTF-8; kcp refuses it (invalid_utf8)"
        elif java["ok"]:
            assert ours["ok"] and ours["decoded"] == expect, f"{path}: kcp {ours} != Java {expect}"
        else:
            assert not ours["ok"], f"{path}: Java refuses, kcp reads {ours}"
        version = expect.get("version")
        plain = (java["ok"] and version is not None and 0 <= version <= 3 and expect["trailing_bytes"] == 0
                 and "malformed" not in v["name"] and divergence is None)
        source = {"file": rel(path), "producer": f'{v["producer"]["implementation"]} {v["producer"]["version"]}'}
        if plain and "/java-3.9.1/" in path:
            case = {"name": v["name"], "kind": kind, "version": version, "hex": hex_,
                    "description": v["description"], "source": source, "decoded": expect,
                    "canonical": v["canonical"]}
            if v["canonical"]:
                p = subprocess.run([binary, "encode", "--kind", kind, "--version", str(version), "-"],
                                   input=json.dumps(expect), capture_output=True, text=True, timeout=60)
                assert p.returncode == 0 and p.stdout.strip() == hex_, f"{path}: kcp encode gives {p.stdout!r}"
            golden.append(case)
            continue
        strict = decode(binary, kind, hex_, "--strict")
        lenient = decode(binary, kind, hex_, "--lenient")
        lenient_note = None
        if "lenient_expect" in v and not (lenient["ok"] and lenient["decoded"] == v["lenient_expect"]):
            # The hand-built short payloads: the vector records the prefix a lenient peer could
            # read; kcp --lenient repairs only the known third-party defects (docs/cli.md).
            assert "/handbuilt-malformed/" in path, f"{path}: lenient {lenient}"
            lenient_note = "a prefix reading a lenient peer may make; kcp --lenient repairs only known client defects and refuses this"
        case = {"name": f'{source["producer"].split()[0].split("/")[-1]}:{v["name"]}' if "/java-3.9.1/" not in path
                else v["name"],
                "kind": kind, "hex": hex_, "description": v["description"], "source": source,
                "java": java,
                "lenient_reading": ({"ok": True, "decoded": v["lenient_expect"]} if "lenient_expect" in v else None),
                "kcp": {"default": ours, "strict": strict, "lenient": lenient}}
        if lenient_note:
            case["lenient_reading_note"] = lenient_note
        if divergence:
            case["kcp_divergence"] = divergence
        malformed.append(case)
    return golden, malformed


def flatten(runs):
    return [(r["topic"], p) for r in runs for p in r["partitions"]]


def properties_hold(case_input, answer, cooperative):
    """Which of the pack's checkable properties Java's own answer satisfies."""
    topics = case_input["topics"]
    members = case_input["members"]
    subscribed = {m["member_id"]: set(m["topics"]) for m in members}
    given = {}
    ok = {"at_most_once": True, "only_subscribed": True}
    for member, runs in answer.items():
        for tp in flatten(runs):
            if tp in given:
                ok["at_most_once"] = False
            given[tp] = member
            if tp[0] not in subscribed.get(member, ()):
                ok["only_subscribed"] = False
    wanted = {(t, p) for m in members for t in m["topics"] for p in range(topics.get(t, 0))}
    if not cooperative:
        ok["every_partition_once"] = ok["at_most_once"] and set(given) == wanted
    else:
        owner = {}
        for m in members:
            for tp in flatten(m["owned_partitions"]):
                owner.setdefault(tp, set()).add(m["member_id"])
        # KIP-429: a partition another member still claims is not handed over in the same round
        ok["no_transfer_in_one_round"] = all(
            owner.get(tp, {member}) == {member} or member in owner.get(tp, set()) and len(owner[tp]) == 1
            for tp, member in given.items() if tp in owner and len(owner[tp]) == 1)
    if len({frozenset(s) for s in subscribed.values()}) == 1 and members and not cooperative:
        counts = [len(flatten(answer.get(m["member_id"], []))) for m in members]
        ok["balanced"] = max(counts) - min(counts) <= 1
    return sorted(k for k, v in ok.items() if v)


def assignors():
    cases = []
    per_family = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "testdata", "assignor", "java-parity", "*.json"))):
        v = json.load(open(path))
        family = v["name"].rsplit("-", 1)[0]
        if any(family.startswith(f) for f in ASSIGNOR_FAMILIES_LEFT_OUT) or v.get("java_hashmap_order_dependent"):
            continue
        java = v["java"]
        if any("error" in java[s] for s in ("range", "roundrobin", "sticky", "cooperative-sticky")):
            continue
        if any(java["hashmap_order_dependent"][s]["assignment"] for s in ("range", "roundrobin")):
            continue
        if per_family.get(family, 0) >= ASSIGNOR_CASES_PER_FAMILY:
            continue
        per_family[family] = per_family.get(family, 0) + 1
        case = {"name": v["name"], "description": v["description"], "source": {"file": rel(path),
                "producer": "apache-kafka-java " + java["kafka_clients_version"]},
                "input": v["input"],
                "range": java["range"]["assignments"], "roundrobin": java["roundrobin"]["assignments"]}
        for strategy, cooperative in (("sticky", False), ("cooperative-sticky", True)):
            members = [dict(m, user_data=java[strategy]["user_data"].get(m["member_id"])) for m in v["input"]["members"]]
            case[strategy] = {"user_data": java[strategy]["user_data"],
                              "properties": properties_hold(dict(v["input"], members=members),
                                                            java[strategy]["assignments"], cooperative)}
        cases.append(case)
    return cases


def exchanges(binary):
    src = json.load(open(os.path.join(HERE, "exchanges.src.json")))

    def encode(kind, decoded):
        p = subprocess.run([binary, "encode", "--kind", kind, "--version", str(decoded.get("version", 3)), "-"],
                           input=json.dumps(decoded), capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return p.stdout.strip()

    for case in src["cases"]:
        for step in case["steps"]:
            for proto in step.get("protocols", []):
                proto["metadata_hex"] = encode("subscription", proto["subscription"])
            for m in step.get("members", []):
                m["metadata_hex"] = encode("subscription", m["subscription"])
            for a in step.get("assignments", []):
                a["assignment_hex"] = encode("assignment", a["assignment"])
            if "assignment" in step:
                step["assignment_hex"] = encode("assignment", step["assignment"])
    return src["cases"]


def dump(obj):
    return json.dumps(obj, indent=1, ensure_ascii=False) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kcp", default=os.environ.get("KCP", "kcp"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    golden, malformed = golden_and_malformed(args.kcp)
    files = {
        "golden.json": {"pack": "kcp-conformance", "format": 1, "cases": golden},
        "malformed.json": {"pack": "kcp-conformance", "format": 1, "cases": malformed},
        "assignors.json": {"pack": "kcp-conformance", "format": 1, "cases": assignors()},
        "exchanges.json": {"pack": "kcp-conformance", "format": 1, "cases": exchanges(args.kcp)},
    }
    bad = 0
    for name, obj in files.items():
        path = os.path.join(OUT, name)
        text = dump(obj)
        if args.check:
            if not os.path.exists(path) or open(path).read() != text:
                print(f"{rel(path)} differs from what build-pack.py makes", file=sys.stderr)
                bad += 1
        else:
            with open(path, "w") as f:
                f.write(text)
        print(f"{name}: {len(obj['cases'])} cases", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
