#!/usr/bin/env python3
"""Ground truth and corpus vectors from the captures in testdata/pcap/.

usage: extract.py --java-cp CP --kafka-version V --confluent-kafka-version V scenario...

For each scenario NAME it reads testdata/pcap/NAME.pcap and writes testdata/pcap/NAME.expect.json, and it writes
the Subscription/Assignment payloads it finds as vectors under testdata/vectors/.

Sources of truth, all cross-checked (the script fails when they disagree):
  * tshark's Kafka dissector (Wireshark 4.0 decodes JoinGroup v0-7, SyncGroup v0-5, LeaveGroup v0-4): fields
    kafka.protocol_name / kafka.protocol_metadata of JoinGroup requests, kafka.member_id / kafka.member_assignment
    / kafka.generation_id of SyncGroup requests and responses, kafka.generation_id / kafka.group_leader_id of
    JoinGroup responses it can decode.
  * our own reading of the same TCP payload bytes (tshark -e tcp.payload), needed because Java 3.9 clients use
    JoinGroup v9 and LeaveGroup v5, newer than the dissector knows (it flags those "Unsupported ... version").
  * the clients' own logs (testdata/pcap/NAME.clients/): Java's rebalance listener prints generation, member id
    and assignment; librdkafka's debug=cgrp log prints the JoinGroup response (generation, protocol, leader).
  * Apache Kafka's Java reader (tools/captures/java-reader) decodes every payload.
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PCAP_DIR = os.path.join(ROOT, "testdata", "pcap")
VECTOR_DIR = os.path.join(ROOT, "testdata", "vectors")
PORT = int(os.environ.get("KCP_CAPTURE_PORT", "9092"))

API_NAMES = {11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup"}
# first flexible (KIP-482) version of each group API
FLEXIBLE_FROM = {11: 6, 12: 4, 13: 4, 14: 4}

# What each scenario did (kept here so that the sidecar states it next to the decoded facts).
SCENARIOS = {
    "java-cooperative-sticky": {
        "group_id": "kcp-java-coop",
        "description": (
            "Three Apache Kafka Java 3.9.1 consumers, partition.assignment.strategy=CooperativeStickyAssignor, "
            "topics kcp-orders (6 partitions) and kcp-audit (3 partitions). java-c1 and java-c2 (client.rack=rack-b) "
            "subscribe to both topics and start together (broker group.initial.rebalance.delay.ms=3000, so one "
            "generation with both); java-c3 is a static member (group.instance.id=java-c3-static) subscribed to "
            "kcp-orders only and joins ~12 s later (cooperative rebalance: partitions revoked from c1/c2 in one "
            "generation, given to c3 in the follow-up generation); java-c1 closes (LeaveGroup) at ~26 s; java-c2 "
            "closes (LeaveGroup) at ~40 s; java-c3 closes at ~48 s without LeaveGroup (static member)."),
        "clients": {"java-c1": "java", "java-c2": "java", "java-c3": "java"},
    },
    "rdkafka-range": {
        "group_id": "kcp-rdk-range",
        "description": (
            "Three librdkafka consumers (confluent-kafka Python), partition.assignment.strategy=range, topics "
            "kcp-orders (6 partitions) and kcp-audit (3 partitions). rdk-r1 and rdk-r2 subscribe to both topics "
            "and start together; rdk-r3 (client.rack=rack-c) subscribes to kcp-orders only and joins ~10 s later; "
            "rdk-r1 closes at ~22 s, rdk-r2 at ~32 s, rdk-r3 at ~38 s (each close sends LeaveGroup)."),
        "clients": {"rdk-r1": "librdkafka", "rdk-r2": "librdkafka", "rdk-r3": "librdkafka"},
    },
    "rdkafka-cooperative-sticky": {
        "group_id": "kcp-rdk-coop",
        "description": (
            "Same timeline as rdkafka-range with partition.assignment.strategy=cooperative-sticky: rdk-r1 and "
            "rdk-r2 (both topics) start together; rdk-r3 (client.rack=rack-c, kcp-orders only) joins ~10 s later; "
            "rdk-r1 closes at ~22 s, rdk-r2 at ~32 s, rdk-r3 at ~38 s."),
        "clients": {"rdk-r1": "librdkafka", "rdk-r2": "librdkafka", "rdk-r3": "librdkafka"},
    },
    "mixed-java-rdkafka": {
        "group_id": "kcp-mixed",
        "description": (
            "One group with a Java 3.9.1 consumer (java-j1, partition.assignment.strategy="
            "CooperativeStickyAssignor,RangeAssignor, topics kcp-orders and kcp-audit) and two librdkafka "
            "consumers (rdk-m1: both topics, rdk-m2: kcp-orders only; partition.assignment.strategy=range,"
            "roundrobin; librdkafka refuses to mix eager and cooperative assignors). The only protocol all members "
            "offer is range, so the coordinator picks range. java-j1 starts first and rdk-m1 ~2 s later (inside the "
            "broker's 3 s initial rebalance delay), rdk-m2 joins at ~10 s, rdk-m1 closes at ~20 s, java-j1 at ~30 s, "
            "rdk-m2 at ~36 s."),
        "clients": {"java-j1": "java", "rdk-m1": "librdkafka", "rdk-m2": "librdkafka"},
    },
}


# ----------------------------------------------------------------------------------------------- wire reading
class Reader:
    def __init__(self, data):
        self.b = data
        self.i = 0

    def take(self, n):
        if n < 0 or self.i + n > len(self.b):
            raise ValueError("buffer underflow at %d (+%d of %d)" % (self.i, n, len(self.b)))
        out = self.b[self.i:self.i + n]
        self.i += n
        return out

    def i8(self):
        return int.from_bytes(self.take(1), "big", signed=True)

    def i16(self):
        return int.from_bytes(self.take(2), "big", signed=True)

    def i32(self):
        return int.from_bytes(self.take(4), "big", signed=True)

    def uvarint(self):
        shift = value = 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def string(self, flexible, nullable=False):
        n = self.uvarint() - 1 if flexible else self.i16()
        if n < 0:
            if not nullable:
                raise ValueError("null non-nullable string")
            return None
        return self.take(n).decode("utf-8")

    def bytes_(self, flexible):
        n = self.uvarint() - 1 if flexible else self.i32()
        return None if n < 0 else self.take(n)

    def array_len(self, flexible):
        return self.uvarint() - 1 if flexible else self.i32()

    def tagged(self, flexible):
        if flexible:
            for _ in range(self.uvarint()):
                self.uvarint()
                self.take(self.uvarint())


def parse_request_body(api, ver, r):
    fx = ver >= FLEXIBLE_FROM[api]
    if api == 11:  # JoinGroup
        out = {"group_id": r.string(fx), "session_timeout_ms": r.i32()}
        if ver >= 1:
            out["rebalance_timeout_ms"] = r.i32()
        out["member_id"] = r.string(fx)
        out["group_instance_id"] = r.string(fx, nullable=True) if ver >= 5 else None
        out["protocol_type"] = r.string(fx)
        protos = []
        for _ in range(r.array_len(fx)):
            name = r.string(fx)
            meta = r.bytes_(fx)
            r.tagged(fx)
            protos.append({"name": name, "metadata": meta.hex()})
        out["protocols"] = protos
        if ver >= 8:
            out["reason"] = r.string(fx, nullable=True)
        r.tagged(fx)
        return out
    if api == 14:  # SyncGroup
        out = {"group_id": r.string(fx), "generation_id": r.i32(), "member_id": r.string(fx)}
        out["group_instance_id"] = r.string(fx, nullable=True) if ver >= 3 else None
        if ver >= 5:
            out["protocol_type"] = r.string(fx, nullable=True)
            out["protocol_name"] = r.string(fx, nullable=True)
        assigns = []
        for _ in range(r.array_len(fx)):
            mid = r.string(fx)
            a = r.bytes_(fx)
            r.tagged(fx)
            assigns.append({"member_id": mid, "assignment": a.hex()})
        out["assignments"] = assigns
        r.tagged(fx)
        return out
    if api == 13:  # LeaveGroup
        out = {"group_id": r.string(fx)}
        if ver <= 2:
            out["members"] = [{"member_id": r.string(fx), "group_instance_id": None}]
        else:
            members = []
            for _ in range(r.array_len(fx)):
                m = {"member_id": r.string(fx), "group_instance_id": r.string(fx, nullable=True)}
                if ver >= 5:
                    m["reason"] = r.string(fx, nullable=True)
                r.tagged(fx)
                members.append(m)
            out["members"] = members
        r.tagged(fx)
        return out
    if api == 12:  # Heartbeat
        out = {"group_id": r.string(fx), "generation_id": r.i32(), "member_id": r.string(fx)}
        if ver >= 3:
            out["group_instance_id"] = r.string(fx, nullable=True)
        r.tagged(fx)
        return out
    raise AssertionError(api)


def parse_response_body(api, ver, r):
    fx = ver >= FLEXIBLE_FROM[api]
    if api == 11:
        out = {}
        if ver >= 2:
            out["throttle_time_ms"] = r.i32()
        out["error_code"] = r.i16()
        out["generation_id"] = r.i32()
        out["protocol_type"] = r.string(fx, nullable=True) if ver >= 7 else None
        out["protocol_name"] = r.string(fx, nullable=ver >= 7)
        out["leader"] = r.string(fx)
        if ver >= 9:
            out["skip_assignment"] = bool(r.i8())
        out["member_id"] = r.string(fx)
        members = []
        for _ in range(r.array_len(fx)):
            m = {"member_id": r.string(fx)}
            m["group_instance_id"] = r.string(fx, nullable=True) if ver >= 5 else None
            m["metadata"] = r.bytes_(fx).hex()
            r.tagged(fx)
            members.append(m)
        out["members"] = members
        r.tagged(fx)
        return out
    if api == 14:
        out = {}
        if ver >= 1:
            out["throttle_time_ms"] = r.i32()
        out["error_code"] = r.i16()
        if ver >= 5:
            out["protocol_type"] = r.string(fx, nullable=True)
            out["protocol_name"] = r.string(fx, nullable=True)
        a = r.bytes_(fx)
        out["assignment"] = a.hex()
        r.tagged(fx)
        return out
    if api in (12, 13):
        out = {}
        if ver >= 1:
            out["throttle_time_ms"] = r.i32()
        out["error_code"] = r.i16()
        if api == 13 and ver >= 3:
            members = []
            for _ in range(r.array_len(fx)):
                m = {"member_id": r.string(fx), "group_instance_id": r.string(fx, nullable=True),
                     "error_code": r.i16()}
                r.tagged(fx)
                members.append(m)
            out["members"] = members
        r.tagged(fx)
        return out
    raise AssertionError(api)


def tshark(args):
    return subprocess.run(["tshark"] + args, check=True, capture_output=True, text=True).stdout


def read_exchanges(pcap):
    """All group-API request/response pairs in the capture, from the raw TCP payload bytes tshark exports."""
    out = tshark(["-r", pcap, "-Y", "tcp.len > 0", "-T", "fields", "-E", "separator=\t",
                  "-e", "frame.number", "-e", "frame.time_epoch", "-e", "tcp.stream", "-e", "tcp.srcport",
                  "-e", "tcp.dstport", "-e", "frame.len", "-e", "frame.cap_len", "-e", "tcp.seq_raw", "-e", "tcp.payload"])
    segments = []
    for line in out.splitlines():
        frame, t, stream, sport, dport, flen, clen, seq, payload = line.split("\t")
        if flen != clen:
            raise SystemExit("%s: frame %s truncated by the snap length" % (pcap, frame))
        segments.append((int(frame), float(t), int(stream), int(dport) == PORT, int(seq), bytes.fromhex(payload)))
    return exchanges_from_segments(segments, pcap)


def exchanges_from_segments(segments, pcap):
    """segments: [(frame, time, stream key, to_broker, tcp seq, payload bytes)] in capture order."""
    streams = collections.defaultdict(bytearray)   # (stream, to_broker) -> bytes
    starts = collections.defaultdict(list)          # (stream, to_broker) -> [(offset, frame, time)]
    next_seq = {}
    for frame, t, stream, to_broker, seq, data in segments:
        key = (stream, to_broker)
        if key in next_seq and seq != next_seq[key]:
            if (next_seq[key] - seq) % 2**32 < 2**31:  # retransmission (seen on loopback): keep only new bytes
                data = data[(next_seq[key] - seq) % 2**32:]
                seq = next_seq[key]
                if not data:
                    continue
            else:
                raise SystemExit("%s: frame %s: gap in TCP stream (seq %d, expected %d)"
                                 % (pcap, frame, seq, next_seq[key]))
        next_seq[key] = (seq + len(data)) % 2**32
        starts[key].append((len(streams[key]), frame, t))
        streams[key] += data

    def frame_at(key, offset):
        best = None
        for off, fr, t in starts[key]:
            if off <= offset:
                best = (fr, t)
            else:
                break
        return best

    exchanges = []
    for (stream, to_broker), data in sorted(streams.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if not to_broker:
            continue
        pending = {}
        r = Reader(bytes(data))
        while r.i < len(r.b):
            start = r.i
            size = r.i32()
            body = Reader(r.take(size))
            api, ver, corr = body.i16(), body.i16(), body.i32()
            client_id = body.string(False, nullable=True)
            if api not in API_NAMES:
                continue
            body.tagged(ver >= FLEXIBLE_FROM[api])
            req = parse_request_body(api, ver, body)
            if body.i != len(body.b):
                raise SystemExit("request %s v%d: %d bytes left" % (API_NAMES[api], ver, len(body.b) - body.i))
            fr, t = frame_at((stream, True), start)
            pending[corr] = {"api": API_NAMES[api], "api_key": api, "api_version": ver,
                             "correlation_id": corr, "client_id": client_id, "request_frame": fr, "time": t,
                             "request": req}
        resp = Reader(bytes(streams.get((stream, False), b"")))
        while resp.i < len(resp.b):
            start = resp.i
            size = resp.i32()
            body = Reader(resp.take(size))
            corr = body.i32()
            if corr not in pending:
                continue
            ex = pending.pop(corr)
            body.tagged(ex["api_version"] >= FLEXIBLE_FROM[ex["api_key"]])
            ex["response"] = parse_response_body(ex["api_key"], ex["api_version"], body)
            if body.i != len(body.b):
                raise SystemExit("response %s: %d bytes left" % (ex["api"], len(body.b) - body.i))
            ex["response_frame"] = frame_at((stream, False), start)[0]
            exchanges.append(ex)
        for ex in pending.values():  # request without response (e.g. capture stopped)
            ex["response"] = None
            exchanges.append(ex)
    exchanges.sort(key=lambda e: e["request_frame"])
    return exchanges


def dissector_view(pcap):
    """What tshark's Kafka dissector itself decodes, by frame number."""
    fields = ["frame.number", "tcp.srcport", "kafka.api_key", "kafka.api_version", "kafka.correlation_id",
              "kafka.consumer_group", "kafka.member_id", "kafka.generation_id", "kafka.group_leader_id",
              "kafka.protocol_name", "kafka.protocol_metadata", "kafka.member_assignment", "_ws.expert.message"]
    out = tshark(["-r", pcap, "-Y", "kafka.api_key == 11 || kafka.api_key == 13 || kafka.api_key == 14 || "
                  "kafka.correlation_id", "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
                  "-E", "aggregator=|"] + sum([["-e", f] for f in fields], []))
    view = {}
    for line in out.splitlines():
        vals = line.split("\t")
        d = dict(zip(fields, vals))
        view[int(d["frame.number"])] = {k: (v.split("|") if v else []) for k, v in d.items()}
    return view


