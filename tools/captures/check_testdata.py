#!/usr/bin/env python3
"""Check the committed captures, sidecars and captured vectors against each other, with no tshark and no Java.

usage: python3 tools/captures/check_testdata.py

Reads each testdata/pcap/*.pcap with its own small libpcap/Ethernet/IPv4/TCP reader, decodes the group-API
exchanges on port 9092 (decoders shared with extract.py), re-derives every generation (id, protocol, leader,
members, each member's offered protocols and SyncGroup assignment bytes) and compares with NAME.expect.json; then
checks that every captured vector's bytes occur in the capture its producer.how names. Prints one line per check
and 'N passed, N failed'; exits 1 if any failed.
"""
import glob
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import extract  # noqa: E402  (shared Kafka request/response decoders)

ROOT = os.path.dirname(os.path.dirname(HERE))
MAX_PCAP_BYTES = 1024 * 1024

results = []
addresses = set()


def check(name, ok, detail=""):
    results.append(ok)
    print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail and not ok else ""))


def read_pcap_segments(path):
    """TCP segments with payload: [(frame, time, stream_key, to_broker, seq, payload)]."""
    with open(path, "rb") as fh:
        data = fh.read()
    magic = data[:4]
    if magic == b"\xd4\xc3\xb2\xa1":
        endian = "<"
    elif magic == b"\xa1\xb2\xc3\xd4":
        endian = ">"
    else:
        raise ValueError("%s: not a classic microsecond pcap" % path)
    _, _, _, _, snaplen, linktype = struct.unpack(endian + "HHiIII", data[4:24])
    if linktype != 1:
        raise ValueError("%s: link type %d, expected 1 (Ethernet)" % (path, linktype))
    off = 24
    frame = 0
    segs = []
    while off < len(data):
        ts, tus, incl, orig = struct.unpack(endian + "IIII", data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        frame += 1
        if incl != orig:
            raise ValueError("%s: frame %d truncated" % (path, frame))
        if struct.unpack(">H", pkt[12:14])[0] != 0x0800:
            continue
        ip = pkt[14:]
        ihl = (ip[0] & 0x0F) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        if ip[9] != 6:
            continue
        src, dst = ip[12:16], ip[16:20]
        addresses.update({src, dst})
        tcp = ip[ihl:total]
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        doff = (tcp[12] >> 4) * 4
        payload = tcp[doff:]
        if not payload:
            continue
        to_broker = dport == extract.PORT
        client = (src, sport) if to_broker else (dst, dport)
        segs.append((frame, ts + tus / 1e6, client, to_broker, seq, payload))
    return segs


def derive(exchanges):
    """generation id -> {protocol, leader_client, members{member_id: {client, offered{name: hex}, assignment}}}"""
    gens = {}
    for ex in exchanges:
        if ex["api_key"] == 11 and ex["response"] and ex["response"]["error_code"] == 0:
            rs = ex["response"]
            g = gens.setdefault(rs["generation_id"], {"protocol": rs["protocol_name"], "leader": rs["leader"],
                                                      "leader_client": None, "members": {}})
            g["members"][rs["member_id"]] = {"client": ex["client_id"], "assignment": None,
                                             "offered": [(p["name"], p["metadata"]) for p in ex["request"]["protocols"]]}
            if rs["member_id"] == rs["leader"]:
                g["leader_client"] = ex["client_id"]
                g["leader_members"] = sorted(m["member_id"] for m in rs["members"])
    for ex in exchanges:
        if ex["api_key"] == 14 and ex["response"] and ex["response"]["error_code"] == 0:
            g = gens[ex["request"]["generation_id"]]
            g["members"][ex["request"]["member_id"]]["assignment"] = ex["response"]["assignment"]
    return gens


def main():
    pcaps = sorted(glob.glob(os.path.join(extract.PCAP_DIR, "*.pcap")))
    check("captures present", len(pcaps) >= 4, "%d" % len(pcaps))
    payloads = {}
    for pcap in pcaps:
        name = os.path.basename(pcap)[:-5]
        size = os.path.getsize(pcap)
        check("%s: %d bytes < 1 MiB" % (name, size), size < MAX_PCAP_BYTES)
        addresses.clear()
        exchanges = extract.exchanges_from_segments(read_pcap_segments(pcap), pcap)
        check("%s: only 127.0.0.1 in the capture" % name, addresses == {bytes([127, 0, 0, 1])},
              str(sorted(".".join(map(str, a)) for a in addresses)))
        blobs = set()
        for ex in exchanges:
            for p in ex["request"].get("protocols", []):
                blobs.add(p["metadata"])
            for a in ex["request"].get("assignments", []):
                blobs.add(a["assignment"])
            if ex["response"] and ex["response"].get("assignment"):
                blobs.add(ex["response"]["assignment"])
        payloads[name + ".pcap"] = blobs
        with open(os.path.join(extract.PCAP_DIR, name + ".expect.json")) as fh:
            exp = json.load(fh)
        grp = exp["groups"][0]
        gens = derive(exchanges)
        check("%s: group id" % name, {ex["request"]["group_id"] for ex in exchanges} == {grp["group_id"]})
        check("%s: generation ids" % name, sorted(gens) == grp["generation_ids"],
              "%s vs %s" % (sorted(gens), grp["generation_ids"]))
        for eg in grp["generations"]:
            gid = eg["generation_id"]
            g = gens.get(gid)
            if g is None:
                check("%s gen %d: present" % (name, gid), False)
                continue
            check("%s gen %d: protocol %s, leader %s, %d members" % (name, gid, eg["protocol"], eg["leader_client_id"],
                                                                      eg["member_count"]),
                  g["protocol"] == eg["protocol"] and g["leader_client"] == eg["leader_client_id"]
                  and len(g["members"]) == eg["member_count"] == len(g.get("leader_members", []))
                  and sorted(g["members"]) == g["leader_members"])
            for em in eg["members"]:
                m = g["members"].get(em["member_id"])
                ok = (m is not None and m["client"] == em["client_id"]
                      and m["offered"] == [(p["name"], p["metadata_hex"]) for p in em["protocols_offered"]]
                      and m["assignment"] == em["assignment_hex"])
                check("%s gen %d %s: offered protocols and assignment bytes" % (name, gid, em["client_id"]), ok)
                if m is not None and em["assignment"] and "assigned_partitions" in em["assignment"]:
                    check("%s gen %d %s: assigned_partitions matches the decoded assignment"
                          % (name, gid, em["client_id"]),
                          em["assigned_partitions"] == extract.parts_map(em["assignment"]["assigned_partitions"]))
    vectors = sorted(glob.glob(os.path.join(extract.VECTOR_DIR, "java-client-capture-*", "*.json"))
                     + glob.glob(os.path.join(extract.VECTOR_DIR, "librdkafka-*", "*.json")))
    check("captured vectors present", len(vectors) > 0)
    for v in vectors:
        with open(v) as fh:
            d = json.load(fh)
        rel = os.path.relpath(v, ROOT)
        keys = {"name", "description", "producer", "kind", "hex", "canonical", "expect", "readers"}
        good = keys <= set(d) and d["name"] == os.path.basename(v)[:-5]
        src = next((p for p in payloads if ("testdata/pcap/" + p) in d["producer"]["how"]), None)
        if d["kind"] in ("subscription", "assignment"):
            found = src is not None and d["hex"] in payloads[src]
        else:  # assignor user data: inside one of the Subscriptions of that capture
            found = src is not None and any(d["hex"] in b for b in payloads[src])
        check("%s: well-formed, bytes found in %s" % (rel, src), good and found)
    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
