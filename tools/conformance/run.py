#!/usr/bin/env python3
"""Runs the conformance pack (testdata/conformance/) against another client's codec and assignors.

The client author gives shell commands; `{kind}`, `{version}` and `{strategy}` in them are replaced
per case. Standard library only.

  --decode CMD          reads a payload as hex on stdin, prints the decoded JSON (docs/cli.md's
                        shape: version, read_as_version, topics, user_data, owned_partitions,
                        generation_id, rack_id / assigned_partitions, trailing_bytes); a refusal is a
                        nonzero exit or a JSON object with an "error" key
  --lenient-decode CMD  the same with the client's lenient reader (optional)
  --encode CMD          reads the decoded JSON on stdin, prints the payload as hex (optional)
  --assign CMD          reads `kcp assign`'s input JSON on stdin, prints {"assignments": {member:
                        [{"topic", "partitions"}]}} (optional; {strategy} is range, roundrobin,
                        sticky or cooperative-sticky)
  --ignore FIELD,...    decoded fields the client does not model (e.g. read_as_version,trailing_bytes)
  --strategies LIST     which assignors to check (default: all four)

Example, with kcp itself as the client:

  tools/conformance/run.py --decode 'kcp decode --kind {kind} -' \\
      --lenient-decode 'kcp decode --kind {kind} --lenient -' \\
      --encode 'kcp encode --kind {kind} --version {version} -' --assign 'kcp assign --strategy {strategy} -'

Prints PASS/FAIL per case and `N passed, M failed`; exit status 1 when a case fails, 2 on usage.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

PACK = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "testdata", "conformance")
TIMEOUT_S = 30


def call(template, stdin, **values):
    command = template
    for key, value in values.items():
        command = command.replace("{" + key + "}", shlex.quote(str(value)))
    try:
        p = subprocess.run(command, shell=True, input=stdin, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    return p.returncode, p.stdout.strip() or p.stderr.strip()


def run_decode(template, kind, hex_):
    """(True, decoded) / (False, reason the client refused) / (None, trouble)."""
    rc, out = call(template, hex_ + "\n", kind=kind)
    if rc is None:
        return None, out
    try:
        value = json.loads(out) if out else None
    except ValueError:
        value = None
    if rc != 0:
        return False, out[:200]
    if not isinstance(value, dict):
        return None, f"exit 0 but no JSON object: {out[:200]!r}"
    if "error" in value:
        return False, json.dumps(value["error"])[:200]
    return True, value


def differences(want, got, ignore):
    return [f"{k}: want {want[k]!r}, got {got.get(k, '<missing>')!r}"
            for k in want if k not in ignore and got.get(k) != want[k]]


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def report(self, ok, section, name, why=""):
        if ok:
            self.passed += 1
            print(f"PASS {section} {name}")
        else:
            self.failed += 1
            print(f"FAIL {section} {name}: {why}")


def load(name):
    with open(os.path.join(PACK, name)) as f:
        return json.load(f)["cases"]


def golden(args, tally, ignore):
    for case in load("golden.json"):
        ok, got = run_decode(args.decode, case["kind"], case["hex"])
        if ok is not True:
            tally.report(False, "golden.decode", case["name"], f"refused or failed: {got}")
        else:
            diff = differences(case["decoded"], got, ignore)
            tally.report(not diff, "golden.decode", case["name"], "; ".join(diff))
        if args.encode and case["canonical"]:
            rc, out = call(args.encode, json.dumps(case["decoded"]), kind=case["kind"], version=case["version"])
            got_hex = (out or "").lower().replace(" ", "")
            tally.report(rc == 0 and got_hex == case["hex"], "golden.encode", case["name"],
                         f"want {case['hex']}, got {got_hex[:200]!r} (exit {rc})")


def malformed(args, tally, ignore):
    for case in load("malformed.json"):
        java = case["java"]
        ok, got = run_decode(args.decode, case["kind"], case["hex"])
        name = case["name"]
        if ok is None:
            tally.report(False, "malformed.strict", name, got)
        elif not java["ok"]:
            tally.report(ok is False, "malformed.strict", name,
                         f"Java refuses it ({java['error']}); the client read {json.dumps(got)[:200]}")
        elif "kcp_divergence" in case:
            # Java reads it with replacement characters; refusing is allowed too (see the README).
            tally.report(True, "malformed.strict", name)
        else:
            diff = differences(java["decoded"], got, ignore) if ok else [f"Java reads it, the client refused: {got}"]
            tally.report(not diff, "malformed.strict", name, "; ".join(diff))
        reading = case.get("lenient_reading")
        if args.lenient_decode and reading and "lenient_reading_note" not in case:
            ok, got = run_decode(args.lenient_decode, case["kind"], case["hex"])
            diff = differences(reading["decoded"], got, ignore) if ok else [f"refused: {got}"]
            tally.report(not diff, "malformed.lenient", name, "; ".join(diff))


def flatten(runs):
    return [(r["topic"], p) for r in runs for p in r["partitions"]]


def properties(case_input, answer, names):
    members = case_input["members"]
    subscribed = {m["member_id"]: set(m["topics"]) for m in members}
    given, failures = {}, []
    for member, runs in answer.items():
        for tp in flatten(runs):
            if tp in given and "at_most_once" in names:
                failures.append(f"{tp[0]}-{tp[1]} given to {given[tp]} and {member}")
            given[tp] = member
            if tp[0] not in subscribed.get(member, ()) and "only_subscribed" in names:
                failures.append(f"{tp[0]}-{tp[1]} given to {member}, which does not subscribe to {tp[0]}")
    if "every_partition_once" in names:
        wanted = {(t, p) for m in members for t in m["topics"] for p in range(case_input["topics"].get(t, 0))}
        missing = sorted(wanted - set(given))
        if missing:
            failures.append(f"not given: {missing[:5]}")
    if "no_transfer_in_one_round" in names:
        owners = {}
        for m in members:
            for tp in flatten(m["owned_partitions"]):
                owners.setdefault(tp, set()).add(m["member_id"])
        for tp, member in given.items():
            if len(owners.get(tp, ())) == 1 and member not in owners[tp]:
                failures.append(f"{tp[0]}-{tp[1]} given to {member} while {min(owners[tp])} still owns it")
    if "balanced" in names:
        counts = [len(flatten(answer.get(m["member_id"], []))) for m in members]
        if counts and max(counts) - min(counts) > 1:
            failures.append(f"unbalanced: {counts}")
    return failures


def assignors(args, tally):
    strategies = args.strategies.split(",")
    for case in load("assignors.json"):
        for strategy in strategies:
            case_input = case["input"]
            if strategy in ("sticky", "cooperative-sticky"):
                user_data = case[strategy]["user_data"]
                case_input = dict(case_input, members=[dict(m, user_data=user_data.get(m["member_id"]))
                                                       for m in case_input["members"]])
            rc, out = call(args.assign, json.dumps(case_input), strategy=strategy)
            try:
                answer = json.loads(out)["assignments"] if rc == 0 else None
            except (ValueError, KeyError, TypeError):
                answer = None
            section, name = f"assignor.{strategy}", case["name"]
            if answer is None:
                tally.report(False, section, name, f"no answer (exit {rc}): {(out or '')[:200]}")
            elif strategy in ("range", "roundrobin"):
                want = {m: sorted(flatten(r)) for m, r in case[strategy].items()}
                got = {m: sorted(flatten(r)) for m, r in answer.items()}
                got = {m: p for m, p in got.items() if p or m in want}
                diff = [f"{m}: Java {want.get(m)}, client {got.get(m)}" for m in sorted(set(want) | set(got))
                        if want.get(m, []) != got.get(m, [])]
                tally.report(not diff, section, name, "; ".join(diff[:3]))
            else:
                failures = properties(case_input, answer, case[strategy]["properties"])
                tally.report(not failures, section, name, "; ".join(failures[:3]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decode", required=True)
    ap.add_argument("--lenient-decode")
    ap.add_argument("--encode")
    ap.add_argument("--assign")
    ap.add_argument("--ignore", default="")
    ap.add_argument("--strategies", default="range,roundrobin,sticky,cooperative-sticky")
    ap.add_argument("--pack", default=None, help="the pack directory (default: testdata/conformance)")
    args = ap.parse_args()
    global PACK
    PACK = args.pack or PACK
    ignore = set(filter(None, args.ignore.split(",")))
    tally = Tally()
    golden(args, tally, ignore)
    malformed(args, tally, ignore)
    if args.assign:
        assignors(args, tally)
    print(f"{tally.passed} passed, {tally.failed} failed")
    sys.exit(1 if tally.failed else 0)


if __name__ == "__main__":
    main()