def tshark_version():
    return tshark(["--version"]).splitlines()[0]


# ----------------------------------------------------------------------------------------------- client logs
def client_logs(name):
    d = os.path.join(PCAP_DIR, name + ".clients")
    events = []
    rdk = []
    for f in sorted(os.listdir(d)):
        path = os.path.join(d, f)
        if f.endswith(".log"):
            with open(path) as fh:
                for line in fh:
                    line = line.strip()
                    if line.startswith("{"):
                        events.append(json.loads(line))
        elif f.endswith(".stderr"):
            with open(path) as fh:
                for line in fh:
                    m = re.search(r"JoinGroup response: GenerationId (-?\d+), Protocol (\S+), LeaderId (\S+)"
                                  r"(?: \(me\))?, my MemberId (\S+), member metadata count ?(\d+)", line)
                    if m:
                        rdk.append({"file": f, "generation": int(m.group(1)), "protocol": m.group(2),
                                    "leader": m.group(3), "member_id": m.group(4), "member_count": int(m.group(5))})
    return events, rdk


# ----------------------------------------------------------------------------------------------- java reader
def java_read(java_cp, items):
    """items: [(kind, hex)] -> Java reader results, same order."""
    if not items:
        return []
    inp = "".join("%s %s\n" % (k, h) for k, h in items)
    out = subprocess.run(["java", "-cp", java_cp, "kcp.captures.ProtocolReader"], input=inp, check=True,
                         capture_output=True, text=True).stdout
    res = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(res) == len(items)
    return res


