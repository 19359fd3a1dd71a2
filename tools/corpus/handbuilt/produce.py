"""Write hand-built draft vectors for malformed third-party payloads whose
producer cannot be run here (Python standard library only).

- samsa 0.1.8 (Rust crate): its JoinGroup `Metadata { version: 3, subscription,
  user_data: None }` encodes only version, topics and user_data. Running it would
  need Rust code, which this corpus does not write, so the bytes are built from
  samsa's encoder rules (i16 version, i32-counted i16-length strings, i32 -1 for
  None bytes).
- short v2 / v3 subscriptions: a header bumped past the fields actually written.
  No released client is known to emit exactly these two shapes; they stand for
  any encoder that bumps the version without appending GenerationId / RackId.
  (Real short payloads from real encoders are elsewhere in the corpus: kafkajs
  MemberMetadata.encode at versions 1-3, kafka-go protocol.Marshal(1, {Version: 3}).)

Usage: python produce.py <vectors-root>   (writes <root>/handbuilt-malformed/)
"""
import json
import os
import struct
import sys

COUNT = 0


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def string(s):
    b = s.encode()
    return i16(len(b)) + b


def strings(xs):
    return i32(len(xs)) + b"".join(string(x) for x in xs)


def nbytes(b):
    return i32(-1) if b is None else i32(len(b)) + b


def owned(pairs):
    return i32(len(pairs)) + b"".join(string(t) + i32(len(ps)) + b"".join(i32(p) for p in ps) for t, ps in pairs)


def put(out, name, description, implementation, version, how, data, notes):
    global COUNT
    d = {
        "name": name,
        "description": description,
        "producer": {"implementation": implementation, "version": version, "how": how},
        "kind": "subscription",
        "hex": data.hex(),
        "notes": notes,
    }
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(d, f, indent=2)
        f.write("\n")
    COUNT += 1


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: produce.py <vectors-root>")
    out = os.path.join(sys.argv[1], "handbuilt-malformed")
    os.makedirs(out, exist_ok=True)

    put(out, "samsa-subscription-v3-v0-fields",
        "samsa JoinGroup metadata: header v3 but only topics [foo, bar] and null userData (no owned partitions, generation or rack)",
        "samsa (hand-built)", "0.1.8",
        "hand-built from samsa's join_group Protocol::new(name, topics) -> Metadata { version: 3, subscription: topics, user_data: None } and its ToByte rules; samsa was not run",
        i16(3) + strings(["foo", "bar"]) + nbytes(None),
        "Hand-built: samsa is a Rust crate and this corpus writes no Rust code. samsa's Metadata encoder writes version, topics, user_data only, whatever the version; Java underflows reading v1+ fields.")
    put(out, "short-subscription-v2-no-generation",
        "header v2 with topics [foo], null userData and owned foo-0 but no GenerationId",
        "hand-built", "-",
        "i16(2) + topics + null bytes + owned partitions, GenerationId omitted",
        i16(2) + strings(["foo"]) + nbytes(None) + owned([("foo", [0])]),
        "Hand-built stand-in for an encoder that bumps the header to 2 without writing GenerationId; no released client is known to emit exactly this.")
    put(out, "short-subscription-v3-no-rack",
        "header v3 with topics [foo], null userData, owned foo-0, generation 5 but no RackId",
        "hand-built", "-",
        "i16(3) + topics + null bytes + owned partitions + i32 generation, RackId omitted",
        i16(3) + strings(["foo"]) + nbytes(None) + owned([("foo", [0])]) + i32(5),
        "Hand-built stand-in for an encoder that bumps the header to 3 without writing RackId; no released client is known to emit exactly this.")
    put(out, "short-subscription-v3-partial-rack",
        "header v3 with generation 5 and a RackId length of 2 but only one byte of it",
        "hand-built", "-",
        "v3 body whose rack string is cut after its first byte",
        i16(3) + strings(["foo"]) + nbytes(None) + owned([("foo", [0])]) + i32(5) + i16(2) + b"r",
        "Hand-built truncation inside the last field: a lenient reader can still fall back to the v2 prefix.")
    print(f"handbuilt: wrote {COUNT} drafts to {out}")


if __name__ == "__main__":
    main()
