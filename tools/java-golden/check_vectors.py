#!/usr/bin/env python3
"""Independent checker for testdata/vectors/*/*.json (no Java needed).

For every vector file it checks the documented format (keys, types, name == file name, lowercase hex) and
re-derives, with a small decoder/encoder written here from the wire rules, what the file claims:
  * subscription / assignment: for each reader version N the payload decodes to `decoded` when `ok` is true and
    is rejected when `ok` is false; `expect` equals the reader-3 entry; `canonical` equals "a canonical encoder
    (topics sorted in UTF-16 order, owned partitions sorted+grouped, assignments grouped by first appearance)
    reproduces the bytes"; `lenient_expect`, when present, equals the reading with some older layout.
  * cooperative_sticky_user_data / sticky_user_data: `expect` equals the documented interpretation.
Exception messages are Java's and are not re-derived. Prints "N passed, M failed"; exit 1 on any failure.
"""
import json
import os
import struct
import sys

HIGHEST = 3


class Bad(Exception):
    pass


class Reader:
    def __init__(self, data):
        self.b = data
        self.i = 0

    def take(self, n):
        if n < 0 or self.i + n > len(self.b):
            raise Bad("underflow")
        out = self.b[self.i:self.i + n]
        self.i += n
        return out

    def i16(self):
        return struct.unpack(">h", self.take(2))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def string(self, nullable=False):
        n = self.i16()
        if n < 0:
            if nullable:
                return None
            raise Bad("null string")
        # Java decodes invalid UTF-8 with U+FFFD replacement.
        return self.take(n).decode("utf-8", errors="replace")

    def bytes_(self):
        n = self.i32()
        if n < 0:
            return None
        return self.take(n).hex()

    def array(self, elem):
        n = self.i32()
        if n < 0:
            raise Bad("null array")
        if n > len(self.b) - self.i:
            raise Bad("count larger than remaining bytes")
        return [elem() for _ in range(n)]


def topic_partitions(r):
    return r.array(lambda: {"topic": r.string(), "partitions": r.array(r.i32)})


def decode(kind, data, max_known):
    r = Reader(data)
    v = r.i16()
    if v < 0:
        raise Bad("negative version")
    ra = min(v, max_known, HIGHEST)
    if kind == "subscription":
        out = {"version": v, "read_as_version": ra, "topics": r.array(r.string), "user_data": r.bytes_(),
               "owned_partitions": [], "generation_id": -1, "rack_id": None}
        if ra >= 1:
            out["owned_partitions"] = topic_partitions(r)
        if ra >= 2:
            out["generation_id"] = r.i32()
        if ra >= 3:
            out["rack_id"] = r.string(nullable=True)
    else:
        out = {"version": v, "read_as_version": ra, "assigned_partitions": topic_partitions(r),
               "user_data": r.bytes_()}
    out["trailing_bytes"] = len(data) - r.i
    return out


def w16(v):
    return struct.pack(">h", v)


def w32(v):
    return struct.pack(">i", v)


def wstr(s):
    b = s.encode("utf-8")
    return w16(len(b)) + b