def parts_map(decoded_list):
    """[{"topic":..,"partitions":[..]}] -> {topic: sorted partitions}"""
    out = {}
    for tp in decoded_list:
        out.setdefault(tp["topic"], []).extend(tp["partitions"])
    return {t: sorted(p) for t, p in sorted(out.items())}


# ----------------------------------------------------------------------------------------------- per capture
def analyse(name, java_cp, kafka_version, rdk_version):
    pcap = os.path.join(PCAP_DIR, name + ".pcap")
    meta = SCENARIOS[name]
    exchanges = read_exchanges(pcap)
    view = dissector_view(pcap)
    checks = collections.Counter()
    unsupported = collections.Counter()
    disagreements = []

    # -- cross-check our decoding against the dissector wherever it decodes the field
    def cmp(label, theirs, ours, where):
        theirs = [t for t in theirs if t != "<MISSING>"]
        if theirs == ours:
            checks[label + " == tshark dissector"] += 1
        elif len(theirs) < len(ours) and all(t in ours for t in theirs):
            checks[label + ": tshark dissector decoded %s" % ("nothing" if not theirs else "only part")] += 1
        else:
            # Seen with Wireshark 4.0.17 on librdkafka's SyncGroup v3 requests: after an assignment whose
            # user_data is a zero-length (not null) byte string the dissector loses its place (it also shows
            # "<MISSING>" for such JoinGroup metadata). Our reading consumes each PDU exactly, Java's reader
            # accepts the payloads and the clients' logs agree, so this is recorded, not fatal.
            checks[label + ": tshark dissector disagrees (see dissector_disagreements)"] += 1
            disagreements.append({"frame": where, "what": label, "ours": ours, "tshark": theirs})

    for ex in exchanges:
        rq = view.get(ex["request_frame"], {})
        experts = rq.get("_ws.expert.message", [])
        if any("Unsupported" in m for m in experts):
            unsupported["%s request v%d" % (ex["api"], ex["api_version"])] += 1
        if ex["api_key"] == 11:
            cmp("JoinGroup request protocol names", rq.get("kafka.protocol_name", []),
                [p["name"] for p in ex["request"]["protocols"]], ex["request_frame"])
            cmp("JoinGroup request protocol metadata", rq.get("kafka.protocol_metadata", []),
                [p["metadata"] for p in ex["request"]["protocols"]], ex["request_frame"])
        if ex["api_key"] == 14:
            cmp("SyncGroup request generation", rq.get("kafka.generation_id", []),
                [str(ex["request"]["generation_id"])], ex["request_frame"])
            cmp("SyncGroup request assignments", rq.get("kafka.member_assignment", []),
                [a["assignment"] for a in ex["request"]["assignments"] if a["assignment"]], ex["request_frame"])
        if ex["response"] is None:
            continue
        rs = view.get(ex["response_frame"], {})
        if any("Unsupported" in m for m in rs.get("_ws.expert.message", [])):
            unsupported["%s response v%d" % (ex["api"], ex["api_version"])] += 1
        if ex["api_key"] == 14 and ex["response"]["assignment"]:
            cmp("SyncGroup response assignment", rs.get("kafka.member_assignment", []),
                [ex["response"]["assignment"]], ex["response_frame"])
        if ex["api_key"] == 11:
            cmp("JoinGroup response generation", rs.get("kafka.generation_id", []),
                [str(ex["response"]["generation_id"])], ex["response_frame"])
            cmp("JoinGroup response leader", rs.get("kafka.group_leader_id", []),
                [ex["response"]["leader"]], ex["response_frame"])

    # -- decode every payload with Java's reader
    payloads = []
    for ex in exchanges:
        if ex["api_key"] == 11:
            for p in ex["request"]["protocols"]:
                payloads.append(("subscription", p["metadata"]))
            if ex["response"]:
                for m in ex["response"]["members"]:
                    payloads.append(("subscription", m["metadata"]))
        if ex["api_key"] == 14:
            for a in ex["request"]["assignments"]:
                payloads.append(("assignment", a["assignment"]))
            if ex["response"] and ex["response"]["assignment"]:
                payloads.append(("assignment", ex["response"]["assignment"]))
    uniq = sorted(set(payloads))
    decoded = dict(zip(uniq, java_read(java_cp, uniq)))

    def sub(h):
        return decoded[("subscription", h)]["expect"]

    def asg(h):
        return decoded[("assignment", h)]["expect"]

    # -- members: member id -> client id / instance id / protocols offered (last request per member)
    member_client = {}
    for ex in exchanges:
        if ex["api_key"] in (11, 14) and ex["response"] is not None:
            mid = ex["response"].get("member_id") or ex["request"].get("member_id")
            if mid:
                member_client[mid] = ex["client_id"]

    # -- generations, from the JoinGroup responses (the leader's response lists the members)
    gens = collections.OrderedDict()
    for ex in exchanges:
        if ex["api_key"] != 11 or ex["response"] is None or ex["response"]["error_code"] != 0:
            continue
        rs = ex["response"]
        g = gens.setdefault(rs["generation_id"], {
            "generation_id": rs["generation_id"], "protocol": rs["protocol_name"], "leader": rs["leader"],
            "leader_client_id": None, "members": collections.OrderedDict(), "join_group_version": set(),
            "first_frame": ex["response_frame"]})
        assert g["protocol"] == rs["protocol_name"] and g["leader"] == rs["leader"]
        g["join_group_version"].add(ex["api_version"])
        mem = g["members"].setdefault(rs["member_id"], {"member_id": rs["member_id"]})
        mem["client_id"] = ex["client_id"]
        mem["group_instance_id"] = ex["request"]["group_instance_id"]
        mem["join_group_version"] = ex["api_version"]
        mem["join_request_frame"] = ex["request_frame"]
        mem["join_response_frame"] = ex["response_frame"]
        mem["protocols_offered"] = [
            {"name": p["name"], "metadata_hex": p["metadata"], "subscription": sub(p["metadata"])}
            for p in ex["request"]["protocols"]]
        if rs["member_id"] == rs["leader"]:
            g["leader_client_id"] = ex["client_id"]
            g["leader_response_members"] = [
                {"member_id": m["member_id"], "group_instance_id": m["group_instance_id"],
                 "metadata_hex": m["metadata"]} for m in rs["members"]]
            g["skip_assignment"] = rs.get("skip_assignment")
    for ex in exchanges:
        if ex["api_key"] != 14:
            continue
        rq = ex["request"]
        g = gens.get(rq["generation_id"])
        if g is None:
            continue
        mem = g["members"].setdefault(rq["member_id"], {"member_id": rq["member_id"], "client_id": ex["client_id"]})
        mem["sync_group_version"] = ex["api_version"]
        mem["sync_request_frame"] = ex["request_frame"]
        if rq["assignments"]:
            g["leader_assignments"] = [{"member_id": a["member_id"], "assignment_hex": a["assignment"]}
                                       for a in rq["assignments"]]
        if ex["response"] is not None:
            mem["sync_error_code"] = ex["response"]["error_code"]
            if ex["response"]["error_code"] == 0:
                h = ex["response"]["assignment"]
                mem["assignment_hex"] = h
                mem["assignment"] = asg(h) if h else None

    # leader's JoinGroup response members == members that got this generation
    generations = []
    for gid, g in gens.items():
        lm = g.get("leader_response_members")
        if lm is not None:
            assert sorted(m["member_id"] for m in lm) == sorted(g["members"]), (name, gid)
            for m in lm:  # the metadata the leader saw is the one for the chosen protocol of the member's request
                offered = {p["name"]: p["metadata_hex"] for p in g["members"][m["member_id"]]["protocols_offered"]}
                assert offered[g["protocol"]] == m["metadata_hex"], (name, gid, m)
            checks["leader's JoinGroup members == members joined"] += 1
        if g.get("leader_assignments") is not None:
            la = {a["member_id"]: a["assignment_hex"] for a in g["leader_assignments"]}
            for mid, mem in g["members"].items():
                if "assignment_hex" in mem:
                    assert la[mid] == mem["assignment_hex"], (name, gid, mid)
                    checks["leader's SyncGroup assignment == member's SyncGroup response"] += 1
        members = []
        for mem in g["members"].values():
            a = mem.get("assignment")
            members.append({
                "member_id": mem["member_id"], "client_id": mem.get("client_id"),
                "group_instance_id": mem.get("group_instance_id"),
                "join_group_version": mem.get("join_group_version"), "sync_group_version": mem.get("sync_group_version"),
                "protocols_offered": mem.get("protocols_offered"),
                "subscription": next((p["subscription"] for p in mem.get("protocols_offered", [])
                                      if p["name"] == g["protocol"]), None),
                "assignment_hex": mem.get("assignment_hex"),
                "assignment": a,
                "assigned_partitions": parts_map(a["assigned_partitions"]) if a and "assigned_partitions" in a else None,
            })
        generations.append({
            "generation_id": gid, "protocol": g["protocol"], "leader": g["leader"],
            "leader_client_id": g["leader_client_id"], "member_count": len(members),
            "skip_assignment": g.get("skip_assignment"),
            "leader_joingroup_response_members": len(lm) if lm is not None else None,
            "members": sorted(members, key=lambda m: m["client_id"] or ""),
        })

    # librdkafka's leader puts each member's own Subscription user data into that member's Assignment
    for g in generations:
        if meta["clients"].get(g["leader_client_id"]) != "librdkafka":
            continue
        for m in g["members"]:
            if m["assignment"] and m["subscription"] and "error" not in m["assignment"]:
                assert m["assignment"]["user_data"] == m["subscription"]["user_data"], (name, g["generation_id"], m)
                checks["librdkafka leader: Assignment user_data == member's Subscription user_data"] += 1

    leaves = []
    for ex in exchanges:
        if ex["api_key"] == 13:
            leaves.append({"client_id": ex["client_id"], "leave_group_version": ex["api_version"],
                           "frame": ex["request_frame"], "members": ex["request"]["members"],
                           "error_code": ex["response"]["error_code"] if ex["response"] else None})

    # -- cross-check with the clients' own logs
    events, rdk = client_logs(name)
    by_gen = {g["generation_id"]: g for g in generations}
    for e in events:
        if e["event"] in ("assigned",) and "generation" in e:  # Java listener: generation + full assignment
            g = by_gen[e["generation"]]
            mem = next(m for m in g["members"] if m["member_id"] == e["member_id"])
            assert mem["client_id"] == e["label"], (e, mem)
            assert mem["assigned_partitions"] == e["assignment"], (name, e, mem["assigned_partitions"])
            checks["Java listener assignment == SyncGroup assignment"] += 1
    for x in rdk:  # librdkafka debug log: JoinGroup response
        g = by_gen[x["generation"]]
        assert g["protocol"] == x["protocol"] and g["leader"] == x["leader"], (x, g["protocol"], g["leader"])
        assert any(m["member_id"] == x["member_id"] for m in g["members"]), x
        if x["member_id"] == x["leader"]:
            assert x["member_count"] == g["member_count"], (x, g["member_count"])
        checks["librdkafka log JoinGroup response == capture"] += 1
    rdk_assigned = [e for e in events if e["event"] == "assigned" and "generation" not in e]
    for e in rdk_assigned:  # librdkafka rebalance callback: partitions newly assigned must be in some gen
        got = e["partitions"]
        ok = False
        for g in generations:
            for m in g["members"]:
                if m["member_id"] == e["member_id"] and m["assigned_partitions"] is not None:
                    ap = m["assigned_partitions"]
                    if all(set(p) <= set(ap.get(t, [])) for t, p in got.items()):
                        ok = True
        assert ok, (name, e)
        checks["librdkafka on_assign partitions within a SyncGroup assignment"] += 1

    return {
        "exchanges": exchanges, "generations": generations, "leaves": leaves, "checks": dict(checks),
        "dissector_unsupported": dict(unsupported), "disagreements": disagreements, "decoded": decoded, "events": events,
    }


def write_expect(name, res, kafka_version, rdk_version, tshark_ver):
    meta = SCENARIOS[name]
    gens = res["generations"]
    groups = sorted({ex["request"]["group_id"] for ex in res["exchanges"]})
    assert groups == [meta["group_id"]], groups
    clients = {}
    for g in gens:
        for m in g["members"]:
            c = clients.setdefault(m["client_id"], {"client_id": m["client_id"], "member_ids": [],
                                                    "implementation": meta["clients"][m["client_id"]],
                                                    "group_instance_id": m["group_instance_id"],
                                                    "protocols_offered": [p["name"] for p in m["protocols_offered"] or []],
                                                    "join_group_versions": [], "sync_group_versions": []})
            if m["member_id"] not in c["member_ids"]:
                c["member_ids"].append(m["member_id"])
            for k, v in (("join_group_versions", m["join_group_version"]), ("sync_group_versions", m["sync_group_version"])):
                if v is not None and v not in c[k]:
                    c[k].append(v)
    for c in clients.values():
        c["version"] = kafka_version if c["implementation"] == "java" else rdk_version
    doc = {
        "capture": name + ".pcap",
        "description": meta["description"],
        "broker": {"implementation": "apache-kafka", "version": kafka_version, "mode": "KRaft broker+controller",
                   "listener": "127.0.0.1:%d" % PORT},
        "tshark": tshark_ver,
        "groups": [{
            "group_id": meta["group_id"],
            "protocol_type": "consumer",
            "generation_ids": [g["generation_id"] for g in gens],
            "member_count_per_generation": {str(g["generation_id"]): g["member_count"] for g in gens},
            "protocol_per_generation": {str(g["generation_id"]): g["protocol"] for g in gens},
            "leader_per_generation": {str(g["generation_id"]): g["leader_client_id"] for g in gens},
            "generations": gens,
            "leave_group": res["leaves"],
        }],
        "clients": sorted(clients.values(), key=lambda c: c["client_id"]),
        "ground_truth": {
            "how": ("Group-API requests/responses read from the captured TCP payload bytes (tshark -e tcp.payload) "
                    "and checked against tshark's Kafka dissector fields where Wireshark supports the API version, "
                    "against the clients' own logs (testdata/pcap/%s.clients/), and payloads decoded with Apache "
                    "Kafka %s's Java reader (tools/captures/java-reader)." % (name, kafka_version)),
            "checks_passed": res["checks"],
            "dissector_unsupported_versions": res["dissector_unsupported"],
            "dissector_disagreements": res["disagreements"],
        },
    }
    with open(os.path.join(PCAP_DIR, name + ".expect.json"), "w") as fh:
        json.dump(doc, fh, indent=2, sort_keys=False)
        fh.write("\n")
    return doc