def wbytes(h):
    return w32(-1) if h is None else w32(len(h) // 2) + bytes.fromhex(h)


def wtps(groups):
    out = w32(len(groups))
    for g in groups:
        out += wstr(g["topic"]) + w32(len(g["partitions"])) + b"".join(w32(p) for p in g["partitions"])
    return out


def utf16(s):
    return s.encode("utf-16-be")


def canonical_bytes(kind, d):
    v = min(d["version"], HIGHEST)
    if kind == "subscription":
        topics = sorted(d["topics"], key=utf16)
        flat = sorted(((g["topic"], p) for g in d["owned_partitions"] for p in g["partitions"]),
                      key=lambda tp: (utf16(tp[0]), tp[1]))
        groups = []
        for t, p in flat:
            if groups and groups[-1]["topic"] == t:
                groups[-1]["partitions"].append(p)
            else:
                groups.append({"topic": t, "partitions": [p]})
        out = w16(v) + w32(len(topics)) + b"".join(wstr(t) for t in topics) + wbytes(d["user_data"])
        if v >= 1:
            out += wtps(groups)
        if v >= 2:
            out += w32(d["generation_id"] if d["generation_id"] >= 0 else -1)
        if v >= 3:
            out += w16(-1) if d["rack_id"] is None else wstr(d["rack_id"])
        return out
    order, by_topic = [], {}
    for g in d["assigned_partitions"]:
        if g["topic"] not in by_topic:
            order.append(g["topic"])
            by_topic[g["topic"]] = []
        by_topic[g["topic"]].extend(g["partitions"])
    return w16(v) + wtps([{"topic": t, "partitions": by_topic[t]} for t in order]) + wbytes(d["user_data"])


def sticky_expect(data):
    def v0(r):
        return r.array(lambda: (r.string(), r.array(r.i32)))
    try:
        r = Reader(data)
        groups = v0(r)
        gen = r.i32()
        fmt = "v1"
    except Bad:
        try:
            groups, gen, fmt = v0(Reader(data)), None, "v0"
        except Bad:
            groups, gen, fmt = [], -1, "unreadable"
    flat = [(t, p) for t, ps in groups for p in ps]
    prev = []
    for t, p in flat:
        if prev and prev[-1]["topic"] == t:
            prev[-1]["partitions"].append(p)
        else:
            prev.append({"topic": t, "partitions": [p]})
    return {"format": fmt, "previous_assignment": prev, "generation": gen}


def coop_expect(data):
    try:
        return {"generation": Reader(data).i32()}
    except Bad:
        return {"generation": -1}


KEYS = ["name", "description", "producer", "kind", "hex", "canonical", "expect", "readers"]


def check(path):
    with open(path, encoding="utf-8") as f:
        vec = json.load(f)
    errs = []
    for k in KEYS:
        if k not in vec:
            errs.append("missing key " + k)
    if errs:
        return errs
    if vec["name"] + ".json" != os.path.basename(path):
        errs.append("name does not match file name")
    h = vec["hex"]
    if h != h.lower() or len(h) % 2 or any(c not in "0123456789abcdef" for c in h):
        errs.append("hex is not lowercase even-length hex")
        return errs
    data = bytes.fromhex(h)
    kind = vec["kind"]
    if kind in ("subscription", "assignment"):
        if [r["reader_version"] for r in vec["readers"]] != [0, 1, 2, 3]:
            errs.append("readers must be reader versions 0..3")
            return errs
        mine = None
        for r in vec["readers"]:
            try:
                mine = decode(kind, data, r["reader_version"])
            except Bad as e:
                mine = None
                why = str(e)
            if r["ok"]:
                if mine != r.get("decoded"):
                    errs.append("reader %d: file says %s, independent decode gives %s"
                                % (r["reader_version"], r.get("decoded"), mine if mine is not None else why))
            elif mine is not None:
                errs.append("reader %d: Java rejects (%s) but independent decode accepts"
                            % (r["reader_version"], r.get("java_error")))
            elif not r.get("java_error"):
                errs.append("reader %d: ok=false without java_error" % r["reader_version"])
        last = vec["readers"][3]
        want = last["decoded"] if last["ok"] else {"error": last.get("java_error")}
        if vec["expect"] != want:
            errs.append("expect differs from the reader-3 entry")
        canon = mine is not None and canonical_bytes(kind, mine) == data  # mine = independent reader-3 decode
        if vec["canonical"] != canon:
            errs.append("canonical is %s, independent canonical encoder says %s" % (vec["canonical"], canon))
        if "lenient_expect" in vec:
            # A lenient reading is the payload read with a shorter layout than its header says
            # (the layout of some older reader): the v0 prefix for "v1 without owned partitions",
            # the v1 or v2 prefix for short v2/v3 payloads.
            readings = []
            for n in range(4):
                try:
                    readings.append(decode(kind, data, n))
                except Bad:
                    pass
            if vec["lenient_expect"] not in readings:
                errs.append("lenient_expect is not the reading of any older layout")
    elif kind == "sticky_user_data":
        if vec["expect"] != sticky_expect(data):
            errs.append("expect %s, independent reading %s" % (vec["expect"], sticky_expect(data)))
    elif kind == "cooperative_sticky_user_data":
        if vec["expect"] != coop_expect(data):
            errs.append("expect %s, independent reading %s" % (vec["expect"], coop_expect(data)))
    else:
        errs.append("unknown kind " + kind)
    return errs


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "testdata", "vectors")
    passed = failed = 0
    for d in sorted(os.listdir(root)):
        full = os.path.join(root, d)
        if not os.path.isdir(full):
            continue
        for name in sorted(os.listdir(full)):
            if not name.endswith(".json"):
                continue
            try:
                errs = check(os.path.join(full, name))
            except Exception as e:  # a malformed vector file is a failure, not a crash
                errs = ["cannot check: %r" % e]
            if errs:
                failed += 1
                for e in errs:
                    print("FAIL %s/%s: %s" % (d, name, e))
            else:
                passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