# ----------------------------------------------------------------------------------------------- vectors
def describe_sub(e):
    bits = ["v%d" % e["version"]]
    bits.append("%d topic%s" % (len(e["topics"]), "" if len(e["topics"]) == 1 else "s"))
    n_owned = sum(len(tp["partitions"]) for tp in e["owned_partitions"])
    if n_owned:
        bits.append("%d owned partition%s" % (n_owned, "" if n_owned == 1 else "s"))
    if e["version"] >= 2 and e["generation_id"] != -1:
        bits.append("generation %d" % e["generation_id"])
    if e["rack_id"] is not None:
        bits.append("rack %s" % json.dumps(e["rack_id"]))
    if e["user_data"]:
        bits.append("user data %d bytes" % (len(e["user_data"]) // 2))
    elif e["user_data"] == "":
        bits.append("empty user data")
    return ", ".join(bits)


def describe_asg(e):
    n = sum(len(tp["partitions"]) for tp in e["assigned_partitions"])
    bits = ["v%d" % e["version"], "%d partition%s" % (n, "" if n == 1 else "s")]
    if e["user_data"]:
        bits.append("user data %d bytes" % (len(e["user_data"]) // 2))
    elif e["user_data"] == "":
        bits.append("empty user data")
    return ", ".join(bits)


def write_vectors(name, res, kafka_version, rdk_version, java_cp):
    """One vector per distinct payload and producer, named after where it was first accepted.

    A Subscription is produced by the client that sent the JoinGroup request; an Assignment by the group leader
    that sent it in its SyncGroup request (possibly another implementation than the member receiving it).
    """
    meta = SCENARIOS[name]
    producers = {
        "java": ({"implementation": "apache-kafka-java", "version": kafka_version}, "java-client-capture-%s" % kafka_version),
        "librdkafka": ({"implementation": "librdkafka", "version": rdk_version}, "librdkafka-%s" % rdk_version),
    }
    gens = {g["generation_id"]: g for g in res["generations"]}
    items = []
    # successful JoinGroups first, so that a payload is named after the generation that accepted it
    joins = [ex for ex in res["exchanges"] if ex["api_key"] == 11]
    joins.sort(key=lambda ex: (not (ex["response"] and ex["response"]["error_code"] == 0), ex["request_frame"]))
    for ex in joins:
        ok = ex["response"] and ex["response"]["error_code"] == 0
        tag = "g%d" % ex["response"]["generation_id"] if ok else "first-join"
        for p in ex["request"]["protocols"]:
            how = ("captured from JoinGroup v%d request (frame %d, client %s, protocol %s, %s) in testdata/pcap/%s.pcap"
                   % (ex["api_version"], ex["request_frame"], ex["client_id"], p["name"],
                      "joined generation %d" % ex["response"]["generation_id"] if ok
                      else "answered with error %s" % (ex["response"]["error_code"] if ex["response"] else "none"),
                      name))
            items.append(dict(kind="subscription", hex=p["metadata"], impl=meta["clients"][ex["client_id"]],
                              vname="%s-%s-subscription-%s-%s" % (name, ex["client_id"], p["name"], tag),
                              proto=p["name"], how=how, notes=None))
    for ex in res["exchanges"]:
        if ex["api_key"] != 14 or not ex["response"] or not ex["response"]["assignment"]:
            continue
        gid = ex["request"]["generation_id"]
        g = gens[gid]
        leader = g["leader_client_id"]
        how = ("captured from SyncGroup v%d response (frame %d, member %s, generation %d) in testdata/pcap/%s.pcap; "
               "the group leader %s sent the same bytes in its SyncGroup request"
               % (ex["api_version"], ex["response_frame"], ex["client_id"], gid, name, leader))
        items.append(dict(kind="assignment", hex=ex["response"]["assignment"], impl=meta["clients"][leader],
                          vname="%s-g%d-assignment-%s" % (name, gid, ex["client_id"]), proto=g["protocol"], how=how,
                          notes="assignment computed and serialized by the group leader %s (%s, protocol %s) for member %s"
                                % (leader, meta["clients"][leader], g["protocol"], ex["client_id"])
                                + ("; its user_data is a copy of the member's own Subscription user_data (librdkafka's "
                                   "leader echoes it back)" if meta["clients"][leader] == "librdkafka"
                                   and res["decoded"][("assignment", ex["response"]["assignment"])]["expect"].get("user_data")
                                   else "")))
    # The assignors' user data inside the Subscriptions of the cooperative-sticky protocol: Java's
    # CooperativeStickyAssignor writes a 4-byte generation, librdkafka writes StickyAssignor-style user data
    # (previous assignment + generation) under the cooperative-sticky name.
    ud_items = []
    for it in items:
        if it["kind"] != "subscription" or it["proto"] != "cooperative-sticky":
            continue
        e = res["decoded"][("subscription", it["hex"])]["expect"]
        if "error" in e or not e["user_data"]:
            continue
        kind = "cooperative_sticky_user_data" if it["impl"] == "java" else "sticky_user_data"
        ud_items.append(dict(kind=kind, hex=e["user_data"], impl=it["impl"], vname=it["vname"] + "-user-data",
                             proto=it["proto"], how="user_data field of the Subscription " + it["how"][len("captured "):]
                             .replace("from JoinGroup", "captured from JoinGroup", 1),
                             notes=("what Java's %s makes of it" % ("CooperativeStickyAssignor (generation from the "
                                    "user data, as for a v0/v1 Subscription)" if kind == "cooperative_sticky_user_data"
                                    else "StickyAssignor (V1 layout, then V0, then unreadable); librdkafka sends this "
                                    "layout under the protocol name cooperative-sticky, where a Java leader reads the "
                                    "v2+ Subscription generation/owned fields instead"))))
    ud_decoded = dict(zip([(u["kind"], u["hex"]) for u in ud_items],
                          java_read(java_cp, [(u["kind"], u["hex"]) for u in ud_items])))
    items += ud_items
    for pdir in (producers["java"][1], producers["librdkafka"][1]):  # drop this capture's vectors of an earlier run
        for old in glob.glob(os.path.join(VECTOR_DIR, pdir, name + "-*.json")):
            os.remove(old)
    written = []
    seen = set()
    for it in items:
        producer, pdir = producers[it["impl"]]
        if (pdir, it["kind"], it["hex"]) in seen:
            continue
        seen.add((pdir, it["kind"], it["hex"]))
        d = res["decoded"].get((it["kind"], it["hex"])) or ud_decoded[(it["kind"], it["hex"])]
        e = d["expect"]
        if "error" in e:
            summary = "rejected by Java's reader"
        elif it["kind"] == "subscription":
            summary = describe_sub(e)
        elif it["kind"] == "assignment":
            summary = describe_asg(e)
        elif it["kind"] == "sticky_user_data":
            summary = "%s layout, %d previous partitions, generation %s" % (
                e["format"], sum(len(tp["partitions"]) for tp in e["previous_assignment"]), e["generation"])
        else:
            summary = "generation %s" % e["generation"]
        what = {"subscription": "Subscription", "assignment": "Assignment", "sticky_user_data": "sticky user data",
                "cooperative_sticky_user_data": "cooperative-sticky user data"}[it["kind"]]
        desc = "%s %s %s, protocol %s (%s), from a real capture" % (
            producer["implementation"], producer["version"], what, it["proto"], summary)
        doc = {"name": it["vname"], "description": desc, "producer": dict(producer, how=it["how"]),
               "kind": it["kind"], "hex": it["hex"], "canonical": d["canonical"], "expect": e, "readers": d["readers"]}
        notes = [it["notes"]] if it["notes"] else []
        if it["kind"] == "subscription" and "error" not in e:
            if e["rack_id"] == "":
                notes.append("rack_id is an empty string, not null: the client had no client.rack set")
            if e["user_data"] == "":
                notes.append("user_data is present with length 0 (not null)")
        if notes:
            doc["notes"] = "; ".join(notes)
        os.makedirs(os.path.join(VECTOR_DIR, pdir), exist_ok=True)
        path = os.path.join(VECTOR_DIR, pdir, it["vname"] + ".json")
        assert not os.path.exists(path) or path not in written, path
        with open(path, "w") as fh:
            json.dump(doc, fh, indent=2)
            fh.write("\n")
        written.append(os.path.relpath(path, ROOT))
    return written


def summary_table(name, doc):
    """Markdown table of the generations (for testdata/pcap/README.md)."""
    short = lambda t: t.replace("kcp-", "")
    rows = ["| gen | protocol | leader | members | assignment (SyncGroup) |", "| --- | --- | --- | --- | --- |"]
    for g in doc["groups"][0]["generations"]:
        parts = []
        for m in g["members"]:
            ap = m["assigned_partitions"]
            txt = "; ".join("%s %s" % (short(t), ",".join(map(str, p))) for t, p in ap.items()) if ap else ""
            parts.append("%s {%s}" % (m["client_id"], txt))
        rows.append("| %d | %s | %s | %d | %s |" % (g["generation_id"], g["protocol"], g["leader_client_id"],
                                                   g["member_count"], ", ".join(parts)))
    leaves = ", ".join("%s (v%d)" % (l["client_id"], l["leave_group_version"]) for l in doc["groups"][0]["leave_group"])
    rows.append("")
    rows.append("LeaveGroup sent by: %s." % (leaves or "nobody"))
    return "\n".join(rows)


def update_readme(tables):
    path = os.path.join(PCAP_DIR, "README.md")
    if not os.path.exists(path):
        return
    with open(path) as fh:
        text = fh.read()
    for name, table in tables.items():
        begin = "<!-- generated by extract.py: %s -->" % name
        end = "<!-- end %s -->" % name
        if begin in text and end in text:
            a = text.index(begin) + len(begin)
            b = text.index(end)
            text = text[:a] + "\n" + table + "\n" + text[b:]
    with open(path, "w") as fh:
        fh.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--java-cp", required=True)
    ap.add_argument("--kafka-version", required=True)
    ap.add_argument("--confluent-kafka-version", required=True)
    ap.add_argument("--librdkafka-version", required=True)
    ap.add_argument("scenarios", nargs="+")
    a = ap.parse_args()
    tv = tshark_version()
    tables = {}
    for name in a.scenarios:
        res = analyse(name, a.java_cp, a.kafka_version, a.librdkafka_version)
        doc = write_expect(name, res, a.kafka_version, a.librdkafka_version, tv)
        vecs = write_vectors(name, res, a.kafka_version, a.librdkafka_version, a.java_cp)
        tables[name] = summary_table(name, doc)
        g = doc["groups"][0]
        print("%s: generations %s members %s protocol %s leaders %s; %d vectors; checks %s; dissector-unsupported %s"
              % (name, g["generation_ids"], g["member_count_per_generation"], g["protocol_per_generation"],
                 g["leader_per_generation"], len(vecs), res["checks"], res["dissector_unsupported"]))
    update_readme(tables)


if __name__ == "__main__":
    main()
